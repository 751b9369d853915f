#!/usr/bin/env python3
"""Generate a demo folder: a simulated pick-and-place filmed by one RGB-D camera.

A floating parallel-jaw gripper picks a block off a table by friction, carries it over
an open container (a cup, or with ``--target bowl`` a bowl) and drops it in. MuJoCo
simulates and renders it; the folder follows ``docs/data-contract.md`` (video or frames,
camera.json, depth PNGs, prompts.json, optionally trajectory.json) plus truth.json for
scoring. The outcome is checked: the generator exits with status 1 if the block was not
lifted by the fingers or did not end resting in the container, and with status 2 for
options it cannot film (e.g. a block too big for the gripper or the container, a video
too short for the script). With ``--carry-tilt DEG`` the gripper tilts the carried block
by DEG and turns it upright again before lowering it over the container. With
``--recording-form FORM`` trajectory.json is the gripper as a robot would have recorded it,
in one of the contract's forms (tools/_recording.py: robot base frame, flange and tcp
offset, other axes, finger gap measured or commanded, sparse samples).

Example:
    MUJOCO_GL=egl python tools/make_demo.py --out examples/block_in_cup --with-trajectory
    MUJOCO_GL=egl python tools/make_demo.py --out /tmp/block_in_bowl --target bowl
    MUJOCO_GL=egl python tools/make_demo.py --out /tmp/robot --recording-form robot_base_closure
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _demo_motion import Waypoint, plan_script, pose_at, top_down_quat  # noqa: E402
from _demo_output import staged_output  # noqa: E402
from _demo_render import DemoRenderer, Intrinsics  # noqa: E402
from _demo_scene import (  # noqa: E402
    BOWL_BASE_RATIO,
    BOWL_BOTTOM,
    BOWL_WALL,
    GROUP_BLOCK,
    GROUP_CUP,
    GROUP_DISTRACTOR,
    Layout,
    build_model,
    look_at,
)
from _demo_sensor import noisy_rgb, sensor_depth  # noqa: E402
from _demo_sim import SimResult, simulate  # noqa: E402
from _demo_truth import (  # noqa: E402
    camera_json,
    describe_objects,
    pose_entries,
    prompt_entry,
    trajectory_json,
    truth_frame,
    truth_json,
    world_from_camera,
)
from _recording import FORMS, recording_json  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

_GENERATED = (
    "video.mp4",
    "frames",
    "depth",
    "camera.json",
    "prompts.json",
    "trajectory.json",
    "truth.json",
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="demo folder to write")
    add("--seed", type=int, default=0, help="random seed (layout, colours, noise)")
    add("--frames", type=int, default=150, help="number of video frames")
    add("--width", type=int, default=640)
    add("--height", type=int, default=480)
    add("--fps", type=float, default=30.0)
    add("--camera-distance", type=float, default=0.7, help="m from the scene centre")
    add("--camera-elevation", type=float, default=38.0, help="deg above the table")
    add("--camera-azimuth", type=float, default=-70.0, help="deg from world +x")
    add("--fovy", type=float, default=45.0, help="vertical field of view, deg")
    add("--block-size", type=float, default=0.04, help="block edge, m")
    add("--cup-radius", type=float, default=0.045, help="cup outer radius, m")
    add("--cup-height", type=float, default=0.09, help="cup height, m")
    add("--target", choices=("cup", "bowl", "base"), default="cup",
        help="what the block goes to: a cup or a bowl to drop into, or (with --task stack) a larger block to "
        "set it on")  # fmt: skip
    add(
        "--task",
        choices=("place_in", "stack"),
        default="place_in",
        help="prompts.json's task type: stack treats the target as a free object the block is stacked in or on",
    )
    add("--base-size", type=float, default=0.06, help="the base block's edge (--target base), m")
    add("--miss", type=float, default=0.0, metavar="METRES",
        help="a failing demo: the block is let go this far past the target's centre (away from where it "
        "started), so it does not end in or on it")  # fmt: skip
    add("--bowl-radius", type=float, default=0.07, help="bowl rim outer radius, m")
    add("--bowl-height", type=float, default=0.06, help="bowl height, m")
    add("--distractor", action="store_true", help="add a static can to the table")
    add(
        "--carry-tilt",
        type=float,
        default=0.0,
        metavar="DEG",
        help="during the carry, turn the gripper and the block by DEG about the gripper's "
        "level x axis (in the finger pads' plane, pointing roughly at the camera; positive "
        "leans the block's top to the left in the image), upright again before lowering",
    )
    add("--no-depth", action="store_true", help="do not write depth/")
    add(
        "--stereo-noise",
        type=float,
        default=0.0,
        metavar="METRES",
        help="depth noise (one sigma) at 0.5 m of a consumer stereo camera (a ZED: about 0.02), "
        "growing with the square of the depth, with 15-30 %% of the readings missing in patches",
    )
    add("--with-world-from-camera", action="store_true", help="camera pose in camera.json")
    add(
        "--camera-sway",
        type=float,
        default=0.0,
        metavar="DEG",
        help="a camera that moves, as a head-mounted one does: it swings up to DEG about the scene "
        "(azimuth), bobs and rolls by a third of that, looking at a point that wanders 2 cm; "
        "frame 0 keeps the still camera's pose (camera.json then has world_from_camera_frames)",
    )
    recording = parser.add_mutually_exclusive_group()
    recording.add_argument(
        "--with-trajectory", action="store_true", help="write trajectory.json (short form)"
    )
    recording.add_argument(
        "--recording-form",
        choices=FORMS,
        help="write trajectory.json in this robot recording form (the finger gap the fingers measured, "
        "or the commanded one; see tools/_recording.py)",
    )
    add("--frames-dir", action="store_true", help="write frames/*.png, not video.mp4")
    return parser.parse_args(argv)


def sample_layout(args: argparse.Namespace, rng: np.random.Generator) -> Layout:
    """Place the block, the container, the distractor and the camera for this seed."""
    if args.target == "base" and args.task != "stack":
        raise ValueError("--target base goes with --task stack (a block is set on it, not dropped into it)")
    bowl, base = args.target == "bowl", args.target == "base"
    radius = args.bowl_radius if bowl else args.base_size / 2 if base else args.cup_radius
    spacing = max(0.2, radius + args.block_size + 0.11)
    angle = rng.uniform(-0.25, 0.25)
    along = np.array([np.cos(angle), np.sin(angle)])
    middle = rng.uniform(-0.03, 0.03, 2)
    block_xy = middle - along * spacing / 2
    cup_xy = middle + along * spacing / 2
    elevation, azimuth = np.deg2rad(args.camera_elevation), np.deg2rad(args.camera_azimuth)
    target = np.r_[middle, 0.07]
    eye = target + args.camera_distance * np.array(
        [
            np.cos(elevation) * np.cos(azimuth),
            np.cos(elevation) * np.sin(azimuth),
            np.sin(elevation),
        ]
    )
    distractor = None
    if args.distractor:
        distractor = _place_distractor(block_xy, cup_xy, azimuth, rng)
    return Layout(
        block_size=args.block_size,
        block_mass=float(rng.uniform(0.06, 0.09)),
        block_xy=block_xy,
        block_yaw=float(rng.uniform(0, np.pi / 2)),
        cup_radius=radius,
        cup_height=args.bowl_height if bowl else args.base_size * 0.8 if base else args.cup_height,
        cup_wall=BOWL_WALL if bowl else 0.0 if base else 0.004,
        cup_bottom=BOWL_BOTTOM if bowl else args.base_size * 0.8 if base else 0.006,
        cup_xy=cup_xy,
        distractor_xy=distractor,
        distractor_radius=0.03,
        distractor_height=0.08,
        camera_pos=eye,
        camera_rot=look_at(eye, target),
        fovy=args.fovy,
        width=args.width,
        height=args.height,
        container=args.target,
        bowl_base=BOWL_BASE_RATIO * radius if bowl else 0.0,
        miss=args.miss,
    )


def _place_distractor(
    block_xy: np.ndarray, cup_xy: np.ndarray, azimuth: float, rng: np.random.Generator
) -> np.ndarray:
    """A spot for the static can: clear of the gripper's path, preferably behind it.

    Args:
        block_xy: Block position on the table (m), world frame.
        cup_xy: Cup position (m), world frame.
        azimuth: Camera azimuth (rad) from world +x.
        rng: Random generator.

    Returns:
        The can's centre on the table (m), world frame, shape (2,).
    """
    middle = (block_xy + cup_xy) / 2
    away = -np.array([np.cos(azimuth), np.sin(azimuth)])
    segment = cup_xy - block_xy
    best, best_score = None, -np.inf
    for angle in np.linspace(0, 2 * np.pi, 36, endpoint=False):
        spot = middle + 0.17 * np.array([np.cos(angle), np.sin(angle)])
        s = np.clip(np.dot(spot - block_xy, segment) / np.dot(segment, segment), 0, 1)
        if np.linalg.norm(spot - (block_xy + s * segment)) < 0.14:
            continue  # the open gripper (20 cm palm) passes there
        score = np.dot(spot - middle, away) + rng.uniform(0, 0.03)
        if score > best_score:
            best, best_score = spot, score
    return best


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
        RuntimeError: If the simulated grasp or placement failed, or the video is bad.
        ValueError: If the options describe a scene the gripper cannot handle.
    """
    rng = np.random.default_rng(args.seed)
    layout = sample_layout(args, rng)
    intr = Intrinsics.from_fovy(args.width, args.height, args.fovy)
    view = layout.camera_rot[:2, 2]
    # Fingers closing at 45 deg to the line of sight, so one partly hides the block; with
    # a carry tilt, across it: the gripper's x axis, the tilt axis, then points roughly
    # at the camera, so that the block leans in the image rather than towards the camera.
    turn = 135.0 if args.carry_tilt == 0 else 180.0
    preferred_yaw = np.arctan2(view[1], view[0]) + np.deg2rad(turn)
    waypoints = plan_script(layout, args.frames / args.fps, preferred_yaw, float(np.deg2rad(args.carry_tilt)))
    model = build_model(
        layout,
        waypoints[0].position,
        top_down_quat(waypoints[0].yaw),
        np.random.default_rng([args.seed, 2]),
    )
    objects = describe_objects(layout)
    for spec in objects:
        spec.mass = float(model.body(spec.body).mass[0])
    groups = {
        "block": GROUP_BLOCK,
        "cup": GROUP_CUP,
        "bowl": GROUP_CUP,
        "base": GROUP_CUP,
        "can": GROUP_DISTRACTOR,
    }
    groups = {o.name: groups[o.name] for o in objects}
    renderer = DemoRenderer(model, args.width, args.height, groups)
    noise = np.random.default_rng([args.seed, 1])
    w_from_c = world_from_camera(layout)
    camera_poses = camera_path(w_from_c, args)
    if args.camera_sway and args.recording_form:
        raise ValueError("--camera-sway goes with --with-trajectory or no recording, not --recording-form")
    camera_id = model.camera("demo").id
    prompts: list[dict] = []

    if args.frames_dir:
        (staging / "frames").mkdir()
        writer = None
    else:
        fourcc = cv2.VideoWriter_fourcc(*"mp4v")
        size = (args.width, args.height)
        writer = cv2.VideoWriter(str(staging / "video.mp4"), fourcc, args.fps, size)
        if not writer.isOpened():
            raise RuntimeError("OpenCV cannot write mp4v video here; use --frames-dir")
    if not args.no_depth:
        (staging / "depth").mkdir()

    def on_frame(index: int, data) -> None:
        # The camera is not simulated: pose it for this frame (MuJoCo cameras: y up, looking along -z).
        data.cam_xpos[camera_id] = camera_poses[index][:3, 3]
        data.cam_xmat[camera_id] = (camera_poses[index][:3, :3] * [1.0, -1.0, -1.0]).ravel()
        images = renderer.render(data)
        bgr = cv2.cvtColor(noisy_rgb(images.rgb, noise), cv2.COLOR_RGB2BGR)
        if writer is None:
            cv2.imwrite(str(staging / "frames" / f"{index:06d}.png"), bgr)
        else:
            writer.write(bgr)
        if not args.no_depth:
            depth = sensor_depth(images.depth, intr.fx, noise, args.stereo_noise)
            path = staging / "depth" / f"{index:06d}.png"
            cv2.imwrite(str(path), depth, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        for spec in objects:
            body = data.body(spec.body)
            pose = pose_entries(camera_poses[index], body.xpos, body.xquat, spec.centre)
            mask = images.masks[spec.name]
            spec.frames.append(truth_frame(index, spec, pose, mask, images.alone_pixels[spec.name]))
            if index == 0:
                prompts.append(prompt_entry(spec, mask))

    try:
        result = simulate(model, layout, waypoints, args.frames, args.fps, on_frame)
    finally:
        renderer.close()
        if writer is not None:
            writer.release()
    if result.failures:
        raise RuntimeError("; ".join(result.failures))
    if writer is not None:
        count = _count_video_frames(staging / "video.mp4")
        if count != args.frames:
            raise RuntimeError(f"video.mp4 reads back {count} frames, expected {args.frames}")

    generator = {"tool": "tools/make_demo.py", "seed": args.seed, "argv": sys.argv[1:]}
    truth = truth_json(
        layout, intr, args.fps, objects, result, generator, camera_poses if args.camera_sway else None
    )
    files = {
        "camera.json": camera_json(
            intr, layout, args.with_world_from_camera, camera_poses if args.camera_sway else None
        ),
        "prompts.json": {
            "objects": prompts,
            "task": {"type": args.task, "object": "block", "target": layout.container},
        },
        "truth.json": truth,
    }
    if args.with_trajectory:
        files["trajectory.json"] = trajectory_json(truth["gripper"]["frames"])
    elif args.recording_form:
        files["trajectory.json"] = robot_recording(args.recording_form, result, waypoints, w_from_c, args)
    for name, content in files.items():
        indent = None if name == "truth.json" else 2
        (staging / name).write_text(json.dumps(content, indent=indent) + "\n")
    return truth


def camera_path(w_from_c: np.ndarray, args: argparse.Namespace) -> list[np.ndarray]:
    """world_from_camera per frame: the still pose, or one that sways (``--camera-sway``).

    The camera swings about the point it looks at (azimuth), bobs in elevation and rolls
    about its optical axis, on incommensurate periods, while the point looked at wanders;
    all offsets are 0 on frame 0.
    """
    if not args.camera_sway:
        return [w_from_c] * args.frames
    distance = args.camera_distance
    target = w_from_c[:3, 3] + w_from_c[:3, 2] * distance
    sway = np.deg2rad(args.camera_sway)
    path = []
    for index in range(args.frames):
        t = 2 * np.pi * index / max(args.frames - 1, 1)
        offset = w_from_c[:3, 3] - target
        turn = Rotation.from_euler("z", sway * np.sin(t)).as_matrix()
        side = np.cross(offset, [0.0, 0.0, 1.0])
        bob = Rotation.from_rotvec(side / np.linalg.norm(side) * sway / 3 * np.sin(1.7 * t)).as_matrix()
        looked_at = target + 0.02 * np.array([np.sin(1.3 * t), np.sin(0.9 * t), 0.0])
        eye = looked_at + turn @ bob @ offset
        rotation = look_at(eye, looked_at) @ Rotation.from_euler("z", sway / 3 * np.sin(2.3 * t)).as_matrix()
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, eye
        path.append(pose)
    return path


def robot_recording(
    form: str, result: SimResult, waypoints: list[Waypoint], w_from_c: np.ndarray, args: argparse.Namespace
) -> dict:
    """trajectory.json in ``form`` from the simulated gripper.

    The grasp centre's pose is the ``hand`` body's; the measured finger gap is the sum of
    the finger joints (the block's width while they hold it); the commanded gap is the
    script's; the fingers hold from the grasp keyframe to the frame before the release.

    Args:
        form: One of ``_recording.FORMS``.
        result: The simulation, one state per video frame.
        waypoints: The gripper script (its commanded finger opening).
        w_from_c: 4x4 world-from-camera transform.
        args: Command-line options (``fps``, ``seed``).
    """
    count = len(result.frames)
    poses = np.tile(np.eye(4), (count, 1, 1))
    for index, state in enumerate(result.frames):
        position, quat = state.poses["hand"]
        poses[index, :3, :3] = Rotation.from_quat(quat, scalar_first=True).as_matrix()
        poses[index, :3, 3] = position
    measured = np.array([sum(state.finger_q) for state in result.frames])
    commanded = np.array([2 * pose_at(waypoints, index / args.fps)[2] for index in range(count)])
    frames = np.arange(count)
    grasp, release = result.keyframes.get("grasp"), result.keyframes.get("release")
    holding = (
        (frames >= grasp) & (frames < release) if grasp is not None and release is not None else frames < 0
    )
    return recording_json(
        form, poses, measured, w_from_c, holding, commanded_width_m=commanded, seed=args.seed
    )


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    args = parse_args(argv)
    started = time.monotonic()
    out = args.out.resolve()
    try:
        with staged_output(out, _GENERATED) as staging:
            truth = generate(args, staging)
    except ValueError as error:  # options the gripper or the script cannot handle
        print(f"make_demo: bad options: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:  # the simulated demo did not go as planned
        print(f"make_demo: failed: {error}", file=sys.stderr)
        return 1
    keys = ", ".join(f"{k['event']} {k['frame']}" for k in truth["keyframes"])
    inside = truth["checks"][f"in_{args.target}"]
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"make_demo: wrote {out}")
    print(
        f"make_demo: {args.frames} frames {args.width}x{args.height} @ {args.fps:g} fps, "
        f"{keys}; block in {args.target} {inside['radial_offset_m'] * 100:.1f} cm off axis; "
        f"{size / 1e6:.2f} MB; {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
