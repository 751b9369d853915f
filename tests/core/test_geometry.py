"""The geometry stage on the bundled demo (with its true masks) and on bad input.

Floors here are looser than the benchmark's targets (benchmarks/bench_geometry.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from generated_demos import true_masks

from real2gym.real2gym_addon.demo import load_demo
from real2gym.real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym.real2gym_addon.geometry.fit import RestView, fit_shape
from real2gym.real2gym_addon.geometry.stage import run_geometry
from real2gym.real2gym_addon.geometry.table import GeometryError
from real2gym.real2gym_addon.truth import load_truth

DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"


@pytest.fixture(scope="module")
def result():
    log = WarningLog()
    return run_geometry(load_demo(DEMO), true_masks(DEMO), log=log), load_truth(DEMO), log


def test_table_and_world_frame(result) -> None:
    geometry, truth, _ = result
    angle = np.degrees(np.arccos(geometry.table.normal_cam @ truth.table_normal_cam))
    assert angle < 1.0
    assert abs(geometry.table.offset_cam - truth.table_offset_cam) < 0.003
    # The world frame is z up on the table: the camera is above it.
    assert geometry.world_from_camera[2, 3] == pytest.approx(truth.table_offset_cam, abs=0.003)


def test_shapes_sizes_and_positions(result) -> None:
    geometry, truth, _ = result
    by_name = {o.name: o for o in geometry.objects}
    assert by_name["block"].fitted.shape.kind == "box"
    cup = by_name["cup"].fitted.shape
    assert cup.kind == "cup" and cup.is_container
    assert cup.mesh().is_watertight
    assert len(cup.collision_pieces()) > 10  # a bottom and a ring of walls, not one hull
    camera_from_world = np.linalg.inv(geometry.world_from_camera)
    for obj in geometry.objects:
        true_obj = truth.objects[obj.name]
        size = np.r_[np.sort(obj.fitted.shape.size[:2]), obj.fitted.shape.size[2]]
        true_size = np.r_[np.sort(true_obj.size[:2]), true_obj.size[2]]
        assert np.all(np.abs(size - true_size) / true_size < 0.04), (obj.name, size, true_size)
        position = camera_from_world[:3, :3] @ obj.motion.positions[0] + camera_from_world[:3, 3]
        assert np.linalg.norm(position - true_obj.frames[0].position_cam) < 0.01
    assert by_name["cup"].motion.static and not by_name["block"].motion.static


def test_motion_follows_the_block(result) -> None:
    geometry, truth, _ = result
    block = next(o for o in geometry.objects if o.name == "block")
    camera_from_world = np.linalg.inv(geometry.world_from_camera)
    positions = block.motion.positions @ camera_from_world[:3, :3].T + camera_from_world[:3, 3]
    true_positions = np.array([f.position_cam for f in truth.objects["block"].frames])
    visible = np.array([f.visible for f in truth.objects["block"].frames])
    rms = np.sqrt(np.mean(np.sum((positions - true_positions) ** 2, axis=1)[visible]))
    assert rms < 0.02
    assert block.motion.positions[:, 2].max() > 0.12  # it was carried high


def test_keyframes_match_the_truth(result) -> None:
    geometry, truth, _ = result
    found = {k["event"]: k["frame"] for k in geometry.keyframes}
    for entry in truth.keyframes:
        assert abs(found[entry["event"]] - entry["frame"]) <= 3, (entry, found)
    assert geometry.gripper.source == "trajectory.json"


def test_without_trajectory_the_gripper_path_is_synthesised(tmp_path: Path) -> None:
    folder = Path(shutil.copytree(DEMO, tmp_path / "demo"))
    (folder / "trajectory.json").unlink()
    log = WarningLog()
    geometry = run_geometry(load_demo(folder), true_masks(folder), log=log)
    assert geometry.gripper.source == "synthesised"
    assert any("grasp frame" in w.message for w in log.warnings)
    grasp = next(k["frame"] for k in geometry.keyframes if k["event"] == "grasp")
    block = next(o for o in geometry.objects if o.name == "block")
    assert np.linalg.norm(geometry.gripper.positions[grasp] - block.motion.positions[grasp]) < 0.03
    assert geometry.gripper.opening[grasp] < 1.0 and geometry.gripper.opening[0] == 1.0


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEMO, tmp_path / "demo"))


def _without_depth(tmp_path: Path, trajectory: bool) -> Path:
    """The demo as a camera of known pose without depth sees it (optionally without the robot's recording)."""
    folder = _copy(tmp_path)
    shutil.rmtree(folder / "depth")
    if not trajectory:
        (folder / "trajectory.json").unlink()
    camera = json.loads((folder / "camera.json").read_text())
    camera["world_from_camera"] = load_truth(folder).world_from_camera.tolist()
    (folder / "camera.json").write_text(json.dumps(camera))
    return folder


def _rms_error(geometry, truth, name: str) -> float:
    obj = next(o for o in geometry.objects if o.name == name)
    frames = truth.objects[name].frames
    true_world = np.array([f.position_world for f in frames])
    visible = np.array([f.visible for f in frames])
    return float(np.sqrt(np.mean(np.sum((obj.motion.positions - true_world) ** 2, axis=1)[visible])))


def test_without_depth_the_recorded_gripper_carries_the_object(tmp_path: Path) -> None:
    folder = _without_depth(tmp_path, trajectory=True)
    log = WarningLog()
    geometry = run_geometry(load_demo(folder), true_masks(folder), log=log)
    truth = load_truth(folder)
    assert any("no depth" in w.message for w in log.warnings)
    for obj in geometry.objects:
        true_obj = truth.objects[obj.name]
        size = np.r_[np.sort(obj.fitted.shape.size[:2]), obj.fitted.shape.size[2]]
        true_size = np.r_[np.sort(true_obj.size[:2]), true_obj.size[2]]
        assert np.all(np.abs(size - true_size) / true_size < 0.06), (obj.name, size, true_size)
    # The gripper hides half the block while it carries it: the recording, not the mask, places it.
    assert _rms_error(geometry, truth, "block") < 0.015
    assert _rms_error(geometry, truth, "cup") < 0.01
    found = {k["event"]: k["frame"] for k in geometry.keyframes}
    for entry in truth.keyframes:
        assert abs(found[entry["event"]] - entry["frame"]) <= 3, (entry, found)


def test_without_depth_or_recording_a_resting_object_stays_on_the_table(tmp_path: Path) -> None:
    folder = _without_depth(tmp_path, trajectory=False)
    geometry = run_geometry(load_demo(folder), true_masks(folder))
    truth = load_truth(folder)
    block = next(o for o in geometry.objects if o.name == "block")
    grasp = truth.keyframe("grasp", "block")
    true_world = np.array([f.position_world for f in truth.objects["block"].frames[: grasp - 10]])
    # Before the hand comes near, the silhouettes alone place it within millimetres.
    assert np.abs(block.motion.positions[: grasp - 10] - true_world).max() < 0.005
    assert _rms_error(geometry, truth, "cup") < 0.01


def test_no_depth_and_no_pose(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shutil.rmtree(folder / "depth")
    with pytest.raises(GeometryError, match="no depth/ folder and camera.json has no world_from_camera"):
        run_geometry(load_demo(folder), true_masks(folder))


def test_depth_of_another_size(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    cv2.imwrite(str(folder / "depth" / "000000.png"), np.zeros((10, 10), np.uint16))
    with pytest.raises(DemoFolderError, match=r"depth/000000.png is 10x10 but the video is 640x480"):
        load_demo(folder)  # checked at the door, before any stage


def test_depth_all_zero_under_an_object(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    segmentation = true_masks(folder)
    cup = segmentation.objects[1]
    for frame in range(len(cup.masks)):
        path = folder / "depth" / f"{frame:06d}.png"
        depth = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        depth[cv2.dilate(cup.masks[frame].astype(np.uint8), np.ones((7, 7), np.uint8)) > 0] = 0
        cv2.imwrite(str(path), depth)
    with pytest.raises(GeometryError, match="object 'cup': no depth readings under its mask on frame 0"):
        run_geometry(load_demo(folder), segmentation)


def test_object_that_does_not_rest_on_the_table(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    prompts = json.loads((folder / "prompts.json").read_text())
    prompts["objects"][0]["frame"] = 85  # the block is carried high then
    (folder / "prompts.json").write_text(json.dumps(prompts))
    with pytest.raises(GeometryError, match=r"object 'block' does not rest on the table on frame 85"):
        run_geometry(load_demo(folder), true_masks(folder))


def test_mask_of_a_few_pixels(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    segmentation = true_masks(folder)
    tiny = np.zeros_like(segmentation.objects[0].masks[0])
    tiny[300:302, 200:202] = True
    segmentation.objects[0].masks = [tiny] * len(segmentation.objects[0].masks)
    with pytest.raises(GeometryError, match="object 'block': no depth readings under its mask on frame 0"):
        run_geometry(load_demo(folder), segmentation)


def test_a_hint_that_does_not_fit_falls_back_to_a_mesh() -> None:
    from real2gym.real2gym_addon.demo import Camera

    camera = Camera(200, 200, 200.0, 200.0, 100.0, 100.0)
    camera_from_world = np.array([[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, 1.0], [0, 0, 0, 1]], float)
    mask = np.zeros((200, 200), bool)  # an L seen from above
    mask[60:140, 60:80] = True
    mask[120:140, 60:140] = True
    xs, ys = np.meshgrid(np.linspace(-0.2, 0.2, 40), np.linspace(-0.2, 0.2, 40))
    points = np.c_[xs.ravel(), ys.ravel(), np.full(xs.size, 0.02)]
    pixels = np.c_[points[:, 0] * 200 / 1.0 + 100, -points[:, 1] * 200 / 1.0 + 100].astype(int)
    points = points[mask[pixels[:, 1].clip(0, 199), pixels[:, 0].clip(0, 199)]]
    fitted, warning = fit_shape("cylinder", [RestView(mask, points, camera_from_world)], camera)
    assert fitted.shape.kind == "mesh" and "fits badly" in warning
    assert fitted.shape.mesh().is_watertight


def test_silhouette_coverage_is_unbiased() -> None:
    from real2gym.real2gym_addon.geometry.silhouette import polygon_coverage, silhouette_iou

    # A rotated rectangle with fractional corners: the covered area is the polygon's.
    angle = np.radians(23.0)
    corners = np.array([[-13.3, -7.6], [13.3, -7.6], [13.3, 7.6], [-13.3, 7.6]])
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    polygon = corners @ rotation.T + [40.2, 35.7]
    coverage = polygon_coverage(polygon, 0, 0, 80, 70)
    assert coverage.sum() == pytest.approx(cv2.contourArea(polygon.astype(np.float32)), rel=0.005)
    assert coverage.sum() == pytest.approx(polygon_coverage(polygon[::-1], 0, 0, 80, 70).sum())
    # Against the mask a camera samples (pixel centres inside), the true outline matches best:
    # a grown or shrunk one matches worse.
    us, vs = np.meshgrid(np.arange(80), np.arange(70))
    local = (np.c_[us.ravel(), vs.ravel()] - [40.2, 35.7]) @ rotation
    mask = ((np.abs(local[:, 0]) < 13.3) & (np.abs(local[:, 1]) < 7.6)).reshape(70, 80)
    ious = {s: silhouette_iou((polygon - [40.2, 35.7]) * s + [40.2, 35.7], mask) for s in (0.97, 1.0, 1.03)}
    assert ious[1.0] > max(ious[0.97], ious[1.03])
