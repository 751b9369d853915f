"""Putting one free object in or on another (``stack``): a bowl nested in a bowl, a block on a block.

Unlike ``place_in`` and ``place_on``, whose targets stand still, a stack's target is a free object
that the placing may push, tip or knock over. The predicate reads the physics as the run ends: the
target carries the object's weight through their contacts (ManiSkill's stack_cube asks for the
object static on the lower one and LIBERO's ``On`` for contact), and the target stands as it
stood (robosuite's tool hang allows a frame 10 degrees off). Where the object sits is checked too,
either nested (inside the target's opening, below its rim) or on top (its underside at the target's
top, within the target's footprint plus ManiSkill's 5 mm); both settled is the ``stability`` check's.
"""

from __future__ import annotations

import math

import numpy as np

from .base import TaskState, TaskType
from .placing import ON_TOP_TOLERANCE, within_opening

SUPPORT_SHARE = 0.9
"""The share of the object's weight the target must carry (the rest may be a light touch elsewhere)."""
TILT_LIMIT = math.radians(10.0)
"""rad: how far the target's up axis may turn from where it started before it counts as knocked over."""
FOOTPRINT_MARGIN = 0.005
"""m: how far past the target's footprint the object's centre may sit on top of it (ManiSkill's 5 mm)."""


def _nested(state: TaskState) -> bool:
    """Inside a container's opening: within its inner radius, its underside between its bottom (less
    1 cm) and its rim."""
    if not state.target_shape.is_container:
        return False
    return within_opening(state)[1] and state.height_above_bottom() > -ON_TOP_TOLERANCE


def _on_top(state: TaskState) -> bool:
    """The underside within 1 cm of the target's top, the centre over its footprint (+ 5 mm)."""
    shape = state.target_shape
    if abs(state.height_above_bottom() - shape.size[2]) >= ON_TOP_TOLERANCE:
        return False
    if shape.is_round or state.target_rotation is None:
        return state.radial_offset() <= shape.size[0] / 2 + FOOTPRINT_MARGIN
    local = state.in_target_frame()
    return bool(np.all(np.abs(local[:2]) <= np.asarray(shape.size[:2]) / 2 + FOOTPRINT_MARGIN))


def stacked_success(state: TaskState) -> dict:
    """Nested in the target (inside its inner radius, below its rim) or on its top (within 1 cm of it, the
    centre over its footprint plus 5 mm); the target carries at least 90 % of the object's weight through
    their contacts and stands within 10 degrees of how it started (a ``steps`` task's frames before the
    last, where the forces are not recorded, judge the place and the tilt alone)."""
    relation = "nested" if _nested(state) else "on_top" if _on_top(state) else None
    carried = state.support_share is None or state.support_share >= SUPPORT_SHARE
    tilt = state.target_tilt_rad or 0.0
    standing = tilt <= TILT_LIMIT
    return {
        "passed": bool(relation and carried and standing),
        "relation": relation,
        "radial_offset_m": round(state.radial_offset(), 4),
        "height_above_bottom_m": round(state.height_above_bottom(), 4),
        "support_share": None if state.support_share is None else round(state.support_share, 3),
        "target_tilt_deg": round(math.degrees(tilt), 2),
        "target_standing": bool(standing),
    }


def _stack_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    return {"target": target["name"], "target_size": target["size"], "support_share": SUPPORT_SHARE,
            "tilt_limit_rad": round(TILT_LIMIT, 4)}  # fmt: skip


STACK = TaskType(
    name="stack",
    summary=(
        f"the object ends nested in or on top of the target, which carries at least {SUPPORT_SHARE:.0%} of its "
        f"weight and stands within {math.degrees(TILT_LIMIT):.0f} degrees of how it started"
    ),
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=stacked_success,
    task_json=_stack_fields,
    reads_support=True,
)
