"""tools/make_hang_demo.py: a small hang demo has its files, a rack whose parameters give its box, and a mug
that ends hanging above the table; the failing version lets the mug fall."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from task_generators import assert_contract_files, run_generator, small_options

from real2gym.real2gym_addon.truth import load_truth

FRAMES = 72
SMALL = small_options(FRAMES)  # 7.2 s
TOOL = "make_hang_demo.py"


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return run_generator(TOOL, out, SMALL, *args)


@pytest.fixture(scope="module")
def hung(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame hang demo (7.2 s at 10 fps) with its recording and the camera's pose."""
    out = tmp_path_factory.mktemp("hang") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera")
    assert result.returncode == 0, result.stderr
    return out


def _rack_box(params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The rack's box in the post's frame (its axis at x = y = 0, z = 0 at its bottom), from its parameters."""
    reach = params["base_radius"]
    low, high = np.array([-reach, -reach, 0.0]), np.array([reach, reach, params["post_height"]])
    e, r = params["peg_elevation"], params["peg_radius"]
    for i in range(int(params["peg_count"])):
        a = params[f"peg{i}_azimuth"]
        root = np.array([0.0, 0.0, params[f"peg{i}_height"]])
        tip = root + params["peg_length"] * np.array(
            [math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)]
        )
        low = np.minimum(low, np.minimum(root, tip) - r)
        high = np.maximum(high, np.maximum(root, tip) + r)
    return low, high


def test_the_folder_has_the_contract_files(hung: Path) -> None:
    assert_contract_files(hung, FRAMES)
    prompts = json.loads((hung / "prompts.json").read_text())
    mug, rack = prompts["objects"]
    assert (mug["name"], mug["shape"], mug["role"]) == ("mug", "mug", "manipulated")
    assert (rack["name"], rack["shape"], rack["role"]) == ("rack", "rack", "static")
    assert prompts["task"] == {"type": "hang", "object": "mug", "target": "rack"}


def test_the_racks_parameters_give_its_box_and_its_pose(hung: Path) -> None:
    truth = load_truth(hung)
    rack = truth.objects["rack"]
    params = rack.params
    assert params["peg_count"] in (2, 3) and 0 <= params["hung_on_peg"] < params["peg_count"]
    low, high = _rack_box(params)
    assert rack.size == pytest.approx(high - low, abs=2e-6)
    # The box's centre (the pose) less the centre's offset from the post's axis is the post's axis.
    first = rack.frames[0]
    turn = Rotation.from_quat(first.quaternion_world, scalar_first=True)
    foot = np.asarray(first.position_world) - turn.apply((low + high) / 2)
    assert foot[:2] == pytest.approx(params["post_axis_world"], abs=2e-6)
    assert foot[2] == pytest.approx(0.0, abs=2e-6)  # the rack stands on the table
    mug = truth.objects["mug"]
    assert mug.size[0] == pytest.approx(mug.params["outer_radius"] + mug.params["handle_reach"], abs=2e-6)
    opening = mug.params["handle_top"] - mug.params["handle_bottom"] - 2 * mug.params["handle_thickness"]
    assert opening >= 0.04  # a peg passes through the loop


def test_the_mug_ends_hanging_above_the_table(hung: Path) -> None:
    truth = load_truth(hung)
    frames = {k["event"]: k["frame"] for k in truth.keyframes}
    assert frames["grasp"] <= frames["lift"] < frames["release"] <= frames["hang"] <= FRAMES - 10  # still 1 s
    assert truth.objects["mug"].frames[-1].position_world[2] > 0.02 + truth.objects["mug"].size[2] / 2
    assert truth.raw["checks"]["mug_hangs"]["passed"]


def test_the_missed_demo_drops_the_mug_and_a_short_video_is_refused(tmp_path: Path) -> None:
    result = _generate(tmp_path / "miss", "--miss", "0.04")
    assert result.returncode == 0, result.stderr
    truth = load_truth(tmp_path / "miss")
    assert "hang" not in {k["event"] for k in truth.keyframes}
    assert truth.raw["checks"]["missed_on_purpose"]["lowest_above_table_m"] < 0.01  # on the table
    short = _generate(tmp_path / "short", "--frames", "40")
    assert short.returncode == 2 and "at least" in short.stderr
    assert not (tmp_path / "short").exists()
