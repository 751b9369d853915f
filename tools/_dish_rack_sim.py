"""Run the dish rack scene's script in MuJoCo, read the keyframes from the contacts, check the outcome.

Times are video seconds (0 on the first frame); an event at time t shows first on frame ``ceil(t * fps)``
(``_demo_contacts``). Poses are in the world frame (metres, quaternions [w, x, y, z]).

The hand is force-limited as the insert scene's is (``_insert_sim``): while it lowers the plate and lets
go, a plate *blocked* by the dish rack (touching it with its lowest point still within ``BLOCKED_UNDER`` of
the dividers' tops, as a plate too thick for its slot is on them) stops the hand's descent where it is,
and the rest of the script is raised by as much as the hand was stopped short
(``_task_sim.StoppingHand``). A plate that goes into its slot is never blocked: it touches the rack
only well below the dividers' tops.

The plate *stands in its slot* at the end when its lowest point is within ``BASE_TOL`` of the dish rack's
base's top, its centre between the slot's two dividers (and within the rack's depth), its axis within
``AXIS_DEG`` of the rack's y (it leans on a divider at most that much), the hand does not touch it and it
has come to rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _articulated_motion import Script
from _demo_contacts import both, check_carry, record, touching
from _demo_play import play
from _demo_sim import SimResult
from _dish_rack_scene import DishRackLayout
from _insert_scene import lowest_point
from _task_sim import StoppingHand, check_hand, geom_kinds, hold_keyframes

BASE_TOL = 0.005  # the plate's lowest point within this (m) of the base's top
AXIS_DEG = 15.0  # its axis within this of the rack's y
REST_SPEED = 0.02  # m/s: it has come to rest once slower
SLIP_M, SLIP_DEG = 0.005, 5.0  # the plate moves at most this far and turns at most this much in the hand
BLOCKED_UNDER = 0.003  # a plate touching the rack with its lowest point higher than this (m) under the
# dividers' tops is blocked on them
BODIES = ("hand", "plate", "stand", "dish_rack")
# One bit per kind of geom: a contact's two kinds or-ed say what touches what.
LEFT_PAD, RIGHT_PAD, FINGERS, PALM, PLATE, TABLE, STAND, BASE, DIVIDERS = (1 << bit for bit in range(9))
HAND = LEFT_PAD | RIGHT_PAD | FINGERS | PALM
RACK = BASE | DIVIDERS


@dataclass
class DishRackResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus

    Attributes:
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object`` (and ``target``).
        plate_bottom: Per frame, the plate's lowest point above the table (m).
        stopped_at: The video time the hand's descent was stopped by a blocked plate (s), or None.
    """

    events: list[dict] = field(default_factory=list)
    plate_bottom: list[float] = field(default_factory=list)
    stopped_at: float | None = None


def _kinds(model: mujoco.MjModel) -> np.ndarray:
    """Each geom's contact kind (0 for the floor, the wall and the camera's things)."""
    named = {"pad_left": LEFT_PAD, "pad_right": RIGHT_PAD, "finger_left": FINGERS, "finger_right": FINGERS,
             "palm": PALM, "flange": PALM, "table": TABLE, "plate": PLATE, "dish_rack_base": BASE}  # fmt: skip
    return geom_kinds(model, named, (("dish_rack_divider", lambda _: DIVIDERS), ("stand_", lambda _: STAND)))


def _plate_bottom(data: mujoco.MjData, layout: DishRackLayout) -> float:
    """The plate's lowest point now, above the table (m)."""
    axis = data.body("plate").xmat.reshape(3, 3)[:, 1]
    return lowest_point(data.body("plate").xpos, axis, layout.plate.radius, layout.plate.thickness)


def simulate(
    model: mujoco.MjModel,
    layout: DishRackLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> DishRackResult:
    """Run the script (stopping the hand's descent on a blocked plate), calling ``on_frame`` on every video
    frame; find the keyframes; check the outcome.

    Args:
        model: The scene (``_dish_rack_model.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_dish_rack_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    kind = _kinds(model)
    steps: list[tuple] = []
    result = DishRackResult()
    hand = StoppingHand(script)

    def on_step(time: float) -> None:
        touch = touching(data, kind)
        on_rack = both(touch, PLATE, RACK)
        held = both(touch, PLATE, LEFT_PAD) and both(touch, PLATE, RIGHT_PAD)
        steps.append((time, held, both(touch, PLATE, STAND | TABLE), both(touch, HAND, STAND | RACK),
                      both(touch, HAND, PLATE), both(touch, PLATE, FINGERS | PALM), on_rack))  # fmt: skip
        if (
            hand.watching(time)
            and on_rack
            and _plate_bottom(data, layout) > layout.rack.height - BLOCKED_UNDER
        ):
            hand.stop(time, float(data.body("hand").xpos[2]))

    def frame(index: int, now: mujoco.MjData) -> None:
        result.plate_bottom.append(_plate_bottom(now, layout))
        on_frame(index, now)

    result.frames = play(model, data, hand.pose_at, frames, fps, BODIES, on_step, frame)
    result.stopped_at = hand.stopped_at
    result.events = hold_keyframes(steps, fps, frames, "plate", "dish_rack")
    result.keyframes = {e["event"]: e["frame"] for e in result.events}
    _check(data, kind, layout, steps, result, script)
    return result


def _check(
    data: mujoco.MjData, kind: np.ndarray, layout: DishRackLayout, steps: list[tuple], result: DishRackResult,
    script: Script,
) -> None:  # fmt: skip
    """Checks of the outcome: the events in order, the carry, the plate held without slipping and by the pads
    alone, the hand clear of both racks and (once open, unless the slot is too narrow on purpose) of the
    plate, and where the plate ends (``_check_end``)."""
    check_carry(result, steps, "plate", "racks", result.plate_bottom, layout.carry_floor, layout.clearance,
                (SLIP_M, SLIP_DEG))  # fmt: skip
    # A plate left on a too narrow slot's dividers may tip against an opening finger.
    touches = check_hand(
        result, steps, script, "plate", "racks", "the stand or the dish rack", bool(layout.narrow)
    )
    _check_end(data, kind, layout, result, touches)


def _check_end(
    data: mujoco.MjData, kind: np.ndarray, layout: DishRackLayout, result: DishRackResult, touches: int
) -> None:
    """The plate ends standing upright in its slot (``plate_in_slot``), or, the slots too narrow on purpose,
    does not (``missed_on_purpose``, with the hand's ``touches`` of it after opening)."""
    rack, plate = layout.rack, layout.plate
    centre = rack.to_local(data.body("plate").xpos)
    axis = data.body("plate").xmat.reshape(3, 3)[:, 1] @ rack.rotation
    bottom = _plate_bottom(data, layout)
    over_base = bottom - rack.base_top
    from_y = float(np.rad2deg(np.arccos(np.clip(abs(axis[1]), 0.0, 1.0))))
    off_slot = float(centre[1] - rack.slot_y(layout.slot))
    between = abs(off_slot) <= rack.slot_width / 2 and abs(centre[0]) <= rack.depth / 2
    touch = touching(data, kind)
    in_hand = both(touch, PLATE, HAND)
    speed = float(np.linalg.norm(data.joint("plate").qvel[:3]))
    stands = bool(abs(over_base) <= BASE_TOL and between and from_y <= AXIS_DEG and not in_hand
                  and speed <= REST_SPEED)  # fmt: skip
    figures = {"slot": layout.slot, "lowest_over_base_m": float(over_base), "base_tol_m": BASE_TOL,
               "off_slot_centre_m": off_slot, "slot_width_m": rack.slot_width, "between_dividers": bool(between),
               "axis_from_rack_y_deg": from_y, "limit_deg": AXIS_DEG,
               "centre_in_rack_m": [float(v) for v in centre], "touches_base": both(touch, PLATE, BASE),
               "touches_dividers": both(touch, PLATE, DIVIDERS), "touches_table": both(touch, PLATE, TABLE),
               "touches_hand": in_hand, "speed_m_s": speed, "hand_stopped_at_s": result.stopped_at,
               "plate_thickness_m": plate.thickness}  # fmt: skip
    if layout.narrow:
        on_tops = bottom >= rack.height - BLOCKED_UNDER - BASE_TOL
        record(result, "missed_on_purpose", not stands,
               f"the plate went into slot {layout.slot}, {(plate.thickness - rack.slot_width) * 1000:.1f} mm "
               "narrower than it is thick", on_divider_tops=bool(on_tops), tipped=from_y > 45.0,
               hand_steps_after_release=touches, **figures)  # fmt: skip
        return
    stopped = (
        f"; the hand stopped at {result.stopped_at:.2f} s on a blocked plate" if result.stopped_at else ""
    )
    record(result, "plate_in_slot", stands,
           f"the plate does not end standing in slot {layout.slot}: its lowest point {over_base * 1000:.1f} mm "
           f"over the base, {off_slot * 1000:.1f} mm off the slot's middle (the slot {rack.slot_width * 1000:.1f} "
           f"mm wide), its axis {from_y:.1f} deg off the rack's y, touching the hand {in_hand}, moving at "
           f"{speed * 100:.1f} cm/s{stopped}", **figures)  # fmt: skip
