"""tools/make_demo.py --carry-tilt: the gripper tilts the carried block, then drops it upright."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from generated_demos import SMALL, generate
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT, FRAMES, FPS = 160, 120, 40, 12
TILT = 25.0


def _lean_deg(quaternions: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Angle (deg) between world +z and ``axis`` (body frame) turned by each quaternion."""
    turned = Rotation.from_quat(quaternions, scalar_first=True).apply(axis)
    return np.degrees(np.arccos(np.clip(turned[:, 2], -1.0, 1.0)))


@pytest.fixture(scope="module")
def tilt_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40-frame 160x120 demo whose carry tilts the block by 25 deg, with a trajectory."""
    out = tmp_path_factory.mktemp("tilt") / "demo"
    result = generate(out, *SMALL, "--carry-tilt", str(TILT), "--with-trajectory", "--no-depth")
    assert result.returncode == 0, result.stderr
    assert "block in cup" in result.stdout
    return out


@pytest.fixture
def motion(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The generator's script module, importable from tools/."""
    monkeypatch.syspath_prepend(str(REPO / "tools"))
    return importlib.import_module("_demo_motion")


def test_keyframes_and_the_block_ends_in_the_cup(tilt_demo: Path) -> None:
    truth = load_truth(tilt_demo)
    events = {k["event"]: k["frame"] for k in truth.keyframes}
    assert set(events) == {"grasp", "lift", "release", "contact"}
    assert events["grasp"] < events["lift"] < events["release"] <= events["contact"] < FRAMES

    checks = truth.raw["checks"]
    assert checks["in_cup"]["passed"] and checks["held_by_friction"]["passed"]
    block, cup = truth.objects["block"], truth.objects["cup"]
    block_end, cup_end = block.frames[-1].position_world, cup.frames[-1].position_world
    assert np.linalg.norm(block_end[:2] - cup_end[:2]) + block.size[0] / 2 < cup.params["inner_radius"]
    cup_floor = cup_end[2] - cup.params["height"] / 2 + cup.params["bottom_thickness"]
    assert block_end[2] == pytest.approx(cup_floor + block.size[2] / 2, abs=0.004)
    assert _lean_deg(block.frames[-1].quaternion_world[None], np.array([0.0, 0, 1]))[0] < 2.0


def test_the_block_tilts_during_the_carry_only(tilt_demo: Path) -> None:
    truth = load_truth(tilt_demo)
    events = {k["event"]: k["frame"] for k in truth.keyframes}
    quats = np.array([f.quaternion_world for f in truth.objects["block"].frames])
    lean = _lean_deg(quats, np.array([0.0, 0, 1]))
    peak = int(np.argmax(lean))
    assert lean[peak] == pytest.approx(TILT, abs=5.0)
    assert events["lift"] < peak < events["release"]
    assert lean[: events["lift"] + 1].max() < 1.0  # upright on the table and at the lift
    assert lean[events["release"] :].max() < 2.0  # upright again for the release and drop
    assert (lean > TILT - 5.0).sum() >= 3  # held for a while, not a flick

    check = truth.raw["checks"]["carry_tilt"]
    assert check["passed"] and check["commanded_deg"] == TILT
    assert check["max_slip_in_gripper_m"] < 0.003 and check["max_turn_in_gripper_deg"] < 2.0


def test_trajectory_follows_the_tilted_gripper(tilt_demo: Path) -> None:
    """trajectory.json's gripper turns with the block; the block keeps its pose in the grip."""
    truth = load_truth(tilt_demo)
    events = {k["event"]: k["frame"] for k in truth.keyframes}
    samples = json.loads((tilt_demo / "trajectory.json").read_text())["samples"]
    cam_to_world = Rotation.from_matrix(truth.world_from_camera[:3, :3])
    gripper = cam_to_world * Rotation.from_quat([s["quaternion"] for s in samples], scalar_first=True)
    # The gripper's z axis (palm to fingertips) points down; its lean is the tilt.
    gripper_lean = _lean_deg(gripper.as_quat(scalar_first=True), np.array([0.0, 0, -1]))
    assert gripper_lean.max() == pytest.approx(TILT, abs=5.0)

    block = Rotation.from_quat([f.quaternion_world for f in truth.objects["block"].frames], scalar_first=True)
    carried = slice(events["lift"], events["release"])
    in_grip = (gripper.inv() * block)[carried]
    drift = np.degrees((in_grip[0].inv() * in_grip).magnitude())
    assert drift.max() < 2.0
    block_lean = _lean_deg(block.as_quat(scalar_first=True), np.array([0.0, 0, 1]))
    assert np.abs(block_lean[carried] - gripper_lean[carried]).max() < 2.0


def test_no_tilt_keeps_the_untilted_script(motion: ModuleType) -> None:
    """Without a tilt the script and the gripper's orientation are exactly the old ones."""
    make_demo = importlib.import_module("make_demo")
    args = make_demo.parse_args(["--out", "unused"])
    assert args.carry_tilt == 0.0
    layout = make_demo.sample_layout(args, np.random.default_rng(0))
    plain = motion.plan_script(layout, 5.0, 0.3)
    tilted = motion.plan_script(layout, 5.0, 0.3, np.deg2rad(TILT))
    assert [w.name for w in plain] == [w.name for w in tilted]
    assert all(w.tilt == 0.0 for w in plain)
    times = np.linspace(-0.1, 5.1, 521)
    assert all(motion.tilt_at(plain, t) == 0.0 for t in times)
    for yaw in (0.0, 0.7, -2.1):
        assert np.array_equal(motion.gripper_quat(yaw, 0.0), motion.top_down_quat(yaw))

    # With a tilt: zero up to the lift's end, a smooth rise, a hold, back to zero before lowering.
    names = [w.name for w in tilted]
    lift, carry = tilted[names.index("lift")], tilted[names.index("carry")]
    turn = np.array([motion.tilt_at(tilted, t) for t in times])
    assert np.all(turn[times <= lift.time] == 0.0) and np.all(turn[times >= carry.time] == 0.0)
    assert turn.max() == pytest.approx(np.deg2rad(TILT))
    middle = (lift.time + carry.time) / 2
    assert motion.tilt_at(tilted, middle) == pytest.approx(np.deg2rad(TILT))
    rising = turn[(times > lift.time) & (times < middle)]
    assert np.all(np.diff(rising) >= 0)
    quat = motion.gripper_quat(0.4, np.deg2rad(TILT))
    down = Rotation.from_quat(quat, scalar_first=True).apply([0.0, 0.0, 1.0])
    assert np.degrees(np.arccos(-down[2])) == pytest.approx(TILT)
    across = Rotation.from_quat(quat, scalar_first=True).apply([1.0, 0.0, 0.0])
    assert across == pytest.approx([np.cos(0.4), np.sin(0.4), 0.0])  # turned about the level x axis


def test_too_large_a_tilt_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "steep"
    result = generate(out, *SMALL, "--carry-tilt", "60")
    assert result.returncode == 2
    assert "--carry-tilt" in result.stderr
    assert not out.exists()
