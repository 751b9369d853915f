"""tools/make_articulated_demo.py: a small microwave demo has its files, its parts and a door that ends closed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.truth import decode_rle, load_truth

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 160, 120
SMALL = ["--width", str(WIDTH), "--height", str(HEIGHT), "--seed", "1"]


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_articulated_demo.py"), "--out", str(out), *SMALL, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )


@pytest.fixture(scope="module")
def microwave(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 36-frame microwave demo (7.5 s at 4.8 fps) with its recording and the true masks."""
    out = tmp_path_factory.mktemp("articulated") / "microwave"
    result = _generate(
        out, "--scene", "microwave", "--frames", "36", "--fps", "4.8", "--with-trajectory", "--given-masks"
    )
    assert result.returncode == 0, result.stderr
    assert "closed" in result.stdout
    return out


def test_the_folder_has_the_contract_files(microwave: Path) -> None:
    for name in ("video.mp4", "camera.json", "prompts.json", "trajectory.json", "truth.json", "README.md"):
        assert (microwave / name).is_file(), name
    assert len(list((microwave / "depth").glob("*.png"))) == 36
    for name in ("microwave", "microwave.door", "cup"):  # masks made elsewhere, parts named <object>.<part>
        masks = sorted((microwave / "masks" / name).glob("*.png"))
        assert masks and cv2.imread(str(masks[0]), cv2.IMREAD_UNCHANGED).shape == (HEIGHT, WIDTH), name
    samples = json.loads((microwave / "trajectory.json").read_text())["samples"]
    assert len(samples) == 36 and all(len(s["quaternion"]) == 4 for s in samples)


def test_prompts_give_the_body_its_door_and_the_two_step_task(microwave: Path) -> None:
    prompts = json.loads((microwave / "prompts.json").read_text())
    body, cup = prompts["objects"]
    assert (body["name"], body["shape"], body["role"]) == ("microwave", "cabinet", "static")
    assert (cup["name"], cup["shape"], cup["role"]) == ("cup", "cup", "manipulated")
    (door,) = body["parts"]
    assert door["name"] == "door" and door["joint"] == "auto"
    x0, y0, x1, y1 = door["box"]
    assert 0 <= x0 < x1 <= WIDTH and 0 <= y0 < y1 <= HEIGHT
    mask = load_truth(microwave).objects["microwave.door"].frames[door["frame"]].mask()
    x, y, label = door["points"][0]
    assert label == 1 and mask[y, x]  # the point is on the door
    assert "size" not in body  # depth gives the scale
    assert prompts["task"] == {"type": "steps", "steps": [
        {"type": "place_in", "object": "cup", "target": "microwave"},
        {"type": "close", "object": "microwave", "part": "door"}]}  # fmt: skip


def test_truth_has_the_hinge_and_the_door_ends_closed(microwave: Path) -> None:
    truth = load_truth(microwave)
    assert set(truth.objects) == {"microwave", "microwave.door", "cup"}
    assert truth.objects["microwave.door"].params["part_of"] == "microwave"
    (joint,) = truth.raw["joints"]
    assert (joint["object"], joint["part"], joint["type"]) == ("microwave", "door", "hinge")
    assert np.allclose(np.abs(joint["axis_world"]), [0, 0, 1])  # a vertical hinge
    assert len(joint["q"]) == 36 and joint["closed_q"] == 0.0
    assert 80 <= math.degrees(joint["q"][0]) <= 110  # starts open
    assert abs(math.degrees(joint["q"][-1])) < 2  # ends closed
    assert joint["range"][0] <= min(joint["q"]) and max(joint["q"]) <= joint["range"][1]
    events = {(k["event"], k.get("part")): k["frame"] for k in truth.keyframes}
    assert (
        events[("grasp", None)]
        < events[("release", None)]
        < events[("push", "door")]
        <= events[("closed", "door")]
    )
    assert truth.raw["checks"]["cup_in_microwave"]["passed"]
    # The door's mask moves as the door swings shut: far apart on the first and last frame.
    door = truth.objects["microwave.door"].frames
    first, last = decode_rle(door[0].rle), decode_rle(door[-1].rle)
    assert first.any() and last.any() and (first & last).sum() < 0.5 * min(first.sum(), last.sum())


def test_rgb_only_writes_no_depth_and_gives_the_known_size(tmp_path: Path) -> None:
    out = tmp_path / "drawer"
    result = _generate(out, "--scene", "drawer", "--frames", "24", "--fps", "6", "--rgb-only")
    assert result.returncode == 0, result.stderr
    assert not (out / "depth").exists()
    prompts = json.loads((out / "prompts.json").read_text())
    (chest,) = prompts["objects"]
    truth = load_truth(out)
    assert chest["size"] == pytest.approx(truth.objects["chest"].size.tolist(), abs=1e-5)
    assert chest["parts"][0]["name"] == "drawer" and len(chest["parts"][0]["handle"]) == 4
    assert prompts["task"] == {"type": "open", "object": "chest", "part": "drawer"}
    (joint,) = truth.raw["joints"]
    assert joint["type"] == "slide" and 0.12 <= joint["q"][-1] <= 0.20
