#!/usr/bin/env python3
"""Generate a demo folder of an articulated object: a microwave, a cabinet or a chest of drawers.

A floating parallel-jaw gripper (tools/_demo_gripper.py) works on a body fixed to the table and its
jointed part, in a MuJoCo model built here with MjSpec (not by the project's MJCF exporter):

- ``microwave``: a microwave-like box whose door, hinged on a vertical edge (left or right by
  seed), starts open by 80-110 degrees; the gripper picks a cup off the table, sets it inside
  through the opening, lets go, backs out, and pushes the door shut along its arc with the outer
  faces of its closed fingers. Task ``steps``: ``place_in`` the cup, then ``close`` the door.
- ``cabinet``: a cabinet whose door has a vertical bar handle; the gripper grasps the handle and
  swings the door open by about 90 degrees along its arc, lets go and backs off. Task ``open``.
- ``drawer``: a chest whose upper drawer has a level bar handle; the gripper grasps it, pulls the
  drawer out 13-19 cm, lets go. Task ``open``.

The seed draws sizes, the hinge side, colours, the joint's damping and friction and the camera
(placed to frame everything the script does). The folder follows docs/data-contract.md: video.mp4
or frames/, camera.json, depth/ (not with ``--rgb-only``, which gives the body's known size in
prompts.json instead), prompts.json with the body's ``parts``, optionally trajectory.json and
masks/ (the true masks as masks made elsewhere), truth.json (poses and masks of the body, the part
as ``<body>.<part>`` and the cup, the joint per frame under ``joints``, keyframes) and a README.md.
The outcome is checked in the simulation; the generator exits with status 1 when the door did not
end closed (within 2 degrees) or open, the cup did not end inside, or the hand hit the body, and 2
for options it cannot film.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_articulated_demo.py --scene microwave --out /tmp/mw --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_articulated_demo.py --scene drawer --seed 3 --out /tmp/dr --rgb-only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _articulated_model import build_model  # noqa: E402
from _articulated_motion import Script, plan_script  # noqa: E402
from _articulated_scene import (  # noqa: E402
    GROUP_BODY,
    GROUP_CUP,
    GROUP_PART,
    SCENES,
    ArticulatedLayout,
    place_camera,
    sample_layout,
)
from _articulated_sim import ArticulatedResult, simulate  # noqa: E402
from _articulated_truth import describe_objects, part_prompt, prompts_json, task_json, truth_json  # noqa: E402
from _demo_output import staged_output  # noqa: E402
from _demo_render import DemoRenderer, Intrinsics  # noqa: E402
from _demo_sensor import noisy_rgb, sensor_depth  # noqa: E402
from _demo_truth import camera_json, pose_entries, trajectory_json, truth_frame, world_from_camera  # noqa: E402

from real2gym_addon.truth import decode_rle, load_truth, write_given_masks  # noqa: E402

GENERATED = ("video.mp4", "frames", "depth", "masks", "camera.json", "prompts.json", "trajectory.json", "truth.json",
             "README.md")  # fmt: skip
DEFAULT_FPS = {"microwave": 20.0, "cabinet": 30.0, "drawer": 30.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="demo folder to write")
    add("--scene", choices=tuple(SCENES), default="microwave")
    add("--seed", type=int, default=0, help="random seed (sizes, hinge side, colours, camera, noise)")
    add("--frames", type=int, default=150, help="number of video frames")
    add("--fps", type=float, default=None, help="frame rate (default: 20 for the microwave, else 30)")
    add("--width", type=int, default=320)
    add("--height", type=int, default=240)
    add("--fovy", type=float, default=45.0, help="vertical field of view, deg")
    add(
        "--let-go",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="microwave: push the door quickly and let go with this share of its swing to go (it coasts shut)",
    )
    add("--rgb-only", action="store_true", help="no depth/; the body's known size in prompts.json")
    add("--with-trajectory", action="store_true", help="write trajectory.json (the gripper, camera frame)")
    add("--with-world-from-camera", action="store_true", help="camera pose in camera.json")
    add("--given-masks", action="store_true", help="write the true masks as masks/<name>/000000.png ...")
    add("--frames-dir", action="store_true", help="write frames/*.png, not video.mp4")
    add(
        "--renderer",
        choices=("mujoco", "cycles"),
        default="mujoco",
        help="film with MuJoCo's renderer, or with Blender's Cycles (the bpy module) in the seed's own looks",
    )
    add("--samples", type=int, default=4, help="Cycles samples per pixel (denoised)")
    add("--verbose", action="store_true", help="show Blender's render log")
    args = parser.parse_args(argv)
    if args.fps is None:
        args.fps = DEFAULT_FPS[args.scene]
    return args


def make_layout(args: argparse.Namespace) -> tuple[ArticulatedLayout, Script]:
    """The seed's scene with a camera that frames it and everything the script does, and the script."""
    rng = np.random.default_rng([args.seed, list(SCENES).index(args.scene)])
    layout = sample_layout(args.scene, rng)
    layout = replace(layout, fovy=args.fovy, width=args.width, height=args.height)
    script = plan_script(layout, args.frames / args.fps, args.let_go)
    points = [layout.to_world(_box_corners(np.r_[0, 0, layout.size[2] / 2], layout.size))]
    low, high = sorted((layout.q_start, layout.q_goal))
    for q in np.linspace(low, high, 7):
        rot, origin = layout.part_in_body(q)
        points.append(layout.to_world(_box_corners(layout.part_centre, layout.part_size) @ rot.T + origin))
    if layout.cup is not None:
        points.append(np.array([[*layout.cup.xy, 0.0], [*layout.cup.xy, layout.cup.height]]))
    points.append(script.sample_points())
    # Seen from the front, turned toward the side where the part's motion is seen best: the microwave
    # from the side away from its hinge (to see into it past the open door), the cabinet from the
    # hinge's side (the handle and the hand stay in view), the chest from either.
    side = {"microwave": -layout.hinge_side, "cabinet": layout.hinge_side}.get(
        args.scene, rng.choice([-1, 1])
    )
    front = layout.yaw + np.pi / 2
    azimuth = front - side * np.deg2rad(rng.uniform(25, 40))
    elevation = np.deg2rad(rng.uniform(38, 48) if args.scene == "drawer" else rng.uniform(30, 42))
    layout = place_camera(layout, np.concatenate(points), azimuth, elevation)
    return layout, script


def _box_corners(centre: np.ndarray, size: np.ndarray) -> np.ndarray:
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    return np.asarray(centre) + signs * np.asarray(size) / 2


def _count_video_frames(path: Path) -> int:
    capture = cv2.VideoCapture(str(path))
    count = 0
    while capture.read()[0]:
        count += 1
    capture.release()
    return count


def generate(args: argparse.Namespace, staging: Path) -> dict:
    """Simulate, render and write the demo into ``staging``; return truth.json's data.

    Raises:
        RuntimeError: If the simulated demo did not go as the script meant (see the checks).
        ValueError: If the options describe a scene the script cannot film.
    """
    layout, script = make_layout(args)
    if args.renderer == "cycles":
        from _articulated_cycles import CyclesFilm, draw_looks
        from _varied_blender import quiet_stdout
        from _varied_truth import phone_frame
    position, quat, _ = script.pose_at(0.0)
    model = build_model(layout, position, quat, np.random.default_rng([args.seed, 2]))
    objects = describe_objects(layout)
    for spec in objects:
        spec.mass = float(model.body(spec.body).mass[0])  # the body's own: its part is an object of its own
    groups = {layout.body_name: GROUP_BODY, layout.part_label: GROUP_PART}
    if layout.cup is not None:
        groups["cup"] = GROUP_CUP
    intr = Intrinsics.from_fovy(args.width, args.height, args.fovy)
    noise = np.random.default_rng([args.seed, 1])
    w_from_c = world_from_camera(layout)
    first_masks: dict[str, np.ndarray] = {}
    if args.frames_dir:
        (staging / "frames").mkdir()
        writer = None
    else:
        writer = cv2.VideoWriter(str(staging / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), args.fps,
                                 (args.width, args.height))  # fmt: skip
        if not writer.isOpened():
            raise RuntimeError("OpenCV cannot write mp4v video here; use --frames-dir")
    if not args.rgb_only:
        (staging / "depth").mkdir()

    cycles = args.renderer == "cycles"
    if cycles:
        looks = draw_looks(
            np.random.default_rng([args.seed, list(SCENES).index(args.scene), 5]), layout, args.frames
        )
    states: list[tuple[np.ndarray, np.ndarray]] = []
    poses: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    renderer = None if cycles else DemoRenderer(model, args.width, args.height, groups)

    def write_frame(index: int, images, pose: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        if cycles:
            bgr = phone_frame(cv2.cvtColor(images.rgb, cv2.COLOR_RGB2BGR), looks.noise_sigma,
                              int(looks.jpeg_quality[index]), noise)  # fmt: skip
        else:
            bgr = cv2.cvtColor(noisy_rgb(images.rgb, noise), cv2.COLOR_RGB2BGR)
        if writer is None:
            cv2.imwrite(str(staging / "frames" / f"{index:06d}.png"), bgr)
        else:
            writer.write(bgr)
        if not args.rgb_only:
            depth = sensor_depth(images.depth, intr.fx, noise)
            cv2.imwrite(str(staging / "depth" / f"{index:06d}.png"), depth, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        for spec in objects:
            entries = pose_entries(w_from_c, *pose[spec.body], spec.centre)
            mask = images.masks[spec.name]
            spec.frames.append(truth_frame(index, spec, entries, mask, images.alone_pixels[spec.name]))
            if index == 0:
                first_masks[spec.name] = mask

    def on_frame(index: int, data) -> None:
        pose = {
            spec.body: (data.body(spec.body).xpos.copy(), data.body(spec.body).xquat.copy())
            for spec in objects
        }
        if cycles:
            states.append((data.geom_xpos.copy(), data.geom_xmat.copy()))
            poses.append(pose)
        else:
            write_frame(index, renderer.render(data), pose)

    try:
        result = simulate(model, layout, script, args.frames, args.fps, on_frame)
        if cycles and not result.failures:
            names = {group: name for name, group in groups.items()}
            with (
                tempfile.TemporaryDirectory(prefix="articulated-cycles-") as work,
                quiet_stdout(args.verbose),
            ):
                filmed = CyclesFilm(model, layout, looks, args.samples).film(states, Path(work), names)
            for index, images in enumerate(filmed):
                write_frame(index, images, poses[index])
    finally:
        if renderer is not None:
            renderer.close()
        if writer is not None:
            writer.release()
    if result.failures:
        raise RuntimeError("; ".join(result.failures))
    if writer is not None and (count := _count_video_frames(staging / "video.mp4")) != args.frames:
        raise RuntimeError(f"video.mp4 reads back {count} frames, expected {args.frames}")

    part_spec = next(o for o in objects if o.role == "part")
    touched = [e["frame"] for e in result.events if e.get("part") and e["event"] in ("grasp", "push")]
    part = part_prompt(layout, [decode_rle(f["mask"]) for f in part_spec.frames], intr, result.q, touched[0])
    generator = {
        "tool": "tools/make_articulated_demo.py",
        "scene": args.scene,
        "seed": args.seed,
        "argv": sys.argv[1:],
        "renderer": "Blender Cycles (CPU)" if args.renderer == "cycles" else "MuJoCo (OpenGL)",
    }
    if args.renderer == "cycles":
        generator |= {"samples": args.samples, "finish": looks.finish, "table": looks.table["kind"],
                      "noise_sigma": round(looks.noise_sigma, 2), "jpeg_quality": [int(q) for q in looks.jpeg_quality]}  # fmt: skip
    truth = truth_json(layout, intr, args.fps, objects, result, generator)
    files = {
        "camera.json": camera_json(intr, layout, args.with_world_from_camera)
        | ({"fps": args.fps} if args.frames_dir else {}),
        "prompts.json": prompts_json(layout, objects, first_masks, part, task_json(layout), args.rgb_only),
        "truth.json": truth,
    }
    if args.with_trajectory:
        files["trajectory.json"] = trajectory_json(truth["gripper"]["frames"])
    for name, content in files.items():
        (staging / name).write_text(json.dumps(content, indent=None if name == "truth.json" else 2) + "\n")
    if args.given_masks:
        write_given_masks(load_truth(staging), staging, [o.name for o in objects])
    (staging / "README.md").write_text(readme(args, layout, result))
    return truth


def readme(args: argparse.Namespace, layout: ArticulatedLayout, result: ArticulatedResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    w, d, h = (round(v * 100, 1) for v in layout.size)
    if layout.joint_type == "hinge":
        side = "left" if layout.hinge_side > 0 else "right"
        joint = (f"a door hinged on its {side} edge (seen from the front; the body frame's +x is on the left); it starts at "
                 f"{np.rad2deg(result.q[0]):.0f} deg and ends at {np.rad2deg(result.q[-1]):.1f} deg")  # fmt: skip
    else:
        joint = f"a drawer that slides out; it ends {result.q[-1] * 100:.1f} cm out"
    story = {
        "microwave": "picks the cup off the table, sets it inside, lets go, backs out and pushes the door shut "
        "with the outer faces of its closed fingers",
        "cabinet": "grasps the door's bar handle, swings the door open along its arc and lets go",
        "drawer": "grasps the drawer's bar handle, pulls the drawer out and lets go",
    }[args.scene]
    keys = ", ".join(
        f"{e['event']} {e['frame']}" + (f" ({e['part']})" if e.get("part") else "") for e in result.events
    )
    files = [
        ("video.mp4" if not args.frames_dir else "frames/", "colour video with sensor noise"),
        (
            "camera.json",
            "pinhole intrinsics" + (", world_from_camera" if args.with_world_from_camera else ""),
        ),
        *([] if args.rgb_only else [("depth/", "16-bit depth PNGs in mm, stereo-like noise, holes")]),
        (
            "prompts.json",
            f"boxes and points on the {layout.body_name}, its part `{layout.part_name}`"
            + (" and the cup" if layout.cup else "")
            + "; the task",
        ),  # fmt: skip
        *(
            [("trajectory.json", "the gripper's grasp-centre pose and opening per frame, camera frame")]
            if args.with_trajectory
            else []
        ),  # fmt: skip
        *([("masks/", "the true visible masks, one folder per object and part")] if args.given_masks else []),
        ("truth.json", "ground truth for scoring only (poses, RLE masks, `joints`, keyframes)"),
    ]
    table = "\n".join(f"| `{name}` | {text} |" for name, text in files)
    command = " ".join(["MUJOCO_GL=egl .venv/bin/python tools/make_articulated_demo.py", *sys.argv[1:]])
    return (
        f"# {args.scene} (seed {args.seed}): an articulated object\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. A "
        f"{w} x {d} x {h} cm {layout.body_name} stands on a table with {joint}. A floating parallel-jaw gripper "
        f"{story}. One fixed camera, {args.frames} frames, {args.width}x{args.height}, {args.fps:g} fps.\n\n"
        f"| file | content |\n|---|---|\n{table}\n\nKeyframes (from the simulation's contacts and the joint): {keys}.\n\n"
        f"Generated by tools/make_articulated_demo.py, which checks the outcome in the simulation:\n\n"
        f"```sh\n{command}\n```\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    args = parse_args(argv)
    started = time.monotonic()
    out = args.out.resolve()
    try:
        with staged_output(out, GENERATED) as staging:
            truth = generate(args, staging)
    except ValueError as error:
        print(f"make_articulated_demo: bad options: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"make_articulated_demo: failed: {error}", file=sys.stderr)
        return 1
    keys = ", ".join(f"{k['event']} {k['frame']}" for k in truth["keyframes"])
    joint = truth["joints"][0]
    final = joint["q"][-1]
    shown = f"{np.rad2deg(final):.1f} deg" if joint["type"] == "hinge" else f"{final * 100:.1f} cm"
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"make_articulated_demo: wrote {out}")
    print(
        f"make_articulated_demo: {args.scene} seed {args.seed}, {args.frames} frames {args.width}x{args.height} @ "
        f"{args.fps:g} fps; {keys}; {joint['part']} ends at {shown}; {size / 1e6:.2f} MB; "
        f"{time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
