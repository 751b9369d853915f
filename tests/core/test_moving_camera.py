"""A camera that moves: world_from_camera per frame, from camera.json to the report and back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from generated_demos import SMALL, generate, true_masks
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import load_demo, parse_camera
from real2gym.real2gym_addon.errors import DemoFolderError
from real2gym.real2gym_addon.geometry.camera import inverse_poses, pose_at, report_camera_from_world
from real2gym.real2gym_addon.geometry.keyframes import load_trajectory
from real2gym.real2gym_addon.geometry.report_io import geometry_from_report
from real2gym.real2gym_addon.geometry.stage import run_geometry
from real2gym.real2gym_addon.report import Report
from real2gym.real2gym_addon.scene import SceneDescription
from real2gym.real2gym_addon.trajectory import parse_trajectory
from real2gym.real2gym_addon.truth import load_truth

SWAY_DEG = 6.0
VGA_QUARTER = ["--width", "320", "--height", "240"]
"""Overrides SMALL's 160x120, where a 4 cm block's depth is a few coarse pixels."""
INTRINSICS = {"width": 160, "height": 120, "fx": 140.0, "fy": 140.0, "cx": 80.0, "cy": 60.0}


@pytest.fixture(scope="module")
def moving_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short 320x240 demo filmed by a camera that sways by 6 degrees, its poses in camera.json."""
    out = tmp_path_factory.mktemp("moving") / "demo"
    args = ["--camera-sway", str(SWAY_DEG), "--with-world-from-camera", "--with-trajectory"]
    result = generate(out, *SMALL, *VGA_QUARTER, *args)
    assert result.returncode == 0, result.stderr
    return out


def _pose(yaw_deg: float, position) -> list[list[float]]:
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_euler("xz", [-120.0, yaw_deg], degrees=True).as_matrix()
    pose[:3, 3] = position
    return pose.tolist()


def test_camera_json_takes_one_pose_per_frame() -> None:
    poses = [_pose(yaw, [0.1 * i, -0.5, 0.4]) for i, yaw in enumerate((0.0, 3.0, 6.0))]
    camera = parse_camera({**INTRINSICS, "world_from_camera_frames": poses})
    assert len(camera.world_from_camera_frames) == 3
    np.testing.assert_allclose(camera.world_from_camera, poses[0])  # the pose on frame 0

    with pytest.raises(DemoFolderError, match="entry 1.*not a rotation"):
        parse_camera({**INTRINSICS, "world_from_camera_frames": [poses[0], np.diag([2.0, 1, 1, 1]).tolist()]})
    with pytest.raises(DemoFolderError, match="differs from the first"):
        parse_camera({**INTRINSICS, "world_from_camera": poses[1], "world_from_camera_frames": poses})
    with pytest.raises(DemoFolderError, match="one 4x4 pose per video frame"):
        parse_camera({**INTRINSICS, "world_from_camera_frames": []})


def test_a_pose_count_unlike_the_video_is_refused(moving_demo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(moving_demo, folder)
    camera = json.loads((folder / "camera.json").read_text())
    camera["world_from_camera_frames"] = camera["world_from_camera_frames"][:-2]
    (folder / "camera.json").write_text(json.dumps(camera))
    with pytest.raises(DemoFolderError, match="holds 38 poses but video.mp4 has 40 frames"):
        load_demo(folder)


def test_camera_frame_recordings_follow_the_moving_camera() -> None:
    """A camera-frame sample is in the camera's frame on its own video frame."""
    poses = np.array([_pose(yaw, [0.02 * i, -0.5, 0.4]) for i, yaw in enumerate(np.linspace(0, 10, 5))])
    point_world = np.array([0.05, 0.02, 0.1])
    samples = []
    for frame, pose in enumerate(poses):
        camera_from_world = inverse_poses(pose)
        position = camera_from_world[:3, :3] @ point_world + camera_from_world[:3, 3]
        quaternion = Rotation.from_matrix(camera_from_world[:3, :3]).as_quat()[[3, 0, 1, 2]]
        samples.append({"frame": frame, "position": position.tolist(), "quaternion": quaternion.tolist(),
                        "gripper": 1.0})  # fmt: skip
    checked = parse_trajectory({"frame_of": "camera", "samples": samples}, 5, 30.0)
    gripper = load_trajectory(checked, 5, poses)
    np.testing.assert_allclose(gripper.positions, np.tile(point_world, (5, 1)), atol=1e-6)
    # The world pose is the identity on every frame: the camera's turn is taken out.
    np.testing.assert_allclose(np.abs(gripper.quaternions[:, 0]), 1.0, atol=1e-6)
    # With the first pose only, the same samples wander with the camera.
    wandering = load_trajectory(checked, 5, poses[0])
    assert np.ptp(wandering.positions, axis=0).max() > 0.005


def _geometry(folder: Path):
    demo = load_demo(folder)
    return demo, run_geometry(demo, true_masks(folder))


def test_static_objects_stay_static_and_the_report_keeps_every_pose(
    moving_demo: Path, tmp_path: Path
) -> None:
    demo, geometry = _geometry(moving_demo)
    truth = load_truth(moving_demo)
    assert geometry.camera_frames is not None and geometry.camera_frames.shape == (40, 4, 4)
    cup = next(o for o in geometry.objects if o.name == "cup")
    assert cup.motion.static
    true_cup = truth.objects["cup"].frames[0].position_world
    assert np.linalg.norm(cup.motion.positions[0] - true_cup) < 0.01

    description = SceneDescription.from_demo(demo)
    description.set_geometry(geometry)
    report = description.to_report()
    assert report["camera"]["camera_motion_source"] == "camera.json"
    assert len(report["camera"]["world_from_camera_frames"]) == 40
    # position_cam is each frame's own camera: it moves in the camera frame though it stands still.
    block = next(o for o in report["objects"] if o["name"] == "block")
    camera_from_world = report_camera_from_world(report)
    for frame in (0, 20, 39):
        entry = block["frames"][frame]
        view = pose_at(camera_from_world, frame)
        expected = view[:3, :3] @ np.array(entry["position_world"]) + view[:3, 3]
        np.testing.assert_allclose(entry["position_cam"], expected, atol=2e-5)
        true = truth.objects["block"].frames[frame].position_cam
        assert np.linalg.norm(np.array(entry["position_cam"]) - true) < 0.015
    cup_cam = np.array(
        [f["position_cam"] for f in next(o for o in report["objects"] if o["name"] == "cup")["frames"]]
    )
    assert np.ptp(cup_cam, axis=0).max() > 0.02

    again = geometry_from_report(Report.from_json(json.loads(json.dumps(report))))
    np.testing.assert_allclose(again.camera_frames, geometry.camera_frames, atol=1e-6)
    assert again.camera_source == "camera.json"


def test_without_its_poses_the_same_video_moves_the_static_cup(moving_demo: Path, tmp_path: Path) -> None:
    """The per-frame poses matter: given only frame 0's, the cup wanders as the camera does."""
    folder = tmp_path / "demo"
    shutil.copytree(moving_demo, folder)
    camera = json.loads((folder / "camera.json").read_text())
    del camera["world_from_camera_frames"]
    (folder / "camera.json").write_text(json.dumps(camera))
    _, geometry = _geometry(folder)
    cup = next(o for o in geometry.objects if o.name == "cup")
    assert not cup.motion.static
    assert np.ptp(cup.motion.positions, axis=0).max() > 0.015


def test_an_estimated_path_keeps_the_standing_cup_standing(moving_demo: Path, tmp_path: Path) -> None:
    """Without any pose: the camera's motion is estimated from the depth, levelled by the table and held to
    the cup nothing carries, and each frame's camera still sees the objects where the video shows them."""
    from real2gym.real2gym_addon.errors import WarningLog

    folder = tmp_path / "demo"
    shutil.copytree(moving_demo, folder)
    camera = json.loads((folder / "camera.json").read_text())
    del camera["world_from_camera_frames"], camera["world_from_camera"]
    (folder / "camera.json").write_text(json.dumps(camera))
    demo, log = load_demo(folder), WarningLog()
    geometry = run_geometry(demo, true_masks(folder), log=log)
    assert geometry.camera_source == "estimated" and geometry.camera_frames.shape == (40, 4, 4)
    messages = [w.message for w in log.warnings]
    assert any(m.startswith("the camera moves") for m in messages)
    assert any("held to 'cup'" in m for m in messages)
    cup = next(o for o in geometry.objects if o.name == "cup")
    assert cup.motion.static
    truth = load_truth(moving_demo)
    views = inverse_poses(geometry.camera_frames)
    for name in ("cup", "block"):
        obj = next(o for o in geometry.objects if o.name == name)
        seen = np.array([views[i, :3, :3] @ p + views[i, :3, 3] for i, p in enumerate(obj.motion.positions)])
        true = np.array([f.position_cam for f in truth.objects[name].frames])
        visible = np.array([f.visible for f in truth.objects[name].frames])
        rms = float(np.sqrt(np.mean(np.sum((seen - true)[visible] ** 2, axis=1))))
        assert rms < 0.02, (name, rms)
