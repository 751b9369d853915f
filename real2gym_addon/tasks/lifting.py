"""Raising an object off the table (``lift``); the hand may hold it to the end."""

from __future__ import annotations

from .base import TaskState, TaskType

LIFT_MARGIN = 0.02
"""m: how far the object must be raised above where it started."""


def raised_success(state: TaskState) -> dict:
    """Raised more than 2 cm (:data:`LIFT_MARGIN`) above where it started."""
    return {"passed": state.raised_m > LIFT_MARGIN, "raised_m": round(state.raised_m, 4)}


LIFT = TaskType(
    name="lift",
    summary=f"the object is raised more than {LIFT_MARGIN * 100:g} cm above where it started",
    needs_target=False,
    releases=False,
    keyframes=("grasp", "lift"),
    success=raised_success,
    task_json=lambda target: {"raised_m": LIFT_MARGIN},
)
