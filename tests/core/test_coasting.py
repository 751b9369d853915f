"""A part's damping and friction loss from its coast after the hand lets go (geometry/coasting.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from real2gym.real2gym_addon.errors import WarningLog
from real2gym.real2gym_addon.geometry.articulation import _damped_as_filmed
from real2gym.real2gym_addon.geometry.coasting import coasting, joint_inertia
from real2gym.real2gym_addon.geometry.parts import (
    DEFAULT_DAMPING,
    DEFAULT_FRICTIONLOSS,
    PART_ARMATURE,
    Joint,
    PartGeometry,
)
from real2gym.real2gym_addon.geometry.pieces import DEFAULT_DENSITY
from real2gym.real2gym_addon.geometry.shapes import Shape

FPS = 20.0
HINGE = Joint("hinge", np.array([0.0, 0.0, 1.0]), np.zeros(3), (0.0, 2.0), 0.0)


def _coast(
    rate: float, friction: float, speed: float, start: float, frames: int, noise: float, seed: int = 0
):
    """``q`` per frame: held still at ``start`` for 10 frames (the hand lets go on frame 10 at ``speed``), then
    slowing as ``q'' = -rate q' - friction sign(q')`` (fine steps) until it stops; with noise."""
    q, v, dt = start, speed, 1e-4
    values = [start] * 10
    for _ in range(frames):
        for _ in range(int(round(1.0 / FPS / dt))):
            if v != 0.0:
                slowed = v - dt * (rate * v + friction * math.copysign(1.0, v))
                v = 0.0 if slowed * v <= 0.0 else slowed
            q += v * dt
        values.append(q)
    values = np.array(values)
    return values + np.random.default_rng(seed).normal(0.0, noise, len(values))


@pytest.mark.parametrize(("rate", "friction"), [(2.5, 0.3), (1.2, 0.6), (4.0, 0.0)])
def test_the_rates_of_a_coasting_door_are_found(rate: float, friction: float) -> None:
    """Depth's 1 degree of noise per frame, a door let go at 2.5 rad/s: the damping rate within 20 %."""
    q = _coast(rate, friction, 2.5, 0.3, 40, math.radians(1.0))
    coast = coasting(q, FPS, HINGE, 10)
    assert coast is not None
    assert coast.damping_rate == pytest.approx(rate, rel=0.2, abs=0.3)
    assert coast.speed == pytest.approx(2.5, rel=0.3)  # the first frames' noise weighs on it most
    # Damping and friction trade off over one coast: the slowing they make together is what must match.
    assert coast.damping_rate * 1.0 + coast.friction_rate == pytest.approx(rate + friction, rel=0.2)


def test_a_part_that_barely_moves_after_the_hand_lets_go_measures_nothing() -> None:
    still = np.r_[np.linspace(0.0, 1.0, 20), np.full(30, 1.0)] + np.random.default_rng(1).normal(0, 0.01, 50)
    assert coasting(still, FPS, HINGE, 20) is None
    assert coasting(still, FPS, HINGE, 46) is None  # too few frames left


def test_a_coast_ends_where_the_door_meets_its_stop() -> None:
    """Swung shut against its frame, the door stops at once: the frames after are not slowing by damping."""
    q = _coast(2.0, 0.2, -3.0, 1.2, 30, math.radians(0.5))
    q = np.maximum(q, 0.0)  # the frame stops it at 0
    coast = coasting(q, FPS, HINGE, 10)
    assert coast is not None
    assert q[coast.end] < 0.1 and coast.end < len(q) - 5
    assert coast.damping_rate == pytest.approx(2.0, rel=0.3, abs=0.4)


def test_a_doors_inertia_is_the_simulations(cabinet_run: Path) -> None:
    """The inertia the rates are turned into damping with is what MuJoCo moves about the exported joint."""
    report = json.loads((cabinet_run / "report.json").read_text())
    model = mujoco.MjModel.from_xml_path(str(cabinet_run / "mjcf" / "scene.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    part_entry = next(o for o in report["objects"] if o.get("parts"))["parts"][0]
    joint = next(
        model.joint(j) for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
    )
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    simulated = full[joint.dofadr[0], joint.dofadr[0]]
    part = PartGeometry.from_report(part_entry)
    assert joint_inertia(part, DEFAULT_DENSITY, PART_ARMATURE) == pytest.approx(simulated, rel=0.02)


def test_a_box_doors_inertia_about_its_edge() -> None:
    """A 0.4 x 0.3 x 0.02 m panel hinged on its edge (in its middle plane): m w^2 / 3 + m t^2 / 12."""
    size = (0.02, 0.4, 0.3)
    shape = Shape("door", size, {})
    joint = Joint("hinge", np.array([0.0, 0.0, 1.0]), np.array([0.0, -0.2, 0.0]), (0.0, 2.0), 0.0)
    part = PartGeometry("door", shape, np.zeros(3), np.eye(3), 0.0, joint, np.zeros(3), np.ones(3, bool))
    mass = DEFAULT_DENSITY * np.prod(size)
    assert joint_inertia(part, DEFAULT_DENSITY) == pytest.approx(mass * (0.4**2 / 3 + 0.02**2 / 12), rel=1e-6)
    slide = Joint("slide", np.array([1.0, 0.0, 0.0]), np.zeros(3), (0.0, 0.3), 0.0)
    drawer = PartGeometry("front", shape, np.zeros(3), np.eye(3), 0.0, slide, np.zeros(3), np.ones(3, bool))
    assert joint_inertia(drawer, DEFAULT_DENSITY, 0.001) == pytest.approx(mass + 0.001, rel=1e-6)


def _door_part(q: np.ndarray) -> PartGeometry:
    shape = Shape("door", (0.02, 0.4, 0.3), {})
    joint = Joint("hinge", np.array([0.0, 0.0, 1.0]), np.array([0.0, -0.2, 0.0]), (0.0, 2.0), 0.0)
    return PartGeometry("door", shape, np.zeros(3), np.eye(3), 0.0, joint, q, np.ones(len(q), bool))


def test_a_door_let_go_is_damped_in_the_scene_as_it_slowed_in_the_video() -> None:
    """Released on frame 10 and coasting, the door's MJCF damping is its rate times its inertia as built."""
    part = _door_part(_coast(2.5, 0.3, 2.5, 0.3, 40, math.radians(1.0)))
    events = [{"frame": 10, "event": "release", "object": "box.door"}]
    log = WarningLog()
    damped = _damped_as_filmed(part, "box.door", events, None, FPS, log)
    inertia = joint_inertia(part, DEFAULT_DENSITY, PART_ARMATURE)
    assert damped.joint.damping != DEFAULT_DAMPING["hinge"]
    # Over one coast the two rates trade off: the slowing they make together is what is measured.
    slowing = (damped.joint.damping * 2.0 + damped.joint.frictionloss) / inertia
    assert slowing == pytest.approx(2.5 * 2.0 + 0.3, rel=0.25)  # 22 % on this noise draw
    assert not log.as_report()


def test_a_door_that_does_not_coast_keeps_the_default_damping() -> None:
    """Let go where it had stopped (a hand that held it to its end), a door measures nothing."""
    q = np.r_[np.linspace(0.0, 1.5, 20), np.full(30, 1.5)]
    part = _door_part(q + np.random.default_rng(2).normal(0.0, 0.01, len(q)))
    events = [{"frame": 21, "event": "release", "object": "box.door"}]
    damped = _damped_as_filmed(part, "box.door", events, None, FPS)
    assert damped.joint.damping == DEFAULT_DAMPING["hinge"]
    assert damped.joint.frictionloss == DEFAULT_FRICTIONLOSS["hinge"]
