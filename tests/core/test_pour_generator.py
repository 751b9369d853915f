"""tools/make_pour_demo.py: a small pour demo has its files, a cup prompted with its contents and the pour task,
nearly all its spheres end in the bowl after the events in order; the missed pour spills them on the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT, FRAMES = 160, 120, 72
SMALL = ["--size", f"{WIDTH}x{HEIGHT}", "--frames", str(FRAMES), "--fps", "10", "--seed", "1"]  # 7.2 s


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_pour_demo.py"), "--out", str(out), *SMALL, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )


@pytest.fixture(scope="module")
def poured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame pour demo (7.2 s at 10 fps) with its recording, the camera's pose and the true masks."""
    out = tmp_path_factory.mktemp("pour") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera", "--given-masks")
    assert result.returncode == 0, result.stderr
    return out


def test_the_folder_has_the_contract_files(poured: Path) -> None:
    for name in ("video.mp4", "camera.json", "prompts.json", "trajectory.json", "truth.json", "README.md"):
        assert (poured / name).is_file(), name
    assert len(list((poured / "depth").glob("*.png"))) == FRAMES
    for name in ("cup", "bowl"):
        assert len(list((poured / "masks" / name).glob("*.png"))) == FRAMES
    camera = json.loads((poured / "camera.json").read_text())
    assert (camera["width"], camera["height"]) == (WIDTH, HEIGHT) and len(camera["world_from_camera"]) == 4
    samples = json.loads((poured / "trajectory.json").read_text())["samples"]
    assert len(samples) == FRAMES and all(len(s["quaternion"]) == 4 for s in samples)


def test_the_prompts_give_the_cups_contents_and_the_pour(poured: Path) -> None:
    prompts = json.loads((poured / "prompts.json").read_text())
    cup, bowl = prompts["objects"]
    assert (cup["name"], cup["shape"], cup["role"]) == ("cup", "cup", "manipulated")
    assert cup["contents"] == {"kind": "particles", "count": 30, "radius": 0.004}
    assert (bowl["name"], bowl["shape"], bowl["role"]) == ("bowl", "bowl", "container")
    assert "contents" not in bowl
    assert prompts["task"] == {"type": "pour", "object": "cup", "target": "bowl"}


def test_the_spheres_end_in_the_bowl_after_the_events_in_order(poured: Path) -> None:
    truth = load_truth(poured)
    assert truth.raw["scene"] == "pour"
    frames = {k["event"]: k["frame"] for k in truth.keyframes}
    assert frames["grasp"] < frames["lift"] < frames["pour_start"] < frames["pour_end"] < frames["release"]
    contents = truth.raw["contents"]
    assert contents["count"] == 30 and contents["landed_share"] >= 0.9
    assert contents["landed_in_target"] == round(contents["landed_share"] * 30)
    assert len(contents["start_positions_world"]) == len(contents["end_positions_world"]) == 30
    cup = truth.objects["cup"]
    assert cup.params["inner_radius"] == pytest.approx(
        cup.params["outer_radius"] - cup.params["wall_thickness"]
    )
    assert 2 * cup.params["outer_radius"] < 0.08  # the gripper's opening
    # The spheres start in the cup, below its rim, and the cup ends back upright on the table.
    cup_xy = cup.frames[0].position_world[:2]
    for x, y, z in contents["start_positions_world"]:
        assert (x - cup_xy[0]) ** 2 + (y - cup_xy[1]) ** 2 < cup.params["inner_radius"] ** 2
        assert z < cup.params["height"]
    assert cup.frames[-1].position_world[2] == pytest.approx(cup.params["height"] / 2, abs=0.003)
    assert all(check["passed"] for check in truth.raw["checks"].values())


def test_the_missed_pour_spills_on_the_table_and_a_short_video_is_refused(tmp_path: Path) -> None:
    result = _generate(tmp_path / "miss", "--miss", "0.12")
    assert result.returncode == 0, result.stderr
    truth = load_truth(tmp_path / "miss")
    assert truth.raw["contents"]["landed_share"] <= 0.2
    assert truth.raw["checks"]["missed_on_purpose"]["passed"]
    short = _generate(tmp_path / "short", "--frames", "40")
    assert short.returncode == 2 and "at least" in short.stderr
    assert not (tmp_path / "short").exists()
