"""The comparison video (real | reconstruction | simulation) with Blender's render in the middle.

The core's :func:`~real2gym_addon.compare.render_comparison` composes the
video; its middle tile comes from a :class:`BlenderTileRenderer`: the
reconstruction rendered by Workbench from the Real2Gym Camera at the video's
size, one PNG per frame (the simulated copies hidden). Where Blender cannot
render (no OpenGL), or the scene has no reconstruction, the core's own MuJoCo
render of the reconstruction is used instead and a warning says so.

:func:`compare_in_scene` renders synchronously (scripts, ``blender -b``);
:class:`CompareJob` renders one frame per call on the main thread (a modal
operator's timer), then composes the video in a worker thread.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
from pathlib import Path

import bpy
import numpy as np

from ..real2gym_addon.compare import render_comparison
from ..real2gym_addon.errors import Cancelled, Real2GymError
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.report import read_report
from ..real2gym_addon.summary import write_summary
from .jobs import ThreadJob
from .reconstruction import real2gym_objects
from .simulation import SIM_COLLECTION
from .verification import scene_out_dir
from .video_scene import CAMERA_NAME

RENDER_SHARE = 0.6
"""The part of the progress bar the Blender renders take in the GUI."""
_RENDER = ("engine", "filepath", "resolution_x", "resolution_y", "resolution_percentage", "use_file_extension",
           "film_transparent")  # fmt: skip
_IMAGE = ("file_format", "color_mode")
_SHADING = ("light", "color_type")


@dataclasses.dataclass
class Compared:
    """What a comparison wrote.

    Attributes:
        artifacts: The files written (relative to the output folder), as report.json's ``artifacts``.
        blender_tile: True when the middle tile is Blender's render, False when MuJoCo's.
        warnings: Why Blender's render was not used.
    """

    artifacts: dict[str, str]
    blender_tile: bool
    warnings: list[str]


class BlenderTileRenderer:
    """Renders the reconstruction with Workbench from the Real2Gym Camera, one PNG per video frame.

    A context manager: entering sets the render settings (Workbench, the video's
    size, PNG) and hides the simulated copies; leaving restores them and the frame.

    Args:
        scene: The scene with the reconstruction.
        folder: Where the PNGs go (``000000.png`` ...).
        width: The video's width in pixels.
        height: The video's height in pixels.
    """

    def __init__(self, scene: bpy.types.Scene, folder: Path, width: int, height: int) -> None:
        self.scene, self.folder, self.size = scene, Path(folder), (width, height)
        self._saved: dict = {}

    def __enter__(self) -> BlenderTileRenderer:
        scene = self.scene
        render, shading = scene.render, scene.display.shading
        sim = bpy.data.collections.get(SIM_COLLECTION)
        self._saved = {
            "render": {k: getattr(render, k) for k in _RENDER},
            "image": {k: getattr(render.image_settings, k) for k in _IMAGE},
            "shading": {k: getattr(shading, k) for k in _SHADING},
            "frame": scene.frame_current,
            "camera": scene.camera,
            "sim": (sim, sim.hide_render) if sim is not None else None,
        }
        render.engine = "BLENDER_WORKBENCH"
        render.resolution_x, render.resolution_y = self.size
        render.resolution_percentage = 100
        render.use_file_extension = True
        render.film_transparent = False
        render.image_settings.file_format = "PNG"
        render.image_settings.color_mode = "RGB"
        shading.light, shading.color_type = "STUDIO", "MATERIAL"
        camera = bpy.data.objects.get(CAMERA_NAME)
        if camera is not None and camera.type == "CAMERA":
            scene.camera = camera
        if sim is not None:
            sim.hide_render = True
        return self

    def __exit__(self, *exception) -> None:
        self.close()

    def close(self) -> None:
        """Restores the settings and the frame (once; later calls do nothing)."""
        if not self._saved:
            return
        saved, self._saved = self._saved, {}
        scene = self.scene
        for key, value in saved["render"].items():
            setattr(scene.render, key, value)
        for key, value in saved["image"].items():
            setattr(scene.render.image_settings, key, value)
        for key, value in saved["shading"].items():
            setattr(scene.display.shading, key, value)
        scene.camera = saved["camera"]
        if saved["sim"] is not None:
            saved["sim"][0].hide_render = saved["sim"][1]
        scene.frame_set(saved["frame"])

    def path(self, frame: int) -> Path:
        """The PNG of a frame."""
        return self.folder / f"{frame:06d}.png"

    def render(self, frame: int) -> Path:
        """Renders one video frame (scene frame = video frame) into its PNG.

        Raises:
            RuntimeError: Blender cannot render here.
        """
        self.scene.frame_set(frame)
        path = self.path(frame)
        self.scene.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)
        if not path.is_file():
            raise RuntimeError(f"Blender wrote no image for frame {frame}")
        return path

    def usable(self) -> str:
        """Renders the first frame as a probe; returns why Blender's render cannot be used ('' when it can)."""
        if not real2gym_objects(self.scene, "OBJECT"):
            return "the scene has no reconstruction (run the pipeline up to Geometry, or Verify)"
        try:
            self.render(0)
        except Exception as e:  # no OpenGL, no GPU context: any failure means "fall back"
            return f"Blender cannot render here ({str(e).strip()[:200]})"
        return ""

    def __call__(self, frame: int) -> np.ndarray:
        """The middle tile of a frame: ``HxWx3`` uint8 BGR at the video's size (rendered if missing)."""
        path = self.path(frame)
        if not path.is_file():
            self.render(frame)
        return _read(path, self.size)


def _read(path: Path, size: tuple[int, int]) -> np.ndarray:
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image.shape[1::-1] != size:
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return image


def _render_comparison(folder: Path, middle, progress: Progress | None) -> dict[str, str]:
    """The core's comparison; a package missing from this installation becomes a user error."""
    try:
        return render_comparison(folder, middle, progress, page=write_summary)
    except ModuleNotFoundError as e:
        raise Real2GymError(
            f"the comparison needs the '{e.name}' package, which this Blender installation lacks; "
            f"run 'real2gym compare {folder}' from the command line instead"
        ) from e


def _fallback_warning(reason: str) -> str:
    return f"{reason}; the middle tile is MuJoCo's render of the reconstruction instead"


def compare_in_scene(
    scene: bpy.types.Scene, out_dir: str | Path = "", progress: Progress | None = None
) -> Compared:
    """Writes the comparison of the scene's run, with Blender's render of the reconstruction in the middle.

    Args:
        scene: The scene with the reconstruction.
        out_dir: The output folder; the scene's when empty.
        progress: Per-frame progress; carries cancellation.

    Returns:
        What was written, and whether Blender's render was used.

    Raises:
        Real2GymError: No output folder, no report with geometry, or MuJoCo
            cannot render; the folder and the scene are as they were.
    """
    folder = scene_out_dir(scene, out_dir)
    video = read_report(folder).video
    with tempfile.TemporaryDirectory() as scratch:
        with BlenderTileRenderer(scene, Path(scratch), video.width, video.height) as renderer:
            reason = renderer.usable()
            warnings = [_fallback_warning(reason)] if reason else []
            artifacts = _render_comparison(folder, None if reason else renderer, progress)
    return Compared(artifacts, not reason, warnings)


class CompareJob(ThreadJob):
    """The comparison for the GUI, a :class:`~.jobs.ThreadJob` with main-thread steps before its work.

    Blender renders on the main thread: while rendering, :attr:`done` is True and
    each :meth:`advance` renders one frame; then the video is composed in the
    worker thread, and the last :meth:`advance` returns True.

    Args:
        scene: The scene with the reconstruction.
        out_dir: The output folder; the scene's when empty.

    Raises:
        Real2GymError: No output folder or no report; nothing was started.
    """

    def __init__(self, scene: bpy.types.Scene, out_dir: str | Path = "") -> None:
        super().__init__(self._compose, lambda scene, compared: compared, "the comparison")
        self.folder = scene_out_dir(scene, out_dir)
        video = read_report(self.folder).video
        self.frames = int(video.frames)
        self._scratch = tempfile.TemporaryDirectory()
        self._renderer = BlenderTileRenderer(scene, Path(self._scratch.name), video.width, video.height)
        self._next, self._warnings, self._middle = 0, [], None

    def start(self) -> CompareJob:
        """Claims the job slot and sets the render settings up (restored when the renders end or are cancelled).

        Raises:
            Real2GymError: Another job is running.
        """
        self._claim()
        self._renderer.__enter__()
        return self

    def cancel(self) -> None:
        """Stops at the next frame; the scene's settings are restored now."""
        super().cancel()
        self._renderer.close()

    def _compose(self, progress: Progress) -> Compared:
        inner = Progress(lambda message, f: progress.step(message, RENDER_SHARE + (1 - RENDER_SHARE) * f))
        artifacts = _render_comparison(self.folder, self._middle, inner)
        return Compared(artifacts, self._middle is not None, self._warnings)

    def advance(self, scene: bpy.types.Scene) -> bool:
        """Renders the next frame, or starts or finishes the composing.

        Returns:
            True when the comparison is written (:attr:`outcome` is set).

        Raises:
            Real2GymError: It failed or was cancelled; nothing was written and
                the scene's settings are restored.
        """
        if self._thread is not None:
            try:
                return super().advance(scene)
            finally:
                self._scratch.cleanup()
        try:
            if self.progress.cancelled:
                raise Cancelled("cancelled by the user; nothing was written")
            if self._next == 0:
                reason = self._renderer.usable()
                self._warnings = [_fallback_warning(reason)] if reason else []
                self._middle = (
                    None if reason else (lambda frame: _read(self._renderer.path(frame), self._renderer.size))
                )
                self._next = self.frames if reason else 1
            elif self._next < self.frames:
                self._renderer.render(self._next)
                self._next += 1
            self.progress.step(
                f"rendering frame {self._next} in Blender", RENDER_SHARE * self._next / self.frames
            )
        except BaseException:
            self._renderer.close()
            self._scratch.cleanup()
            self._release()
            raise
        if self._next >= self.frames:
            self._renderer.close()
            self._thread = threading.Thread(target=self._run, name="real2gym-compare", daemon=True)
            self._thread.start()
        return False
