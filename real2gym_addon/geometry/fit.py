"""Fitting an object's shape at metric scale, from depth points and silhouettes.

The object rests on the table on the frames used (world frame: z up, table at
z = 0). A first guess comes from the masked depth points (height from the top,
footprint from the points' extent or a circle fit); it is then refined so that
the shape's projected silhouette matches the masks on every frame used
(Nelder-Mead on the shape's centre, yaw and size; a bowl's base radius too).
``auto`` tries a box and a cylinder (a cup or a bowl when the inside is seen
lower than the rim, or a handle or a taper shows; a plate when it is flat) and keeps the better fit; a hint
that fits badly falls back to a ``mesh`` closed down to the table, with a
warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np

from ..demo import Camera
from . import dish_rack_fit, plate_fit, shelf_fit, wall_rack_fit
from .camera import invert, yaw_rotation
from .fit_base import (
    DEPTH_CAP,
    DEPTH_WEIGHT,
    FittedObject,
    RestView,
    _depth_error,
    _restarted_minimize,
    _silhouette_error,
    all_points,
    camera_centre,
    depth_sample,
)
from .kinds import cabinet, door, drawer, shelf
from .rack_fit import RackFitError, fit_mug_tree
from .shape_kinds import (
    AUTO,
    BOWL,
    BOX,
    CABINET,
    CUP,
    CYLINDER,
    DISH_RACK,
    DOOR,
    DRAWER,
    MESH,
    MUG,
    PLATE,
    RACK,  # fmt: skip
    SHELF,
)
from .shapes import Shape
from .user_mesh import fit_user_mesh

BAD_FIT = 0.25
"""Silhouette error (1 - IoU) above which a fit is rejected."""
PROFILE_GAIN = 0.01
"""How much lower a bowl's silhouette error must be than a straight cup's for ``auto`` to choose it."""
PLATE_HEIGHT = 0.2
"""A solid round object lower than this fraction of its diameter is a plate (for ``auto``)."""
HOLLOW_DEPTH = 0.015
"""m: an inside seen lower than the rim by less than this is depth noise on a flat top (a plate)."""
DISH_MIN = 0.003
"""m: a plate whose middle is this much lower than its edge has a raised rim."""
DISH_BINS = 10
"""Rings along a plate's radius in which its top's height is measured."""
HANDLE_GAP = 0.004
"""m: a depth point this far outside a cup's wall may be on a handle."""
HANDLE_SCATTER = 3.0
"""... or this many times the scatter (robust sigma) of the wall's points about the wall, if more."""
HANDLE_MIN_REACH = 0.01
"""m: a handle sticks out of the wall at least this far (else there is none)."""
HANDLE_SECTORS = 36
"""Directions about a cup's axis in which its wall's radius is measured (for finding a handle)."""
HANDLE_MIN_POINTS = 25
"""Depth points a handle needs."""
HANDLE_ONE_SIDE = 0.8
"""Least mean resultant length of the outside points' directions: a handle is on one side."""
HANDLE_MIN_SPAN = 0.25
"""Least share of the cup's height over which the outside points spread."""
TAPERED = 0.1
"""A round object whose wall's radius low down differs from high up by more than this fraction is a cup
(``auto``)."""
STRAIGHT_WALL = 0.03
"""A cup whose base radius is within this fraction of its rim radius is kept straight."""


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


def _outside_trimmed_circle(xy: np.ndarray, rounds: int = 3) -> tuple[float, float, float]:
    """:func:`_circle_fit`, fitted again without the points well outside the circle (a handle's).

    Points inside it (a cup's inner wall seen through the opening) stay.
    """
    cx, cy, radius = _circle_fit(xy)
    for _ in range(rounds):
        residual = np.hypot(xy[:, 0] - cx, xy[:, 1] - cy) - radius
        spread = 1.4826 * float(np.median(np.abs(residual - np.median(residual))))
        keep = residual < max(3.0 * spread, HANDLE_GAP)
        if keep.all() or keep.sum() < 10:
            break
        cx, cy, radius = _circle_fit(xy[keep])
    return cx, cy, radius


def fit_box(views: list[RestView], camera: Camera) -> FittedObject:
    """Fits an upright box resting on the table."""
    points = all_points(views)
    centre, yaw, (sx, sy, sz) = _box_guess(points)

    sample = depth_sample(views, points)

    def loss(x):
        shape = Shape(BOX.name, (abs(x[3]), abs(x[4]), abs(x[5])))
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
    shape = Shape(BOX.name, size, fit_error=float(result.fun))
    return FittedObject(shape, np.array([x[0], x[1], size[2] / 2]), yaw)


def _cylinder_guess(points: np.ndarray, camera_world: np.ndarray) -> tuple[float, float, float, float, bool]:
    """Circle and height from the points; ``hollow`` when the inside is seen.

    ``camera_world`` is the camera centre in the world frame: a cup shows its
    inner wall on the far side (seen through the opening, below the rim),
    where a solid cylinder shows nothing below its top face.
    """
    height = float(np.percentile(points[:, 2], 98))
    rim = points[points[:, 2] > 0.85 * height]
    cx, cy, radius = _outside_trimmed_circle((rim if len(rim) >= 10 else points)[:, :2])
    away = np.array([cx, cy]) - camera_world[:2]
    away /= max(np.linalg.norm(away), 1e-9)
    offsets = points[:, :2] - [cx, cy]
    far_side = offsets @ away > 0.3 * radius
    far_low = int((far_side & (points[:, 2] < min(0.75 * height, height - HOLLOW_DEPTH))).sum())
    hollow = far_low >= 20 and far_low > 0.02 * len(points)
    return cx, cy, radius, height, hollow


def fit_cylinder(views: list[RestView], camera: Camera, kind: str = CYLINDER.name) -> FittedObject:
    """Fits an upright cylinder (``kind`` = cylinder or plate), open cup (``cup``; ``mug``: a cup with a
    handle) or bowl (``bowl``)."""
    points = all_points(views)
    cx, cy, radius, height, _ = _cylinder_guess(points, camera_centre(views))
    if kind == BOWL.name:
        # From the rim the depth shows: a straight wall's fit would make a bowl too low.
        return _fit_bowl(views, camera, points, (cx, cy, radius, height))
    if kind in (CUP.name, MUG.name):
        return _fit_cup(views, camera, points, (cx, cy, radius, height), needs_handle=kind == MUG.name)

    sample = depth_sample(views, points)

    def loss(x):
        # The depth settles the height, which a flat object's silhouette hardly shows (a plate's).
        shape = Shape(CYLINDER.name, (2 * abs(x[2]), 2 * abs(x[2]), abs(x[3])))
        position = np.array([x[0], x[1], abs(x[3]) / 2])
        return _silhouette_error(shape, position, 0.0, views, camera) + _depth_error(
            shape, position, 0.0, sample
        )

    start = np.array([cx, cy, radius, height])
    result = _restarted_minimize(loss, start, maxiter=400)
    cx, cy, radius, height = result.x[0], result.x[1], abs(result.x[2]), abs(result.x[3])
    shape = Shape(kind, (2 * radius, 2 * radius, height), {"radius": radius}, fit_error=float(result.fun))
    fitted = FittedObject(shape, np.array([cx, cy, height / 2]), 0.0)
    return _fit_plate(views, camera, fitted) if kind == PLATE.name else fitted


def _fit_plate(views: list[RestView], camera: Camera, flat: FittedObject) -> FittedObject:
    """A flat round fit as a plate; with a raised rim where the depth shows its middle lower than its edge.

    The rim's width and the dish's depth come from the top's height along the
    radius; the centre, radius and height are then fitted again with the dish in
    the depth term (a flat top between rim and middle would be too low).
    """
    points = all_points(views)
    centre, radius, height = flat.position[:2], flat.shape.size[0] / 2, flat.shape.size[2]
    dish = _dish_guess(points, centre, radius, height)
    if dish is None:
        shape = Shape(PLATE.name, flat.shape.size, {"radius": radius}, fit_error=flat.shape.fit_error)
        return FittedObject(shape, flat.position, 0.0)
    width, depth = dish
    sample = depth_sample(views, points)

    def shape_of(x):
        rim, tall = abs(x[2]), abs(x[3])
        params = {"radius": rim, "rim_width": min(width, 0.5 * rim), "dish_depth": min(depth, 0.8 * tall)}
        return Shape(PLATE.name, (2 * rim, 2 * rim, tall), params)

    def loss(x):
        shape, position = shape_of(x), np.array([x[0], x[1], abs(x[3]) / 2])
        error = _silhouette_error(shape, position, 0.0, views, camera)
        return error + _depth_error(shape.dished(), position, 0.0, sample)

    top = height + depth / 2  # the flat fit split the difference between rim and middle
    result = _restarted_minimize(loss, np.array([*centre, radius, top]), maxiter=400)
    shape = shape_of(result.x)
    shape.fit_error = float(result.fun)
    return FittedObject(shape, np.array([result.x[0], result.x[1], shape.size[2] / 2]), 0.0)


def _dish_guess(
    points: np.ndarray, centre: np.ndarray, radius: float, height: float
) -> tuple[float, float] | None:
    """A plate's raised rim from its top's height along the radius: ``(rim width, dish depth)`` in metres,
    or None where the middle is not :data:`DISH_MIN` lower than the edge (or too little of the top is seen)."""
    distance = np.hypot(points[:, 0] - centre[0], points[:, 1] - centre[1])
    top = (points[:, 2] > 0.3 * height) & (distance < radius)
    edges = np.linspace(0.0, radius, DISH_BINS + 1)
    bins = np.digitize(distance[top], edges) - 1
    heights = np.array([np.median(points[top][bins == k, 2]) if (bins == k).sum() >= 10 else np.nan
                        for k in range(DISH_BINS)])  # fmt: skip
    middle, rim = heights[: DISH_BINS // 2], heights[int(0.6 * DISH_BINS) :]
    if np.isnan(middle).all() or np.isnan(rim).all():
        return None
    low, high = float(np.nanmedian(middle)), float(np.nanmax(rim))
    if high - low < DISH_MIN:
        return None
    risen = np.nonzero(heights > (low + high) / 2)[0]
    width = radius - float(edges[risen[0]]) if len(risen) else 0.1 * radius
    return float(np.clip(width, 0.005, 0.5 * radius)), high - low


def _fit_cup(
    views: list[RestView],
    camera: Camera,
    points: np.ndarray,
    start: tuple[float, float, float, float],
    needs_handle: bool = False,
) -> FittedObject:
    """Fits a cup: centre, rim and base radii (a taper), height, and a handle where the depth shows one.

    The handle (its side, outer edge, height span and width) comes from the
    depth points outside the wall and stays put while the silhouettes and the
    depth refine the cup around it.
    """
    cx, cy, radius, height = start
    wall_and_bottom = _cup_params(points, cx, cy, radius, height)
    base = _base_radius_guess(points, cx, cy, radius, height)
    handle = _find_handle(points, cx, cy, radius, base, height, relaxed=needs_handle)
    yaw = handle["yaw"] if handle else 0.0
    direction = np.array([math.cos(yaw), math.sin(yaw)])
    if handle:  # the rim's circle fit mixes the inner wall in; the envelope is the outer wall
        base, radius = base * handle["wall"] / radius, handle["wall"]
        # The handle's outer edge as the depth saw it: a convex outline would trade it for the gaps beside it.
        tip = np.array([cx, cy]) + handle["reach"] * direction
    sample = depth_sample(views, points)

    def shape_of(x):
        rim, tall = abs(x[2]), abs(x[3])
        params = {**wall_and_bottom, "outer_radius": rim, "inner_radius": rim - wall_and_bottom["wall_thickness"],
                  "base_radius": float(np.clip(abs(x[4]), 0.5 * rim, 1.5 * rim))}  # fmt: skip
        if handle:
            reach = float(np.dot(tip - x[:2], direction))
            params.update(_handle_params(handle, tall, max(rim, params["base_radius"]), reach))
        shape = Shape(CUP.name, (0.0, 0.0, tall), params)
        shape.size = shape.bounding_size()
        return shape

    def position_of(shape, x):
        axis = np.array([x[0], x[1], abs(x[3]) / 2])
        return axis - yaw_rotation(yaw) @ shape.axis_offset()

    def loss(x):
        shape = shape_of(x)
        position = position_of(shape, x)
        return _silhouette_error(shape, position, yaw, views, camera) + _depth_error(
            shape, position, yaw, sample
        )

    result = _restarted_minimize(loss, np.array([cx, cy, radius, height, base]), maxiter=600)
    # The wall read again about the fitted axis, rim and height (from the first guess's, 3 cm off a socket's
    # 4 cm rim, the points inside its hole were mixed with its top): the silhouettes do not see it.
    rim = abs(result.x[2])
    wall_and_bottom["wall_thickness"] = _rim_wall(points, result.x[0], result.x[1], rim, abs(result.x[3]),
                                                  _thin_wall(rim))  # fmt: skip
    shape = shape_of(result.x)
    if (
        abs(shape.params["base_radius"] - shape.params["outer_radius"])
        < STRAIGHT_WALL * shape.params["outer_radius"]
    ):
        del shape.params["base_radius"]
        shape.size = shape.bounding_size()
    shape.fit_error = float(result.fun)
    return FittedObject(shape, position_of(shape, result.x), float(yaw))


def _base_radius_guess(points: np.ndarray, cx: float, cy: float, radius: float, height: float) -> float:
    """The outer radius at the bottom, from the outer wall's points low down (a straight line to the rim)."""
    distance = np.hypot(points[:, 0] - cx, points[:, 1] - cy)
    low = (points[:, 2] > 0.05 * height) & (points[:, 2] < 0.4 * height) & (distance < 1.5 * radius)
    if low.sum() < 20:
        return radius
    t = float(np.median(points[low, 2])) / height
    seen = float(np.median(np.sort(distance[low])[-max(10, low.sum() // 5) :]))
    return float(np.clip((seen - t * radius) / max(1.0 - t, 0.05), 0.5 * radius, 1.5 * radius))


def _wall_radius(points: np.ndarray, cx: float, cy: float, z0: float, z1: float) -> float | None:
    """The outer wall's radius between heights z0 and z1 (m): the median over directions of the points'
    outer envelope there (each direction's 95th percentile of distance from the axis); None if unseen."""
    band = points[(points[:, 2] > z0) & (points[:, 2] < z1)]
    offset = band[:, :2] - [cx, cy]
    distance = np.hypot(offset[:, 0], offset[:, 1])
    sectors = ((np.arctan2(offset[:, 1], offset[:, 0]) + math.pi) / (2 * math.pi) * HANDLE_SECTORS).astype(
        int
    )
    envelope = [
        np.percentile(distance[sectors == k], 95) for k in range(HANDLE_SECTORS) if (sectors == k).sum() >= 10
    ]
    return float(np.median(envelope)) if envelope else None


def _is_tapered(points: np.ndarray, cx: float, cy: float, height: float) -> bool:
    """True when the wall is clearly wider at the top than at the bottom, or narrower (by :data:`TAPERED`).

    Compares the wall's radius over the lowest and the highest thirds of the height; a flat object
    (lower than :data:`PLATE_HEIGHT` of its width) has too little wall to tell.
    """
    low = _wall_radius(points, cx, cy, 0.05 * height, 0.35 * height)
    high = _wall_radius(points, cx, cy, 0.65 * height, 0.95 * height)
    if low is None or high is None or height < PLATE_HEIGHT * 2 * max(low, high):
        return False
    return abs(high - low) > TAPERED * max(low, high)


def _find_handle(
    points: np.ndarray, cx: float, cy: float, rim: float, base: float, height: float, relaxed: bool = False
) -> dict | None:
    """A handle from the depth points outside a cup's wall, or None when the evidence is unclear.

    The wall's radius is the median over directions of the points' outer
    envelope (each direction's 95th percentile of distance from the axis); a
    handle is :data:`HANDLE_MIN_POINTS` points beyond it by :data:`HANDLE_GAP`,
    on one side (their directions' mean resultant length at least
    :data:`HANDLE_ONE_SIDE`), over :data:`HANDLE_MIN_SPAN` of the height,
    reaching :data:`HANDLE_MIN_REACH` out. ``relaxed`` (the prompt said ``mug``)
    halves the counts, spans and reach.

    Returns:
        ``yaw`` (its direction about world z, radians), ``reach`` (m from the
        axis), ``bottom`` and ``top`` (m above the table), ``width`` (m) and
        ``wall`` (the wall's radius at the rim, m), or None.
    """
    share = 0.5 if relaxed else 1.0
    offset = points[:, :2] - [cx, cy]
    distance = np.hypot(offset[:, 0], offset[:, 1])
    rim = _wall_radius(points, cx, cy, -np.inf, np.inf)
    if rim is None:
        return None
    base = min(base, rim)
    wall = base + (rim - base) * np.clip(points[:, 2] / height, 0.0, 1.0)
    # Noisy depth scatters the wall's points outward too: a handle must stand out of that scatter.
    spread = 1.4826 * float(np.median(np.abs(distance - wall)))
    gap = max(HANDLE_GAP, HANDLE_SCATTER * spread)
    outside = (distance - wall > gap) & (points[:, 2] > 0.05 * height) & (distance < 3.0 * rim)
    if outside.sum() < HANDLE_MIN_POINTS * share:
        return None
    directions = offset[outside] / distance[outside, None]
    mean = directions.mean(axis=0)
    if np.linalg.norm(mean) < HANDLE_ONE_SIDE * (0.8 if relaxed else 1.0):
        return None
    mean /= np.linalg.norm(mean)
    on_side = directions @ mean > math.cos(math.radians(50))
    chosen = points[outside][on_side]
    reach = float(np.percentile(distance[outside][on_side], 99))
    bottom, top = (float(v) for v in np.percentile(chosen[:, 2], [2, 98]))
    if reach - rim < max(HANDLE_MIN_REACH * share, gap) or top - bottom < HANDLE_MIN_SPAN * share * height:
        return None
    across = offset[outside][on_side] @ np.array([-mean[1], mean[0]])
    width = float(np.clip(np.percentile(across, 95) - np.percentile(across, 5), 0.006, rim))
    return {"yaw": math.atan2(mean[1], mean[0]), "reach": reach, "bottom": bottom, "top": min(top, height),
            "width": width, "wall": rim}  # fmt: skip


def _handle_params(handle: dict, height: float, widest: float, reach: float) -> dict[str, float]:
    """A found handle as shape parameters (:data:`~.shapes.HANDLE_KEYS`), its reach as given."""
    reach = max(reach, widest + 0.5 * HANDLE_MIN_REACH)
    top = min(handle["top"], height)
    bottom = min(handle["bottom"], top - 0.01)
    thickness = float(np.clip(0.3 * (reach - widest), 0.004, min(0.012, (top - bottom) / 3)))
    return {"handle_reach": reach, "handle_bottom": max(bottom, 0.0), "handle_top": top,
            "handle_thickness": thickness, "handle_width": handle["width"]}  # fmt: skip


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
        return Shape(BOWL.name, (2 * rim, 2 * rim, tall), {"outer_radius": rim, "base_radius": foot})

    sample = depth_sample(views, points)

    def loss(x):
        shape = shape_of(x)
        shape.params.update(wall_thickness=wall, bottom_thickness=bottom)
        position = np.array([x[0], x[1], abs(x[3]) / 2])
        error = _silhouette_error(shape, position, 0.0, views, camera)
        return error + _depth_error(shape, position, 0.0, sample)

    # The profile's loss has shallow minima where the height trades against the centre (the depth
    # sees one side of the rim): starts a tenth lower and higher too, the best kept.
    starts = [np.array([cx, cy, radius, height * scale, base]) for scale in (1.0, 0.9, 1.1)]
    result = min((_restarted_minimize(loss, start, maxiter=500) for start in starts), key=lambda r: r.fun)
    fitted = shape_of(result.x)
    cx, cy = float(result.x[0]), float(result.x[1])
    rim, tall = fitted.params["outer_radius"], fitted.size[2]
    params = {**_cup_params(points, cx, cy, rim, tall), "base_radius": fitted.params["base_radius"]}
    shape = Shape(BOWL.name, fitted.size, params, fit_error=float(result.fun))
    return FittedObject(shape, np.array([cx, cy, tall / 2]), 0.0)


BELOW_RIM = 0.01
"""m: depth points this far below a container's top are inside it, not on its rim's top face with its noise."""
RIM_POINTS = 30
"""Points seen inside a container's opening needed before its wall is read from them ..."""
WALL_BIN = 0.002
"""m: the rings (about the axis) in which they are counted ..."""
WALL_GAP = 0.006
"""m: ... and the width of empty rings that parts the hole's points from the outer wall's."""
HOLE_WALL_SEEN = 0.6
"""The hole's own wall must show above this share of the container's height: an inner group of points all
low down is a thin cup's bottom seen past its rim (its far wall hidden), which read as a 6 mm hole."""
THICK_WALL_GAIN = 0.002
"""... and how much wider (m) than the default wall it must reach inwards to be read so."""


def _thin_wall(radius: float) -> float:
    """m: a container's wall where the depth does not show it thick: 9 % of its rim's radius, 3 to 8 mm."""
    return float(np.clip(0.09 * radius, 0.003, 0.008))


def _rim_wall(
    points: np.ndarray, cx: float, cy: float, radius: float, height: float, default: float
) -> float:
    """m: the wall's thickness where the depth shows it is thick (a socket's round hole in a solid block, a
    thick-walled mug), else ``default``.

    The points seen inside the opening (1 cm below the rim: its far wall and its bottom) lie within the hole's
    radius; the outer wall's, scattered inwards by depth noise along oblique rays, lie near the rim's. Where a
    gap of :data:`WALL_GAP` with no points parts the two, and the inner group reaches up the hole's wall, the
    hole's edge is the median distance from the axis of its points high up (above :data:`HOLE_WALL_SEEN` of
    the height: on the hole's wall, its noise either side of it; lower down the bottom's lie inside it). Their
    95th percentile, taken before, read the noise's far side: four generated sockets' holes 1.8-3.2 mm wide,
    their median -0.3 to +1.8 mm. A thin wall leaves no such gap (a thick wall read as thin let a peg 4 mm
    wider than its socket's hole drop in).
    """
    reach = np.hypot(points[:, 0] - cx, points[:, 1] - cy)
    inside_at = (points[:, 2] < height - BELOW_RIM) & (points[:, 2] > 0.003) & (reach < radius)
    inside, heights = reach[inside_at], points[:, 2]
    if len(inside) < RIM_POINTS:
        return default
    edges = np.arange(0.0, radius + WALL_BIN, WALL_BIN)
    counts, _ = np.histogram(inside, edges)
    occupied = counts >= max(2, 0.02 * len(inside))
    if not occupied.any():
        return default
    first = int(np.argmax(occupied))
    gap = int(round(WALL_GAP / WALL_BIN))
    for i in range(first, len(occupied) - gap):
        if not occupied[i : i + gap].any():
            hole = inside[inside < edges[i]]
            high = heights[inside_at][inside < edges[i]] > HOLE_WALL_SEEN * height
            if high.sum() < RIM_POINTS // 3:
                return default  # the inner group is a thin cup's bottom seen past its rim, not a hole's wall
            wall = radius - float(np.median(hole[high]))
            return float(min(wall, 0.9 * radius)) if wall > default + THICK_WALL_GAIN else default
    return default


def _cup_params(points: np.ndarray, cx: float, cy: float, radius: float, height: float) -> dict[str, float]:
    wall = _rim_wall(points, cx, cy, radius, height, _thin_wall(radius))
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


def fit_articulated(
    views: list[RestView],
    camera: Camera,
    kind: str,
    params_for: Callable[..., dict],
    thin_front: bool = False,
) -> FittedObject:
    """Fits a cabinet, a door or a drawer as the upright box it fills, its front (local +x) to the camera.

    A box's silhouette and depth do not tell which side opens: the front is taken to be the side that
    faces the camera (a video of a hand opening a door or putting a cup into a cabinet is filmed from
    the front). The box is turned by quarter turns (its extents swapped with them) until its local +x
    points most nearly at the camera.

    Args:
        views: Frames on which the object rests, with masks and depth points.
        camera: Intrinsics.
        kind: The shape kind to report.
        params_for: The kind's parameters for a box of full extents ``size`` (m), where nothing measured
            them (its walls' thickness: the kind module's ``default_params``).
        thin_front: The front is one of the box's broad sides (a door: its thickness is along local x).
    """
    if kind == CABINET.name:
        return fit_open_box(views, camera, params_for)
    box = fit_box(views, camera)
    toward = camera_centre(views)[:2] - box.position[:2]
    size = box.shape.size
    turns = []
    for turn in range(4):
        yaw = box.yaw + turn * math.pi / 2
        turned = size if turn % 2 == 0 else (size[1], size[0], size[2])
        if thin_front and turned[0] > turned[1]:
            continue
        turns.append((math.cos(yaw) * toward[0] + math.sin(yaw) * toward[1], turn, turned))
    _, turn, turned = max(turns)
    yaw = math.remainder(box.yaw + turn * math.pi / 2, 2 * math.pi)
    shape = Shape(kind, turned, params_for(turned), fit_error=box.shape.fit_error)
    return FittedObject(shape, box.position, yaw)


MIN_CABINET = 0.05
"""m: a cabinet's smallest extent (the fit is kept from folding it flat onto its front's points)."""


OPEN_SIDE_SLACK = 0.01
"""A cabinet fit with its open side elsewhere replaces the one opening towards the camera only where its
silhouette and depth error is lower by more than this (the same box turned scored 0.1687 and 0.1703)."""


def _walls_or_front_error(shape: Shape, position: np.ndarray, yaw: float, points: np.ndarray) -> float:
    """:func:`.fit_base._depth_error` with each point's distance to the nearer of the cabinet's walls (its
    inside seen through the open door) and its closed box (a door or a drawer front shut over the opening,
    or a front the body's mask holds)."""
    if not len(points):
        return 0.0
    c, s = math.cos(yaw), math.sin(yaw)
    offset = points - position
    local = np.c_[c * offset[:, 0] + s * offset[:, 1], -s * offset[:, 0] + c * offset[:, 1], offset[:, 2]]
    closed = Shape(BOX.name, shape.size)
    gap = np.minimum(np.abs(shape.surface_distance(local)), np.abs(closed.surface_distance(local)))
    return DEPTH_WEIGHT * float(np.minimum(gap, DEPTH_CAP).mean()) / DEPTH_CAP


SMALLER_START = 0.75
"""A cabinet's best turn is fitted again from its points' upright box with the footprint scaled by this."""


def fit_open_box(
    views: list[RestView], camera: Camera, params_for: Callable[..., dict], kind: str = CABINET.name
) -> FittedObject:
    """A cabinet (or a shelf, ``kind``) as its own walls: its silhouettes and its points on the walls' every
    face, the inside's too.

    Fitted as a solid box, a cabinet whose inside shows (its door open) came out half as deep and 6 cm
    too tall (the points on its back wall's inner face taken for its front). Tried with its open side
    on each of the box's sides that face the camera (from the points' upright box, :func:`_box_guess`),
    the one whose silhouettes and depth agree best is kept.
    """
    points = all_points(views)
    sample = depth_sample(views, points)
    centre, yaw, size = _box_guess(points)
    toward = camera_centre(views)[:2] - centre[:2]

    def extents_of(x) -> tuple[float, float, float]:
        return tuple(max(abs(float(v)), MIN_CABINET) for v in x[3:6])

    def loss(x):
        extents = extents_of(x)
        shape = Shape(kind, extents, params_for(extents))
        position = np.array([x[0], x[1], extents[2] / 2])
        return _silhouette_error(shape, position, x[2], views, camera) + _walls_or_front_error(
            shape, position, x[2], sample
        )

    fits, starts = [], []
    for turn in range(4):
        turned_yaw = yaw + turn * math.pi / 2
        if math.cos(turned_yaw) * toward[0] + math.sin(turned_yaw) * toward[1] < 0:
            continue  # its opening away from the camera: the video would not show it opened
        turned = size if turn % 2 == 0 else (size[1], size[0], size[2])
        starts.append(np.array([centre[0], centre[1], turned_yaw, *turned]))
        fits.append(_restarted_minimize(loss, starts[-1], maxiter=600))
    # The points' upright box can be square-ish and too big (the inside seen through an open door widens its
    # top): from it a microwave's body folded to 11 cm deep and 37 cm tall (loss 0.22) where 33 and 26 fit
    # (0.12). The best turn is started again with its footprint at 3/4.
    again = starts[int(np.argmin([f.fun for f in fits]))] * np.array(
        [1, 1, 1, SMALLER_START, SMALLER_START, 1]
    )
    fits.append(_restarted_minimize(loss, again, maxiter=600))
    # A closed cabinet looks the same whichever side opens: of the fits about as good as the best, the one
    # that opens most nearly towards the camera.
    best = min(f.fun for f in fits)
    x = max((f for f in fits if f.fun <= best + OPEN_SIDE_SLACK),
            key=lambda f: math.cos(f.x[2]) * toward[0] + math.sin(f.x[2]) * toward[1]).x  # fmt: skip
    extents = extents_of(x)
    shape = Shape(kind, extents, params_for(extents), fit_error=float(best))
    return FittedObject(
        shape, np.array([x[0], x[1], extents[2] / 2]), math.remainder(float(x[2]), 2 * math.pi)
    )


def fit_mesh(views: list[RestView]) -> FittedObject:
    """A convex hull of the points, closed down to the table (the fallback)."""
    points = all_points(views)
    footprint = points.copy()
    footprint[:, 2] = 0.0
    cloud = np.concatenate([points, footprint])
    low, high = cloud.min(axis=0), cloud.max(axis=0)
    centre = (low + high) / 2
    shape = Shape(MESH.name, tuple(float(v) for v in high - low), vertices=cloud - centre)
    return FittedObject(shape, centre, 0.0)


def fit_shape(
    hint: str, views: list[RestView], camera: Camera, mesh: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[FittedObject, str | None]:
    """Fits the shape named by the prompt's hint (or chooses one for ``auto``).

    Args:
        hint: ``auto | box | cylinder | cup | mug | bowl | plate | cabinet | door | drawer | rack | shelf |
            dish_rack | mesh``
            (``mug``: a cup with a handle, looked for with less evidence than ``cup`` and ``auto`` need;
            a cabinet, door or drawer: its box, its front turned to the camera, :func:`fit_articulated`; a
            shelf: its box so, then its boards from the depth, :mod:`.shelf_fit`; a dish rack: its box, then its
            slots from the depth, :mod:`.dish_rack_fit`; a plate standing on its edge, :mod:`.plate_fit`).
        views: Frames on which the object rests, with masks and depth points.
        camera: Intrinsics.
        mesh: For ``mesh``: the prompt's mesh file as ``(vertices, faces)``
            (:func:`..mesh_file.read_obj`), scaled and posed to the views; None
            makes a hull of the depth points closed down to the table.

    Returns:
        The fit, and a warning message when the hint did not fit (None otherwise).
    """
    if hint == RACK.name:
        return _fit_rack_hint(views, camera)
    if hint == SHELF.name:
        return shelf_fit.with_boards(
            fit_open_box(views, camera, shelf.default_params, SHELF.name), views, camera
        )
    if hint == DISH_RACK.name:
        return dish_rack_fit.with_slots(fit_box(views, camera), views)
    fitted = FITTERS[hint](views, camera, mesh)
    if hint == MESH.name:  # a mesh is what a bad fit falls back to
        return fitted, None
    if fitted.shape.fit_error > BAD_FIT and fitted.shape.entry.cavity is not None:
        # A hull would close the opening things go into: the box stays, the doubt is said.
        return fitted, (
            f"the '{hint}' box fits its masks badly (silhouette error {fitted.shape.fit_error:.2f}; a door or a hand "
            "in front of it?); its walls are kept: check its size"
        )
    if fitted.shape.fit_error > BAD_FIT:
        warning = (
            f"the '{hint}' shape fits badly (silhouette error {fitted.shape.fit_error:.2f}); "
            "using a mesh closed down to the table instead"
        )
        mesh = fit_mesh(views)
        mesh.shape.fit_error = fitted.shape.fit_error
        return mesh, warning
    if hint == MUG.name and not fitted.shape.has_handle:
        return (
            fitted,
            "the prompt says 'mug' but the depth shows no handle (hidden behind it?); fitted as a cup",
        )
    return fitted, None


def fit_rack(views: list[RestView], camera: Camera, mesh=None) -> FittedObject:
    """A rack: a hook board on a wall where its depth points hang in the air (:mod:`.wall_rack_fit`), else a
    mug tree (:func:`.rack_fit.fit_mug_tree`).

    Raises:
        RackFitError: No depth, or the depth shows no post, plate or peg (the message says which).
    """
    points = all_points(views)
    if all(v.from_depth for v in views) and wall_rack_fit.is_on_wall(points):
        return wall_rack_fit.fit_wall_rack(views, camera, points)
    return fit_mug_tree(views, camera, points)


def _fit_rack_hint(views: list[RestView], camera: Camera) -> tuple[FittedObject, str | None]:
    """A rack's fit (:func:`fit_rack`), or a mesh closed down to the table where the depth shows
    no post or peg; its thin pegs make a pixel's error a large share of its silhouette, so a loose fit is
    kept and said."""
    try:
        fitted = fit_rack(views, camera)
    except RackFitError as e:
        return fit_mesh(
            views
        ), f"the rack could not be fitted ({e}); using a mesh closed down to the table instead"
    if fitted.shape.fit_error > BAD_FIT:
        return fitted, (
            f"the rack fits its masks loosely (silhouette and depth error {fitted.shape.fit_error:.2f}; hidden "
            "behind what hangs on it?): check its pegs"
        )
    return fitted, None


def _fit_auto(views: list[RestView], camera: Camera, mesh=None) -> FittedObject:
    """``auto``: a box and the round kind the points suggest, the better kept."""
    box = fit_box(views, camera)
    points = all_points(views)
    cx, cy, radius, height, hollow = _cylinder_guess(points, camera_centre(views))
    # A handle makes a mug, even where its opening is not seen (a camera low down).
    base = _base_radius_guess(points, cx, cy, radius, height)
    handled = _find_handle(points, cx, cy, radius, base, height) is not None
    # So does a clear taper: a cylinder has one radius.
    tapered = _is_tapered(points, cx, cy, height)
    round_ = fit_cylinder(views, camera, CUP.name if hollow or handled or tapered else CYLINDER.name)
    if hollow and not round_.shape.has_handle:
        # A bowl has one parameter more (its base radius): it must fit clearly better.
        bowl = fit_cylinder(views, camera, BOWL.name)
        if bowl.shape.fit_error < round_.shape.fit_error - PROFILE_GAIN:
            round_ = bowl
    elif round_.shape.size[2] < PLATE_HEIGHT * round_.shape.size[0]:
        round_ = _fit_plate(views, camera, round_)
    return box if box.shape.fit_error <= round_.shape.fit_error else round_


def _fit_mesh_hint(views: list[RestView], camera: Camera, mesh=None) -> FittedObject:
    """``mesh``: the user's mesh posed to the views, or the hull of the depth points."""
    return fit_user_mesh(*mesh, views, camera) if mesh is not None else fit_mesh(views)


def _fit_plate_hint(views: list[RestView], camera: Camera, mesh=None) -> FittedObject:
    """``plate``: lying flat, a low cylinder (a dish where its rim shows); standing on its edge where its
    points are an upright face (:mod:`.plate_fit`)."""
    if plate_fit.stands_on_edge(all_points(views)):
        return plate_fit.fit_on_edge(views, camera)
    return fit_cylinder(views, camera, PLATE.name)


def _round(kind: str) -> Callable[..., FittedObject]:
    return lambda views, camera, mesh=None: fit_cylinder(views, camera, kind)


def _articulated(
    kind: str, params_for: Callable[..., dict], thin_front: bool = False
) -> Callable[..., FittedObject]:
    return lambda views, camera, mesh=None: fit_articulated(views, camera, kind, params_for, thin_front)


FITTERS: dict[str, Callable[..., FittedObject]] = {
    AUTO.name: _fit_auto,
    BOX.name: lambda views, camera, mesh=None: fit_box(views, camera),
    CYLINDER.name: _round(CYLINDER.name),
    CUP.name: _round(CUP.name),
    MUG.name: _round(MUG.name),
    BOWL.name: _round(BOWL.name),
    PLATE.name: _fit_plate_hint,
    CABINET.name: _articulated(CABINET.name, cabinet.default_params),
    DOOR.name: _articulated(DOOR.name, door.default_params, thin_front=True),
    DRAWER.name: _articulated(DRAWER.name, drawer.default_params),
    RACK.name: fit_rack,
    SHELF.name: lambda views, camera, mesh=None: shelf_fit.with_boards(
        fit_open_box(views, camera, shelf.default_params, SHELF.name), views, camera
    )[0],
    DISH_RACK.name: lambda views, camera, mesh=None: dish_rack_fit.with_slots(fit_box(views, camera), views)[
        0
    ],
    MESH.name: _fit_mesh_hint,
}
"""A prompt's shape hint -> its fitter: ``(views, camera, mesh) -> FittedObject`` (the shape table's kinds,
:mod:`.shape_kinds`; ``mesh`` is the prompt's mesh file as ``(vertices, faces)`` or None)."""


def camera_from_world_of(world_from_camera: np.ndarray) -> np.ndarray:
    """Shorthand for the inverse pose."""
    return invert(world_from_camera)
