"""The task table: one entry per task type (docs/checks.md, "Task success").

Adding a task type is one :class:`~.base.TaskType` entry here plus its own module with its
success predicate; prompts.json's check, the verifier's ``task_success``, the Gymnasium
environment's success and task.json all read the entry.
"""

from __future__ import annotations

from ..errors import Real2GymError
from .base import TaskState, TaskType
from .lifting import LIFT
from .placing import PLACE_IN, PLACE_ON

TASKS: dict[str, TaskType] = {task.name: task for task in (PLACE_IN, PLACE_ON, LIFT)}
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


__all__ = ["TASKS", "TaskState", "TaskType", "task_type"]
