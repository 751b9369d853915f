"""Putting an object into a close-fitting opening of another (``insert``): a plug in a socket, a dowel in a hole.

The predicate reads where the object ends, in the target's own frame, as the contract asks ("inside the
target's opening to at least ``depth`` (default: what the video shows, less 2 mm), aligned within the
tolerance the fit allows"):

- inside the opening: the object's centre line within the target's opening (a container's inner radius; a
  user's mesh's box);
- deep enough: its lowest point at least ``depth`` below the target's top, where ``depth`` is the task's own
  or, by default, how deep the video shows it as it ends less :data:`DEPTH_SLACK` (plug and socket suites
  ask for the plug within 5 mm of seated), and never less than :data:`MIN_DEPTH`;
- aligned: its axis within :data:`ALIGN_LIMIT` of the target's (their 0.2 rad); an object in a hole a few
  millimetres wider than it cannot lean further than the hole allows, so a larger tilt means it is not in.

Let go is ``grasp_held``'s and ``release_clearance``'s; settled is ``stability``'s.
"""

from __future__ import annotations

import math

import numpy as np

from .base import TaskState, TaskType

DEPTH_SLACK = 0.002
"""m: how much less deep than the video shows the object may end (the contract's 2 mm)."""
ALIGN_LIMIT = 0.2
"""rad: how far the object's axis may turn from the target's."""
MIN_DEPTH = 0.005
"""m: the least an object must go into the opening to count as inserted, whatever the video shows (a video
that ends with it standing on the rim shows a depth of 0)."""
MAX_DEPTH = 1.0
"""m: the deepest a task's own ``depth`` may ask for."""


def _in_target(state: TaskState) -> tuple[np.ndarray, float]:
    """The object's centre in the target's frame (origin at the target's box centre) and its lowest point's
    height there."""
    centre = state.in_target_frame()
    outline = state.moved_shape.outline_points()
    if state.moved_rotation is not None:
        outline = outline @ np.asarray(state.moved_rotation).T
    low = (state.target_rotation.T @ outline.T)[2].min()
    return centre, float(centre[2] + low)


def inserted_depth(state: TaskState) -> float:
    """m: how far the object's lowest point is below the target's top, in the target's frame."""
    _, lowest = _in_target(state)
    return float(state.target_shape.size[2] / 2 - lowest)


def _opening(state: TaskState, centre: np.ndarray) -> tuple[bool, float]:
    """Whether the object's centre line is within the target's opening, and its distance from the target's
    axis (m)."""
    shape = state.target_shape
    axis = shape.axis_offset() if shape.is_container else np.zeros(3)
    offset = float(np.hypot(*(centre[:2] - axis[:2])))
    if shape.is_container:
        return offset <= shape.params["inner_radius"], offset
    return bool(np.all(np.abs(centre[:2]) <= np.asarray(shape.size[:2]) / 2)), offset


def _tilt(state: TaskState) -> float | None:
    """rad: the angle between the object's axis and the target's (either way along it)."""
    if state.moved_rotation is None:
        return None
    cosine = abs(float(np.dot(np.asarray(state.moved_rotation)[:, 2], state.target_rotation[:, 2])))
    return float(np.arccos(np.clip(cosine, 0.0, 1.0)))


def inserted_success(state: TaskState) -> dict:
    """Inside the target's opening, its lowest point at least the required depth below the target's top (the
    task's ``depth``, else the video's less 2 mm), its axis within 0.2 rad of the target's."""
    centre, _ = _in_target(state)
    depth = inserted_depth(state)
    required = state.depth if state.depth is not None else (
        None if state.expected_depth is None else max(MIN_DEPTH, state.expected_depth - DEPTH_SLACK)
    )  # fmt: skip
    inside, offset = _opening(state, centre)
    deep = required is None or depth >= required
    tilt = _tilt(state)
    aligned = tilt is None or tilt <= ALIGN_LIMIT
    return {
        "passed": bool(inside and deep and aligned and depth >= MIN_DEPTH),
        "inserted_depth_m": round(depth, 4),
        "required_depth_m": None if required is None else round(required, 4),
        "axis_offset_m": round(offset, 4),
        "tilt_deg": None if tilt is None else round(math.degrees(tilt), 2),
        "inside_opening": bool(inside),
        "deep_enough": bool(deep),
        "aligned": bool(aligned),
    }


def _check_depth(task: dict) -> str | None:
    depth = task.get("depth")
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, int | float) or not 0 < depth <= MAX_DEPTH:
        return f"task 'insert': 'depth' is metres into the target's opening, above 0 and at most {MAX_DEPTH:g}, got {depth!r}"
    return None


def _insert_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    return {"target": target["name"], "target_size": target["size"], "depth_slack_m": DEPTH_SLACK,
            "align_limit_rad": ALIGN_LIMIT}  # fmt: skip


INSERT = TaskType(
    name="insert",
    summary=(
        f"the object ends inside the target's opening, at least the task's depth below its top (by default as "
        f"deep as the video shows it, less {DEPTH_SLACK * 1000:.0f} mm), its axis within {ALIGN_LIMIT:g} rad of "
        "the target's"
    ),
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=inserted_success,
    task_json=_insert_fields,
    check_extra=_check_depth,
)
