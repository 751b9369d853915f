"""Pinhole geometry: back-projection, projection, rigid transforms.

Camera frame: OpenCV (x right, y down, z forward, metres). Pixels: ``(u, v)``
from the top-left corner. Transforms are 4x4 numpy arrays mapping points of the
right-hand frame into the left-hand one (``world_from_camera @ p_cam``).
"""

from __future__ import annotations

import numpy as np

from ..demo import Camera


def intrinsics_matrix(camera: Camera) -> np.ndarray:
    """Returns the 3x3 pinhole matrix K of the camera (pixels)."""
    return np.array([[camera.fx, 0.0, camera.cx], [0.0, camera.fy, camera.cy], [0.0, 0.0, 1.0]])


def back_project(
    camera: Camera, depth: np.ndarray, mask: np.ndarray | None = None, step: int = 1
) -> np.ndarray:
    """Turns depth pixels into camera-frame points.

    Args:
        camera: Intrinsics (pixels).
        depth: ``HxW`` float32 z-depth in metres, 0 = no reading.
        mask: ``HxW`` bool; only these pixels (all when None).
        step: Take every ``step``-th pixel in x and y.

    Returns:
        ``Nx3`` float64 points in metres, camera frame.
    """
    sub = depth[::step, ::step]
    valid = sub > 0
    if mask is not None:
        valid &= mask[::step, ::step]
    v, u = np.nonzero(valid)
    z = sub[v, u].astype(np.float64)
    u = u * step
    v = v * step
    x = (u - camera.cx) * z / camera.fx
    y = (v - camera.cy) * z / camera.fy
    return np.stack([x, y, z], axis=1)


def project(camera: Camera, points_cam: np.ndarray) -> np.ndarray:
    """Projects camera-frame points (``Nx3``, metres) to pixels (``Nx2``)."""
    z = np.maximum(points_cam[:, 2], 1e-6)
    return np.stack(
        [camera.fx * points_cam[:, 0] / z + camera.cx, camera.fy * points_cam[:, 1] / z + camera.cy], axis=1
    )


def transform(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Applies a 4x4 rigid transform to ``Nx3`` points."""
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def invert(matrix: np.ndarray) -> np.ndarray:
    """Inverts a 4x4 rigid transform."""
    inverse = np.eye(4)
    inverse[:3, :3] = matrix[:3, :3].T
    inverse[:3, 3] = -matrix[:3, :3].T @ matrix[:3, 3]
    return inverse


def pose_at(world_from_camera: np.ndarray, frame: int) -> np.ndarray:
    """The camera's 4x4 pose on a frame.

    Args:
        world_from_camera: One 4x4 pose (a camera that stays put) or one per frame (``Nx4x4``).
        frame: The video frame.
    """
    return world_from_camera[frame] if world_from_camera.ndim == 3 else world_from_camera


def inverse_poses(poses: np.ndarray) -> np.ndarray:
    """:func:`invert` of one 4x4 transform or of each of ``Nx4x4``."""
    if poses.ndim == 2:
        return invert(poses)
    return np.stack([invert(p) for p in poses])


def report_camera_from_world(report: dict) -> np.ndarray:
    """camera_from_world of a report: one 4x4, or one per frame (``Nx4x4``) for a camera that moves.

    Raises:
        KeyError: The report has no world pose for the camera.
    """
    camera = report["camera"]
    poses = camera.get("world_from_camera_frames")
    if poses is None:
        poses = camera["world_from_camera"]
    return inverse_poses(np.asarray(poses, float))


def pose_matrix(position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """Builds a 4x4 transform from a position (3,) and a 3x3 rotation."""
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = position
    return matrix


def yaw_rotation(yaw: float) -> np.ndarray:
    """Rotation by ``yaw`` radians about +z."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def orientation(yaw: float, tilt=None) -> np.ndarray:
    """An object's rotation in the world: its yaw about +z, then tilted.

    Args:
        yaw: Radians about world z.
        tilt: ``(tx, ty)``: a rotation vector with a horizontal axis (radians),
            applied after the yaw (it leans the object's z axis away from
            vertical); None for upright.
    """
    rotation = yaw_rotation(yaw)
    if tilt is None or not np.any(tilt):
        return rotation
    axis = np.array([tilt[0], tilt[1], 0.0])
    angle = float(np.linalg.norm(axis))
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]) / angle
    lean = np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k
    return lean @ rotation


def split_orientation(rotation: np.ndarray) -> tuple[float, np.ndarray]:
    """Yaw and tilt of a rotation (the inverse of :func:`orientation`).

    The tilt is the smallest rotation taking world z to the object's z axis;
    what is left is a turn about z.

    Returns:
        ``(yaw, tilt)``: radians, and ``(tx, ty)`` radians.
    """
    up = rotation[:, 2]
    axis = np.array([-up[1], up[0], 0.0])  # z x up
    sine = float(np.linalg.norm(axis))
    angle = float(np.arctan2(sine, up[2]))
    tilt = axis[:2] / sine * angle if sine > 1e-12 else np.zeros(2)
    twist = orientation(0.0, tilt).T @ rotation
    return float(np.arctan2(twist[1, 0], twist[0, 0])), tilt
