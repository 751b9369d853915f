"""Segmentation masks over the video: one camera background image per object.

:func:`show_overlays` shows each object's coloured mask overlays
(``OUT/masks_overlay/<object>/000000.png ...``, written by
:func:`real2gym_addon.segmentation.overlay.write_overlays`) as an image
sequence in front of the video in the camera view, frame for frame: video frame
0 is scene frame 0. Re-running updates the same images and background entries
instead of adding new ones; overlays of objects no longer segmented are
removed. :func:`set_overlay_visible` toggles one object's overlay (the object
prompt's ``show_mask``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import bpy

from .video_scene import CAMERA_NAME

IMAGE_PREFIX = "Real2Gym Mask "


def image_name(object_name: str) -> str:
    """The name of the image data block holding an object's overlays."""
    return IMAGE_PREFIX + object_name


def video_camera(scene: bpy.types.Scene) -> bpy.types.Object | None:
    """The Real2Gym camera (the scene camera when it is one), or None."""
    camera = scene.camera
    if camera is not None and camera.type == "CAMERA" and camera.real2gym.kind == "CAMERA":
        return camera
    camera = bpy.data.objects.get(CAMERA_NAME)
    return camera if camera is not None and camera.type == "CAMERA" else None


def _overlay_backgrounds(camera: bpy.types.Object) -> list:
    return [
        bg
        for bg in camera.data.background_images
        if bg.source == "IMAGE" and bg.image is not None and bg.image.name.startswith(IMAGE_PREFIX)
    ]


def _image(name: str, first_file: Path, final_file: Path) -> bpy.types.Image:
    image = bpy.data.images.get(image_name(name))
    if image is None:
        image = bpy.data.images.load(str(first_file))  # the file must exist to load
        image.name = image_name(name)
    elif Path(bpy.path.abspath(image.filepath)) != first_file:
        image.filepath = str(first_file)
    image.source = "SEQUENCE"
    image.reload()  # the files were replaced: drop cached frames
    if final_file != first_file:
        image.filepath = str(final_file)  # read from there on the next draw
    return image


def show_overlays(
    scene: bpy.types.Scene,
    overlay_dir: Path | str,
    frames: Mapping[str, int],
    visible: Mapping[str, bool],
    final_dir: Path | str | None = None,
) -> list[bpy.types.Image]:
    """Shows each object's overlay sequence in front of the video in the camera view.

    Args:
        scene: The scene whose Real2Gym camera shows the video.
        overlay_dir: ``OUT/masks_overlay``, one folder of ``NNNNNN.png`` per object.
        frames: Number of overlay frames per object name (the video's frames).
        visible: Per object name, whether its overlay is shown (default: shown).
        final_dir: Where the overlays will be once a run commits, when ``overlay_dir`` is its
            staging folder: the images keep that path. ``overlay_dir`` when None.

    Returns:
        The overlay images, in ``frames`` order.

    Raises:
        RuntimeError: There is no Real2Gym camera (run the pipeline first).
    """
    camera = video_camera(scene)
    if camera is None:
        raise RuntimeError("no Real2Gym camera in the scene to show the masks on")
    data = camera.data
    wanted = {image_name(name) for name in frames}
    for bg in _overlay_backgrounds(camera):
        if bg.image.name not in wanted:
            data.background_images.remove(bg)
    images = []
    for name, count in frames.items():
        first = Path(overlay_dir).resolve() / name / f"{0:06d}.png"
        final = Path(final_dir or overlay_dir).resolve() / name / f"{0:06d}.png"
        image = _image(name, first, final)
        bg = next((b for b in _overlay_backgrounds(camera) if b.image == image), None)
        if bg is None:
            bg = data.background_images.new()
        bg.source = "IMAGE"
        bg.image = image
        user = bg.image_user
        user.frame_duration = count
        user.frame_start = 0
        # Scene frame f shows file number f - frame_start + 1 + offset: 000000.png on frame 0.
        user.frame_offset = -1
        user.use_cyclic = False
        user.use_auto_refresh = True
        bg.alpha = 1.0  # the overlay images carry their own alpha
        bg.display_depth = "FRONT"
        bg.frame_method = "STRETCH"
        bg.show_expanded = False
        bg.show_background_image = visible.get(name, True)
        images.append(image)
    data.show_background_images = True
    for stale in [i for i in bpy.data.images if i.name.startswith(IMAGE_PREFIX) and i.name not in wanted]:
        if stale.users == 0:
            bpy.data.images.remove(stale)
    return images


def set_overlay_visible(scene: bpy.types.Scene, object_name: str, visible: bool) -> None:
    """Shows or hides one object's mask overlay; does nothing when it has none.

    Args:
        scene: The scene whose camera shows the overlays.
        object_name: The object's name in prompts.json.
        visible: Whether to show it.
    """
    camera = video_camera(scene)
    if camera is None:
        return
    for bg in _overlay_backgrounds(camera):
        if bg.image.name == image_name(object_name):
            bg.show_background_image = visible
