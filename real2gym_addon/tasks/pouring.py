"""Pouring a container's contents into another (``pour``): spheres from a cup into a bowl.

The source's ``contents`` (docs/data-contract.md; :mod:`..geometry.contents`) are free spheres in the
simulation. The predicate counts, as the run ends, the share of them inside the target's opening: within
its inner radius of its axis, above its bottom and below its rim (a sphere resting on the heap at the rim
counts, one radius above it), in the target's own frame so that a tipped bowl does not count what lies
beside it. RLBench's pour_from_cup_to_cup asks for all of its 20 spheres in the target; the contract's
default is :data:`MIN_SHARE` of them, as a real pour leaves a few on the rim or in the cup.
"""

from __future__ import annotations

import numpy as np

from .base import TaskState, TaskType

MIN_SHARE = 0.8
"""The share of the contents that must end in the target when the task does not say (``min_share``)."""


def inside_container(points: np.ndarray, shape, axis: np.ndarray, rotation: np.ndarray | None,
                     slack: float) -> np.ndarray:  # fmt: skip
    """``N`` bool: which ``points`` (world, m) lie in a container's opening: within its inner radius of its
    axis (``axis``: where the axis crosses its box centre's height; ``rotation``: its orientation, upright
    when None), above its bottom and below its rim by at most ``slack``."""
    turn = np.eye(3) if rotation is None else np.asarray(rotation)
    local = (np.asarray(points, float) - axis) @ turn
    inner = shape.params.get("inner_radius", shape.size[0] / 2)
    height = local[:, 2] + shape.size[2] / 2
    return (np.hypot(local[:, 0], local[:, 1]) < inner) & (height > -slack) & (height < shape.size[2] + slack)


def _source_axis(state: TaskState) -> np.ndarray:
    turn = np.eye(3) if state.moved_rotation is None else np.asarray(state.moved_rotation)
    return state.moved_position + turn @ state.moved_shape.axis_offset()


def poured_success(state: TaskState) -> dict:
    """At least ``min_share`` (default 80 %) of the contents inside the target's opening as the run ends."""
    points = state.contents
    count = 0 if points is None else len(points)
    if count == 0 or state.target_shape is None or not state.target_shape.is_container:
        return {"passed": False, "count": count, "landed": 0, "landed_share": 0.0,
                "reason": "no contents to pour" if count == 0 else "the target has no opening"}  # fmt: skip
    need = MIN_SHARE if state.min_share is None else state.min_share
    landed = inside_container(points, state.target_shape, state.target_axis, state.target_rotation,
                              state.contents_radius)  # fmt: skip
    kept = np.zeros(count, bool)
    if state.moved_shape is not None and state.moved_shape.is_container:
        kept = inside_container(points, state.moved_shape, _source_axis(state), state.moved_rotation,
                                state.contents_radius)  # fmt: skip
    share = float(landed.sum()) / count
    return {
        "passed": bool(share >= need),
        "count": count,
        "landed": int(landed.sum()),
        "landed_share": round(share, 3),
        "min_share": need,
        "left_in_source": int(kept.sum()),
        "elsewhere": int(count - (landed | kept).sum()),
    }


def _check_share(task: dict) -> str | None:
    share = task.get("min_share")
    if share is None:
        return None
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        return f"task 'pour': 'min_share' is the share of the contents that must land, above 0 and at most 1, got {share!r}"
    return None


def _pour_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    return {"target": target["name"], "target_size": target["size"], "min_share": MIN_SHARE}


POUR = TaskType(
    name="pour",
    summary=(
        f"at least {MIN_SHARE:.0%} (or the task's min_share) of the object's contents end inside the target's "
        "opening: within its inner radius, above its bottom, below its rim"
    ),
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "pour_start", "pour_end", "release"),
    success=poured_success,
    task_json=_pour_fields,
    check_extra=_check_share,
    reads_contents=True,
)
