"""A task made of others, in order (``steps``): a cup into the microwave, then its door closed.

Each step is an entry of the task table. The verifier runs them all in one simulation and
decides each with its own predicate on every video frame: a step is done on the first frame
from which its predicate holds to the end of the run, and the steps pass when each is done,
in the order given (a step may be done on the same frame as the one before it).
"""

from __future__ import annotations

import dataclasses

from .base import TaskState, TaskType

STEPS_FIELD = "steps"
"""The ``steps`` task's field that lists its steps (and the verdict's list of each step's result)."""
MAX_STEPS = 8
"""Steps one task may list."""


@dataclasses.dataclass(frozen=True)
class StepsType(TaskType):
    """The ``steps`` entry: its fields are its steps, each checked as its own type.

    Attributes:
        steps_of: The task types a step may be, by name.
    """

    steps_of: dict[str, TaskType] = dataclasses.field(default_factory=dict)

    def check_fields(
        self, task: dict, names: list[str], parts: dict[str, list[str]] | None = None
    ) -> str | None:
        steps = task.get(STEPS_FIELD)
        if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
            return f"task 'steps' needs 'steps': a list of 1 to {MAX_STEPS} tasks, got {type(steps).__name__}"
        for index, step in enumerate(steps):
            kind = step.get("type") if isinstance(step, dict) else None
            if kind not in self.steps_of:
                usable = ", ".join(self.steps_of)
                return f"task 'steps', steps[{index}]: unknown task type {kind!r}; use one of {usable}"
            problem = self.steps_of[kind].check_fields(step, names, parts)
            if problem is not None:
                return f"task 'steps', steps[{index}]: {problem}"
        return None


def steps_success(results: list[dict]) -> dict:
    """The steps' verdict from each step's result (``passed`` and ``done_frame``, None when never done)."""
    done = [r.get("done_frame") for r in results]
    in_order = all(a is not None and b is not None and a <= b for a, b in zip(done, done[1:], strict=False))
    return {"passed": bool(all(r["passed"] for r in results) and in_order), "in_order": bool(in_order),
            STEPS_FIELD: results}  # fmt: skip


def _one_state_only(state: TaskState) -> dict:
    raise TypeError("a 'steps' task is decided step by step (steps_success), not from one state")


def steps_type(steps_of: tuple[TaskType, ...]) -> StepsType:
    """The ``steps`` entry, whose steps may be any of ``steps_of``."""
    return StepsType(
        name="steps",
        summary="each step (a task of this table) is verified in order, in one simulation",
        needs_target=False,
        releases=True,
        keyframes=(),
        success=_one_state_only,
        steps_of={kind.name: kind for kind in steps_of},
    )
