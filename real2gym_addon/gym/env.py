"""A Gymnasium environment of an exported scene (``make_env(DIR)``): no Blender needed.

The scene is the verified MJCF; the gripper is its mocap-driven hand, stepped as the
verifier steps it (the target moves every :data:`~..verify.simulate.CONTROL_PERIOD_S`).

- Observations (a ``Dict``): ``gripper`` (grasp centre position (3,) in m, orientation
  ``[w, x, y, z]`` (4,), finger opening in [0, 1]) and ``objects`` (per object in
  task.json's order: centre (3,) and ``[w, x, y, z]`` (4,)); world frame, z up, table at 0;
  for a scene with moving parts also ``joints`` (each part's joint value, rad or m, in the
  order of the report's objects and their parts: :attr:`Real2GymEnv.joint_names`).
- Actions: ``Box(-1, 1, (7,))``: the hand's target moves by ``a[:3] * MAX_MOVE`` (m), turns
  by the rotation vector ``a[3:6] * MAX_TURN`` (rad, world frame), and the fingers go to
  ``(a[6] + 1) / 2`` of their full opening.
- Reward 1 and ``terminated`` when the task's success predicate holds (the object in or on
  its target, let go and settled; for ``stack`` the target carrying its weight, standing and
  settled too; lifted for ``lift``; a part open or closed for ``open`` and ``close``; for
  ``steps`` each step holding, the steps having come to hold in their order, and the carried
  object let go and settled); ``truncated`` after the demo's length and a second more.
- ``reset(seed=...)`` draws the objects' start poses, friction and mass from the plan's
  ranges (task.json ``plan``); :meth:`Real2GymEnv.demo_actions` adapts the demo to them. An
  object fixed in the scene (a microwave) is moved as a whole, its parts with it.
"""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium
import mujoco
import numpy as np
from gymnasium import spaces
from scipy.spatial.transform import Rotation

from ..geometry.camera import pose_matrix, yaw_rotation
from ..geometry.contents import fill_points
from ..geometry.parts import part_key
from ..geometry.report_io import geometry_from_report
from ..mjcf.export import START_CLEARANCE
from ..mjcf.gripper import MAX_OPENING, NAMES
from ..report import read_report
from ..tasks import STEPS, STEPS_FIELD, TaskState, carried_share, task_type, tilt_between
from ..variants.adapt import adapt
from ..variants.plan import Ranges, VariationPlan
from ..verify.checks import video_expectations
from ..verify.simulate import HAND_LEAD_S, contents_bodies, step_targets, support_forces
from .export import read_task

MAX_MOVE = 0.02
"""m: the hand's target moves at most this far per step (2 m/s at 10 ms steps)."""
MAX_TURN = 0.1
"""rad: ... and turns at most this far per step."""
FAR = 10.0
"""m: positions in observations lie within this of the world's origin (the table's centre is near it)."""
EXTRA_S = 1.0
"""An episode lasts the demo's length and this many seconds more."""
JOINT_SLACK = {"hinge": 0.1, "slide": 0.02}
"""rad, m: a joint's observation space reaches this far past its range (its limits are soft)."""


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
        self._expectations: dict[tuple[str, str], dict] = {}
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
        # Each moving part's joint: its qpos address and the report's joint (its range and closed end).
        self._parts = {
            part_key(o.name, p.name): (self.model.jnt_qposadr[self.model.body(bodies[part_key(o.name, p.name)]).jntadr[0]],
                                       p.joint)
            for o in self._geometry.objects for p in o.parts
        }  # fmt: skip
        self.joint_names = list(self._parts)
        # Each object's contents (the spheres a pour pours): their bodies, and how they pack at the start.
        self._contents = {
            o.name: (contents_bodies(self.model, bodies[o.name]), fill_points(o.fitted.shape, o.contents, o.name),
                     o.contents.radius)
            for o in self._geometry.objects if o.contents is not None
        }  # fmt: skip
        self._base_pos = self.model.body_pos.copy()
        self._base_quat = self.model.body_quat.copy()
        self._held_since = None  # a steps task: per step, the step it has held since (None: not holding)
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
        if self._parts:
            low = [min(j.range) - JOINT_SLACK[j.type] for _, j in self._parts.values()]
            high = [max(j.range) + JOINT_SLACK[j.type] for _, j in self._parts.values()]
            self.observation_space["joints"] = spaces.Box(np.array(low), np.array(high), dtype=np.float64)
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
        parts = {o.name: [part_key(o.name, p.name) for p in o.parts] for o in self._geometry.objects}
        objects = [{"name": o["name"], "kind": o["shape"],
                    "role": "manipulated" if o["name"] == self._task["object"] else
                            "target" if o["name"] == self._task.get("target") else o["role"],
                    "parts": parts.get(o["name"], [])}
                   for o in self.task_info["objects"]]  # fmt: skip
        if self.randomize:
            params = self._plan.draw(int(self.np_random.integers(0, 2**31 - 1)), objects)
        else:
            params = {"objects": {}, "friction_scale": 1.0, "mass_scale": 1.0}
        changes = {n: {**c, "scale": 1.0, "rim_scale": 1.0} for n, c in params["objects"].items()}
        settle = int(round(self._plan.settle_s * self.task_info["fps"]))
        geometry = adapt(self._geometry, self._task, changes, 0.0, settle, params.get("parts"))
        self._demo = geometry.gripper
        self.model.geom_friction[:] = self._base_friction
        self.model.body_mass[:] = self._base_mass
        self.model.body_inertia[:] = self._base_inertia
        for body in self._bodies:
            geoms = self.model.geom_bodyid == body
            self.model.geom_friction[geoms, 0] *= params["friction_scale"]
            self.model.body_mass[body] *= params["mass_scale"]
            self.model.body_inertia[body] *= params["mass_scale"]
        self.model.body_pos[:] = self._base_pos
        self.model.body_quat[:] = self._base_quat
        demo_objects = {o.name: o for o in self._geometry.objects}
        mujoco.mj_resetData(self.model, self.data)
        for obj in geometry.objects:
            joint = self._joints.get(obj.name, -1)
            if joint < 0 and obj.name in demo_objects:
                self._move_fixed(obj, demo_objects[obj.name])
                continue
            if joint < 0 or self.model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE:
                continue
            address = self.model.jnt_qposadr[joint]
            start = obj.motion.positions[0]
            yaw = float(obj.motion.yaws[0])
            self.data.qpos[address : address + 3] = start + [0.0, 0.0, START_CLEARANCE]
            self.data.qpos[address + 3 : address + 7] = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
            if obj.name in self._contents:  # packed in it again, where it starts now
                spheres, local, _ = self._contents[obj.name]
                packed = start + [0.0, 0.0, START_CLEARANCE] + local @ yaw_rotation(yaw).T
                for sphere, centre in zip(spheres, packed, strict=True):
                    at = self.model.jnt_qposadr[self.model.body_jntadr[sphere]]
                    self.data.qpos[at : at + 7] = [*centre, 1.0, 0.0, 0.0, 0.0]
        for obj in geometry.objects:  # each part at its start (varied, or the demo's)
            for part in obj.parts:
                self.data.qpos[self._parts[part_key(obj.name, part.name)][0]] = part.filled_q()[0]
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
        self._held_since = None
        self._start_height = float(self.data.xpos[self._bodies[self._names.index(self._task["object"])]][2])
        self._start_turns = {body: self.data.xmat[body].reshape(3, 3).copy() for body in self._bodies}
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
            **({"joints": self._joint_values()} if self._parts else {}),
            **({"image": self._camera_image()} if self._observe_image else {}),
        }

    def _joint_values(self) -> np.ndarray:
        values = np.array([self.data.qpos[address] for address, _ in self._parts.values()])
        return np.clip(values, self.observation_space["joints"].low, self.observation_space["joints"].high)

    def _info(self) -> dict:
        return {"is_success": bool(self.is_success()), "step": self._steps}

    def is_success(self) -> bool:
        """The task's success predicate on the current state (task.json ``success``)."""
        rule = self.task_info["success"]
        kind = task_type(rule["type"])
        if kind.needs_part:  # the part's own value decides; the hand may still be on it
            return bool(kind.success(self._part_state(self._task))["passed"])
        moved = self._bodies[self._names.index(rule["object"])]
        if kind is STEPS:
            if not self._steps_hold():
                return False
        else:
            state = self._task_state(rule["object"], rule.get("target"), kind.reads_support)
            if not kind.success(state)["passed"]:
                return False
        if not kind.releases:  # a lift: still in the hand
            return self._held(moved)
        # Let go and settled; a stack's target too (it may still rock from what was set on it).
        settling = [moved] + ([self._bodies[self._names.index(rule["target"])]] if kind.reads_support else [])
        velocity = np.zeros(6)
        for body in settling:
            mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, body, velocity, 0)
            if np.linalg.norm(velocity[3:]) >= rule["settled_speed_m_s"]:
                return False
        return not self._held(moved)

    def _task_state(self, moved: str, target: str | None, support: bool = False) -> TaskState:
        """The task's objects now, for the task type's success predicate (the verifier's own); with
        ``support``, also the share of the object's weight the target carries and the target's tilt."""
        body = self._bodies[self._names.index(moved)]
        position = self.data.xpos[body].copy()
        raised = float(position[2] - self._start_height)
        own_turn = self.data.xmat[body].reshape(3, 3).copy()
        if target is None:
            return TaskState(position, self._shapes[moved], raised, moved_rotation=own_turn)
        other = self._bodies[self._names.index(target)]
        turn = self.data.xmat[other].reshape(3, 3).copy()
        axis = self.data.xpos[other] + turn @ self._shapes[target].axis_offset()
        share = tilt = None
        if support:
            forces = support_forces(self.model, self.data, {moved: body, target: other})[moved]
            share = carried_share(
                forces, float(self.model.body_mass[body] * -self.model.opt.gravity[2]), target
            )
            tilt = tilt_between(self._start_turns[other], turn)
        spheres, _, radius = self._contents.get(moved, (None, None, 0.0))
        return TaskState(position, self._shapes[moved], raised, axis, self._shapes[target], target_rotation=turn,
                         support_share=share, target_tilt_rad=tilt, moved_rotation=own_turn,
                         contents=None if spheres is None else self.data.xpos[spheres].copy(), contents_radius=radius,
                         min_share=self._task.get("min_share"), depth=self._task.get("depth"),
                         **self._expected(moved, target))  # fmt: skip

    def _expected(self, moved: str, target: str) -> dict:
        """What the video's last frame says the task ends as (a shelved book's turn, a plug's depth): a reset
        turns and moves objects about the vertical, which leaves both as they are."""
        if (moved, target) not in self._expectations:
            self._expectations[moved, target] = video_expectations(self._geometry, moved, target)
        return self._expectations[moved, target]

    def _part_state(self, task: dict) -> TaskState:
        """A part task's state now: its joint's value and how open that is."""
        address, joint = self._parts[part_key(task["object"], task["part"])]
        q = float(self.data.qpos[address])
        return TaskState(None, None, part_opening=joint.opening(q), part_q=q, to=task.get("to"))

    def _steps_hold(self) -> bool:
        """A ``steps`` task now: every step holds, and they came to hold (for good, as the verifier reads
        it) in their order. Called once per environment step (through :meth:`_info`)."""
        steps = self._task[STEPS_FIELD]
        if self._held_since is None:
            self._held_since = [None] * len(steps)
        for i, step in enumerate(steps):
            kind = task_type(step["type"])
            state = (self._part_state(step) if kind.needs_part
                     else self._task_state(step["object"], step.get("target"), kind.reads_support))  # fmt: skip
            holds = bool(kind.success(state)["passed"])
            self._held_since[i] = (
                (self._steps if self._held_since[i] is None else self._held_since[i]) if holds else None
            )
        since = self._held_since
        return all(s is not None for s in since) and all(
            a <= b for a, b in zip(since, since[1:], strict=False)
        )

    def _move_fixed(self, obj, demo) -> None:
        """An object fixed in the scene (no free joint) put where its variant stands: its body (a child of
        the world) moved by the change from the demo's start pose; its parts, its children, go with it."""
        old = pose_matrix(demo.motion.positions[0], yaw_rotation(float(demo.motion.yaws[0])))
        new = pose_matrix(obj.motion.positions[0], yaw_rotation(float(obj.motion.yaws[0])))
        change = new @ np.linalg.inv(old)
        body = self._bodies[self._names.index(obj.name)]
        self.model.body_pos[body] = change[:3, :3] @ self._base_pos[body] + change[:3, 3]
        turned = Rotation.from_matrix(change[:3, :3]) * Rotation.from_quat(
            self._base_quat[body][[1, 2, 3, 0]]
        )
        self.model.body_quat[body] = turned.as_quat()[[3, 0, 1, 2]]

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
