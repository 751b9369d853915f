"""Opening or closing an articulated object's part: a door, a drawer (``open``, ``close``).

Both read the part's joint as the run ends: the share of the joint's range it is open by
(0 closed, 1 at the other end of the range). RoboCasa reads a door closed at 0.005 of its
range and LIBERO's microwave closed at qpos > -0.005 rad; a hand-pushed door that settles a
degree or two short of its stop is closed to a user, so ``close`` allows 0.05 of the range.
"""

from __future__ import annotations

from .base import TaskState, TaskType

OPEN_TO = 0.8
"""``open``: the share of its range a part must end open by, unless the task says ``to``."""
CLOSE_TO = 0.05
"""``close``: the share of its range a part may stay open by, unless the task says ``to``."""


def _figures(state: TaskState, passed: bool, to: float) -> dict:
    return {"passed": bool(passed), "opening": round(float(state.part_opening), 4), "to": to,
            "q": round(float(state.part_q), 5)}  # fmt: skip


def opened_success(state: TaskState) -> dict:
    """The part ends open by at least ``to`` of its range (default :data:`OPEN_TO`)."""
    to = OPEN_TO if state.to is None else float(state.to)
    return _figures(state, state.part_opening >= to, to)


def closed_success(state: TaskState) -> dict:
    """The part ends open by at most ``to`` of its range (default :data:`CLOSE_TO`)."""
    to = CLOSE_TO if state.to is None else float(state.to)
    return _figures(state, state.part_opening <= to, to)


OPEN = TaskType(
    name="open",
    summary=f"the part's joint ends open by at least {OPEN_TO:g} of its range (or the task's 'to')",
    needs_target=False,
    releases=True,
    keyframes=("open",),
    success=opened_success,
    task_json=lambda target: {"to": OPEN_TO},
    needs_part=True,
)
CLOSE = TaskType(
    name="close",
    summary=f"the part's joint ends within {CLOSE_TO:g} of its range from closed (or the task's 'to')",
    needs_target=False,
    releases=True,
    keyframes=("closed",),
    success=closed_success,
    task_json=lambda target: {"to": CLOSE_TO},
    needs_part=True,
)
