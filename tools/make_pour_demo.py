#!/usr/bin/env python3
"""Generate a demo folder of a gripper pouring small spheres from a cup into a bowl.

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) comes at a plain cup from the side,
closes its fingers across the cup's body (along the line from the cup to the bowl), lifts it, carries it
to beside the bowl, tips it about its approach axis by 110-125 degrees so that the cup's opening turns to
the bowl, holds while the spheres pour out, tips it back, sets it down where it started, lets go and backs
away. The spheres (glass beads: ``--count`` of ``--radius``) start at rest in the cup. MuJoCo simulates
and renders it, in a model built here with MjSpec (not by the project's MJCF exporter). The seed draws the
cup, the bowl, their places, the grasp's height, the lift, the tilt, colours and the camera (from the side
of the cup-bowl line away from the hand, a little above).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in mm),
prompts.json (``cup`` with its ``contents`` and ``bowl``, task ``pour``), optionally trajectory.json and
masks/, truth.json (poses and masks of both objects per frame, their shape parameters, keyframes
``grasp``, ``lift``, ``pour_start``, ``pour_end``, ``release``, the gripper per frame, the checks and the
spheres' outcome in ``contents``) and a README.md. The outcome is checked in the simulation: the generator
exits with status 1 when less than 90 % of the spheres end in the bowl (or, with ``--miss``, more than
20 % do), the cup slipped in the hand, the hand touched the bowl or the cup does not end upright on the
table, and 2 for options it cannot film.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_pour_demo.py --out /tmp/pour --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_pour_demo.py --out /tmp/pour_miss --seed 0 --miss 0.12
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
from _pour_layout import frame_camera, sample_layout  # noqa: E402
from _pour_model import build_model  # noqa: E402
from _pour_motion import plan_script  # noqa: E402
from _pour_scene import GROUP_BOWL, GROUP_CONTENTS, GROUP_CUP, Contents, PourLayout  # noqa: E402
from _pour_sim import PourResult, simulate  # noqa: E402
from _pour_truth import describe_objects, prompts_json, truth_json  # noqa: E402
from _task_demo import TaskDemo, camera_distance, readme_files_and_command, run_demo, task_parser  # noqa: E402

TOOL = "tools/make_pour_demo.py"
RADIUS_RANGE = (0.002, 0.008)  # m: smaller spheres need a finer time step, larger ones jam in the cup
MAX_MISS = 0.25  # m: farther short, the spill leaves the camera's view of the bowl


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = task_parser(
        __doc__.splitlines()[0],
        "cup, bowl, places, grasp, tilt, colours, camera, noise",
        7,
        owns_folder=False,
    )
    add = parser.add_argument
    add("--camera-azimuth", type=float, default=None,
        help="deg from world +x (default: drawn, square to the cup-bowl line within 30 deg)")  # fmt: skip
    add("--camera-elevation", type=float, default=None, help="deg above the table (default: drawn, 20-35)")
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.55-0.7); farther where the scene does not fit")  # fmt: skip
    add("--count", type=int, default=30, help="spheres in the cup")
    add("--radius", type=float, default=0.004, help="each sphere's radius, m")
    add("--density", type=float, default=2500.0, help="the spheres' density, kg/m^3 (glass beads: 2500)")
    add("--miss", type=float, default=0.0, metavar="M",
        help="a failing demo: pour M metres short of the bowl, so that the spheres fall on the table")  # fmt: skip
    add_output_options(parser)
    return parser.parse_args(argv)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what the script cannot film.

    Raises:
        ValueError: Naming the option and what it takes.
    """
    low, high = RADIUS_RANGE
    if not low <= args.radius <= high:
        raise ValueError(f"--radius {args.radius} is outside {low}-{high} m")
    if args.count < 1:
        raise ValueError("--count is at least 1")
    if not 100.0 <= args.density <= 20000.0:
        raise ValueError(f"--density {args.density} is outside 100-20000 kg/m^3")
    if not 0.0 <= args.miss <= MAX_MISS:
        raise ValueError(f"--miss {args.miss} is outside 0-{MAX_MISS} m")


def make_layout(args: argparse.Namespace) -> tuple[PourLayout, Script]:
    """The seed's scene with a camera that frames the cup, the bowl and the hand, and the gripper's script."""
    _check_options(args)
    rng = np.random.default_rng([args.seed, 11])
    radians = {k: None if v is None else float(np.deg2rad(v))
               for k, v in (("camera_azimuth", args.camera_azimuth), ("camera_elevation", args.camera_elevation))}  # fmt: skip
    contents = Contents(args.count, args.radius, args.density)
    layout = sample_layout(rng, contents, args.miss, **radians)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    script = plan_script(layout, args.frames / args.fps)
    distance = camera_distance(args, rng, 0.55, 0.7)
    return frame_camera(layout, script.sample_points(0.1), distance), script


def readme(args: argparse.Namespace, layout: PourLayout, result: PourResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    cup, bowl, contents = layout.cup, layout.bowl, layout.contents
    cup_text = (f"a plain cup {cup.outer_radius * 200:.1f} cm wide and {cup.height * 100:.1f} cm tall "
                f"({cup.mass * 1000:.0f} g) holding {contents.count} beads {contents.radius * 2000:.1f} mm across")  # fmt: skip
    bowl_text = (f"a bowl {bowl.outer_radius * 200:.1f} cm wide and {bowl.height * 100:.1f} cm tall "
                 f"{layout.distance * 100:.1f} cm away")  # fmt: skip
    landed = int(result.landed.sum())
    if layout.miss:
        story = (f"tips it {np.rad2deg(layout.tilt):.0f} deg {layout.miss * 100:.1f} cm short of the bowl: the beads "
                 f"fall on the table ({landed} of {contents.count} in the bowl; a demo that must fail)")  # fmt: skip
    else:
        story = (f"tips it {np.rad2deg(layout.tilt):.0f} deg over the bowl: {landed} of {contents.count} beads "
                 "end in the bowl")  # fmt: skip
    width, height = args.size
    return (
        f"# Pour beads from a cup into a bowl (seed {args.seed}{', missed' if layout.miss else ''})\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. {cup_text.capitalize()} "
        f"stands on a table beside {bowl_text}. A floating parallel-jaw gripper takes the cup from the side, lifts "
        f"it, {story}, then sets the cup back down, lets go and backs away. One fixed camera, {args.frames} "
        f"frames, {width}x{height}, {args.fps:g} fps.\n\n"
        + readme_files_and_command(
            args,
            TOOL,
            "boxes and points on the cup and the bowl on frame 0, the cup's contents; the task `pour`",
            "poses, RLE masks, shape parameters, keyframes, the beads",
            result.events,
            "the simulation's contacts and the beads",
        )
    )


def outcome(args: argparse.Namespace, truth: dict) -> str:
    """The summary line's words on where the beads ended (truth.json's data)."""
    contents = truth["contents"]
    return (
        f"{contents['landed_in_target']} of {contents['count']} beads in the bowl ({contents['landed_share']:.0%}), "
        f"{contents['left_in_source']} left in the cup"
    )


TASK = TaskDemo(
    tool=TOOL,
    parse_args=parse_args,
    make_layout=make_layout,
    build_model=build_model,
    describe_objects=describe_objects,
    object_groups={"cup": GROUP_CUP, "bowl": GROUP_BOWL},
    simulate=simulate,
    truth_json=truth_json,
    prompts_json=prompts_json,
    readme=readme,
    recorded_options=lambda args: {"miss_m": args.miss},
    outcome=outcome,
    owns_folder=False,
    unmasked_groups=(GROUP_CONTENTS,),
)


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    return run_demo(TASK, argv)


if __name__ == "__main__":
    sys.exit(main())
