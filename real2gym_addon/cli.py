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
import sys
from collections.abc import Sequence

from .errors import Real2GymError
from .pipeline import BlendWriter, run_pipeline
from .progress import Progress

EXIT_USER_ERROR = 2
EXIT_CANCELLED = 130


class _ProgressBar:
    """Draws progress on stderr: a bar on a terminal, one line per stage otherwise."""

    def __init__(self, stream=sys.stderr, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = stream.isatty()
        self._last = None

    def __call__(self, message: str, fraction: float) -> None:
        if self.tty:
            filled = int(round(fraction * self.width))
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {fraction * 100:3.0f}% {message:<40}")
            if fraction >= 1.0:
                self.stream.write("\n")
        elif message != self._last:
            self.stream.write(f"real2gym: {fraction * 100:3.0f}% {message}\n")
        self._last = message
        self.stream.flush()


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


def _cmd_run(args: argparse.Namespace) -> int:
    write_blend, reason = _blend_writer(args.no_blend, args.out)
    progress = Progress(None if args.quiet else _ProgressBar())
    run = run_pipeline(args.demo_dir, args.out, write_blend=write_blend, progress=progress)
    for warning in run.log.warnings:
        print(f"real2gym: warning ({warning.stage}): {warning.message}", file=sys.stderr)
    if reason:
        print(f"real2gym: note: {reason}", file=sys.stderr)
    out = run.out_dir.resolve()
    print(f"report: {out / 'report.json'}")
    if "blend" in run.scene.artifacts:
        print(f"blend:  {out / run.scene.artifacts['blend']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``real2gym`` command."""
    parser = argparse.ArgumentParser(
        prog="real2gym",
        description="Turn a manipulation video into a physically verified MuJoCo scene.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run the whole pipeline on a demo folder")
    run.add_argument("demo_dir", help="the demo folder (video, camera.json, prompts.json ...)")
    run.add_argument("--out", required=True, help="the output folder (created if missing)")
    run.add_argument("--no-blend", action="store_true", help="do not write scene.blend")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    run.set_defaults(handler=_cmd_run)
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
