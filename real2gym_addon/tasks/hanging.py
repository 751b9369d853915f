"""Hanging an object on a rack, a peg or a hook (``hang``): a mug by its handle on a mug tree's peg.

The predicate reads the physics as the run ends, as the contract asks ("supported by the target alone:
not the table, not the hand"): the target carries the object's weight through their contacts (at least
:data:`SUPPORT_SHARE` of it; robosuite's tool hang asks for the tool's hole on the hook and the hand off
it, RLBench's place_cups for the mugs on the tree's spokes with nothing grasped), and the object hangs
clear: its lowest point at least :data:`CLEARANCE` above the table and, on a rack, above the rack's base
(a mug stood on the base is carried by the rack too, and does not hang). The hand having let go is
``grasp_held``'s and ``release_clearance``'s; settled is ``stability``'s; resting on the table before is
``objects_at_rest_at_start``'s.
"""

from __future__ import annotations

import numpy as np

from ..geometry.shape_kinds import RACK
from .base import TaskState, TaskType

SUPPORT_SHARE = 0.9
"""The share of the object's weight the target must carry (the rest may be a light touch elsewhere)."""
CLEARANCE = 0.01
"""m: how far the hanging object's lowest point must be above the table (and a rack's base)."""
HANG_EVENT = "hang"
"""The keyframe where a hung object comes to rest after the release."""


def floor_height(state: TaskState) -> float:
    """m: the height above the table the hanging object must clear: a rack's base's top, else 0."""
    shape = state.target_shape
    return (
        float(shape.params.get("base_thickness", 0.0))
        if shape is not None and shape.kind == RACK.name
        else 0.0
    )


def lowest_point(state: TaskState) -> float:
    """m: the moved object's lowest point above the table, its outline turned as it hangs (its box's
    bottom where its turn is not known)."""
    if state.moved_rotation is None:
        return float(state.moved_position[2] - state.moved_shape.size[2] / 2)
    outline = state.moved_shape.outline_points() @ np.asarray(state.moved_rotation).T
    return float(state.moved_position[2] + outline[:, 2].min())


def hung_success(state: TaskState) -> dict:
    """Carried by the target (at least 90 % of the weight), the lowest point 1 cm clear of the table and of
    a rack's base (a ``steps`` task's frames before the last, where the forces are not recorded, judge the
    clearance alone)."""
    clearance = lowest_point(state) - floor_height(state)
    carried = state.support_share is None or state.support_share >= SUPPORT_SHARE
    clear = clearance >= CLEARANCE
    return {
        "passed": bool(carried and clear),
        "support_share": None if state.support_share is None else round(state.support_share, 3),
        "clearance_m": round(clearance, 4),
        "hangs_clear": bool(clear),
    }


def _hang_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    return {"target": target["name"], "target_size": target["size"], "support_share": SUPPORT_SHARE,
            "clearance_m": CLEARANCE,
            "floor_m": target.get("params", {}).get("base_thickness", 0.0) if target.get("shape") == RACK.name else 0.0}  # fmt: skip


HANG = TaskType(
    name="hang",
    summary=(
        f"the object ends hanging from the target, which carries at least {SUPPORT_SHARE:.0%} of its weight, "
        f"its lowest point {CLEARANCE * 100:.0f} cm clear of the table and of a rack's base"
    ),
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=hung_success,
    task_json=_hang_fields,
    reads_support=True,
)
