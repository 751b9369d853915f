"""Fitting a rack (a mug tree: :mod:`.kinds.rack`) to its masks and depth.

A rack is no box: its silhouette is a post with pegs sticking out, far from its convex hull, so it is
fitted in two steps. Its depth points give the parts: the post is the column of points that reaches
highest over the table, its axis behind the points the camera sees on it by the post's radius (the
mask's width there); the base is what stays low round the post's foot; the pegs are the points well
away from the post above the base, grouped by their direction about it, each group's line (its
principal axis) giving the peg's azimuth and elevation and where it meets the post its height. Then
every number is refined together against the silhouettes (the union of the pieces' outlines, filled,
against each view's mask) and the depth (the points' distance to the cylinders).

Without depth a rack is not fitted (a mug tree's size is not given in a way a single silhouette could
be scaled by): the error says so.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy.optimize import minimize

from ..demo import Camera
from .camera import pose_matrix, project, transform, yaw_rotation
from .fit_base import DEPTH_CAP, FittedObject, RestView, all_points, camera_centre, depth_sample
from .kinds import rack
from .pieces import GEOM_BOX, GEOM_CYLINDER, CollisionPiece
from .shapes import Shape
from .silhouette import polygon_coverage

COLUMN_BIN = 0.005
"""m: the grid (seen from above) in which the post's column of points is looked for."""
PEG_CLEARANCE = 0.015
"""m: a point this far beyond the post's surface, above the base, is on a peg."""
PEG_SECTOR = math.radians(15.0)
"""rad: the directions about the post in which the pegs' points are grouped."""
PEG_MIN_POINTS = 12
"""Depth points a peg needs."""
PEG_MIN_SPAN = 0.025
"""m: a peg's points spread at least this far along their line ..."""
PEG_SHAPE = 4.0
"""... and at least this many times their scatter across it (RMS)."""
BASE_LAYER = 0.03
"""m: points below this height near the post's foot are the base's."""
DEFAULT_ELEVATION = math.radians(20.0)
"""rad: a peg's elevation where no peg's depth measured it (a mug tree's are 15 to 30 degrees)."""
PEG_LENGTHS = (0.03, 0.2)
"""m: the shortest and longest peg a mask's protrusion is read as."""
MAX_ELEVATION = math.radians(60.0)
"""rad: the steepest a peg found in the mask may rise."""
SAME_PEG_HEIGHT = 0.02
"""m: two pegs found this close in height ..."""
SAME_PEG_TURN = math.radians(30.0)
"""... and in direction are one."""
PEG_MIN_PIXELS = 6
"""Mask pixels outside the post and the base that a peg needs."""
MIN_RADIUS = 0.002
"""m: the thinnest post or peg a fit may make."""
SILHOUETTE_VIEWS = 4
"""Views the refinement's silhouette term uses (spread over the rest frames; each costs a fill)."""
REFINE_RUNS = 2
"""Nelder-Mead runs of the refinement, each from where the one before stopped."""


class RackFitError(ValueError):
    """The views do not show a rack: too few depth points, no post or no peg."""


def _post_column(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The post's column: ``(xy (2,) of the grid cell that spans the most height, the points within 2.5 cm
    of it that stand above the base)``."""
    cells = np.floor(points[:, :2] / COLUMN_BIN).astype(np.int64)
    layers = np.floor(points[:, 2] / COLUMN_BIN).astype(np.int64)
    keys, inverse = np.unique(cells, axis=0, return_inverse=True)
    spans = np.zeros(len(keys))
    for k in range(len(keys)):
        spans[k] = len(np.unique(layers[inverse.ravel() == k]))
    # A 3x3 neighbourhood's span: a post 2 cm across spreads over a few cells.
    best = keys[np.argmax([spans[np.all(np.abs(keys - key) <= 1, axis=1)].sum() for key in keys])]
    centre = (best + 0.5) * COLUMN_BIN
    near = np.hypot(*(points[:, :2] - centre).T) < 0.025
    return centre, points[near & (points[:, 2] > BASE_LAYER)]


def _post_radius(views: list[RestView], camera: Camera, axis_xy: np.ndarray, z0: float, z1: float) -> float:
    """m: half the mask's width across the post between heights ``z0`` and ``z1`` (the rows where the
    post alone crosses the mask: the median run of mask pixels through the post's projected axis)."""
    widths = []
    for view in views[:SILHOUETTE_VIEWS]:
        heights = np.linspace(z0, z1, 12)
        axis = np.c_[np.tile(axis_xy, (len(heights), 1)), heights]
        in_camera = transform(view.camera_from_world, axis)
        pixels = project(camera, in_camera)
        mask = view.mask
        for (u, v), depth in zip(pixels, in_camera[:, 2], strict=True):
            row, column = int(round(v)), int(round(u))
            if not (0 <= row < mask.shape[0] and 0 <= column < mask.shape[1]) or not mask[row, column]:
                continue
            line = mask[row]
            left = column
            while left > 0 and line[left - 1]:
                left -= 1
            right = column
            while right < len(line) - 1 and line[right + 1]:
                right += 1
            widths.append((right - left + 1) * depth / camera.fx)
    if not widths:
        return 0.01
    return max(float(np.median(widths)) / 2, MIN_RADIUS)


def _pegs(points: np.ndarray, axis_xy: np.ndarray, post_radius: float, base_top: float) -> list[dict]:
    """Each peg's azimuth (world), elevation, height on the post and reach, from the points off the post."""
    offset = points[:, :2] - axis_xy
    away = np.hypot(*offset.T)
    off = points[(away > post_radius + PEG_CLEARANCE) & (points[:, 2] > base_top + 0.02)]
    if len(off) < PEG_MIN_POINTS:
        return []
    angles = np.arctan2(off[:, 1] - axis_xy[1], off[:, 0] - axis_xy[0])
    sectors = np.floor((angles + math.pi) / PEG_SECTOR).astype(int)
    count = int(round(2 * math.pi / PEG_SECTOR))
    filled = np.bincount(sectors % count, minlength=count) >= 3
    # Runs of filled sectors round the circle, each one peg.
    start = int(np.argmin(filled)) if not filled.all() else 0
    groups, run = [], []
    for step in range(count):
        sector = (start + step) % count
        if filled[sector]:
            run.append(sector)
        elif run:
            groups.append(run)
            run = []
    if run:
        groups.append(run)
    # Each group's points about the post: their distance out from its axis (rho) and height (z) lie on a
    # line z = height + tan(elevation) * rho. A peg seen end on (pointing at the camera) spreads little in
    # rho and its depth noise runs along its length: its slope is not trusted, the others' shared one is.
    found = []
    for group in groups:
        chosen = off[np.isin(sectors % count, group)]
        if len(chosen) < PEG_MIN_POINTS:
            continue
        rho = np.hypot(*(chosen[:, :2] - axis_xy).T)
        slope, height = np.polyfit(rho, chosen[:, 2], 1)
        residual = chosen[:, 2] - (height + slope * rho)
        across = float(np.sqrt(np.mean(residual**2)))
        if np.ptp(rho) < PEG_MIN_SPAN and np.ptp(chosen[:, 2]) < PEG_MIN_SPAN:
            continue  # a blob, not a line of points along a peg
        angles_in = np.arctan2(chosen[:, 1] - axis_xy[1], chosen[:, 0] - axis_xy[0])
        azimuth = math.atan2(np.sin(angles_in).mean(), np.cos(angles_in).mean())
        found.append({"azimuth": azimuth, "rho": rho, "z": chosen[:, 2], "slope": float(slope),
                      "trusted": np.ptp(rho) >= PEG_MIN_SPAN and np.ptp(rho) >= PEG_SHAPE * across})  # fmt: skip
    if not found:
        return []
    slopes = [peg["slope"] for peg in found if peg["trusted"]] or [peg["slope"] for peg in found]
    elevation = math.atan(max(float(np.median(slopes)), 0.0))
    pegs = []
    for peg in found:
        height = float(np.median(peg["z"] - math.tan(elevation) * peg["rho"]))
        reach = float(np.percentile(peg["rho"], 98)) / math.cos(elevation)
        pegs.append({"azimuth": peg["azimuth"], "elevation": elevation, "height": height, "reach": reach,
                     "points": len(peg["rho"])})  # fmt: skip
    return sorted(pegs, key=lambda p: p["height"])


def _post_fill(view: RestView, camera: Camera, post: tuple) -> np.ndarray:
    """The post's and the base's silhouette in ``view`` (bool), from ``post``: ``(axis_xy, post_radius,
    base_radius, base_top, top)``."""
    axis_xy, radius, base_radius, base_top, top = post
    pieces = [CollisionPiece(GEOM_CYLINDER, (base_radius, base_top / 2, 0.0), (axis_xy[0], axis_xy[1], base_top / 2)),
              CollisionPiece(GEOM_CYLINDER, (radius, top / 2, 0.0), (axis_xy[0], axis_xy[1], top / 2))]  # fmt: skip
    return fill_pieces(pieces, view.camera_from_world, view.mask.shape, camera)


def fill_pieces(pieces, camera_from_frame: np.ndarray, shape: tuple, camera: Camera) -> np.ndarray:
    """Cylinder and box pieces (in the frame ``camera_from_frame`` maps from) projected and filled: a bool
    mask."""
    filled = np.zeros(shape, np.uint8)
    angles = np.linspace(0, 2 * math.pi, 12, endpoint=False)
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    for piece in pieces:
        if piece.kind == GEOM_BOX:
            ends = (corners * piece.size) @ piece.rotation().T + np.asarray(piece.position)
        else:
            radius, half_height, _ = piece.size
            ring = np.c_[radius * np.cos(angles), radius * np.sin(angles), np.zeros(len(angles))]
            ends = np.concatenate([(ring + [0.0, 0.0, e]) @ piece.rotation().T + np.asarray(piece.position)
                                   for e in (-half_height, half_height)])  # fmt: skip
        in_camera = transform(camera_from_frame, ends)
        if np.any(in_camera[:, 2] <= 1e-3):
            continue
        hull = cv2.convexHull(project(camera, in_camera).astype(np.float32)).reshape(-1, 2)
        x0, y0 = np.maximum(np.floor(hull.min(axis=0)).astype(int) - 1, 0)
        x1, y1 = np.minimum(np.ceil(hull.max(axis=0)).astype(int) + 2, (shape[1], shape[0]))
        if x1 <= x0 or y1 <= y0:
            continue
        # Half a pixel's coverage or more: a line-drawing fill would widen a peg a few pixels across by one.
        filled[y0:y1, x0:x1] |= polygon_coverage(hull, x0, y0, x1 - x0, y1 - y0) >= 0.5
    return filled.astype(bool)


def _peg_pieces(axis_xy: np.ndarray, pegs: list[dict], radius: float) -> list[CollisionPiece]:
    """Pegs found so far as cylinder pieces in the world frame, each a tenth longer than it reached (a
    peg's tip left out of it would read as another peg)."""
    pieces = []
    for peg in pegs:
        length = 1.1 * peg["reach"]
        direction = rack.peg_direction(peg["elevation"], peg["azimuth"])
        middle = np.array([axis_xy[0], axis_xy[1], peg["height"]]) + direction * length / 2
        pieces.append(CollisionPiece(GEOM_CYLINDER, (radius, length / 2, 0.0), tuple(middle), yaw=peg["azimuth"],
                                     tilt=math.pi / 2 - peg["elevation"]))  # fmt: skip
    return pieces


def _pegs_from_mask(
    view: RestView, camera: Camera, post: tuple, elevation: float, length: float | None, known: list[dict]
) -> list[dict]:
    """Pegs the depth missed (a peg a few pixels across loses most of its readings at its edges), from the
    mask: each part of it outside the post, the base and the pegs found, left after an opening, is a peg.
    Its pixel nearest the post's projected axis is its root, whose height is where that axis passes it;
    its pixel farthest out is its tip, on the ray through which the peg's line (from the root, at the
    shared elevation) is found; of two such points (a peg towards or away from the camera), the one whose
    length is nearer the others' (or whose depth the few readings on it agree with)."""
    axis_xy, radius, _, base_top, top = post
    explained = _post_fill(view, camera, post)
    if known:
        peg_radius = max(0.6 * radius, MIN_RADIUS)
        explained |= fill_pieces(_peg_pieces(axis_xy, known, peg_radius), view.camera_from_world,
                                  view.mask.shape, camera)  # fmt: skip
    explained = cv2.dilate(explained.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    rest = (view.mask & ~explained).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(rest, connectivity=8)
    world_from_camera = np.linalg.inv(view.camera_from_world)
    centre = world_from_camera[:3, 3]
    heights = np.arange(base_top, top + 1e-9, 0.001)
    axis_pixels = project(
        camera, transform(view.camera_from_world, np.c_[np.tile(axis_xy, (len(heights), 1)), heights])
    )
    found = []
    for label in range(1, count):
        if stats[label, cv2.CC_STAT_AREA] < PEG_MIN_PIXELS:
            continue
        v, u = np.nonzero(labels == label)
        pixels = np.c_[u, v].astype(float)
        gaps = np.linalg.norm(pixels[:, None, :] - axis_pixels[None, :, :], axis=2)
        tip_pixel = pixels[np.argmax(gaps.min(axis=1))]
        # The root: where the pixels' line meets the post's projected axis (the pixels next to the post are
        # cut away with it, and a sliver of a post fitted a pixel off may join them).
        middle = pixels.mean(axis=0)
        _, _, axes = np.linalg.svd(pixels - middle, full_matrices=False)
        line = axes[0]
        across = np.abs((axis_pixels - middle) @ np.array([-line[1], line[0]]))
        height = float(heights[np.argmin(across)])
        root_depth = float(
            transform(view.camera_from_world, np.array([[axis_xy[0], axis_xy[1], height]]))[0, 2]
        )
        if gaps.min(axis=1).max() < PEG_MIN_SPAN * camera.fx / max(root_depth, 1e-3):
            continue  # a stub by the post (its top, a pixel's misfit): no peg reaches less than 2.5 cm out
        ray = world_from_camera[:3, :3] @ np.array([(tip_pixel[0] - camera.cx) / camera.fx,
                                                    (tip_pixel[1] - camera.cy) / camera.fy, 1.0])  # fmt: skip
        root = np.array([axis_xy[0], axis_xy[1], height])
        if length is not None:  # the tip is on the ray, the pegs' shared length from the root
            offset = centre - root
            b, c = float(ray @ offset), float(offset @ offset) - length**2
            roots = [-b - math.sqrt(b * b - c), -b + math.sqrt(b * b - c)] if b * b >= c else []
            tips = [centre + t * ray for t in roots if t > 0]
            rises = [math.asin(np.clip((tip[2] - height) / length, -1.0, 1.0)) for tip in tips]
            choices = [(abs(rise - elevation), tip) for tip, rise in zip(tips, rises, strict=True)
                       if 0.0 <= rise <= MAX_ELEVATION]  # fmt: skip
            if not choices:
                continue
            tip = min(choices, key=lambda choice: choice[0])[1]
            reach = length
        else:  # the tip is on the ray, at the elevation the others share (or the default)
            ts = np.arange(0.1, 3.0, 0.0005)
            along = centre + ts[:, None] * ray
            out = np.hypot(along[:, 0] - axis_xy[0], along[:, 1] - axis_xy[1])
            residual = along[:, 2] - height - math.tan(elevation) * out
            candidates = [
                (float(out[k]) / math.cos(elevation), along[k])
                for k in np.nonzero(np.diff(np.sign(residual)))[0]
            ]
            candidates = [c for c in candidates if PEG_LENGTHS[0] <= c[0] <= PEG_LENGTHS[1]]
            if not candidates:
                continue
            reach, tip = min(candidates, key=lambda c: c[0])
        azimuth = math.atan2(tip[1] - axis_xy[1], tip[0] - axis_xy[0])
        found.append({"azimuth": azimuth, "elevation": elevation, "height": height, "reach": reach,
                      "points": 0, "pixels": int(len(u))})  # fmt: skip
    return found


def _distinct(pegs: list[dict]) -> list[dict]:
    """The pegs without the ones that repeat another (within :data:`SAME_PEG_HEIGHT` of its height and
    :data:`SAME_PEG_TURN` of its direction: a peg's mask cut in two), the one with depth readings kept."""
    kept: list[dict] = []
    for peg in sorted(pegs, key=lambda p: (-p["points"], -p.get("pixels", 0))):
        if not any(abs(peg["height"] - other["height"]) < SAME_PEG_HEIGHT
                   and abs(math.remainder(peg["azimuth"] - other["azimuth"], 2 * math.pi)) < SAME_PEG_TURN
                   for other in kept):  # fmt: skip
            kept.append(peg)
    return kept


def _initial(views: list[RestView], camera: Camera, points: np.ndarray) -> tuple[np.ndarray, dict]:
    """The post's axis (world xy) and the rack's parameters (world azimuths) from the points."""
    axis_xy, column = _post_column(points)
    if len(column) < PEG_MIN_POINTS:
        raise RackFitError("no post found in the rack's depth: no column of points rises from the table")
    top = float(np.percentile(column[:, 2], 99))
    low = points[(np.hypot(*(points[:, :2] - axis_xy).T) < 0.15) & (points[:, 2] < BASE_LAYER)]
    base_top = float(np.percentile(low[:, 2], 90)) if len(low) >= PEG_MIN_POINTS else 0.01
    post_radius = _post_radius(views, camera, axis_xy, base_top + 0.03, top - 0.02)
    # The camera sees the post's near side: its axis is a radius further from the camera.
    toward = camera_centre(views)[:2] - axis_xy
    surface = np.median(column[:, :2], axis=0)
    axis_xy = surface - post_radius * toward / max(np.linalg.norm(toward), 1e-9)
    base_radius = (
        float(np.percentile(np.hypot(*(low[:, :2] - axis_xy).T), 95)) if len(low) >= PEG_MIN_POINTS else 0.05
    )
    pegs = _pegs(points, axis_xy, post_radius, base_top)
    elevation = float(np.median([p["elevation"] for p in pegs])) if pegs else DEFAULT_ELEVATION
    length = float(np.median([p["reach"] for p in pegs])) if pegs else None
    post = (axis_xy, post_radius, base_radius, base_top, top)
    pegs = _distinct(pegs + _pegs_from_mask(views[0], camera, post, elevation, length, pegs))
    if not pegs:
        raise RackFitError("no peg found on the rack: neither its depth nor its mask stands off its post")
    pegs.sort(key=lambda p: p["height"])
    params = {
        "base_radius": max(base_radius, post_radius),
        "base_thickness": max(base_top, 0.004),
        "post_radius": post_radius,
        "post_height": max(top, max(p["height"] for p in pegs)),
        "peg_radius": max(0.4 * post_radius, MIN_RADIUS),
        "peg_length": float(np.median([p["reach"] for p in pegs])),
        "peg_elevation": elevation,
        "peg_count": float(len(pegs)),
    }
    for i, peg in enumerate(pegs):
        params[rack.peg_key(i, "peg_height")] = peg["height"]
        params[rack.peg_key(i, "peg_azimuth")] = peg["azimuth"]
    return axis_xy, params


def _fill(shape: Shape, world_from_post: np.ndarray, view: RestView, camera: Camera) -> np.ndarray:
    """The posed rack's silhouette in ``view``: each piece's projected outline filled, as a bool mask."""
    camera_from_local = (
        view.camera_from_world @ world_from_post @ pose_matrix(-rack.post_offset(shape), np.eye(3))
    )
    return fill_pieces(shape.collision_pieces(), camera_from_local, view.mask.shape, camera)


def _to_params(x: np.ndarray, fixed: dict, pegs: int) -> dict:
    """The refined vector -> the rack's parameters in its post frame (azimuths about the first peg's)."""
    params = dict(fixed)
    names = ("post_radius", "post_height", "peg_radius", "peg_length", "peg_elevation")
    for name, value in zip(names, x[2:7], strict=True):
        params[name] = float(value)
    for name in ("post_radius", "peg_radius"):
        params[name] = max(abs(params[name]), MIN_RADIUS)
    params["peg_length"] = max(abs(params["peg_length"]), 2 * params["post_radius"])
    for i in range(pegs):
        params[rack.peg_key(i, "peg_height")] = float(x[7 + 2 * i])
        params[rack.peg_key(i, "peg_azimuth")] = float(x[8 + 2 * i])
    params["post_height"] = max(params["post_height"], params["base_thickness"] + 0.01)
    return params


def fit_mug_tree(views: list[RestView], camera: Camera, points: np.ndarray | None = None) -> FittedObject:
    """Fits a mug tree: its base, post and pegs (:mod:`.kinds.rack`), upright on the table.

    Args:
        views: The rack's rest views.
        camera: Intrinsics.
        points: The views' depth points in the world (:func:`.fit_base.all_points`), where the caller has them.

    Raises:
        RackFitError: No depth, or the depth shows no post or no peg (the message says which).
    """
    points = all_points(views) if points is None else points
    if not all(v.from_depth for v in views) or len(points) < 3 * PEG_MIN_POINTS:
        raise RackFitError(
            "a rack is fitted from depth: this video has none for it (give a mesh: shape 'mesh')"
        )
    axis_xy, params = _initial(views, camera, points)
    pegs = int(params["peg_count"])
    fixed = {k: params[k] for k in ("base_radius", "base_thickness", "peg_count")}
    start = [axis_xy[0], axis_xy[1], *(params[k] for k in ("post_radius", "post_height", "peg_radius",
             "peg_length", "peg_elevation"))]  # fmt: skip
    for i in range(pegs):
        start += [params[rack.peg_key(i, "peg_height")], params[rack.peg_key(i, "peg_azimuth")]]
    chosen = [views[int(i)] for i in np.linspace(0, len(views) - 1, min(SILHOUETTE_VIEWS, len(views)))]
    sample = depth_sample(views, points)

    def loss(x: np.ndarray) -> float:
        shape = Shape(rack.RACK.name, (1.0, 1.0, 1.0), _to_params(x, fixed, pegs))
        world_from_post = pose_matrix(np.array([x[0], x[1], 0.0]), np.eye(3))
        error = 0.0
        for view in chosen:
            model = _fill(shape, world_from_post, view, camera)
            union = np.logical_or(model, view.mask).sum()
            error += 1.0 - (np.logical_and(model, view.mask).sum() / union if union else 0.0)
        local = sample - [x[0], x[1], 0.0] + rack.post_offset(shape)
        gap = np.minimum(np.abs(shape.surface_distance(local)), DEPTH_CAP)
        return error / len(chosen) + 0.5 * float(gap.mean()) / DEPTH_CAP

    # Nelder-Mead in a dozen dimensions stops where its simplex has shrunk onto a pixel's flip of the fill;
    # started again from there (a fresh simplex round it) it goes on: on a 320x240 view with 1 cm of depth
    # noise a peg's height came 12.8 mm off after one run and 1.4 mm after two.
    x = np.asarray(start)
    for _ in range(REFINE_RUNS):
        result = minimize(loss, x, method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-5, "maxiter": 400 * len(start)})  # fmt: skip
        x = result.x
    params = _to_params(result.x, fixed, pegs)
    # The rack's frame: yawed so its first peg runs along its local +x.
    yaw = params[rack.peg_key(0, "peg_azimuth")]
    for i in range(pegs):
        key = rack.peg_key(i, "peg_azimuth")
        params[key] = math.remainder(params[key] - yaw, 2 * math.pi)
    shape = Shape(rack.RACK.name, rack.size_of(params), params, fit_error=float(result.fun))
    centre = np.array([result.x[0], result.x[1], 0.0]) - yaw_rotation(yaw) @ rack.post_offset(shape)
    return FittedObject(shape, centre, float(yaw))
