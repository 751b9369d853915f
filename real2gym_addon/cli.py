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
