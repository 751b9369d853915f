"""The ``real2gym`` command line.

``real2gym run DEMO_DIR --out OUT_DIR`` runs the pipeline headless. The
installed ``real2gym`` command starts on the Blender side (``bridge/command.py``):
with the PyPI ``bpy`` module it hands :func:`main` a scene builder, so that the
run also writes ``scene.blend`` through the same bridge the add-on uses
(``--no-blend`` skips that). This module never imports Blender code;
``python -m real2gym_addon`` runs it alone, without scene.blend.

Exit codes (docs/cli.md): 0 verified (or done, for commands that do not
verify); 1 ran but not verified; 2 bad input or environment, with one line
naming the file, object, frame or setting; 3 an internal error (a bug), with
one line and the path of a log file holding the traceback; 130 cancelled
(Ctrl+C or SIGTERM). Nothing is written on 2, 3 or 130.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import errno
import json
import math
import os
import re
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from .about import version_text
from .cli_args import (
    EXIT_CANCELLED,
    EXIT_INTERNAL_ERROR,
    EXIT_NOT_VERIFIED,
    EXIT_USER_ERROR,
    EXIT_VERIFIED,
    MAX_JOBS,
    file_path,
    folder_path,
    number_in,
    triple,
    whole_in,
)
from .cli_variants import add_variant_commands
from .errors import Cancelled, Real2GymError
from .files import DISK_FULL_ERRNOS
from .fixes.edits import (
    APPROACH_PHASES,
    COACD_MAX_PIECES,
    COACD_THRESHOLD_RANGE,
    KEYFRAME_EVENTS,
    MAX_OFFSET_M,
    PEG_RADIUS_RANGE,
    SCALE_RANGE,
    SLOT_WIDTH_RANGE,
)
from .mjcf.export import FRICTION_RANGE
from .mjcf.gripper import MAX_OPENING
from .models import BASE_URL_ENV, MODELS, fetch_model, list_models
from .pipeline import STAGES, PipelineRun
from .progress import Progress
from .report import REPORT_NAME, Report, VerificationSection, read_report
from .run_options import REPAIR_ROUNDS, RunOptions
from .segmentation.backends import BACKENDS, DEFAULT_BACKEND, SegmentationOptions
from .summary import check_figures
from .verify.margin import DEFAULT_RUNS

JSON_HELP = "print one JSON object (verdict, checks, paths) on stdout; the human lines go to stderr"
ENVIRONMENT_ERRNOS = (
    *DISK_FULL_ERRNOS,
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.EMFILE,
    errno.ENAMETOOLONG,
)
"""OSErrors that are the machine's state, not a bug: reported in one line with exit 2."""


class _ProgressBar:
    """Draws progress on stderr: a bar on a terminal; otherwise a line per stage and per 10%."""

    def __init__(self, stream=sys.stderr, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = stream.isatty()
        self._last: tuple[str, int] | None = None

    def __call__(self, message: str, fraction: float) -> None:
        if self.tty:
            filled = int(round(fraction * self.width))
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {fraction * 100:3.0f}% {message:<40}")
            if fraction >= 1.0:
                self.stream.write("\n")
            self.stream.flush()
            return
        key = (re.sub(r"\d+", "#", message), int(fraction * 10))
        if key != self._last:
            self.stream.write(f"real2gym: {fraction * 100:3.0f}% {message}\n")
            self.stream.flush()
        self._last = key


SceneBuilder = Callable[[PipelineRun], None]
"""Builds and stages the Blender scene of an analysed run (``scene.blend``), before it commits."""

NO_BLEND_NOTE = "scene.blend is written by the installed 'real2gym' command with the bpy module (see README)"


def _run_options(args: argparse.Namespace) -> RunOptions:
    """The run's options from ``run``'s or ``segment``'s arguments (:data:`~.run_options.COMMAND_LINE_FLAGS`)."""
    return RunOptions(
        segmentation=_segmentation_options(args),
        depth_model=getattr(args, "depth_model", None),
        force=args.force,
        write_blend=not args.no_blend,
        repair=getattr(args, "repair", False),
        repair_rounds=getattr(args, "repair_rounds", REPAIR_ROUNDS),
        margin=getattr(args, "margin", DEFAULT_RUNS),
    )


def _segmentation_options(args: argparse.Namespace) -> SegmentationOptions:
    return SegmentationOptions(
        backend=args.backend,
        sam2_checkpoint=args.sam2_checkpoint or "",
        sam2_config=args.sam2_config,
        device=args.device,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    options = _run_options(args)
    build_scene = args.build_scene if options.write_blend else None
    reason = (
        None if not options.write_blend or build_scene is not None else args.no_blend_note or NO_BLEND_NOTE
    )
    progress = Progress(None if args.quiet else _ProgressBar())
    run = PipelineRun.from_options(
        args.demo_dir,
        args.out,
        options,
        progress,
        last_stage="segment" if args.command == "segment" else STAGES[-1],
        resegment=getattr(args, "object", None),
        out_option="--out",
    ).run(build_scene)
    for warning in run.log.warnings:
        print(f"real2gym: warning ({warning.stage}): {warning.message}", file=sys.stderr)
    if reason:
        print(f"real2gym: note: {reason}", file=sys.stderr)
    out = run.out_dir.resolve()
    print(f"report: {out / 'report.json'}")
    for kind in ("masks", "mjcf", "blend"):
        if kind in run.scene.artifacts:
            print(f"{kind + ':':<7} {out / run.scene.artifacts[kind]}")
    if run.resegment is not None:
        print(f"re-segmented: {run.resegment} (the other objects' masks were kept)")
    _print_review(run.scene.segmentation, only=run.resegment)
    verification = run.report().verification
    if verification is not None:
        _print_verification(verification)
        if options.repair and not verification.passed:
            return _repair(run.out_dir, options.repair_rounds, args.quiet)
        return 0 if verification.passed else EXIT_NOT_VERIFIED
    return 0


def _repair(out_dir, rounds: int, quiet: bool) -> int:
    """Applies the computed suggestions in turn (``fixes.repair``) and prints each step."""
    from .fixes.repair import repair_run

    def say(message: str, fraction: float) -> None:
        if not quiet:
            print(f"real2gym: {message}", file=sys.stderr)

    report, _ = repair_run(out_dir, rounds, say)
    summary = report.repair
    for index, step in enumerate(summary["rounds"], start=1):
        kept = "kept" if step["kept"] else f"not kept ({step.get('reverted') or step.get('error')})"
        failing = ", ".join(step.get("failed_after", [])) or "none"
        print(f"repair {index}: {step['fix']['kind']} on {step['fix']['object']} [{step['check']}] {kept}; "
              f"failing after: {failing}")  # fmt: skip
    print(f"repair: {'VERIFIED' if summary['passed_after'] else 'not verified'} ({summary['stopped']}); "
          "each kept step is in the edit log: undo with 'real2gym fix OUT --undo'")  # fmt: skip
    _print_verification(report.verification)
    return 0 if summary["passed_after"] else EXIT_NOT_VERIFIED


def _cmd_verify(args: argparse.Namespace) -> int:
    from .reverify import reverify

    masses, frictions = dict(args.mass or []), dict(args.friction or [])
    report, verification = reverify(args.out_dir, masses, frictions=frictions, margin=args.margin)
    _print_verification(report.verification)
    return 0 if verification.passed else EXIT_NOT_VERIFIED


def _print_review(segmentation: dict | None, only: str | None = None) -> None:
    """One line per object with doubtful masks (only the one named ``only``, when given): the frame
    ranges to look at, and why."""
    from .segmentation.quality import flagged_ranges

    for entry in (segmentation or {}).get("objects", []):
        if only is not None and entry["name"] != only:
            continue
        ranges = flagged_ranges(entry["frames"])
        if not ranges:
            continue
        shown = ", ".join(f"{a}-{b} ({why})" if b > a else f"{a} ({why})" for a, b, why in ranges[:8])
        more = f" and {len(ranges) - 8} more" if len(ranges) > 8 else ""
        count = sum(b - a + 1 for a, b, _ in ranges)
        print(f"review: {entry['name']}: {count} frames to check: {shown}{more}")


def _print_verification(verification: VerificationSection) -> None:
    state = "PASSED" if verification.passed else "FAILED"
    print(f"verification: {state}")
    for name, check in verification.checks.items():
        print(f"  {'ok  ' if check['passed'] else 'FAIL'} {name}: {check_figures(check)}")
    if verification.margin is not None:
        print(f"margin: {verification.margin['verdict']}")


def json_result(command: str, code: int, out_dir: Path | str | None, error: str | None = None) -> dict:
    """The one JSON object ``--json`` prints: the verdict, every check, the output paths, warnings
    and the frames to review, read back from the run's report.json (see docs/cli.md)."""
    from .segmentation.quality import flagged_ranges

    verdict = {EXIT_VERIFIED: "done", EXIT_NOT_VERIFIED: "not verified", EXIT_CANCELLED: "cancelled"}.get(
        code, "error"
    )
    result = {"command": command, "exit_code": code, "verdict": verdict, "passed": None, "error": error}
    report_path = Path(out_dir) / REPORT_NAME if out_dir is not None else None
    if error is not None or report_path is None or not report_path.is_file():
        return result

    try:
        report = read_report(report_path.parent)
    except (OSError, Real2GymError):
        return result
    out = report_path.parent.resolve()
    verification = report.verification
    if verification is not None:
        result["passed"] = bool(verification.passed)
        result["verdict"] = "verified" if result["passed"] else "not verified"
        result["checks"] = verification.checks
        result["failed_checks"] = [n for n, c in result["checks"].items() if not c.get("passed")]
        result["suggestions"] = [s.get("text") for s in verification.suggestions or []]
    elif code == EXIT_VERIFIED:
        result["verdict"] = "not simulated"
    result["paths"] = {"out": str(out), "report": str(report_path.resolve())} | {
        kind: str(out / path) for kind, path in report.artifacts.items()
    }
    result["warnings"] = report.warnings
    result["review"] = [
        {"object": entry["name"], "frames": [[a, b, why] for a, b, why in flagged_ranges(entry["frames"])]}
        for entry in (report.segmentation or {}).get("objects", [])
        if flagged_ranges(entry["frames"])
    ]
    result["edit_log"] = len(report.edit_log)
    return result


def _keyframe(text: str) -> tuple[str, int | None]:
    """An argparse type: ``EVENT=FRAME`` (``EVENT=`` or ``EVENT=none`` deletes the keyframe)."""
    event, sign, frame = text.partition("=")
    if not sign or event not in KEYFRAME_EVENTS:
        raise argparse.ArgumentTypeError(
            f"wants EVENT=FRAME with EVENT one of {', '.join(KEYFRAME_EVENTS)}, got {text!r}"
        )
    if frame in ("", "none"):
        return event, None
    return event, whole_in(0)(frame)


def _mass(text: str) -> tuple[str, float]:
    """An argparse type: ``NAME=KG`` with a mass between 1 g and 1000 kg."""
    name, sign, value = text.partition("=")
    if not sign or not name:
        raise argparse.ArgumentTypeError(f"wants NAME=KG, got {text!r}")
    return name, number_in(0.001, 1000.0, "a mass in kg")(value)


def _friction(text: str) -> tuple[str, float]:
    """An argparse type: ``NAME=F`` with a sliding friction in :data:`FRICTION_RANGE`."""
    name, sign, value = text.partition("=")
    if not sign or not name:
        raise argparse.ArgumentTypeError(f"wants NAME=FRICTION, got {text!r}")
    return name, number_in(*FRICTION_RANGE, "a sliding friction")(value)


def _pair(text: str) -> tuple[float, float]:
    """``LO,HI``: two increasing numbers."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants LO,HI (two numbers), got {text!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"wants LO,HI with LO < HI, both finite, got {text!r}")
    return lo, hi


def _requested_fixes(args: argparse.Namespace, report: Report) -> list[dict]:
    fixes = []
    needs_object = any(
        v is not None
        for v in (
            args.rim_scale,
            args.scale,
            args.offset,
            args.collision,
            args.keyframe,
            args.approach,
            args.grasp_height,
            args.release_opening,
            args.release_above,
            args.set_down,
            args.pour_offset,
            args.place_offset,
            args.slot_width,
            args.peg_radius,
            args.part,
        )  # fmt: skip
    )
    if needs_object and not args.object:
        raise Real2GymError("name the object to fix with --object NAME")
    if args.rim_scale is not None:
        fixes.append({"kind": "radius_scale", "object": args.object, "factor": args.rim_scale})
    if args.scale is not None:
        fixes.append({"kind": "scale", "object": args.object, "factors": args.scale})
    if args.offset is not None:
        fixes.append({"kind": "offset", "object": args.object, "delta": args.offset,
                      "frame": None if args.whole_motion else args.frame or 0, "blend": args.blend})  # fmt: skip
    if args.collision is not None:
        fixes.append({"kind": "collision", "object": args.object, "mode": args.collision,
                      "threshold": args.coacd_threshold, "max_pieces": args.coacd_max_pieces})  # fmt: skip
    if args.keyframe is not None:
        event, frame = args.keyframe
        fixes.append({"kind": "keyframe", "object": args.object, "event": event, "frame": frame})
    if args.approach is not None:
        fixes.append({"kind": "approach", "object": args.object, "phase": args.approach})
    if args.grasp_height is not None:
        fixes.append({"kind": "grasp_height", "object": args.object, "rise_m": args.grasp_height})
    if args.release_above is not None:
        fixes.append({"kind": "release_above", "object": args.object, "height_m": args.release_above,
                      "frame": args.frame})  # fmt: skip
    if args.release_opening is not None:
        fixes.append({"kind": "release_opening", "object": args.object, "width_m": args.release_opening,
                      "frame": args.frame, "limit": args.at_most})  # fmt: skip
    if args.set_down is not None:
        fixes.append({"kind": "set_down", "object": args.object, "frame": args.set_down})
    if args.pour_offset is not None:
        fixes.append({"kind": "pour_offset", "object": args.object, "delta": list(args.pour_offset)})
    if args.place_offset is not None:
        fixes.append({"kind": "place_offset", "object": args.object, "delta": list(args.place_offset)})
    if args.slot_width is not None:
        fixes.append({"kind": "slot_width", "object": args.object, "width_m": args.slot_width})
    if args.peg_radius is not None:
        fixes.append({"kind": "peg_radius", "object": args.object, "radius_m": args.peg_radius})
    joint_args = {"axis": args.joint_axis, "pivot": args.joint_pivot, "range": args.joint_range,
                  "damping": args.joint_damping, "frictionloss": args.joint_frictionloss}  # fmt: skip
    if any(v is not None for v in joint_args.values()) and not args.part:
        raise Real2GymError("name the moving part whose joint to change with --part NAME")
    if args.part is not None:
        if all(v is None for v in joint_args.values()):
            raise Real2GymError("--part needs what to change: --joint-axis, --joint-pivot, --joint-range, "
                                "--joint-damping or --joint-frictionloss")  # fmt: skip
        fixes.append({"kind": "joint", "object": args.object, "part": args.part,
                      **{k: (list(v) if isinstance(v, tuple) else v) for k, v in joint_args.items() if v is not None}})  # fmt: skip
    if args.apply_suggestion is not None:
        suggestions = _suggestions(report)
        if not 1 <= args.apply_suggestion <= len(suggestions):
            raise Real2GymError(
                f"there are {len(suggestions)} suggestions; --apply-suggestion takes 1 to {len(suggestions)}"
            )
        fixes.append(suggestions[args.apply_suggestion - 1]["fix"])
    if args.from_report:
        from .fixes.edits import recorded_fixes

        fixes += recorded_fixes(
            read_report(
                Path(args.from_report).parent if args.from_report.endswith(".json") else args.from_report
            ).to_json()
        )
    return fixes


def _suggestions(report: Report) -> list[dict]:
    """The report's suggested fixes; computed now when it holds none (an older report)."""
    from .fixes.suggest import suggest_fixes

    verification = report.verification
    return (verification.suggestions if verification is not None else None) or suggest_fixes(report.to_json())


def _cmd_fix(args: argparse.Namespace) -> int:
    from .fixes.edits import apply_fix, undo_last
    from .fixes.probe import opening_probe
    from .geometry.shapes import Shape
    from .reverify import reverify

    report = read_report(args.out_dir)
    if args.suggest:
        suggestions = _suggestions(report)
        for index, suggestion in enumerate(suggestions, start=1):
            print(f"{index}. [{suggestion['check']}, frame {suggestion['frame']}] {suggestion['text']}")
        if not suggestions:
            print(
                "no suggestions: "
                + (
                    "verified"
                    if report.verification is not None and report.verification.passed
                    else "no failed check with a known fix"
                )
            )
        return 0
    if args.repair:
        return _repair(args.out_dir, args.repair_rounds, args.quiet)
    if args.probe:
        from .fixes.edits import find_object

        result = opening_probe(
            Shape.from_report(find_object(report.to_json(), args.object or report.task.get("target")))
        )
        print(", ".join(f"{k}={v}" for k, v in result.items()))
        return 0 if result["passed"] else EXIT_NOT_VERIFIED
    fixes = _requested_fixes(args, report)
    if not fixes and not args.undo:
        raise Real2GymError(
            "no fix given: use --rim-scale, --scale, --offset, --collision, --keyframe, --part with --joint-..., --undo, "
            "--apply-suggestion or --suggest"
        )

    def edit(current: dict) -> None:
        if args.undo:
            undone = undo_last(current)
            print(f"undid: {undone['kind']} on {undone['object']} {undone['args']}")
        for fix in fixes:
            entry = apply_fix(current, fix)
            print(f"fixed: {entry['kind']} on {entry['object']} {entry['args']}")
            if "opening_probe" in entry:
                probe = entry["opening_probe"]
                print(
                    f"  opening probe: {'reaches the bottom' if probe['passed'] else 'does NOT reach the bottom'}"
                )

    updated, verification = reverify(args.out_dir, edit=edit, verify=not args.no_verify, margin=args.margin)
    if verification is None:
        return 0
    _print_verification(updated.verification)
    return 0 if verification.passed else EXIT_NOT_VERIFIED


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import render_comparison
    from .summary import write_summary
    from .video_out import h264_available

    progress = Progress(None if args.quiet else _ProgressBar())
    artifacts = render_comparison(args.out_dir, progress=progress, page=write_summary)
    if not h264_available():
        print("real2gym: note: PyAV is not installed, so the video is MPEG-4 part 2 (mp4v), which browsers do "
              "not play; 'pip install av' writes H.264", file=sys.stderr)  # fmt: skip
    for name, path in artifacts.items():
        print(f"{name}: {Path(args.out_dir).resolve() / path}")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    from .viewer import view_run

    replayed = view_run(args.out_dir, speed=args.speed, loop=not args.once, seconds=args.seconds)
    print(f"replayed {replayed} frames")
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from .batch import run_batch

    def progress(done: int, total: int, row: dict) -> None:
        if not args.quiet:
            print(f"real2gym: [{done}/{total}] {row['demo']}: {row['status']}", file=sys.stderr, flush=True)

    rows = run_batch(
        args.demo_dirs, args.out, args.jobs, _segmentation_options(args), progress, force=args.force
    )
    print((Path(args.out) / "summary.md").read_text(), end="")
    return 0 if all(r["status"] == "verified" for r in rows) else EXIT_NOT_VERIFIED


def _cmd_models_fetch(args: argparse.Namespace) -> int:
    progress = Progress(None if args.quiet else _ProgressBar())
    try:
        path = fetch_model(args.name, progress=progress, base_url=args.base_url)
    except (Cancelled, KeyboardInterrupt):
        print("real2gym: note: the partial download is kept; the same command resumes it", file=sys.stderr)
        raise
    print(f"{args.name}: {path}")
    return 0


def _cmd_models_list(args: argparse.Namespace) -> int:
    for row in list_models():
        size = f"{row.info.size_bytes / 1e6:.0f} MB" if row.info.size_bytes else "?"
        state = "cached" if row.cached else "not downloaded"
        print(f"{row.info.name:<17} {size:>7}  {state:<14}  {row.path}")
    return 0


def _add_common(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "demo_dir", type=folder_path, help="the demo folder (video, camera.json, prompts.json ...)"
    )
    command.add_argument(
        "--out", required=True, type=folder_path, help="the output folder (created if missing)"
    )
    command.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help="segmentation backend (default: classical)",
    )
    command.add_argument(
        "--sam2-checkpoint",
        metavar="PATH",
        help="SAM2 checkpoint (.pt) or a downloaded model's name (real2gym models list), for --backend sam2",
    )
    command.add_argument("--sam2-config", default="sam2.1_hiera_t", metavar="NAME", help="SAM2 config name")
    command.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device for SAM2")
    command.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    command.add_argument("--force", action="store_true",
                         help="replace an earlier run in --out even if its report logs fixes")  # fmt: skip
    command.add_argument("--json", action="store_true", help=JSON_HELP)


def _add_margin(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--margin",
        type=whole_in(0, 64),
        default=DEFAULT_RUNS,
        metavar="N",
        help="after verifying, simulate N perturbed copies of the scene (start poses, sizes, friction, mass, the "
        "hand's timing and opening) and report how many pass (default 8; 0: none)",
    )


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``real2gym`` command."""
    parser = _Parser(
        prog="real2gym",
        description="Turn a manipulation video into a physically verified MuJoCo scene.",
    )
    parser.add_argument("--version", action="version", version=version_text())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run the whole pipeline on a demo folder")
    _add_common(run)
    run.add_argument("--no-blend", action="store_true", help="do not write scene.blend")
    run.add_argument(
        "--repair",
        action="store_true",
        help="if the scene does not verify, apply the computed fix suggestions in turn",
    )
    run.add_argument("--repair-rounds", type=whole_in(1, 20), default=REPAIR_ROUNDS, metavar="N",
                     help="at most N repair rounds (default 5)")  # fmt: skip
    run.add_argument("--depth-model", metavar="FOLDER",
                     help="for an RGB-only demo: a monocular metric depth model (a Hugging Face folder such as "
                          "Depth-Anything-V2-Metric-Indoor-Small-hf) that estimates its depth")  # fmt: skip
    _add_margin(run)
    run.set_defaults(handler=_cmd_run)
    segment = commands.add_parser("segment", help="segment every object through the video (masks and report)")
    _add_common(segment)
    segment.add_argument(
        "--object",
        metavar="NAME",
        help="segment only this object again (all its prompts, corrections included), keeping the "
        "other objects' masks from the earlier run in --out",
    )
    segment.set_defaults(handler=_cmd_run, no_blend=True)
    verify = commands.add_parser("verify", help="export and simulate a finished run again (after edits)")
    verify.add_argument("out_dir", type=folder_path, help="an output folder with report.json")
    verify.add_argument("--json", action="store_true", help=JSON_HELP)
    verify.add_argument(
        "--mass",
        action="append",
        type=_mass,
        metavar="NAME=KG",
        help="override an object's mass for this verification",
    )
    verify.add_argument("--friction", action="append", type=_friction, metavar="NAME=F",
                        help=f"set an object's sliding friction ({FRICTION_RANGE[0]:g} to {FRICTION_RANGE[1]:g}; "
                             "kept in report.json for later runs)")  # fmt: skip
    _add_margin(verify)
    verify.set_defaults(handler=_cmd_verify)
    fix = commands.add_parser("fix", help="fix an object of a finished run, then verify again")
    fix.add_argument("out_dir", type=folder_path, help="an output folder with report.json")
    fix.add_argument("--json", action="store_true", help=JSON_HELP)
    fix.add_argument("--object", help="the object to fix (its name in prompts.json)")
    scale_range = f"{SCALE_RANGE[0]:g} to {SCALE_RANGE[1]:g}"
    fix.add_argument("--rim-scale", type=number_in(*SCALE_RANGE), metavar="F",
                     help=f"scale a container's radius, keeping bottom and walls ({scale_range})")  # fmt: skip
    fix.add_argument("--scale", type=triple(*SCALE_RANGE, "scale factors"), metavar="SX,SY,SZ",
                     help=f"scale about the object's base (each {scale_range})")  # fmt: skip
    fix.add_argument("--offset", type=triple(-MAX_OFFSET_M, MAX_OFFSET_M, "metres"), metavar="DX,DY,DZ",
                     help=f"move the object (world metres, each at most {MAX_OFFSET_M:g}) from --frame on")  # fmt: skip
    fix.add_argument(
        "--frame",
        type=whole_in(0),
        default=None,
        help="frame where --offset starts (default 0) or --release-opening starts (default: the release)",
    )
    fix.add_argument("--blend", type=whole_in(0), default=5,
                     help="frames over which --offset blends in (default 5)")  # fmt: skip
    fix.add_argument("--whole-motion", action="store_true", help="apply --offset to every frame")
    fix.add_argument(
        "--collision", choices=("primitives", "walls", "hull", "coacd"), help="replace the collision"
    )
    fix.add_argument("--coacd-threshold", type=number_in(*COACD_THRESHOLD_RANGE), default=0.05,
                     help="CoACD concavity threshold (0.01 to 1)")  # fmt: skip
    fix.add_argument("--coacd-max-pieces", type=whole_in(1, COACD_MAX_PIECES), default=16,
                     help=f"CoACD piece limit (1 to {COACD_MAX_PIECES})")  # fmt: skip
    fix.add_argument("--keyframe", type=_keyframe, metavar="EVENT=FRAME",
                     help="move (or add) a keyframe; EVENT= deletes it")  # fmt: skip
    fix.add_argument("--approach", choices=APPROACH_PHASES,
                     help="rebuild the hand's path into the grasp (grasp) or out of the release (release) "
                          "along its approach axis")  # fmt: skip
    fix.add_argument("--grasp-height", type=number_in(0.001, 0.1), metavar="METRES",
                     help="grasp the object this much higher: the hand's whole path moves back along its "
                          "approach axis")  # fmt: skip
    fix.add_argument("--release-above", type=number_in(-1.0, 1.0), metavar="METRES",
                     help="the hand carrying the object goes no lower than this height (its grasp centre, "
                          "world z) and lets go there (on --frame, else where it first reaches it): the "
                          "object drops the rest of the way")  # fmt: skip
    fix.add_argument("--release-opening", type=number_in(0.001, MAX_OPENING), metavar="METRES",
                     help="open the fingers to at least this gap from the release (--frame) on")  # fmt: skip
    fix.add_argument("--at-most", action="store_true",
                     help="with --release-opening: open them to at most this gap instead")  # fmt: skip
    fix.add_argument("--pour-offset", type=triple(-MAX_OFFSET_M, MAX_OFFSET_M, "metres"), metavar="DX,DY,DZ",
                     help="move the hand, and the container it pours from, by this much (world metres) while it "
                     "pours (pour_start to pour_end; blended in from the lift and out by the release)")  # fmt: skip
    fix.add_argument("--place-offset", type=triple(-MAX_OFFSET_M, MAX_OFFSET_M, "metres"), metavar="DX,DY,DZ",
                     help="move where the hand puts the object down by this much (world metres): blended in from "
                     "the lift to the release, fully from the release on")  # fmt: skip
    fix.add_argument("--slot-width", type=number_in(*SLOT_WIDTH_RANGE), metavar="METRES",
                     help="set a dish rack's slots this wide (divider to divider); the slots stay where they are, "
                     "the dividers thin (the pitch grows where they would be under 1 mm)")  # fmt: skip
    fix.add_argument("--peg-radius", type=number_in(*PEG_RADIUS_RANGE), metavar="METRES",
                     help="set a rack's pegs' radius (they share one); the post stays where it stands")  # fmt: skip
    fix.add_argument("--set-down", type=whole_in(0, 1_000_000), metavar="FRAME",
                     help="the object stands on its support from FRAME: the hand goes no farther along its "
                          "approach axis from there until it lets go")  # fmt: skip
    fix.add_argument(
        "--part", metavar="NAME", help="a moving part of --object (a door) whose joint to change"
    )
    fix.add_argument("--joint-axis", type=triple(-1e3, 1e3, "axis components"), metavar="X,Y,Z",
                     help="the part's hinge axis or slide direction (world frame)")  # fmt: skip
    fix.add_argument("--joint-pivot", type=triple(-10.0, 10.0, "metres"), metavar="X,Y,Z",
                     help="a point on the hinge's axis (world metres)")  # fmt: skip
    fix.add_argument("--joint-range", type=_pair, metavar="LO,HI",
                     help="the joint's range: radians for a hinge, metres for a slide")  # fmt: skip
    fix.add_argument("--joint-damping", type=number_in(0.0, 50.0), metavar="D",
                     help="the joint's damping (N*m*s/rad or N*s/m)")  # fmt: skip
    fix.add_argument("--joint-frictionloss", type=number_in(0.0, 50.0), metavar="F",
                     help="the joint's dry friction (N*m or N)")  # fmt: skip
    fix.add_argument("--probe", action="store_true", help="only drop a probe into the container and report")
    fix.add_argument("--suggest", action="store_true", help="only list the suggested fixes")
    fix.add_argument(
        "--repair",
        action="store_true",
        help="apply the suggested fixes in turn, verifying after each, until verified",
    )
    fix.add_argument(
        "--repair-rounds",
        type=whole_in(1, 20),
        default=5,
        metavar="N",
        help="at most N repair rounds (default 5)",
    )
    fix.add_argument("-q", "--quiet", action="store_true", help="no progress output")  # fmt: skip
    fix.add_argument(
        "--apply-suggestion", type=whole_in(1), metavar="N", help="apply suggestion N (see --suggest)"
    )
    fix.add_argument(
        "--from-report",
        metavar="PATH",
        type=file_path,
        help="apply the fixes recorded in another run's report",
    )
    _add_margin(fix)
    fix.add_argument("--undo", action="store_true", help="undo the last fix")
    fix.add_argument("--no-verify", action="store_true", help="only change the scene, do not simulate")
    fix.set_defaults(handler=_cmd_fix)
    compare = commands.add_parser("compare", help="render real | reconstruction | simulation side by side")
    compare.add_argument("out_dir", type=folder_path, help="an output folder with report.json")
    compare.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    compare.set_defaults(handler=_cmd_compare)
    view = commands.add_parser("view", help="replay the simulated demo in MuJoCo's viewer (needs a display)")
    view.add_argument(
        "out_dir", type=folder_path, help="an output folder with report.json and mjcf/scene.xml"
    )
    view.add_argument("--speed", type=number_in(0.05, 20.0), default=1.0, metavar="X",
                      help="playback speed (1 = the video's)")  # fmt: skip
    view.add_argument("--once", action="store_true", help="play once instead of looping")
    view.add_argument("--seconds", type=number_in(0.1, 86400.0), metavar="S", help="close after S seconds")
    view.set_defaults(handler=_cmd_view)
    batch = commands.add_parser("batch", help="run many demo folders in parallel processes")
    batch.add_argument("demo_dirs", nargs="+", type=folder_path, help="demo folders")
    batch.add_argument("--out", required=True, type=folder_path,
                       help="output root (new, empty, or an earlier batch's with --force); a folder per demo")  # fmt: skip
    batch.add_argument("--force", action="store_true", help="replace an earlier batch in --out")
    batch.add_argument("--jobs", type=whole_in(1, MAX_JOBS), default=2,
                       help=f"parallel processes (1 to {MAX_JOBS}, default 2)")  # fmt: skip
    batch.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND, help="segmentation backend")
    batch.add_argument("--sam2-checkpoint", metavar="PATH")
    batch.add_argument("--sam2-config", default="sam2.1_hiera_t", metavar="NAME")
    batch.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    batch.add_argument("-q", "--quiet", action="store_true")
    batch.set_defaults(handler=_cmd_batch)
    models = commands.add_parser("models", help="download SAM2 checkpoints by name, list them")
    actions = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    fetch = actions.add_parser("fetch", help="download a checkpoint into the model cache (resumable)")
    fetch.add_argument("name", metavar="NAME", help=f"the model: {', '.join(MODELS)}")
    fetch.add_argument(
        "--base-url",
        metavar="URL",
        help=f"download from this mirror (default: ${BASE_URL_ENV} or Meta's server)",
    )
    fetch.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    fetch.set_defaults(handler=_cmd_models_fetch)
    listing = actions.add_parser("list", help="list the models, their sizes and whether they are downloaded")
    listing.set_defaults(handler=_cmd_models_list)
    add_variant_commands(commands)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (``real2gym: error: ...``) and exit code 2."""

    def error(self, message: str):
        self.exit(EXIT_USER_ERROR, f"real2gym: error: {message} (see '{self.prog} --help')\n")


def _crash_log(error: BaseException) -> Path | None:
    """Writes the traceback of an unexpected error to a log file; returns its path."""
    folder = Path(tempfile.gettempdir()) / "real2gym-logs"
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        folder.mkdir(exist_ok=True)
        path = folder / f"real2gym-{stamp}-{os.getpid()}.log"
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        path.write_text(f"real2gym {' '.join(sys.argv[1:])}\n\n{text}", encoding="utf-8")
        return path
    except OSError:
        return None


def _on_sigterm(signum, frame) -> None:
    raise KeyboardInterrupt  # cancels like Ctrl+C: staging discarded, nothing written


def main(
    argv: Sequence[str] | None = None,
    build_scene: SceneBuilder | None = None,
    no_blend_note: str | None = None,
) -> int:
    """Runs the command line and returns its exit code (see the module's description).

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when None.
        build_scene: The Blender side's scene builder for ``run`` and ``segment`` (writes
            ``scene.blend``); None to write none.
        no_blend_note: Why there is no scene builder, printed as a note after a run.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, printed in one line)
        return e.code if isinstance(e.code, int) else EXIT_USER_ERROR
    args.build_scene, args.no_blend_note = build_scene, no_blend_note
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (tests, embedding): no SIGTERM handling
        previous = None
    try:
        if not getattr(args, "json", False):
            return _dispatch(args, [])
        errors: list[str] = []
        with contextlib.redirect_stdout(sys.stderr):  # the human lines; stdout holds only the JSON
            code = _dispatch(args, errors)
        out_dir = getattr(args, "out", None) or getattr(args, "out_dir", None)
        result = json_result(args.command, code, out_dir, errors[-1] if errors else None)
        print(json.dumps(result, indent=1))
        return code
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _dispatch(args: argparse.Namespace, errors: list[str]) -> int:
    """Runs the command's handler; every failure becomes one line on stderr (also kept in
    ``errors``) and its exit code."""

    def fail(text: str, code: int) -> int:
        errors.append(text)
        print(f"real2gym: {text}", file=sys.stderr)
        return code

    try:
        return args.handler(args)
    except (Cancelled, KeyboardInterrupt):
        return fail("cancelled; nothing was written", EXIT_CANCELLED)
    except Real2GymError as e:
        return fail(f"error: {e}", EXIT_USER_ERROR)
    except OSError as e:
        if e.errno not in ENVIRONMENT_ERRNOS:
            return _internal_error(e, errors)
        place = e.filename or getattr(args, "out", None) or getattr(args, "out_dir", None)
        where = f": {place}" if place else ""
        if e.errno in DISK_FULL_ERRNOS:
            return fail(
                f"error: no space left on device{where}; free some space and run again", EXIT_USER_ERROR
            )
        return fail(f"error: {e.strerror}{where}", EXIT_USER_ERROR)
    except MemoryError:
        return fail("error: out of memory; try a shorter or smaller video", EXIT_USER_ERROR)
    except Exception as e:  # a bug: one line, the traceback in a log file, exit 3
        return _internal_error(e, errors)


def _internal_error(error: BaseException, errors: list[str] | None = None) -> int:
    log = _crash_log(error)
    where = f"; the details are in {log}" if log else ""
    text = (
        f"internal error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        f"{where} (please report it)"
    )
    if errors is not None:
        errors.append(text)
    print(f"real2gym: {text}", file=sys.stderr)
    return EXIT_INTERNAL_ERROR
