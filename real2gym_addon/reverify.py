"""Re-verifying a finished run from its report.json (``real2gym verify OUT_DIR``).

The geometry is read back from the report, the scene exported again into
``mjcf/`` and simulated; the report's ``verification`` is replaced. Both files
are swapped in atomically, so a failed re-verification leaves the folder as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from .demo import camera_from_report
from .errors import Real2GymError
from .files import OutputFolder
from .fixes.suggest import suggest_fixes
from .geometry.report_io import geometry_from_report
from .mjcf.export import DEFAULT_FRICTION
from .physics import physics_from_report, physics_with
from .report import Report, read_report, write_report
from .summary import make_pictures, write_summary
from .targets import MASKS_NAME, MJCF_NAME
from .verify.margin import DEFAULT_RUNS
from .verify.run import Verification, verify_scene


def reverify(
    out_dir: Path | str,
    masses: dict[str, float] | None = None,
    edit: Callable[[dict], object] | None = None,
    verify: bool = True,
    frictions: dict[str, float] | None = None,
    margin: int = DEFAULT_RUNS,
    on_margin_run: Callable[[int, int], None] | None = None,
) -> tuple[Report, Verification | None]:
    """Exports and simulates the scene of a finished run again and updates its report.

    The physics is the report's (:func:`~.physics.physics_from_report`) with ``masses``
    and ``frictions`` over it; the frictions used are written back.

    Args:
        out_dir: The run's output folder.
        masses: Object name -> kg overrides.
        edit: Changes the report's JSON content (the fixes of ``fixes.edits``) before verifying;
            nothing is written if it raises.
        verify: False to only write the edited report (no simulation); its
            ``verification`` is then marked ``"stale": true`` until verified again.
        frictions: Object name -> sliding friction overrides.
        margin: Perturbed runs after the verification (``verify.margin``); 0 for none.
        on_margin_run: Called before each perturbed run with its index and the count; it may raise
            (``Cancelled``) to stop, and then nothing is written.

    Returns:
        The updated report and the verification (None when ``verify`` is False).
    """
    report = read_report(out_dir)
    if edit is not None:
        content = report.to_json()
        edit(content)
        report = Report.from_json(content)
    if not verify:
        if edit is not None:
            report.mark_stale()  # its verdict is of the scene before the edit
        output = OutputFolder(out_dir)
        with output:
            write_summary(output.staging, report, None, [output.path / MASKS_NAME])
            write_report(output.staging, report)
        return report, None
    geometry = geometry_from_report(report)
    for what, given in (("--mass", masses), ("--friction", frictions)):
        unknown = set(given or {}) - {o.name for o in geometry.objects}
        if unknown:
            raise Real2GymError(f"{what} names unknown objects: {', '.join(sorted(unknown))}")
    masses, frictions = physics_with(report, masses, frictions)
    output = OutputFolder(out_dir)
    try:
        started = time.perf_counter()
        verification = verify_scene(
            geometry, camera_from_report(report), report.task, report.video.fps,
            output.staging / MJCF_NAME, masses, frictions=frictions, margin=margin,
            on_margin_run=on_margin_run,
        )  # fmt: skip
        report.record_physics(frictions, default_friction=DEFAULT_FRICTION)
        report.set_verification(verification.to_report(f"{MJCF_NAME}/scene.xml"))
        report.attach_suggestions(suggest_fixes(report.to_json()))
        report.add_artifacts({"mjcf": f"{MJCF_NAME}/scene.xml"})
        report.record_stage_time("verify", time.perf_counter() - started)
        # An earlier comparison video shows the scene before this verification: not linked (compare again).
        pictures = make_pictures(report, geometry, verification.scene.model, verification.record)
        write_summary(output.staging, report, pictures, [output.path / MASKS_NAME])
        write_report(output.staging, report)
        output.commit()
    except BaseException:
        output.discard()
        raise
    return report, verification


def simulate_report(report: Report) -> tuple:
    """Simulates a finished run again in memory (nothing written), for replays and renders.

    Returns:
        ``(geometry, scene_model, record)``: the geometry read from the report,
        the compiled scene (``mjcf.export.SceneModel``) and the
        ``verify.simulate.SimulationRecord`` with per-frame poses and ``qpos``.
    """
    import tempfile

    from .mjcf.export import build_scene, objects_at_frame
    from .verify.simulate import simulate

    geometry = geometry_from_report(report)
    trajectory = geometry.gripper
    pose = None if trajectory is None else (trajectory.positions[0], trajectory.quaternions[0])
    masses, frictions = physics_from_report(report)
    with tempfile.TemporaryDirectory() as scratch:
        scene = build_scene(objects_at_frame(geometry, 0, masses, frictions), geometry.table.extent_world,
                            geometry.world_from_camera, camera_from_report(report), pose, Path(scratch))  # fmt: skip
    record = simulate(scene.model, scene.name_map, trajectory, report.video.fps, report.video.frames)
    return geometry, scene, record
