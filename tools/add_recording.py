#!/usr/bin/env python3
"""Add trajectory.json to a varied demo: the hand's motion as a robot would have recorded it.

A folder made by tools/make_varied_demo.py shows a hand carrying an object; its scene is
drawn again from truth.json's seed (``_varied_draw.draw_scene``, checked against the
truth's first-frame object poses). The recording is a parallel gripper in the hand's
place: its grasp centre follows the hand's, its z axis (approach) points down and its y
axis (the direction the fingers open) lies across the carried object's shorter horizontal
side. Its fingers are fully open (8 cm) until they close on the object over the 4 frames
before the grasp keyframe, measure the object's width across the fingers from the grasp
keyframe to the frame before the release keyframe (they hold it there), and open from
then on over 4 frames (with ``--form careful_release`` only 6 mm wider than the object):
on the release keyframe they have begun to open, as in tools/make_demo.py's truth. ``--form`` names how it is written
(tools/_recording.py); ``--form hand`` writes it as the person's tracked hand: the wrist 9 cm behind the grasp centre,
the thumb's and the index finger's tips either side of it as far apart as the fingers' gap.
Between the grasp and the release the object's true centre must lie within 1 cm of the
grasp centre written, or nothing is written.

Example:
    .venv/bin/python tools/add_recording.py .cache/bench_varied/seed1 --form robot_base_closure --out /tmp/s1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _recording import FORMS, FULL_OPENING, recording_json  # noqa: E402
from _varied_draw import draw_scene  # noqa: E402
from _varied_scene import Item, Scene  # noqa: E402

RAMP_FRAMES = 4
"""Frames over which the fingers close before the grasp and open after the release."""
HOLD_TOLERANCE = 0.01
"""Metres the object's true centre may lie from the written grasp centre while held."""
POSE_TOLERANCE = 1e-4
"""Metres (and quaternion components) the redrawn scene may differ from truth.json on frame 0."""
_COPIED = ("video.mp4", "camera.json", "prompts.json", "truth.json")


class RecordingError(Exception):
    """The folder is not a varied demo this tool can redraw, or the recording would not match it."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("demo", type=Path, help="a demo folder made by tools/make_varied_demo.py")
    parser.add_argument("--form", required=True, choices=FORMS, help="how the recording is written")
    parser.add_argument("--out", type=Path, help="copy the demo here and write trajectory.json in the copy")
    return parser.parse_args(argv)


def redraw(truth: dict) -> Scene:
    """The scene truth.json was rendered from, drawn again from its seed and attempt.

    Raises:
        RecordingError: If truth.json is not from make_varied_demo.py or the redrawn
            objects do not stand where truth.json has them on frame 0.
    """
    generator = truth.get("generator", {})
    if not str(generator.get("tool", "")).endswith("make_varied_demo.py"):
        raise RecordingError(
            f"truth.json was written by {generator.get('tool')!r}, not tools/make_varied_demo.py"
        )
    video, argv = truth["video"], list(generator.get("argv", []))
    task = argv[argv.index("--task") + 1] if "--task" in argv[:-1] else None  # drawn from the seed without it
    scene = draw_scene(
        int(generator["seed"]),
        int(video["frames"]),
        int(video["width"]),
        int(video["height"]),
        int(generator["attempt"]),
        task,
    )
    names = [item.name for item in scene.items]
    if names != [o["name"] for o in truth["objects"]]:
        raise RecordingError(
            f"the redrawn scene has objects {names}, truth.json {[o['name'] for o in truth['objects']]}"
        )
    poses = scene.item_poses(np.zeros(1))[0]
    for item, pose, true in zip(scene.items, poses, truth["objects"], strict=True):
        first = true["frames"][0]
        moved = np.abs(pose[:3, 3] - first["position_world"]).max()
        quat = _quat(pose[:3, :3])
        turned = min(
            np.abs(quat - first["quaternion_world"]).max(), np.abs(quat + first["quaternion_world"]).max()
        )
        if moved > POSE_TOLERANCE or turned > POSE_TOLERANCE:
            raise RecordingError(
                f"the redrawn {item.name} differs from truth.json on frame 0 ({moved * 1000:.2f} mm, quaternion "
                f"{turned:.2g}); this folder was not rendered by this version of tools/_varied_draw.py"
            )
    return scene


def _quat(rotation: np.ndarray) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(rotation).as_quat(scalar_first=True)


def grip_across(item: Item) -> tuple[np.ndarray, float]:
    """The fingers' opening direction in the hand frame and the object's width across them (m).

    The hand frame is world-aligned at the grasp, and the object keeps its start yaw in it
    while held. The fingers close across the shorter horizontal side: along the object's x
    axis when its x extent is the smaller (or it is round), else along its y axis.
    """
    c, s = np.cos(item.yaw), np.sin(item.yaw)
    if item.shape == "box" and item.size[1] < item.size[0]:
        return np.array([-s, c, 0.0]), float(item.size[1])
    return np.array([c, s, 0.0]), float(item.size[0])


def gripper_motion(scene: Scene, truth: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recorded gripper: grasp-centre poses, measured finger gap and holding flags.

    Args:
        scene: The redrawn scene.
        truth: truth.json (its grasp and release keyframes).

    Returns:
        World poses (frames, 4, 4) in the contract's axes (z approach, y opening), the
        finger gap per frame (m), and whether the fingers hold the object per frame (from
        the grasp keyframe to the frame before the release keyframe).

    Raises:
        RecordingError: If the object is wider than the open gripper.
    """
    opening, width = grip_across(scene.manipulated)
    if width > FULL_OPENING:
        raise RecordingError(
            f"the {scene.manipulated.name} is {width * 100:.1f} cm across, wider than the 8 cm gripper"
        )
    down = np.array([0.0, 0.0, -1.0])
    hand_from_grasp = np.c_[np.cross(opening, down), opening, down]
    poses = scene.hand_poses()
    poses[:, :3, :3] = poses[:, :3, :3] @ hand_from_grasp
    keys = {k["event"]: k["frame"] for k in truth["keyframes"] if k["object"] == scene.manipulated.name}
    grasp, release = keys["grasp"], keys["release"]
    frames = np.arange(scene.frames)
    closing = np.interp(frames, [grasp - RAMP_FRAMES, grasp], [FULL_OPENING, width])
    opening_after = np.interp(frames, [release - 1, release - 1 + RAMP_FRAMES], [width, FULL_OPENING])
    widths = np.where(frames < release, closing, opening_after)
    holding = (frames >= grasp) & (frames < release)
    return poses, widths, holding


def held_distance(poses: np.ndarray, holding: np.ndarray, truth: dict, name: str) -> float:
    """Largest distance (m) between the object's true centre and the grasp centre while held."""
    true = next(o for o in truth["objects"] if o["name"] == name)
    centres = np.array([f["position_world"] for f in true["frames"]])
    return float(np.linalg.norm(centres[holding] - poses[holding, :3, 3], axis=1).max())


def _write_json(path: Path, content: dict) -> None:
    staging = path.with_name(f".{path.name}.partial")
    staging.write_text(json.dumps(content, indent=2) + "\n")
    os.replace(staging, path)


def add_recording(demo: Path, form: str, out: Path | None = None) -> tuple[Path, float]:
    """Writes trajectory.json in ``form`` into ``demo`` or into a copy of it at ``out``.

    Returns:
        The trajectory.json written and the largest distance (m) between the object's
        true centre and the grasp centre while held.

    Raises:
        RecordingError: See :func:`redraw` and :func:`gripper_motion`; also when the
            grasp centre strays over :data:`HOLD_TOLERANCE` from the held object.
    """
    truth = json.loads((demo / "truth.json").read_text())
    camera = json.loads((demo / "camera.json").read_text())
    scene = redraw(truth)
    poses, widths, holding = gripper_motion(scene, truth)
    distance = held_distance(poses, holding, truth, scene.manipulated.name)
    if distance > HOLD_TOLERANCE:
        raise RecordingError(
            f"the grasp centre strays {distance * 1000:.1f} mm from the held {scene.manipulated.name}'s true "
            f"centre (at most {HOLD_TOLERANCE * 1000:.0f} mm)"
        )
    data = recording_json(
        form,
        poses,
        widths,
        np.array(camera["world_from_camera"]),
        holding,
        seed=int(truth["generator"]["seed"]),
    )
    target = demo
    if out is not None and out.resolve() != demo.resolve():
        out.mkdir(parents=True, exist_ok=True)
        for name in _COPIED:
            shutil.copy2(demo / name, out / name)
        if (demo / "depth").is_dir():
            shutil.copytree(demo / "depth", out / "depth", dirs_exist_ok=True)
        target = out
    _write_json(target / "trajectory.json", data)
    return target / "trajectory.json", distance


def main(argv: list[str] | None = None) -> int:
    """Runs the tool; returns the process exit status (0 written, 1 refused, 2 not a varied demo)."""
    args = parse_args(argv)
    try:
        path, distance = add_recording(args.demo, args.form, args.out)
    except (OSError, KeyError, json.JSONDecodeError) as error:
        print(f"add_recording: cannot read the demo: {error!r}", file=sys.stderr)
        return 2
    except RecordingError as error:
        print(f"add_recording: {error}", file=sys.stderr)
        return 1
    print(
        f"add_recording: wrote {path} ({args.form}); held object within {distance * 1000:.2f} mm of the grasp centre"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
