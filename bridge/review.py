"""The run under review in the scene: keyframes with their checks, suggestions, edit logs.

:func:`show_report` copies what the Keyframes, Suggestions and Fixes panels
show from a report.json into ``scene.real2gym.fixes``; :func:`load_review` reads
it from an output folder first. Selecting a keyframe (:func:`select_keyframe`,
the list's update) jumps to its frame in the camera view and measures the
silhouette IoU of its object around it (:func:`measure_ious`, the core's
:func:`~real2gym_addon.fixes.silhouette_ious`).
"""

from __future__ import annotations

from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.fixes.review import keyframe_checks, silhouette_ious
from ..real2gym_addon.geometry.shape_kinds import is_container
from ..real2gym_addon.report import REPORT_NAME, Report, read_report
from .mask_review import show_mask_reviews

IOU_SPAN = 2
"""Frames either side of the selected keyframe whose silhouette IoU is shown."""
_quiet = [False]
"""True while the scene is refreshed: selecting a keyframe then does not jump."""


def fix_settings(scene: bpy.types.Scene):
    """The scene's fixing state (``scene.real2gym.fixes``)."""
    return scene.real2gym.fixes


def report_dir(scene: bpy.types.Scene, out_dir: str | Path = "") -> Path:
    """The output folder under review: ``out_dir``, else the reviewed one, else the scene's.

    Raises:
        Real2GymError: None is set.
    """
    folder = str(out_dir) or fix_settings(scene).report_dir or scene.real2gym.out_dir
    if not folder:
        raise Real2GymError("set the output folder of a finished run first (or run Real2Gym)")
    return Path(bpy.path.abspath(folder)).resolve()


def _figures(check: dict) -> str:
    shown = [f"{k}={v}" for k, v in check.items() if k != "passed" and not isinstance(v, (dict, list))]
    return ", ".join(shown[:3])


def show_report(scene: bpy.types.Scene, report: Report, out_dir: Path) -> None:
    """Shows a report in the scene's fixing state (keyframes, checks, suggestions, edit logs).

    Keeps the selected keyframe (by event and object) and the object to fix when
    they still exist. Does not change the frame.

    Args:
        scene: The scene.
        report: The run's report.
        out_dir: Its output folder.
    """
    state = fix_settings(scene)
    selected = None
    if 0 <= state.active_keyframe_index < len(state.keyframes):
        item = state.keyframes[state.active_keyframe_index]
        selected = (item.event, item.object_name)
    verification = {} if report.verification is None else report.verification.to_json()
    _quiet[0] = True
    try:
        state.report_dir = str(out_dir)
        path = Path(out_dir) / REPORT_NAME
        state.report_stamp = str(path.stat().st_mtime_ns) if path.is_file() else ""
        state.edit_count = len(report.edit_log)
        if "passed" not in verification:
            state.verification = "NONE"
        elif verification.get("stale"):
            state.verification = "STALE"
        else:
            state.verification = "PASSED" if verification["passed"] else "FAILED"
        state.checks.clear()
        for name, check in verification.get("checks", {}).items():
            item = state.checks.add()
            item.name, item.passed, item.figures = name, bool(check.get("passed", True)), _figures(check)
        state.keyframes.clear()
        for index, row in enumerate(keyframe_checks(report.to_json())):
            item = state.keyframes.add()
            item.name = f"{row['event']} {row['object']}"
            item.event, item.object_name, item.frame = row["event"], row["object"], row["frame"]
            item.checks, item.failed = ", ".join(row["checks"]), ", ".join(row["failed"])
            item.verdict = {True: "PASSED", False: "FAILED", None: "UNKNOWN"}[row["passed"]]
            if (row["event"], row["object"]) == selected:
                state.active_keyframe_index = index
        state.suggestions.clear()
        current = state.verification == "FAILED"
        for suggestion in verification.get("suggestions", []) if current else []:
            item = state.suggestions.add()
            item.name, item.check = suggestion["text"], suggestion.get("check", "")
            item.frame, item.kind = int(suggestion.get("frame") or 0), suggestion["fix"]["kind"]
        state.objects.clear()
        for entry in report.objects:
            item = state.objects.add()
            item.name, item.role, item.shape = entry["name"], entry.get("role", ""), entry.get("shape", "")
            item.collision_mode = entry.get("collision_mode", "")
            item.is_container = is_container(str(entry.get("shape")))
            for part in entry.get("parts", []):
                _show_part(item.parts.add(), part)
            for edit in entry.get("edits", []):
                line = item.edits.add()
                line.name, line.arguments, line.time = edit["kind"], _arguments(edit["args"]), edit["time"]
        if state.fix_object not in state.objects:
            target = report.task.get("target") or report.task.get("object")
            state.fix_object = target if target in state.objects else next(iter(state.objects.keys()), "")
    finally:
        _quiet[0] = False


def _show_part(item, part: dict) -> None:
    """A moving part's joint, as its report entry has it, into the Fixes panel's part ``item``."""
    joint = part["joint"]
    item.name, item.joint_type, item.source = part["name"], joint["type"], joint.get("source", "")
    item.closed, item.axis, item.pivot = joint.get("closed", 0.0), joint["axis_world"], joint["pivot_world"]
    if joint["type"] == "hinge":
        item.angle_range = joint["range"]
    else:
        item.length_range = joint["range"]
    item.damping, item.frictionloss = joint.get("damping", 0.0), joint.get("frictionloss", 0.0)


def _arguments(arguments: dict) -> str:
    def value(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, list):
            return "(" + ", ".join(value(x) for x in v) + ")"
        return str(v)

    return ", ".join(f"{k}={value(v)}" for k, v in arguments.items())


def load_review(scene: bpy.types.Scene, out_dir: str | Path = "") -> Report:
    """Reads a finished run's report.json and shows it (the Keyframes panel's *Load Report*).

    Args:
        scene: The scene.
        out_dir: The run's output folder; the reviewed one, else the scene's, when empty.

    Returns:
        The report.

    Raises:
        Real2GymError: No folder set, or no readable report.json in it.
    """
    folder = report_dir(scene, out_dir)
    report = read_report(folder)
    show_report(scene, report, folder)
    show_mask_reviews(scene, report.segmentation)
    return report


def note_report_written(scene: bpy.types.Scene) -> None:
    """Marks the reviewed report.json as shown (its content was shown before it was written)."""
    state = fix_settings(scene)
    try:
        state.report_stamp = str((Path(state.report_dir) / REPORT_NAME).stat().st_mtime_ns)
    except OSError:
        pass  # not written: the next redraw reads it


def _camera_views(scene: bpy.types.Scene) -> None:
    """Looks through the scene camera in every 3D view showing this scene."""
    if scene.camera is None:
        return
    for manager in bpy.data.window_managers:
        for window in manager.windows:
            if window.scene != scene:
                continue
            for area in window.screen.areas:
                if area.type == "VIEW_3D":
                    area.spaces.active.region_3d.view_perspective = "CAMERA"
                    area.tag_redraw()


def select_keyframe(scene: bpy.types.Scene, index: int) -> None:
    """Jumps to a keyframe: sets its frame, looks through the camera, measures the IoUs around it.

    Called when the keyframe list's selection changes. A missing report or
    masks leave the IoU list empty, with the reason in the status.

    Args:
        scene: The scene.
        index: The keyframe's index in ``scene.real2gym.fixes.keyframes``.
    """
    state = fix_settings(scene)
    if _quiet[0] or not 0 <= index < len(state.keyframes):
        return
    keyframe = state.keyframes[index]
    scene.frame_set(keyframe.frame)
    _camera_views(scene)
    measure_ious(scene)


def measure_ious(scene: bpy.types.Scene) -> None:
    """Measures the silhouette IoUs around the selected keyframe (frame +-:data:`IOU_SPAN`)."""
    state = fix_settings(scene)
    state.ious.clear()
    if not 0 <= state.active_keyframe_index < len(state.keyframes):
        return
    keyframe = state.keyframes[state.active_keyframe_index]
    state.iou_object = keyframe.object_name
    frames = list(range(keyframe.frame - IOU_SPAN, keyframe.frame + IOU_SPAN + 1))
    try:
        folder = report_dir(scene)
        ious = silhouette_ious(read_report(folder).to_json(), folder, keyframe.object_name, frames)
    except Real2GymError as e:
        state.status = f"No silhouette IoU: {e}"
        return
    for frame, iou in ious.items():
        item = state.ious.add()
        item.frame, item.measured, item.iou = frame, iou is not None, iou or 0.0


def go_to_frame(scene: bpy.types.Scene, frame: int) -> None:
    """Jumps to a frame in the camera view; selects its keyframe there if there is one (a failing one first)."""
    state = fix_settings(scene)
    matches = [i for i, k in enumerate(state.keyframes) if k.frame == frame]
    if matches:
        failing = [i for i in matches if state.keyframes[i].verdict == "FAILED"]
        index = (failing or matches)[0]
        if state.active_keyframe_index == index:
            select_keyframe(scene, index)
        else:
            state.active_keyframe_index = index  # its update jumps
        return
    scene.frame_set(frame)
    _camera_views(scene)


def edits_of(scene: bpy.types.Scene, name: str) -> list[dict]:
    """The logged fixes of one object of the reviewed run as shown (kind, arguments, time)."""
    item = fix_settings(scene).objects.get(name)
    return [] if item is None else [{"kind": e.name, "args": e.arguments, "time": e.time} for e in item.edits]
