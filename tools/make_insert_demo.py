#!/usr/bin/env python3
"""Generate a demo folder of a gripper inserting a round peg into the round hole of a holder (a socket).

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) comes down on a peg (a plug, a
dowel) standing on the table beside a socket, closes its fingers across the peg near its top, lifts it,
carries it over the hole, lowers it straight down into the hole until it rests on the hole's bottom, lets
go and rises away. MuJoCo simulates and renders it, in a model built here with MjSpec (not by the project's
MJCF exporter); the socket collides as the project's ``cup`` kind does. The seed draws the socket (its
radius, height, the hole's depth, its weight and place), the peg (radius, length, weight, where it stands),
the fit (a clearance of 2.5-4 mm), colours and the camera (across the carry, a little above).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in mm),
prompts.json (``peg``, shape ``cylinder``, and ``socket``, shape ``cup``; task ``insert``), optionally
trajectory.json and masks/, truth.json (poses and masks of both objects per frame, their shape parameters
(the socket's as the project's ``cup`` kind), keyframes ``grasp``, ``lift``, ``contact``, ``release``, the
gripper per frame, the checks, with the inserted and the intended depth) and a README.md. The outcome is
checked in the simulation: the generator exits with status 1 when the peg does not end upright in the hole
at the depth meant (or, with ``--narrow``, when it does), slipped in the hand, was touched by more than the
finger pads, the hand touched the socket or the socket moved, and 2 for options it cannot film. It writes a
new or empty folder, or one it wrote before (its truth.json says so), through a staging folder beside it:
a run that fails changes nothing there, and files it does not write (a user's notes) stay.

With ``--narrow D`` the hole is D narrower than the peg's radius: the peg comes down on the hole's rim, the
hand stops its descent there (it is force-limited: it stops when the peg is blocked), lets go and rises;
the peg stays on the rim.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_insert_demo.py --out /tmp/insert --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_insert_demo.py --out /tmp/insert_narrow --seed 0 --narrow 0.004
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
from _insert_layout import frame_camera, must_see, sample_layout  # noqa: E402
from _insert_model import build_model  # noqa: E402
from _insert_motion import plan_script, stopped_short  # noqa: E402
from _insert_scene import GROUP_PEG, GROUP_SOCKET, InsertLayout  # noqa: E402
from _insert_sim import InsertResult, simulate  # noqa: E402
from _insert_truth import describe_objects, prompts_json, truth_json  # noqa: E402
from _task_demo import TaskDemo, camera_distance, readme_files_and_command, run_demo, task_parser  # noqa: E402

TOOL = "tools/make_insert_demo.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = task_parser(
        __doc__.splitlines()[0], "socket, peg, fit, places, colours, camera, noise", 6, owns_folder=True
    )
    add = parser.add_argument
    add("--camera-azimuth", type=float, default=None,
        help="deg from world +x (default: drawn, 60-120 deg from the carry's direction)")  # fmt: skip
    add("--camera-elevation", type=float, default=None, help="deg above the table (default: drawn, 20-35)")
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.45-0.6); farther where the scene does not "
        "fit")  # fmt: skip
    add("--narrow", type=float, default=0.0, metavar="D",
        help="a failing demo: make the hole D metres narrower than the peg's radius, so that the peg stops "
        "on its rim")  # fmt: skip
    add_output_options(parser)
    return parser.parse_args(argv)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what the script cannot film.

    Raises:
        ValueError: Naming the option and what it takes.
    """
    if args.narrow < 0.0:
        raise ValueError(f"--narrow {args.narrow:g} is a distance, 0 or more")
    if args.frames < 1 or args.fps <= 0:
        raise ValueError("--frames and --fps are positive")
    if args.camera_elevation is not None and not 5.0 <= args.camera_elevation <= 85.0:
        raise ValueError(f"--camera-elevation {args.camera_elevation} is outside 5-85 deg")


def make_layout(args: argparse.Namespace) -> tuple[InsertLayout, Script]:
    """The seed's scene with a camera that frames the socket, the peg and the hand, and the gripper's script.

    A seed draws the same scene and camera with ``--narrow`` and without, but for the hole's radius: the
    camera frames the hand going on from a peg blocked on the rim too.
    """
    _check_options(args)
    rng = np.random.default_rng([args.seed, 17])
    azimuth = None if args.camera_azimuth is None else float(np.deg2rad(args.camera_azimuth))
    elevation = None if args.camera_elevation is None else float(np.deg2rad(args.camera_elevation))
    layout = sample_layout(rng, args.narrow, azimuth, elevation)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    script = plan_script(layout, args.frames / args.fps)
    # The hand over a peg blocked on the rim goes on higher by up to the hole's depth: framed too.
    blocked = stopped_short(script, layout.intended_depth)
    hand = np.concatenate([script.sample_points(0.1), blocked.sample_points(0.1)])
    distance = camera_distance(args, rng, 0.45, 0.6)
    return frame_camera(layout, must_see(layout, hand), distance), script


def readme(args: argparse.Namespace, layout: InsertLayout, result: InsertResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    socket, peg = layout.socket, layout.peg
    socket_text = (f"a round holder {socket.outer_radius * 200:.1f} cm wide and {socket.height * 100:.1f} "
                   f"cm tall ({socket.mass * 1000:.0f} g) with a hole {socket.inner_radius * 2000:.1f} mm "
                   f"wide and {socket.hole_depth * 100:.1f} cm deep")  # fmt: skip
    peg_text = (f"a peg {peg.radius * 2000:.1f} mm thick and {peg.length * 100:.1f} cm long "
                f"({peg.mass * 1000:.0f} g)")  # fmt: skip
    if layout.narrow:
        story = (f"lowers it onto the hole, {layout.narrow * 1000:.1f} mm narrower than the peg's radius: "
                 "the peg stops on the rim, the hand stops there and lets go (a demo that must "
                 "fail)")  # fmt: skip
    else:
        clearance = (socket.inner_radius - peg.radius) * 1000
        story = (f"lowers it straight down into the hole ({clearance:.1f} mm of clearance) until it rests on "
                 f"the hole's bottom, {layout.intended_depth * 100:.1f} cm in, lets go")  # fmt: skip
    width, height = args.size
    return (
        f"# Insert a peg into a socket (seed {args.seed}{', too narrow' if layout.narrow else ''})\n\n"
        "A simulated robot demonstration in the demo-folder form of docs/data-contract.md. "
        f"{socket_text.capitalize()} stands on a table; {peg_text} stands beside it. A floating "
        "parallel-jaw gripper takes the peg from above near its top, lifts it, carries it over the hole, "
        f"{story}, and rises away. One fixed camera, {args.frames} frames, {width}x{height}, "
        f"{args.fps:g} fps.\n\n"
        + readme_files_and_command(
            args,
            TOOL,
            "boxes and points on the peg and the socket on frame 0; the task `insert`",
            "poses, RLE masks, shape parameters, keyframes, the inserted depth",
            result.events,
        )
    )


def outcome(args: argparse.Namespace, truth: dict) -> str:
    """The summary line's words on where the peg ended (truth.json's data)."""
    check = truth["checks"]["blocked_on_purpose" if args.narrow else "peg_inserted"]
    return (
        f"peg's bottom ends {check['inserted_depth_m'] * 1000:.1f} mm under the socket's top (meant "
        f"{check['intended_depth_m'] * 1000:.1f}), {check['off_axis_m'] * 1000:.1f} mm off its axis, tilted "
        f"{check['tilt_deg']:.1f} deg"
    )


TASK = TaskDemo(
    tool=TOOL,
    parse_args=parse_args,
    make_layout=make_layout,
    build_model=build_model,
    describe_objects=describe_objects,
    object_groups={"peg": GROUP_PEG, "socket": GROUP_SOCKET},
    simulate=simulate,
    truth_json=truth_json,
    prompts_json=lambda _layout, objects, masks: prompts_json(objects, masks),
    readme=readme,
    recorded_options=lambda args: {"narrow_m": args.narrow},
    outcome=outcome,
)


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    return run_demo(TASK, argv)


if __name__ == "__main__":
    sys.exit(main())
