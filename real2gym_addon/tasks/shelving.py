"""Putting an object on a shelf's board or in a dish rack's slot (``shelve``): a book-like box on a bookshelf,
a plate upright in a dish rack.

The predicate reads the physics as the run ends, as the contract asks ("inside the target's slot or on
its shelf board, within the orientation the video ends in, supported by the target"):

- on a board: the object's centre, in the shelf's own frame, between its sides and behind its front face
  (in front of its back), and its lowest point within 1 cm of a board's top (LIBERO's ``On`` asks for
  contact and the support not above; ManiSkill's stack_cube for the height within 5 mm); in a slot: the
  object's centre, in the dish rack's frame, between the slot's dividers and within the rack's depth, and
  its lowest point within 1 cm of the base's top;
- supported by the target: the shelf carries at least :data:`SUPPORT_SHARE` of its weight through their
  contacts (an object leaning on the board's edge with a corner on the table below is not shelved);
- in the orientation the video ends in: the world's up, seen from the object, within :data:`UP_LIMIT`
  of what it is on the video's last frame (robosuite's tool hang allows 10 degrees for a frame it
  checks; a book that fell on its side has turned 90). Seen from the object, the up is the same whichever
  way the shelf is turned about the vertical, so a variant that turns the shelf keeps the same measure.

The hand having let go is ``grasp_held``'s and ``release_clearance``'s; settled is ``stability``'s.
"""

from __future__ import annotations

import math

import numpy as np

from ..geometry.kinds import shelf
from ..geometry.shape_kinds import DISH_RACK, SHELF
from .base import TaskState, TaskType

SUPPORT_SHARE = 0.9
"""The share of the object's weight the shelf must carry (the rest may be a light touch elsewhere)."""
ON_BOARD = 0.01
"""m: how far the object's lowest point may be from a board's top."""
UP_LIMIT = math.radians(15.0)
"""rad: how far the world's up, seen from the object, may be from where it was as the video ended."""


def _local_bottom(state: TaskState) -> tuple[np.ndarray, float]:
    """The object's centre in the shelf's frame (z from the shelf's bottom), and its lowest point's height
    above the shelf's bottom."""
    centre = state.in_target_frame()
    centre[2] += state.target_shape.size[2] / 2
    outline = state.moved_shape.outline_points()
    if state.moved_rotation is not None:
        outline = outline @ np.asarray(state.moved_rotation).T
    low = state.target_rotation.T @ outline.T
    return centre, float(centre[2] + low[2].min())


def _board_under(state: TaskState, centre: np.ndarray, bottom: float) -> int | None:
    """A shelf's board whose top the object's lowest point is within 1 cm of, its centre over the board between
    the sides and behind the front; None where there is none."""
    p, half = state.target_shape.params, np.asarray(state.target_shape.size, float) / 2
    within = (-half[0] + p["back_thickness"] < centre[0] < half[0]) and (
        abs(centre[1]) < half[1] - p["side_thickness"]
    )
    if not within:
        return None
    heights = shelf.board_heights(p)
    nearest = int(np.argmin([abs(bottom - h) for h in heights]))
    return nearest if abs(bottom - heights[nearest]) <= ON_BOARD else None


def _slot_under(state: TaskState, centre: np.ndarray, bottom: float) -> int | None:
    """The dish rack's slot the object stands in (its centre between the slot's dividers, within the rack's
    depth, its lowest point within 1 cm of the base's top); None where there is none."""
    half = np.asarray(state.target_shape.size, float) / 2
    local = centre - np.array([0.0, 0.0, half[2]])  # back to the rack's centred frame
    for index, (middle, extent) in enumerate(state.target_shape.spaces()):
        inside = np.all(np.abs(local[:2] - middle[:2]) <= extent[:2])
        if inside and abs(bottom - (middle[2] - extent[2] + half[2])) <= ON_BOARD:
            return index
    return None


def up_error(state: TaskState) -> float | None:
    """rad: the angle between the world's up seen from the object now and as the video ended; None where
    either is not known."""
    if state.expected_up is None or state.moved_rotation is None:
        return None
    now = np.asarray(state.moved_rotation).T @ np.array([0.0, 0.0, 1.0])
    return float(np.arccos(np.clip(np.dot(now, state.expected_up), -1.0, 1.0)))


def shelved_success(state: TaskState) -> dict:
    """On a board of the shelf (its lowest point within 1 cm of the board's top, its centre over the board
    between the sides and behind the front) or in a slot of the dish rack (its centre between the slot's
    dividers, its lowest point within 1 cm of the base's top), carried by the shelf (at least 90 % of its weight), and turned
    as the video ends (the up within 15 degrees); on a target of another kind (a user's mesh), over its
    box and carried by it; a ``steps`` task's frames before the last, where the forces
    are not recorded, judge the place and the turn alone."""
    centre, bottom = _local_bottom(state)
    board = slot = None
    if state.target_shape.kind == SHELF.name:
        board = _board_under(state, centre, bottom)
        placed = board is not None
    elif state.target_shape.kind == DISH_RACK.name:
        slot = _slot_under(state, centre, bottom)
        placed = slot is not None
    else:  # a user's mesh standing in for the shelf: over its box, carried by it
        placed = bool(np.all(np.abs(centre[:2]) <= np.asarray(state.target_shape.size[:2]) / 2))
    carried = state.support_share is None or state.support_share >= SUPPORT_SHARE
    error = up_error(state)
    turned = error is None or error <= UP_LIMIT
    return {
        "passed": bool(placed and carried and turned),
        "board": board,
        "slot": slot,
        "in_shelf_m": np.round(centre, 4).tolist(),
        "bottom_above_shelf_bottom_m": round(bottom, 4),
        "support_share": None if state.support_share is None else round(state.support_share, 3),
        "up_error_deg": None if error is None else round(math.degrees(error), 2),
        "turned_as_video_ends": bool(turned),
    }


def _shelve_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    return {"target": target["name"], "target_size": target["size"], "support_share": SUPPORT_SHARE,
            "on_board_m": ON_BOARD, "up_limit_rad": round(UP_LIMIT, 4)}  # fmt: skip


SHELVE = TaskType(
    name="shelve",
    summary=(
        f"the object ends on a board of the target shelf (its lowest point within {ON_BOARD * 100:.0f} cm of the "
        f"board's top, between the sides, behind the front) or standing in a slot of the target dish rack (between "
        f"the slot's dividers, its lowest point within {ON_BOARD * 100:.0f} cm of the base), the target carries at least {SUPPORT_SHARE:.0%} of "
        f"its weight, and it is turned as the video ends (within {math.degrees(UP_LIMIT):.0f} degrees)"
    ),
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=shelved_success,
    task_json=_shelve_fields,
    reads_support=True,
)
