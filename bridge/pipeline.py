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
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError, WarningLog
from ..real2gym_addon.files import write_error
from ..real2gym_addon.pipeline import STAGES, PipelineRun
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.reverify import read_report
from ..real2gym_addon.scene import SceneDescription
from ..real2gym_addon.segmentation.backends import SegmentationOptions
from ..real2gym_addon.segmentation.overlay import OVERLAYS_NAME, write_overlays
from . import properties
from .mask_review import show_mask_reviews
from .overlays import show_overlays
from .reconstruction import build_from_report
from .review import load_review, show_report
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
    report: dict | None,
    out_dir: Path,
    guard: SceneGuard,
    log: WarningLog | None = None,
) -> None:
    """The whole scene of a run: video camera, state, mask reviews, reconstruction and simulation.

    ``report`` is the run's report.json content when the run has geometry (None before it).
    """
    build_video_scene(scene, description)
    state = scene.real2gym
    state.demo_dir = description.demo_dir
    state.out_dir = str(Path(out_dir).resolve())
    state.report_path = str(Path(out_dir).resolve() / "report.json")
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
        # The reconstruction, and the verified simulation on its own copies, from the
        # report (its world frame, its objects, its keyframes).
        build_from_report(scene, report, guard, log)
        if report.get("verification") is not None:
            apply_simulation(scene, simulate_run(report), guard)
        show_report(scene, report, Path(out_dir).resolve())  # the Keyframes panel, in the saved file too


def _write_into(scene: bpy.types.Scene, out_dir: Path, guard: SceneGuard, log: WarningLog | None = None):
    def write(description: SceneDescription, path: Path) -> None:
        report = description.to_report() if description.geometry is not None else None
        _build(scene, description, report, out_dir, guard, log)
        save_blend_copy(path)

    return write


def open_run(scene: bpy.types.Scene, out_dir: str | Path) -> dict:
    """Builds the whole scene of a finished run from its output folder (the sidebar's *Open Run*).

    Works from report.json alone, so a run made by the command line, another
    machine or another Blender version opens here: the video camera (keyed per
    frame when it moves), the objects with their collision pieces and keyframes,
    the simulation's copies, the mask reviews, and the Keyframes panel's report.

    Args:
        scene: The scene to build into (a re-open updates what an earlier one built).
        out_dir: The run's output folder.

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
        _build(scene, description, report if report.get("table") else None, folder, guard)
        load_review(scene, folder)
    except BaseException:
        guard.restore()
        raise
    guard.commit()
    return report


def finish_in_scene(run: PipelineRun, scene: bpy.types.Scene) -> Path:
    """Builds the Blender scene from an analysed run and commits its output.

    Call on Blender's main thread. After the geometry stage the scene gets the
    reconstruction (:mod:`.reconstruction`), after the verify stage the
    simulation too (:mod:`.simulation`). On failure the scene is restored.

    Args:
        run: A run whose ``analyse()`` succeeded.
        scene: The scene to build into.

    Returns:
        The written report.json.
    """
    guard = SceneGuard(scene)
    try:
        report = run.finish(_write_into(scene, run.out_dir, guard, run.log))
    except BaseException:
        guard.restore()
        run.abort()
        raise
    guard.commit()
    if run.scene is not None and run.scene.geometry is not None:
        load_review(scene, run.out_dir)  # the Keyframes panel shows the new run, no Load Report needed
    return report


def _segmented_objects(run: PipelineRun) -> list[tuple[str, str]]:
    section = run.scene.segmentation if run.scene is not None else None
    if not section:
        return []
    return [(obj["name"], obj["masks"]) for obj in section.get("objects", [])]


def _show_masks(scene: bpy.types.Scene, run: PipelineRun, frames: dict[str, int]) -> None:
    """Shows the overlays in the scene and saves scene.blend again, so that it shows them too."""
    visible = {p.name: p.show_mask for p in scene.real2gym.object_prompts}
    show_overlays(scene, run.out_dir / OVERLAYS_NAME, frames, visible)
    blend = run.scene.artifacts.get("blend")
    if blend:
        save_blend_copy(run.out_dir.resolve() / blend)


def _write_overlays(run: PipelineRun, colors: Mapping[str, Sequence[float]] | None, progress: Progress):
    """Writes the run's mask overlays; a failure becomes a warning (the masks are committed)."""
    objects = _segmented_objects(run)
    if not objects:
        return {}
    try:
        return write_overlays(run.out_dir, objects, colors, progress)
    except Real2GymError as e:
        run.log.warn("segmentation", f"the masks were written but cannot be shown: {e}")
        return {}


def run_in_scene(
    scene: bpy.types.Scene,
    demo_dir: str | Path,
    out_dir: str | Path,
    progress: Progress | None = None,
    segmentation: SegmentationOptions | None = None,
    last_stage: str = STAGES[-1],
    mask_colors: Mapping[str, Sequence[float]] | None = None,
    resegment: str | None = None,
) -> PipelineRun:
    """Runs the pipeline synchronously into ``scene`` (``blender -b``, scripts).

    When the run segments, the masks are shown over the video afterwards
    (coloured overlays in the camera view).

    Args:
        scene: The scene to build into.
        demo_dir: The demo folder.
        out_dir: The output folder.
        progress: Receives progress; may be None.
        segmentation: The segmentation backend and its settings; the default when None.
        last_stage: The last stage to run (``real2gym_addon.pipeline.STAGES``).
        mask_colors: sRGB ``(r, g, b)`` in [0, 1] of each object's overlay, by name.
        resegment: One object to segment again, keeping the others' masks
            (``real2gym_addon.pipeline.PipelineRun``); None for all.

    Returns:
        The finished run (its ``scene`` is the description, ``log`` the warnings).
    """
    progress = progress or Progress()
    run = PipelineRun(demo_dir, out_dir, progress, segmentation, last_stage, resegment)
    try:
        run.analyse()
    except BaseException:
        run.abort()
        raise
    finish_in_scene(run, scene)
    frames = _write_overlays(run, mask_colors, Progress())
    if frames:
        _show_masks(scene, run, frames)
    return run


def headless_blend_writer(out_dir: str | Path):
    """Returns the command line's scene writer: a fresh empty file, built and saved.

    Args:
        out_dir: The run's output folder (recorded in the scene's settings).
    """

    def write(description: SceneDescription, path: Path) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        registered = properties.ensure_registered()
        try:
            with SceneGuard(bpy.context.scene) as guard:
                _write_into(bpy.context.scene, Path(out_dir), guard)(description, path)
        finally:
            if registered:
                properties.release()

    return write


class BackgroundRun:
    """A run whose slow parts happen in worker threads, for the GUI.

    Four phases: the analysis (worker thread), building the scene and
    committing the output (main thread), colouring the masks (worker thread,
    when the run segments), showing them (main thread). The modal operator
    starts it, and on each timer tick shows :attr:`progress` and, once
    :attr:`done`, calls :meth:`advance` on the main thread until it returns True.

    Args:
        demo_dir: The demo folder.
        out_dir: The output folder.
        segmentation: The segmentation backend and its settings; the default when None.
        last_stage: The last stage to run (``real2gym_addon.pipeline.STAGES``).
        mask_colors: sRGB ``(r, g, b)`` in [0, 1] of each object's overlay, by name.
        resegment: One object to segment again, keeping the others' masks; None for all.
    """

    def __init__(
        self,
        demo_dir: str | Path,
        out_dir: str | Path,
        segmentation: SegmentationOptions | None = None,
        last_stage: str = STAGES[-1],
        mask_colors: Mapping[str, Sequence[float]] | None = None,
        resegment: str | None = None,
    ) -> None:
        self.progress = Progress()
        self.run = PipelineRun(demo_dir, out_dir, self.progress, segmentation, last_stage, resegment)
        self.report: Path | None = None
        self.error: BaseException | None = None
        self._mask_colors = dict(mask_colors or {})
        self._frames: dict[str, int] = {}
        self._phase = "analyse"
        self._thread = threading.Thread(target=self._analyse, name="real2gym-analyse", daemon=True)

    def _analyse(self) -> None:
        try:
            self.run.analyse()
        except BaseException as e:  # handed to the main thread in advance()
            self.error = e

    def _colour_masks(self) -> None:
        self._frames = _write_overlays(self.run, self._mask_colors, self.progress)

    def start(self) -> None:
        """Starts the analysis in the worker thread."""
        self._thread.start()

    @property
    def done(self) -> bool:
        """True once the current worker thread has ended: call :meth:`advance`."""
        return not self._thread.is_alive()

    @property
    def committed(self) -> bool:
        """True once the output folder holds the run's results (cancelling no longer undoes them)."""
        return self._phase != "analyse"

    def cancel(self) -> None:
        """Asks the analysis to stop at its next progress step; no effect once committed."""
        if not self.committed:
            self.progress.cancel()

    def advance(self, scene: bpy.types.Scene) -> bool:
        """Does the next main-thread phase; call when :attr:`done`.

        Returns:
            True when the whole run is finished (:attr:`report` is set).

        Raises:
            Real2GymError: The analysis failed or was cancelled; nothing was
                committed and the scene is as it was.
        """
        self._thread.join()
        if self._phase == "analyse":
            if self.error is not None:
                self.run.abort()
                raise self.error
            self.report = finish_in_scene(self.run, scene)
            self._phase = "colour"
            if not _segmented_objects(self.run):
                return True
            self.progress = Progress()
            self._thread = threading.Thread(target=self._colour_masks, name="real2gym-masks", daemon=True)
            self._thread.start()
            return False
        if self._frames:
            _show_masks(scene, self.run, self._frames)
        return True
