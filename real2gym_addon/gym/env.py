"""A Gymnasium environment of an exported scene (``make_env(DIR)``): no Blender needed.

The scene is the verified MJCF; the gripper is its mocap-driven hand, stepped as the
verifier steps it (the target moves every :data:`~..verify.simulate.CONTROL_PERIOD_S`).

- Observations (a ``Dict``): ``gripper`` (grasp centre position (3,) in m, orientation
  ``[w, x, y, z]`` (4,), finger opening in [0, 1]) and ``objects`` (per object in
  task.json's order: centre (3,) and ``[w, x, y, z]`` (4,)); world frame, z up, table at 0.
- Actions: ``Box(-1, 1, (7,))``: the hand's target moves by ``a[:3] * MAX_MOVE`` (m), turns
  by the rotation vector ``a[3:6] * MAX_TURN`` (rad, world frame), and the fingers go to
  ``(a[6] + 1) / 2`` of their full opening.
- Reward 1 and ``terminated`` when the task's success predicate holds (the object in or on
  its target, let go and settled; lifted for ``lift``); ``truncated`` after the demo's
  length and a second more.
- ``reset(seed=...)`` draws the objects' start poses, friction and mass from the plan's
  ranges (task.json ``plan``); :meth:`Real2GymEnv.demo_actions` adapts the demo to them.
"""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium
import mujoco
import numpy as np
from gymnasium import spaces
from scipy.spatial.transform import Rotation

from ..geometry.report_io import geometry_from_report
from ..mjcf.export import START_CLEARANCE
from ..mjcf.gripper import MAX_OPENING, NAMES
from ..report import read_report
from ..tasks import TaskState, task_type
from ..variants.adapt import adapt
from ..variants.plan import Ranges, VariationPlan
from ..verify.simulate import HAND_LEAD_S, step_targets
from .export import read_task

MAX_MOVE = 0.02
"""m: the hand's target moves at most this far per step (2 m/s at 10 ms steps)."""
MAX_TURN = 0.1
"""rad: ... and turns at most this far per step."""
FAR = 10.0
"""m: positions in observations lie within this of the world's origin (the table's centre is near it)."""
EXTRA_S = 1.0
"""An episode lasts the demo's length and this many seconds more."""


class Real2GymEnv(gymnasium.Env):
    """An exported real2gym scene as a Gymnasium environment (see the module's description).

    Args:
        path: The folder ``real2gym export-gym`` wrote.
        render_mode: ``"rgb_array"`` to render the video camera, or None.
        randomize: False to start every episode as the demo did.
        width: Render width in pixels (the video's when None).
        height: Render height in pixels.
        observe_image: Add the video camera's image (``image``, ``height x width x 3`` uint8) to
            the observations.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 100}

    def __init__(self, path: str | Path, render_mode: str | None = None, randomize: bool = True,
                 width: int | None = None, height: int | None = None,
                 observe_image: bool = False) -> None:  # fmt: skip
        folder = Path(path)
        self.task_info = read_task(folder)
        self._geometry = geometry_from_report(read_report(folder, self.task_info["demo_report"]))
        self._shapes = {
            o.name: o.fitted.shape for o in self._geometry.objects
        }  # reset moves them, never resizes
        self.model = mujoco.MjModel.from_xml_path(str(folder / self.task_info["scene"]))
        self.data = mujoco.MjData(self.model)
        self.render_mode = render_mode
        self.randomize = randomize
        self._task = self.task_info["task"]
        self._names = [o["name"] for o in self.task_info["objects"]]
        bodies = self.task_info["bodies"]
        self._bodies = [self.model.body(bodies[n]).id for n in self._names]
        self._joints = {n: self.model.body(bodies[n]).jntadr[0] for n in self._names}
        self._mocap = self.model.body(NAMES["target"]).mocapid[0]
        self._hand_joint = self.model.joint("gripper_free").qposadr[0]
        self._hand = self.model.body(NAMES["hand"]).id
        self._slides = [self.model.joint(NAMES[f"{side}_joint"]).qposadr[0] for side in ("left", "right")]
        self._actuators = [self.model.actuator(NAMES[f"{s}_actuator"]).id for s in ("left", "right")]
        self._pads = {self.model.geom(NAMES["left_pad"]).id, self.model.geom(NAMES["right_pad"]).id}
        self._chunk = max(1, int(round(self.task_info["control_period_s"] / self.model.opt.timestep)))
        self._base_friction = self.model.geom_friction.copy()
        self._base_mass = self.model.body_mass.copy()
        self._base_inertia = self.model.body_inertia.copy()
        plan = self.task_info["plan"]
        self._plan = VariationPlan(seed=plan["seed"], settle_s=plan["settle_s"],
                                   mechanical=Ranges(**{k: tuple(v) if isinstance(v, list) else v
                                                        for k, v in plan["mechanical"].items()}))  # fmt: skip
        fps = self.task_info["fps"]
        frames = len(self._geometry.gripper.positions) + int(round(self._plan.settle_s * fps)) * 2
        self._max_steps = int(math.ceil((frames / fps + EXTRA_S) / self.task_info["control_period_s"]))
        self.action_space = spaces.Box(-1.0, 1.0, (7,), np.float32)
        pose_low, pose_high = np.r_[[-FAR] * 3, [-1.0] * 4], np.r_[[FAR] * 3, [1.0] * 4]
        self.observation_space = spaces.Dict({
            "gripper": spaces.Box(np.r_[pose_low, 0.0], np.r_[pose_high, 1.0], dtype=np.float64),
            "objects": spaces.Box(np.tile(pose_low, len(self._names)), np.tile(pose_high, len(self._names)),
                                  dtype=np.float64),
        })  # fmt: skip
        self._renderer = None
        self._width = width or self.model.vis.global_.offwidth
        self._height = height or self.model.vis.global_.offheight
        self._observe_image = observe_image
        if observe_image:
            self.observation_space["image"] = spaces.Box(0, 255, (self._height, self._width, 3), np.uint8)
        self._demo = None
        self._steps = 0

    # The episode.

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        objects = [{"name": o["name"], "kind": o["shape"],
                    "role": "manipulated" if o["name"] == self._task["object"] else
                            "target" if o["name"] == self._task.get("target") else o["role"]}
                   for o in self.task_info["objects"]]  # fmt: skip
        if self.randomize:
            params = self._plan.draw(int(self.np_random.integers(0, 2**31 - 1)), objects)
        else:
            params = {"objects": {}, "friction_scale": 1.0, "mass_scale": 1.0}
        changes = {n: {**c, "scale": 1.0, "rim_scale": 1.0} for n, c in params["objects"].items()}
        settle = int(round(self._plan.settle_s * self.task_info["fps"]))
        geometry = adapt(self._geometry, self._task, changes, 0.0, settle)
        self._demo = geometry.gripper
        self.model.geom_friction[:] = self._base_friction
        self.model.body_mass[:] = self._base_mass
        self.model.body_inertia[:] = self._base_inertia
        for body in self._bodies:
            geoms = self.model.geom_bodyid == body
            self.model.geom_friction[geoms, 0] *= params["friction_scale"]
            self.model.body_mass[body] *= params["mass_scale"]
            self.model.body_inertia[body] *= params["mass_scale"]
        mujoco.mj_resetData(self.model, self.data)
        for obj in geometry.objects:
            joint = self._joints.get(obj.name, -1)
            if joint < 0 or self.model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE:
                continue
            address = self.model.jnt_qposadr[joint]
            start = obj.motion.positions[0]
            yaw = float(obj.motion.yaws[0])
            self.data.qpos[address : address + 3] = start + [0.0, 0.0, START_CLEARANCE]
            self.data.qpos[address + 3 : address + 7] = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
        positions, quaternions, commands = step_targets(
            self._demo, self.task_info["fps"], np.zeros(1), HAND_LEAD_S
        )
        self.data.qpos[self._hand_joint : self._hand_joint + 3] = positions[0]
        self.data.qpos[self._hand_joint + 3 : self._hand_joint + 7] = quaternions[0]
        self.data.qpos[self._slides] = commands[0]
        self.data.mocap_pos[self._mocap] = positions[0]
        self.data.mocap_quat[self._mocap] = quaternions[0]
        self.data.ctrl[self._actuators] = commands[0]
        mujoco.mj_forward(self.model, self.data)
        # The verifier's pre-roll: the scene settles with the hand at its start.
        mujoco.mj_step(
            self.model, self.data, int(round(self.task_info["pre_roll_s"] / self.model.opt.timestep))
        )
        self._steps = 0
        self._start_height = float(self.data.xpos[self._bodies[self._names.index(self._task["object"])]][2])
        return self._observation(), self._info()

    def step(self, action):
        action = np.clip(np.asarray(action, np.float64), -1.0, 1.0)
        self.data.mocap_pos[self._mocap] += action[:3] * MAX_MOVE
        turn = Rotation.from_rotvec(action[3:6] * MAX_TURN)
        current = Rotation.from_quat(self.data.mocap_quat[self._mocap][[1, 2, 3, 0]])
        self.data.mocap_quat[self._mocap] = (turn * current).as_quat()[[3, 0, 1, 2]]
        self.data.ctrl[self._actuators] = (action[6] + 1.0) / 2.0 * MAX_OPENING / 2
        mujoco.mj_step(self.model, self.data, self._chunk)
        self._steps += 1
        info = self._info()
        success = info["is_success"]
        return self._observation(), float(success), success, self._steps >= self._max_steps, info

    def demo_actions(self) -> np.ndarray:
        """The demo adapted to this episode's start, as actions (``Nx7``) from the state ``reset`` left.

        The targets are the verifier's (every control period, the demo's path interpolated,
        the fingers squeezing while it holds), then the hand holds still while the scene settles.
        """
        if self._demo is None:
            raise RuntimeError("call reset() before demo_actions()")
        period = self.task_info["control_period_s"]
        fps = self.task_info["fps"]
        duration = (len(self._demo.positions) - 1) / fps + self.task_info["settle_s"]
        times = np.arange(int(round(duration / period)) + 1) * period
        positions, quaternions, commands = step_targets(self._demo, fps, times, HAND_LEAD_S)
        # Step k sets the target of time k (the first stays where reset put it), as the verifier does.
        moves = np.diff(positions, axis=0, prepend=positions[:1]) / MAX_MOVE
        rotations = Rotation.from_quat(quaternions[:, [1, 2, 3, 0]])
        previous = Rotation.concatenate([rotations[0], rotations[:-1]])
        turns = (rotations * previous.inv()).as_rotvec() / MAX_TURN
        fingers = commands / (MAX_OPENING / 2) * 2.0 - 1.0
        actions = np.c_[moves, turns, fingers]
        if np.abs(actions).max() > 1.0 + 1e-6:
            raise RuntimeError("the demo moves faster than the action space allows")
        return actions.astype(np.float32)

    # What an agent sees.

    def _observation(self) -> dict:
        hand = self.data.xpos[self._hand]
        quat = self.data.xquat[self._hand]
        opening = float(self.data.qpos[self._slides].sum() / MAX_OPENING)
        objects = np.concatenate([np.r_[self.data.xpos[b], self.data.xquat[b]] for b in self._bodies])
        gripper = np.r_[hand, quat, min(max(opening, 0.0), 1.0)]
        # Something thrown far off the table is reported at the edge of the space.
        return {
            "gripper": np.clip(
                gripper, self.observation_space["gripper"].low, self.observation_space["gripper"].high
            ),
            "objects": np.clip(
                objects, self.observation_space["objects"].low, self.observation_space["objects"].high
            ),
            **({"image": self._camera_image()} if self._observe_image else {}),
        }

    def _info(self) -> dict:
        return {"is_success": bool(self.is_success()), "step": self._steps}

    def is_success(self) -> bool:
        """The task's success predicate on the current state (task.json ``success``)."""
        rule = self.task_info["success"]
        kind = task_type(rule["type"])
        moved = self._bodies[self._names.index(rule["object"])]
        if not kind.success(self._task_state(rule["object"], rule.get("target")))["passed"]:
            return False
        if not kind.releases:  # a lift: still in the hand
            return self._held(moved)
        velocity = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, moved, velocity, 0)
        settled = np.linalg.norm(velocity[3:]) < rule["settled_speed_m_s"]
        return bool(settled and not self._held(moved))

    def _task_state(self, moved: str, target: str | None) -> TaskState:
        """The task's objects now, for the task type's success predicate (the verifier's own)."""
        body = self._bodies[self._names.index(moved)]
        position = self.data.xpos[body].copy()
        raised = float(position[2] - self._start_height)
        if target is None:
            return TaskState(position, self._shapes[moved], raised)
        other = self._bodies[self._names.index(target)]
        axis = (
            self.data.xpos[other] + self.data.xmat[other].reshape(3, 3) @ self._shapes[target].axis_offset()
        )
        return TaskState(position, self._shapes[moved], raised, axis, self._shapes[target])

    def _held(self, body: int) -> bool:
        for contact in self.data.contact[: self.data.ncon]:
            g1, g2 = contact.geom
            if (g1 in self._pads and self.model.geom_bodyid[g2] == body) or (
                g2 in self._pads and self.model.geom_bodyid[g1] == body
            ):
                return True
        return False

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return self._camera_image()

    def _camera_image(self) -> np.ndarray:
        """The video camera's view of the current state, ``height x width x 3`` uint8."""
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, self._height, self._width)
        self._renderer.update_scene(self.data, camera="video")
        return self._renderer.render()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def make_env(path: str | Path, **kwargs) -> Real2GymEnv:
    """The environment of a folder ``real2gym export-gym`` wrote (see :class:`Real2GymEnv`)."""
    return Real2GymEnv(path, **kwargs)
