"""The gripper's script of the shelve scene: pick the book off the table from above, set it on the middle
board through the shelf's open front, back out.

The grasp: from above (the approach axis straight down), the fingers closing across the book's width, the
pads' tops just under its top (``_shelve_layout.grasp_height``). On the board the book lies with its
length along the shelf's width, so the fingers close along the shelf's depth: one pad on the book's front
face, the other on its back face, the palm (0.2 m along the fingers' opening) reaching behind the book,
clear of the back, and in front of the board's edge. The palm is only 6.4 cm across the shelf, so it
passes well between the sides.

The script, in segments of ``_demo_plan.Plan`` (positions by minimum jerk, rotations by slerp): over the
book, down, close, lift it straight up until its bottom is ``clearance`` over the middle board's top,
carry it level, turning it to how it is set down, to in front of the shelf (the palm's end 2 cm beyond
the front), move it in level through the open front over its place (``short`` short of it for a failing
demo), lower it until its bottom is a millimetre over the board, open, rise until the fingertips clear
its top (the finger behind the book must pass over it), back out level through the front, then up and
away, and rest. Poses are in the world frame; the grip is the per-finger opening (m, 0 closed).
"""

from __future__ import annotations

import numpy as np
from _articulated_motion import HAND_ABOVE_CENTRE, Script
from _demo_gripper import FINGER_TRAVEL, PALM_HALF
from _demo_plan import Plan, from_above
from _shelve_layout import ROOM_SPARE, backing_height
from _shelve_scene import ShelveLayout

MIN_DURATION = 6.0  # seconds; shorter leaves a book let go short too little time to come to rest
OPEN, CLOSED = FINGER_TRAVEL, 0.0
START_ABOVE = 0.10  # the hand starts this far (m) above its grasp
APPROACH_ABOVE = 0.04  # and slows down this far (m) above it
FRONT_SPARE = 0.02  # in front of the shelf, the palm's end this far (m) beyond the front
SET_GAP = 0.001  # the book is let go with its bottom this far (m) over the board
AWAY = 0.06  # the hand goes this far (m) up and out after backing out
# Segments and their shares of the video (seconds of a 6.4 s video).
_SHARES = {
    "hold": 0.2, "approach": 0.45, "descend": 0.35, "close": 0.35, "lift": 0.55, "carry": 0.9, "insert": 0.7,
    "lower": 0.4, "release": 0.35, "rise": 0.3, "withdraw": 0.6, "away": 0.45, "rest": 0.8,
}  # fmt: skip


def on_shelf(layout: ShelveLayout, x: float, y: float, z: float) -> np.ndarray:
    """The world point over shelf-frame ``x`` and ``y`` (m) at height ``z`` above the table (m), (3,)."""
    return np.r_[layout.shelf.to_world(np.array([x, y, 0.0]))[:2], z]


def plan_script(layout: ShelveLayout, duration: float) -> Script:
    """The gripper's script for the scene.

    Args:
        layout: The scene.
        duration: Video length (s); the segments' shares are scaled to it.

    Returns:
        The script, in the world frame.

    Raises:
        ValueError: If the video is too short for it, or the hand does not fit above the board.
    """
    if duration < MIN_DURATION:
        raise ValueError(
            f"the video lasts {duration:.2f} s; the shelve script needs at least {MIN_DURATION:g} s "
            "(raise --frames or lower --fps)"
        )
    shelf, book, g = layout.shelf, layout.book, layout.grasp_height
    top = layout.board_top
    out_z = top + backing_height(book.height)
    room = shelf.room_above(layout.board)
    if out_z + HAND_ABOVE_CENTRE + ROOM_SPARE > top + room + 1e-9:
        raise ValueError(
            f"the hand does not fit the {room * 100:.1f} cm above the shelf's board over a "
            f"{book.height * 100:.1f} cm book"
        )
    grasp = np.r_[book.xy, g]
    held = from_above(book.yaw)
    placed = from_above(layout.place_yaw)
    carry_z = top + layout.clearance + g
    x_place, y_place = layout.place
    x_front = shelf.depth / 2 + PALM_HALF[1] + FRONT_SPARE
    front = on_shelf(layout, x_front, y_place, carry_z)
    plan = Plan(grasp + [0.0, 0.0, START_ABOVE], held, OPEN, _SHARES)
    plan.to("hold")
    plan.to("approach", grasp + [0.0, 0.0, APPROACH_ABOVE])
    plan.to("descend", grasp)
    plan.to("close", grip=CLOSED)
    plan.to("lift", np.r_[grasp[:2], carry_z])
    plan.to("carry", front, placed)
    plan.to("insert", on_shelf(layout, x_place + layout.short, y_place, carry_z))
    plan.to("lower", on_shelf(layout, x_place + layout.short, y_place, top + g + SET_GAP))
    plan.to("release", grip=OPEN)
    plan.to("rise", on_shelf(layout, x_place + layout.short, y_place, out_z))
    plan.to("withdraw", on_shelf(layout, x_front, y_place, out_z))
    plan.to("away", on_shelf(layout, x_front + AWAY, y_place, out_z + AWAY))
    plan.to("rest")
    return plan.script(duration)
