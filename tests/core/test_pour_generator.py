"""tools/make_pour_demo.py: a small pour demo has its files, a cup prompted with its contents and the pour task,
nearly all its spheres end in the bowl after the events in order; the missed pour spills them on the table.

Then the pipeline on those films (made by the generator's own MuJoCo model, not the exporter): the recorded
pour verifies with its landed share near the film's, its variants verify, its Gymnasium environment rewards
the demo's actions; without the recording the synthesised hand (from the side) pours too; the missed pour
fails ``task_success``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from task_generators import assert_contract_files, run_generator, small_options

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.fixes.suggest import suggest_fixes
from real2gym.real2gym_addon.tasks import TASKS
from real2gym.real2gym_addon.truth import load_truth

FRAMES = 72
SMALL = small_options(FRAMES)  # 7.2 s
TOOL = "make_pour_demo.py"


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return run_generator(TOOL, out, SMALL, *args)


@pytest.fixture(scope="module")
def poured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame pour demo (7.2 s at 10 fps) with its recording, the camera's pose and the true masks."""
    out = tmp_path_factory.mktemp("pour") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera", "--given-masks")
    assert result.returncode == 0, result.stderr
    return out


def test_the_folder_has_the_contract_files(poured: Path) -> None:
    assert_contract_files(poured, FRAMES, ("cup", "bowl"))


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


@pytest.fixture(scope="module")
def missed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same pour tipped 12 cm short of the bowl."""
    out = tmp_path_factory.mktemp("pour_miss") / "demo"
    result = _generate(
        out, "--miss", "0.12", "--with-trajectory", "--with-world-from-camera", "--given-masks"
    )
    assert result.returncode == 0, result.stderr
    return out


def test_the_missed_pour_spills_on_the_table_and_a_short_video_is_refused(
    missed: Path, tmp_path: Path
) -> None:
    truth = load_truth(missed)
    assert truth.raw["contents"]["landed_share"] <= 0.2
    assert truth.raw["checks"]["missed_on_purpose"]["passed"]
    short = _generate(tmp_path / "short", "--frames", "40")
    assert short.returncode == 2 and "at least" in short.stderr
    assert not (tmp_path / "short").exists()


def _run(demo: Path, out: Path, *extra: str) -> dict:
    code = main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q", *extra])
    report = json.loads((out / "report.json").read_text())
    assert code == (0 if report["verification"]["passed"] else 1)
    return report


def test_the_recorded_pour_verifies_varies_and_rewards_the_demo(poured: Path, tmp_path: Path) -> None:
    from real2gym.real2gym_addon.gym import make_env

    report = _run(poured, tmp_path / "out")
    assert report["verification"]["passed"], report["verification"]["checks"]
    landed = report["verification"]["checks"]["task_success"]
    true_share = load_truth(poured).raw["contents"]["landed_share"]
    assert landed["count"] == 30 and abs(landed["landed_share"] - true_share) <= 0.1
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    assert cup["contents"] == {"kind": "particles", "count": 30, "radius": 0.004, "density": 1000.0}
    events = [k["event"] for k in report["keyframes"]]
    assert (
        events.index("lift") < events.index("pour_start") < events.index("pour_end") < events.index("release")
    )
    assert main(["vary", str(tmp_path / "out"), "--count", "2"]) == 0
    summary = json.loads((tmp_path / "out" / "variants" / "summary.json").read_text())
    assert sum(entry["passed"] for entry in summary) >= 1, summary
    assert main(["export-gym", str(tmp_path / "out"), "--to", str(tmp_path / "env")]) == 0
    env = make_env(tmp_path / "env", randomize=True)
    env.reset(seed=3)
    start = env._task_state("cup", "bowl")
    assert TASKS["pour"].success(start)["left_in_source"] == 30  # packed in the cup where it starts now
    reward, info = 0.0, {}
    for action in env.demo_actions():
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert reward == 1.0 and info["is_success"]


def test_without_the_recording_the_hand_takes_the_cup_from_the_side_and_pours(
    poured: Path, tmp_path: Path
) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(poured, demo, ignore=shutil.ignore_patterns("trajectory.json"))
    report = _run(demo, tmp_path / "out", "--margin", "0")
    assert report["gripper"]["source"] == "synthesised"
    checks = report["verification"]["checks"]
    assert report["verification"]["passed"], checks
    assert checks["task_success"]["landed_share"] >= 0.9


def test_the_missed_pour_fails_task_success_and_the_suggested_aim_mends_it(
    missed: Path, tmp_path: Path
) -> None:
    """The pour tipped 12 cm short fails on its landed share alone; the suggestion moves the hand's pour over
    the bowl by where the stream came down, and one repair step verifies it."""
    out = tmp_path / "out"
    report = _run(missed, out, "--margin", "0")
    checks = report["verification"]["checks"]
    result = checks["task_success"]
    assert not result["passed"] and result["landed_share"] <= 0.2
    assert [name for name, check in checks.items() if not check["passed"]] == ["task_success"]
    miss = np.subtract(result["target_centre_m"], result["stream_centre_m"])
    assert 0.05 < np.linalg.norm(miss) < 0.12  # tipped 12 cm short; the spheres fly a little on
    suggestions = suggest_fixes(report)
    assert suggestions[0]["fix"]["kind"] == "pour_offset" and suggestions[0]["frame"] == next(
        k["frame"] for k in report["keyframes"] if k["event"] == "pour_start"
    )
    before = np.array([s["position_world"] for s in report["gripper"]["frames"]])
    assert main(["fix", str(out), "--repair", "--margin", "0", "-q"]) == 0
    fixed = json.loads((out / "report.json").read_text())
    assert fixed["verification"]["passed"], fixed["verification"]["checks"]["task_success"]
    after = np.array([s["position_world"] for s in fixed["gripper"]["frames"]])
    pour = next(k["frame"] for k in fixed["keyframes"] if k["event"] == "pour_start")
    assert np.allclose(after[0], before[0]) and np.allclose(
        after[-1], before[-1]
    )  # taken and set down as filmed
    assert np.allclose(after[pour, :2] - before[pour, :2], suggestions[0]["fix"]["delta"][:2], atol=1e-4)
