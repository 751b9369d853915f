"""What every shape fitter shares: the views an object rests in, the fit's result, and the errors
a fit minimises (silhouette against the masks, distance to the depth points).

The fitters of the built-in shapes (:mod:`.fit`) and of a user's mesh (:mod:`.user_mesh`)
both stand on this module, and neither on the other's internals.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from scipy.optimize import minimize

from ..demo import Camera
from .camera import invert, pose_matrix, yaw_rotation
from .distance import surface_distance
from .shapes import Shape
from .silhouette import mask_box, silhouette_ious, silhouette_polygon

DEPTH_WEIGHT = 0.1
"""Weight of the depth points' mean distance to a profiled shape (capped at DEPTH_CAP, as a fraction of it)."""
DEPTH_CAP = 0.01


@dataclasses.dataclass
class RestView:
    """One frame on which the object rests, for fitting.

    Attributes:
        mask: ``HxW`` bool silhouette (visible part).
        points_world: ``Nx3`` masked depth points in the world frame (metres); may be empty.
        camera_from_world: 4x4.
        from_depth: The points are depth readings (False: a rough guess from the
            silhouette, which seeds the fit but is not fitted to).
        frame: The video frame it shows, where known.
    """

    mask: np.ndarray
    points_world: np.ndarray
    camera_from_world: np.ndarray
    from_depth: bool = True
    frame: int | None = None

    @functools.cached_property
    def box(self) -> tuple[int, int, int, int] | None:
        """The mask's :func:`~.silhouette.mask_box` (a fit asks for it on every try)."""
        return mask_box(self.mask)


@dataclasses.dataclass
class FittedObject:
    """A shape and its resting pose in the world frame.

    Attributes:
        shape: The fitted shape.
        position: Centre of the bounding box, world frame (m), (3,).
        yaw: Rotation about world z (radians).
    """

    shape: Shape
    position: np.ndarray
    yaw: float

    def world_from_object(self) -> np.ndarray:
        """4x4 pose of the object in the world."""
        return pose_matrix(self.position, yaw_rotation(self.yaw))


def _silhouette_error(shape: Shape, position, yaw, views: list[RestView], camera: Camera) -> float:
    """Mean 1 - IoU over the views; views from one camera pose share one projected outline."""
    world_from_object = pose_matrix(np.asarray(position), yaw_rotation(yaw))
    errors = []
    for camera_from_world, masks, boxes in _views_by_pose(views):
        polygon = silhouette_polygon(shape, camera_from_world @ world_from_object, camera)
        errors += [1.0 - iou for iou in silhouette_ious(polygon, masks, boxes=boxes)]
    return float(np.mean(errors))


def _views_by_pose(views: list[RestView]) -> list[tuple[np.ndarray, list[np.ndarray], list]]:
    """The views grouped by camera pose: ``(camera_from_world, masks, their mask boxes)`` per pose."""
    groups: dict[bytes, tuple[np.ndarray, list[np.ndarray], list]] = {}
    for view in views:
        key = np.asarray(view.camera_from_world, float).tobytes()
        group = groups.setdefault(key, (view.camera_from_world, [], []))
        group[1].append(view.mask)
        group[2].append(view.box)
    return list(groups.values())


def depth_sample(views: list[RestView], points: np.ndarray, count: int = 600) -> np.ndarray:
    """A fixed random subset of the depth points, for a fit's depth term (none without depth)."""
    if not all(v.from_depth for v in views):
        return np.zeros((0, 3))
    if len(points) <= count:
        return points
    return points[np.random.default_rng(0).choice(len(points), count, replace=False)]


def _depth_error(shape: Shape, position: np.ndarray, yaw: float, points: np.ndarray) -> float:
    """The depth points' mean distance to the posed shape's surface, capped, weighted to add to a silhouette error.

    The silhouettes of one view trade an object's depth against its height; the
    points on its top and sides settle that.
    """
    if not len(points):
        return 0.0
    c, s = math.cos(yaw), math.sin(yaw)
    offset = points - position
    local = np.c_[c * offset[:, 0] + s * offset[:, 1], -s * offset[:, 0] + c * offset[:, 1], offset[:, 2]]
    gap = np.minimum(np.abs(surface_distance(shape, local)), DEPTH_CAP)
    return DEPTH_WEIGHT * float(gap.mean()) / DEPTH_CAP


def all_points(views: list[RestView]) -> np.ndarray:
    """``Nx3``: every view's depth points (world, m) but the table's around the object (3 mm or lower)."""
    points = [v.points_world for v in views if len(v.points_world)]
    if not points:
        return np.zeros((0, 3))
    cloud = np.concatenate(points)
    return cloud[cloud[:, 2] > 0.003]  # drop the table around the object


def camera_centre(views: list[RestView]) -> np.ndarray:
    """``(3,)``: the first view's camera's centre, world frame (m)."""
    return invert(views[0].camera_from_world)[:3, 3]


def _restarted_minimize(loss, start: np.ndarray, maxiter: int, restarts: int = 2):
    """Nelder-Mead, started again from its answer with a fresh simplex until that stops helping.

    A simplex can collapse along the valley where an object's depth trades
    against its height and stop short of the minimum; a restart opens it again.
    """
    options = {"xatol": 2e-4, "fatol": 1e-4, "maxiter": maxiter}
    result = minimize(loss, start, method="Nelder-Mead", options=options)
    for _ in range(restarts):
        again = minimize(loss, result.x, method="Nelder-Mead", options=options)
        if again.fun > result.fun - 1e-4:
            break
        result = again
    return result
