"""Verifying a finished run from Blender with the physics set there.

:func:`verify_job` re-verifies the scene's output folder (the core's
:func:`~real2gym_addon.reverify.reverify`, which exports and simulates again and
rewrites report.json's ``verification``) with the objects' physics settings
from Blender (``object.real2gym.mass`` / ``density`` / ``friction``), then keys
that same simulation's copies (:func:`~.simulation.apply_simulation`).
:func:`import_job` only simulates again, with the same physics settings, and
keys the copies. Both are jobs (:mod:`.jobs`); :func:`verify_in_scene` and
:func:`import_scene_simulation` run them synchronously. What the Verification panel shows
comes from ``state.watch``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import bpy
import numpy as np

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.geometry.shapes import Shape
from ..real2gym_addon.mjcf.export import DEFAULT_DENSITY, DEFAULT_FRICTION, FRICTION_RANGE, collision_volume
from ..real2gym_addon.report import Report, read_report
from ..real2gym_addon.reverify import reverify
from ..real2gym_addon.verify.margin import margin_progress
from .jobs import ThreadJob
from .reconstruction import real2gym_objects
from .review import note_report_written, show_report
from .scene_guard import SceneGuard
from .simulation import SimulationImport, apply_simulation, simulate_run


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
    scene: bpy.types.Scene, report: Report
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """The masses and frictions set in Blender (``object.real2gym``), for the verifier.

    A mass above 0 is taken as it is; otherwise a density other than the
    default gives density x collision volume. A friction other than the one
    the report holds (set there when the scene was built) overrides it.

    Args:
        scene: The scene with the reconstructed objects.
        report: The run's report (the objects' shapes).

    Returns:
        ``(object name -> kg, object name -> friction, warnings)``; the warnings name settings
        the verifier cannot use (none at present).
    """
    shapes = {entry["name"]: entry for entry in report.objects}
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


def verify_job(scene: bpy.types.Scene, out_dir: str | Path = "") -> ThreadJob:
    """Verifying the scene's run again with the physics set in Blender, as a job.

    The worker thread re-verifies (the core's :func:`~real2gym_addon.reverify.reverify`:
    export, simulate, check, report.json rewritten); the main thread keys that same
    simulation's copies and shows the new verdict. ``job.start()`` for the GUI,
    ``job.run_now(scene)`` for scripts; its ``outcome`` is the :class:`Verified`.

    Raises:
        Real2GymError: No output folder or no usable report; nothing was started.
    """
    folder = scene_out_dir(scene, out_dir)
    masses, frictions, warnings = physics_overrides(scene, read_report(folder))
    runs = scene.real2gym.margin_runs

    def work(progress):
        progress.step("exporting and simulating the scene", 0.1)
        copies = margin_progress(progress.step, 0.2, 0.95)
        return reverify(folder, masses, frictions=frictions, margin=runs, on_margin_run=copies)

    def apply(scene: bpy.types.Scene, result) -> Verified:
        report, verification = result
        with SceneGuard(scene) as guard:
            imported = apply_simulation(scene, verification, guard)
        show_report(scene, report, folder)  # the Keyframes and Suggestions panels show the new verdict
        note_report_written(scene)
        failed = [name for name, check in report.verification.checks.items() if not check.get("passed")]
        state = scene.real2gym
        state.verification_status = "Verified" if not failed else f"Not verified: {', '.join(failed)}"
        return Verified(not failed, failed, imported, warnings)

    return ThreadJob(work, apply, "the verification")


def verify_in_scene(scene: bpy.types.Scene, out_dir: str | Path = "") -> Verified:
    """Re-verifies the scene's run with its physics settings and keys the simulation (see :func:`verify_job`).

    Raises:
        Real2GymError: No output folder, no report, or one without geometry;
            report.json and the scene are unchanged.
    """
    return verify_job(scene, out_dir).run_now(scene)


def import_job(scene: bpy.types.Scene, out_dir: str | Path = "") -> ThreadJob:
    """Simulating the scene's run again with its physics settings and keying the copies, as a job
    (nothing is written). Its ``outcome`` is the :class:`~.simulation.SimulationImport`.

    Raises:
        Real2GymError: No output folder or no usable report; nothing was started.
    """
    folder = scene_out_dir(scene, out_dir)
    report = read_report(folder)
    masses, frictions, _ = physics_overrides(scene, report)

    def work(progress):
        progress.step("simulating the demonstration", 0.1)
        return simulate_run(report, masses, frictions)

    def apply(scene: bpy.types.Scene, verification) -> SimulationImport:
        with SceneGuard(scene) as guard:
            return apply_simulation(scene, verification, guard)

    return ThreadJob(work, apply, "the simulation import")


def import_scene_simulation(scene: bpy.types.Scene, out_dir: str | Path = "") -> SimulationImport:
    """Simulates the scene's run again with its physics settings and keys the copies (see :func:`import_job`).

    Raises:
        Real2GymError: No output folder, no report, or one without geometry; the scene is unchanged.
    """
    return import_job(scene, out_dir).run_now(scene)
