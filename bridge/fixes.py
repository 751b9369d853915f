"""Fixing a finished run from Blender: review its keyframes, apply fixes, undo them.

The run's state lives in its report.json. Every change goes through the core
(:func:`~real2gym_addon.fixes.apply_fix`, :func:`~real2gym_addon.fixes.undo_last`,
:func:`~real2gym_addon.reverify.reverify`), which logs it and writes the report
atomically only when everything succeeded; the scene then shows the result
(:func:`.review.show_report`: the keyframe list with its verdicts, the checks,
the suggestions, each object's edit log in ``scene.real2gym.fixes``) and the
rebuilt reconstruction and re-imported simulation (``bridge.reconstruction``,
``bridge.simulation``, where this installation has them).

Operators, scripts and the GUI call the same functions: :func:`apply_fix_in_scene`,
:func:`apply_suggestion_in_scene`, :func:`undo_fix_in_scene`,
:func:`reverify_in_scene` run synchronously; the GUI starts the same work with
:func:`start_fix` in a worker thread (CoACD can take minutes) and finishes it on
the main thread. :func:`sync_with_undo` keeps report.json in step with Blender's
own undo and redo.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.fixes import apply_fix, opening_probe, recorded_fixes, undo_last
from ..real2gym_addon.fixes.edits import check_fix_arguments, find_object
from ..real2gym_addon.fixes.joint_fix import find_part
from ..real2gym_addon.fixes.repair import repair_run
from ..real2gym_addon.geometry.shapes import Shape
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.report import Report, read_report
from ..real2gym_addon.reverify import reverify
from ..real2gym_addon.verify.run import Verification
from .jobs import ThreadJob, running
from .joints import viewport_joint
from .reconstruction import build_from_report
from .review import fix_settings, measure_ious, note_report_written, report_dir, show_report
from .scene_guard import SceneGuard
from .simulation import apply_simulation
from .verification import physics_overrides

_redo: dict[str, list[dict]] = {}
"""Per output folder, the fixes undone through Blender's undo, most recent last (for redo)."""


@dataclasses.dataclass(frozen=True)
class FixRequest:
    """One change to a run, prepared on the main thread.

    Attributes:
        out_dir: The run's output folder.
        action: ``"fix"`` (apply ``fix``), ``"undo"`` (the last fix) or ``"repair"`` (apply the suggestions in turn, ``real2gym_addon.fixes.repair``).
        fix: The fix (``{"kind", "object", ...}``, see :func:`~real2gym_addon.fixes.apply_fix`).
        verify: Re-verify after the change.
        rounds: At most this many repair steps.
        masses: Object name -> kg set in Blender, for the verification (``verification.physics_overrides``).
        frictions: Object name -> friction set in Blender, for the verification.
    """

    out_dir: Path
    action: str
    fix: dict | None = None
    verify: bool = True
    rounds: int = 5
    masses: dict[str, float] = dataclasses.field(default_factory=dict)
    frictions: dict[str, float] = dataclasses.field(default_factory=dict)

    def describe(self) -> str:
        """What is being done, for progress and messages."""
        if self.action == "undo":
            return "Undoing the last fix"
        if self.action == "repair":
            return "Repairing"
        what = f"{self.fix.get('kind')} on {self.fix.get('object')}"
        if self.fix.get("kind") == "collision" and self.fix.get("mode") == "coacd":
            return f"CoACD on {self.fix.get('object')}"
        return what


@dataclasses.dataclass
class FixOutcome:
    """What a change did.

    Attributes:
        report: The updated report.
        entry: The edit-log entry applied or undone (None for a re-verification).
        request: The request.
        warnings: Problems after the report was written (rebuilding the scene).
    """

    report: Report
    entry: dict | None
    request: FixRequest
    warnings: list[str] = dataclasses.field(default_factory=list)

    @property
    def passed(self) -> bool | None:
        """The verification's verdict; None when it did not run."""
        if not self.request.verify:
            return None
        return bool(self.report.verification.passed)

    def message(self) -> str:
        """One line for the status bar and the panel."""
        entry = self.entry or {}
        if self.request.action == "undo":
            head = f"Undid {entry.get('kind')} on {entry.get('object')}"
        elif self.request.action == "repair":
            steps = (self.report.repair or {}).get("rounds", [])
            head = f"Repaired in {sum(s['kept'] for s in steps)} kept step(s) of {len(steps)} tried"
        else:
            head = f"Applied {entry.get('kind')} on {entry.get('object')}"
        probe = entry.get("opening_probe") if self.request.action == "fix" else None
        if probe is not None:
            head += f"; opening probe: {'reaches' if probe['passed'] else 'does NOT reach'} the bottom"
        if self.passed is None:
            return f"{head} (not verified)"
        if self.passed:
            return f"{head}: all checks passed"
        failed = self.report.verification.failed()
        return f"{head}: not verified ({', '.join(failed)} failed)"


def fix_job(scene: bpy.types.Scene, request: FixRequest) -> ThreadJob:
    """A change to a run as a job: the fix, CoACD and MuJoCo in the worker thread, then the result
    shown in the scene on the main thread.

    ``job.start()`` runs it in the background (the GUI), ``job.run_now(scene)`` synchronously
    (scripts, ``blender -b``). Its ``outcome`` is the :class:`FixOutcome`. The verification made
    by the change is the one keyed in the scene: nothing is simulated twice.

    Raises:
        Real2GymError (from ``start``/``run_now``): Another job is running.
    """
    entries: list[dict] = []
    margin = scene.real2gym.margin_runs

    def edit(report: dict) -> None:
        if request.action == "undo":
            entries.append(undo_last(report))
        else:
            entries.append(apply_fix(report, request.fix))

    def work(progress: Progress):
        progress.step(request.describe(), 0.1)
        if request.action == "repair":
            steps = Progress(lambda message, fraction: progress.step(message, 0.1 + 0.8 * fraction))
            return repair_run(request.out_dir, request.rounds, steps.step, request.masses, request.frictions)
        return reverify(request.out_dir, request.masses, edit, request.verify, request.frictions, margin)

    def apply(scene: bpy.types.Scene, result) -> FixOutcome:
        report, verification = result
        return _show_change(scene, request, report, entries[0] if entries else None, verification)

    return ThreadJob(work, apply, f"a fix ({request.describe()})")


def _show_change(
    scene: bpy.types.Scene, request: FixRequest, report: Report, entry: dict | None, verification
) -> FixOutcome:
    """Shows a committed change in the scene: the report, the rebuilt reconstruction, its simulation."""
    outcome = FixOutcome(report, entry, request)
    key = str(request.out_dir)
    if request.action in ("fix", "repair"):
        _redo.pop(key, None)  # a new fix: what was undone can no longer be redone
    elif request.action == "undo":
        _redo.setdefault(key, []).append(recorded_fixes({"edit_log": [entry]})[0])
    show_report(scene, report, request.out_dir)
    note_report_written(scene)
    state = fix_settings(scene)
    probe = (entry or {}).get("opening_probe")
    if probe is not None:
        state.probe_result = _probe_text(request.fix["object"], probe)
    outcome.warnings += _rebuild(scene, report, verification)
    state.status = outcome.message()
    measure_ious(scene)  # the reconstruction may have moved
    return outcome


def _rebuild(scene: bpy.types.Scene, report: Report, verification: Verification | None) -> list[str]:
    """Rebuilds the reconstruction, and keys the change's own simulation when it was verified.

    Returns:
        Warnings: what failed (the change itself is committed either way).
    """
    geometry = None if verification is None else verification.geometry
    warnings = []
    try:
        with SceneGuard(scene) as guard:
            warnings += build_from_report(scene, report, guard, geometry=geometry).warnings
            if verification is not None:
                apply_simulation(scene, verification, guard)
    except Exception as e:  # the report is committed; say what is stale
        warnings.append(f"the change is saved, but showing it in the scene failed: {e}")
    return warnings


def _probe_text(name: str, probe: dict) -> str:
    verdict = "reaches the bottom" if probe["passed"] else "does NOT reach the bottom"
    return (
        f"{name}: a probe dropped in {verdict} ({probe['final_height_above_floor_m'] * 1000:.1f} mm above it)"
    )


def _request(
    scene: bpy.types.Scene,
    report: Report,
    folder: Path,
    action: str,
    fix: dict | None,
    verify: bool,
    rounds: int = 5,
) -> FixRequest:
    """A request whose verification uses the masses and frictions set in Blender, as Verify does."""
    masses, frictions, _ = physics_overrides(scene, report)
    return FixRequest(folder, action, fix, verify, rounds, masses, frictions)


def _verify_default(scene: bpy.types.Scene, verify: bool | None) -> bool:
    return fix_settings(scene).verify_after_fix if verify is None else bool(verify)


def fix_request(scene: bpy.types.Scene, fix: dict, verify: bool | None = None) -> FixRequest:
    """Prepares applying ``fix`` to the reviewed run.

    Args:
        scene: The scene.
        fix: ``{"kind", "object", ...}``; an empty ``object`` is the panel's object to fix.
        verify: Re-verify after it; None for the scene's *Verify after Fix*.

    Raises:
        Real2GymError: The report cannot be read back, or an argument is out of range.
    """
    fix = dict(fix)
    fix["object"] = fix.get("object") or fix_settings(scene).fix_object
    folder = report_dir(scene)
    # Checked here, on the main thread, before any job starts: the report as read back, then the
    # fix's arguments against their ranges and the video (the same checks as the command line).
    report = read_report(folder)
    check_fix_arguments(fix, report.video.frames)
    return _request(scene, report, folder, "fix", fix, _verify_default(scene, verify))


def joint_request(
    scene: bpy.types.Scene,
    object_name: str,
    part: str,
    changes: dict | None = None,
    from_viewport: bool = False,
    verify: bool | None = None,
) -> FixRequest:
    """Prepares a ``joint`` fix of a moving part: the values given, or the joint as the viewport shows it.

    Args:
        scene: The scene.
        object_name: The object (its name in report.json); empty for the panel's object to fix.
        part: Its part; empty when it has only one.
        changes: Any of ``axis`` (3, world), ``pivot`` (3, world, m), ``range_lo``, ``range_hi``
            (radians or metres; the other end stays the report's), ``damping``, ``frictionloss``.
        from_viewport: Take the axis and pivot from the joint's Empty and the range from the part's
            limit constraint (:func:`.joints.viewport_joint`); ``changes`` apply over them.
        verify: Re-verify after it; None for the scene's *Verify after Fix*.

    Raises:
        Real2GymError: No such object or part (in the report, or in the scene from the viewport).
    """
    object_name = object_name or fix_settings(scene).fix_object
    entry = find_object(read_report(report_dir(scene)).to_json(), object_name)
    parts = entry.get("parts", [])
    if not part and len(parts) == 1:
        part = parts[0]["name"]
    joint = find_part(entry, part)["joint"]
    fix = {"kind": "joint", "object": object_name, "part": part}
    if from_viewport:
        fix.update(viewport_joint(scene, object_name, part, joint["type"], float(joint.get("closed", 0.0))))
    changes = dict(changes or {})
    lo, hi = changes.pop("range_lo", None), changes.pop("range_hi", None)
    if lo is not None or hi is not None:
        ends = fix.get("range", joint["range"])
        fix["range"] = [ends[0] if lo is None else lo, ends[1] if hi is None else hi]
    fix.update(changes)
    return fix_request(scene, fix, verify)


def joint_in_scene(
    scene: bpy.types.Scene,
    object_name: str,
    part: str,
    changes: dict | None = None,
    from_viewport: bool = False,
    verify: bool | None = None,
) -> FixOutcome:
    """Changes a moving part's joint synchronously (see :func:`joint_request`) and shows the result."""
    return run_fix(scene, joint_request(scene, object_name, part, changes, from_viewport, verify))


def keyframe_request(
    scene: bpy.types.Scene, index: int, frame: int | None, verify: bool | None = None
) -> FixRequest:
    """Prepares moving a keyframe of the list to ``frame``, or deleting it (``frame`` None).

    Args:
        scene: The scene.
        index: The keyframe's index in the list; -1 for the selected one.
        frame: The video frame to move it to; None deletes it.
        verify: Re-verify after it; None for the scene's *Verify after Fix*.

    Raises:
        Real2GymError: No such keyframe.
    """
    state = fix_settings(scene)
    index = state.active_keyframe_index if index < 0 else index
    if not 0 <= index < len(state.keyframes):
        raise Real2GymError("select a keyframe in the list first")
    keyframe = state.keyframes[index]
    fix = {"kind": "keyframe", "object": keyframe.object_name, "event": keyframe.event, "frame": frame}
    return fix_request(scene, fix, verify)


def suggestion_request(scene: bpy.types.Scene, index: int, verify: bool | None = None) -> FixRequest:
    """Prepares applying suggestion ``index`` (from 0) of the reviewed run's report.json.

    Raises:
        Real2GymError: No such suggestion.
    """
    folder = report_dir(scene)
    report = read_report(folder)
    suggestions = (report.verification.suggestions if report.verification is not None else None) or []
    if not 0 <= index < len(suggestions):
        raise Real2GymError(
            f"there is no suggestion {index + 1}: the run has {len(suggestions)}"
            + ("" if suggestions else " (verify it first, or it passed)")
        )
    return _request(
        scene, report, folder, "fix", dict(suggestions[index]["fix"]), _verify_default(scene, verify)
    )


def repair_request(scene: bpy.types.Scene, rounds: int = 5) -> FixRequest:
    """Prepares the computed repair of the reviewed run: its suggestions applied in turn until it verifies."""
    folder = report_dir(scene)
    return _request(scene, read_report(folder), folder, "repair", None, True, rounds)


def repair_in_scene(scene: bpy.types.Scene, rounds: int = 5) -> FixOutcome:
    """Repairs the reviewed run synchronously (scripts, ``blender -b``) and shows the result."""
    return run_fix(scene, repair_request(scene, rounds))


def undo_request(scene: bpy.types.Scene, verify: bool | None = None) -> FixRequest:
    """Prepares undoing the reviewed run's last fix."""
    folder = report_dir(scene)
    return _request(scene, read_report(folder), folder, "undo", None, _verify_default(scene, verify))


def run_fix(scene: bpy.types.Scene, request: FixRequest) -> FixOutcome:
    """Makes a change synchronously and shows it in the scene (scripts, ``blender -b``).

    Raises:
        Real2GymError: The change did not apply; report.json and the scene are as they were.
    """
    return fix_job(scene, request).run_now(scene)


def apply_fix_in_scene(scene: bpy.types.Scene, fix: dict, verify: bool | None = None) -> FixOutcome:
    """Applies a fix to the reviewed run, logs it, re-verifies, and shows the result.

    Args:
        scene: The scene (``scene.real2gym.fixes.report_dir``, else ``scene.real2gym.out_dir``).
        fix: ``{"kind", "object", ...}`` as for :func:`~real2gym_addon.fixes.apply_fix`.
        verify: Re-verify after it; None for the scene's *Verify after Fix*.

    Returns:
        What it did.

    Raises:
        Real2GymError: The fix does not apply (the message says why); nothing changed.
    """
    return run_fix(scene, fix_request(scene, fix, verify))


def apply_suggestion_in_scene(scene: bpy.types.Scene, index: int, verify: bool | None = None) -> FixOutcome:
    """Applies suggestion ``index`` (from 0) of the reviewed run, like :func:`apply_fix_in_scene`."""
    return run_fix(scene, suggestion_request(scene, index, verify))


def undo_fix_in_scene(scene: bpy.types.Scene, verify: bool | None = None) -> FixOutcome:
    """Reverts the reviewed run's last fix, re-verifies, and shows the result."""
    return run_fix(scene, undo_request(scene, verify))


def probe_in_scene(scene: bpy.types.Scene, name: str) -> dict:
    """Drops a probe into a container of the reviewed run (nothing is written).

    Args:
        scene: The scene.
        name: The container; empty for the panel's object to fix.

    Returns:
        The core's probe result (``passed``, ``final_height_above_floor_m``, ...).

    Raises:
        Real2GymError: No such object, or it is not a container.
    """
    name = name or fix_settings(scene).fix_object
    report = read_report(report_dir(scene))
    shape = Shape.from_report(find_object(report.to_json(), name))
    if not shape.is_container:
        raise Real2GymError(
            f"object '{name}' is a {shape.kind}, not a container: there is no opening to probe"
        )
    result = opening_probe(shape)
    fix_settings(scene).probe_result = _probe_text(name, result)
    return result


@bpy.app.handlers.persistent
def sync_with_undo(*_args) -> None:
    """Keeps report.json in step with Blender's undo and redo (an undo_post/redo_post handler).

    Blender's undo brings back the scene as it was, including the number of
    fixes it showed; report.json is outside Blender's undo. When the two differ,
    the fixes are undone in report.json (and kept for redo), or redone from
    what was undone, then verified again when *Verify after Fix* is on.
    """
    if running() is not None:
        return  # a job is writing the report; its end shows the result
    for scene in bpy.data.scenes:
        state = getattr(getattr(scene, "real2gym", None), "fixes", None)
        if state is None or not state.report_dir:
            continue
        try:
            _follow_undo(scene, state)
        except Real2GymError as e:
            state.status = f"report.json could not follow the undo: {e}"


def _follow_undo(scene: bpy.types.Scene, state) -> None:
    folder = Path(state.report_dir)
    logged = len(read_report(folder).edit_log)
    wanted = state.edit_count
    if logged == wanted:
        return
    stack = _redo.setdefault(str(folder), [])
    if wanted - logged > len(stack):
        show_report(scene, read_report(folder), folder)
        state.status = (
            "report.json has fewer fixes than this undo step, and none to redo: showing report.json"
        )
        return
    redo = list(reversed(stack[len(stack) - (wanted - logged) :])) if wanted > logged else []
    undone: list[dict] = []

    def edit(report: dict) -> None:
        undone.extend(undo_last(report) for _ in range(logged - wanted))
        for fix in redo:
            apply_fix(report, fix)

    report, _ = reverify(folder, edit=edit, verify=state.verify_after_fix, margin=scene.real2gym.margin_runs)
    stack.extend(recorded_fixes({"edit_log": undone}))
    del stack[len(stack) - len(redo) :]
    show_report(scene, report, folder)
    state.status = f"report.json follows Blender's undo: {len(report.edit_log)} fixes"
