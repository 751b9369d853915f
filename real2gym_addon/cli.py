"""The ``real2gym`` command line.

``real2gym run DEMO_DIR --out OUT_DIR`` runs the pipeline headless. With the
PyPI ``bpy`` module installed it also writes ``scene.blend`` through the same
Blender bridge the add-on uses; ``--no-blend`` skips that.

A problem with the input prints one line on stderr and exits with code 2; a
cancelled run (Ctrl+C) exits with 130 and writes nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import Real2GymError
from .pipeline import STAGES, BlendWriter, run_pipeline
from .progress import Progress
from .segmentation.backends import BACKENDS, DEFAULT_BACKEND, SegmentationOptions

EXIT_NOT_VERIFIED = 1
EXIT_USER_ERROR = 2
EXIT_CANCELLED = 130


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


def _blend_writer(no_blend: bool, out_dir: str) -> tuple[BlendWriter | None, str | None]:
    """Returns the Blender bridge's scene writer, or None with the reason."""
    if no_blend:
        return None, None
    if importlib.util.find_spec("bpy") is None:
        return None, "the bpy module is not installed, so scene.blend was not written (see README)"
    try:
        from ..bridge.pipeline import headless_blend_writer
    except ImportError:
        return None, "the Blender bridge is not importable here (run the installed 'real2gym' command)"
    return headless_blend_writer(out_dir), None


def _segmentation_options(args: argparse.Namespace) -> SegmentationOptions:
    return SegmentationOptions(
        backend=args.backend,
        sam2_checkpoint=args.sam2_checkpoint or "",
        sam2_config=args.sam2_config,
        device=args.device,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    write_blend, reason = _blend_writer(args.no_blend, args.out)
    progress = Progress(None if args.quiet else _ProgressBar())
    run = run_pipeline(
        args.demo_dir,
        args.out,
        write_blend=write_blend,
        progress=progress,
        segmentation=_segmentation_options(args),
        last_stage="segment" if args.command == "segment" else STAGES[-1],
    )
    for warning in run.log.warnings:
        print(f"real2gym: warning ({warning.stage}): {warning.message}", file=sys.stderr)
    if reason:
        print(f"real2gym: note: {reason}", file=sys.stderr)
    out = run.out_dir.resolve()
    print(f"report: {out / 'report.json'}")
    for kind in ("masks", "mjcf", "blend"):
        if kind in run.scene.artifacts:
            print(f"{kind + ':':<7} {out / run.scene.artifacts[kind]}")
    if run.scene.verification is not None:
        _print_verification(run.scene.verification)
        return 0 if run.scene.verification["passed"] else EXIT_NOT_VERIFIED
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from .reverify import reverify

    masses = {}
    for item in args.mass or []:
        name, _, value = item.partition("=")
        try:
            masses[name] = float(value)
        except ValueError:
            raise Real2GymError(f"--mass wants NAME=KG, got {item!r}") from None
    report, verification = reverify(args.out_dir, masses)
    _print_verification(report["verification"])
    return 0 if verification.passed else EXIT_NOT_VERIFIED


def _print_verification(verification: dict) -> None:
    state = "PASSED" if verification["passed"] else "FAILED"
    print(f"verification: {state}")
    for name, check in verification["checks"].items():
        figures = {k: v for k, v in check.items() if k != "passed" and not isinstance(v, (dict, list))}
        shown = ", ".join(f"{k}={v}" for k, v in list(figures.items())[:4])
        print(f"  {'ok  ' if check['passed'] else 'FAIL'} {name}: {shown}")


def _floats(text: str, count: int, option: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != count:
        raise Real2GymError(f"{option} wants {count} comma-separated numbers, got {text!r}")
    return values


def _requested_fixes(args: argparse.Namespace, report: dict) -> list[dict]:
    from .fixes.suggest import suggest_fixes

    fixes = []
    needs_object = any(
        v is not None for v in (args.rim_scale, args.scale, args.offset, args.collision, args.keyframe)
    )
    if needs_object and not args.object:
        raise Real2GymError("name the object to fix with --object NAME")
    if args.rim_scale is not None:
        fixes.append({"kind": "radius_scale", "object": args.object, "factor": args.rim_scale})
    if args.scale is not None:
        fixes.append({"kind": "scale", "object": args.object, "factors": _floats(args.scale, 3, "--scale")})
    if args.offset is not None:
        fixes.append({"kind": "offset", "object": args.object, "delta": _floats(args.offset, 3, "--offset"),
                      "frame": None if args.whole_motion else args.frame, "blend": args.blend})  # fmt: skip
    if args.collision is not None:
        fixes.append({"kind": "collision", "object": args.object, "mode": args.collision,
                      "threshold": args.coacd_threshold, "max_pieces": args.coacd_max_pieces})  # fmt: skip
    if args.keyframe is not None:
        event, _, frame = args.keyframe.partition("=")
        fixes.append({"kind": "keyframe", "object": args.object, "event": event,
                      "frame": None if frame in ("", "none") else int(frame)})  # fmt: skip
    if args.apply_suggestion is not None:
        suggestions = (report.get("verification") or {}).get("suggestions") or suggest_fixes(report)
        if not 1 <= args.apply_suggestion <= len(suggestions):
            raise Real2GymError(
                f"there are {len(suggestions)} suggestions; --apply-suggestion takes 1 to {len(suggestions)}"
            )
        fixes.append(suggestions[args.apply_suggestion - 1]["fix"])
    if args.from_report:
        from .fixes.edits import recorded_fixes
        from .reverify import read_report

        fixes += recorded_fixes(
            read_report(
                Path(args.from_report).parent if args.from_report.endswith(".json") else args.from_report
            )
        )
    return fixes


def _cmd_fix(args: argparse.Namespace) -> int:
    from .fixes.edits import apply_fix, undo_last
    from .fixes.probe import opening_probe
    from .fixes.suggest import suggest_fixes
    from .geometry.shapes import Shape
    from .reverify import read_report, reverify

    report = read_report(args.out_dir)
    if args.suggest:
        suggestions = (report.get("verification") or {}).get("suggestions") or suggest_fixes(report)
        for index, suggestion in enumerate(suggestions, start=1):
            print(f"{index}. [{suggestion['check']}, frame {suggestion['frame']}] {suggestion['text']}")
        if not suggestions:
            print(
                "no suggestions: "
                + (
                    "verified"
                    if (report.get("verification") or {}).get("passed")
                    else "no failed check with a known fix"
                )
            )
        return 0
    if args.probe:
        from .fixes.edits import find_object

        result = opening_probe(
            Shape.from_report(find_object(report, args.object or report["task"].get("target")))
        )
        print(", ".join(f"{k}={v}" for k, v in result.items()))
        return 0 if result["passed"] else EXIT_NOT_VERIFIED
    fixes = _requested_fixes(args, report)
    if not fixes and not args.undo:
        raise Real2GymError(
            "no fix given: use --rim-scale, --scale, --offset, --collision, --keyframe, --undo, --apply-suggestion or --suggest"
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

    updated, verification = reverify(args.out_dir, edit=edit, verify=not args.no_verify)
    if verification is None:
        return 0
    _print_verification(updated["verification"])
    return 0 if verification.passed else EXIT_NOT_VERIFIED


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import render_comparison

    progress = Progress(None if args.quiet else _ProgressBar())
    artifacts = render_comparison(args.out_dir, progress=progress)
    for name, path in artifacts.items():
        print(f"{name}: {Path(args.out_dir).resolve() / path}")
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from .batch import run_batch

    def progress(done: int, total: int, row: dict) -> None:
        if not args.quiet:
            print(f"real2gym: [{done}/{total}] {row['demo']}: {row['status']}", file=sys.stderr, flush=True)

    rows = run_batch(args.demo_dirs, args.out, args.jobs, _segmentation_options(args), progress)
    print((Path(args.out) / "summary.md").read_text(), end="")
    return 0 if all(r["status"] == "verified" for r in rows) else EXIT_NOT_VERIFIED


def _add_common(command: argparse.ArgumentParser) -> None:
    command.add_argument("demo_dir", help="the demo folder (video, camera.json, prompts.json ...)")
    command.add_argument("--out", required=True, help="the output folder (created if missing)")
    command.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help="segmentation backend (default: classical)",
    )
    command.add_argument(
        "--sam2-checkpoint", metavar="PATH", help="SAM2 checkpoint (.pt), for --backend sam2"
    )
    command.add_argument("--sam2-config", default="sam2.1_hiera_t", metavar="NAME", help="SAM2 config name")
    command.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device for SAM2")
    command.add_argument("-q", "--quiet", action="store_true", help="no progress output")


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``real2gym`` command."""
    parser = argparse.ArgumentParser(
        prog="real2gym",
        description="Turn a manipulation video into a physically verified MuJoCo scene.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run the whole pipeline on a demo folder")
    _add_common(run)
    run.add_argument("--no-blend", action="store_true", help="do not write scene.blend")
    run.set_defaults(handler=_cmd_run)
    segment = commands.add_parser("segment", help="segment every object through the video (masks and report)")
    _add_common(segment)
    segment.set_defaults(handler=_cmd_run, no_blend=True)
    verify = commands.add_parser("verify", help="export and simulate a finished run again (after edits)")
    verify.add_argument("out_dir", help="an output folder with report.json")
    verify.add_argument("--mass", action="append", metavar="NAME=KG", help="override an object's mass")
    verify.set_defaults(handler=_cmd_verify)
    fix = commands.add_parser("fix", help="fix an object of a finished run, then verify again")
    fix.add_argument("out_dir", help="an output folder with report.json")
    fix.add_argument("--object", help="the object to fix (its name in prompts.json)")
    fix.add_argument(
        "--rim-scale", type=float, metavar="F", help="scale a container's radius, keeping bottom and walls"
    )
    fix.add_argument("--scale", metavar="SX,SY,SZ", help="scale about the object's base")
    fix.add_argument("--offset", metavar="DX,DY,DZ", help="move the object (world metres) from --frame on")
    fix.add_argument("--frame", type=int, default=0, help="keyframe where --offset starts (default 0)")
    fix.add_argument("--blend", type=int, default=5, help="frames over which --offset blends in (default 5)")
    fix.add_argument("--whole-motion", action="store_true", help="apply --offset to every frame")
    fix.add_argument(
        "--collision", choices=("primitives", "walls", "hull", "coacd"), help="replace the collision"
    )
    fix.add_argument("--coacd-threshold", type=float, default=0.05, help="CoACD concavity threshold")
    fix.add_argument("--coacd-max-pieces", type=int, default=16, help="CoACD piece limit")
    fix.add_argument("--keyframe", metavar="EVENT=FRAME", help="move (or add) a keyframe; EVENT= deletes it")
    fix.add_argument("--probe", action="store_true", help="only drop a probe into the container and report")
    fix.add_argument("--suggest", action="store_true", help="only list the suggested fixes")
    fix.add_argument("--apply-suggestion", type=int, metavar="N", help="apply suggestion N (see --suggest)")
    fix.add_argument("--from-report", metavar="PATH", help="apply the fixes recorded in another run's report")
    fix.add_argument("--undo", action="store_true", help="undo the last fix")
    fix.add_argument("--no-verify", action="store_true", help="only change the scene, do not simulate")
    fix.set_defaults(handler=_cmd_fix)
    compare = commands.add_parser("compare", help="render real | reconstruction | simulation side by side")
    compare.add_argument("out_dir", help="an output folder with report.json")
    compare.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    compare.set_defaults(handler=_cmd_compare)
    batch = commands.add_parser("batch", help="run many demo folders in parallel processes")
    batch.add_argument("demo_dirs", nargs="+", help="demo folders")
    batch.add_argument("--out", required=True, help="output root; one folder per demo and summary.md")
    batch.add_argument("--jobs", type=int, default=2, help="parallel processes (default 2)")
    batch.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND, help="segmentation backend")
    batch.add_argument("--sam2-checkpoint", metavar="PATH")
    batch.add_argument("--sam2-config", default="sam2.1_hiera_t", metavar="NAME")
    batch.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    batch.add_argument("-q", "--quiet", action="store_true")
    batch.set_defaults(handler=_cmd_batch)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line and returns its exit code.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when None.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except Real2GymError as e:
        print(f"real2gym: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("real2gym: cancelled; nothing was written", file=sys.stderr)
        return EXIT_CANCELLED
