"""Variants of the verified demo: drawn, adapted, re-verified in parallel (pool and Ray), exported as an env."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path

import mujoco
import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.errors import Real2GymError
from real2gym.real2gym_addon.geometry.report_io import geometry_from_report
from real2gym.real2gym_addon.report import read_report
from real2gym.real2gym_addon.variants.adapt import adapt, find_segments
from real2gym.real2gym_addon.variants.batch import read_summary, vary
from real2gym.real2gym_addon.variants.executors import run_jobs
from real2gym.real2gym_addon.variants.plan import (
    AppearanceRanges,
    PlanError,
    Ranges,
    VariationPlan,
    base_params,
    shrink,
    signature,
)
from real2gym.real2gym_addon.variants.run import BaseScene, VariantRejected, vary_geometry

DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"
ENTRY_KEYS = {"id", "passed", "reason", "params", "seconds"}


@pytest.fixture(scope="module")
def verified_run(verified_demo_run: Path) -> Path:
    return verified_demo_run


@pytest.fixture
def run(verified_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(verified_run, tmp_path / "run"))


def _comparable(entries: list[dict]) -> list[tuple]:
    return [(e["id"], e["passed"], e["reason"], e["signature"], e["attempts"]) for e in entries]


def test_variants_are_verified_written_and_rebuilt_from_their_plan(run: Path) -> None:
    entries = vary(run, 4, VariationPlan(seed=3), jobs=2)
    assert all(ENTRY_KEYS <= set(e) for e in entries)
    assert sum(e["passed"] for e in entries) >= 3, [e["reason"] for e in entries]
    folder = run / "variants"
    assert json.loads((folder / "summary.json").read_text()) == entries
    assert "verified" in (folder / "summary.html").read_text()
    assert VariationPlan.from_json(json.loads((folder / "plan.json").read_text())).seed == 3
    signatures = set()
    for entry in (e for e in entries if e["passed"]):
        variant = folder / entry["id"]
        model = mujoco.MjModel.from_xml_path(str(variant / "mjcf" / "scene.xml"))
        assert model.nbody > 3
        report = json.loads((variant / "report.json").read_text())
        assert report["verification"]["passed"] and report["variant"]["params"] == entry["params"]
        # The physics it was verified with, so that verifying it again keeps it.
        assert all(o["mass"] > 0 and o["friction"] > 0 for o in report["objects"])
        assert (
            len(json.loads((variant / "trajectory.json").read_text())["samples"]) == report["video"]["frames"]
        )
        signatures.add(entry["signature"])
    assert len(signatures) == sum(e["passed"] for e in entries), "duplicate parameters"
    # Any variant is its plan and its index: the first try's parameters are the plan's draw.
    base = BaseScene.load(run)
    first = next(e for e in entries if e["attempts"] == 1)
    assert VariationPlan(seed=3).draw(first["index"], base.objects) == first["params"]
    moved = [e["params"]["objects"]["block"]["dx"] for e in entries]
    assert len(set(moved)) == len(moved) and max(np.abs(moved)) > 0.002


def test_the_adapted_path_moves_with_each_object_and_holds_still_before_the_fingers_move(run: Path) -> None:
    report = read_report(run)
    geometry = geometry_from_report(report)
    task = report.task
    segments = find_segments(geometry, task)
    settle = 3
    changes = {"block": {"dx": 0.04, "dy": 0.0, "dyaw_deg": 0.0, "scale": 1.0},
               "cup": {"dx": -0.03, "dy": 0.02, "dyaw_deg": 0.0, "scale": 1.0}}  # fmt: skip
    varied = adapt(geometry, task, changes, 0.0, settle)
    old, new = geometry.gripper.positions, varied.gripper.positions
    assert len(new) == len(old) + 2 * settle
    # Approach and grasp: with the block.
    assert np.allclose(new[: segments.closing] - old[: segments.closing], [0.04, 0.0, 0.0], atol=1e-9)
    # The hold before closing: the hand still, fingers as they were.
    hold = slice(segments.closing, segments.closing + settle + 1)
    assert np.allclose(new[hold], new[segments.closing])
    assert np.allclose(varied.gripper.opening[hold], geometry.gripper.opening[segments.closing])
    # Release and retreat: with the cup.
    tail = len(old) - segments.release
    assert np.allclose(new[-tail:] - old[-tail:], [-0.03, 0.02, 0.0], atol=1e-9)
    events = {k["event"]: k["frame"] for k in varied.keyframes}
    original = {k["event"]: k["frame"] for k in geometry.keyframes}
    assert (
        events["grasp"] == original["grasp"] + settle
        and events["release"] == original["release"] + 2 * settle
    )
    # The block moves with the hand while held: the same grip on every held frame.
    block = next(o for o in varied.objects if o.name == "block").motion.positions
    held = np.arange(events["grasp"] + 1, events["release"] - 1)
    grip = block[held] - new[held]
    assert np.ptp(grip, axis=0).max() < 0.01


def test_a_variant_that_keeps_failing_is_shrunk_then_dropped_with_its_reason(run: Path) -> None:
    # A cup opening a tenth of the demo's: shrunk five times toward the demo it is still too narrow.
    plan = VariationPlan(seed=1, mechanical=Ranges(rim_scale=(0.1, 0.1), distractors=(0, 0)))
    entries = vary(run, 2, plan, jobs=1, render=False)
    for entry in entries:
        assert not entry["passed"] and entry["attempts"] == 6, entry
        assert "task_success" in entry["reason"] and "shrunk toward the demo" in entry["reason"]
    assert not any(p.is_dir() for p in (run / "variants").iterdir())


def test_shrinking_moves_every_mechanical_parameter_toward_the_demo() -> None:
    objects = [
        {"name": "block", "role": "manipulated", "kind": "box"},
        {"name": "cup", "role": "target", "kind": "cup"},
    ]
    params = VariationPlan(seed=4).draw(0, objects)
    smaller = shrink(params)
    assert abs(smaller["objects"]["block"]["dx"]) < abs(params["objects"]["block"]["dx"])
    assert abs(smaller["objects"]["cup"]["rim_scale"] - 1) < abs(params["objects"]["cup"]["rim_scale"] - 1)
    assert smaller["appearance"] == params["appearance"]
    for _ in range(200):
        smaller = shrink(smaller)
    assert signature({**smaller, "appearance": {}, "distractors": []}) == signature(base_params(objects))


def test_bad_plans_and_unplaceable_ranges_are_refused_with_their_reason(run: Path) -> None:
    with pytest.raises(PlanError, match="size_scale"):
        VariationPlan(mechanical=Ranges(size_scale=(1.2, 0.8))).check()
    with pytest.raises(PlanError, match="unknown keys: colour"):
        VariationPlan.from_json({"appearance": {"colour": True}})
    crowded = VariationPlan(mechanical=Ranges(distractors=(6, 6), distractor_size_m=(0.5, 0.5)))
    with pytest.raises(PlanError, match="no valid placement"):
        vary(run, 3, crowded)
    assert not (run / "variants").exists()
    base = BaseScene.load(run)
    far = base_params(base.objects)
    far["objects"]["block"]["dx"] = 0.9
    with pytest.raises(VariantRejected, match="off the table|unreachable"):
        vary_geometry(base, far, 0)


def test_a_seed_used_with_other_ranges_is_refused(run: Path) -> None:
    vary(run, 1, VariationPlan(seed=5), render=False)
    with pytest.raises(PlanError, match="seed 5 was used with other ranges"):
        vary(run, 1, VariationPlan(seed=5, mechanical=Ranges(position_m=0.01)), render=False)
    vary(run, 1, VariationPlan(seed=5), render=False)  # the same plan again is fine


def test_an_unverified_run_is_not_varied(run: Path) -> None:
    report = json.loads((run / "report.json").read_text())
    report["verification"]["passed"] = False
    (run / "report.json").write_text(json.dumps(report))
    with pytest.raises(Real2GymError, match="not verified"):
        vary(run, 2)


def test_appearance_only_variants_reuse_the_demos_physics(run: Path) -> None:
    plan = VariationPlan(seed=2, appearance=AppearanceRanges(only_share=1.0))
    entries = vary(run, 2, plan, render=False)
    assert all(e["passed"] and e["params"]["kind"] == "appearance" and e["attempts"] == 1 for e in entries)
    report = json.loads((run / "variants" / entries[0]["id"] / "report.json").read_text())
    assert report["verification"]["reused_from_demo"]
    xml = (run / "variants" / entries[0]["id"] / "mjcf" / "scene.xml").read_text()
    colour = entries[0]["params"]["appearance"]["colours"]["block"]
    assert f"{colour[0]:.6g}"[:5] in xml


def test_ray_gives_the_same_summary_as_the_process_pool(run: Path) -> None:
    pytest.importorskip("ray")
    plan = VariationPlan(seed=7)
    pooled = _comparable(vary(run, 3, plan, jobs=2, render=False))
    by_ray = _comparable(vary(run, 3, plan, jobs=2, executor="ray", render=False))
    assert by_ray == pooled
    assert _comparable(read_summary(run)) == pooled


def test_ray_asked_for_but_not_installed_says_what_to_install(monkeypatch) -> None:
    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(Real2GymError, match=r"pip install 'ray\[default\]'"):
        list(run_jobs(abs, [1], 1, executor="ray"))


def test_a_crashing_task_is_that_variants_result_not_the_batchs_end() -> None:
    results = dict(run_jobs(_fails_on_two, [1, 2, 3], 2))
    assert results[1] == 1 and results[3] == 3 and isinstance(results[2], ValueError)


def _fails_on_two(job: int) -> int:
    if job == 2:
        raise ValueError("two")
    return job


def test_the_command_line_varies_and_exports_an_environment(run: Path, tmp_path: Path, capsys) -> None:
    assert main(["vary", str(run), "--count", "2", "--jobs", "1", "--seed", "9", "-q"]) == 0
    assert "2 of 2 variants verified" in capsys.readouterr().out
    assert main(["vary", str(run), "--count", "2", "--executor", "spark"]) == 2
    assert main(["export-gym", str(run), "--to", str(tmp_path / "env")]) == 0
    assert (tmp_path / "env" / "task.json").is_file()
    assert main(["export-gym", str(run), "--to", str(tmp_path / "env2"), "--variant", "v0001"]) == 0
    assert main(["export-gym", str(run), "--to", str(tmp_path / "env3"), "--variant", "v0099"]) == 2


def test_the_exported_environment_passes_check_env_and_the_demo_succeeds_in_it(
    run: Path, tmp_path: Path
) -> None:
    gymnasium = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    from real2gym.real2gym_addon.gym import ENV_ID, make_env, register
    from real2gym.real2gym_addon.gym.export import export_gym

    folder = export_gym(run, tmp_path / "env").parent
    env = make_env(folder)
    check_env(env, skip_render_check=True)
    for seed in (0, 1):
        env.reset(seed=seed)
        for action in env.demo_actions():
            _, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert info["is_success"] and terminated and reward == 1.0, seed
    # Another seed starts elsewhere; doing nothing does not succeed.
    first, _ = env.reset(seed=0)
    other, _ = env.reset(seed=1)
    assert np.abs(first["objects"] - other["objects"]).max() > 0.002
    for _ in range(50):
        _, reward, terminated, _, _ = env.step(np.zeros(7, np.float32))
    assert reward == 0.0 and not terminated
    seeing = make_env(folder, render_mode="rgb_array", observe_image=True, width=160, height=120)
    observation, _ = seeing.reset(seed=0)
    assert observation["image"].shape == (120, 160, 3) and observation["image"].std() > 5
    assert seeing.render().shape == (120, 160, 3)
    assert seeing.observation_space.contains(seeing.step(np.zeros(7, np.float32))[0])
    seeing.close()
    register()
    made = gymnasium.make(ENV_ID, path=str(folder))
    made.reset(seed=0)
    made.close()
    (folder / "assets" / next(p.name for p in (folder / "assets").iterdir())).unlink()
    with pytest.raises(Real2GymError, match="assets/.* is missing"):
        make_env(folder)


def test_a_cancelled_batch_keeps_the_previous_set(run: Path) -> None:
    from real2gym.real2gym_addon.errors import Cancelled

    first = vary(run, 1, VariationPlan(seed=6), render=False)
    done = []
    with pytest.raises(Cancelled, match="previous set is kept"):
        vary(run, 3, VariationPlan(seed=6), progress=lambda *a: done.append(a), cancelled=lambda: bool(done))
    assert len(done) == 1
    assert read_summary(run) == first
    assert not (run / ".variants-staging").exists()
