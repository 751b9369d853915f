"""tools/make_demo.py: a small simulated demo follows the contract and its truth holds."""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from generated_demos import SMALL, generate

from real2gym.real2gym_addon import load_demo
from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT, FRAMES, FPS = 160, 120, 40, 12


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40-frame 160x120 demo with trajectory, camera pose and a distractor."""
    out = tmp_path_factory.mktemp("gen") / "demo"
    extra = ["--with-trajectory", "--with-world-from-camera", "--distractor"]
    result = generate(out, *SMALL, *extra)
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout and "grasp" in result.stdout
    return out


def test_folder_has_the_contract_files(small_demo: Path) -> None:
    for name in ("video.mp4", "camera.json", "prompts.json", "trajectory.json", "truth.json"):
        assert (small_demo / name).is_file(), name
    depth = sorted((small_demo / "depth").glob("*.png"))
    assert [p.name for p in depth] == [f"{i:06d}.png" for i in range(FRAMES)]
    demo = load_demo(small_demo)  # the pipeline's own reader accepts it
    assert demo.video.frames == FRAMES and demo.depth_dir is not None


def test_camera_json(small_demo: Path) -> None:
    camera = json.loads((small_demo / "camera.json").read_text())
    assert {"width", "height", "fx", "fy", "cx", "cy", "depth_scale"} <= set(camera)
    assert (camera["width"], camera["height"]) == (WIDTH, HEIGHT)
    assert camera["fx"] == camera["fy"] > 0
    assert camera["cx"] == pytest.approx((WIDTH - 1) / 2)
    assert camera["depth_scale"] == 0.001
    pose = np.array(camera["world_from_camera"])
    assert pose.shape == (4, 4)
    assert np.allclose(pose[:3, :3] @ pose[:3, :3].T, np.eye(3), atol=1e-5)
    assert pose[2, 3] > 0.2  # above the table, looking down at it
    assert pose[2, 2] < -0.3


def test_depth_pngs(small_demo: Path) -> None:
    camera = json.loads((small_demo / "camera.json").read_text())
    truth = load_truth(small_demo)
    for index in (0, FRAMES // 2, FRAMES - 1):
        depth = cv2.imread(str(small_demo / "depth" / f"{index:06d}.png"), cv2.IMREAD_UNCHANGED)
        assert depth.dtype == np.uint16 and depth.shape == (HEIGHT, WIDTH)
        metres = depth * camera["depth_scale"]
        valid = depth > 0
        assert 0.6 < valid.mean() < 0.999  # holes, but mostly readings
        assert 0.2 < np.median(metres[valid]) < 2.0
    # Table pixels of frame 0 lie on the true table plane (intrinsics, scale, pose agree).
    depth = cv2.imread(str(small_demo / "depth" / "000000.png"), cv2.IMREAD_UNCHANGED) * 0.001
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH]
    points = np.stack(
        [(u - camera["cx"]) / camera["fx"] * depth, (v - camera["cy"]) / camera["fy"] * depth, depth],
        axis=-1,
    )
    residual = points @ truth.table_normal_cam + truth.table_offset_cam
    near = (depth > 0) & (v > HEIGHT * 0.75)
    assert np.median(np.abs(residual[near])) < 0.005


def test_video_reads_back(small_demo: Path) -> None:
    capture = cv2.VideoCapture(str(small_demo / "video.mp4"))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    assert len(frames) == FRAMES
    assert frames[0].shape == (HEIGHT, WIDTH, 3)
    assert frames[0].std() > 10  # a scene, not a blank image


def test_prompts(small_demo: Path) -> None:
    prompts = json.loads((small_demo / "prompts.json").read_text())
    roles = {o["name"]: (o["role"], o["shape"]) for o in prompts["objects"]}
    assert roles == {
        "block": ("manipulated", "auto"),
        "cup": ("container", "cup"),
        "can": ("static", "auto"),
    }
    assert prompts["task"] == {"type": "place_in", "object": "block", "target": "cup"}
    truth = load_truth(small_demo)
    for entry in prompts["objects"]:
        x0, y0, x1, y1 = entry["box"]
        assert 0 <= x0 < x1 < WIDTH and 0 <= y0 < y1 < HEIGHT
        [[x, y, label]] = entry["points"]
        assert label == 1 and truth.objects[entry["name"]].frames[0].mask()[y, x]


def test_trajectory(small_demo: Path) -> None:
    trajectory = json.loads((small_demo / "trajectory.json").read_text())
    assert trajectory["frame_of"] == "camera"
    samples = trajectory["samples"]
    assert [s["frame"] for s in samples] == list(range(FRAMES))
    quats = np.array([s["quaternion"] for s in samples])
    assert np.allclose(np.linalg.norm(quats, axis=1), 1.0, atol=1e-4)
    grip = np.array([s["gripper"] for s in samples])
    assert grip.min() >= 0 and grip.max() <= 1
    assert grip[0] == pytest.approx(1.0) and grip.min() < 0.7  # opens, closes on the block


def test_truth_masks_and_outcome(small_demo: Path) -> None:
    truth = load_truth(small_demo)
    assert set(truth.objects) == {"block", "cup", "can"}
    for obj in truth.objects.values():
        assert len(obj.frames) == FRAMES
        for frame in obj.frames:
            mask = frame.mask()
            assert mask.shape == (HEIGHT, WIDTH)
            assert frame.visible == bool(mask.any())
            assert 0.0 <= frame.visible_fraction <= 1.0
    assert truth.objects["block"].frames[0].visible_fraction > 0.95
    assert truth.objects["cup"].params["inner_radius"] < truth.objects["cup"].params["outer_radius"]

    events = {k["event"]: k["frame"] for k in truth.keyframes}
    assert events["grasp"] < events["lift"] < events["release"] <= events["contact"] < FRAMES

    # Camera- and world-frame positions agree through world_from_camera.
    block = truth.objects["block"].frames[-1]
    pose = truth.world_from_camera
    assert np.allclose(pose[:3, :3] @ block.position_cam + pose[:3, 3], block.position_world, atol=1e-5)
    # The block ends in the cup, resting on its bottom.
    cup = truth.objects["cup"]
    cup_end = cup.frames[-1].position_world
    offset = block.position_world[:2] - cup_end[:2]
    assert np.linalg.norm(offset) < cup.params["inner_radius"]
    size = truth.objects["block"].size[2]
    cup_floor = cup_end[2] - cup.params["height"] / 2 + cup.params["bottom_thickness"]
    assert block.position_world[2] == pytest.approx(cup_floor + size / 2, abs=0.004)
    # While carried, the block was well above the table.
    lifted = truth.objects["block"].frames[(events["lift"] + events["release"]) // 2]
    assert lifted.position_world[2] > size / 2 + 0.05


def test_same_seed_same_truth(small_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    extra = ["--with-trajectory", "--with-world-from-camera", "--distractor", "--no-depth"]
    result = generate(out, *SMALL, *extra)
    assert result.returncode == 0, result.stderr
    first = json.loads((small_demo / "truth.json").read_text())
    second = json.loads((out / "truth.json").read_text())
    assert second["objects"] == first["objects"]
    assert second["keyframes"] == first["keyframes"]
    assert not (out / "depth").exists()


def test_too_short_a_video_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "short"
    result = generate(out, "--frames", "20", "--fps", "30", "--width", "64", "--height", "48")
    assert result.returncode != 0
    assert "at least" in result.stderr and "--frames" in result.stderr
    assert not out.exists()


def test_a_failed_grasp_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """With fingers that never close the checks fail and say why (make_demo exits 1)."""
    monkeypatch.syspath_prepend(str(REPO / "tools"))
    make_demo = importlib.import_module("make_demo")
    motion = importlib.import_module("_demo_motion")
    scene = importlib.import_module("_demo_scene")
    sim = importlib.import_module("_demo_sim")

    args = make_demo.parse_args(["--out", "unused", "--frames", "90"])
    layout = make_demo.sample_layout(args, np.random.default_rng(0))
    script = motion.plan_script(layout, 3.0, 0.0)
    never_closing = [dataclasses.replace(w, grip=motion.FINGER_TRAVEL) for w in script]
    start = never_closing[0]
    model = scene.build_model(
        layout, start.position, motion.top_down_quat(start.yaw), np.random.default_rng(0)
    )
    result = sim.simulate(model, layout, never_closing, 90, 30.0, lambda index, data: None)
    assert "grasp" not in result.keyframes
    assert result.failures and "grasp" in result.failures[0]
