"""Simulating the demonstrated action in MuJoCo.

The gripper's mocap target follows the demo's gripper trajectory, interpolated
every :data:`CONTROL_PERIOD_S` (positions linearly, orientations by slerp),
with the physics stepping in between inside MuJoCo. The target leads the
recorded path by :data:`HAND_LEAD_S`, the time the welded hand takes to
catch up, so that the simulated hand is where the recorded one was; the fingers
follow the recorded finger gap, and squeeze from where the recording stalls on
the object until it opens again (``geometry.carry.gripper_hold``). The objects are free
bodies held by friction alone. After the video the scene runs on for
:data:`SETTLE_S` seconds with the gripper held still, for the stability check.

Everything the checks need is recorded: every body's pose at each video frame,
and, every control period, the deepest contact and which objects touch which fingers.
A simulation that diverges (NaN, MuJoCo warnings) stops and is reported with
its frame, never raised.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..geometry.carry import gripper_hold
from ..geometry.keyframes import GripperTrajectory
from ..mjcf.export import contents_body
from ..mjcf.gripper import NAMES, WELD_TIME_CONSTANT, finger_command

SETTLE_S = 0.5
PRE_ROLL_S = 0.1
CONTROL_PERIOD_S = 0.01
"""The gripper's target is updated, and contacts are sampled, every 10 ms (and at every video frame)."""
HAND_LEAD_S = CONTROL_PERIOD_S / 2 + 2 * WELD_TIME_CONSTANT
"""Seconds the hand's target runs ahead of the recorded path (25 ms): a target held for a control period is
half a period old on average, and a critically damped weld trails a steadily moving target by twice its
time constant. Without it the hand ran a video frame behind its path (25 mm mean, 78 mm at most, at
0.75 m/s) and a finger swept into the block it was about to grasp; with it 4 mm mean, much of which is the
recording's sampling (a frame is recorded at the nearest control update, within 5 ms)."""
SUSTAIN_SAMPLES = 3
"""Contact samples (30 ms) a penetration must hold to count as sustained."""
HAND_NEAR = 0.005
"""m: a gripper geom this near an object's geom is at it (a pad that drags it, between its touches)."""


@dataclasses.dataclass
class SimulationRecord:
    """What happened in the simulation.

    Attributes:
        frames: Video frames simulated (the last may be short if it diverged).
        fps: Video frame rate.
        positions: Object name -> ``(frames + settle_frames) x 3`` body positions (world, m) per video frame.
        quaternions: Object name -> ``(...) x 4`` ``[w, x, y, z]``.
        gripper_positions: ``(...) x 3`` hand positions at the grasp centre.
        finger_contacts: Object name -> ``(...) x 2`` bool, touching the left / right finger pad at a contact
            sample (every control period) within each frame: a pad that holds an object may lose it for a
            solver step, which a single sample per frame read as a lost grip.
        hand_contacts: Object name -> ``(...)`` bool, touched by any part of the gripper (palm,
            fingers) at a contact sample (every control period) within each frame; None without a
            gripper. A pad that drags an object touches it for a step or two at a time, which
            samples can miss: ``checks.hand_clearance`` also counts ``hand_near``.
        hand_near: Object name -> ``(...)`` bool, some geom of the gripper within :data:`HAND_NEAR` of one of
            its collision geoms as the frame is recorded; None without a gripper.
        deepest: Object name -> deepest penetration of any of its contacts over the run (m, >= 0).
        deepest_frame: Object name -> frame of that penetration.
        sustained: Object name -> deepest penetration held for ``SUSTAIN_SAMPLES``
            samples in a row (m): overlapping geometry, where an impact's spike is brief.
        sustained_frame: Object name -> frame where that hold ends.
        support_force: Object name -> total contact normal force on it at the end (N), by other body name.
        speeds: Object name -> ``S x 2`` linear (m/s) and angular (rad/s) speed over the settle period.
        masses: Object name -> mass (kg).
        finger_gap: ``(...)`` gap between the finger pads per video frame (m), or None without a gripper.
        qpos: ``(...) x nq`` the whole state's positions per video frame (for rendering).
        joint_values: Part name (``<object>.<part>``) -> ``(...)`` its joint's value per video frame
            (rad or m), the settle frames after the video included.
        contents: Object name -> ``(...) x N x 3`` where its contents' spheres are per video frame (world, m),
            for each object that holds some.
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
    qpos: np.ndarray | None = None
    joint_values: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    finger_gap: np.ndarray | None = None
    hand_contacts: dict[str, np.ndarray] | None = None
    hand_near: dict[str, np.ndarray] | None = None
    sustained: dict[str, float] = dataclasses.field(default_factory=dict)
    sustained_frame: dict[str, int] = dataclasses.field(default_factory=dict)
    contents: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    diverged_frame: int | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    steps: int = 0
    wall_s: float = 0.0


def step_targets(trajectory: GripperTrajectory, fps: float, times: np.ndarray, lead_s: float = 0.0):
    """The gripper's mocap position, quaternion ``[w, x, y, z]`` and finger command at ``times`` (s).

    The pose is taken ``lead_s`` ahead of ``times`` (:data:`HAND_LEAD_S` for a welded hand), the
    finger command at ``times``.
    """
    frames = np.arange(len(trajectory.positions)) / fps
    ahead = np.clip(times + lead_s, 0.0, frames[-1])
    t = np.clip(times, 0.0, frames[-1])
    positions = np.stack([np.interp(ahead, frames, trajectory.positions[:, a]) for a in range(3)], axis=1)
    rotations = Rotation.from_quat(trajectory.quaternions[:, [1, 2, 3, 0]])
    slerp = Slerp(frames, rotations) if len(frames) > 1 else None
    quats = (slerp(ahead) if slerp else Rotation.concatenate([rotations[0]] * len(t))).as_quat()[
        :, [3, 0, 1, 2]
    ]
    opening = np.interp(t, frames, trajectory.opening)
    # The fingers squeeze from where the recording stalls on the object until it opens again, however
    # little; elsewhere they go to the recorded gap exactly (a careful release opens a few mm).
    grasp, release = gripper_hold(trajectory.opening)
    video_frame = t * fps
    closing = np.zeros(len(t), bool)
    if grasp is not None:
        closing = (video_frame >= grasp) & (video_frame < (len(frames) if release is None else release))
    command = np.array([finger_command(o, c) for o, c in zip(opening, closing, strict=True)])
    return positions, quats, command


class _Run:
    """The start of a run: initial state and the gripper's per-step targets."""

    def __init__(
        self, model: mujoco.MjModel, trajectory: GripperTrajectory | None, fps: float, frames: int
    ) -> None:
        self.data = data = mujoco.MjData(model)
        self.dt = dt = model.opt.timestep
        self.settle_frames = int(round(SETTLE_S * fps))
        self.total_frames = frames + self.settle_frames
        self.steps_per_frame = 1.0 / (fps * dt)
        total_steps = int(round((self.total_frames - 1) * self.steps_per_frame)) + 1
        self.pre_steps = int(round(PRE_ROLL_S / dt))
        self.step_count = self.pre_steps + total_steps
        if trajectory is not None:
            times = np.r_[np.zeros(self.pre_steps), np.arange(total_steps) * dt]
            self.targets, self.target_quats, self.commands = step_targets(trajectory, fps, times, HAND_LEAD_S)
            self.mocap = model.body(NAMES["target"]).mocapid[0]
            self.actuators = [
                model.actuator(NAMES["left_actuator"]).id,
                model.actuator(NAMES["right_actuator"]).id,
            ]
            hand_joint = model.joint("gripper_free").qposadr[0]
            data.qpos[hand_joint : hand_joint + 3] = self.targets[0]
            data.qpos[hand_joint + 3 : hand_joint + 7] = self.target_quats[0]
            for side in ("left", "right"):
                data.qpos[model.joint(NAMES[f"{side}_joint"]).qposadr[0]] = self.commands[0]
        mujoco.mj_forward(model, data)


def replay(
    model: mujoco.MjModel, trajectory: GripperTrajectory | None, fps: float, frames: int
) -> tuple[float, int]:
    """The same motion with nothing recorded: a plain loop setting the controls and stepping.

    The benchmark's baseline for the verifier's own overhead.

    Returns:
        Wall time (s) and steps taken.
    """
    import time

    run = _Run(model, trajectory, fps, frames)
    data = run.data
    started = time.perf_counter()
    for step in range(run.step_count):
        if trajectory is not None:
            data.mocap_pos[run.mocap] = run.targets[step]
            data.mocap_quat[run.mocap] = run.target_quats[step]
            data.ctrl[run.actuators] = run.commands[step]
        mujoco.mj_step(model, data)
    return time.perf_counter() - started, run.step_count


def _near_hand(
    model: mujoco.MjModel, data: mujoco.MjData, hand_geoms: np.ndarray, object_geoms: list
) -> np.ndarray:
    """Per object: is a gripper geom within :data:`HAND_NEAR` of one of its geoms now. Bounding spheres
    first; the exact distance only for the pairs they leave."""
    near = np.zeros(len(object_geoms), bool)
    hand_at, hand_bound = data.geom_xpos[hand_geoms], model.geom_rbound[hand_geoms]
    for index, geoms in enumerate(object_geoms):
        gaps = np.linalg.norm(hand_at[:, None] - data.geom_xpos[geoms][None], axis=2)
        close = np.argwhere(gaps - hand_bound[:, None] - model.geom_rbound[geoms][None] < HAND_NEAR)
        near[index] = any(
            mujoco.mj_geomDistance(model, data, int(hand_geoms[h]), int(geoms[g]), HAND_NEAR, None)
            < HAND_NEAR
            for h, g in close
        )
    return near


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

    run = _Run(model, trajectory, fps, frames)
    data, dt, settle_frames, total_frames = run.data, run.dt, run.settle_frames, run.total_frames
    steps_per_frame, pre_steps, step_count = run.steps_per_frame, run.pre_steps, run.step_count
    body_ids = {name: model.body(body).id for name, body in name_map.items()}
    geom_body = model.geom_bodyid
    has_gripper = trajectory is not None
    if has_gripper:
        targets, target_quats, commands = run.targets, run.target_quats, run.commands
        mocap, actuators = run.mocap, run.actuators
        hand = model.body(NAMES["hand"]).id
        left_pad, right_pad = model.geom(NAMES["left_pad"]).id, model.geom(NAMES["right_pad"]).id
        is_hand_geom = model.body_rootid[model.geom_bodyid] == hand

    names = list(name_map)
    object_bodies = np.array([body_ids[n] for n in names], int)
    sphere_bodies = {name: contents_bodies(model, body) for name, body in name_map.items()}
    sphere_bodies = {name: ids for name, ids in sphere_bodies.items() if len(ids)}
    all_contents = {name: np.zeros((total_frames, len(ids), 3)) for name, ids in sphere_bodies.items()}
    all_positions = np.zeros((total_frames, len(names), 3))
    all_quaternions = np.zeros((total_frames, len(names), 4))
    all_fingers = np.zeros((total_frames, len(names), 2), bool)
    all_hand = np.zeros((total_frames, len(names)), bool)
    all_near = np.zeros((total_frames, len(names)), bool)
    all_speeds = np.zeros((settle_frames, len(names), 2))
    all_qpos = np.zeros((total_frames, model.nq))
    velocity = np.zeros(6)
    # Per object (in ``names`` order): deepest contact, and deepest held for SUSTAIN_SAMPLES samples.
    deepest, deepest_at = np.zeros(len(names)), np.zeros(len(names), int)
    sustained, sustained_at = np.zeros(len(names)), np.zeros(len(names), int)
    recent = np.zeros((SUSTAIN_SAMPLES, len(names)))  # the last samples' depths, a ring
    index_of_body = np.full(model.nbody, -1)
    index_of_body[object_bodies] = np.arange(len(names))
    object_of_geom = index_of_body[geom_body]
    if has_gripper:  # the geoms that collide, the hand's and each object's, for its nearness on each frame
        colliding = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
        hand_geoms = np.flatnonzero(is_hand_geom & colliding)
        object_geoms = [np.flatnonzero((object_of_geom == i) & colliding) for i in range(len(names))]
    gripper_positions = np.zeros((total_frames, 3))
    # Control updates every `chunk` steps; each video frame is recorded at the nearest update
    # (within half a control period, 5 ms), so MuJoCo steps in long uninterrupted runs.
    chunk = max(1, int(round(CONTROL_PERIOD_S / dt)))
    stops = list(range(0, step_count, chunk)) + [step_count]
    stop_set = set(stops)
    record_at = {}
    for f in range(total_frames):
        wanted = pre_steps + f * steps_per_frame
        nearest = min(max(int(round(wanted / chunk)) * chunk, chunk), step_count)
        record_at.setdefault(nearest if nearest in stop_set else stops[-1], f)
    diverged, warnings = None, []
    started = time.perf_counter()
    mocap_pos, mocap_quat, ctrl = data.mocap_pos, data.mocap_quat, data.ctrl
    sample, floor = 0, 0.0
    for begin, stop in zip(stops[:-1], stops[1:], strict=True):
        if has_gripper:
            mocap_pos[mocap] = targets[begin]
            mocap_quat[mocap] = target_quats[begin]
            ctrl[actuators] = commands[begin]
        mujoco.mj_step(model, data, stop - begin)
        ncon = data.ncon
        depths = recent[sample % SUSTAIN_SAMPLES]  # this sample's row of the ring
        sample += 1
        depths.fill(0.0)
        penetration = -data.contact.dist[:ncon] if ncon else None
        if has_gripper and ncon:
            geoms = data.contact.geom[:ncon]
            hand_side = is_hand_geom[geoms]
            if hand_side.any():
                objects = object_of_geom[geoms]
                touched = np.concatenate([objects[hand_side[:, 0], 1], objects[hand_side[:, 1], 0]])
                frame_now = min(max(0, int((stop - pre_steps) / steps_per_frame)), total_frames - 1)
                all_hand[frame_now, touched[touched >= 0]] = True
                for side, pad in enumerate((left_pad, right_pad)):
                    # The objects on the other side of this pad's contacts.
                    touched = np.concatenate([objects[geoms[:, 0] == pad, 1], objects[geoms[:, 1] == pad, 0]])
                    all_fingers[frame_now, touched[touched >= 0], side] = True
        # Shallower than every object's records, a sample can set none now or later: skip it.
        if penetration is not None and penetration.max() > floor:
            touching = object_of_geom[data.contact.geom[:ncon]]  # ncon x 2: object index, -1 for none
            for index in range(len(names)):
                mine = (touching[:, 0] == index) | (touching[:, 1] == index)
                if mine.any():
                    depths[index] = max(0.0, float(penetration[mine].max()))
            frame_now = max(0, int((stop - pre_steps) / steps_per_frame))
            deeper = depths > deepest
            deepest[deeper], deepest_at[deeper] = depths[deeper], frame_now
            # Held for SUSTAIN_SAMPLES samples in a row: overlapping geometry, not an impact.
            if sample >= SUSTAIN_SAMPLES:
                held = recent.min(axis=0)
                deeper = held > sustained
                sustained[deeper], sustained_at[deeper] = held[deeper], frame_now
            floor = min(deepest.min(), sustained.min())
        if stop not in record_at:
            continue
        frame = record_at[stop]
        if not np.isfinite(data.qpos).all() or data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
            diverged = frame
            break
        all_qpos[frame] = data.qpos
        all_positions[frame] = data.xpos[object_bodies]
        all_quaternions[frame] = data.xquat[object_bodies]
        for name, ids in sphere_bodies.items():
            all_contents[name][frame] = data.xpos[ids]
        if has_gripper:
            gripper_positions[frame] = data.xpos[hand]
            all_near[frame] = _near_hand(model, data, hand_geoms, object_geoms)
        if frame >= frames:
            for index, body in enumerate(object_bodies):
                mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, velocity, 0)
                all_speeds[frame - frames, index] = np.linalg.norm(velocity[3:]), np.linalg.norm(velocity[:3])
    wall = time.perf_counter() - started
    for index in range(mujoco.mjtWarning.mjNWARNING):
        if data.warning[index].number > 0:
            warnings.append(mujoco.mjtWarning(index).name)
    finger_gap = None
    if has_gripper:
        slides = [model.joint(NAMES[f"{side}_joint"]).qposadr[0] for side in ("left", "right")]
        finger_gap = all_qpos[:, slides].sum(axis=1)  # each pad's face sits on its joint's origin plane
    joint_values = {}
    for name, body in name_map.items():
        joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"{body}_joint")
        if joint >= 0:
            joint_values[name] = all_qpos[:, model.jnt_qposadr[joint]].copy()
    return SimulationRecord(
        frames=frames,
        fps=fps,
        positions={n: all_positions[:, i] for i, n in enumerate(names)},
        quaternions={n: all_quaternions[:, i] for i, n in enumerate(names)},
        gripper_positions=gripper_positions,
        finger_contacts={n: all_fingers[:, i] for i, n in enumerate(names)},
        deepest=dict(zip(names, deepest.tolist(), strict=True)),
        deepest_frame=dict(zip(names, deepest_at.tolist(), strict=True)),
        sustained=dict(zip(names, sustained.tolist(), strict=True)),
        sustained_frame=dict(zip(names, sustained_at.tolist(), strict=True)),
        support_force=support_forces(model, data, body_ids),
        speeds={n: all_speeds[:, i] for i, n in enumerate(names)},
        masses={n: float(model.body_subtreemass[b]) for n, b in body_ids.items()},
        qpos=all_qpos,
        joint_values=joint_values,
        finger_gap=finger_gap,
        hand_contacts={n: all_hand[:, i] for i, n in enumerate(names)} if has_gripper else None,
        hand_near={n: all_near[:, i] for i, n in enumerate(names)} if has_gripper else None,
        contents=all_contents,
        diverged_frame=diverged,
        warnings=warnings,
        steps=step_count,
        wall_s=wall,
    )


def contents_bodies(model: mujoco.MjModel, body_name: str) -> np.ndarray:
    """The body ids of the spheres of the contents of the object whose MJCF body is ``body_name``, in order."""
    ids = []
    while (
        found := mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, contents_body(body_name, len(ids)))
    ) >= 0:
        ids.append(found)
    return np.array(ids, int)


def support_forces(
    model: mujoco.MjModel, data: mujoco.MjData, body_ids: dict[str, int]
) -> dict[str, dict[str, float]]:
    """Vertical contact force on each object now (N; the verifier reads it as the run ends), by the body that
    exerts it: another object's name, ``table`` for the world body, else the MJCF body's name."""
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
