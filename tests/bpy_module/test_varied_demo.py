"""tools/make_varied_demo.py: a tiny Cycles-rendered demo passes the pipeline's checks and its truth holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon import load_demo
from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
FRAMES, WIDTH, HEIGHT = 6, 320, 240
PAD = 2  # the generator's padding around the truth mask's bounding box


@pytest.fixture(scope="module")
def tiny_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 4: a can carried into a cup on a marble table, with depth; 6 frames, 320x240, 2 samples."""
    out = tmp_path_factory.mktemp("varied") / "demo"
    command = [
        sys.executable,
        str(REPO / "tools" / "make_varied_demo.py"),
        "--out",
        str(out),
        "--seed",
        "4",
        "--frames",
        str(FRAMES),
        "--size",
        f"{WIDTH}x{HEIGHT}",
        "--samples",
        "2",
    ]
    # A Blender user folder of its own: the bpy module (4.2) puts an installed extension's wheels ahead of
    # the venv's on sys.path, and the generator needs none of them.
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path_factory.mktemp("blender_user")))
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    return out


def _frames(demo_path: Path) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(demo_path / "video.mp4"))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            return frames
        frames.append(frame)


def test_the_folder_passes_the_pipelines_input_checks(tiny_demo: Path) -> None:
    demo = load_demo(tiny_demo)
    truth = load_truth(tiny_demo)
    assert demo.video.frames == FRAMES and (demo.video.width, demo.video.height) == (WIDTH, HEIGHT)
    assert demo.depth_dir is not None and demo.camera.world_from_camera is not None
    assert [o.name for o in demo.objects] == list(truth.objects) == ["can", "cup"]
    assert (demo.task.type, demo.task.object, demo.task.target) == ("place_in", "can", "cup")
    for track in truth.objects.values():
        assert len(track.frames) == FRAMES
        assert all(f.mask().shape == (HEIGHT, WIDTH) for f in track.frames)


def test_prompt_boxes_are_the_truth_masks_boxes_on_frame_0(tiny_demo: Path) -> None:
    demo, truth = load_demo(tiny_demo), load_truth(tiny_demo)
    for prompt in demo.objects:
        mask = truth.objects[prompt.name].frames[0].mask()
        rows, cols = np.nonzero(mask)
        expected = (cols.min() - PAD, rows.min() - PAD, cols.max() + 1 + PAD, rows.max() + 1 + PAD)
        assert np.allclose(prompt.box, np.clip(expected, 0, [WIDTH, HEIGHT] * 2)), prompt.name
        x, y, label = prompt.points[0]
        assert label == 1 and mask[int(y), int(x)], prompt.name
        assert truth.objects[prompt.name].frames[0].visible_fraction > 0.9


def test_each_mask_covers_its_object_in_the_image(tiny_demo: Path) -> None:
    """On frame 0 each truth mask's inside is coloured and a ring 2-4 px outside it is the grey table.

    The table (marble) is grey; the can and the cup are coloured. The video's chroma is
    subsampled and JPEG-compressed, so this checks the place to a pixel or two, not exactly.
    """
    frame = cv2.cvtColor(_frames(tiny_demo)[0], cv2.COLOR_BGR2LAB).astype(np.float32)
    coloured = np.hypot(frame[..., 1] - 128, frame[..., 2] - 128) > 10
    square = np.ones((3, 3), np.uint8)
    for name, track in load_truth(tiny_demo).objects.items():
        mask = track.frames[0].mask().astype(np.uint8)
        inside = cv2.erode(mask, square) > 0
        ring = (cv2.dilate(mask, square, iterations=4) > 0) & ~(cv2.dilate(mask, square, iterations=2) > 0)
        assert coloured[inside].mean() > 0.85, (name, coloured[inside].mean())
        assert coloured[ring].mean() < 0.2, (name, coloured[ring].mean())


def test_the_truth_is_where_the_camera_sees_the_object(tiny_demo: Path) -> None:
    """camera.json's intrinsics and pose project each object's 3-D centre into its mask's box."""
    camera = json.loads((tiny_demo / "camera.json").read_text())
    c_from_w = np.linalg.inv(np.asarray(camera["world_from_camera"]))
    for name, track in load_truth(tiny_demo).objects.items():
        for entry in track.frames:
            if entry.visible_fraction < 0.5:
                continue
            x, y, z = (c_from_w @ np.r_[entry.position_world, 1.0])[:3]
            assert np.allclose([x, y, z], entry.position_cam, atol=1e-5)
            u, v = camera["fx"] * x / z + camera["cx"], camera["fy"] * y / z + camera["cy"]
            rows, cols = np.nonzero(entry.mask())
            assert cols.min() - 2 <= u <= cols.max() + 2 and rows.min() - 2 <= v <= rows.max() + 2, (
                name,
                entry.frame,
            )


def test_the_hand_hides_part_of_the_carried_object_and_it_ends_in_the_cup(tiny_demo: Path) -> None:
    truth = load_truth(tiny_demo)
    can = truth.objects["can"].frames
    raw = {o["name"]: o for o in truth.raw["objects"]}["can"]["frames"]
    assert max(f["hidden_by_hand"] for f in raw) > 0.4
    assert any(0.05 < f.visible_fraction < 0.6 for f in can)
    assert (
        np.linalg.norm(can[-1].position_world[:2] - truth.objects["cup"].frames[-1].position_world[:2]) < 0.01
    )
    assert can[-1].visible_fraction < 0.95  # the cup's wall hides its lower part
    assert truth.keyframe("grasp", "can") < truth.keyframe("release", "can")
