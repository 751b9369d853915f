"""Run the hang scene's script in MuJoCo, read the keyframes from the contacts, check the outcome.

Times are video seconds (0 on the first frame); an event at time t shows first on frame
``ceil(t * fps)``. Poses are in the world frame (metres, quaternions [w, x, y, z]).

The mug *hangs* on a frame when it touches a peg and neither the table, the rack's base nor the hand
(nor, on a hook board, the plate or the wall), its lowest point at least 1 cm above the base's top (the
table's, under a hook board). It is *still* from the first frame after which its pose stays within 2 mm
and 1.5 degrees of its last one; the ``hang`` keyframe is the first frame after the release from which it
both hangs and is still. A hung mug must not lean on a hook board's wall (the project's simulation has
none): it keeps at least 1 cm from the wall and the plate all along.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _articulated_motion import Script
from _demo_contacts import both, frame_of, hold_events, record, touching
from _demo_play import play
from _demo_sim import FrameState, SimResult
from _hang_scene import HangLayout
from _task_sim import geom_kinds
from scipy.spatial.transform import Rotation

STILL_M, STILL_DEG = 0.002, 1.5  # the mug is still while within these of its last pose
HANG_S = 1.0  # it must hang still for at least the video's last second
CLEARANCE = 0.01  # its lowest point at least this far (m) above the rack's base's top, and from a wall
BODIES = ("hand", "mug", "rack")
# One bit per kind of geom: a contact's two kinds or-ed say what touches what. A hook board's plate is a POST.
LEFT, RIGHT, PALM, MUG, TABLE, BASE, POST = (1 << bit for bit in range(7))
HAND = LEFT | RIGHT | PALM
RACK = BASE | POST | (((1 << 6) - 1) << 7)  # the base, the post and up to 6 pegs
WALL = 1 << 13  # a hook board's wall


def peg_bit(index: int) -> int:
    """The contact kind of peg ``index``."""
    return 1 << (7 + index)


@dataclass
class HangResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus

    Attributes:
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object`` (and ``target``).
        hanging: Per frame, whether the mug hangs (touches a peg, not the table, the base or the hand).
        lowest: Per frame, the mug's lowest point above the table (m).
        wall_gap: Per frame, on a hook board, the mug's nearest distance to the plate and the wall (m;
            0.1 or more reads 0.1).
    """

    events: list[dict] = field(default_factory=list)
    hanging: list[bool] = field(default_factory=list)
    lowest: list[float] = field(default_factory=list)
    wall_gap: list[float] = field(default_factory=list)


def _kinds(model: mujoco.MjModel) -> np.ndarray:
    """Each geom's contact kind (0 for the floor, the wall and the camera's things)."""
    named = {"pad_left": LEFT, "finger_left": LEFT, "pad_right": RIGHT, "finger_right": RIGHT,
             "palm": PALM, "flange": PALM, "table": TABLE, "rack_base": BASE, "rack_post": POST,
             "rack_plate": POST, "hook_wall": WALL}  # fmt: skip
    kind = geom_kinds(model, named, (("rack_peg", lambda name: peg_bit(int(name.removeprefix("rack_peg")))),))
    kind[model.geom_bodyid == model.body("mug").id] = MUG
    return kind


def simulate(
    model: mujoco.MjModel,
    layout: HangLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> HangResult:
    """Run the script, calling ``on_frame`` on every video frame; find the keyframes; check the outcome.

    Args:
        model: The scene (``_hang_model.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_hang_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    kind = _kinds(model)
    outline = layout.mug.outline()
    floor = layout.rack.floor + CLEARANCE
    resting_on = TABLE | BASE | HAND | (POST | WALL if layout.rack.on_wall else 0)
    mug_geoms = [g for g in range(model.ngeom) if kind[g] == MUG and model.geom_contype[g]]
    wall_geoms = [g for g in range(model.ngeom) if kind[g] & WALL or model.geom(g).name == "rack_plate"]
    steps: list[tuple] = []
    result = HangResult()
    touch: set[int] = set()  # the contacts after the last step

    def on_step(time: float) -> None:
        nonlocal touch
        touch = touching(data, kind)
        steps.append((time, both(touch, MUG, LEFT) and both(touch, MUG, RIGHT), both(touch, MUG, TABLE),
                      both(touch, HAND, RACK | WALL), both(touch, HAND, MUG)))  # fmt: skip

    def frame(index: int, now: mujoco.MjData) -> None:
        lowest = float((outline @ now.body("mug").xmat.reshape(3, 3).T + now.body("mug").xpos)[:, 2].min())
        on_peg = any(both(touch, MUG, peg_bit(i)) for i in range(len(layout.rack.peg_heights)))
        resting = both(touch, MUG, resting_on)
        result.lowest.append(lowest)
        result.hanging.append(bool(on_peg and not resting and lowest > floor))
        if wall_geoms:
            result.wall_gap.append(_gap(model, now, mug_geoms, wall_geoms))
        on_frame(index, now)

    result.frames = play(model, data, script.pose_at, frames, fps, BODIES, on_step, frame)
    result.events = _keyframes(steps, result, fps, frames)
    result.keyframes = {e["event"]: e["frame"] for e in result.events}
    _check(data, kind, layout, steps, result, script, fps)
    return result


def _gap(model: mujoco.MjModel, data: mujoco.MjData, geoms: list[int], others: list[int]) -> float:
    """The nearest distance (m) between ``geoms`` and ``others`` (geom ids); 0.1 or more reads 0.1."""
    return min(mujoco.mj_geomDistance(model, data, g, o, 0.1, None) for g in geoms for o in others)


def still_from(result: HangResult) -> int:
    """The first frame from which the mug stays within ``STILL_M`` and ``STILL_DEG`` of its last pose."""
    end_pos, end_quat = result.frames[-1].poses["mug"]
    end = Rotation.from_quat(end_quat, scalar_first=True)
    moved = [
        np.linalg.norm(s.poses["mug"][0] - end_pos) > STILL_M
        or np.rad2deg((Rotation.from_quat(s.poses["mug"][1], scalar_first=True) * end.inv()).magnitude())
        > STILL_DEG
        for s in result.frames
    ]
    far = np.flatnonzero(moved)
    return int(far[-1]) + 1 if far.size else 0


def _keyframes(steps: list[tuple], result: HangResult, fps: float, frames: int) -> list[dict]:
    """grasp, lift and release from the per-step contacts; hang from the per-frame states."""
    events = [{"frame": frame_of(steps[step][0], fps, frames), "event": event, "object": "mug"}
              for event, step in hold_events(steps).items()]  # fmt: skip
    release = next((e["frame"] for e in events if e["event"] == "release"), None)
    if release is not None:
        first = max(release, still_from(result))
        if first < frames and all(result.hanging[first:]):
            events.append({"frame": first, "event": "hang", "object": "mug", "target": "rack"})
    return sorted(events, key=lambda e: (e["frame"], e["event"]))


def _check(
    data: mujoco.MjData, kind: np.ndarray, layout: HangLayout, steps: list[tuple], result: HangResult,
    script: Script, fps: float,
) -> None:  # fmt: skip
    """Checks of the outcome: the events, the carry, the hand clear of the rack and (once open) of the mug,
    and how the mug ends (``_check_end``)."""
    keyframes = result.keyframes
    order = [keyframes.get(e) for e in ("grasp", "lift", "release")]
    ordered = None not in order and order[0] <= order[1] <= order[2]
    record(result, "events", ordered, f"the mug's events are not grasp <= lift <= release ({keyframes})",
           frames=keyframes)  # fmt: skip
    if not ordered:
        return
    at = hold_events(steps)
    held = float(np.mean([s[1] for s in steps[at["lift"] : at["release"]]] or [0.0]))
    rise = max(result.lowest[order[1] : order[2] + 1])
    record(result, "carried", held > 0.98 and rise > 0.05,
           f"the fingers did not carry the mug (held {held:.0%} of the carry, lowest point at most "
           f"{rise * 100:.1f} cm up)", held_fraction=held, highest_lowest_m=rise)  # fmt: skip
    knocks = sum(s[3] for s in steps)
    touched = "the rack or its wall" if layout.rack.on_wall else "the rack"
    record(result, "hand_clear_of_rack", knocks == 0, f"the gripper touched {touched} on {knocks} steps",
           steps_touching=knocks)  # fmt: skip
    opened = script.segment("release").end
    touches = sum(s[4] for s in steps if s[0] > opened)
    record(result, "hand_clear_of_mug_after_release", touches == 0,
           f"the gripper touched the mug on {touches} steps after opening", steps_touching=touches)  # fmt: skip
    _check_end(data, kind, layout, result, fps)
    if layout.rack.on_wall and not layout.miss:
        _check_wall(layout, result)


def _check_end(
    data: mujoco.MjData, kind: np.ndarray, layout: HangLayout, result: HangResult, fps: float
) -> None:
    """The mug ends hanging still on its peg for the video's last second (``mug_hangs``), or, let go short of
    the peg on purpose, does not (``missed_on_purpose``)."""
    touch = touching(data, kind)
    pegs = [i for i in range(len(layout.rack.peg_heights)) if both(touch, MUG, peg_bit(i))]
    hang = result.keyframes.get("hang")
    still = hang is not None and (len(result.frames) - 1 - hang) / fps >= HANG_S - 1e-9
    hangs = bool(result.hanging[-1] and still)
    speed = float(np.linalg.norm(data.joint("mug").qvel[:3]))
    if layout.rack.on_wall:
        figures = {"pegs_touched": pegs, "touches_plate": both(touch, MUG, POST), "touches_wall": both(touch, MUG, WALL),
                   "touches_table": both(touch, MUG, TABLE), "lowest_above_table_m": result.lowest[-1],
                   "floor_m": layout.rack.floor + CLEARANCE, "speed_m_s": speed, "hang_frame": hang}  # fmt: skip
        resting = f"table {figures['touches_table']}, plate {figures['touches_plate']}, wall {figures['touches_wall']}"
    else:
        figures = {"pegs_touched": pegs, "touches_post": both(touch, MUG, POST), "touches_table": both(touch, MUG, TABLE),
                   "touches_base": both(touch, MUG, BASE), "lowest_above_table_m": result.lowest[-1],
                   "floor_m": layout.rack.floor + CLEARANCE, "speed_m_s": speed, "hang_frame": hang}  # fmt: skip
        resting = f"table {figures['touches_table']}, base {figures['touches_base']}"
    if layout.miss:
        record(result, "missed_on_purpose", not hangs,
               f"the mug let go {layout.miss * 100:.1f} cm short of the peg still hangs (raise --miss)",
               miss_m=layout.miss, **figures)  # fmt: skip
        return
    record(result, "mug_hangs", hangs and layout.peg in pegs,
           f"the mug does not end hanging still on peg {layout.peg} (touching pegs {pegs}, {resting}, lowest "
           f"point {result.lowest[-1] * 100:.1f} cm, hang frame {hang})", **figures)  # fmt: skip


def _check_wall(layout: HangLayout, result: HangResult) -> None:
    """A hook board's hung mug keeps ``CLEARANCE`` from the plate and the wall all along (the project's
    simulation has no wall to lean on) (``mug_clear_of_wall``); how far its handle's loop slid along the peg
    from the release to the end (m, towards the wall below 0) is shown."""
    nearest, end = min(result.wall_gap), result.wall_gap[-1]
    _, _, direction = layout.peg_axes

    def loop(state: FrameState) -> np.ndarray:
        position, quat = state.poses["mug"]
        return position + Rotation.from_quat(quat, scalar_first=True).apply(layout.mug.loop)

    slide = float((loop(result.frames[-1]) - loop(result.frames[result.keyframes["release"]])) @ direction)
    record(result, "mug_clear_of_wall", nearest >= CLEARANCE,
           f"the mug came within {nearest * 1000:.1f} mm of the hook board's plate or wall (at least "
           f"{CLEARANCE * 1000:.0f} mm)", nearest_m=nearest, end_m=end, slide_along_peg_m=slide)  # fmt: skip
