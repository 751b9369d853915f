"""Runs of the pipeline on a scene's own settings: its folders, segmentation backend and object prompts.

The operators ``real2gym.run_pipeline``, ``real2gym.segment`` and
``real2gym.resegment_object`` and scripts come here. :func:`prepare_scene_run`
reads the scene's backend choice (``state.segmentation``), checks that it can
run here, and saves the scene's prompts before a run. :func:`scene_pipeline_job` makes the
run a job: ``run_now`` (``blender -b``) or ``start`` (the GUI).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError, SegmentationError
from ..real2gym_addon.pipeline import STAGES, PipelineRun
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.run_options import RunOptions
from ..state.run_options import run_options
from ..state.segmentation import backend_availability
from . import prompts
from .jobs import ThreadJob
from .pipeline import pipeline_job


@dataclasses.dataclass(frozen=True)
class SceneRun:
    """A run prepared from a scene's settings on the main thread.

    Attributes:
        demo_dir: The demo folder, absolute.
        out_dir: The output folder, absolute.
        options: The scene's run options (its segmentation settings among them).
        last_stage: The last stage to run.
        mask_colors: Each object's overlay colour (sRGB, 0 to 1), by name.
        load_prompts: Load the demo's prompts into the scene after the run (it had none).
        resegment: One object to segment again, keeping the others' masks; None for all.
    """

    demo_dir: Path
    out_dir: Path
    options: RunOptions
    last_stage: str
    mask_colors: dict[str, tuple[float, float, float]]
    load_prompts: bool
    resegment: str | None = None


def prepare_scene_run(
    scene: bpy.types.Scene,
    demo_dir: str = "",
    out_dir: str = "",
    last_stage: str = STAGES[-1],
    resegment: str | None = None,
) -> SceneRun:
    """Checks a scene's run settings and saves its object prompts into the demo folder.

    Args:
        scene: The scene with the settings (``scene.real2gym``).
        demo_dir: The demo folder; the scene's when empty.
        out_dir: The output folder; the scene's when empty.
        last_stage: The last stage to run (``real2gym_addon.pipeline.STAGES``).
        resegment: One object to segment again (``last_stage`` ``"segment"``); None for all.

    Returns:
        What to run.

    Raises:
        Real2GymError: A folder is not set, the chosen backend cannot run here
            (the message says why), or the scene's prompts belong to another
            demo; nothing was changed then.
    """
    state = scene.real2gym
    demo_dir = bpy.path.abspath(demo_dir or state.demo_dir)
    out_dir = bpy.path.abspath(out_dir or state.out_dir)
    if not demo_dir or not out_dir:
        raise Real2GymError("set the demo folder and the output folder first")
    options = run_options(scene)
    if STAGES.index(last_stage) >= STAGES.index("segment"):
        available, reason = backend_availability(options.segmentation)
        if not available:
            raise SegmentationError(
                f"segmentation backend '{options.segmentation.backend}' cannot run: {reason}"
            )
    load_after = prompts.prepare_prompts(scene, demo_dir)
    return SceneRun(
        demo_dir=Path(demo_dir).resolve(),
        out_dir=Path(out_dir).resolve(),
        options=options,
        last_stage=last_stage,
        mask_colors=prompts.mask_colors(scene),
        load_prompts=load_after,
        resegment=resegment,
    )


def scene_pipeline_job(
    scene: bpy.types.Scene,
    demo_dir: str = "",
    out_dir: str = "",
    last_stage: str = STAGES[-1],
    resegment: str | None = None,
    progress: Progress | None = None,
) -> ThreadJob:
    """A run on a scene's settings, as a job (:func:`.pipeline.pipeline_job`).

    ``job.start()`` runs it in the background (the GUI), ``job.run_now(scene)``
    synchronously (``blender -b``, scripts). Its ``outcome`` is the finished run;
    when the run segmented, the masks are shown over the video. A scene without
    prompts gets the demo's afterwards.

    Args:
        scene: The scene to build into, with the settings.
        demo_dir: The demo folder; the scene's when empty.
        out_dir: The output folder; the scene's when empty.
        last_stage: The last stage to run.
        resegment: One object to segment again, keeping the others' masks; None for all.
        progress: Receives progress; may be None.

    Raises:
        Real2GymError: Bad settings; nothing was started or changed.
    """
    request = prepare_scene_run(scene, demo_dir, out_dir, last_stage, resegment)

    def after(scene: bpy.types.Scene) -> None:
        if request.load_prompts and not scene.real2gym.object_prompts:
            prompts.load_prompts(scene, request.demo_dir)

    return pipeline_job(request.demo_dir, request.out_dir, None, request.last_stage, request.mask_colors,
                        request.resegment, progress, after, request.options)  # fmt: skip


def run_scene_pipeline(scene: bpy.types.Scene, *args, **options) -> PipelineRun:
    """Runs the pipeline synchronously on a scene's settings; see :func:`scene_pipeline_job`."""
    return scene_pipeline_job(scene, *args, **options).run_now(scene)
