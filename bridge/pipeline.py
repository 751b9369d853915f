"""Running the pipeline into a Blender scene, from an operator, a script or the CLI.

The operator, ``blender -b`` scripts and the ``real2gym`` command line all come
here, so that they produce the same scene and the same report. Building the
Blender scene is guarded: if anything fails, the scene's settings are restored
and the data blocks the run added are removed, so the user's scene stays as it
was.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import bpy

from .. import state
from ..real2gym_addon.errors import WarningLog
from ..real2gym_addon.files import write_error
from ..real2gym_addon.geometry.stage import Geometry
from ..real2gym_addon.pipeline import BLEND_NAME, STAGES, PipelineRun
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.report import REPORT_NAME, Report, read_report
from ..real2gym_addon.run_options import RunOptions
from ..real2gym_addon.scene import SceneDescription
from ..real2gym_addon.segmentation.backends import SegmentationOptions
from ..real2gym_addon.segmentation.overlay import OVERLAYS_NAME
from ..real2gym_addon.verify.run import Verification
from .jobs import ThreadJob
from .mask_review import show_mask_reviews
from .overlays import show_overlays
from .reconstruction import build_from_report
from .review import note_report_written, show_report
from .scene_guard import SceneGuard
from .simulation import apply_simulation, simulate_run
from .video_scene import build_video_scene


@contextlib.contextmanager
def _quiet_stdout(quiet: bool):
    """Silences Blender's own report lines on stdout (``Error: ...``) while saving headless.

    A failed save raises with the same reason, which the command line prints in
    its one line; without this the user would see Blender's line beside it.
    """
    if not quiet:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def save_blend_copy(path: Path) -> None:
    """Saves the open file as a copy at ``path``; the user's own file path is unchanged.

    Raises:
        OutputError: Blender could not write the file (a full disk is named as such).
    """
    try:
        with _quiet_stdout(bpy.app.background):
            bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False, compress=False)
    except RuntimeError as e:  # Blender's message on a full disk is "No such file or directory"
        reason = str(e).strip().splitlines()[-1] if str(e).strip() else "unknown reason"
        raise write_error(f"cannot save {Path(path).name}", Path(path), reason) from None


def _build(
    scene: bpy.types.Scene,
    description: SceneDescription,
    report: Report | None,
    out_dir: Path,
    guard: SceneGuard,
    log: WarningLog | None = None,
    geometry: Geometry | None = None,
    verification: Verification | None = None,
) -> None:
    """The whole scene of a run: video camera, state, mask reviews, reconstruction and simulation.

    ``report`` is the run's report when the run has geometry (None before it).
    A run hands over its typed ``geometry`` and its ``verification`` (whose simulation is
    keyed); without them (Open Run) the geometry is read from the report and simulated.
    """
    build_video_scene(scene, description)
    state = scene.real2gym
    state.demo_dir = description.demo_dir
    state.out_dir = str(Path(out_dir).resolve())
    state.report_path = str(Path(out_dir).resolve() / REPORT_NAME)
    state.video_frames = description.video.frames
    state.video_fps = description.video.fps
    state.status = f"Loaded {description.video.frames} frames at {description.video.fps:g} fps"
    segmentation = description.segmentation
    show_mask_reviews(scene, segmentation)
    state.segmentation_status = (
        f"{len(segmentation['objects'])} objects segmented ({segmentation['backend']})"
        if segmentation
        else ""
    )
    if report is not None:
        # The reconstruction, and the verified simulation on its own copies (its world frame,
        # its objects, its keyframes).
        build_from_report(scene, report, guard, log, geometry)
        if report.verification is not None:
            apply_simulation(scene, verification or simulate_run(report), guard)
        show_report(scene, report, Path(out_dir).resolve())  # the Keyframes panel, in the saved file too


def open_run(scene: bpy.types.Scene, out_dir: str | Path, verification: Verification | None = None) -> Report:
    """Builds the whole scene of a finished run from its output folder (the sidebar's *Open Run*).

    Works from report.json alone, so a run made by the command line, another
    machine or another Blender version opens here: the video camera (keyed per
    frame when it moves), the objects with their collision pieces and keyframes,
    the simulation's copies, the mask reviews, and the Keyframes panel's report.
    A variant's folder (``OUT/variants/<id>``) opens the same way.

    Args:
        scene: The scene to build into (a re-open updates what an earlier one built).
        out_dir: The run's output folder.
        verification: The simulation to key, where the caller has it (a variant replayed from
            its verified MJCF); the report's scene is simulated again when None.

    Returns:
        The report.

    Raises:
        Real2GymError: No readable report.json, or its video is missing; the scene is unchanged.
    """
    folder = Path(bpy.path.abspath(str(out_dir))).resolve()
    report = read_report(folder)
    description = SceneDescription.from_report(report)
    guard = SceneGuard(scene)
    try:
        _build(scene, description, report if report.table else None, folder, guard,
               verification=verification)  # fmt: skip
    except BaseException:
        guard.restore()
        raise
    guard.commit()
    return report


def _stage_scene(
    scene: bpy.types.Scene, run: PipelineRun, guard: SceneGuard, overlays: Mapping[str, int]
) -> None:
    """Builds an analysed run's scene from what it has in hand and saves scene.blend into its staging."""
    run.progress.step("building the Blender scene", 0.8)
    started = time.perf_counter()
    report = run.report()  # made once; report.json is written from it at commit
    _build(scene, run.scene, report if run.geometry is not None else None, run.out_dir, guard, run.log,
           run.geometry, run.verification)  # fmt: skip
    if overlays:
        visible = {p.name: p.show_mask for p in scene.real2gym.object_prompts}
        # Loaded from the staging folder, saved with the paths they have once the run commits.
        show_overlays(scene, run.staging / OVERLAYS_NAME, overlays, visible, run.out_dir / OVERLAYS_NAME)
    save_blend_copy(run.staging / BLEND_NAME)
    run.add_output("blend", BLEND_NAME, "blender", time.perf_counter() - started)


def finish_in_scene(
    run: PipelineRun, scene: bpy.types.Scene, overlays: Mapping[str, int] | None = None
) -> Path:
    """Builds the Blender scene of an analysed run, saves scene.blend and commits the run's output.

    Call on Blender's main thread. After the geometry stage the scene gets the
    reconstruction (:mod:`.reconstruction`) from the run's typed geometry, after the
    verify stage the run's own simulation too (:mod:`.simulation`): nothing is
    simulated again. On failure the scene is restored and nothing is committed.

    Args:
        run: A run whose ``analyse()`` succeeded.
        scene: The scene to build into.
        overlays: Overlay frames per object that the run staged (``PipelineRun.mask_overlays``), to show.

    Returns:
        The written report.json.
    """
    guard = SceneGuard(scene)
    try:
        _stage_scene(scene, run, guard, overlays or {})
        report = run.commit()
    except BaseException:
        guard.restore()
        run.abort()
        raise
    guard.commit()
    note_report_written(scene)  # the Keyframes panel already shows it: no need to read it back
    return report


def pipeline_job(
    demo_dir: str | Path,
    out_dir: str | Path,
    segmentation: SegmentationOptions | None = None,
    last_stage: str = STAGES[-1],
    mask_colors: Mapping[str, Sequence[float]] | None = None,
    resegment: str | None = None,
    progress: Progress | None = None,
    after: Callable[[bpy.types.Scene], None] | None = None,
    options: RunOptions | None = None,
) -> ThreadJob:
    """A run of the pipeline as a job: the analysis and the masks' overlays in the worker thread,
    then the scene built, scene.blend saved and the output committed on the main thread.

    ``job.start()`` runs it in the background (the GUI), ``job.run_now(scene)`` synchronously
    (``blender -b``, scripts). The job's ``outcome`` is the finished :class:`PipelineRun`. When the
    run segments, the masks are shown over the video (coloured overlays in the camera view).

    Args:
        demo_dir: The demo folder.
        out_dir: The output folder.
        segmentation: The segmentation backend and its settings; the default when None.
        last_stage: The last stage to run (``real2gym_addon.pipeline.STAGES``).
        mask_colors: sRGB ``(r, g, b)`` in [0, 1] of each object's overlay, by name.
        resegment: One object to segment again, keeping the others' masks
            (``real2gym_addon.pipeline.PipelineRun``); None for all.
        progress: Receives progress; a new one when None.
        after: Called on the main thread with the scene once the run is committed.
        options: All the run's options (the scene's, ``state.run_options``); they replace
            ``segmentation`` when given.
    """
    progress = progress or Progress()
    options = options or RunOptions(segmentation or SegmentationOptions())
    run = PipelineRun.from_options(demo_dir, out_dir, options, progress, last_stage, resegment)
    colours = dict(mask_colors or {})

    def work(progress: Progress) -> dict[str, int]:
        try:
            run.analyse()
            return run.mask_overlays(colours, Progress(lambda m, f: progress.step(m, 0.78 + 0.02 * f)))
        except BaseException:
            run.abort()  # nothing staged stays behind
            raise

    def apply(scene: bpy.types.Scene, overlays: dict[str, int]) -> PipelineRun:
        finish_in_scene(run, scene, overlays)
        if after is not None:
            after(scene)
        return run

    return ThreadJob(work, apply, "a Real2Gym run", progress)


def run_in_scene(scene: bpy.types.Scene, demo_dir: str | Path, out_dir: str | Path, **options) -> PipelineRun:
    """Runs the pipeline synchronously into ``scene`` (``blender -b``, scripts); see :func:`pipeline_job`.

    Returns:
        The finished run (its ``scene`` is the description, ``log`` the warnings).
    """
    return pipeline_job(demo_dir, out_dir, **options).run_now(scene)


def stage_headless_blend(run: PipelineRun) -> None:
    """The command line's scene builder: a fresh empty file, built and staged as scene.blend.

    The installed ``real2gym`` command (:mod:`.command`) hands it to the core's command
    line, which calls it between the run's analysis and its commit.
    """
    bpy.ops.wm.read_factory_settings(use_empty=True)
    registered = state.ensure_registered()
    try:
        with SceneGuard(bpy.context.scene) as guard:
            _stage_scene(bpy.context.scene, run, guard, {})
    finally:
        if registered:
            state.release()
