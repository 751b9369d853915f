"""Running the pipeline into a Blender scene, from an operator, a script or the CLI.

The operator, ``blender -b`` scripts and the ``real2gym`` command line all come
here, so that they produce the same scene and the same report. Building the
Blender scene is guarded: if anything fails, the scene's settings are restored
and the data blocks the run added are removed, so the user's scene stays as it
was.
"""

from __future__ import annotations

import threading
from pathlib import Path

import bpy

from ..real2gym_addon.pipeline import PipelineRun
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.scene import SceneDescription
from . import properties
from .video_scene import build_video_scene

_RENDER_SETTINGS = (
    "resolution_x",
    "resolution_y",
    "resolution_percentage",
    "pixel_aspect_x",
    "pixel_aspect_y",
    "fps",
    "fps_base",
)
_SCENE_SETTINGS = ("frame_start", "frame_end", "frame_current", "camera", "active_clip")
_ID_COLLECTIONS = ("objects", "cameras", "movieclips", "collections")


class SceneGuard:
    """Remembers a scene's settings and data blocks, to undo a failed run.

    Args:
        scene: The scene the run will change.
    """

    def __init__(self, scene: bpy.types.Scene) -> None:
        self.scene = scene
        self.render = {k: getattr(scene.render, k) for k in _RENDER_SETTINGS}
        self.settings = {k: getattr(scene, k) for k in _SCENE_SETTINGS}
        self.existing = {name: set(getattr(bpy.data, name)) for name in _ID_COLLECTIONS}

    def restore(self) -> None:
        """Removes the data blocks added since, and restores the settings."""
        for name in reversed(_ID_COLLECTIONS):
            blocks = getattr(bpy.data, name)
            for block in [b for b in blocks if b not in self.existing[name]]:
                blocks.remove(block)
        for key, value in self.render.items():
            setattr(self.scene.render, key, value)
        for key, value in self.settings.items():
            setattr(self.scene, key, value)


def save_blend_copy(path: Path) -> None:
    """Saves the open file as a copy at ``path``; the user's own file path is unchanged."""
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False, compress=False)


def _write_into(scene: bpy.types.Scene, out_dir: Path):
    def write(description: SceneDescription, path: Path) -> None:
        build_video_scene(scene, description)
        state = scene.real2gym
        state.demo_dir = description.demo_dir
        state.out_dir = str(Path(out_dir).resolve())
        state.report_path = str(Path(out_dir).resolve() / "report.json")
        state.video_frames = description.video.frames
        state.video_fps = description.video.fps
        state.status = f"Loaded {description.video.frames} frames at {description.video.fps:g} fps"
        save_blend_copy(path)

    return write


def finish_in_scene(run: PipelineRun, scene: bpy.types.Scene) -> Path:
    """Builds the Blender scene from an analysed run and commits its output.

    Call on Blender's main thread. On failure the scene is restored.

    Args:
        run: A run whose ``analyse()`` succeeded.
        scene: The scene to build into.

    Returns:
        The written report.json.
    """
    guard = SceneGuard(scene)
    try:
        return run.finish(_write_into(scene, run.out_dir))
    except BaseException:
        guard.restore()
        run.abort()
        raise


def run_in_scene(
    scene: bpy.types.Scene, demo_dir: str | Path, out_dir: str | Path, progress: Progress | None = None
) -> PipelineRun:
    """Runs the whole pipeline synchronously into ``scene`` (``blender -b``, scripts).

    Args:
        scene: The scene to build into.
        demo_dir: The demo folder.
        out_dir: The output folder.
        progress: Receives progress; may be None.

    Returns:
        The finished run (its ``scene`` is the description, ``log`` the warnings).
    """
    run = PipelineRun(demo_dir, out_dir, progress)
    try:
        run.analyse()
    except BaseException:
        run.abort()
        raise
    finish_in_scene(run, scene)
    return run


def headless_blend_writer(out_dir: str | Path):
    """Returns the command line's scene writer: a fresh empty file, built and saved.

    Args:
        out_dir: The run's output folder (recorded in the scene's settings).
    """

    def write(description: SceneDescription, path: Path) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        properties.ensure_registered()
        _write_into(bpy.context.scene, Path(out_dir))(description, path)

    return write


class BackgroundRun:
    """A run whose analysis happens in a worker thread, for the GUI.

    The modal operator starts it, polls :attr:`done` from a timer, shows
    :attr:`progress`, and calls :meth:`finish` on the main thread.

    Args:
        demo_dir: The demo folder.
        out_dir: The output folder.
    """

    def __init__(self, demo_dir: str | Path, out_dir: str | Path) -> None:
        self.progress = Progress()
        self.run = PipelineRun(demo_dir, out_dir, self.progress)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._analyse, name="real2gym-analyse", daemon=True)

    def _analyse(self) -> None:
        try:
            self.run.analyse()
        except BaseException as e:  # handed to the main thread in finish()
            self.error = e

    def start(self) -> None:
        """Starts the analysis in the worker thread."""
        self._thread.start()

    @property
    def done(self) -> bool:
        """True once the worker thread has ended."""
        return not self._thread.is_alive()

    def cancel(self) -> None:
        """Asks the worker to stop at its next progress step."""
        self.progress.cancel()

    def finish(self, scene: bpy.types.Scene) -> Path:
        """Builds the scene and commits (main thread); re-raises the worker's error."""
        self._thread.join()
        if self.error is not None:
            self.run.abort()
            raise self.error
        return finish_in_scene(self.run, scene)
