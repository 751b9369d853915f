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
        part_opening: For a task on a moving part (``open``, ``close``): the share of its joint's range
            it is open by (0 closed, 1 at the range's other end) as the run ends; None otherwise.
        part_q: That joint's value (rad or m); None without a part.
        to: The task's own ``to`` (prompts.json), or None for the task type's default.
        target_rotation: ``3x3`` the target's orientation (world from its local frame); None without one
            (the round targets need only their axis).
        support_share: The share of the moved object's weight its target carries through their contacts
            (vertical contact force over weight; :func:`carried_share`); None where not measured (the
            verifier measures it as the run ends, not on every frame).
        target_tilt_rad: How far the target's up axis has turned from where it started (a stack knocked
            over); None without a free target.
        moved_rotation: ``3x3`` the moved object's orientation (world from its local frame); None where not
            given (a hanging object's lowest point needs it).
        contents: ``Nx3`` where the moved object's contents (the spheres a ``pour`` pours) are, world frame;
            None where it has none.
        contents_radius: m, one sphere's radius; 0 without contents.
        min_share: The task's own ``min_share`` (``pour``), or None for the task type's default.
        expected_up: ``(3,)`` the world's up in the moved object's own frame as the video ends (``shelve``
            turns it as the video does); None where not given.
        depth: The task's own ``depth`` (``insert``: m into the target's opening), or None for the default.
        expected_depth: m, how deep in the target's opening the video shows the moved object as it ends
            (``insert``'s default depth); None where not given.
    """

    moved_position: np.ndarray | None
    moved_shape: Shape | None
    raised_m: float = 0.0
    target_axis: np.ndarray | None = None
    target_shape: Shape | None = None
    part_opening: float | None = None
    part_q: float | None = None
    to: float | None = None
    target_rotation: np.ndarray | None = None
    support_share: float | None = None
    target_tilt_rad: float | None = None
    moved_rotation: np.ndarray | None = None
    contents: np.ndarray | None = None
    contents_radius: float = 0.0
    min_share: float | None = None
    expected_up: np.ndarray | None = None
    depth: float | None = None
    expected_depth: float | None = None

    def radial_offset(self) -> float:
        """m: the moved object's centre from the target's axis, across the table."""
        return float(np.hypot(*(self.moved_position[:2] - self.target_axis[:2])))

    def in_target_frame(self) -> np.ndarray:
        """``(3,)``: the moved object's centre in the target's local frame (its box centre the origin)."""
        centre = self.target_axis - self.target_rotation @ self.target_shape.axis_offset()
        return self.target_rotation.T @ (self.moved_position - centre)

    def height_above_bottom(self) -> float:
        """m: the moved object's underside above the target's bottom."""
        bottom = self.target_axis[2] - self.target_shape.size[2] / 2
        return float(self.moved_position[2] - self.moved_shape.size[2] / 2 - bottom)


def carried_share(forces: dict[str, float], weight_n: float, by: str) -> float:
    """The share of an object's weight ``by`` carries: the vertical contact force it exerts on the object
    (``forces``: exerting body name -> N, as the verifier records them) over the object's weight; 0 when it
    pulls or does not touch."""
    return max(0.0, float(forces.get(by, 0.0))) / weight_n if weight_n > 0 else 0.0


def tilt_between(start: np.ndarray, now: np.ndarray) -> float:
    """rad: the angle between two orientations' up axes (``3x3`` rotations, world from local)."""
    return float(np.arccos(np.clip(np.dot(start[:, 2], now[:, 2]), -1.0, 1.0)))


@dataclasses.dataclass(frozen=True)
class TaskType:
    """One entry of the task table.

    Attributes:
        name: The type as prompts.json writes it (``place_in``).
        summary: What success means, in a sentence (docs/checks.md's row).
        needs_target: The task names a ``target`` among the objects.
        needs_part: The task names a ``part`` of its object (a door, a drawer) instead of moving the object.
        reads_support: The predicate reads :attr:`TaskState.support_share` and ``target_tilt_rad`` (the
            environment measures them only then: contact forces on every step cost time).
        releases: The hand lets the object go at the end (a lift may hold it to the end).
        keyframes: The events of the moved object the task needs (the geometry stage finds them for any
            object that moves; ``grasp_held`` fails a releasing task without its release).
        success: The predicate: the state -> ``{"passed": bool, ...figures}``.
        task_json: The figures ``task.json``'s ``success`` section carries for environments
            read by other tools: (report entry of the target or None) -> fields.
        check_extra: Checks the task's own fields beyond object, target and part (prompts.json's task) ->
            what is wrong, or None.
        reads_contents: The predicate reads :attr:`TaskState.contents` (the environment then tracks them).
    """

    name: str
    summary: str
    needs_target: bool
    releases: bool
    keyframes: tuple[str, ...]
    success: Callable[[TaskState], dict]
    task_json: Callable[[dict | None], dict] = lambda target: {}
    needs_part: bool = False
    reads_support: bool = False
    check_extra: Callable[[dict], str | None] = lambda task: None
    reads_contents: bool = False

    def check_fields(
        self, task: dict, names: list[str], parts: dict[str, list[str]] | None = None
    ) -> str | None:
        """Says what is wrong with a task of this type in prompts.json, or None when it is right.

        Args:
            task: prompts.json's ``task`` object (or one of a ``steps`` task's steps).
            names: The objects' names.
            parts: Object name -> its parts' names (objects without parts may be left out).
        """
        moved, target = task.get("object"), task.get("target")
        if moved not in names:
            return f"the task's object {moved!r} is not among the objects ({', '.join(names)})"
        if self.needs_part:
            own = (parts or {}).get(moved, [])
            if task.get("part") not in own:
                listed = f"its parts are {', '.join(own)}" if own else "it has no 'parts' in prompts.json"
                return f"task '{self.name}' needs a 'part' of '{moved}', got {task.get('part')!r}; {listed}"
            to = task.get("to")
            if to is not None and (
                isinstance(to, bool) or not isinstance(to, int | float) or not 0 <= to <= 1
            ):
                return f"task '{self.name}': 'to' is a share of the joint's range, 0 to 1, got {to!r}"
        if self.needs_target and target not in names:
            return (
                f"task '{self.name}' needs a 'target' among the objects ({', '.join(names)}), got {target!r}"
            )
        if target is not None and target == moved:
            return f"the task's object and target are both '{moved}'"
        return self.check_extra(task)
