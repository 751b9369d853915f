"""Run the demo script in MuJoCo, find the keyframes in the contacts, check the outcome.

Times are video seconds (0 at the first frame); the frame that first shows an event
at time t is ``ceil(t * fps)``. Poses are in the world frame (metres, [w, x, y, z]).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _demo_motion import Waypoint, gripper_quat, pose_at, tilt_at
from _demo_scene import Layout, container_floor_radius

SETTLE_S = 0.3  # simulated before the first frame so that objects rest on the table
BODIES = ("block", "cup", "bowl", "base", "distractor", "hand")


@dataclass
class FrameState:
    """The simulation state at one video frame.

    Attributes:
        time: Video time in seconds.
        poses: Body name to (position (3,), quaternion [w, x, y, z]) in the world frame.
        finger_q: Left and right finger joint positions (m), each the distance from the
            grasp centre to that pad's inner face.
    """

    time: float
    poses: dict[str, tuple[np.ndarray, np.ndarray]]
    finger_q: tuple[float, float]


@dataclass
class SimResult:
    """What happened.

    Attributes:
        frames: One state per video frame.
        keyframes: Event name (grasp, lift, contact, release) to video frame.
        checks: Check name to passed flag and figures.
        failures: One sentence per failed check; empty when the demo is good.
    """

    frames: list[FrameState] = field(default_factory=list)
    keyframes: dict[str, int] = field(default_factory=dict)
    checks: dict[str, dict] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def _geom_ids(model: mujoco.MjModel, names: list[str]) -> np.ndarray:
    return np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in names])


def _body_geoms(model: mujoco.MjModel, body: str) -> np.ndarray:
    body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
    return np.flatnonzero(model.geom_bodyid == body_id)


def _block_lowest_in(data: mujoco.MjData, block_half: float, frame: str) -> float:
    """Height (m) of the block's lowest corner above the origin of body ``frame``."""
    corners = np.array(np.meshgrid(*[[-block_half, block_half]] * 3)).reshape(3, -1).T
    block_rot = data.body("block").xmat.reshape(3, 3)
    world = data.body("block").xpos + corners @ block_rot.T
    rot = data.body(frame).xmat.reshape(3, 3)
    local = (world - data.body(frame).xpos) @ rot
    return float(local[:, 2].min())


def simulate(
    model: mujoco.MjModel,
    layout: Layout,
    waypoints: list[Waypoint],
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> SimResult:
    """Run the script, calling ``on_frame`` at every video frame, and check the result.

    Args:
        model: The compiled demo scene (``build_model``).
        layout: Its sizes and placements.
        waypoints: The gripper script (``plan_script``).
        frames: Number of video frames.
        fps: Video frame rate (frames per second).
        on_frame: Called with (frame index, data) once the simulation reaches a frame.

    Returns:
        Per-frame states, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    left = _geom_ids(model, ["pad_left", "finger_left"])
    right = _geom_ids(model, ["pad_right", "finger_right"])
    gripper = np.r_[left, right, _geom_ids(model, ["palm", "flange"])]
    block = _geom_ids(model, ["block"])[0]
    table = _geom_ids(model, ["table"])[0]
    cup = _body_geoms(model, layout.container)
    bodies = [b for b in BODIES if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) >= 0]
    qpos_left = model.joint("finger_left").qposadr[0]
    qpos_right = model.joint("finger_right").qposadr[0]

    def command(video_time: float) -> None:
        position, yaw, grip = pose_at(waypoints, video_time)
        data.mocap_pos[0] = position
        data.mocap_quat[0] = gripper_quat(yaw, tilt_at(waypoints, video_time))
        data.ctrl[:] = grip

    command(0.0)
    while data.time < SETTLE_S:
        mujoco.mj_step(model, data)
    start = data.time
    steps: list[tuple[float, bool, bool, bool, bool, bool, float]] = []
    result = SimResult()
    for index in range(frames):
        target = index / fps
        while data.time - start < target - 1e-9:
            command(data.time - start)
            mujoco.mj_step(model, data)
            pairs = data.contact.geom[: data.ncon]
            with_block = pairs[(pairs == block).any(axis=1)]
            others = with_block[with_block != block]
            steps.append(
                (
                    data.time - start,
                    bool(np.isin(others, left).any()),
                    bool(np.isin(others, right).any()),
                    bool((others == table).any()),
                    bool(np.isin(others, cup).any()),
                    bool((~np.isin(others, gripper)).any()),
                    _block_lowest_in(data, layout.block_size / 2, "world"),
                )
            )
        poses = {b: (data.body(b).xpos.copy(), data.body(b).xquat.copy()) for b in bodies}
        q = (float(data.qpos[qpos_left]), float(data.qpos[qpos_right]))
        result.frames.append(FrameState(data.time - start, poses, q))
        on_frame(index, data)
    _find_keyframes(steps, fps, frames, result)
    _check_outcome(model, data, layout, steps, result)
    tilted = [(a, b) for a, b in zip(waypoints[:-1], waypoints[1:], strict=True) if b.tilt]
    if tilted and not result.failures:
        _check_tilt(tilted[0][0].time, tilted[0][1], fps, result)
    return result


def _find_keyframes(steps: list[tuple], fps: float, frames: int, result: SimResult) -> None:
    times = np.array([s[0] for s in steps])
    both = np.array([s[1] and s[2] for s in steps])
    on_table = np.array([s[3] for s in steps])
    on_cup = np.array([s[4] for s in steps])
    found: dict[str, int] = {}
    if both.any():
        found["grasp"] = int(np.argmax(both))
        found["release"] = int(np.flatnonzero(both)[-1]) + 1
        table_steps = np.flatnonzero(on_table[: found["release"]])
        if table_steps.size and table_steps[-1] + 1 < found["release"]:
            found["lift"] = int(table_steps[-1]) + 1
        later_cup = np.flatnonzero(on_cup[found["release"] :])
        if later_cup.size:
            found["contact"] = found["release"] + int(later_cup[0])
    for event, step in found.items():
        if step < len(times):
            frame = int(np.ceil(times[step] * fps - 1e-6))
            result.keyframes[event] = min(frame, frames - 1)
    result.checks["_steps"] = {"passed": True, **found}


def _check_outcome(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    layout: Layout,
    steps: list[tuple],
    result: SimResult,
) -> None:
    found = result.checks.pop("_steps")
    # A demo that misses on purpose lands on the table: no contact with the target is wanted.
    missing = [
        e for e in ("grasp", "lift", "release", "contact")[: 3 if layout.miss else 4] if e not in found
    ]
    order_ok = not missing and found["grasp"] < found["lift"] < found["release"]
    order_ok = order_ok and found["release"] <= found.get("contact", found["release"])
    result.checks["events"] = {"passed": order_ok, "missing": missing}
    if not order_ok:
        result.failures.append(
            f"the simulation did not show grasp < lift < release <= contact "
            f"(missing: {', '.join(missing) or 'none'}; steps {found})"
        )
        return
    carried = steps[found["lift"] : found["release"]]
    held = np.mean([s[1] and s[2] and not s[5] for s in carried])
    height = max(s[6] for s in carried)
    friction_ok = bool(held > 0.99 and height > 0.03)
    result.checks["held_by_friction"] = {
        "passed": friction_ok,
        "held_fraction": float(held),
        "max_block_bottom_m": height,
    }
    if not friction_ok:
        result.failures.append(
            f"the block was not carried by the fingers alone (held {held:.0%} of the carry, "
            f"lowest corner at most {height * 100:.1f} cm above the table)"
        )

    name = layout.container
    inner = container_floor_radius(layout)
    cup_rot = data.body(name).xmat.reshape(3, 3)
    local = (data.body("block").xpos - data.body(name).xpos) @ cup_rot
    radial = float(np.hypot(local[0], local[1]))
    lowest = _block_lowest_in(data, layout.block_size / 2, name)
    speed = float(np.linalg.norm(data.joint("block").qvel[:3]))
    tilt = float(np.degrees(np.arccos(np.clip(cup_rot[2, 2], -1, 1))))
    inside = radial + layout.block_size / 2 < inner + 0.003
    on_bottom = abs(lowest - layout.cup_bottom) < 0.004
    settled = speed < 0.02
    result.checks[f"in_{name}"] = {
        "passed": bool(inside and on_bottom and settled and tilt < 5.0),
        "radial_offset_m": radial,
        f"lowest_corner_above_{name}_bottom_m": lowest - layout.cup_bottom,
        "block_speed_m_s": speed,
        f"{name}_tilt_deg": tilt,
    }
    if layout.miss:  # a failing demo: the block must end off the target, and the target standing
        missed = bool(not (inside and on_bottom) and tilt < 5.0)
        result.checks["missed_on_purpose"] = {"passed": missed, "miss_m": layout.miss}
        if not missed:
            result.failures.append(
                f"the block let go {layout.miss * 100:.1f} cm past the {name} still ended on it (offset "
                f"{radial * 100:.1f} cm) or the {name} tipped ({tilt:.1f} deg): raise --miss"
            )
        return
    if not result.checks[f"in_{name}"]["passed"]:
        result.failures.append(
            f"the block did not end resting in the {name} (offset from the axis "
            f"{radial * 100:.1f} cm, lowest corner {(lowest - layout.cup_bottom) * 100:.1f} cm "
            f"above the {name} bottom, speed {speed:.3f} m/s, {name} tilt {tilt:.1f} deg)"
        )


def _check_tilt(start: float, end: Waypoint, fps: float, result: SimResult) -> None:
    """Check that the block turned with the tilted gripper and stayed put in its grip.

    Over the tilted segment (from video time ``start`` to ``end.time``) the block's
    pose in the gripper frame is compared with the one at the segment's first frame:
    its offset (slip) and its turn must stay small, and the block's z axis must lean
    from vertical by about the commanded tilt.

    Args:
        start: Video time (s) when the tilted segment begins.
        end: The waypoint that ends it, with ``tilt`` and ``tilt_ramp``.
        fps: Video frame rate.
        result: Filled so far; gets a ``carry_tilt`` check (and a failure if it fails).
    """
    first = int(np.ceil(start * fps - 1e-6))
    last = min(int(np.floor(end.time * fps + 1e-6)), len(result.frames) - 1)
    window = result.frames[first : last + 1]

    def block_in_hand(state: FrameState) -> tuple[np.ndarray, np.ndarray]:
        hand_pos, hand_quat = state.poses["hand"]
        block_pos, block_quat = state.poses["block"]
        hand, block = np.zeros(9), np.zeros(9)
        mujoco.mju_quat2Mat(hand, hand_quat)
        mujoco.mju_quat2Mat(block, block_quat)
        hand, block = hand.reshape(3, 3), block.reshape(3, 3)
        return hand.T @ (block_pos - hand_pos), hand.T @ block

    ref_pos, ref_rot = block_in_hand(window[0])
    slip, turn, leans = 0.0, 0.0, []
    for state in window:
        pos, rot = block_in_hand(state)
        slip = max(slip, float(np.linalg.norm(pos - ref_pos)))
        cos = (np.trace(ref_rot.T @ rot) - 1.0) / 2.0
        turn = max(turn, float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))))
        block = np.zeros(9)
        mujoco.mju_quat2Mat(block, state.poses["block"][1])
        leans.append(float(np.degrees(np.arccos(np.clip(block[8], -1.0, 1.0)))))
    wanted = abs(float(np.degrees(end.tilt)))
    max_lean = max(leans)
    held = sum(lean >= wanted - 2.0 for lean in leans)
    passed = slip < 0.003 and turn < 2.0 and abs(max_lean - wanted) < 3.0
    result.checks["carry_tilt"] = {
        "passed": bool(passed),
        "commanded_deg": float(np.degrees(end.tilt)),
        "max_block_tilt_deg": max_lean,
        "frames_within_2_deg": int(held),
        "first_frame": first,
        "last_frame": first + len(window) - 1,
        "max_slip_in_gripper_m": slip,
        "max_turn_in_gripper_deg": turn,
    }
    if not passed:
        result.failures.append(
            f"the block did not keep the carry tilt in the grip (max tilt {max_lean:.1f} deg "
            f"of {wanted:.1f}, slip {slip * 1000:.1f} mm, turn in the grip {turn:.1f} deg)"
        )
