"""The video in Blender: a movie clip behind a camera that matches camera.json.

:func:`build_video_scene` loads the demo's video as a movie clip, makes (or
updates) the "Real2Gym Camera" with the demo's intrinsics (sensor fit, lens,
shift for the principal point, pixel aspect) and pose, shows the clip as the
camera's background, and matches the scene's frame range, frame rate and render
size. Video frame ``i`` is scene frame ``i``.
"""

from __future__ import annotations

from pathlib import Path

import bpy
from mathutils import Matrix

from ..real2gym_addon.demo import Camera
from ..real2gym_addon.scene import SceneDescription

COLLECTION_NAME = "Real2Gym"
CAMERA_NAME = "Real2Gym Camera"
SENSOR_SIZE_MM = 36.0

# Blender cameras look along -Z with +Y up; OpenCV cameras along +Z with +Y down.
_OPENCV_TO_BLENDER_CAMERA = Matrix.Diagonal((1.0, -1.0, -1.0, 1.0))


def camera_settings(camera: Camera) -> dict[str, float | str]:
    """Returns Blender camera and render settings that reproduce pinhole intrinsics.

    Args:
        camera: Intrinsics in pixels (OpenCV convention: principal point from the
            top-left corner, y down).

    Returns:
        ``sensor_fit``, ``sensor_width``, ``sensor_height``, ``lens`` (mm),
        ``shift_x``, ``shift_y`` (fractions of the fitted image side),
        ``pixel_aspect_x``, ``pixel_aspect_y``.
    """
    width, height = camera.width, camera.height
    # Non-square pixels: pixel width / height = fy / fx; Blender wants both >= 1.
    aspect_x, aspect_y = (
        (1.0, camera.fx / camera.fy) if camera.fx >= camera.fy else (camera.fy / camera.fx, 1.0)
    )
    horizontal = width * aspect_x >= height * aspect_y
    if horizontal:
        fit, lens = "HORIZONTAL", camera.fx * SENSOR_SIZE_MM / width
        side = width * aspect_x
    else:
        fit, lens = "VERTICAL", camera.fy * SENSOR_SIZE_MM / height
        side = height * aspect_y
    return {
        "sensor_fit": fit,
        "sensor_width": SENSOR_SIZE_MM,
        "sensor_height": SENSOR_SIZE_MM,
        "lens": lens,
        "shift_x": (width / 2.0 - camera.cx) * aspect_x / side,
        "shift_y": (camera.cy - height / 2.0) * aspect_y / side,
        "pixel_aspect_x": aspect_x,
        "pixel_aspect_y": aspect_y,
    }


def blender_camera_matrix(camera: Camera) -> Matrix:
    """Returns the Blender camera object's world matrix.

    Uses ``world_from_camera`` when camera.json gives it; otherwise the camera
    frame is the world frame (until the geometry stage finds the table).
    """
    if camera.world_from_camera is None:
        return _OPENCV_TO_BLENDER_CAMERA.copy()
    return Matrix([list(row) for row in camera.world_from_camera]) @ _OPENCV_TO_BLENDER_CAMERA


def _collection(scene: bpy.types.Scene) -> bpy.types.Collection:
    collection = bpy.data.collections.get(COLLECTION_NAME)
    if collection is None:
        collection = bpy.data.collections.new(COLLECTION_NAME)
    if scene.collection.children.get(collection.name) is None:
        scene.collection.children.link(collection)
    return collection


def _load_clip(description: SceneDescription) -> bpy.types.MovieClip:
    video = description.video
    path = Path(video.path)
    if video.is_sequence:
        path = sorted(p for p in path.iterdir() if p.is_file() and p.stem.isdigit())[0]
    clip = bpy.data.movieclips.load(str(path), check_existing=True)
    clip.frame_start = 0
    clip.frame_offset = 0
    clip.use_proxy = False
    return clip


def _camera_object(collection: bpy.types.Collection) -> bpy.types.Object:
    obj = bpy.data.objects.get(CAMERA_NAME)
    if obj is None or obj.type != "CAMERA":
        obj = bpy.data.objects.new(CAMERA_NAME, bpy.data.cameras.new(CAMERA_NAME))
    if collection.objects.get(obj.name) is None:
        collection.objects.link(obj)
    return obj


def build_video_scene(scene: bpy.types.Scene, description: SceneDescription) -> bpy.types.Object:
    """Loads the video and sets up the matching camera in ``scene``.

    Re-running updates the same camera and clip instead of adding new ones.

    Args:
        scene: The Blender scene to set up.
        description: The pipeline's scene description (video and camera).

    Returns:
        The camera object, which becomes the scene camera.
    """
    video, camera = description.video, description.camera
    clip = _load_clip(description)
    collection = _collection(scene)
    cam_obj = _camera_object(collection)
    cam_obj.real2gym.kind = "CAMERA"
    cam_obj.matrix_world = blender_camera_matrix(camera)
    data = cam_obj.data
    settings = camera_settings(camera)
    for key in ("sensor_fit", "sensor_width", "sensor_height", "lens", "shift_x", "shift_y"):
        setattr(data, key, settings[key])
    data.clip_start, data.clip_end = 0.01, 100.0
    data.show_background_images = True
    background = data.background_images[0] if data.background_images else data.background_images.new()
    background.source = "MOVIE_CLIP"
    background.clip = clip
    background.use_camera_clip = False
    background.alpha = 1.0
    background.frame_method = "STRETCH"
    background.clip_user.frame_current = 0

    render = scene.render
    render.resolution_x, render.resolution_y = video.width, video.height
    render.resolution_percentage = 100
    render.pixel_aspect_x = settings["pixel_aspect_x"]
    render.pixel_aspect_y = settings["pixel_aspect_y"]
    render.fps = max(1, round(video.fps))
    render.fps_base = render.fps / video.fps
    scene.frame_start, scene.frame_end = 0, video.frames - 1
    # A re-run keeps the frame the user is looking at; a first load starts at frame 0.
    if scene.camera != cam_obj or not 0 <= scene.frame_current < video.frames:
        scene.frame_set(0)
    scene.camera = cam_obj
    scene.active_clip = clip
    return cam_obj
