"""The table: a plane fitted to depth, and the world frame built on it.

The world frame of the contract has z up (the table normal), gravity -z and
z = 0 on the table top. :func:`fit_table` finds the plane with RANSAC on depth
points outside the objects' masks over several frames, refines it by least
squares on the inliers and measures the table's extent.
:func:`world_from_table` builds the world frame: origin where the optical axis
meets the table (or the foot of the camera if it looks away), x along the
camera's x projected on the table.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..demo import Camera
from ..errors import Real2GymError
from .camera import back_project, invert, transform

INLIER_DISTANCE = 0.006
"""Points within this many metres of the plane count as on it (noise grows with depth)."""


class GeometryError(Real2GymError):
    """The geometry stage cannot continue with this input."""


@dataclasses.dataclass
class Table:
    """The support plane ``normal_cam . p + offset_cam = 0`` in the camera frame.

    Attributes:
        normal_cam: Unit normal pointing up, out of the table (towards the camera's side).
        offset_cam: The plane offset in metres (the camera's height above the table).
        extent_world: ``[xmin, ymin, xmax, ymax]`` in metres of the seen table top, world frame.
        inlier_rms: RMS distance of the inliers to the plane, metres.
        source: ``"depth"`` or ``"world_from_camera"``.
    """

    normal_cam: np.ndarray
    offset_cam: float
    extent_world: list[float] = dataclasses.field(default_factory=lambda: [-0.5, -0.5, 0.5, 0.5])
    inlier_rms: float = 0.0
    source: str = "depth"

    def to_report(self) -> dict:
        """The report's ``table`` entry."""
        return {
            "normal_cam": [round(float(v), 6) for v in self.normal_cam],
            "offset_cam": round(float(self.offset_cam), 6),
            "extent_world": [round(float(v), 4) for v in self.extent_world],
            "inlier_rms": round(float(self.inlier_rms), 6),
            "source": self.source,
        }


def _plane_from_points(points: np.ndarray) -> tuple[np.ndarray, float]:
    centre = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - centre, full_matrices=False)
    normal = vt[-1]
    return normal, -float(normal @ centre)


def fit_plane_ransac(
    points: np.ndarray, rng: np.random.Generator, iterations: int = 300
) -> tuple[np.ndarray, float, np.ndarray]:
    """Fits the dominant plane of camera-frame points.

    Args:
        points: ``Nx3`` metres, camera frame.
        rng: Random generator (seeded by the caller for repeatable runs).
        iterations: RANSAC hypotheses.

    Returns:
        ``(normal, offset, inlier_mask)`` with the normal pointing towards the
        camera (offset > 0).
    """
    best_count, best = -1, None
    threshold = INLIER_DISTANCE + 0.004 * np.median(points[:, 2])
    for _ in range(iterations):
        sample = points[rng.choice(len(points), 3, replace=False)]
        normal = np.cross(sample[1] - sample[0], sample[2] - sample[0])
        length = np.linalg.norm(normal)
        if length < 1e-9:
            continue
        normal /= length
        offset = -float(normal @ sample[0])
        count = int((np.abs(points @ normal + offset) < threshold).sum())
        if count > best_count:
            best_count, best = count, (normal, offset)
    if best is None:
        raise GeometryError("the depth points are degenerate (all on a line); the table cannot be fitted")
    normal, offset = best
    for _ in range(3):  # least-squares refinement on the inliers
        inliers = np.abs(points @ normal + offset) < threshold
        normal, offset = _plane_from_points(points[inliers])
    if offset < 0:
        normal, offset = -normal, -offset
    inliers = np.abs(points @ normal + offset) < threshold
    return normal, offset, inliers


def world_from_table(normal_cam: np.ndarray, offset_cam: float) -> np.ndarray:
    """Builds world_from_camera for a table plane (z up, z = 0 on the table).

    Args:
        normal_cam: Unit plane normal in the camera frame, pointing up.
        offset_cam: Plane offset (metres), positive: the camera is above the table.

    Returns:
        4x4 world_from_camera.
    """
    z_axis = normal_cam / np.linalg.norm(normal_cam)
    forward = np.array([0.0, 0.0, 1.0])
    denominator = float(z_axis @ forward)
    if denominator < -1e-3:  # the optical axis meets the table in front of the camera
        origin_cam = forward * (-offset_cam / denominator)
    else:
        origin_cam = -z_axis * offset_cam
    x_axis = np.array([1.0, 0.0, 0.0]) - z_axis * z_axis[0]
    x_axis /= np.linalg.norm(x_axis)
    y_axis = np.cross(z_axis, x_axis)
    camera_from_world = np.eye(4)
    camera_from_world[:3, 0], camera_from_world[:3, 1], camera_from_world[:3, 2] = x_axis, y_axis, z_axis
    camera_from_world[:3, 3] = origin_cam
    return invert(camera_from_world)


def table_from_world_pose(world_from_camera: np.ndarray) -> Table:
    """The table z = 0 of a given world frame, in camera coordinates."""
    camera_from_world = invert(world_from_camera)
    normal = camera_from_world[:3, 2]
    offset = -float(normal @ camera_from_world[:3, 3])
    return Table(normal_cam=normal, offset_cam=offset, source="world_from_camera")


def fit_table(
    camera: Camera,
    depth_frames: list[np.ndarray],
    object_masks: list[np.ndarray],
    rng: np.random.Generator | None = None,
) -> tuple[Table, np.ndarray]:
    """Fits the table to depth outside the objects, over several frames.

    Args:
        camera: Intrinsics.
        depth_frames: ``HxW`` float32 metres per chosen frame.
        object_masks: ``HxW`` bool per chosen frame, True on any object (excluded).
        rng: Random generator; a fixed seed when None.

    Returns:
        The table and world_from_camera.

    Raises:
        GeometryError: Too few depth readings, or no plane dominates them.
    """
    rng = rng or np.random.default_rng(0)
    points = []
    for depth, mask in zip(depth_frames, object_masks, strict=True):
        points.append(back_project(camera, depth, ~mask, step=4))
    cloud = np.concatenate(points) if points else np.zeros((0, 3))
    if len(cloud) < 200:
        raise GeometryError(
            f"only {len(cloud)} depth readings outside the objects; the table cannot be fitted "
            "(check depth/ and depth_scale in camera.json)"
        )
    if len(cloud) > 40000:
        cloud = cloud[rng.choice(len(cloud), 40000, replace=False)]
    normal, offset, inliers = fit_plane_ransac(cloud, rng)
    if inliers.mean() < 0.25:
        raise GeometryError(
            f"no table plane found: the best plane holds only {inliers.mean():.0%} of the depth points"
        )
    world_from_camera = world_from_table(normal, offset)
    on_table = transform(world_from_camera, cloud[inliers])
    extent = np.concatenate(
        [np.percentile(on_table[:, :2], 1, axis=0), np.percentile(on_table[:, :2], 99, axis=0)]
    )
    rms = float(np.sqrt(np.mean((cloud[inliers] @ normal + offset) ** 2)))
    return Table(normal, offset, extent.tolist(), rms, "depth"), world_from_camera
