"""The pipeline on tools/make_shelve_demo.py's films (its own MuJoCo model, not the exporter): a book carried in
through a shelf's open front and set on its middle board.

With the recording it verifies, the shelf's boards are fitted near the truth, its variants verify and its
Gymnasium environment rewards the demo's actions; without the recording the synthesised hand takes the book
across its narrow side and backs out the way it came; the book let go 8 cm short tips off the board and fails
``task_success`` alone, and the suggested ``place_offset`` mends it in one repair step, undone exactly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.fixes.suggest import suggest_fixes
from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--size", "160x120", "--frames", "72", "--fps", "10", "--seed", "1", "--with-trajectory",
         "--with-world-from-camera", "--given-masks"]  # fmt: skip


def _generate(out: Path, *args: str) -> Path:
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_shelve_demo.py"), "--out", str(out), *SMALL, *args],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def shelved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame shelving (7.2 s at 10 fps) with its recording, the camera's pose and the true masks."""
    return _generate(tmp_path_factory.mktemp("shelve") / "demo")


def _run(demo: Path, out: Path, *extra: str) -> dict:
    code = main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q", *extra])
    report = json.loads((out / "report.json").read_text())
    assert code == (0 if report["verification"]["passed"] else 1)
    return report


def test_the_recorded_shelving_verifies_fits_the_boards_varies_and_rewards_the_demo(
    shelved: Path, tmp_path: Path
) -> None:
    from real2gym.real2gym_addon.gym import make_env

    report = _run(shelved, tmp_path / "out", "--margin", "0")
    checks = report["verification"]["checks"]
    assert report["verification"]["passed"], checks
    assert checks["task_success"]["board"] == 1 and checks["task_success"]["support_share"] >= 0.9
    fitted = next(o for o in report["objects"] if o["name"] == "shelf")
    truth = load_truth(shelved).objects["shelf"]
    assert fitted["shape"] == "shelf" and fitted["params"]["board_count"] == truth.params["board_count"]
    for i in range(int(truth.params["board_count"])):
        key = f"board{i}_height"
        assert fitted["params"][key] == pytest.approx(truth.params[key], abs=0.006), key
    assert np.allclose(fitted["size"], truth.size, atol=0.012)
    assert main(["vary", str(tmp_path / "out"), "--count", "2"]) == 0
    summary = json.loads((tmp_path / "out" / "variants" / "summary.json").read_text())
    assert sum(entry["passed"] for entry in summary) >= 1, summary
    assert main(["export-gym", str(tmp_path / "out"), "--to", str(tmp_path / "env")]) == 0
    env = make_env(tmp_path / "env", randomize=True)
    env.reset(seed=3)
    reward, info = 0.0, {}
    for action in env.demo_actions():
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert reward == 1.0 and info["is_success"]


def test_without_the_recording_the_hand_takes_the_book_across_and_backs_out(
    shelved: Path, tmp_path: Path
) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(shelved, demo, ignore=shutil.ignore_patterns("trajectory.json"))
    report = _run(demo, tmp_path / "out", "--margin", "0")
    assert report["gripper"]["source"] == "synthesised"
    checks = report["verification"]["checks"]
    assert report["verification"]["passed"], checks
    book = next(o for o in report["objects"] if o["name"] == "book")
    narrow = min(book["size"][:2])
    release = next(k["frame"] for k in report["keyframes"] if k["event"] == "release")
    closed = report["gripper"]["frames"][release - 1]["gripper"] * report["gripper"]["max_opening_m"]
    assert closed < narrow  # closed on the book's narrow side, not opened past its long one


def test_a_book_let_go_short_fails_task_success_and_the_suggested_placing_mends_it(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    short = _generate(tmp_path_factory.mktemp("shelve_short") / "demo", "--short", "0.08")
    out = tmp_path / "out"
    report = _run(short, out, "--margin", "0")
    checks = report["verification"]["checks"]
    # It fails on where it ended; the book held in the hand to the release is not what failed. (Its fall off the
    # board's edge may also part from the film's, and pass the hand backing away: those follow from it.)
    assert not checks["task_success"]["passed"] and checks["task_success"]["board"] is None
    assert checks["grasp_held"]["passed"] and checks["support"]["passed"]
    placing = next(s["fix"] for s in suggest_fixes(report) if s["check"] == "task_success")
    assert placing["kind"] == "place_offset"
    delta = np.asarray(placing["delta"])
    assert 0.02 < np.linalg.norm(delta) < 0.1  # let go 8 cm short; it needs to go in far enough to stand
    before = json.loads((out / "report.json").read_text())
    assert main(["fix", str(out), "--repair", "--margin", "0", "-q"]) == 0
    fixed = json.loads((out / "report.json").read_text())
    assert fixed["verification"]["passed"], fixed["verification"]["checks"]
    hand = [np.array([s["position_world"] for s in r["gripper"]["frames"]]) for r in (before, fixed)]
    assert np.allclose(hand[0][0], hand[1][0])  # taken where it was
    assert np.allclose(hand[1][-1] - hand[0][-1], delta, atol=1e-4)  # backs away from where it let go
    assert main(["fix", str(out), "--undo", "--margin", "0", "-q"]) == 1
    undone = json.loads((out / "report.json").read_text())
    assert undone["gripper"]["frames"] == before["gripper"]["frames"]
    assert [o["frames"] for o in undone["objects"]] == [o["frames"] for o in before["objects"]]
