"""Run the shelve scene's script in MuJoCo, read the keyframes from the contacts, check the outcome.

Times are video seconds (0 on the first frame); an event at time t shows first on frame ``ceil(t * fps)``
(``_demo_contacts``). Poses are in the world frame (metres, quaternions [w, x, y, z]).

The book *rests on the board* at the end when it touches the board it was meant for and neither the table
nor the hand, lies within ``FLAT_DEG`` of how it lay at the start (its z axis), lies wholly over the
board (its corners between the sides, between the back and the front edge, its lowest corner at most
``SINK_M`` under the board's top) and has come to rest (slower than ``REST_SPEED``).
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
from _shelve_scene import ShelveLayout
from _task_sim import check_hand, geom_kinds, hold_keyframes
from scipy.spatial.transform import Rotation

FLAT_DEG = 10.0  # the set-down book's z axis within this of its start's
SINK_M = 0.003  # its lowest corner at most this far under the board's top (soft contacts)
REST_SPEED = 0.02  # m/s: it has come to rest once slower
SLIP_M, SLIP_DEG = 0.005, 5.0  # the book moves at most this far and turns at most this much in the hand
BODIES = ("hand", "book", "shelf")
# One bit per kind of geom: a contact's two kinds or-ed say what touches what.
LEFT_PAD, RIGHT_PAD, FINGERS, PALM, BOOK, TABLE, WALLS = (1 << bit for bit in range(7))
HAND = LEFT_PAD | RIGHT_PAD | FINGERS | PALM
SHELF = WALLS | (((1 << 6) - 1) << 7)  # the sides, the back and up to 6 boards


def board_bit(index: int) -> int:
    """The contact kind of board ``index``."""
    return 1 << (7 + index)


@dataclass
class ShelveResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus

    Attributes:
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object``.
        book_bottom: Per frame, the book's lowest corner above the table (m).
    """

    events: list[dict] = field(default_factory=list)
    book_bottom: list[float] = field(default_factory=list)


def _kinds(model: mujoco.MjModel) -> np.ndarray:
    """Each geom's contact kind (0 for the floor, the wall and the camera's things)."""
    named = {"pad_left": LEFT_PAD, "pad_right": RIGHT_PAD, "finger_left": FINGERS, "finger_right": FINGERS,
             "palm": PALM, "flange": PALM, "table": TABLE, "book": BOOK}  # fmt: skip
    boards = ("shelf_board", lambda name: board_bit(int(name.removeprefix("shelf_board"))))
    return geom_kinds(model, named, (boards, ("shelf_", lambda _: WALLS)))


def _corners(data: mujoco.MjData, layout: ShelveLayout) -> np.ndarray:
    """The book's corners now, world (m), (8, 3)."""
    return data.body("book").xpos + layout.book.corners() @ data.body("book").xmat.reshape(3, 3).T


def simulate(
    model: mujoco.MjModel,
    layout: ShelveLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> ShelveResult:
    """Run the script, calling ``on_frame`` on every video frame; find the keyframes; check the outcome.

    Args:
        model: The scene (``_shelve_model.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_shelve_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    kind = _kinds(model)
    steps: list[tuple] = []
    result = ShelveResult()

    def on_step(time: float) -> None:
        touch = touching(data, kind)
        steps.append((time, both(touch, BOOK, LEFT_PAD) and both(touch, BOOK, RIGHT_PAD), both(touch, BOOK, TABLE),
                      both(touch, HAND, SHELF), both(touch, HAND, BOOK), both(touch, BOOK, FINGERS | PALM)))  # fmt: skip

    def frame(index: int, now: mujoco.MjData) -> None:
        result.book_bottom.append(float(_corners(now, layout)[:, 2].min()))
        on_frame(index, now)

    result.frames = play(model, data, script.pose_at, frames, fps, BODIES, on_step, frame)
    result.events = hold_keyframes(steps, fps, frames, "book")
    result.keyframes = {e["event"]: e["frame"] for e in result.events}
    _check(data, kind, layout, steps, result, script)
    return result


def _check(
    data: mujoco.MjData, kind: np.ndarray, layout: ShelveLayout, steps: list[tuple], result: ShelveResult,
    script: Script,
) -> None:  # fmt: skip
    """Checks of the outcome: the events in order, the carry, the book held without slipping and by the pads
    alone, the hand clear of the shelf and (once open, unless it is let go short) of the book, and where the
    book ends (``_check_end``)."""
    check_carry(result, steps, "book", "board", result.book_bottom, layout.board_top, layout.clearance,
                (SLIP_M, SLIP_DEG))  # fmt: skip
    # A book let go short tips against the finger in front of it as it falls.
    touches = check_hand(result, steps, script, "book", "shelf", "the shelf", bool(layout.short))
    _check_end(data, kind, layout, result, touches)


def _check_end(
    data: mujoco.MjData, kind: np.ndarray, layout: ShelveLayout, result: ShelveResult, touches: int
) -> None:
    """The book ends resting flat on the middle board, wholly over it (``book_on_board``), or, let go short
    on purpose, does not (``missed_on_purpose``, with the hand's ``touches`` of it after opening)."""
    shelf = layout.shelf
    touch = touching(data, kind)
    on_board = both(touch, BOOK, board_bit(layout.board))
    on_table, in_hand = both(touch, BOOK, TABLE), both(touch, BOOK, HAND)
    up = data.body("book").xmat.reshape(3, 3)[:, 2]
    first_up = Rotation.from_quat(result.frames[0].poses["book"][1], scalar_first=True).apply([0.0, 0.0, 1.0])
    tilt = float(np.rad2deg(np.arccos(np.clip(up @ first_up, -1.0, 1.0))))
    local = shelf.to_local(_corners(data, layout))
    board_top = layout.board_top - shelf.height / 2
    within = bool(
        (local[:, 0] >= shelf.back_face - 1e-4).all()
        and (local[:, 0] <= shelf.depth / 2).all()
        and (np.abs(local[:, 1]) <= shelf.inner_half_width).all()
        and local[:, 2].min() >= board_top - SINK_M
    )
    speed = float(np.linalg.norm(data.joint("book").qvel[:3]))
    rests = on_board and not on_table and not in_hand and within and tilt <= FLAT_DEG
    centre = shelf.to_local(data.body("book").xpos)
    figures = {"board": layout.board, "touches_board": on_board, "touches_table": on_table,
               "touches_hand": in_hand, "tilt_deg": tilt, "wholly_over_board": within,
               "bottom_over_board_m": float(local[:, 2].min() - board_top), "speed_m_s": speed,
               "centre_in_shelf_m": [float(v) for v in centre],
               "front_gap_m": float(shelf.depth / 2 - local[:, 0].max())}  # fmt: skip
    if layout.short:
        record(result, "missed_on_purpose", not rests,
               f"the book let go {layout.short * 100:.1f} cm short of its place still rests on the board "
               "(raise --short)", short_m=layout.short, hand_steps_after_release=touches, **figures)  # fmt: skip
        return
    record(result, "book_on_board", rests and speed <= REST_SPEED,
           f"the book does not end resting flat on board {layout.board} (touching the board {on_board}, the "
           f"table {on_table}, the hand {in_hand}; tilted {tilt:.1f} deg; wholly over the board {within}; "
           f"moving at {speed * 100:.1f} cm/s)", limit_deg=FLAT_DEG, **figures)  # fmt: skip
