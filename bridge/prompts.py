"""The object prompts being edited in a scene, and the demo folder's prompts.json.

``scene.real2gym.object_prompts`` is an editable copy of prompts.json's
objects, each with its corrections (prompts on later frames that re-seed its
mask from there on): :func:`load_prompts` fills it from the demo folder, :func:`save_prompts`
writes it back (atomically, keeping the task and the fields it does not know,
with a one-time backup ``prompts.json.orig``). The collection remembers the
folder it came from (``prompts_dir``), so that prompts are never written into
another demo's folder by mistake (:func:`prepare_prompts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import bpy

from ..real2gym_addon.errors import DemoFolderError
from ..real2gym_addon.prompts import Correction, ObjectPrompt
from ..real2gym_addon.prompts_file import read_prompts_file, save_prompts_file
from ..real2gym_addon.segmentation.overlay import default_color
from ..state.properties import has_box, prompt_on_frame


def _same_folder(a: str | Path, b: str | Path) -> bool:
    return Path(bpy.path.abspath(str(a))).resolve() == Path(bpy.path.abspath(str(b))).resolve()


def scene_demo_dir(scene: bpy.types.Scene) -> Path:
    """The scene's demo folder, absolute.

    Raises:
        DemoFolderError: The scene has no demo folder set.
    """
    demo_dir = scene.real2gym.demo_dir
    if not demo_dir:
        raise DemoFolderError("set the demo folder first (Real2Gym tab, Demo Folder)")
    return Path(bpy.path.abspath(demo_dir))


def _set_points(item, points: Sequence[tuple[float, float, int]]) -> None:
    item.points.clear()
    for x, y, label in points:
        point = item.points.add()
        point.x, point.y, point.label = x, y, label


def _fill(item, prompt: ObjectPrompt, index: int) -> None:
    item.name = prompt.name
    item.source_name = prompt.name
    item.frame = prompt.frame
    item.box = prompt.box
    item.shape, item.role = prompt.shape, prompt.role
    _set_points(item, prompt.points)
    item.corrections.clear()
    for correction in prompt.corrections:
        added = item.corrections.add()
        added.frame, added.box = correction.frame, correction.box
        _set_points(added, correction.points)
    item.color = default_color(index)


def _points(item) -> tuple[tuple[float, float, int], ...]:
    return tuple((p.x, p.y, p.label) for p in item.points)


def load_prompts(scene: bpy.types.Scene, demo_dir: str | Path | None = None) -> int:
    """Replaces the scene's object prompts with those of a demo folder's prompts.json.

    Args:
        scene: The scene whose ``real2gym.object_prompts`` is filled.
        demo_dir: The demo folder; the scene's when None.

    Returns:
        The number of objects loaded.

    Raises:
        DemoFolderError: prompts.json is missing or malformed; the scene is unchanged.
    """
    demo_dir = Path(bpy.path.abspath(str(demo_dir))) if demo_dir else scene_demo_dir(scene)
    prompts = read_prompts_file(demo_dir)
    state = scene.real2gym
    state.object_prompts.clear()
    for index, prompt in enumerate(prompts):
        _fill(state.object_prompts.add(), prompt, index)
    state.active_prompt_index = 0
    state.prompts_dir = str(demo_dir.resolve())
    return len(prompts)


def prompt_edits(scene: bpy.types.Scene) -> list[tuple[ObjectPrompt, str | None]]:
    """The scene's object prompts as plain records, each with the name it had in prompts.json.

    The corrections are as listed (in any order); :func:`~real2gym_addon.prompts_file.save_prompts_file`
    writes the earliest of an object's prompts as its main one.
    """
    edits = []
    for item in scene.real2gym.object_prompts:
        prompt = ObjectPrompt(
            name=item.name.strip(),
            frame=item.frame,
            box=tuple(item.box),
            points=_points(item),
            shape=item.shape,
            role=item.role,
            corrections=tuple(Correction(c.frame, tuple(c.box), _points(c)) for c in item.corrections),
        )
        edits.append((prompt, item.source_name or None))
    return edits


def save_prompts(scene: bpy.types.Scene, demo_dir: str | Path | None = None) -> bool:
    """Writes the scene's object prompts into a demo folder's prompts.json.

    Args:
        scene: The scene whose ``real2gym.object_prompts`` are written.
        demo_dir: The demo folder; the scene's when None.

    Returns:
        True when the file changed (False when it already held these prompts).

    Raises:
        DemoFolderError: No demo folder, repeated or empty names, or the
            prompts came from another demo folder.
        OutputError: The file cannot be written.
    """
    demo_dir = Path(bpy.path.abspath(str(demo_dir))) if demo_dir else scene_demo_dir(scene)
    state = scene.real2gym
    if state.prompts_dir and not _same_folder(state.prompts_dir, demo_dir):
        raise DemoFolderError(
            f"the object prompts were loaded from {state.prompts_dir}, not from {demo_dir}; "
            "press Load Prompts to edit this demo's prompts"
        )
    written = save_prompts_file(demo_dir, prompt_edits(scene))
    for item in state.object_prompts:
        item.source_name = item.name
    state.prompts_dir = str(demo_dir.resolve())
    return written


def prepare_prompts(scene: bpy.types.Scene, demo_dir: str | Path) -> bool:
    """Makes ``demo_dir``'s prompts.json hold the scene's prompts before a run.

    Saves the scene's prompts when they belong to ``demo_dir``; when the scene
    has none, the run uses the file as it is.

    Args:
        scene: The scene whose object prompts are saved.
        demo_dir: The run's demo folder.

    Returns:
        True when the scene has no prompts yet (load them after the run succeeds).

    Raises:
        DemoFolderError: The scene's prompts belong to another demo folder.
    """
    state = scene.real2gym
    if not state.object_prompts:
        return True
    home = state.prompts_dir or state.demo_dir
    if home and not _same_folder(home, demo_dir):
        raise DemoFolderError(
            f"the object prompts in the Segmentation panel belong to {home}, not to {demo_dir}; "
            "press Load Prompts to load this demo's prompts"
        )
    save_prompts(scene, demo_dir)
    return False


def mask_colors(scene: bpy.types.Scene) -> dict[str, tuple[float, float, float]]:
    """Each object prompt's overlay colour (sRGB, 0 to 1), by name."""
    return {item.name: tuple(item.color) for item in scene.real2gym.object_prompts}


def add_prompt(scene: bpy.types.Scene, name: str = "object") -> bpy.types.PropertyGroup:
    """Adds an object prompt on the current frame with a unique name and makes it active.

    Returns:
        The new prompt (its box is empty: draw one).
    """
    state = scene.real2gym
    names = {item.name for item in state.object_prompts}
    unique, number = name, 1
    while unique in names:
        number += 1
        unique = f"{name}.{number:03d}"
    item = state.object_prompts.add()
    item.name = unique
    item.frame = max(scene.frame_current, 0)
    item.color = default_color(len(state.object_prompts) - 1)
    state.active_prompt_index = len(state.object_prompts) - 1
    if not state.prompts_dir and state.demo_dir:
        state.prompts_dir = str(Path(bpy.path.abspath(state.demo_dir)).resolve())
    return item


def remove_prompt(scene: bpy.types.Scene, index: int) -> None:
    """Removes the object prompt at ``index`` (nothing is written until saved)."""
    state = scene.real2gym
    if not 0 <= index < len(state.object_prompts):
        raise IndexError(f"no object prompt number {index}")
    state.object_prompts.remove(index)
    state.active_prompt_index = min(state.active_prompt_index, max(len(state.object_prompts) - 1, 0))


def set_drawn_prompt(
    prompt,
    frame: int,
    box: Sequence[float] | None,
    points: Sequence[tuple[float, float, int]],
):
    """Stores a box and points drawn in the camera view into an object prompt.

    On the prompt's own frame (or when it has no box yet) they become its main
    prompt. On another frame they become a correction on that frame (a new one,
    or the one already there): the object's mask is re-seeded from that frame on.

    Args:
        prompt: The object prompt to change.
        frame: The video frame they were drawn on.
        box: ``(x0, y0, x1, y1)`` in video pixels (x right, y down), or None
            to keep the box of the prompt already on that frame.
        points: ``(x, y, label)`` in video pixels; they replace that prompt's points.

    Returns:
        What was changed: ``prompt`` itself, or the correction.

    Raises:
        ValueError: No box was drawn on a frame that has no prompt of this object yet.
    """
    target = prompt_on_frame(prompt, frame)
    if target is None and not has_box(prompt):
        target = prompt  # a new object prompt: this is its first box
    if box is None and (target is None or not has_box(target)):
        raise ValueError(
            f"draw a box on frame {frame}: '{prompt.name}' has no prompt there "
            f"(its box is on frame {prompt.frame})"
        )
    if target is None:
        target = prompt.corrections.add()
    target.frame = frame
    if box is not None:
        target.box = box
    _set_points(target, points)
    return target


def remove_correction(scene: bpy.types.Scene, prompt_index: int, index: int) -> int:
    """Removes one correction of an object prompt (nothing is written until saved).

    Args:
        scene: The scene whose ``real2gym.object_prompts`` holds the object.
        prompt_index: The object prompt's place in the list.
        index: The correction's place in the object's ``corrections``.

    Returns:
        The frame the removed correction was on.

    Raises:
        IndexError: There is no such object prompt or correction.
    """
    state = scene.real2gym
    if not 0 <= prompt_index < len(state.object_prompts):
        raise IndexError(f"no object prompt number {prompt_index}")
    prompt = state.object_prompts[prompt_index]
    if not 0 <= index < len(prompt.corrections):
        raise IndexError(f"'{prompt.name}' has no correction number {index}")
    frame = prompt.corrections[index].frame
    prompt.corrections.remove(index)
    return frame
