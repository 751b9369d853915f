#!/usr/bin/env python3
"""Generate a demo folder of a mug hung by its handle on a mug tree's peg, or a hook board's on a wall.

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) picks a mug off the table by its
handle (one finger inside the mug against the wall behind the handle, the other on the handle's outer
bar), carries it to one of the 2 or 3 pegs of a mug tree fixed to the table, turned so that the peg runs
through the handle's loop, threads the handle on the peg towards the post, seats the handle's upper arm on
the peg, tips the mug about the peg until it hangs as it will (its handle up, its body under the peg),
lets go, draws its fingers out of the mug and backs away; the mug hangs from the peg, clear of the table,
the tree's base and its post. MuJoCo simulates and renders it, in a model built here with MjSpec (not
by the project's MJCF exporter). The seed draws the tree (base, post, pegs' heights, azimuths, length,
elevation), the mug (radius, height, wall, handle), the peg, colours and the camera (from the side and a
little above, so that the pegs show against the wall behind).

With ``--wall`` the rack is a hook board screwed to a wall that stands on the table along one of its edges:
a plate (its back on the wall) with 1-3 pegs in a row out of its front face, rising a little, the mug
threaded on an end peg towards the plate and left hanging at least a centimetre clear of the plate and the
wall (the project's simulation has no wall: the mug must not lean on it). The seed draws the plate (width,
height, thickness, how high it hangs, where along the wall), the pegs (offsets, heights, azimuths, length,
elevation) and the wall's paint, and the camera looks from the room, 10-40 degrees off the wall's normal.
truth.json's rack has the wall form's parameters (``plate_width``, ``plate_thickness``, ``post_height``, each
peg's ``peg{i}_offset``; module doc of ``_hang_scene``).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in
mm), prompts.json (``mug`` and ``rack``, task ``hang``), optionally trajectory.json and masks/, truth.json
(poses and masks of both objects per frame, their shape parameters, keyframes ``grasp``, ``lift``,
``release``, ``hang``, the gripper per frame) and a README.md. The outcome is checked in the simulation:
the generator exits with status 1 when the mug does not end hanging still on the peg (or, with
``--miss``, when it does), or the hand touched the rack (or the wall), or a hook board's mug came within
1 cm of the plate or the wall, and 2 for options it cannot film.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py --out /tmp/hang --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py --out /tmp/hang_miss --seed 0 --miss 0.04
    MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py --out /tmp/hang_wall --seed 0 --wall
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
from _hang_layout import place_camera, sample_layout, sample_wall_layout  # noqa: E402
from _hang_model import build_model  # noqa: E402
from _hang_motion import mug_on_peg, plan_script, thread_span  # noqa: E402
from _hang_scene import GROUP_MUG, GROUP_RACK, HangLayout  # noqa: E402
from _hang_sim import HangResult, simulate  # noqa: E402
from _hang_truth import describe_objects, prompts_json, truth_json  # noqa: E402
from _task_demo import TaskDemo, camera_distance, readme_files_and_command, run_demo, task_parser  # noqa: E402

TOOL = "tools/make_hang_demo.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = task_parser(
        __doc__.splitlines()[0], "tree or hook board, mug, peg, colours, camera, noise", 7, owns_folder=False
    )
    add = parser.add_argument
    add("--wall", action="store_true", help="hang the mug on a hook board screwed to a wall, not a mug tree")
    add("--camera-azimuth", type=float, default=None,
        help="deg from world +x (default: drawn beside the peg, or 10-40 deg off the wall's normal)")  # fmt: skip
    add("--camera-elevation", type=float, default=None, help="deg above the table (default: drawn, 15-35)")
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.7-1.0); farther where the scene does not fit")  # fmt: skip
    add("--peg-count", type=int, choices=(1, 2, 3), default=None,
        help="pegs on the tree (2 or 3) or the hook board (1 to 3) (default: drawn)")  # fmt: skip
    add("--peg-length", type=float, default=None,
        help="m from the post's axis (the plate's face) to a peg's tip (default: drawn)")  # fmt: skip
    add("--miss", type=float, default=0.0, metavar="M",
        help="a failing demo: let go with the handle M metres short of the peg's tip, so the mug falls")  # fmt: skip
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.miss < 0:
        parser.error("--miss is a distance, 0 or more")
    if args.peg_count == 1 and not args.wall:
        parser.error("a mug tree has 2 or 3 pegs (--peg-count 1 needs --wall)")
    return args


def make_layout(args: argparse.Namespace) -> tuple[HangLayout, Script]:
    """The seed's scene with a camera that frames the rack, the mug and the hand, and the gripper's script."""
    rng = np.random.default_rng([args.seed, 7])
    radians = {k: None if v is None else float(np.deg2rad(v))
               for k, v in (("camera_azimuth", args.camera_azimuth), ("camera_elevation", args.camera_elevation))}  # fmt: skip
    sample = sample_wall_layout if args.wall else sample_layout
    layout = sample(rng, args.peg_count, args.peg_length, args.miss, **radians)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    script = plan_script(layout, args.frames / args.fps)
    low, high = layout.rack.bounds()
    corners = np.array(np.meshgrid(*zip(low, high, strict=True))).reshape(3, -1).T
    mug = layout.mug
    hung, _ = mug_on_peg(layout, thread_span(layout)[1])
    points = [
        layout.rack.to_world(corners),
        np.array([[*mug.xy, 0.0], [*mug.xy, mug.height], hung, hung + [0, 0, mug.height], [*hung[:2], 0.0]]),
        np.array([script.pose_at(t)[0] for t in np.arange(0.0, args.frames / args.fps, 0.1)]),
    ]
    distance = camera_distance(args, rng, 0.7, 1.0)
    return place_camera(layout, np.concatenate(points), distance), script


def _describe_rack(layout: HangLayout) -> tuple[str, str, str]:
    """README.md's words on the rack: what it is, how it stands, what the mug is threaded towards."""
    rack = layout.rack
    elevation = f"rising {np.rad2deg(rack.peg_elevation):.0f} deg"
    if rack.on_wall:
        pegs = ", ".join(
            f"{o * 100:+.1f} cm along at {h * 100:.1f} cm, turned {np.rad2deg(a):.0f} deg"
            for o, h, a in zip(rack.peg_offsets, rack.peg_heights, rack.peg_azimuths, strict=True)
        )
        board = (f"a hook board ({rack.plate_width * 100:.1f} x {rack.post_height * 100:.1f} cm plate, "
                 f"{rack.plate_thickness * 1000:.0f} mm thick, its bottom edge {rack.foot[2] * 100:.1f} cm above "
                 f"the table; {len(rack.peg_heights)} peg{'s' if len(rack.peg_heights) > 1 else ''} "
                 f"{rack.peg_length * 100:.1f} cm long {elevation}: {pegs})")  # fmt: skip
        return (
            board,
            "is screwed to a wall standing on the table's edge; on the table in front of it stands",
            "the plate",
        )
    pegs = ", ".join(
        f"{h * 100:.1f} cm at {np.rad2deg(a) % 360:.0f} deg"
        for h, a in zip(rack.peg_heights, rack.peg_azimuths, strict=True)
    )
    tree = (f"a mug tree ({rack.post_height * 100:.1f} cm post on a {rack.base_radius * 200:.1f} cm base; "
            f"{len(rack.peg_heights)} pegs {rack.peg_length * 100:.1f} cm long {elevation}: "
            f"{pegs})")  # fmt: skip
    return tree, "stands on a table beside", "the post"


def readme(args: argparse.Namespace, layout: HangLayout, result: HangResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    mug = layout.mug
    rack, stands, root = _describe_rack(layout)
    cup = (f"a mug {mug.outer_radius * 200:.1f} cm wide and {mug.height * 100:.1f} cm tall with a C-shaped handle "
           f"({mug.mass * 1000:.0f} g)")  # fmt: skip
    if layout.miss:
        story = (f"carries it towards peg {layout.peg} but lets go with the handle {layout.miss * 100:.1f} cm short of "
                 "the peg's tip: the mug falls (a demo that must fail)")  # fmt: skip
    else:
        story = (f"threads its handle on peg {layout.peg} towards {root}, seats the handle's upper arm on the peg, "
                 "tips the mug about the peg until it hangs as it will, lets go and backs away; the mug hangs from "
                 "the peg")  # fmt: skip
        if layout.rack.on_wall:
            story += ", clear of the plate and the wall"
    width, height = args.size
    title = "a hook board on a wall" if layout.rack.on_wall else "a mug tree"
    return (
        f"# Hang a mug on {title} (seed {args.seed}{', missed' if layout.miss else ''})\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. {rack.capitalize()} "
        f"{stands} {cup}. A floating parallel-jaw gripper picks the mug up by its handle, "
        f"{story}. One fixed camera, {args.frames} frames, {width}x{height}, {args.fps:g} fps.\n\n"
        + readme_files_and_command(
            args,
            TOOL,
            "boxes and points on the mug and the rack on frame 0; the task `hang`",
            "poses, RLE masks, shape parameters, keyframes",
            result.events,
        )
    )


def outcome(args: argparse.Namespace, truth: dict) -> str:
    """The summary line's words on where the mug ended (truth.json's data)."""
    check = truth["checks"]["missed_on_purpose" if args.miss else "mug_hangs"]
    return (
        f"mug ends {max(check['lowest_above_table_m'], 0.0) * 100:.1f} cm above the table touching pegs "
        f"{check['pegs_touched']}"
    )


TASK = TaskDemo(
    tool=TOOL,
    parse_args=parse_args,
    make_layout=make_layout,
    build_model=build_model,
    describe_objects=describe_objects,
    object_groups={"mug": GROUP_MUG, "rack": GROUP_RACK},
    simulate=simulate,
    truth_json=truth_json,
    prompts_json=lambda _layout, objects, masks: prompts_json(objects, masks),
    readme=readme,
    recorded_options=lambda args: {"miss_m": args.miss} | ({"wall": True} if args.wall else {}),
    outcome=outcome,
    owns_folder=False,
)


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    return run_demo(TASK, argv)


if __name__ == "__main__":
    sys.exit(main())
