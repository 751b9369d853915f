"""What a task type is: one entry of the task table (:data:`..tasks.TASKS`).

A task type holds its fields and how they are checked, the keyframes it expects, and its
success predicate. The predicate reads a :class:`TaskState`, which the verifier fills from
the simulated record at the video's last frame and the Gymnasium environment from the
MuJoCo state of the moment: both decide with the same function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..geometry.shapes import Shape


@dataclasses.dataclass(frozen=True)
class TaskState:
    """Where the task's objects are, in world coordinates (z up, metres).

    Attributes:
        moved_position: ``(3,)``: the centre of the moved object's box.
        moved_shape: The moved object's shape (its ``size`` the box's full extents).
        raised_m: How far the moved object has been raised above where it started: the highest
            point over the run for the verifier, the height now for the environment.
        target_axis: ``(3,)``: the target's axis at its box centre's height (a mug's axis is off
            its box centre, away from the handle); None without a target.
        target_shape: The target's shape; None without a target.
    """

    moved_position: np.ndarray
    moved_shape: Shape
    raised_m: float = 0.0
    target_axis: np.ndarray | None = None
    target_shape: Shape | None = None

    def radial_offset(self) -> float:
        """m: the moved object's centre from the target's axis, across the table."""
        return float(np.hypot(*(self.moved_position[:2] - self.target_axis[:2])))

    def height_above_bottom(self) -> float:
        """m: the moved object's underside above the target's bottom."""
        bottom = self.target_axis[2] - self.target_shape.size[2] / 2
        return float(self.moved_position[2] - self.moved_shape.size[2] / 2 - bottom)


@dataclasses.dataclass(frozen=True)
class TaskType:
    """One entry of the task table.

    Attributes:
        name: The type as prompts.json writes it (``place_in``).
        summary: What success means, in a sentence (docs/checks.md's row).
        needs_target: The task names a ``target`` among the objects.
        releases: The hand lets the object go at the end (a lift may hold it to the end).
        keyframes: The events of the moved object the task needs (the geometry stage finds them for any
            object that moves; ``grasp_held`` fails a releasing task without its release).
        success: The predicate: the state -> ``{"passed": bool, ...figures}``.
        task_json: The figures ``task.json``'s ``success`` section carries for environments
            read by other tools: (report entry of the target or None) -> fields.
    """

    name: str
    summary: str
    needs_target: bool
    releases: bool
    keyframes: tuple[str, ...]
    success: Callable[[TaskState], dict]
    task_json: Callable[[dict | None], dict] = lambda target: {}

    def check_fields(self, task: dict, names: list[str]) -> str | None:
        """Says what is wrong with a task of this type in prompts.json, or None when it is right.

        Args:
            task: prompts.json's ``task`` object.
            names: The objects' names.
        """
        moved, target = task.get("object"), task.get("target")
        if moved not in names:
            return f"the task's object {moved!r} is not among the objects ({', '.join(names)})"
        if self.needs_target and target not in names:
            return (
                f"task '{self.name}' needs a 'target' among the objects ({', '.join(names)}), got {target!r}"
            )
        if target is not None and target == moved:
            return f"the task's object and target are both '{moved}'"
        return None
