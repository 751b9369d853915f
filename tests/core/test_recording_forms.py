"""tools/_recording.py writes one gripper motion in every trajectory.json form, and each reads back the same.

The inverse here is written independently of the writer (quaternions to matrices by the
formula, axes by picking signed columns): it applies the contract's conventions (frame,
robot base, ``tcp_offset``, ``axes``, gripper field and width) to get back the grasp
centre in the world frame, its rotation in the contract's axes (z approach, y opening)
and the finger gap, and compares them with the motion the writer was given.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

REPO = Path(__file__).resolve().parents[2]
FRAMES = 60
GRASP, RELEASE = 20, 41
"""The fingers hold the object on frames GRASP to RELEASE - 1."""
HELD_WIDTH = 0.034
"""Metres: the measured finger gap while holding."""


def _motion():
    """A smooth pick and place: down, hold, carry with a 60-degree wrist turn, release, up.

    Returns:
        world_from_grasp (FRAMES, 4, 4), measured width (m), holding flags, world_from_camera.
    """
    t = np.linspace(0.0, 1.0, FRAMES)
    s = t * t * (3 - 2 * t)
    position = np.c_[-0.1 + 0.22 * s, 0.05 * np.sin(np.pi * t), 0.02 + 0.12 * (1 - np.sin(np.pi * t)) ** 2]
    turn = np.deg2rad(60.0) * s
    down = Rotation.from_euler("x", np.pi)  # z (approach) points down
    lean = Rotation.from_euler("y", np.deg2rad(8) * np.sin(np.pi * t)[:, None])
    rotation = Rotation.from_euler("z", turn[:, None]) * down * lean
    poses = np.tile(np.eye(4), (FRAMES, 1, 1))
    poses[:, :3, :3] = rotation.as_matrix()
    poses[:, :3, 3] = position
    frames = np.arange(FRAMES)
    closing = np.interp(frames, [GRASP - 4, GRASP], [0.08, HELD_WIDTH])
    opening = np.interp(frames, [RELEASE - 1, RELEASE + 3], [HELD_WIDTH, 0.08])
    width = np.where(frames < RELEASE, closing, opening)
    holding = (frames >= GRASP) & (frames < RELEASE)
    eye, target = np.array([0.5, -0.4, 0.45]), np.array([0.0, 0.0, 0.05])
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    camera = np.eye(4)
    camera[:3, :3] = np.c_[right, np.cross(forward, right), forward]
    camera[:3, 3] = eye
    return poses, width, holding, camera


def _matrix_of(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _signed_column(rotation: np.ndarray, axis: str) -> np.ndarray:
    return (1.0 if axis[0] == "+" else -1.0) * rotation[:, "xyz".index(axis[1])]


def read_back(data: dict, world_from_camera: np.ndarray):
    """The contract's conventions applied to a trajectory.json dict.

    Returns:
        frames (K,), grasp centre in the world (K, 3), contract rotation in the world
        (K, 3, 3), finger gap (K,) in metres, and the file's gripper kind.
    """
    frame_of = data["frame_of"]
    if frame_of == "camera":
        world_from_frame = world_from_camera
    elif frame_of == "world":
        world_from_frame = np.eye(4)
    else:
        assert frame_of == "robot_base"
        assert ("world_from_robot" in data) != ("camera_from_robot" in data)
        if "world_from_robot" in data:
            world_from_frame = np.array(data["world_from_robot"])
        else:
            world_from_frame = world_from_camera @ np.array(data["camera_from_robot"])
    if "hand" in data:  # the contract's hand: the centre between the tips, approached from the wrist
        frames, centres, rotations, widths = [], [], [], []
        for sample in data["samples"]:
            thumb, index = np.array(sample["thumb_tip"]), np.array(sample["index_tip"])
            centre, opening = (thumb + index) / 2, (index - thumb) / np.linalg.norm(index - thumb)
            reach = centre - np.array(sample["wrist"])[:3, 3]
            approach = reach - (reach @ opening) * opening
            approach /= np.linalg.norm(approach)
            frames.append(sample["frame"])
            centres.append(world_from_frame[:3, :3] @ centre + world_from_frame[:3, 3])
            rotations.append(world_from_frame[:3, :3] @ np.c_[np.cross(opening, approach), opening, approach])
            widths.append(np.linalg.norm(index - thumb))
        return np.array(frames), np.array(centres), np.array(rotations), np.array(widths), "measured"
    axes = data.get("axes", {"approach": "+z", "opening": "+y"})
    full = data.get("gripper_max_width_m", 0.08)
    frames, centres, rotations, widths = [], [], [], []
    for sample in data["samples"]:
        recorded = _matrix_of(sample["quaternion"])
        approach = _signed_column(recorded, axes["approach"])
        opening = _signed_column(recorded, axes["opening"])
        contract = np.c_[np.cross(opening, approach), opening, approach]
        offset = data.get("tcp_offset", 0.0)
        if isinstance(offset, list):
            centre = np.array(sample["position"]) + recorded @ np.array(offset)
        else:
            centre = np.array(sample["position"]) + offset * approach
        frames.append(sample["frame"])
        centres.append(world_from_frame[:3, :3] @ centre + world_from_frame[:3, 3])
        rotations.append(world_from_frame[:3, :3] @ contract)
        if "gripper" in sample:
            widths.append(sample["gripper"] * full)
        elif "gripper_closure" in sample:
            widths.append((1.0 - sample["gripper_closure"]) * full)
        else:
            widths.append(sample["gripper_width_m"])
    kind = data.get("gripper_kind", "commanded")
    return np.array(frames), np.array(centres), np.array(rotations), np.array(widths), kind


def _expected_width(form: str, width: np.ndarray, holding: np.ndarray) -> np.ndarray:
    """What each form's gripper field describes, stated from the contract (not from the writer)."""
    if form in ("short_camera", "robot_base_closure"):  # commanded: closed while holding
        return np.where(holding, 0.0, width)
    if form == "hand":  # the tracked tips are a finger's pad (7 mm) beyond the gap on each side
        return width + 2 * 0.007
    if form == "careful_release":  # opens 6 mm past the held width, no further
        out = width.copy()
        out[RELEASE - 1 :] = np.minimum(out[RELEASE - 1 :], HELD_WIDTH + 0.006)
        return out
    return width


def _angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cos = (np.trace(np.swapaxes(a, -1, -2) @ b, axis1=-2, axis2=-1) - 1) / 2
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@pytest.mark.parametrize(
    "form",
    [
        "short_camera",
        "world_width_measured",
        "robot_base_closure",
        "camera_from_robot_axes_sparse",
        "careful_release",
        "hand",
    ],
)
def test_every_form_reads_back_the_same_motion(recording, form):
    poses, width, holding, camera = _motion()
    assert form in recording.FORMS
    data = json.loads(json.dumps(recording.recording_json(form, poses, width, camera, holding, seed=5)))
    frames, centres, rotations, widths, kind = read_back(data, camera)
    expected = _expected_width(form, width, holding)
    assert kind == ("commanded" if form in ("short_camera", "robot_base_closure") else "measured")
    assert np.all(np.diff(frames) > 0) and frames[0] == 0 and frames[-1] == FRAMES - 1
    # At the recorded frames: exact up to rounding.
    position_error = np.linalg.norm(centres - poses[frames, :3, 3], axis=1)
    assert position_error.max() < 1e-3, f"{form}: grasp centre off by {position_error.max() * 1000:.3f} mm"
    angle_error = _angle_deg(rotations, poses[frames, :3, :3])
    assert angle_error.max() < 0.5, f"{form}: rotation off by {angle_error.max():.3f} deg"
    assert np.abs(widths - expected[frames]).max() < 1e-3, f"{form}: finger gap differs"
    # On every frame, interpolated as the reader does (linear, rotations by slerp).
    every = np.arange(FRAMES)
    between = np.c_[[np.interp(every, frames, centres[:, i]) for i in range(3)]].T
    turned = Slerp(frames, Rotation.from_matrix(rotations))(every).as_matrix()
    assert np.linalg.norm(between - poses[:, :3, 3], axis=1).max() < 3e-3
    assert _angle_deg(turned, poses[:, :3, :3]).max() < 1.0
    assert np.abs(np.interp(every, frames, widths) - expected).max() < 0.015


def test_sparse_form_has_fewer_samples_and_keeps_the_last_frame(recording):
    poses, width, holding, camera = _motion()
    dense = recording.recording_json("world_width_measured", poses, width, camera, holding)
    sparse = recording.recording_json("camera_from_robot_axes_sparse", poses, width, camera, holding)
    assert len(dense["samples"]) == FRAMES
    frames = [s["frame"] for s in sparse["samples"]]
    assert len(frames) == len(range(0, FRAMES, 3)) + 1 < FRAMES / 2
    assert frames[-1] == FRAMES - 1 and np.all(np.diff(frames[:-1]) == 3)


def test_forms_differ_where_robots_differ(recording):
    """The conventions are really exercised: the robot forms are not the world form in disguise."""
    poses, width, holding, camera = _motion()
    forms = {f: recording.recording_json(f, poses, width, camera, holding, seed=5) for f in recording.FORMS}
    base = np.array(forms["robot_base_closure"]["world_from_robot"])
    middle = poses[:, :2, 3].mean(axis=0)
    assert abs(np.linalg.norm(base[:2, 3] - middle) - 0.5) < 1e-6 and -0.04 <= base[2, 3] <= 0.0
    flange = np.array([s["position"] for s in forms["robot_base_closure"]["samples"]])
    world = np.array([s["position"] for s in forms["world_width_measured"]["samples"]])
    assert np.linalg.norm(flange - world, axis=1).min() > 0.05
    axes = forms["camera_from_robot_axes_sparse"]["axes"]
    assert axes != {"approach": "+z", "opening": "+y"}
    # The contract's axes in the recorded ones: not symmetric, so mapping them the wrong way round shows.
    columns = {name: _signed_column(np.eye(3), axes[name]) for name in ("approach", "opening")}
    contract_in_recorded = np.c_[
        np.cross(columns["opening"], columns["approach"]), columns["opening"], columns["approach"]
    ]
    assert not np.allclose(contract_in_recorded, contract_in_recorded.T)
    held = [s["gripper_width_m"] for s in forms["world_width_measured"]["samples"][GRASP:RELEASE]]
    assert min(held) == pytest.approx(HELD_WIDTH)  # measured: never 0 while holding
    closure = [s["gripper_closure"] for s in forms["robot_base_closure"]["samples"][GRASP:RELEASE]]
    assert closure == [1.0] * (RELEASE - GRASP)
    after = [s["gripper_width_m"] for s in forms["careful_release"]["samples"][RELEASE + 3 :]]
    assert max(after) == pytest.approx(HELD_WIDTH + 0.006)


def test_varied_hand_becomes_a_gripper_that_holds_the_object(recording):
    """tools/add_recording.py's gripper on a redrawn varied scene (no rendering): down, across, holding."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        add = importlib.import_module("add_recording")
        draw = importlib.import_module("_varied_draw")
    finally:
        sys.path.remove(str(REPO / "tools"))
    for seed in (2, 16):  # boxes: the fingers close across the shorter side
        scene = draw.draw_scene(seed, 48, 640, 480)
        keys = {k["event"]: k["frame"] for k in scene.keyframes()}
        poses, widths, holding = add.gripper_motion(scene, {"keyframes": scene.keyframes()})
        item = scene.manipulated
        assert np.allclose(poses[:, :3, 2], [0.0, 0.0, -1.0])  # approach straight down
        held = np.flatnonzero(holding)
        assert held[0] == keys["grasp"] and held[-1] == keys["release"] - 1
        assert np.allclose(widths[holding], min(item.size[:2])) and widths[0] == 0.08 and widths[-1] == 0.08
        object_poses = scene.item_poses()[:, 0]
        # The opening axis is along the object's shorter horizontal side, the centre on the object's.
        shorter = object_poses[:, :3, int(np.argmin(item.size[:2]))]
        assert np.allclose(np.abs(np.sum(poses[holding, :3, 1] * shorter[holding], axis=1)), 1.0)
        assert np.linalg.norm(poses[holding, :3, 3] - object_poses[holding, :3, 3], axis=1).max() < 1e-3
