"""Mouse positions in the 3D view's camera view as video pixels, and back.

In the camera view the video fills the camera frame. :func:`camera_frame_corners`
finds the frame's corners in region coordinates (pixels from the region's
bottom-left corner, y up); :func:`region_to_video_pixel` maps a region position
into the video by inverting the bilinear map over those corners, and
:func:`video_pixel_to_region` maps back. Video pixels are prompts.json's: x
right and y down from the top-left corner of the image, in pixels of the video.
"""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[float, float]
Corners = tuple[Point, Point, Point, Point]
"""The camera frame's corners in region pixels: top-left, top-right, bottom-right, bottom-left."""


def _bilinear(corners: Corners, u: float, v: float) -> Point:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = corners
    a, b, c, d = (1 - u) * (1 - v), u * (1 - v), u * v, (1 - u) * v
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def video_pixel_to_region(corners: Corners, pixel: Point, width: int, height: int) -> Point:
    """Maps a video pixel position to region coordinates.

    Args:
        corners: The camera frame's corners in region pixels (:data:`Corners`).
        pixel: ``(x, y)`` in video pixels, x right, y down from the top-left corner.
        width: The video's width in pixels.
        height: The video's height in pixels.

    Returns:
        ``(x, y)`` in region pixels, y up from the region's bottom edge.
    """
    return _bilinear(corners, pixel[0] / width, pixel[1] / height)


def region_to_video_pixel(corners: Corners, position: Point, width: int, height: int) -> Point:
    """Maps a region position (a mouse position) to video pixels.

    Inverts the bilinear map over the corners with Newton's method (exact in one
    step for the rectangle of a camera view). Positions outside the frame map
    outside ``[0, width] x [0, height]``.

    Args:
        corners: The camera frame's corners in region pixels (:data:`Corners`).
        position: ``(x, y)`` in region pixels, y up from the region's bottom edge.
        width: The video's width in pixels.
        height: The video's height in pixels.

    Returns:
        ``(x, y)`` in video pixels, x right, y down from the top-left corner.
    """
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = corners
    u = v = 0.5
    for _ in range(20):
        px, py = _bilinear(corners, u, v)
        ex, ey = px - position[0], py - position[1]
        # Partial derivatives of the bilinear map.
        du = ((1 - v) * (x1 - x0) + v * (x2 - x3), (1 - v) * (y1 - y0) + v * (y2 - y3))
        dv = ((1 - u) * (x3 - x0) + u * (x2 - x1), (1 - u) * (y3 - y0) + u * (y2 - y1))
        det = du[0] * dv[1] - du[1] * dv[0]
        if det == 0:
            raise ValueError("the camera frame has no area in this view")
        step_u = (ex * dv[1] - ey * dv[0]) / det
        step_v = (du[0] * ey - du[1] * ex) / det
        u, v = u - step_u, v - step_v
        if abs(step_u) * width < 1e-6 and abs(step_v) * height < 1e-6:
            break
    return u * width, v * height


def camera_frame_corners(region, region_3d, scene, camera) -> Corners | None:
    """Finds the camera frame's corners in a 3D view region.

    Args:
        region: The 3D view's ``WINDOW`` region.
        region_3d: Its ``RegionView3D`` (in camera view).
        scene: The scene (its render size and pixel aspect shape the frame).
        camera: The camera object.

    Returns:
        The corners in region pixels (:data:`Corners`), or None when a corner
        is behind the view.
    """
    from bpy_extras.view3d_utils import location_3d_to_region_2d

    # view_frame: top-right, bottom-right, bottom-left, top-left, in camera space.
    frame = [camera.matrix_world @ v for v in camera.data.view_frame(scene=scene)]
    projected = [location_3d_to_region_2d(region, region_3d, v) for v in frame]
    if any(p is None for p in projected):
        return None
    top_right, bottom_right, bottom_left, top_left = (tuple(p) for p in projected)
    return top_left, top_right, bottom_right, bottom_left


def clamp_to_video(pixel: Sequence[float], width: int, height: int) -> Point:
    """Clamps a video pixel position to the image, ``[0, width] x [0, height]``."""
    return min(max(pixel[0], 0.0), float(width)), min(max(pixel[1], 0.0), float(height))
