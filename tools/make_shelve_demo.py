#!/usr/bin/env python3
"""Generate a demo folder of a gripper putting a book-like box onto a board of a shelf.

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) comes down on a book lying flat on
the table in front of a shelf, closes its fingers across the book's width, lifts it above the shelf's
middle board, carries it to in front of the shelf (turning it so that its length runs along the shelf's
width), moves it in level through the open front, lowers it onto the middle board, lets go, rises just
clear of the book's top, backs out level through the front, and goes up and away. MuJoCo simulates and
renders it, in a model built here with MjSpec (not by the project's MJCF exporter). The seed draws the
shelf (its size, thicknesses, 2 or 3 boards, the middle board's height, its place and turn), the book,
where it starts, colours and the camera (in front of the shelf, off to one side, a little above the
middle board).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in mm),
prompts.json (``book``, shape ``box``, and ``shelf``, shape ``shelf``; task ``shelve``), optionally
trajectory.json and masks/, truth.json (poses and masks of both objects per frame, their shape parameters
(the shelf's as the project's ``shelf`` kind), keyframes ``grasp``, ``lift``, ``release``, the gripper per
frame, the checks) and a README.md. The outcome is checked in the simulation: the generator exits with
status 1 when the book does not end resting flat on the middle board (or, with ``--short``, when it
does), slipped in the hand, was touched by more than the finger pads, or the hand touched the shelf, and 2
for options it cannot film. It writes a new or empty folder, or one it wrote before (its truth.json
says so), through a staging folder beside it: a run that fails changes nothing there, and files it does
not write (a user's notes) stay.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_shelve_demo.py --out /tmp/shelve --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_shelve_demo.py --out /tmp/shelve_short --seed 0 --short 0.08
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _articulated_motion import Script  # noqa: E402
from _demo_film import add_output_options  # noqa: E402
from _shelve_layout import frame_camera, must_see, sample_layout  # noqa: E402
from _shelve_model import build_model  # noqa: E402
from _shelve_motion import plan_script  # noqa: E402
from _shelve_scene import GROUP_BOOK, GROUP_SHELF, ShelveLayout  # noqa: E402
from _shelve_sim import ShelveResult, simulate  # noqa: E402
from _shelve_truth import describe_objects, prompts_json, truth_json  # noqa: E402
from _task_demo import TaskDemo, camera_distance, readme_files_and_command, run_demo, task_parser  # noqa: E402

TOOL = "tools/make_shelve_demo.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = task_parser(
        __doc__.splitlines()[0], "shelf, book, places, colours, camera, noise", 6, owns_folder=True
    )
    add = parser.add_argument
    add("--camera-azimuth", type=float, default=None,
        help="deg from world +x (default: drawn, 20-40 deg to a side of the shelf's front)")  # fmt: skip
    add("--camera-height", type=float, default=None,
        help="m above the table (default: drawn, 6-20 cm above the middle board); raised where it would look up")  # fmt: skip
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.8-1.0); farther where the scene does not fit")  # fmt: skip
    add("--short", type=float, default=0.0, metavar="D",
        help="a failing demo: let go with the book's centre D metres short of its place, partly over the "
        "board's front edge, so that it tips off")  # fmt: skip
    add_output_options(parser)
    return parser.parse_args(argv)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what the script cannot film.

    Raises:
        ValueError: Naming the option and what it takes.
    """
    if args.short < 0.0:
        raise ValueError(f"--short {args.short:g} is a distance, 0 or more")
    if args.frames < 1 or args.fps <= 0:
        raise ValueError("--frames and --fps are positive")
    if args.camera_height is not None and not 0.05 <= args.camera_height <= 2.0:
        raise ValueError(f"--camera-height {args.camera_height} is outside 0.05-2 m")


def make_layout(args: argparse.Namespace) -> tuple[ShelveLayout, Script]:
    """The seed's scene with a camera that frames the shelf, the book and the hand, and the gripper's script.

    The camera frames the demo let go where it should be and the table where a book let go short falls, so
    that a seed's camera is the same with ``--short`` and without.
    """
    _check_options(args)
    rng = np.random.default_rng([args.seed, 13])
    azimuth = None if args.camera_azimuth is None else float(np.deg2rad(args.camera_azimuth))
    layout = sample_layout(rng, args.short, azimuth, args.camera_height)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    duration = args.frames / args.fps
    script = plan_script(layout, duration)
    framing = plan_script(replace(layout, short=0.0), duration) if layout.short else script
    distance = camera_distance(args, rng, 0.8, 1.0)
    return frame_camera(layout, must_see(layout, framing.sample_points(0.1)), distance), script


def readme(args: argparse.Namespace, layout: ShelveLayout, result: ShelveResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    shelf, book = layout.shelf, layout.book
    boards = ", ".join(f"{h * 100:.1f}" for h in shelf.board_heights)
    shelf_text = (f"a shelf {shelf.width * 100:.1f} cm wide, {shelf.depth * 100:.1f} cm deep and "
                  f"{shelf.height * 100:.1f} cm tall with {len(shelf.board_heights)} boards (tops at {boards} cm)")  # fmt: skip
    book_text = (f"a book-like box {book.length * 100:.1f} x {book.width * 100:.1f} x {book.height * 100:.1f} cm "
                 f"({book.mass * 1000:.0f} g)")  # fmt: skip
    if layout.short:
        story = (f"moves it in but lets go {layout.short * 100:.1f} cm short of its place, partly over the board's "
                 "front edge: the book tips off (a demo that must fail)")  # fmt: skip
    else:
        story = (f"moves it in through the open front, sets it on the middle board {layout.front_gap * 100:.1f} cm "
                 "behind the front edge, lets go")  # fmt: skip
    width, height = args.size
    return (
        f"# Put a book on a shelf (seed {args.seed}{', let go short' if layout.short else ''})\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. {shelf_text.capitalize()} "
        f"stands on a table; {book_text} lies in front of it. A floating parallel-jaw gripper takes the book from "
        f"above, lifts it over the middle board, {story}, and backs out. One fixed camera, {args.frames} frames, "
        f"{width}x{height}, {args.fps:g} fps.\n\n"
        + readme_files_and_command(
            args,
            TOOL,
            "boxes and points on the book and the shelf on frame 0; the task `shelve`",
            "poses, RLE masks, shape parameters, keyframes",
            result.events,
        )
    )


def outcome(args: argparse.Namespace, truth: dict) -> str:
    """The summary line's words on where the book ended (truth.json's data)."""
    check = truth["checks"]["missed_on_purpose" if args.short else "book_on_board"]
    where = (
        "on the board" if not args.short else ("on the table" if check["touches_table"] else "off the board")
    )
    return f"book ends {where}, tilted {check['tilt_deg']:.1f} deg"


TASK = TaskDemo(
    tool=TOOL,
    parse_args=parse_args,
    make_layout=make_layout,
    build_model=build_model,
    describe_objects=describe_objects,
    object_groups={"book": GROUP_BOOK, "shelf": GROUP_SHELF},
    simulate=simulate,
    truth_json=truth_json,
    prompts_json=lambda _layout, objects, masks: prompts_json(objects, masks),
    readme=readme,
    recorded_options=lambda args: {"short_m": args.short},
    outcome=outcome,
)


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    return run_demo(TASK, argv)


if __name__ == "__main__":
    sys.exit(main())
