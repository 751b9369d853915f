"""Editing prompts.json: reading it for an editor and writing edits back safely.

:func:`read_prompts_file` reads the object prompts leniently (a box off the
image or a frame past the video's end still loads, so that it can be fixed in
an editor; :func:`~real2gym_addon.demo.load_demo` checks them against the video
when a run starts). :func:`save_prompts_file` merges edited prompts into the
file: the task, every field it does not know (per object, per entry of an
object's ``prompts`` list, and at the top level) and the file's other content
stay as they were; an object's corrections are its ``prompts`` list. It keeps a one-time backup
``prompts.json.orig`` of the file as it was before its first overwrite and
writes atomically, so a reader never sees half a file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .demo import read_json as _read_json
from .errors import DemoFolderError, OutputError
from .files import write_json_atomic
from .names import clashing_names
from .prompts import Correction, ObjectPrompt, parse_object

PROMPTS_NAME = "prompts.json"
BACKUP_SUFFIX = ".orig"


def prompts_path(demo_dir: Path | str) -> Path:
    """The prompts.json of a demo folder."""
    return Path(demo_dir) / PROMPTS_NAME


def read_prompts_file(demo_dir: Path | str) -> list[ObjectPrompt]:
    """Reads the object prompts of a demo folder for editing.

    Checks the structure only (names, numbers, shapes, roles), not the boxes
    against the video: a run checks those.

    Args:
        demo_dir: The demo folder.

    Returns:
        The object prompts in file order; boxes and points in video pixels
        (x right, y down from the top-left corner).

    Raises:
        DemoFolderError: The file is missing, not JSON, or an entry is malformed;
            the message names the object.
    """
    data = _read_json(prompts_path(demo_dir))
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list):
        raise DemoFolderError("prompts.json must hold an 'objects' list")
    return [parse_object(entry, i) for i, entry in enumerate(data["objects"])]


def _number(value: float) -> float | int:
    value = round(float(value), 2)
    return int(value) if value.is_integer() else value


def _set_prompt(entry: dict, prompt: Correction) -> dict:
    """``entry`` with the prompt's ``frame``, ``box`` and ``points`` (its other fields kept)."""
    entry.update(frame=int(prompt.frame), box=[_number(v) for v in prompt.box])
    if prompt.points:
        entry["points"] = [[_number(x), _number(y), int(label)] for x, y, label in prompt.points]
    else:
        entry.pop("points", None)
    return entry


def _prompt_list(old: Any, prompts: Sequence[Correction]) -> list[dict]:
    """The ``prompts`` list of an object; an entry keeps the unknown fields of the old one on its frame."""
    known = {}
    for item in old if isinstance(old, list) else []:
        if isinstance(item, dict) and isinstance(item.get("frame"), int):
            known.setdefault(item["frame"], item)
    return [_set_prompt(dict(known.get(p.frame, {})), p) for p in prompts]


def _merged(data: dict, edits: Sequence[tuple[ObjectPrompt, str | None]]) -> dict:
    known = {}
    for entry in data.get("objects") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            known.setdefault(entry["name"], entry)
    objects, renamed = [], {}
    for prompt, previous in edits:
        entry = dict(known.get(previous or prompt.name, {}))
        # An object written as a list of prompts only stays so; otherwise the main prompt is the
        # single frame/box/points and the corrections are the list.
        listed_only = "box" not in entry and isinstance(entry.get("prompts"), list) and entry["prompts"]
        entry.update(name=prompt.name)
        if listed_only:
            for key in ("frame", "box", "points"):
                entry.pop(key, None)
            entry["prompts"] = _prompt_list(entry["prompts"], prompt.prompts)
        else:
            _set_prompt(entry, prompt.prompts[0])
            if prompt.corrections:
                entry["prompts"] = _prompt_list(entry.get("prompts"), prompt.corrections)
            else:
                entry.pop("prompts", None)
        entry.update(shape=prompt.shape, role=prompt.role)
        objects.append(entry)
        if previous and previous != prompt.name:
            renamed[previous] = prompt.name
    merged = dict(data)
    merged["objects"] = objects
    task = merged.get("task")
    if isinstance(task, dict) and renamed:
        merged["task"] = {k: renamed.get(v, v) if k in ("object", "target") else v for k, v in task.items()}
    return merged


def _backup(path: Path) -> None:
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if backup.exists() or not path.is_file():
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{backup.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        shutil.copy2(path, tmp)
        os.replace(tmp, backup)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_prompts_file(demo_dir: Path | str, edits: Sequence[tuple[ObjectPrompt, str | None]]) -> bool:
    """Writes edited object prompts into a demo folder's prompts.json.

    The objects in the file become ``edits``, in that order. Each keeps the
    fields of the file's entry it was loaded from (found by its previous name)
    that the editor does not know; the task and the file's other top-level
    fields are kept, and a renamed object is renamed in the task too. Before the
    first overwrite the file is copied to ``prompts.json.orig``; later saves
    keep that copy. Nothing is written when nothing changed.

    Args:
        demo_dir: The demo folder.
        edits: Per object, its prompt (box and points in video pixels, x right,
            y down; its corrections in any order, the earliest of all its
            prompts is written as the main one) and the name it had in the
            file (None for a new object).

    Returns:
        True when the file was written.

    Raises:
        DemoFolderError: Two objects share a name, a name is empty, or an
            object has two prompts on one frame.
        OutputError: The demo folder cannot be written.
    """
    edits = [(ObjectPrompt.from_prompts(p.name, p.prompts, p.shape, p.role), old) for p, old in edits]
    names = [prompt.name for prompt, _ in edits]
    if any(not name.strip() for name in names):
        raise DemoFolderError("every object prompt needs a name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DemoFolderError(f"object names must be unique; rename the repeated: {', '.join(repeated)}")
    for first, second in clashing_names(names):
        raise DemoFolderError(
            f"the object names {first!r} and {second!r} differ only by case or Unicode form; rename one"
        )
    path = prompts_path(demo_dir)
    data: Any = {}
    if path.is_file():
        try:
            data = _read_json(path)
        except DemoFolderError:
            data = {}  # unreadable: the backup keeps it, the edits replace it
    if not isinstance(data, dict):
        data = {}
    merged = _merged(data, edits)
    if merged == data:
        return False
    try:
        _backup(path)
        write_json_atomic(path, merged)
    except OSError as e:
        raise OutputError(
            f"cannot write {path}: {e.strerror or e}; check the demo folder's permissions"
        ) from e
    return True
