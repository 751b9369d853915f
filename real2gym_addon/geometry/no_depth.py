"""Geometry from silhouettes alone (no depth; camera.json gives world_from_camera).

Lower accuracy than with depth (the benchmark reports it separately): a mask
tells the object's outline, not its distance, so the fits lean on the table:
an object at rest stands on it. :func:`pseudo_points` turns a resting object's
mask into a rough box of points standing on the table (from where the mask's
bottom edge meets the table and the mask's size at that distance), which seeds
the same silhouette-refined fits as with depth. :func:`track_silhouettes`
follows the object by matching its projected silhouette to the mask on every
frame (position and yaw).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ..demo import Camera
from .camera import invert, pose_matrix, yaw_rotation
from .motion import Motion, _finish
from .shapes import Shape
from .silhouette import silhouette_iou, silhouette_polygon

MIN_MASK_AREA = 30


def _ray_on_table(camera: Camera, world_from_camera: np.ndarray, u: float, v: float) -> np.ndarray | None:
    direction = world_from_camera[:3, :3] @ np.array(
        [(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, 1.0]
    )
    origin = world_from_camera[:3, 3]
    if direction[2] >= -1e-6:
        return None
    return origin + direction * (-origin[2] / direction[2])


def pseudo_points(mask: np.ndarray, camera: Camera, camera_from_world: np.ndarray) -> np.ndarray:
    """A rough box of world points standing on the table where the mask's object rests.

    Args:
        mask: ``HxW`` bool silhouette of a resting object.
        camera: Intrinsics.
        camera_from_world: 4x4.

    Returns:
        ``Nx3`` world points (metres), empty if the mask does not meet the table.
    """
    ys, xs = np.nonzero(mask)
    if len(xs) < MIN_MASK_AREA:
        return np.zeros((0, 3))
    world_from_camera = invert(camera_from_world)
    bottom = _ray_on_table(camera, world_from_camera, float(np.median(xs)), float(ys.max()))
    if bottom is None:
        return np.zeros((0, 3))
    distance = float(np.linalg.norm(bottom - world_from_camera[:3, 3]))
    width = (xs.max() - xs.min()) * distance / camera.fx
    height = (ys.max() - ys.min()) * distance / camera.fy * 0.7
    away = bottom[:2] - world_from_camera[:2, 3]
    away /= max(np.linalg.norm(away), 1e-9)
    centre = bottom[:2] + away * width / 2  # the seen bottom edge is the near side
    grid = np.linspace(-0.5, 0.5, 5)
    points = [
        (centre[0] + a * width, centre[1] + b * width, z) for a in grid for b in grid for z in (0.004, height)
    ]
    return np.array(points)


def track_silhouettes(
    shape: Shape,
    start_position: np.ndarray,
    start_yaw: float,
    start_frame: int,
    masks: list[np.ndarray],
    visible: list[bool],
    camera: Camera,
    camera_from_world: np.ndarray,
) -> Motion:
    """Follows an object by fitting its silhouette to the mask on each frame.

    Args:
        shape: The fitted shape.
        start_position: Its centre at ``start_frame``, world frame (m).
        start_yaw: Its yaw there (radians).
        start_frame: The fit's frame.
        masks: ``HxW`` bool per frame.
        visible: Per frame, whether the mask is usable.
        camera: Intrinsics.
        camera_from_world: 4x4.

    Returns:
        The motion, smoothed, hidden frames bridged.
    """
    count = len(masks)
    positions, yaws = np.zeros((count, 3)), np.zeros(count)
    measured = np.zeros(count, bool)
    round_ = shape.kind in ("cylinder", "plate", "cup", "bowl")

    def loss(x, mask):
        pose = pose_matrix(x[:3], yaw_rotation(0.0 if round_ else x[3]))
        iou = silhouette_iou(silhouette_polygon(shape, camera_from_world @ pose, camera), mask)
        below = max(0.0, shape.size[2] / 2 - x[2])  # never sink into the table
        return 1.0 - iou + 50.0 * below

    for direction in (1, -1):
        state = np.r_[start_position, start_yaw]
        frames = range(start_frame, count) if direction == 1 else range(start_frame - 1, -1, -1)
        for frame in frames:
            if not visible[frame] or masks[frame].sum() < MIN_MASK_AREA:
                continue
            result = minimize(loss, state, args=(masks[frame],), method="Nelder-Mead",
                              options={"xatol": 2e-4, "fatol": 1e-4, "maxiter": 300})  # fmt: skip
            state = result.x
            positions[frame], yaws[frame], measured[frame] = state[:3], state[3], True
    return _finish(positions, yaws, measured, start_position, start_yaw)
