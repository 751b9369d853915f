"""The task table: one entry per task type (docs/checks.md, "Task success").

Adding a task type is one :class:`~.base.TaskType` entry here plus its own module with its
success predicate; prompts.json's check, the verifier's ``task_success``, the Gymnasium
environment's success and task.json all read the entry.
"""

from __future__ import annotations

from ..errors import Real2GymError
from .articulated import CLOSE, OPEN
from .base import TaskState, TaskType, carried_share, tilt_between
from .hanging import HANG
from .inserting import INSERT
from .lifting import LIFT
from .placing import PLACE_IN, PLACE_ON
from .pouring import POUR
from .shelving import SHELVE
from .stacking import STACK
from .steps import STEPS_FIELD, steps_success, steps_type

STEPS = steps_type((PLACE_IN, PLACE_ON, STACK, HANG, SHELVE, INSERT, POUR, LIFT, OPEN, CLOSE))
"""A task of several of the others, in order."""
TASKS: dict[str, TaskType] = {
    task.name: task
    for task in (PLACE_IN, PLACE_ON, STACK, HANG, SHELVE, INSERT, POUR, LIFT, OPEN, CLOSE, STEPS)
}
"""Task type name -> its entry, in the order the docs list them."""


def task_type(name: str) -> TaskType:
    """The entry of the task type ``name``.

    Raises:
        Real2GymError: No task type has that name; the message lists them.
    """
    try:
        return TASKS[name]
    except KeyError:
        raise Real2GymError(f"unknown task type {name!r}; use one of {', '.join(TASKS)}") from None


def task_steps(task: dict) -> list[dict]:
    """A task's steps: its ``steps`` for a ``steps`` task, else the task itself alone."""
    return list(task[STEPS_FIELD]) if task.get("type") == STEPS.name else [task]


def moved_step(task: dict) -> dict | None:
    """The step that carries a free object (place, lift): the one the grasp, the hand's path and the
    carried object's checks are about; None when every step works a part (open, close)."""
    return next((step for step in task_steps(task) if not TASKS[step["type"]].needs_part), None)


__all__ = [
    "STEPS",
    "TASKS",
    "TaskState",
    "TaskType",
    "carried_share",
    "moved_step",
    "steps_success",
    "task_steps",
    "task_type",
    "tilt_between",
]
