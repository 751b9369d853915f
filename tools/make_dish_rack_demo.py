#!/usr/bin/env python3
"""Generate a demo folder of a gripper taking a plate out of a plate stand and setting it into a dish rack.

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) comes down on a plate standing on its
edge in a one-slot stand, its fingers on either side of the plate's faces by its top rim, closes, lifts it
straight up out of the stand, carries it over a slot of a four-slot dish rack beside it (turning it about
the vertical to the rack's slots), lowers it into the slot until it stands on the rack's base, lets go,
rises clear and backs away. MuJoCo simulates and renders it, in a model built here with MjSpec (not by the
project's MJCF exporter). The seed draws the plate (its radius, thickness, weight), both racks (their
depth, height, base, pitch, slot width, place and turn), the slot (1 or 2), colours and the camera (30-45
degrees to a side of the racks' front, looking down 25-40 degrees).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in mm),
prompts.json (``plate``, shape ``plate``, ``stand`` and ``dish_rack``, shape ``dish_rack``; task ``shelve``),
optionally trajectory.json and masks/, truth.json (poses and masks of the three objects per frame, their
shape parameters (the plate's on its edge, the racks' as the project's ``dish_rack`` kind), keyframes
``grasp``, ``lift``, ``contact``, ``release``, the gripper per frame, the checks) and a README.md. The
outcome is checked in the simulation: the generator exits with status 1 when the plate does not end
standing upright in its slot (or, with ``--narrow``, when it does), slipped in the hand, was touched by
more than the finger pads, or the hand touched a rack, and 2 for options it cannot film. It writes a new or
empty folder, or one it wrote before (its truth.json says so), through a staging folder beside it: a run
that fails changes nothing there, and files it does not write (a user's notes) stay.

With ``--narrow`` the dish rack's slots are 4 mm narrower than the plate is thick (the rest of the seed's
scene the same): the plate comes down on the dividers' tops, the hand (force-limited) stops there, lets go
and rises; the plate stays on the dividers or tips over, not in the slot.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_dish_rack_demo.py --out /tmp/dish_rack --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_dish_rack_demo.py --out /tmp/dish_rack_narrow --seed 0 --narrow
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
from _dish_rack_layout import NARROW_BY, frame_camera, must_see, narrowed, sample_layout  # noqa: E402
from _dish_rack_model import build_model  # noqa: E402
from _dish_rack_motion import plan_script  # noqa: E402
from _dish_rack_scene import GROUP_PLATE, GROUP_RACK, GROUP_STAND, DishRackLayout  # noqa: E402
from _dish_rack_sim import DishRackResult, simulate  # noqa: E402
from _dish_rack_truth import describe_objects, prompts_json, truth_json  # noqa: E402
from _insert_motion import stopped_short  # noqa: E402
from _task_demo import TaskDemo, camera_distance, readme_files_and_command, run_demo, task_parser  # noqa: E402

TOOL = "tools/make_dish_rack_demo.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = task_parser(
        __doc__.splitlines()[0], "plate, racks, slot, places, colours, camera, noise", 6, owns_folder=True
    )
    add = parser.add_argument
    add("--camera-azimuth", type=float, default=None,
        help="deg from world +x (default: drawn, 30-45 deg to a side of the racks' +x)")  # fmt: skip
    add("--camera-elevation", type=float, default=None, help="deg above the table (default: drawn, 25-40)")
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.55-0.7); farther where the scene does not fit")  # fmt: skip
    add("--narrow", action="store_true",
        help=f"a failing demo: make the dish rack's slots {NARROW_BY * 1000:g} mm narrower than the plate is "
        "thick, so that the plate stops on the dividers")  # fmt: skip
    add_output_options(parser)
    return parser.parse_args(argv)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what the script cannot film.

    Raises:
        ValueError: Naming the option and what it takes.
    """
    if args.frames < 1 or args.fps <= 0:
        raise ValueError("--frames and --fps are positive")
    if args.camera_elevation is not None and not 5.0 <= args.camera_elevation <= 85.0:
        raise ValueError(f"--camera-elevation {args.camera_elevation} is outside 5-85 deg")
    if not 10.0 <= args.fovy <= 120.0:
        raise ValueError(f"--fovy {args.fovy} is outside 10-120 deg")


def make_layout(args: argparse.Namespace) -> tuple[DishRackLayout, Script]:
    """The seed's scene with a camera that frames the racks, the plate and the hand, and the gripper's script.

    A seed draws the same scene and camera with ``--narrow`` and without, but for the dish rack's slots: the
    camera frames the hand going on from a plate blocked on the dividers too.
    """
    _check_options(args)
    rng = np.random.default_rng([args.seed, 19])
    azimuth = None if args.camera_azimuth is None else float(np.deg2rad(args.camera_azimuth))
    elevation = None if args.camera_elevation is None else float(np.deg2rad(args.camera_elevation))
    layout = sample_layout(rng, azimuth, elevation)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    script = plan_script(layout, args.frames / args.fps)
    # The hand over a plate blocked on the dividers goes on higher by up to the dividers' height: framed too.
    blocked = stopped_short(script, layout.rack.height - layout.rack.base_top)
    hand = np.concatenate([script.sample_points(0.1), blocked.sample_points(0.1)])
    distance = camera_distance(args, rng, 0.55, 0.7)
    layout = frame_camera(layout, must_see(layout, hand), distance)
    return (narrowed(layout) if args.narrow else layout), script


def readme(args: argparse.Namespace, layout: DishRackLayout, result: DishRackResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    plate, stand, rack = layout.plate, layout.stand, layout.rack
    plate_text = (f"a plate {plate.radius * 200:.1f} cm across and {plate.thickness * 1000:.1f} mm thick "
                  f"({plate.mass * 1000:.0f} g)")  # fmt: skip
    stand_text = f"a one-slot stand {stand.height * 100:.1f} cm tall"
    rack_text = (f"a dish rack of {rack.slot_count} slots {rack.slot_width * 1000:.1f} mm wide, "
                 f"{rack.pitch * 1000:.1f} mm apart, {rack.height * 100:.1f} cm tall")  # fmt: skip
    if layout.narrow:
        story = (f"lowers it onto slot {layout.slot}, {NARROW_BY * 1000:g} mm narrower than the plate is thick: "
                 "the plate stops on the dividers, the hand stops there and lets go (a demo that must fail)")  # fmt: skip
    else:
        story = f"lowers it into slot {layout.slot} until it stands on the rack's base, lets go"
    width, height = args.size
    return (
        f"# Put a plate into a dish rack (seed {args.seed}{', slots too narrow' if layout.narrow else ''})\n\n"
        "A simulated robot demonstration in the demo-folder form of docs/data-contract.md. "
        f"{plate_text.capitalize()} stands on its edge in {stand_text}; beside it stands {rack_text}. A "
        "floating parallel-jaw gripper takes the plate from above by its top rim, lifts it out of the stand, "
        f"carries it over the rack, {story}, and backs away. One fixed camera, {args.frames} frames, "
        f"{width}x{height}, {args.fps:g} fps.\n\n"
        + readme_files_and_command(
            args,
            TOOL,
            "boxes and points on the plate, the stand and the dish rack on frame 0; the task `shelve`",
            "poses, RLE masks, shape parameters, keyframes, the slot",
            result.events,
        )
    )


def outcome(args: argparse.Namespace, truth: dict) -> str:
    """The summary line's words on where the plate ended (truth.json's data)."""
    check = truth["checks"]["missed_on_purpose" if args.narrow else "plate_in_slot"]
    where = "in" if check["passed"] != args.narrow else "not in"
    return (
        f"plate ends {where} slot {check['slot']}, its lowest point {check['lowest_over_base_m'] * 1000:.1f} mm "
        f"over the base, its axis {check['axis_from_rack_y_deg']:.1f} deg off the rack's y"
    )


TASK = TaskDemo(
    tool=TOOL,
    parse_args=parse_args,
    make_layout=make_layout,
    build_model=build_model,
    describe_objects=describe_objects,
    object_groups={"plate": GROUP_PLATE, "stand": GROUP_STAND, "dish_rack": GROUP_RACK},
    simulate=simulate,
    truth_json=truth_json,
    prompts_json=lambda _layout, objects, masks: prompts_json(objects, masks),
    readme=readme,
    recorded_options=lambda args: {"narrow": bool(args.narrow)},
    outcome=outcome,
)


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    return run_demo(TASK, argv)


if __name__ == "__main__":
    sys.exit(main())
