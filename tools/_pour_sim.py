"""Run the pour scene's script in MuJoCo, read the keyframes from the contacts and the spheres, check it.

Times are video seconds (0 on the first frame); an event at time t shows first on frame ``ceil(t * fps)``.
Poses are in the world frame (metres, quaternions [w, x, y, z]). Before the first frame the spheres,
packed in the cup, settle until they rest (``SETTLE_S`` at least, ``SETTLE_MAX_S`` at most).

A sphere *leaves* the cup on the first frame its centre is beyond the rim's plane (cup frame z above the
cup's height). ``pour_start`` is the first frame a sphere leaves, ``pour_end`` the last. A sphere has
*landed* in the bowl when its centre ends within the bowl's rim's inner radius of its axis, above its
bottom and below its rim (``Bowl.holds``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _articulated_motion import Script
from _demo_contacts import both, frame_of, record, slip_in_hand, touching
from _demo_sim import SETTLE_S, FrameState, SimResult
from _pour_scene import PourLayout
from _task_sim import geom_kinds

SETTLE_MAX_S = 1.5  # the spheres settle at most this long before the first frame
REST_SPEED = 0.01  # m/s: the spheres rest once none is faster
SLIP_M = 0.01  # the cup may move at most this far in the hand while it is held
UPRIGHT_DEG, ON_TABLE_M = 5.0, 0.003  # the cup ends within this of upright, its bottom this near the table
LANDED_SHARE, MISSED_SHARE = 0.9, 0.2  # at least this share in the bowl; a missed pour at most that
BODIES = ("hand", "cup", "bowl")
# One bit per kind of geom: a contact's two kinds or-ed say what touches what.
LEFT, RIGHT, PALM, CUP, TABLE, BOWL, BEAD = (1 << bit for bit in range(7))
HAND = LEFT | RIGHT | PALM


@dataclass
class PourResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus

    Attributes:
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object`` (and ``target``).
        left_at: Per sphere, the frame it left the cup, or None.
        start_positions: The spheres' centres on the first frame, world (m), (N, 3).
        end_positions: Their centres on the last frame, world (m), (N, 3).
        landed: Per sphere, whether it ends in the bowl, (N,) bool.
        in_cup: Per sphere, whether it ends in the cup, (N,) bool.
    """

    events: list[dict] = field(default_factory=list)
    left_at: list[int | None] = field(default_factory=list)
    start_positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    end_positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    landed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    in_cup: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


def _kinds(model: mujoco.MjModel) -> np.ndarray:
    """Each geom's contact kind (0 for the floor, the wall and the camera's things)."""
    named = {"pad_left": LEFT, "finger_left": LEFT, "pad_right": RIGHT, "finger_right": RIGHT,
             "palm": PALM, "flange": PALM, "table": TABLE}  # fmt: skip
    kind = geom_kinds(model, named)
    kind[model.geom_bodyid == model.body("cup").id] = CUP
    kind[model.geom_bodyid == model.body("bowl").id] = BOWL
    kind[model.geom_type == mujoco.mjtGeom.mjGEOM_SPHERE] = BEAD
    return kind


def _local(data: mujoco.MjData, body: str, points: np.ndarray) -> np.ndarray:
    """World points (m, (N, 3)) in body ``body``'s frame."""
    return (points - data.body(body).xpos) @ data.body(body).xmat.reshape(3, 3)


def simulate(
    model: mujoco.MjModel,
    layout: PourLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> PourResult:
    """Let the spheres settle, run the script calling ``on_frame`` on every video frame, find the keyframes
    and check the outcome.

    Args:
        model: The scene (``_pour_model.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_pour_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states, keyframes, the spheres' outcome, checks and failures.
    """
    data = mujoco.MjData(model)
    kind = _kinds(model)
    fingers = (model.joint("finger_left").qposadr[0], model.joint("finger_right").qposadr[0])
    beads = np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_SPHERE)
    bead_bodies = model.geom_bodyid[beads]
    bead_dofs = np.array([model.jnt_dofadr[model.body_jntadr[b]] for b in bead_bodies])

    def command(time: float) -> None:
        position, quat, grip = script.pose_at(time)
        data.mocap_pos[0], data.mocap_quat[0] = position, quat
        data.ctrl[:] = grip

    command(0.0)
    while data.time < SETTLE_MAX_S:
        mujoco.mj_step(model, data)
        speed = np.linalg.norm(data.qvel[bead_dofs[:, None] + np.arange(3)], axis=1).max()
        if data.time >= SETTLE_S and speed < REST_SPEED:
            break
    start = data.time
    steps: list[tuple] = []
    result = PourResult()
    result.left_at = [None] * len(beads)
    for index in range(frames):
        while data.time - start < index / fps - 1e-9:
            command(data.time - start)
            mujoco.mj_step(model, data)
            touch = touching(data, kind)
            steps.append((data.time - start, both(touch, CUP, LEFT) and both(touch, CUP, RIGHT),
                          both(touch, CUP, TABLE), both(touch, HAND, BOWL), both(touch, HAND, CUP)))  # fmt: skip
        poses = {b: (data.body(b).xpos.copy(), data.body(b).xquat.copy()) for b in BODIES}
        result.frames.append(
            FrameState(data.time - start, poses, (float(data.qpos[fingers[0]]), float(data.qpos[fingers[1]])))
        )
        centres = data.xpos[bead_bodies].copy()
        out = _local(data, "cup", centres)[:, 2] > layout.cup.height
        for bead in np.flatnonzero(out):
            if result.left_at[bead] is None:
                result.left_at[bead] = index
        if index == 0:
            result.start_positions = centres
        on_frame(index, data)
    result.end_positions = data.xpos[bead_bodies].copy()
    result.landed = layout.bowl.holds(_local(data, "bowl", result.end_positions))
    in_cup = _local(data, "cup", result.end_positions)
    result.in_cup = (
        (np.hypot(in_cup[:, 0], in_cup[:, 1]) < layout.cup.inner_radius)
        & (in_cup[:, 2] > 0)
        & (in_cup[:, 2] < layout.cup.height)
    )
    result.events = _keyframes(steps, result, script, fps, frames)
    result.keyframes = {e["event"]: e["frame"] for e in result.events}
    _check(data, kind, layout, steps, result, script)
    return result


def _event_steps(steps: list[tuple], script: Script) -> dict[str, int]:
    """The steps of grasp (both fingers first touch the cup), lift (its last touch of the table between the
    grasp and the tilt, plus one) and release (its last step held, plus one), those that happened."""
    held, on_table = np.array([s[1] for s in steps]), np.array([s[2] for s in steps])
    if not held.any():
        return {}
    found = {"grasp": int(np.argmax(held)), "release": int(np.flatnonzero(held)[-1]) + 1}
    tilt = int(np.searchsorted([s[0] for s in steps], script.segment("tilt").start))
    table = np.flatnonzero(on_table[found["grasp"] : tilt])
    if found["grasp"] < tilt and (not table.size or found["grasp"] + table[-1] + 1 < tilt):
        found["lift"] = found["grasp"] + (int(table[-1]) + 1 if table.size else 0)
    return {event: step for event, step in found.items() if step < len(steps)}


def _keyframes(steps: list[tuple], result: PourResult, script: Script, fps: float, frames: int) -> list[dict]:
    """grasp, lift and release from the per-step contacts; pour_start and pour_end from the spheres."""
    events = [{"frame": frame_of(steps[step][0], fps, frames), "event": event, "object": "cup"}
              for event, step in _event_steps(steps, script).items()]  # fmt: skip
    left = [frame for frame in result.left_at if frame is not None]
    if left:
        events += [{"frame": min(left), "event": "pour_start", "object": "cup", "target": "bowl"},
                   {"frame": max(left), "event": "pour_end", "object": "cup", "target": "bowl"}]  # fmt: skip
    return sorted(events, key=lambda e: (e["frame"], e["event"]))


def _check(
    data: mujoco.MjData, kind: np.ndarray, layout: PourLayout, steps: list[tuple], result: PourResult,
    script: Script,
) -> None:  # fmt: skip
    """Checks of the outcome: the events in order, the cup held without slipping, the hand clear of the bowl
    and (once open) of the cup, the spheres in the bowl (or, missed on purpose, not), the cup back upright."""
    keyframes = result.keyframes
    names = ("grasp", "lift", "pour_start", "pour_end", "release")
    order = [keyframes.get(e) for e in names]
    ordered = None not in order and all(a <= b for a, b in zip(order[:-1], order[1:], strict=True))
    record(result, "events", ordered, f"the cup's events are not {' <= '.join(names)} ({keyframes})",
           frames=keyframes)  # fmt: skip
    if ordered:
        moved, turned = slip_in_hand(result.frames, "cup", order[1], order[4] - 1)
        record(result, "held_without_slip", moved <= SLIP_M,
               f"the cup slipped {moved * 100:.1f} cm in the hand while it was held (at most {SLIP_M * 100:g} cm)",
               slip_m=moved, slip_deg=turned, limit_m=SLIP_M)  # fmt: skip
    knocks = sum(s[3] for s in steps)
    record(result, "hand_clear_of_bowl", knocks == 0, f"the gripper touched the bowl on {knocks} steps",
           steps_touching=knocks)  # fmt: skip
    opened = script.segment("release").end
    touches = sum(s[4] for s in steps if s[0] > opened)
    record(result, "hand_clear_of_cup_after_release", touches == 0,
           f"the gripper touched the cup on {touches} steps after opening", steps_touching=touches)  # fmt: skip
    count = len(result.landed)
    landed = int(result.landed.sum())
    share = landed / count if count else 0.0
    figures = {"landed_in_target": landed, "landed_share": share, "left_in_source": int(result.in_cup.sum()),
               "left_the_source": sum(f is not None for f in result.left_at), "count": count}  # fmt: skip
    if layout.miss:
        record(result, "missed_on_purpose", share <= MISSED_SHARE,
               f"{share:.0%} of the spheres poured {layout.miss * 100:.1f} cm short of the bowl still land in "
               f"it (at most {MISSED_SHARE:.0%}; raise --miss)", miss_m=layout.miss, limit=MISSED_SHARE,
               **figures)  # fmt: skip
    else:
        record(result, "poured_into_bowl", share >= LANDED_SHARE,
               f"only {landed} of {count} spheres ({share:.0%}) end in the bowl (at least {LANDED_SHARE:.0%})",
               limit=LANDED_SHARE, **figures)  # fmt: skip
    axis = data.body("cup").xmat.reshape(3, 3)[:, 2]
    lean = float(np.rad2deg(np.arccos(np.clip(axis[2], -1.0, 1.0))))
    bottom = float(data.body("cup").xpos[2])
    on_table = both(touching(data, kind), CUP, TABLE)
    record(result, "cup_upright_on_table", lean <= UPRIGHT_DEG and abs(bottom) <= ON_TABLE_M and on_table,
           f"the cup does not end upright on the table (leaning {lean:.1f} deg, its bottom "
           f"{bottom * 1000:.1f} mm up, touching the table: {on_table})", lean_deg=lean, bottom_m=bottom,
           touches_table=on_table)  # fmt: skip
