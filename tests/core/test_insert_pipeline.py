"""The pipeline on tools/make_insert_demo.py's films (its own MuJoCo model, not the exporter): a peg carried
over a socket and put down into its round hole, a few millimetres wider than the peg.

With the recording it verifies, the socket's thick wall (its hole) is read from the depth, its variants
verify and its Gymnasium environment rewards the demo's actions; a hole 4 mm narrower than the peg, where the
film's peg stops on the rim, is not verified. (Without the recording, benchmarks/bench_tasks.py's
``insert_norec`` measures it: the release found from the peg's motion alone comes late.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--size", "320x240", "--frames", "72", "--fps", "10", "--seed", "1", "--with-trajectory",
         "--with-world-from-camera", "--given-masks"]  # fmt: skip
"""320x240: at 160x120 the peg is six pixels across and its socket's hole two."""


def _generate(out: Path, *args: str) -> Path:
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_insert_demo.py"), "--out", str(out), *SMALL, *args],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def inserted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame insertion (7.2 s at 10 fps) with its recording, the camera's pose and the true masks."""
    return _generate(tmp_path_factory.mktemp("insert") / "demo")


def _run(demo: Path, out: Path, *extra: str) -> dict:
    code = main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q", *extra])
    report = json.loads((out / "report.json").read_text())
    assert code == (0 if report["verification"]["passed"] else 1)
    return report


def test_the_recorded_insertion_verifies_reads_the_hole_varies_and_rewards_the_demo(
    inserted: Path, tmp_path: Path
) -> None:
    from real2gym.real2gym_addon.gym import make_env

    report = _run(inserted, tmp_path / "out", "--margin", "0")
    checks = report["verification"]["checks"]
    assert report["verification"]["passed"], checks
    task = checks["task_success"]
    assert task["inside_opening"] and task["inserted_depth_m"] >= task["required_depth_m"] >= 0.02
    socket = next(o for o in report["objects"] if o["name"] == "socket")
    truth = load_truth(inserted).objects["socket"].params
    assert abs(socket["params"]["inner_radius"] - truth["inner_radius"]) < 0.005  # the hole, not a thin cup's
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


def test_a_hole_narrower_than_the_peg_is_not_verified(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The film's peg stops on the rim. The hole, four pixels across, is not read from the depth (a thin wall
    stands in), so the simulated peg drops in: the verifier says the simulation left the film after the
    release, where the peg stayed up."""
    narrow = _generate(tmp_path_factory.mktemp("insert_narrow") / "demo", "--narrow", "0.004")
    report = _run(narrow, tmp_path / "out", "--margin", "0")
    checks = report["verification"]["checks"]
    assert not report["verification"]["passed"]
    failing = [name for name, check in checks.items() if not check["passed"]]
    assert "task_success" in failing or "trajectory_fidelity" in failing, failing
