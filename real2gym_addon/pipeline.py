"""The whole pipeline, from a demo folder to an output folder with report.json.

A :class:`PipelineRun` splits the work so that Blender can stay responsive and
build its scene from what the run has in hand: :meth:`PipelineRun.analyse` does
every stage (it may run in a worker thread) and stages the files;
:meth:`PipelineRun.report` makes report.json's content once; the Blender side
(``bridge/pipeline.py``) then builds its scene from that report, the typed
geometry and the verification's simulation, and saves ``scene.blend`` into
:attr:`PipelineRun.staging`; :meth:`PipelineRun.commit` writes report.json and
moves all files into the output folder at once. A run that fails or is
cancelled leaves the output folder as it was.

Callers without Blender use :func:`run_pipeline`: analyse, then commit.

A segment-only run may segment one object again (``resegment``), keeping the
other objects' masks from the earlier run in the output folder
(:mod:`.segmentation.resegment`). Its report.json holds the load and segment
stages' sections only, as any segment-only run's: the earlier run's geometry
and verification, made from the old masks, are dropped with a warning saying
to run the pipeline again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from .demo import Demo, load_demo
from .errors import OutputError, Real2GymError, WarningLog
from .files import OutputFolder
from .fixes.suggest import suggest_fixes
from .geometry.known_size import require_metric_scale
from .geometry.mono_depth import MonoDepth, estimate_depth_folder
from .geometry.stage import run_geometry
from .mjcf.export import DEFAULT_FRICTION
from .progress import Progress
from .report import REPORT_NAME, Report, read_report, write_report
from .run_options import RunOptions
from .scene import SceneDescription
from .segmentation.backends import SegmentationOptions, make_segmenter
from .segmentation.base import VideoSegmenter
from .segmentation.overlay import OVERLAYS_NAME, stage_overlays
from .segmentation.resegment import object_index, read_earlier_segmentation, resegment_object
from .segmentation.run import Segmentation, segment_demo
from .summary import SUMMARY_NAME, make_pictures, write_summary
from .targets import MASKS_NAME, MJCF_NAME, RUN, check_target
from .verify.margin import DEFAULT_RUNS, margin_progress
from .verify.run import verify_scene

BLEND_NAME = "scene.blend"
DEPTH_NAME = "depth_estimated"
RUN_OUTPUTS = (
    REPORT_NAME,
    SUMMARY_NAME,
    BLEND_NAME,
    MASKS_NAME,
    MJCF_NAME,
    DEPTH_NAME,
    "compare",
    OVERLAYS_NAME,
)
"""What runs and the commands after them write into an output folder: a new run replaces them all, so
nothing of an earlier run (an old comparison video) is left beside its result."""
"""The output folder's depth estimated by a monocular model, one PNG per frame (millimetres)."""
STAGES = ("load", "segment", "geometry", "verify")
"""The stages in order; a run may stop after any of them (``real2gym segment`` stops after ``segment``)."""


class PipelineRun:
    """One run of the pipeline on a demo folder.

    Args:
        demo_dir: The demo folder (``docs/data-contract.md``).
        out_dir: The output folder; created if missing.
        progress: Receives progress and carries cancellation; a silent one when None.
        segmentation: The segmentation backend and its settings.
        last_stage: The last stage to run, one of :data:`STAGES`.
        resegment: The name of one object to segment again, keeping the others' masks from
            the earlier run in ``out_dir`` (``last_stage`` must be ``"segment"``); None to
            segment every object.
        force: Replace an earlier run whose report holds logged fixes (refused otherwise:
            the artist's edits would be lost).
        depth_model: A monocular metric depth checkpoint folder
            (:mod:`~real2gym_addon.geometry.mono_depth`) that gives an RGB-only demo its depth;
            None to use none. A demo with depth/ keeps its own.
        out_option: How the user named ``out_dir`` (``"--out"``), for messages.
        margin: Perturbed copies simulated after the verification (:mod:`~real2gym_addon.verify.margin`);
            0 for none.
    """

    def __init__(
        self,
        demo_dir: Path | str,
        out_dir: Path | str,
        progress: Progress | None = None,
        segmentation: SegmentationOptions | None = None,
        last_stage: str = STAGES[-1],
        resegment: str | None = None,
        depth_model: str | None = None,
        force: bool = False,
        out_option: str = "the output folder",
        margin: int = DEFAULT_RUNS,
    ) -> None:
        if last_stage not in STAGES:
            raise ValueError(f"unknown stage {last_stage!r}")
        if resegment is not None and last_stage != "segment":
            raise ValueError("segmenting one object again is a segment-only run (last_stage='segment')")
        self.demo_dir = Path(demo_dir)
        self.out_dir = Path(out_dir)
        self.progress = progress or Progress()
        self.segmentation = segmentation or SegmentationOptions()
        self.last_stage = last_stage
        self.resegment = resegment
        self.depth_model = depth_model
        self.force = force
        self.out_option = out_option
        self.margin = margin
        self.log = WarningLog()
        self._kept_warnings: list[dict[str, str]] = []
        self.scene: SceneDescription | None = None
        self.geometry = None
        self.verification = None
        self.pictures = None
        self._report: Report | None = None
        self._output: OutputFolder | None = None

    def run(self, build_scene: Callable[[PipelineRun], None] | None = None) -> PipelineRun:
        """The run's one choreography, synchronously: analyse, build the scene, commit; abort on any failure.

        Blender's job (``bridge/pipeline.pipeline_job``) does the same in two halves, the analysis in
        a worker thread and the rest on Blender's main thread.

        Args:
            build_scene: Builds and stages scene.blend of the analysed run (the command line's bpy
                module); None for none.

        Returns:
            This run, committed.
        """
        try:
            self.analyse()
            if build_scene is not None:
                build_scene(self)
            self.commit()
        except BaseException:
            self.abort()  # nothing staged stays behind
            raise
        return self

    @classmethod
    def from_options(
        cls,
        demo_dir: Path | str,
        out_dir: Path | str,
        options: RunOptions,
        progress: Progress | None = None,
        last_stage: str = STAGES[-1],
        resegment: str | None = None,
        out_option: str = "the output folder",
    ) -> PipelineRun:
        """A run with the command line's or Blender's :class:`~.run_options.RunOptions` (the same for both).

        ``options.write_blend``, ``repair`` and ``repair_rounds`` are the caller's to act on after
        :meth:`analyse` (building scene.blend) and :meth:`commit` (repairing).
        """
        return cls(demo_dir, out_dir, progress, options.segmentation, last_stage, resegment, options.depth_model,
                   options.force, out_option, options.margin)  # fmt: skip

    def analyse(self) -> SceneDescription:
        """Runs every stage that does not need Blender.

        Safe to call from a worker thread. Writes only into the staging folder.

        Returns:
            The scene description, also kept in :attr:`scene`.

        Raises:
            Real2GymError: Bad input, an unwritable output folder, or cancellation.
        """
        started = time.perf_counter()
        check_target(self.out_dir, self.out_option, RUN, [(self.demo_dir, "the demo folder")])
        self.progress.step("reading the demo folder", 0.0)
        demo = load_demo(self.demo_dir, self.log)
        geometric = STAGES.index(self.last_stage) >= STAGES.index("geometry")
        estimator = None
        if geometric and self.depth_model and demo.depth_dir is None:
            estimator = MonoDepth(
                self.depth_model
            )  # a bad checkpoint stops the run before anything is written
        elif geometric:
            require_metric_scale(demo)  # before segmenting, and before the output folder is touched
        if self.resegment is not None:
            object_index(demo, self.resegment)  # an unknown object is refused before anything is touched
        if not self.force:
            refuse_to_lose_fixes(self.out_dir)
        segmenter = make_segmenter(self.segmentation)
        scene = SceneDescription.from_demo(demo)
        self._output = OutputFolder(self.out_dir)
        scene.stages["load"] = time.perf_counter() - started
        self.scene = scene
        if self.last_stage == "load":
            return scene

        started = time.perf_counter()
        segmentation = self._segment(demo, segmenter, scene)
        scene.artifacts["masks"] = MASKS_NAME
        scene.stages["segment"] = time.perf_counter() - started
        if self.last_stage == "segment":
            return scene

        started = time.perf_counter()
        if estimator is not None:
            folder = estimate_depth_folder(demo.video, estimator, self._output.staging / DEPTH_NAME, self.progress,
                                           span=(0.6, 0.65))  # fmt: skip
            demo = dataclasses.replace(
                demo, depth_dir=folder, camera=dataclasses.replace(demo.camera, depth_scale=0.001)
            )
            scene.artifacts["depth"] = DEPTH_NAME
            self.log.warn(
                "geometry",
                f"depth estimated from the video by the monocular model {estimator.name}: its metric scale is "
                "learned, not measured (less accurate than a depth camera)",
            )
        geometry = run_geometry(demo, segmentation, self.progress, self.log, span=(0.6, 0.7))
        scene.set_geometry(geometry)
        self.geometry = geometry
        scene.stages["geometry"] = time.perf_counter() - started
        if geometry.joints_s:
            scene.stages["geometry_joints"] = geometry.joints_s  # a part of the geometry stage's time
        if self.last_stage == "geometry":
            return scene

        started = time.perf_counter()
        self.progress.step("exporting MJCF and simulating the demo", 0.7)
        verification = verify_scene(
            geometry,
            demo.camera,
            scene.task,
            demo.video.fps,
            self._output.staging / MJCF_NAME,
            margin=self.margin,
            on_margin_run=margin_progress(self.progress.step, 0.7, 0.78),
        )
        scene.verification = verification.to_report(f"{MJCF_NAME}/scene.xml")
        scene.artifacts["mjcf"] = f"{MJCF_NAME}/scene.xml"
        self.verification = verification
        # Rendered here, not in finish(): in Blender this is the worker thread, where MuJoCo may open its
        # own OpenGL context (Blender's main thread holds Blender's).
        self.progress.step("rendering the summary's keyframes", 0.78)
        scene.stages["verify"] = time.perf_counter() - started
        self.pictures = make_pictures(self.report(), geometry, verification.scene.model, verification.record)
        return scene

    def _segment(self, demo: Demo, segmenter: VideoSegmenter, scene: SceneDescription) -> Segmentation:
        """Segments every object, or :attr:`resegment` alone; stages the masks and the report's section."""
        span, masks = (0.05, 0.6), self._output.staging / MASKS_NAME
        if self.resegment is None:
            segmentation = segment_demo(demo, segmenter, self.progress, self.log, span=span)
            segmentation.write(masks)
            scene.segmentation = segmentation.summary(MASKS_NAME)
            return segmentation
        earlier = read_earlier_segmentation(self._output.path, demo, self.resegment)
        segmentation = resegment_object(
            demo, segmenter, earlier, self.resegment, self.progress, self.log, span=span
        )
        earlier.write_masks(segmentation, self.resegment, masks)
        scene.segmentation = earlier.merged_section(segmentation, self.resegment)
        self._kept_warnings = earlier.warnings
        if earlier.later_sections:
            self.log.warn(
                "segmentation",
                "report.json no longer holds the earlier run's geometry and verification, made from the "
                f"old masks (mjcf/ and scene.blend there are out of date too); run 'real2gym run "
                f"{demo.path} --out {self._output.path}' to fit and verify the scene again",
            )
        return segmentation

    @property
    def staging(self) -> Path:
        """The folder this run stages its outputs in until :meth:`commit` (after :meth:`analyse`)."""
        if self._output is None:
            raise RuntimeError("PipelineRun.staging read before analyse()")
        return self._output.staging

    def report(self) -> Report:
        """The run's report, made once after :meth:`analyse`: the scene description's, with the
        frictions the verifier used and the suggested fixes.

        The Blender side builds its scene from it (and the typed :attr:`geometry` and
        :attr:`verification`) before :meth:`commit` writes it.
        """
        if self.scene is None or self._output is None:
            raise RuntimeError("PipelineRun.report() called before analyse()")
        if self._report is None:
            report = self.scene.report()
            if report.verification is not None:
                report.record_physics({}, default_friction=DEFAULT_FRICTION)
                report.attach_suggestions(suggest_fixes(report.to_json()))
            self._report = report
        return self._report

    def add_output(self, kind: str, name: str, stage: str, seconds: float) -> None:
        """Records a file the caller staged (the Blender side's ``scene.blend``) in the report.

        Args:
            kind: Its key in the report's ``artifacts`` (``"blend"``).
            name: Its name in the output folder, as staged in :attr:`staging`.
            stage: Its key in the report's ``timing.stages_s`` (``"blender"``).
            seconds: How long making it took.
        """
        report = self.report()
        report.add_artifacts({kind: name})
        report.record_stage_time(stage, seconds)

    def mask_overlays(self, colors=None, progress: Progress | None = None) -> dict[str, int]:
        """Stages the masks' coloured overlays (``masks_overlay/``) for showing them over the video.

        For Blender, after :meth:`analyse` (in its worker thread). A failure is a warning: the
        masks themselves are staged.

        Args:
            colors: sRGB ``(r, g, b)`` in [0, 1] per object name; the palette for the others.
            progress: Receives per-frame progress.

        Returns:
            The number of overlay frames per object; empty without masks or on failure.
        """
        section = self.scene.segmentation if self.scene is not None else None
        if not section:
            return {}
        objects = [
            (obj["name"], obj["masks"]) for obj in [*section.get("objects", []), *section.get("hands", [])]
        ]
        try:
            return stage_overlays(self.staging, objects, self.staging, colors, progress)
        except Real2GymError as e:
            self.log.warn("segmentation", f"the masks were written but cannot be shown: {e}")
            return {}

    def commit(self) -> Path:
        """Writes summary.html and report.json, then moves every staged file into the output folder.

        Returns:
            The path of the written report.json.
        """
        report, staging = self.report(), self.staging
        report.warnings = self._kept_warnings + self.log.as_report()
        self.progress.step("writing summary.html", 0.97)
        write_summary(staging, report, self.pictures, [staging / MASKS_NAME, self._output.path / MASKS_NAME])
        self.progress.step("writing report.json", 0.98)
        write_report(staging, report)
        keep = () if self.resegment is None else (MASKS_NAME,)  # one object again: the others' masks stay
        self._output.commit(stale=tuple(n for n in RUN_OUTPUTS if n not in keep))
        self.progress.step("done", 1.0)
        return self._output.path / REPORT_NAME

    def abort(self) -> None:
        """Discards everything this run staged; the output folder keeps its earlier content."""
        if self._output is not None:
            self._output.discard()


def refuse_to_lose_fixes(out_dir: Path | str) -> None:
    """Refuses to run into a folder whose report.json logs fixes (an artist's work).

    Raises:
        OutputError: It does; the message names the fixes and ``--force``.
    """
    path = Path(out_dir) / REPORT_NAME
    if not path.is_file():
        return
    try:
        log = read_report(out_dir).edit_log
    except Real2GymError:
        return  # no readable earlier report: nothing to lose
    if log:
        kinds = ", ".join(sorted({str(entry.get("kind", "?")) for entry in log if isinstance(entry, dict)}))
        raise OutputError(
            f"{path} logs {len(log)} fix(es) ({kinds}); a new run into {Path(out_dir)} would replace them. "
            "Choose another output folder, or pass --force to replace that run"
        )


def run_pipeline(
    demo_dir: Path | str,
    out_dir: Path | str,
    progress: Progress | None = None,
    segmentation: SegmentationOptions | None = None,
    last_stage: str = STAGES[-1],
    resegment: str | None = None,
    depth_model: str | None = None,
    force: bool = False,
    margin: int = DEFAULT_RUNS,
) -> PipelineRun:
    """Runs the whole pipeline synchronously, without Blender (command line, tests).

    Args:
        demo_dir: The demo folder.
        out_dir: The output folder.
        progress: Receives progress and carries cancellation.
        segmentation: The segmentation backend and its settings.
        last_stage: The last stage to run, one of :data:`STAGES`.
        resegment: One object to segment again, keeping the others' masks (see :class:`PipelineRun`).
        depth_model: A monocular metric depth checkpoint for an RGB-only demo (see :class:`PipelineRun`).
        force: Replace an earlier run that holds logged fixes (see :class:`PipelineRun`).
        margin: Perturbed copies simulated after the verification (``verify.margin``); 0 for none.

    Returns:
        The finished run; its ``scene`` and ``log`` hold the result and warnings.

    Raises:
        Real2GymError: Bad input, an unwritable output folder, or cancellation;
            nothing is written then.
    """
    return PipelineRun(
        demo_dir, out_dir, progress, segmentation, last_stage, resegment, depth_model, force, margin=margin
    ).run()
