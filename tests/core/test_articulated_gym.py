"""The Gymnasium environment of an articulated scene: its joints observed, its steps rewarded in order,
the microwave moved with its door on reset, the door started where the plan draws it.

The scene is the Blender tests' microwave (tests/articulated_demos.py: 90 frames, the hinge given, the
cup put in and the door pushed shut), run and exported once for the module (about a minute).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from articulated_demos import make_microwave_demo  # noqa: E402


@pytest.fixture(scope="module")
def environment(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("microwave_gym")
    demo, out, env = make_microwave_demo(root / "demo"), root / "out", root / "env"
    assert main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"]) == 0
    assert main(["export-gym", str(out), "--to", str(env)]) == 0
    return env


def _play_the_demo(env) -> tuple[float, dict]:
    reward, info = 0.0, {}
    for action in env.demo_actions():
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return reward, info


def test_the_joint_is_observed_and_the_steps_reward_the_demo(environment: Path) -> None:
    from real2gym.real2gym_addon.gym import make_env

    env = make_env(environment, randomize=False)
    observation, info = env.reset(seed=0)
    assert env.joint_names == ["microwave.door"] and observation["joints"].shape == (1,)
    assert env.observation_space.contains(observation)
    assert observation["joints"][0] > 1.0 and not info["is_success"]  # it starts open, nothing done
    reward, info = _play_the_demo(env)
    assert reward == 1.0 and info["is_success"]
    assert env._joint_values()[0] < 0.05 * np.pi  # shut (within 0.05 of its range)


def test_a_door_shut_before_the_cup_is_in_is_no_success(environment: Path) -> None:
    from real2gym.real2gym_addon.gym import make_env

    env = make_env(environment, randomize=False)
    env.reset(seed=0)
    # The steps must come to hold in order: the door shut first (by hand, the cup still on the table).
    address, _ = env._parts["microwave.door"]
    env.data.qpos[address] = 0.0
    env.step(np.zeros(7))
    assert not env.is_success()


def test_reset_moves_the_microwave_and_its_door_together(environment: Path) -> None:
    from real2gym.real2gym_addon.gym import make_env

    env = make_env(environment)
    body = env.model.body("microwave").id
    hinge = env.model.body("microwave_door").jntadr[0]
    places = []
    for seed in (1, 2):
        env.reset(seed=seed)
        places.append((env.data.xpos[body].copy(), env.data.xanchor[hinge].copy(),
                       env.data.xmat[body].reshape(3, 3).copy(), env._joint_values()[0]))  # fmt: skip
    (body_a, hinge_a, turn_a, q_a), (body_b, hinge_b, turn_b, q_b) = places
    assert np.linalg.norm(body_a - body_b) > 1e-3  # the plan moved it
    # The door's hinge keeps its place on the body; the door starts where the plan drew it.
    assert turn_a.T @ (hinge_a - body_a) == pytest.approx(turn_b.T @ (hinge_b - body_b), abs=1e-6)
    assert abs(q_a - q_b) > 1e-3
    reward, _ = _play_the_demo(env)
    assert reward == 1.0  # the demo, adapted, still puts the cup in and shuts the door
