"""Simulating the demonstrated action in MuJoCo.

The gripper's mocap target follows the demo's gripper trajectory, interpolated
to every physics step (positions linearly, orientations by slerp); the fingers
follow the recorded opening and squeeze while closed. The objects are free
bodies held by friction alone. After the video the scene runs on for
:data:`SETTLE_S` seconds with the gripper held still, for the stability check.

Everything the checks need is recorded: every body's pose at each video frame,
and per physics step the deepest contact and which objects touch which fingers.
A simulation that diverges (NaN, MuJoCo warnings) stops and is reported with
its frame, never raised.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..geometry.keyframes import GripperTrajectory
from ..mjcf.gripper import NAMES, finger_command

SETTLE_S = 0.5
PRE_ROLL_S = 0.1


@dataclasses.dataclass
class SimulationRecord:
    """What happened in the simulation.

    Attributes:
        frames: Video frames simulated (the last may be short if it diverged).
        fps: Video frame rate.
        positions: Object name -> ``(frames + settle_frames) x 3`` body positions (world, m) per video frame.
        quaternions: Object name -> ``(...) x 4`` ``[w, x, y, z]``.
        gripper_positions: ``(...) x 3`` hand positions at the grasp centre.
        finger_contacts: Object name -> ``(...) x 2`` bool, touching the left / right finger at each frame.
        deepest: Object name -> deepest penetration of any of its contacts over the run (m, >= 0).
        deepest_frame: Object name -> frame of that penetration.
        support_force: Object name -> total contact normal force on it at the end (N), by other body name.
        speeds: Object name -> ``S x 2`` linear (m/s) and angular (rad/s) speed over the settle period.
        masses: Object name -> mass (kg).
        diverged_frame: First frame where the simulation went wrong, or None.
        warnings: MuJoCo warning names raised during the run.
        steps: Physics steps taken.
        wall_s: Wall time of the stepping loop (s).
    """

    frames: int
    fps: float
    positions: dict[str, np.ndarray]
    quaternions: dict[str, np.ndarray]
    gripper_positions: np.ndarray
    finger_contacts: dict[str, np.ndarray]
    deepest: dict[str, float]
    deepest_frame: dict[str, int]
    support_force: dict[str, dict[str, float]]
    speeds: dict[str, np.ndarray]
    masses: dict[str, float]
    diverged_frame: int | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    steps: int = 0
    wall_s: float = 0.0


def _step_targets(trajectory: GripperTrajectory, fps: float, times: np.ndarray):
    frames = np.arange(len(trajectory.positions)) / fps
    t = np.clip(times, 0.0, frames[-1])
    positions = np.stack([np.interp(t, frames, trajectory.positions[:, a]) for a in range(3)], axis=1)
    rotations = Rotation.from_quat(trajectory.quaternions[:, [1, 2, 3, 0]])
    slerp = Slerp(frames, rotations) if len(frames) > 1 else None
    quats = (slerp(t) if slerp else Rotation.concatenate([rotations[0]] * len(t))).as_quat()[:, [3, 0, 1, 2]]
    opening = np.interp(t, frames, trajectory.opening)
    peak = np.maximum.accumulate(np.r_[1.0, opening[:-1]])
    closing = opening < 0.9 * np.maximum(peak, 1e-6)
    command = np.array([finger_command(o, c) for o, c in zip(opening, closing, strict=True)])
    return positions, quats, command


def simulate(
    model: mujoco.MjModel,
    name_map: dict[str, str],
    trajectory: GripperTrajectory | None,
    fps: float,
    frames: int,
) -> SimulationRecord:
    """Runs the demo in the compiled scene.

    Args:
        model: The compiled scene (with the gripper when ``trajectory`` is given).
        name_map: Object name -> MJCF body name.
        trajectory: The gripper's path per video frame (world frame), or None.
        fps: Video frame rate.
        frames: Number of video frames.

    Returns:
        The record of the run.
    """
    import time

    data = mujoco.MjData(model)
    dt = model.opt.timestep
    settle_frames = int(round(SETTLE_S * fps))
    total_frames = frames + settle_frames
    steps_per_frame = 1.0 / (fps * dt)
    total_steps = int(round((total_frames - 1) * steps_per_frame)) + 1
    pre_steps = int(round(PRE_ROLL_S / dt))
    body_ids = {name: model.body(body).id for name, body in name_map.items()}
    geom_body = model.geom_bodyid
    has_gripper = trajectory is not None
    if has_gripper:
        times = np.r_[np.zeros(pre_steps), np.arange(total_steps) * dt]
        targets, target_quats, commands = _step_targets(trajectory, fps, times)
        mocap = model.body(NAMES["target"]).mocapid[0]
        hand = model.body(NAMES["hand"]).id
        left_pad, right_pad = model.geom(NAMES["left_pad"]).id, model.geom(NAMES["right_pad"]).id
        actuators = [model.actuator(NAMES["left_actuator"]).id, model.actuator(NAMES["right_actuator"]).id]
        hand_joint = model.joint("gripper_free").qposadr[0]
        data.qpos[hand_joint : hand_joint + 3] = targets[0]
        data.qpos[hand_joint + 3 : hand_joint + 7] = target_quats[0]
        for side in ("left", "right"):
            data.qpos[model.joint(NAMES[f"{side}_joint"]).qposadr[0]] = commands[0]
    mujoco.mj_forward(model, data)

    positions = {n: np.zeros((total_frames, 3)) for n in name_map}
    quaternions = {n: np.zeros((total_frames, 4)) for n in name_map}
    finger = {n: np.zeros((total_frames, 2), bool) for n in name_map}
    deepest = dict.fromkeys(name_map, 0.0)
    deepest_frame = dict.fromkeys(name_map, 0)
    gripper_positions = np.zeros((total_frames, 3))
    speeds = {n: [] for n in name_map}
    record_steps = {int(round(f * steps_per_frame)): f for f in range(total_frames)}
    diverged, warnings = None, []
    started = time.perf_counter()
    step_count = pre_steps + total_steps
    for step in range(step_count):
        index = step
        main = step - pre_steps
        if has_gripper:
            data.mocap_pos[mocap] = targets[index]
            data.mocap_quat[mocap] = target_quats[index]
            data.ctrl[actuators] = commands[index]
        mujoco.mj_step(model, data)
        ncon = data.ncon
        if ncon:
            contact = data.contact
            penetration = -contact.dist[:ncon]
            bodies1, bodies2 = geom_body[contact.geom[:ncon, 0]], geom_body[contact.geom[:ncon, 1]]
            if penetration.max() > 0:
                for name, body in body_ids.items():
                    mine = (bodies1 == body) | (bodies2 == body)
                    if mine.any():
                        depth = float(penetration[mine].max())
                        if depth > deepest[name]:
                            deepest[name], deepest_frame[name] = depth, max(0, int(main / steps_per_frame))
        if main < 0 or main not in record_steps:
            continue
        frame = record_steps[main]
        if not np.isfinite(data.qpos).all() or data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
            diverged = frame
            break
        for name, body in body_ids.items():
            positions[name][frame] = data.xpos[body]
            quaternions[name][frame] = data.xquat[body]
            if has_gripper and ncon:
                geoms = contact.geom[:ncon]
                touching = (geom_body[geoms[:, 0]] == body) | (geom_body[geoms[:, 1]] == body)
                finger[name][frame] = [
                    bool((touching & ((geoms[:, 0] == left_pad) | (geoms[:, 1] == left_pad))).any()),
                    bool((touching & ((geoms[:, 0] == right_pad) | (geoms[:, 1] == right_pad))).any()),
                ]
            if frame >= frames:
                velocity = np.zeros(6)
                mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, velocity, 0)
                speeds[name].append([np.linalg.norm(velocity[3:]), np.linalg.norm(velocity[:3])])
        if has_gripper:
            gripper_positions[frame] = data.xpos[hand]
    wall = time.perf_counter() - started
    for index in range(mujoco.mjtWarning.mjNWARNING):
        if data.warning[index].number > 0:
            warnings.append(mujoco.mjtWarning(index).name)
    return SimulationRecord(
        frames=frames,
        fps=fps,
        positions=positions,
        quaternions=quaternions,
        gripper_positions=gripper_positions,
        finger_contacts=finger,
        deepest=deepest,
        deepest_frame=deepest_frame,
        support_force=_support_forces(model, data, body_ids),
        speeds={n: np.array(v).reshape(-1, 2) for n, v in speeds.items()},
        masses={n: float(model.body_subtreemass[b]) for n, b in body_ids.items()},
        diverged_frame=diverged,
        warnings=warnings,
        steps=step_count,
        wall_s=wall,
    )


def _support_forces(
    model: mujoco.MjModel, data: mujoco.MjData, body_ids: dict[str, int]
) -> dict[str, dict[str, float]]:
    """Vertical contact force on each object at the end, by the body that exerts it."""
    forces = {name: {} for name in body_ids}
    names = {b: n for n, b in body_ids.items()}
    wrench = np.zeros(6)
    for i in range(data.ncon):
        contact = data.contact[i]
        b1, b2 = model.geom_bodyid[contact.geom1], model.geom_bodyid[contact.geom2]
        mujoco.mj_contactForce(model, data, i, wrench)
        # The contact normal points from geom1 to geom2: this is the force on geom2.
        world_force = contact.frame.reshape(3, 3).T @ wrench[:3]
        for body, other, sign in ((b2, b1, 1.0), (b1, b2, -1.0)):
            if body in names:
                other_name = "table" if other == 0 else names.get(other, model.body(other).name)
                total = forces[names[body]].get(other_name, 0.0) + sign * float(world_force[2])
                forces[names[body]][other_name] = total
    return forces
