"""Checking a report.json read back from disk before anything acts on it.

``verify``, ``fix``, ``compare`` and Blender's *Load Report* read a report that
a person (or a script) may have edited. :func:`check_report` validates it the
way the demo folder is validated at the door: the structure the readers rely
on, every number finite, the version (older ones brought up to date by
:func:`~.versions.migrate`), object names that are names, and every path it names
for the run's files inside the output folder. :func:`video_source` checks the
one path that may lie outside it, the demo's video, before it is opened.
"""

from __future__ import annotations

import math
import stat
from pathlib import Path
from typing import Any

from ..errors import OutputError
from ..names import check_object_name, clashing_names, inside
from .model import Report
from .versions import migrate


def first_non_finite(value: Any, path: str) -> str | None:
    """The JSON path of the first NaN or infinite number in ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = first_non_finite(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = first_non_finite(item, f"{path}[{index}]")
            if found:
                return found
    return None


def _need(container: dict, key: str, kind: type | tuple, where: str) -> Any:
    value = container.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise OutputError(f"report.json: '{where}{key}' is missing or not a {_kind_name(kind)}")
    return value


def _optional(container: dict, key: str, kind: type, where: str) -> Any:
    """``container[key]`` when present and of ``kind``; an empty one when absent; an error otherwise."""
    value = container.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise OutputError(f"report.json: '{where}{key}' must be a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple) -> str:
    names = {dict: "JSON object", list: "list", str: "string", int: "whole number", float: "number"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def check_report(report: Any, out_dir: Path | str) -> dict:
    """Validates a report read back from ``out_dir/report.json``.

    Args:
        report: The parsed JSON.
        out_dir: The output folder it was read from; the run's files must lie inside it.

    Returns:
        ``report``, brought up to the current version (itself when it is of that version).

    Raises:
        OutputError: Naming the field (as a JSON path) and what is wrong with it.
    """
    if not isinstance(report, dict):
        raise OutputError("report.json must hold a JSON object (was it overwritten?)")
    bad = first_non_finite(report, "")
    if bad:
        raise OutputError(
            f"report.json: '{bad}' is NaN or infinite; a report holds finite numbers only "
            "(restore the file, or run 'real2gym run' again)"
        )
    report = migrate(report)
    video = _need(report, "video", dict, "")
    frames = _need(video, "frames", int, "video.")
    for key in ("fps", "width", "height"):
        if _need(video, key, (int, float), "video.") <= 0:
            raise OutputError(f"report.json: 'video.{key}' must be positive")
    if frames < 1:
        raise OutputError("report.json: 'video.frames' must be at least 1")
    camera = _need(report, "camera", dict, "")
    for key in ("fx", "fy", "cx", "cy", "width", "height"):
        _need(camera, key, (int, float), "camera.")
    names = []
    for index, obj in enumerate(_optional(report, "objects", list, "")):
        if not isinstance(obj, dict):
            raise OutputError(f"report.json: 'objects[{index}]' must be a JSON object")
        names.append(check_object_name(obj.get("name"), f"report.json, objects[{index}]", OutputError))
        for f_index, entry in enumerate(_optional(obj, "frames", list, f"objects[{index}].")):
            frame = entry.get("frame") if isinstance(entry, dict) else None
            if isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame < frames:
                raise OutputError(
                    f"report.json, object '{obj['name']}': frames[{f_index}] names frame {frame!r:.20}, "
                    f"outside the video's 0 to {frames - 1}"
                )
    if len(set(names)) != len(names):
        raise OutputError("report.json: object names must be unique")
    for first, second in clashing_names(names):
        raise OutputError(
            f"report.json: the object names {first!r} and {second!r} differ only by case or Unicode form; "
            "they would name the same mask folder on macOS and Windows"
        )
    for index, keyframe in enumerate(_optional(report, "keyframes", list, "")):
        frame = keyframe.get("frame") if isinstance(keyframe, dict) else None
        if isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame < frames:
            raise OutputError(
                f"report.json: keyframes[{index}] is at frame {frame!r:.20}, outside the video's 0 to {frames - 1}"
            )
    for kind, relative in _optional(report, "artifacts", dict, "").items():
        if not isinstance(relative, str):
            raise OutputError(f"report.json: 'artifacts.{kind}' must be a path inside the output folder")
        inside(out_dir, relative, f"report.json: artifacts.{kind}", OutputError)
    _check_typed_sections(report)
    segmentation = _optional(report, "segmentation", dict, "")
    for index, entry in enumerate(_optional(segmentation, "objects", list, "segmentation.")):
        if not isinstance(entry, dict):
            raise OutputError(f"report.json: 'segmentation.objects[{index}]' must be a JSON object")
        name = check_object_name(
            entry.get("name"), f"report.json, segmentation.objects[{index}]", OutputError
        )
        if "masks" in entry:
            inside(out_dir, str(entry["masks"]), f"report.json: the masks of '{name}'", OutputError)
    return report


def _check_typed_sections(report: dict) -> None:
    """The sections the model types (:class:`~.model.Report`) are of the types it gives them."""
    _optional(report, "task", dict, "")
    _optional(report, "warnings", list, "")
    _optional(report, "edit_log", list, "")
    for key in ("table", "gripper", "repair", "variant"):
        _optional(report, key, dict, "")
    timing = _optional(report, "timing", dict, "")
    _optional(timing, "stages_s", dict, "timing.")
    if report.get("verification") is not None:
        verification = _need(report, "verification", dict, "")
        if not isinstance(verification.get("passed"), bool):
            raise OutputError("report.json: 'verification.passed' is missing or not true or false")
        _need(verification, "checks", dict, "verification.")
        _optional(verification, "suggestions", list, "verification.")


def video_source(report: Report) -> Path:
    """The demo's video named in a report, checked to be a movie file or a frames folder.

    A report may have been edited to name any file; this refuses anything that
    is not what a demo folder holds (a regular file named ``video.<ext>`` or a
    ``frames`` folder): devices, pipes, ``/etc`` files are never opened.

    Raises:
        OutputError: The video is missing, moved, or not a video.
    """
    source = report.video.source
    if not isinstance(source, str) or not source or "\x00" in source:
        raise OutputError("report.json: 'video.source' must name the demo's video")
    path = Path(source)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise OutputError(
            f"the demo's video {path} (report.json 'video.source') is missing; was the demo folder moved?"
        ) from None
    if stat.S_ISDIR(mode) and path.name == "frames":
        return path
    if not stat.S_ISREG(mode) or not path.name.startswith("video."):
        raise OutputError(
            f"report.json 'video.source' names {path}, which is not a demo folder's video "
            "(a file video.<ext> or a frames/ folder)"
        )
    return path
