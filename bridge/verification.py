"""Verifying a finished run from Blender, and what the Verification panel shows.

:func:`verify_in_scene` re-verifies the scene's output folder (the core's
:func:`~real2gym_addon.reverify.reverify`, which exports and simulates again and
rewrites report.json's ``verification``) with the objects' physics settings
from Blender (``object.real2gym.mass`` / ``density``), then keys that
simulation's copies (:func:`~.simulation.apply_simulation`). :func:`start_verify`
does the same with the simulation in a worker thread.
:func:`import_scene_simulation` (and :func:`start_scene_import`) only simulates
again, with the same physics settings, and keys the copies. :func:`verification_summary`
reads the report's verdict, check figures and suggestions as short lines for
the panel, re-reading report.json only when it changed.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import bpy
import numpy as np

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.geometry.report_io import geometry_from_report
from ..real2gym_addon.geometry.shapes import Shape
from ..real2gym_addon.mjcf.export import DEFAULT_DENSITY, DEFAULT_FRICTION, FRICTION_RANGE, collision_volume
from ..real2gym_addon.reverify import read_report, reverify
from ..real2gym_addon.verify.checks import IMPACT_LIMIT
from .jobs import ThreadJob
from .reconstruction import real2gym_objects
from .review import load_review
from .scene_guard import SceneGuard
from .simulation import Simulation, SimulationImport, apply_simulation, import_simulation, start_import

CHECK_LABELS = {
    "task_success": "Task",
    "grasp_held": "Grasp",
    "support": "Support",
    "stability": "Stability",
    "penetration": "Penetration",
    "trajectory_fidelity": "Fidelity",
    "release_clearance": "Release",
    "hand_clearance": "Hand clear",
    "no_shortcuts": "No shortcuts",
    "simulation_stable": "Sim stable",
}


@dataclasses.dataclass
class Verified:
    """What :func:`verify_in_scene` did.

    Attributes:
        passed: Every check passed.
        failed: The names of the failed checks.
        simulation: The simulated copies keyed in the scene.
        warnings: Physics settings the verifier could not use.
    """

    passed: bool
    failed: list[str]
    simulation: SimulationImport
    warnings: list[str]


def scene_out_dir(scene: bpy.types.Scene, out_dir: str | Path = "") -> Path:
    """The output folder to work on: ``out_dir``, else the scene's.

    Raises:
        Real2GymError: Neither is set.
    """
    folder = bpy.path.abspath(str(out_dir or scene.real2gym.out_dir))
    if not folder:
        raise Real2GymError("set the output folder first (Real2Gym tab), or run the pipeline")
    return Path(folder).resolve()


def physics_overrides(
    scene: bpy.types.Scene, report: dict
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """The masses and frictions set in Blender (``object.real2gym``), for the verifier.

    A mass above 0 is taken as it is; otherwise a density other than the
    default gives density x collision volume. A friction other than the one
    the report holds (set there when the scene was built) overrides it.

    Args:
        scene: The scene with the reconstructed objects.
        report: The run's report.json content (the objects' shapes).

    Returns:
        ``(object name -> kg, object name -> friction, warnings)``; the warnings name settings
        the verifier cannot use (none at present).
    """
    shapes = {entry["name"]: entry for entry in report.get("objects", [])}
    masses, frictions, warnings = {}, {}, []
    objects = sorted(real2gym_objects(scene, "OBJECT"), key=lambda o: o.name != o.real2gym.source_name)
    for obj in objects:
        name, settings = obj.real2gym.source_name, obj.real2gym
        if name not in shapes or name in masses:
            continue
        if settings.mass > 0:
            masses[name] = float(settings.mass)
        elif abs(settings.density - DEFAULT_DENSITY) > 1e-6:
            masses[name] = settings.density * collision_volume(Shape.from_report(shapes[name]))
        if abs(settings.friction - shapes[name].get("friction", DEFAULT_FRICTION)) > 1e-6:
            frictions[name] = float(np.clip(settings.friction, *FRICTION_RANGE))
    return masses, frictions, warnings


def _verify(out_dir: Path, masses: dict[str, float], frictions: dict[str, float]) -> Simulation:
    report, verification = reverify(out_dir, masses, frictions=frictions)
    return Simulation(report, geometry_from_report(report), verification.scene, verification.record)


def _apply(scene: bpy.types.Scene, simulation: Simulation, warnings: list[str], folder: Path) -> Verified:
    with SceneGuard(scene) as guard:
        imported = apply_simulation(scene, simulation, guard)
    load_review(scene, folder)  # the Keyframes and Suggestions panels show the new verdict
    checks = simulation.report["verification"]["checks"]
    failed = [name for name, check in checks.items() if not check.get("passed", False)]
    state = scene.real2gym
    state.verification_status = "Verified" if not failed else f"Not verified: {', '.join(failed)}"
    return Verified(not failed, failed, imported, warnings)


def verify_in_scene(scene: bpy.types.Scene, out_dir: str | Path = "") -> Verified:
    """Re-verifies the scene's run with its physics settings and keys the simulation.

    Args:
        scene: The scene with the reconstruction.
        out_dir: The output folder; the scene's when empty.

    Returns:
        The verdict and what was keyed.

    Raises:
        Real2GymError: No output folder, no report, or one without geometry;
            report.json and the scene are unchanged.
    """
    folder = scene_out_dir(scene, out_dir)
    masses, frictions, warnings = physics_overrides(scene, read_report(folder))
    return _apply(scene, _verify(folder, masses, frictions), warnings, folder)


def start_verify(scene: bpy.types.Scene, out_dir: str | Path = "") -> ThreadJob:
    """Starts :func:`verify_in_scene`'s verification in a worker thread (the GUI).

    Returns:
        The started job; its ``outcome`` is the :class:`Verified`.

    Raises:
        Real2GymError: No output folder or no usable report; nothing was started.
    """
    folder = scene_out_dir(scene, out_dir)
    masses, frictions, warnings = physics_overrides(scene, read_report(folder))

    def work(progress):
        progress.step("exporting and simulating the scene", 0.1)
        simulation = _verify(folder, masses, frictions)
        progress.step("keying the simulation", 0.9)
        return simulation

    return ThreadJob(
        work, lambda scene, simulation: _apply(scene, simulation, warnings, folder), "real2gym-verify"
    ).start()


def import_scene_simulation(scene: bpy.types.Scene, out_dir: str | Path = "") -> SimulationImport:
    """Simulates the scene's run again with its physics settings and keys the copies (no files written).

    Raises:
        Real2GymError: No output folder, no report, or one without geometry; the scene is unchanged.
    """
    folder = scene_out_dir(scene, out_dir)
    masses, frictions, _ = physics_overrides(scene, read_report(folder))
    return import_simulation(scene, folder, masses, frictions)


def start_scene_import(scene: bpy.types.Scene, out_dir: str | Path = "") -> ThreadJob:
    """Starts :func:`import_scene_simulation`'s simulation in a worker thread (the GUI)."""
    folder = scene_out_dir(scene, out_dir)
    masses, frictions, _ = physics_overrides(scene, read_report(folder))
    return start_import(folder, masses, frictions)


@dataclasses.dataclass
class CheckRow:
    """One check in the panel: its label, verdict and key figure."""

    name: str
    label: str
    passed: bool
    figure: str


@dataclasses.dataclass
class Summary:
    """The verification as the panel shows it.

    Attributes:
        verified: None when the report has no verification yet.
        checks: One row per check.
        suggestions: The suggested fixes' texts.
    """

    verified: bool | None
    checks: list[CheckRow]
    suggestions: list[str]


def _mm(metres) -> str:
    return f"{float(metres) * 1000:.1f} mm"


def _figure(name: str, check: dict) -> str:
    """The check's key figure, short enough for the sidebar (empty when its figures are unknown)."""
    try:
        return _known_figure(name, check)
    except (KeyError, TypeError, ValueError):
        return ""


def _known_figure(name: str, check: dict) -> str:
    if "reason" in check:
        return str(check["reason"])
    if name == "task_success":
        if "raised_m" in check:
            return f"raised {_mm(check['raised_m'])}"
        if "inside" in check:
            inside = "inside" if check["inside"] else "outside"
            return f"{inside}, {'resting' if check['resting_on_bottom'] else 'not resting'}"
        return f"{_mm(check.get('height_above_bottom_m', 0))} above"
    if name == "grasp_held":
        return f"slip {_mm(check['slip_m'])}, {check['held_fraction']:.0%}"
    if name == "support":
        return f"ratio {check['ratio']:.2f}"
    if name == "stability":
        return f"{check['max_linear_speed_m_s'] * 1000:.1f} mm/s"
    if name == "penetration":
        # The sustained depth; a momentary one only where it is what broke the limit.
        if check.get("peak_m", 0.0) > IMPACT_LIMIT:
            return f"peak {_mm(check['peak_m'])} ({check['object']}, f {check['frame']})"
        return f"{_mm(check['max_m'])} ({check['object']}, f {check['frame']})"
    if name == "trajectory_fidelity":
        return f"RMS {_mm(max(check['rms_m'].values(), default=0.0))}"
    if name == "release_clearance":
        if "clearance_m" not in check:
            return str(check.get("reason", ""))
        return f"+{_mm(check['clearance_m'])}, {'freed' if check['freed'] else 'still held'}"
    if name == "hand_clearance":
        if not check.get("object"):
            return "untouched"
        return f"{check['object']} +{_mm(check['moved_m'])} ({check['phase']}, f {check['frame']})"
    if name == "no_shortcuts":
        return "none" if not check["problems"] else f"{len(check['problems'])} found"
    if name == "simulation_stable":
        return f"diverged at f {check.get('frame')}"
    return ""


_summaries: dict[str, tuple[float, Summary]] = {}


def verification_summary(scene: bpy.types.Scene) -> Summary | None:
    """The scene's run's verification for the panel; None without a readable report.

    report.json is read again only when its modification time changed, so
    panels may call this on every redraw.
    """
    try:
        path = scene_out_dir(scene) / "report.json"
        stamp = os.stat(path).st_mtime
    except (Real2GymError, OSError):
        return None
    cached = _summaries.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        report = read_report(path.parent)
    except Real2GymError:
        return None
    verification = report.get("verification")
    if not verification:
        summary = Summary(None, [], [])
    else:
        rows = [
            CheckRow(name, CHECK_LABELS.get(name, name), bool(check.get("passed")), _figure(name, check))
            for name, check in verification.get("checks", {}).items()
        ]
        texts = [s["text"] for s in verification.get("suggestions", [])]
        summary = Summary(bool(verification.get("passed")), rows, texts)
    _summaries[str(path)] = (stamp, summary)
    return summary
