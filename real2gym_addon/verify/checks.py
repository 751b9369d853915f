"""The checks that decide whether a scene is physically verified.

Each check returns ``{"passed": bool, ...measured figures}``; the thresholds are
module constants, documented in docs/checks.md. ``verification.passed`` is
all of them. Which checks run, in which order, and how each is shown is the
table in :mod:`.registry`.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..geometry.carry import gripper_hold
from ..geometry.parts import part_key
from ..geometry.stage import Geometry
from ..mjcf.export import objects_at_frame
from ..mjcf.gripper import MAX_OPENING
from ..tasks import STEPS, STEPS_FIELD, TaskState, carried_share, steps_success, task_type, tilt_between
from ..tasks.inserting import inserted_depth
from ..tasks.pouring import inside_container
from .simulate import SimulationRecord

PENETRATION_LIMIT = 0.002
"""Deepest allowed sustained contact penetration (held for 30 ms) over the run (m)."""
IMPACT_LIMIT = 0.008
"""Deepest allowed momentary penetration (an impact's spike) over the run (m)."""
SLIP_LIMIT = 0.01
"""Largest allowed slide of the held object along the fingers between grasp and release (m), in the hand's
frame."""
HOLD_GAP_S = 0.1
"""s: the longest both pads may leave the held object between grasp and release while it still goes with
the hand (no slip): a flicker of contact, not a lost grasp. Three frames at 30 fps."""
SUPPORT_TOLERANCE = 0.2
"""Support force may differ from the object's weight by this fraction."""
LINEAR_SPEED_LIMIT = 0.01
ANGULAR_SPEED_LIMIT = 0.2
FIDELITY_LIMIT = 0.03
"""RMS distance per phase between the simulated and video-derived paths (m)."""
GRAVITY = 9.81
RELEASE_FREE_S = 0.2
"""Seconds after the release keyframe by which the fingers must have let go of the object."""
HELD_AFTER = 0.5
"""Share of the frames after that with both fingers still on the object: the release did not free it."""
VIDEO_FREED = 0.02
"""m: the gripper and the object parting by this much after the release shows the video freed it."""
HAND_PUSH_LIMIT = 0.01
"""m: the hand touching an object outside the grasp may move it this much more than the video shows."""


def _events(geometry: Geometry, name: str) -> dict[str, int]:
    return {k["event"]: k["frame"] for k in geometry.keyframes if k["object"] == name}


def task_success(task: dict, geometry: Geometry, record: SimulationRecord) -> dict:
    """The task type's own success predicate (:data:`..tasks.TASKS`) as the run ends; a ``steps`` task's
    steps each on every frame, in order (:func:`..tasks.steps_success`)."""
    if task["type"] != STEPS.name:
        result = task_type(task["type"]).success(final_task_state(task, geometry, record))
        if "landed_share" in result:  # a pour: where its stream came down, for the fix that aims it
            result.update(_stream(task, geometry, record))
        return result
    results = []
    for step in task[STEPS_FIELD]:
        kind = task_type(step["type"])
        result = kind.success(final_task_state(step, geometry, record))
        holds = [
            kind.success(final_task_state(step, geometry, record, f))["passed"] for f in range(record.frames)
        ]
        since = len(holds)
        while since > 0 and holds[since - 1]:
            since -= 1
        done = since if result["passed"] and since < len(holds) else None
        results.append({"type": step["type"], **result, "done_frame": done})
    return steps_success(results)


def _stream(task: dict, geometry: Geometry, record: SimulationRecord) -> dict:
    """Where a pour's stream came down: the middle of the points where each sphere that left the source first
    fell through the target's rim height (before any bounce), and the target's axis there (world x, y, m)."""
    moved, target = task["object"], next(o for o in geometry.objects if o.name == task.get("target"))
    source = next(o for o in geometry.objects if o.name == moved)
    paths = record.contents.get(moved)
    if paths is None or source.contents is None:
        return {}
    frames = min(record.frames, len(paths))
    turns = Rotation.from_quat(record.quaternions[moved][:frames][:, [1, 2, 3, 0]]).as_matrix()
    rim = record.positions[target.name][frames - 1][2] + target.fitted.shape.size[2] / 2
    crossed = np.full(paths.shape[1], -1)
    for frame in range(frames):
        axis = record.positions[moved][frame] + turns[frame] @ source.fitted.shape.axis_offset()
        out = ~inside_container(paths[frame], source.fitted.shape, axis, turns[frame], source.contents.radius)
        crossed[(crossed < 0) & out & (paths[frame][:, 2] <= rim)] = frame
    fell = [paths[f, i, :2] for i, f in enumerate(crossed) if f >= 0]
    centre = record.positions[target.name][frames - 1] + Rotation.from_quat(
        record.quaternions[target.name][frames - 1][[1, 2, 3, 0]]).apply(target.fitted.shape.axis_offset())  # fmt: skip
    return {"stream_centre_m": np.round(np.mean(fell, axis=0), 4).tolist() if fell else None,
            "target_centre_m": np.round(centre[:2], 4).tolist()}  # fmt: skip


def _part(geometry: Geometry, key: str):
    owner, _, name = key.partition(".")
    obj = next(o for o in geometry.objects if o.name == owner)
    return next(p for p in obj.parts if p.name == name)


def final_task_state(task: dict, geometry: Geometry, record: SimulationRecord, frame: int = -1) -> TaskState:
    """The task's objects at the simulation's last frame (or at video ``frame``); ``raised_m`` is the
    highest point over the run up to it."""
    if task_type(task["type"]).needs_part:
        key = part_key(task["object"], task["part"])
        q = float(record.joint_values[key][frame])
        return TaskState(
            None, None, part_opening=_part(geometry, key).joint.opening(q), part_q=q, to=task.get("to")
        )
    moved = task["object"]
    positions = record.positions[moved]
    obj = next(o for o in geometry.objects if o.name == moved)
    upto = record.frames if frame < 0 else frame + 1
    raised = float(positions[:upto, 2].max() - positions[0][2])
    target = next((o for o in geometry.objects if o.name == task.get("target")), None)
    own_turn = Rotation.from_quat(record.quaternions[moved][frame][[1, 2, 3, 0]]).as_matrix()
    if target is None:
        return TaskState(positions[frame], obj.fitted.shape, raised, moved_rotation=own_turn)
    shape = target.fitted.shape
    turns = Rotation.from_quat(record.quaternions[target.name][[0, frame]][:, [1, 2, 3, 0]]).as_matrix()
    axis = record.positions[target.name][frame] + turns[1] @ shape.axis_offset()
    share = None
    if frame in (-1, len(positions) - 1):  # the contact forces are recorded as the run ends
        weight = record.masses[moved] * GRAVITY
        share = carried_share(record.support_force[moved], weight, target.name)
    contents = record.contents.get(moved)
    return TaskState(positions[frame], obj.fitted.shape, raised, axis, shape, target_rotation=turns[1],
                     support_share=share, target_tilt_rad=tilt_between(turns[0], turns[1]),
                     moved_rotation=own_turn, contents=None if contents is None else contents[frame],
                     contents_radius=obj.contents.radius if obj.contents else 0.0,
                     min_share=task.get("min_share"), depth=task.get("depth"),
                     **video_expectations(geometry, moved, target.name))  # fmt: skip


def video_expectations(geometry: Geometry, moved: str, target: str | None) -> dict:
    """What the video's last frame says the task ends as, for the predicates that compare with it: the world's
    up seen from the moved object (``expected_up``; ``shelve``) and how deep it is in the target's opening
    (``expected_depth``; ``insert``)."""
    by_name = {o.name: o for o in geometry.objects}
    obj = by_name[moved]
    out = {"expected_up": obj.motion.rotation(-1)[2], "expected_depth": None}
    if target is not None and target in by_name:
        other = by_name[target]
        turn = other.motion.rotation(-1)
        shape = other.fitted.shape
        state = TaskState(obj.motion.positions[-1], obj.fitted.shape, 0.0,
                          other.motion.positions[-1] + turn @ shape.axis_offset(), shape, target_rotation=turn,
                          moved_rotation=obj.motion.rotation(-1))  # fmt: skip
        out["expected_depth"] = inserted_depth(state)
    return out


def _video_path(geometry: Geometry, name: str) -> np.ndarray:
    """``Nx3``: an object's (or a part's) box centre per video frame as the video shows it (world, m)."""
    if name in {o.name for o in geometry.objects}:
        return next(o for o in geometry.objects if o.name == name).motion.positions
    part = _part(geometry, name)
    return np.array([part.pose_at(q)[:3, 3] for q in part.filled_q()])


def held_name(task: dict) -> str:
    """What the hand holds for the task: its object, or for ``open`` and ``close`` the part's key."""
    if task_type(task["type"]).needs_part:
        return part_key(task["object"], task["part"])
    return task["object"]


def grasp_held(task: dict, geometry: Geometry, record: SimulationRecord) -> dict:
    """The object goes with the hand from grasp to release: it does not slide along the fingers, and
    both pads never leave it for longer than :data:`HOLD_GAP_S`; a part pushed and never grasped (a door
    pushed shut) is not judged.

    The hold is judged over time, with hysteresis: a pad that loses the object for a solver step or a
    frame, while the object still goes with the hand, has not let it go (an unheld object falls 4.9 cm
    in 0.1 s, which the slip sees). A share of frames with both pads on was a cliff: one frame more or
    less of a 39-frame carry moved it across its threshold. The share is still reported
    (``held_fraction``), with the longest gap.
    """
    moved = held_name(task)
    events = _events(geometry, moved)
    if "grasp" not in events and moved != task["object"]:
        return None
    if "grasp" not in events:
        return {"passed": False, "reason": "no grasp keyframe"}
    if "release" in events:
        last = events["release"] - 1
    elif not task_type(task["type"]).releases:  # a lift may hold the object to the end of the video
        last = record.frames - 1
    else:
        return {"passed": False, "reason": "no release keyframe: the task needs the object let go"}
    start, end = events["grasp"] + 2, max(events["grasp"] + 3, last)
    both = record.finger_contacts[moved][start:end].all(axis=1)
    held = float(both.mean()) if len(both) else 0.0
    offsets = record.positions[moved][start:end] - record.gripper_positions[start:end]
    if moved != task["object"]:  # a part turns about its joint: the hand's slip is in the part's frame
        turns = Rotation.from_quat(record.quaternions[moved][start:end][:, [1, 2, 3, 0]])
        offsets = turns.inv().apply(offsets) if len(offsets) else offsets
    elif geometry.gripper is not None and len(offsets):
        # Along the fingers: in the hand's own frame. A hand that turns what it holds (tips a mug about the
        # peg it hangs on, tilts a carried block) turns the offset with it; in the world frame a 5 cm
        # offset turned by 60 degrees read as 5 cm of slip.
        turns = Rotation.from_quat(np.asarray(geometry.gripper.quaternions)[start:end][:, [1, 2, 3, 0]])
        offsets = turns.inv().apply(offsets)
    slip = float(np.linalg.norm(offsets - offsets[0], axis=1).max()) if len(offsets) else 0.0
    gap, gap_start = _longest_gap(both)
    gap_s = gap / record.fps
    return {
        "passed": bool(len(both)) and gap_s <= HOLD_GAP_S + 1e-9 and slip < SLIP_LIMIT,
        "held_fraction": round(held, 4),
        "longest_gap_s": round(gap_s, 4),
        "slip_m": round(slip, 4),
        "first_frame_without_contact": None if gap == 0 else int(start + np.argmax(~both)),
        "longest_gap_from": None if gap == 0 else int(start + gap_start),
        "frames": [start, end],
    }


def _longest_gap(both: np.ndarray) -> tuple[int, int]:
    """The longest run of frames without both pads on, and where it starts (0, 0 for none)."""
    longest, where, run = 0, 0, 0
    for index, on in enumerate(both):
        run = 0 if on else run + 1
        if run > longest:
            longest, where = run, index - run + 1
    return longest, where


def support(task: dict, geometry: Geometry, record: SimulationRecord) -> dict | None:
    """At the end, the supports carry the moved object's weight (not judged for a part on its joint)."""
    if held_name(task) != task["object"]:
        return None
    moved = task["object"]
    weight = record.masses[moved] * GRAVITY
    forces = record.support_force[moved]
    carried = sum(f for f in forces.values() if f > 0)
    ratio = carried / weight if weight else 0.0
    return {
        "passed": abs(ratio - 1.0) < SUPPORT_TOLERANCE,
        "weight_n": round(weight, 4),
        "support_n": round(carried, 4),
        "ratio": round(ratio, 3),
        "by": {k: round(v, 4) for k, v in forces.items()},
    }


def stability(record: SimulationRecord) -> dict:
    """Every object is still over the settle period after the video."""
    worst_linear = max((float(v[:, 0].max()) for v in record.speeds.values() if len(v)), default=0.0)
    worst_angular = max((float(v[:, 1].max()) for v in record.speeds.values() if len(v)), default=0.0)
    return {
        "passed": worst_linear < LINEAR_SPEED_LIMIT and worst_angular < ANGULAR_SPEED_LIMIT,
        "max_linear_speed_m_s": round(worst_linear, 5),
        "max_angular_speed_rad_s": round(worst_angular, 4),
    }


def penetration(record: SimulationRecord) -> dict:
    """No object sinks into another: sustained contact depth within the limit, impacts within theirs.

    Soft contacts let a falling object dip for a few milliseconds as it lands
    (millimetres at a metre per second); overlapping geometry holds its depth.
    The figures name the object and frame of whichever limit is broken (else of
    the deepest sustained contact).
    """
    held = max(record.sustained, key=record.sustained.get) if record.sustained else None
    peak = max(record.deepest, key=record.deepest.get)
    sustained = record.sustained.get(held, 0.0) if held else record.deepest[peak]
    peak_depth = record.deepest[peak]
    held_ok, peak_ok = sustained <= PENETRATION_LIMIT, peak_depth <= IMPACT_LIMIT
    name, frame = (held, record.sustained_frame[held]) if held else (peak, record.deepest_frame[peak])
    if held_ok and not peak_ok:
        name, frame = peak, record.deepest_frame[peak]
    return {
        "passed": held_ok and peak_ok,
        "max_m": round(sustained, 5),
        "peak_m": round(peak_depth, 5),
        "object": name,
        "frame": frame,
    }


def trajectory_fidelity(task: dict, geometry: Geometry, record: SimulationRecord) -> dict | None:
    """RMS distance between the simulated and the video-derived path of the moved object, per phase (a
    part's path is :func:`joint_fidelity`'s)."""
    if held_name(task) != task["object"]:
        return None
    moved = task["object"]
    obj = next(o for o in geometry.objects if o.name == moved)
    events = _events(geometry, moved)
    video = obj.motion.positions[: record.frames]
    simulated = record.positions[moved][: record.frames]
    bounds = [0, events.get("grasp", 0), events.get("release", record.frames), record.frames]
    phases = {}
    for label, (a, b) in zip(
        ("before_grasp", "carried", "after_release"), zip(bounds, bounds[1:], strict=False), strict=True
    ):
        if b > a:
            rms = float(np.sqrt(np.mean(np.sum((simulated[a:b] - video[a:b]) ** 2, axis=1))))
            phases[label] = round(rms, 4)
    worst = max(phases.values(), default=0.0)
    return {"passed": worst < FIDELITY_LIMIT, "rms_m": phases, "limit_m": FIDELITY_LIMIT}


def release_clearance(task: dict, geometry: Geometry, record: SimulationRecord) -> dict:
    """The recorded release frees the object in simulation as the video shows it freed.

    A careful robot opens its fingers only a few millimetres past the object to
    let go. Where that is too little in simulation (the simulated object is a
    little wider, or turned in the grasp), the object stays pinched between the
    pads and leaves with the gripper. This check says so with the figures: the
    finger gap the recording opens to, the gap the pads held the object at, and
    whether the fingers still hold it :data:`RELEASE_FREE_S` after the release.
    """
    moved = held_name(task)
    release = _events(geometry, moved).get("release")
    if geometry.gripper is None or release is None or record.finger_gap is None:
        return {"passed": True, "reason": "no release in the demo"}
    fps, frames = record.fps, record.frames
    settled = min(len(record.finger_gap) - 1, release + max(3, round(RELEASE_FREE_S * fps)))
    opening = geometry.gripper.opening
    recorded = float(opening[release : min(settled, frames - 1) + 1].max()) * MAX_OPENING
    held = float(record.finger_gap[max(release - 1, 0)])
    after = record.finger_contacts[moved][settled : settled + max(3, round(RELEASE_FREE_S * fps))]
    still_held = float(after.all(axis=1).mean()) if len(after) else 0.0
    freed = still_held < HELD_AFTER
    # The video's view: after the release, do the object and the gripper part?
    hand, path = geometry.gripper.positions, _video_path(geometry, moved)
    apart = np.linalg.norm(hand[release:frames] - path[release:frames], axis=1)
    video_freed = bool(apart.max() - apart[0] > VIDEO_FREED)
    return {
        "passed": bool(freed or not video_freed),
        "release_frame": int(release),
        "recorded_gap_m": round(recorded, 4),
        "held_gap_m": round(held, 4),
        "clearance_m": round(recorded - held, 4),
        "freed": bool(freed),
        "held_after_release": round(still_held, 3),
        "video_shows_freed": bool(video_freed),
    }


def hand_clearance(task: dict, geometry: Geometry, record: SimulationRecord) -> dict:
    """The hand touches objects only to hold them: it does not knock them on its way in or out.

    A recorded approach that comes in low (or a retreat that leaves sideways)
    can sweep a finger or the palm through the object, where the video shows it
    still; a real hand went round it. A hand that leaves while its fingers are
    still opening drags the object with a pad. For each object, from the first
    frame the gripper touches it (or, for the moved object, has a geom within
    ``simulate.HAND_NEAR`` of it) outside the hold (before the recorded grasp
    stall or after the release, and never while both pads hold it) to three
    frames after the last, the check measures how much farther the simulated
    object moves than the video's (after the release, the moved object only
    sideways: it falls once let go). The first knock over the limit is named with its phase
    (``approach``, ``carry``, ``retreat``) and frame, and all of them are listed (``knocks``); where
    none is over the limit, the largest is named.
    """
    if geometry.gripper is None or record.hand_contacts is None:
        return {"passed": True, "reason": "no gripper in the demo"}
    moved = held_name(task)
    events = _events(geometry, moved)
    frames = record.frames
    stall, _ = gripper_hold(geometry.gripper.opening)
    grasp = events.get("grasp", frames) if stall is None else min(stall, events.get("grasp", stall))
    release = events.get("release", frames)
    worst = {"object": None, "phase": None, "frame": None, "moved_m": 0.0}
    knocks = []
    for obj in geometry.objects:
        touched = record.hand_contacts[obj.name][:frames].copy()
        if obj.name == moved:
            # Contacts are sampled every control period; a dragging pad touches for a step at a time, so a
            # hand's geom within a few millimetres of the object counts too (recorded with the contacts). The
            # grasp centre inside the object's half-diagonal, which counted before, read a hung mug's swing,
            # 7 cm from anything of the hand's, as a knock.
            touched |= record.hand_near[obj.name][:frames]
            touched[grasp:release] = False
            touched &= ~record.finger_contacts[moved][:frames].all(axis=1)
            if release < frames:  # the hand leaves from where it let go: a closed hand that yanks the object
                touched[release] = True  # on (a sparse recording's) leaves it within millimetres at once
        where = np.flatnonzero(touched)
        # The moved object's touches on the way in and on the way out are separate windows.
        windows = [where] if obj.name != moved else [where[where < grasp], where[where >= grasp]]
        for window in windows:
            if not len(window):
                continue
            start = int(window[0])
            end = grasp if obj.name == moved and start < grasp else min(frames, int(window[-1]) + 4)
            # Let go of, the moved object falls: on the way out only its sideways motion is the hand's.
            axes = 2 if obj.name == moved and start >= grasp else 3
            simulated = record.positions[obj.name][start:end, :axes]
            video = obj.motion.positions[start:end, :axes]
            # How much farther the simulated object goes than the video's (which may itself be noisy).
            farther = np.linalg.norm(simulated - simulated[0], axis=1) - np.linalg.norm(
                video - video[0], axis=1
            )
            moved_m = max(0.0, float(farther.max())) if len(farther) else 0.0
            phase = "approach" if start < grasp else "retreat" if start >= release else "carry"
            knock = {"object": obj.name, "phase": phase, "frame": start, "moved_m": round(moved_m, 4)}
            if moved_m >= HAND_PUSH_LIMIT:
                knocks.append(knock)
            if moved_m > worst["moved_m"]:
                worst = knock
    if knocks:
        # The first knock explains those after it (a block knocked on the way in is never carried, and the
        # empty hand then comes down into the cup): it is the one named.
        knocks.sort(key=lambda k: k["frame"])
        return {"passed": False, **knocks[0], "limit_m": HAND_PUSH_LIMIT, "knocks": knocks}
    return {"passed": worst["moved_m"] < HAND_PUSH_LIMIT, **worst, "limit_m": HAND_PUSH_LIMIT}


JOINT_FIDELITY_LIMIT = {"hinge": 0.15, "slide": 0.03}
"""RMS of a part's simulated joint value from the video's, over the frames that measure it: rad for a
hinge (8.6 degrees), m for a slide: a door the hand pushes follows the hand, and a door that swings on
where the video's stopped, or never moves, is far outside it."""


def joint_fidelity(geometry: Geometry, record: SimulationRecord) -> dict | None:
    """Each part's simulated joint value against the video's, RMS over the frames that measure it; None
    for a scene without parts."""
    figures, passed = {}, True
    for obj in geometry.objects:
        for part in obj.parts:
            key = part_key(obj.name, part.name)
            if key not in record.joint_values:
                continue
            frames = min(record.frames, len(part.q))  # a variant's settling frames measure nothing
            measured = np.isfinite(part.q[:frames])
            if not measured.any():
                continue
            error = record.joint_values[key][:frames][measured] - part.q[:frames][measured]
            rms = float(np.sqrt(np.mean(error**2)))
            worst = int(np.flatnonzero(measured)[np.argmax(np.abs(error))])
            figures[key] = {"rms": round(rms, 4), "worst_frame": worst, "limit": JOINT_FIDELITY_LIMIT[part.joint.type],
                            "unit": "rad" if part.joint.type == "hinge" else "m"}  # fmt: skip
            passed &= rms < JOINT_FIDELITY_LIMIT[part.joint.type]
    return {"passed": bool(passed), "parts": figures} if figures else None


AT_REST_S = 0.2
"""s: how long after the start the objects must stay put (unless the gripper touches one earlier)."""
AT_REST_LIMIT = 0.002
"""m: how far an object may move in that time: more is a start pose the physics does not accept."""


def objects_at_rest_at_start(geometry: Geometry, record: SimulationRecord) -> dict:
    """No object moves more than 2 mm in the first 0.2 s, before the gripper touches anything.

    An object that starts inside another, or on an edge, is pushed out or falls at once;
    later checks then judge a scene that is no longer the video's.
    """
    window = min(int(np.ceil(AT_REST_S * record.fps)) + 1, record.frames)
    if record.hand_contacts:
        touched = [int(np.argmax(c[:window])) for c in record.hand_contacts.values() if c[:window].any()]
        window = min([window, *touched])
    start = {o.name: o.position for o in objects_at_frame(geometry, 0)}
    worst = {"object": None, "frame": None, "moved_m": 0.0}
    for name, positions in record.positions.items():
        if window == 0 or name not in start:
            continue
        moved = np.linalg.norm(positions[:window] - start[name], axis=1)
        frame = int(np.argmax(moved))
        if moved[frame] > worst["moved_m"]:
            worst = {"object": name, "frame": frame, "moved_m": round(float(moved[frame]), 5)}
    return {"passed": worst["moved_m"] <= AT_REST_LIMIT, **worst, "window_s": round(window / record.fps, 3),
            "limit_m": AT_REST_LIMIT}  # fmt: skip


def simulation_stable(record: SimulationRecord) -> dict | None:
    """The simulation ran to its end without NaN or bad accelerations; reported only when it did not."""
    if record.diverged_frame is None:
        return None
    return {
        "passed": False,
        "frame": record.diverged_frame,
        "warnings": record.warnings,
        "reason": "the simulation diverged (NaN or bad accelerations)",
    }


def no_shortcuts(model, name_map: dict[str, str]) -> dict:
    """The objects are held by contact alone: no welds or joints to them, no disabled contacts, no mocap objects."""
    import mujoco

    problems = []
    bodies = {model.body(b).id: n for n, b in name_map.items()}
    for i in range(model.neq):
        ids = {model.eq_obj1id[i], model.eq_obj2id[i]}
        if model.eq_type[i] in (mujoco.mjtEq.mjEQ_WELD, mujoco.mjtEq.mjEQ_CONNECT) and ids & set(bodies):
            problems.append(f"equality {i} attaches '{bodies[(ids & set(bodies)).pop()]}'")
    for body, name in bodies.items():
        if model.body_mocapid[body] >= 0:
            problems.append(f"'{name}' is a mocap body")
        geoms = np.nonzero(model.geom_bodyid == body)[0]
        if not any(model.geom_contype[g] or model.geom_conaffinity[g] for g in geoms):
            problems.append(f"'{name}' has contacts disabled")
    for i in range(model.nexclude):
        pair = model.exclude_signature[i]
        if (pair >> 16) in bodies or (pair & 0xFFFF) in bodies:
            problems.append(f"contact exclusion {i} involves an object")
    return {"passed": not problems, "problems": problems}
