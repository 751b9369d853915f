"""Run an articulated scene's script in MuJoCo, read the keyframes from the contacts, check the outcome.

Times are video seconds (0 on the first frame); an event at time t shows first on frame
``ceil(t * fps)``. Poses are in the world frame (metres, [w, x, y, z]); the joint's value q is in
radians (hinge) or metres (slide), 0 closed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _articulated_motion import Script
from _articulated_scene import ArticulatedLayout
from _demo_sim import SETTLE_S, FrameState, SimResult

CLOSED_TOLERANCE = np.deg2rad(2.0)  # a door within 2 degrees of closed is closed
END_TOLERANCE = {"hinge": np.deg2rad(2.0), "slide": 0.005}  # a joint this near its last value has got there


@dataclass
class ArticulatedResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus the joint.

    Attributes:
        q: The joint's value on every video frame.
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object`` (and ``part``).
        inertia: What the joint moves: the part's inertia about it with its armature (kg*m^2, or kg).
    """

    q: list[float] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    inertia: float = 0.0


def _geoms_of(model: mujoco.MjModel, body: str) -> np.ndarray:
    return np.flatnonzero(model.geom_bodyid == model.body(body).id)


def _named(model: mujoco.MjModel, prefix: str) -> np.ndarray:
    return np.array(
        [i for i in range(model.ngeom) if (model.geom(i).name or "").startswith(prefix)], dtype=int
    )


def simulate(
    model: mujoco.MjModel,
    layout: ArticulatedLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> ArticulatedResult:
    """Run the script, calling ``on_frame`` on every video frame; find the keyframes; check the outcome.

    Args:
        model: The scene (``_articulated_scene.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_articulated_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states and joint values, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    part_body = f"{layout.body_name}_{layout.part_name}"
    joint = model.joint(f"{part_body}_joint")
    data.qpos[joint.qposadr[0]] = layout.q_start
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    inertia = float(full[joint.dofadr[0], joint.dofadr[0]])
    # One bit per kind of geom; a contact's two geoms or-ed say which kinds touch (a geom has one kind,
    # a handle's also its part's).
    kind = np.zeros(model.ngeom, dtype=np.int64)
    for bit, ids in enumerate(
        [
            [model.geom("pad_left").id, model.geom("finger_left").id],
            [model.geom("pad_right").id, model.geom("finger_right").id],
            [model.geom("palm").id, model.geom("flange").id],
            _geoms_of(model, "cup") if layout.cup is not None else [],
            [model.geom("table").id],
            _geoms_of(model, layout.body_name),
            _geoms_of(model, part_body),
            _named(model, f"{layout.body_name}_handle"),
        ]
    ):
        kind[np.asarray(ids, dtype=int)] |= 1 << bit
    left, right, palm, cup, table, body, part, handle = (1 << bit for bit in range(8))
    hand = left | right | palm
    cup_id = model.body("cup").id if layout.cup is not None else -1
    fingers = (model.joint("finger_left").qposadr[0], model.joint("finger_right").qposadr[0])
    bodies = ["hand", layout.body_name, part_body] + (["cup"] if layout.cup is not None else [])

    def command(time: float) -> None:
        position, quat, grip = script.pose_at(time)
        data.mocap_pos[0], data.mocap_quat[0] = position, quat
        data.ctrl[:] = grip

    command(0.0)
    while data.time < SETTLE_S:
        mujoco.mj_step(model, data)
    start = data.time
    steps: list[tuple] = []
    result = ArticulatedResult(inertia=inertia)
    for index in range(frames):
        while data.time - start < index / fps - 1e-9:
            command(data.time - start)
            mujoco.mj_step(model, data)
            pairs = data.contact.geom[: data.ncon]
            touch = set((kind[pairs[:, 0]] | kind[pairs[:, 1]]).tolist())

            def both(a: int, b: int, touch: set = touch) -> bool:
                return any(m & a and m & b for m in touch)

            steps.append(
                (
                    data.time - start,
                    both(cup, left) and both(cup, right),
                    both(cup, table),
                    both(cup, body),
                    both(handle, left) and both(handle, right),
                    both(hand, part),
                    both(hand, body),
                    float(data.xpos[cup_id, 2]) if cup_id >= 0 else 0.0,
                )
            )
        poses = {b: (data.body(b).xpos.copy(), data.body(b).xquat.copy()) for b in bodies}
        q_fingers = (float(data.qpos[fingers[0]]), float(data.qpos[fingers[1]]))
        result.frames.append(FrameState(data.time - start, poses, q_fingers))
        result.q.append(float(data.qpos[joint.qposadr[0]]))
        on_frame(index, data)
    events = _keyframes(steps, np.array(result.q), layout, fps, frames)
    result.keyframes = {e["event"]: e["frame"] for e in events}
    result.events = events
    _check(model, data, layout, steps, result, script)
    return result


def _frame_of(steps: list[tuple], step: int, fps: float, frames: int) -> int:
    return min(int(np.ceil(steps[step][0] * fps - 1e-6)), frames - 1)


def _settled_from(values: np.ndarray, target: float, tolerance: float, after: int) -> int | None:
    """First frame at or after ``after`` from which ``values`` stay within ``tolerance`` of ``target``."""
    near = np.abs(values - target) <= tolerance
    far = np.flatnonzero(~near)
    first = max(after, int(far[-1]) + 1 if far.size else 0)
    return first if first < len(values) else None


def _keyframes(
    steps: list[tuple], q: np.ndarray, layout: ArticulatedLayout, fps: float, frames: int
) -> list[dict]:
    """Keyframes from the per-step contacts and the per-frame joint values."""
    column = {name: np.array([s[i] for s in steps]) for i, name in enumerate(
        ("time", "cup_held", "cup_table", "cup_body", "handle_held", "hand_part", "hand_body", "cup_z"))}  # fmt: skip
    part = {"object": layout.body_name, "part": layout.part_name}
    events: list[dict] = []

    def add(event: str, step: int, **who) -> None:
        events.append({"frame": _frame_of(steps, step, fps, frames), "event": event, **who})

    after = 0
    if layout.cup is not None and column["cup_held"].any():
        held = np.flatnonzero(column["cup_held"])
        grasp, release = int(held[0]), int(held[-1]) + 1
        add("grasp", grasp, object="cup")
        on_table = np.flatnonzero(column["cup_table"][grasp:release])
        if on_table.size and grasp + on_table[-1] + 1 < release:
            add("lift", grasp + int(on_table[-1]) + 1, object="cup")
        add("release", release, object="cup")
        later = np.flatnonzero(column["cup_body"][release:])
        if later.size:
            add("contact", release + int(later[0]), object="cup", target=layout.body_name)
        after = release
    if column["handle_held"].any():
        held = np.flatnonzero(column["handle_held"])
        add("grasp", int(held[0]), **part)
        add("release", int(held[-1]) + 1, **part)
    elif column["hand_part"][after:].any():
        add("push", after + int(np.argmax(column["hand_part"][after:])), **part)
    moved = [e["frame"] for e in events if e.get("part") and e["event"] in ("grasp", "push")]
    if moved:
        goal = layout.q_goal
        tolerance = CLOSED_TOLERANCE if goal == 0.0 else END_TOLERANCE[layout.joint_type]
        target = goal if goal == 0.0 else q[-1]
        reached = _settled_from(q, target, tolerance, moved[0])
        if reached is not None:
            events.append({"frame": reached, "event": "closed" if goal == 0.0 else "open", **part})
    return sorted(events, key=lambda e: (e["frame"], e["event"]))


def _check(
    model: mujoco.MjModel, data: mujoco.MjData, layout: ArticulatedLayout, steps: list[tuple], result: ArticulatedResult,
    script: Script,
) -> None:  # fmt: skip
    """Checks of the outcome, each with its figures; a failed one adds a sentence to ``failures``."""
    q = np.array(result.q)
    frame_of = {e["event"] + ("_part" if e.get("part") else ""): e["frame"] for e in result.events}
    unit, scale = ("deg", np.rad2deg(1.0)) if layout.joint_type == "hinge" else ("m", 1.0)

    def check(name: str, passed: bool, sentence: str, **figures) -> None:
        result.checks[name] = {"passed": bool(passed), **figures}
        if not passed:
            result.failures.append(sentence)

    hand_body = [s[6] for s in steps]
    check("hand_clear_of_body", not any(hand_body),
          f"the gripper touched the {layout.body_name}'s fixed walls on {sum(hand_body)} steps",
          steps_touching=int(sum(hand_body)))  # fmt: skip
    if layout.cup is not None:
        _check_cup(data, layout, steps, frame_of, check)
        push = frame_of.get("push_part")
        before = q[: push if push is not None else len(q)]
        moved = float(np.abs(before - layout.q_start).max()) if before.size else 0.0
        check("door_still_until_push", push is not None and moved < np.deg2rad(1.0),
              f"the door moved {np.rad2deg(moved):.1f} deg before the push (push frame {push})",
              push_frame=push, moved_deg=float(np.rad2deg(moved)))  # fmt: skip
        final = float(q[-1])
        speed = abs(float(data.qvel[model.joint(f"{layout.body_name}_{layout.part_name}_joint").dofadr[0]]))
        check("door_closed", abs(final - layout.q_goal) < CLOSED_TOLERANCE and "closed_part" in frame_of,
              f"the door ended {np.rad2deg(final):.1f} deg open, not closed (within 2 deg)",
              final_deg=float(np.rad2deg(final)), closed_frame=frame_of.get("closed_part"),
              speed_deg_s=float(np.rad2deg(speed)))  # fmt: skip
        return
    grasp, release = frame_of.get("grasp_part"), frame_of.get("release_part")
    opening = script.segment("arc" if layout.joint_type == "hinge" else "pull")
    during = [s[4] for s in steps if opening.start <= s[0] <= opening.end]
    held = float(np.mean(during)) if during else 0.0
    check("handle_held", grasp is not None and release is not None and held > 0.95,
          f"the fingers held the handle on {held:.0%} of the opening (grasp {grasp}, release {release})",
          held_fraction=held, grasp_frame=grasp, release_frame=release)  # fmt: skip
    final = float(q[-1])
    low, high = (np.deg2rad(80), np.deg2rad(100)) if layout.joint_type == "hinge" else (0.12, 0.20)
    check(f"{layout.part_name}_opened", low <= final <= high and "open_part" in frame_of,
          f"the {layout.part_name} ended at {final * scale:.3g} {unit}, not open by {low * scale:.3g}-{high * scale:.3g}",
          final=final, goal=layout.q_goal, unit=unit, open_frame=frame_of.get("open_part"))  # fmt: skip


def _check_cup(
    data: mujoco.MjData, layout: ArticulatedLayout, steps: list[tuple], frame_of: dict, check
) -> None:
    """The cup was carried by the fingers and ends standing on the microwave's floor, inside it."""
    events = ("grasp", "lift", "release", "contact")
    missing = [e for e in events if e not in frame_of]
    ordered = (
        not missing and frame_of["grasp"] <= frame_of["lift"] <= frame_of["release"] <= frame_of["contact"]
    )
    check("cup_events", ordered, f"the cup's events are not grasp <= lift <= release <= contact (missing {missing})",
          missing=missing)  # fmt: skip
    times = np.array([s[0] for s in steps])
    carried = [s for s in steps if s[1]]
    rise = max((s[7] for s in carried), default=0.0)  # the cup's base above the table
    check("cup_carried", bool(carried) and rise > 0.02, f"the fingers did not lift the cup (its base rose {rise * 100:.1f} cm)",
          highest_base_m=float(rise), held_s=float(len(carried) * (times[1] - times[0]) if len(times) > 1 else 0))  # fmt: skip
    x0, x1, y0, y1, floor, _ = layout.cavity
    cup_pos = data.body("cup").xpos
    local = layout.rotation.T @ (cup_pos - layout.origin)
    upright = float(np.degrees(np.arccos(np.clip(data.body("cup").xmat[8], -1, 1))))
    radius = layout.cup.radius
    inside = x0 + radius <= local[0] <= x1 - radius and y0 + radius <= local[1] <= y1 - radius
    on_floor = abs(local[2] - floor) < 0.01
    speed = float(np.linalg.norm(data.joint("cup").qvel[:3]))
    check("cup_in_microwave", inside and on_floor and upright < 10 and speed < 0.02,
          f"the cup did not end standing inside the microwave (at {np.round(local, 3).tolist()} in its frame, "
          f"tilt {upright:.1f} deg, speed {speed:.3f} m/s)",
          position_in_body_m=[float(v) for v in local], tilt_deg=upright, speed_m_s=speed)  # fmt: skip
