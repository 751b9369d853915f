"""Variants of a scene with a moving part: its body moved, its start angle varied, the hand's path moved
with the part so that it grips the handle where it now is.

The scene is the session's generated cabinet whose door is swung open by its handle (``cabinet_run`` in
conftest.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.geometry.parts import part_key
from real2gym.real2gym_addon.report import read_report
from real2gym.real2gym_addon.variants import adapt as adapt_module
from real2gym.real2gym_addon.variants.adapt import AdaptError, adapt, find_segments
from real2gym.real2gym_addon.variants.batch import vary
from real2gym.real2gym_addon.variants.plan import PlanError, VariationPlan, base_params, shrink
from real2gym.real2gym_addon.variants.run import (
    BaseScene,
    VariantRejected,
    _part_spots,
    _verify,
    vary_geometry,
)


def _door(geometry):
    body = next(o for o in geometry.objects if o.parts)
    return body, body.parts[0], part_key(body.name, body.parts[0].name)


def _in_part(part, q: float, point: np.ndarray) -> np.ndarray:
    pose = part.pose_at(q)
    return pose[:3, :3].T @ (point - pose[:3, 3])


def test_a_door_started_open_is_gripped_where_its_handle_now_is(cabinet_run: Path) -> None:
    base = BaseScene.load(cabinet_run)
    assert base.task.get("part")  # an `open` task: the hand works on the door, its body stays
    _, door, key = _door(base.geometry)
    grasp = find_segments(base.geometry, base.task).grasp
    varied = adapt(base.geometry, base.task, {}, part_starts={key: 0.1})
    _, moved, _ = _door(varied)
    q, new_q = door.filled_q(), moved.filled_q()
    low, high = door.joint.range
    assert new_q[0] == pytest.approx(q[0] + 0.1 * (high - low), abs=1e-9)  # started further open
    assert new_q[-1] == pytest.approx(q[-1], abs=1e-9)  # and opened as far as the demo's
    # The hand grips the handle where it now stands: its place in the door's frame is the demo's.
    before = _in_part(door, q[grasp], base.geometry.gripper.positions[grasp])
    after = _in_part(moved, new_q[grasp], varied.gripper.positions[grasp])
    assert np.linalg.norm(after - before) < 1e-6
    hand_move = np.linalg.norm(varied.gripper.positions[grasp] - base.geometry.gripper.positions[grasp])
    assert hand_move > 0.01  # a tenth of the range is several degrees: the handle moved centimetres
    # Where the hand starts, nothing changed; no start change leaves the path as it was.
    assert np.allclose(varied.gripper.positions[0], base.geometry.gripper.positions[0])
    same = adapt(base.geometry, base.task, {}, part_starts={key: 0.0})
    assert np.allclose(same.gripper.positions, base.geometry.gripper.positions)


def test_a_door_the_demo_starts_shut_only_starts_more_open(cabinet_run: Path) -> None:
    base = BaseScene.load(cabinet_run)
    _, door, key = _door(base.geometry)
    varied = adapt(base.geometry, base.task, {}, part_starts={key: -0.1})
    low, high = door.joint.range
    assert _door(varied)[1].filled_q()[0] == pytest.approx(door.filled_q()[0] + 0.1 * (high - low), abs=1e-9)


def test_a_body_with_parts_keeps_its_size(cabinet_run: Path) -> None:
    base = BaseScene.load(cabinet_run)
    body, _, _ = _door(base.geometry)
    with pytest.raises(AdaptError, match=f"'{body.name}' has moving parts"):
        adapt(base.geometry, base.task, {body.name: {"scale": 1.1}})
    params = VariationPlan(seed=4).draw(0, base.objects)
    assert params["objects"][body.name]["scale"] == 1.0


def test_the_door_start_verifies_only_with_the_hand_moved(cabinet_run: Path, monkeypatch) -> None:
    base = BaseScene.load(cabinet_run)
    _, _, key = _door(base.geometry)
    params = {**base_params(base.objects), "parts": {key: 0.08}}
    verification = _verify(base, vary_geometry(base, params, 2), params, cabinet_run / "try_adapted")
    assert verification.passed, {k: c for k, c in verification.checks.items() if not c.get("passed")}
    # The same start with the demo's path: the fingers close where the handle was (or hit the door).
    monkeypatch.setattr(
        adapt_module, "_hand_with_part", lambda positions, quaternions, *rest: (positions, quaternions)
    )
    try:
        verification = _verify(base, vary_geometry(base, params, 2), params, cabinet_run / "try_unadapted")
        assert not verification.passed
    except VariantRejected as e:
        assert "hits" in str(e)


def test_the_cabinet_varies_its_place_and_its_door_start(cabinet_run: Path) -> None:
    entries = vary(cabinet_run, 3, VariationPlan(seed=1), jobs=1, render=False)
    verified = [e for e in entries if e["passed"]]
    assert len(verified) >= 2, [e["reason"] for e in entries]
    demo = read_report(cabinet_run)
    demo_start = next(o for o in demo.objects if o["name"] == "cabinet")["parts"][0]["frames"][0]["q"]
    span = float(
        np.diff(next(o for o in demo.objects if o["name"] == "cabinet")["parts"][0]["joint"]["range"])[0]
    )
    for entry in verified:
        report = read_report(cabinet_run / "variants" / entry["id"])
        cabinet = next(o for o in report.objects if o["name"] == "cabinet")
        share = entry["params"]["parts"]["cabinet.door"]
        assert cabinet["parts"][0]["frames"][0]["q"] == pytest.approx(
            demo_start + abs(share) * span, abs=2e-3
        )
        assert report.verification.checks["task_success"]["passed"]


def test_part_starts_are_drawn_shrunk_and_checked() -> None:
    objects = [{"name": "cup", "role": "manipulated", "kind": "cylinder"},
               {"name": "microwave", "role": "target", "kind": "cabinet", "parts": ["microwave.door"]}]  # fmt: skip
    plan = VariationPlan(seed=2)
    params = plan.draw(0, objects)
    share = params["parts"]["microwave.door"]
    assert 0 < abs(share) <= plan.mechanical.part_start
    assert shrink(params)["parts"]["microwave.door"] == pytest.approx(0.85 * share, abs=1e-6)
    assert base_params(objects)["parts"] == {"microwave.door": 0.0}
    # A scene without parts draws what it drew before parts could vary.
    without = plan.draw(0, [{**o, "parts": []} for o in objects])
    del params["parts"], without["parts"]
    assert without == params
    with pytest.raises(PlanError, match="part_start"):
        VariationPlan.from_json({"mechanical": {"part_start": 1.5}})


def test_distractors_keep_off_a_door_swung_open(cabinet_run: Path) -> None:
    base = BaseScene.load(cabinet_run)
    body, door, _ = _door(base.geometry)
    spots = _part_spots(body)
    centre = body.motion.positions[0, :2]
    body_reach = 0.5 * math.hypot(*body.fitted.shape.size[:2])
    # The door opened about 90 degrees stands out past its body's footprint, and a spot covers it.
    open_door = door.pose_at(float(door.filled_q()[-1]))[:2, 3]
    assert np.linalg.norm(open_door - centre) > 0.5 * body_reach
    assert min(np.linalg.norm(open_door - xy) for xy, _ in spots) < 1e-9


def test_the_environment_starts_the_door_where_its_plan_draws_it(cabinet_run: Path) -> None:
    from real2gym.real2gym_addon.gym import make_env

    env_dir = cabinet_run.parent / "env"
    assert main(["export-gym", str(cabinet_run), "--to", str(env_dir)]) == 0
    demo_start = make_env(env_dir, randomize=False).reset(seed=0)[0]["joints"][0]
    env = make_env(env_dir)
    starts, successes = [], []
    for seed in (0, 1):
        observation, _ = env.reset(seed=seed)
        starts.append(observation["joints"][0])
        reward, info = 0.0, {}
        for action in env.demo_actions():
            _, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        successes.append(bool(info["is_success"]))
    # A door the demo starts shut starts further open; the hand's path, moved with it, still opens it.
    assert min(starts) > demo_start + 0.005
    assert all(successes), (starts, successes)
