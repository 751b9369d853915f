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
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _articulated_motion import Script  # noqa: E402
from _demo_film import DemoFilm, add_output_options, files_table, image_size, write_folder  # noqa: E402
from _demo_output import check_owned, staged_output  # noqa: E402
from _shelve_layout import frame_camera, must_see, sample_layout  # noqa: E402
from _shelve_model import build_model  # noqa: E402
from _shelve_motion import plan_script  # noqa: E402
from _shelve_scene import GROUP_BOOK, GROUP_SHELF, ShelveLayout  # noqa: E402
from _shelve_sim import ShelveResult, simulate  # noqa: E402
from _shelve_truth import describe_objects, prompts_json, truth_json  # noqa: E402

GENERATED = ("video.mp4", "frames", "depth", "masks", "camera.json", "prompts.json", "trajectory.json", "truth.json",
             "README.md")  # fmt: skip
TOOL = "tools/make_shelve_demo.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="demo folder to write (new, empty, or one this tool wrote)")
    add("--seed", type=int, default=0, help="random seed (shelf, book, places, colours, camera, noise)")
    add("--frames", type=int, default=240, help="number of video frames (the script needs 6 s)")
    add("--fps", type=float, default=30.0)
    add("--size", type=image_size, default=(320, 240), metavar="WxH", help="image size in pixels")
    add("--fovy", type=float, default=45.0, help="vertical field of view, deg")
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
    distance = args.camera_distance if args.camera_distance is not None else rng.uniform(0.8, 1.0)
    return frame_camera(layout, must_see(layout, framing.sample_points(0.1)), distance), script


def generate(args: argparse.Namespace, staging: Path) -> dict:
    """Simulate, render and write the demo into ``staging``; return truth.json's data.

    Raises:
        RuntimeError: If the simulated demo did not go as the script meant (see ``_shelve_sim``'s checks).
        ValueError: If the options describe a scene the script cannot film.
    """
    layout, script = make_layout(args)
    position, quat, _ = script.pose_at(0.0)
    model = build_model(layout, position, quat, np.random.default_rng([args.seed, 2]))
    objects = describe_objects(layout)
    for spec in objects:
        spec.mass = float(model.body(spec.body).mass[0])
    noise = np.random.default_rng([args.seed, 1])
    film = DemoFilm(staging, model, layout, objects, args, noise, {"book": GROUP_BOOK, "shelf": GROUP_SHELF})
    try:
        result = simulate(model, layout, script, args.frames, args.fps, film.on_frame)
    finally:
        film.close()
    if result.failures:
        raise RuntimeError("; ".join(result.failures))
    film.check_video(args.frames)

    generator = {"tool": TOOL, "seed": args.seed, "argv": sys.argv[1:],
                 "renderer": "MuJoCo (OpenGL)", "short_m": args.short}  # fmt: skip
    truth = truth_json(layout, film.intr, args.fps, objects, result, generator)
    write_folder(staging, args, film, layout, prompts_json(objects, film.first_masks), truth)
    (staging / "README.md").write_text(readme(args, layout, result))
    return truth


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
    keys = ", ".join(f"{e['event']} {e['frame']}" for e in result.events)
    table = files_table(
        args,
        "boxes and points on the book and the shelf on frame 0; the task `shelve`",
        "poses, RLE masks, shape parameters, keyframes",
    )
    width, height = args.size
    command = " ".join(["MUJOCO_GL=egl .venv/bin/python tools/make_shelve_demo.py", *sys.argv[1:]])
    return (
        f"# Put a book on a shelf (seed {args.seed}{', let go short' if layout.short else ''})\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. {shelf_text.capitalize()} "
        f"stands on a table; {book_text} lies in front of it. A floating parallel-jaw gripper takes the book from "
        f"above, lifts it over the middle board, {story}, and backs out. One fixed camera, {args.frames} frames, "
        f"{width}x{height}, {args.fps:g} fps.\n\n"
        f"{table}\n\nKeyframes (from the simulation's contacts): {keys}.\n\n"
        f"Generated by tools/make_shelve_demo.py, which checks the outcome in the simulation:\n\n"
        f"```sh\n{command}\n```\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    args = parse_args(argv)
    started = time.monotonic()
    out = args.out.resolve()
    try:
        check_owned(out, TOOL)
        with staged_output(out, GENERATED) as staging:
            truth = generate(args, staging)
    except ValueError as error:
        print(f"make_shelve_demo: bad options: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"make_shelve_demo: failed: {error}", file=sys.stderr)
        return 1
    keys = ", ".join(f"{k['event']} {k['frame']}" for k in truth["keyframes"])
    check = truth["checks"]["missed_on_purpose" if args.short else "book_on_board"]
    where = (
        "on the board" if not args.short else ("on the table" if check["touches_table"] else "off the board")
    )
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"make_shelve_demo: wrote {out}")
    print(
        f"make_shelve_demo: seed {args.seed}, {args.frames} frames {args.size[0]}x{args.size[1]} @ {args.fps:g} fps; "
        f"{keys}; book ends {where}, tilted {check['tilt_deg']:.1f} deg; {size / 1e6:.2f} MB; "
        f"{time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
