"""Fitting an object's shape at metric scale, from depth points and silhouettes.

The object rests on the table on the frames used (world frame: z up, table at
z = 0). A first guess comes from the masked depth points (height from the top,
footprint from the points' extent or a circle fit); it is then refined so that
the shape's projected silhouette matches the masks on every frame used
(Nelder-Mead on the shape's centre, yaw and size; a bowl's base radius too).
``auto`` tries a box and a cylinder (a cup or a bowl when the inside is seen
lower than the rim; a plate when it is flat) and keeps the better fit; a hint
that fits badly falls back to a ``mesh`` closed down to the table, with a
warning.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
from scipy.optimize import minimize

from ..demo import Camera
from .camera import invert, pose_matrix, yaw_rotation
from .motion import surface_distance
from .shapes import Shape
from .silhouette import silhouette_ious, silhouette_polygon

BAD_FIT = 0.25
"""Silhouette error (1 - IoU) above which a fit is rejected."""
PROFILE_GAIN = 0.01
"""How much lower a bowl's silhouette error must be than a straight cup's for ``auto`` to choose it."""
DEPTH_WEIGHT = 0.1
"""Weight of the depth points' mean distance to a profiled shape (capped at DEPTH_CAP, as a fraction of it)."""
DEPTH_CAP = 0.01
PLATE_HEIGHT = 0.2
"""A solid round object lower than this fraction of its diameter is a plate (for ``auto``)."""


@dataclasses.dataclass
class RestView:
    """One frame on which the object rests, for fitting.

    Attributes:
        mask: ``HxW`` bool silhouette (visible part).
        points_world: ``Nx3`` masked depth points in the world frame (metres); may be empty.
        camera_from_world: 4x4.
        from_depth: The points are depth readings (False: a rough guess from the
            silhouette, which seeds the fit but is not fitted to).
    """

    mask: np.ndarray
    points_world: np.ndarray
    camera_from_world: np.ndarray
    from_depth: bool = True


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
    for camera_from_world, masks in _views_by_pose(views):
        polygon = silhouette_polygon(shape, camera_from_world @ world_from_object, camera)
        errors += [1.0 - iou for iou in silhouette_ious(polygon, masks)]
    return float(np.mean(errors))


def _views_by_pose(views: list[RestView]) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    groups: dict[bytes, tuple[np.ndarray, list[np.ndarray]]] = {}
    for view in views:
        key = np.asarray(view.camera_from_world, float).tobytes()
        groups.setdefault(key, (view.camera_from_world, []))[1].append(view.mask)
    return list(groups.values())


def _sample(views: list[RestView], points: np.ndarray, count: int = 600) -> np.ndarray:
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


def _all_points(views: list[RestView]) -> np.ndarray:
    points = [v.points_world for v in views if len(v.points_world)]
    if not points:
        return np.zeros((0, 3))
    cloud = np.concatenate(points)
    return cloud[cloud[:, 2] > 0.003]  # drop the table around the object


def _camera_centre(views: list[RestView]) -> np.ndarray:
    return invert(views[0].camera_from_world)[:3, 3]


def _box_guess(points: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float, float]]:
    height = float(np.percentile(points[:, 2], 98))
    top = points[points[:, 2] > 0.5 * height][:, :2].astype(np.float32)
    (cx, cy), (width, length), angle = cv2.minAreaRect(
        top if len(top) >= 5 else points[:, :2].astype(np.float32)
    )
    return (
        np.array([cx, cy, height / 2]),
        math.radians(angle),
        (max(width, 0.005), max(length, 0.005), max(height, 0.005)),
    )


def _circle_fit(xy: np.ndarray) -> tuple[float, float, float]:
    """Least-squares circle (Kasa): returns centre x, y and radius."""
    a = np.c_[2 * xy, np.ones(len(xy))]
    b = (xy**2).sum(axis=1)
    (cx, cy, c), *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(cx), float(cy), float(math.sqrt(max(c + cx * cx + cy * cy, 1e-8)))


def fit_box(views: list[RestView], camera: Camera) -> FittedObject:
    """Fits an upright box resting on the table."""
    points = _all_points(views)
    centre, yaw, (sx, sy, sz) = _box_guess(points)

    sample = _sample(views, points)

    def loss(x):
        shape = Shape("box", (abs(x[3]), abs(x[4]), abs(x[5])))
        position = np.array([x[0], x[1], abs(x[5]) / 2])
        error = _silhouette_error(shape, position, x[2], views, camera)
        return error + _depth_error(shape, position, x[2], sample)

    start = np.array([centre[0], centre[1], yaw, sx, sy, sz])
    result = _restarted_minimize(loss, start, maxiter=600)
    x = result.x
    size = (abs(x[3]), abs(x[4]), abs(x[5]))
    # The same box turned by 90 degrees: keep sx along the yaw axis, yaw in [-45, 45) degrees.
    yaw = float(x[2])
    turns = round(yaw / (math.pi / 2))
    yaw -= turns * math.pi / 2
    if turns % 2:
        size = (size[1], size[0], size[2])
    shape = Shape("box", size, fit_error=float(result.fun))
    return FittedObject(shape, np.array([x[0], x[1], size[2] / 2]), yaw)


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


def _cylinder_guess(points: np.ndarray, camera_world: np.ndarray) -> tuple[float, float, float, float, bool]:
    """Circle and height from the points; ``hollow`` when the inside is seen.

    ``camera_world`` is the camera centre in the world frame: a cup shows its
    inner wall on the far side (seen through the opening, below the rim),
    where a solid cylinder shows nothing below its top face.
    """
    height = float(np.percentile(points[:, 2], 98))
    rim = points[points[:, 2] > 0.85 * height]
    cx, cy, radius = _circle_fit((rim if len(rim) >= 10 else points)[:, :2])
    away = np.array([cx, cy]) - camera_world[:2]
    away /= max(np.linalg.norm(away), 1e-9)
    offsets = points[:, :2] - [cx, cy]
    far_side = offsets @ away > 0.3 * radius
    far_low = int((far_side & (points[:, 2] < 0.75 * height)).sum())
    hollow = far_low >= 20 and far_low > 0.02 * len(points)
    return cx, cy, radius, height, hollow


def fit_cylinder(views: list[RestView], camera: Camera, kind: str = "cylinder") -> FittedObject:
    """Fits an upright cylinder (``kind`` = cylinder or plate), open cup (``cup``) or bowl (``bowl``)."""
    points = _all_points(views)
    cx, cy, radius, height, _ = _cylinder_guess(points, _camera_centre(views))
    if kind == "bowl":
        # From the rim the depth shows: a straight wall's fit would make a bowl too low.
        return _fit_bowl(views, camera, points, (cx, cy, radius, height))

    def loss(x):
        shape = Shape("cylinder", (2 * abs(x[2]), 2 * abs(x[2]), abs(x[3])))
        return _silhouette_error(shape, (x[0], x[1], abs(x[3]) / 2), 0.0, views, camera)

    start = np.array([cx, cy, radius, height])
    result = _restarted_minimize(loss, start, maxiter=400)
    cx, cy, radius, height = result.x[0], result.x[1], abs(result.x[2]), abs(result.x[3])
    params = _cup_params(points, cx, cy, radius, height) if kind == "cup" else {"radius": radius}
    shape = Shape(kind, (2 * radius, 2 * radius, height), params, fit_error=float(result.fun))
    return FittedObject(shape, np.array([cx, cy, height / 2]), 0.0)


def _fit_bowl(
    views: list[RestView], camera: Camera, points: np.ndarray, start: tuple[float, float, float, float]
) -> FittedObject:
    """Fits a bowl's profile: centre, rim radius, height and base radius.

    The base radius starts from the outer wall's points low down (the profile
    there, solved for the base), then the silhouettes and the depth refine all five.
    """
    cx, cy, radius, height = start
    first = _cup_params(points, cx, cy, radius, height)
    wall, bottom = first["wall_thickness"], first["bottom_thickness"]
    low = points[(points[:, 2] > 0.08 * height) & (points[:, 2] < 0.4 * height)]
    base = 0.6 * radius
    if len(low) >= 20:
        t = float(np.median(low[:, 2])) / height
        bulge = math.sqrt(1.0 - (1.0 - t) ** 2)
        seen = float(np.percentile(np.hypot(low[:, 0] - cx, low[:, 1] - cy), 90))
        base = (seen - radius * bulge) / max(1.0 - bulge, 0.05)
    base = float(np.clip(base, 0.2 * radius, radius))

    def shape_of(x):
        rim, tall, foot = abs(x[2]), abs(x[3]), float(np.clip(abs(x[4]), 0.05 * abs(x[2]), abs(x[2])))
        return Shape("bowl", (2 * rim, 2 * rim, tall), {"outer_radius": rim, "base_radius": foot})

    sample = _sample(views, points)

    def loss(x):
        shape = shape_of(x)
        shape.params.update(wall_thickness=wall, bottom_thickness=bottom)
        position = np.array([x[0], x[1], abs(x[3]) / 2])
        error = _silhouette_error(shape, position, 0.0, views, camera)
        return error + _depth_error(shape, position, 0.0, sample)

    result = _restarted_minimize(loss, np.array([cx, cy, radius, height, base]), maxiter=500)
    fitted = shape_of(result.x)
    cx, cy = float(result.x[0]), float(result.x[1])
    rim, tall = fitted.params["outer_radius"], fitted.size[2]
    params = {**_cup_params(points, cx, cy, rim, tall), "base_radius": fitted.params["base_radius"]}
    shape = Shape("bowl", fitted.size, params, fit_error=float(result.fun))
    return FittedObject(shape, np.array([cx, cy, tall / 2]), 0.0)


def _cup_params(points: np.ndarray, cx: float, cy: float, radius: float, height: float) -> dict[str, float]:
    wall = float(np.clip(0.09 * radius, 0.003, 0.008))
    inside = points[np.hypot(points[:, 0] - cx, points[:, 1] - cy) < 0.6 * radius]
    bottom = (
        float(np.clip(np.percentile(inside[:, 2], 10), 0.003, 0.3 * height))
        if len(inside) >= 20
        else 0.08 * height
    )
    return {
        "outer_radius": radius,
        "inner_radius": radius - wall,
        "wall_thickness": wall,
        "bottom_thickness": bottom,
    }


def fit_mesh(views: list[RestView]) -> FittedObject:
    """A convex hull of the points, closed down to the table (the fallback)."""
    points = _all_points(views)
    footprint = points.copy()
    footprint[:, 2] = 0.0
    cloud = np.concatenate([points, footprint])
    low, high = cloud.min(axis=0), cloud.max(axis=0)
    centre = (low + high) / 2
    shape = Shape("mesh", tuple(float(v) for v in high - low), vertices=cloud - centre)
    return FittedObject(shape, centre, 0.0)


def fit_shape(hint: str, views: list[RestView], camera: Camera) -> tuple[FittedObject, str | None]:
    """Fits the shape named by the prompt's hint (or chooses one for ``auto``).

    Args:
        hint: ``auto | box | cylinder | cup | bowl | plate | mesh``.
        views: Frames on which the object rests, with masks and depth points.
        camera: Intrinsics.

    Returns:
        The fit, and a warning message when the hint did not fit (None otherwise).
    """
    if hint == "mesh":
        return fit_mesh(views), None
    if hint == "box":
        fitted = fit_box(views, camera)
    elif hint in ("cylinder", "cup", "bowl", "plate"):
        fitted = fit_cylinder(views, camera, hint)
    else:
        box = fit_box(views, camera)
        hollow = _cylinder_guess(_all_points(views), _camera_centre(views))[4]
        round_ = fit_cylinder(views, camera, "cup" if hollow else "cylinder")
        if hollow:
            # A bowl has one parameter more (its base radius): it must fit clearly better.
            bowl = fit_cylinder(views, camera, "bowl")
            if bowl.shape.fit_error < round_.shape.fit_error - PROFILE_GAIN:
                round_ = bowl
        elif round_.shape.size[2] < PLATE_HEIGHT * round_.shape.size[0]:
            round_.shape.kind = "plate"
        fitted = box if box.shape.fit_error <= round_.shape.fit_error else round_
    if fitted.shape.fit_error > BAD_FIT:
        warning = (
            f"the '{hint}' shape fits badly (silhouette error {fitted.shape.fit_error:.2f}); "
            "using a mesh closed down to the table instead"
        )
        mesh = fit_mesh(views)
        mesh.shape.fit_error = fitted.shape.fit_error
        return mesh, warning
    return fitted, None


def camera_from_world_of(world_from_camera: np.ndarray) -> np.ndarray:
    """Shorthand for the inverse pose."""
    return invert(world_from_camera)
