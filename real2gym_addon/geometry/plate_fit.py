"""A plate standing on its edge (:mod:`.kinds.plate`, ``on_edge``): in a dish rack's slot or a plate stand.

Its depth points are an upright face: seen from above they lie along a line (the plate's plane), and
they rise as far as they spread along it. The face, seen at an angle, is a disc cut off below where a
divider or the stand hides it: each height's leftmost and rightmost points lie on the disc's rim. A
circle fitted to them gives the radius and the centre's height, so the plate's bottom, hidden in the
slot, is found and not taken to be on the table. The centre is half the plate's thickness behind the
face the camera sees.

The thickness is what the depth shows worst: the face is flat, and the rim's band that shows it is a pixel
or two wide and is what the depth's cleaning drops (a 15 mm plate came out 6 mm thick from the points'
spread). It is the thickness whose silhouettes best explain the masks: seen at an angle, a thicker disc's
outline is wider on the side its rim turns to the camera.
"""

from __future__ import annotations

import math

import numpy as np

from ..demo import Camera
from .camera import pose_matrix, yaw_rotation
from .fit_base import FittedObject, RestView, all_points, camera_centre
from .kinds.plate import ON_EDGE, PLATE
from .shapes import Shape
from .silhouette import silhouette_mismatch, silhouette_polygon

FLAT_FACE = 0.3
"""Points whose spread across their line (from above) is under this share of their spread along it ..."""
TALL_FACE = 0.35
"""... and whose height spread is over this share of it are an upright face: a plate on its edge ..."""
MAX_THICKNESS = 0.03
"""... no thicker than this (m)."""
MIN_POINTS = 30
"""Depth points the test needs."""
SLICE = 0.004
"""m: the heights in which the face's leftmost and rightmost points are taken."""
MIN_SLICE_POINTS = 3
"""Points a height needs for its ends to count."""
MIN_RIM_POINTS = 6
"""Rim points the circle needs; with fewer, the plate is as wide as its points."""
HIDDEN_WEIGHT = 0.3
"""Cost of a silhouette pixel the masks do not show (the plate's foot hidden in its stand), against 1 for a
mask pixel missed: the fit's error."""
THICKNESS_RANGE = (0.003, 0.03)
"""m: the thinnest and thickest plate fitted ..."""
THICKNESS_STEP = 0.001
"""... tried this far apart (m) ..."""
THICKNESS_UNSEEN_WEIGHT = 0.7
"""... against the masks, a silhouette pixel the masks do not show costing this (the foot hidden in a stand
costs alike at every thickness: the sides decide)."""


def _spreads(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """The points' horizontal line (unit ``(2,)``) and its normal, their spread along and across it and in
    height (98th less 2nd percentile, m)."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov(xy.T))
    along, across = vectors[:, 1], vectors[:, 0]

    def spread(values: np.ndarray) -> float:
        return float(np.percentile(values, 98) - np.percentile(values, 2))

    return along, across, spread(xy @ along), spread(xy @ across), spread(points[:, 2])


def stands_on_edge(points: np.ndarray) -> bool:
    """True where a plate's depth points are an upright face: thin from above, tall as they are wide."""
    if len(points) < MIN_POINTS:
        return False
    _, _, along, across, height = _spreads(points)
    return across < FLAT_FACE * along and across < MAX_THICKNESS and height > TALL_FACE * along


def _circle_under(xz: np.ndarray, top: float) -> tuple[float, float]:
    """The circle whose top is at height ``top`` lying nearest ``Nx2`` rim points (their distances to it, in
    the least-squares sense): its centre's x and its radius. A free circle through a short arc's noisy ends
    comes out small (the depth's cleaning erodes the ends inwards); the top, seen, pins it."""
    from scipy.optimize import least_squares

    def residuals(x):
        return np.hypot(xz[:, 0] - x[0], xz[:, 1] - (top - x[1])) - x[1]

    start = np.array([float(np.median(xz[:, 0])), float(np.ptp(xz[:, 0])) / 2])
    fit = least_squares(residuals, start, loss="soft_l1", f_scale=0.003)
    return float(fit.x[0]), float(abs(fit.x[1]))


def _rim(xz: np.ndarray) -> np.ndarray:
    """The face's leftmost and rightmost points at each height (``Nx2``, ``(x, z)``)."""
    out = []
    for low in np.arange(xz[:, 1].min(), xz[:, 1].max(), SLICE):
        row = xz[(xz[:, 1] >= low) & (xz[:, 1] < low + SLICE)]
        if len(row) >= MIN_SLICE_POINTS:
            z = float(row[:, 1].mean())
            out += [(float(row[:, 0].min()), z), (float(row[:, 0].max()), z)]
    return np.array(out).reshape(-1, 2)


def _on_face(
    views: list[RestView], camera: Camera, middle: np.ndarray, along: np.ndarray, across: np.ndarray
):
    """Every view's mask pixels where their rays meet the face's upright plane (through ``middle``, normal
    ``across``): ``Nx2`` ``(x along the face, z)``. The masks reach the rim's sides; the depth points, under
    masks eroded by two pixels and cleaned, stop short of them (a plate came out 14 mm small from them)."""
    out = []
    normal = np.array([across[0], across[1], 0.0])
    for view in views:
        v, u = np.nonzero(view.mask)
        if not len(u):
            continue
        rays = np.c_[(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, np.ones(len(u))]
        rotation, origin = (
            view.camera_from_world[:3, :3],
            -view.camera_from_world[:3, :3].T @ view.camera_from_world[:3, 3],
        )
        world = rays @ rotation  # each ray's direction in the world (R^T d, as rows)
        facing = world @ normal
        usable = np.abs(facing) > 1e-6
        t = (np.array([middle[0], middle[1], 0.0]) - origin) @ normal / facing[usable]
        hits = origin + t[:, None] * world[usable]
        out.append(np.c_[(hits[:, :2] - middle) @ along, hits[:, 2]])
    return np.concatenate(out) if out else np.zeros((0, 2))


def fit_on_edge(views: list[RestView], camera: Camera) -> FittedObject:
    """The plate standing on its edge whose face the views' points show: its axis across the face, its radius
    and centre from its rim's points, its thickness from its silhouettes."""
    points = all_points(views)
    along, across, width, _, _ = _spreads(points)
    middle = points[:, :2].mean(axis=0)
    xz = np.c_[(points[:, :2] - middle) @ along, points[:, 2]]
    top = float(np.percentile(xz[:, 1], 98))
    centre_x, radius = 0.0, width / 2
    centre_z = top - radius
    eye = camera_centre(views)
    face = _on_face(views, camera, middle, along, across)
    # The masks' outline on the face's plane is the rim's sides, where they are seen; its top there is the
    # far face's edge seen over the near one (1 cm high from 35 degrees above): the depth's top stands.
    rim = _rim(face) if len(face) >= MIN_POINTS else _rim(xz)
    if len(rim) >= MIN_RIM_POINTS:
        cx, r = _circle_under(rim, top)
        if 0.5 * width / 2 <= r <= 2.0 * width / 2:  # else the rim's points were not a disc's
            centre_x, radius = cx, r
            centre_z = top - radius
    centre_z = max(centre_z, radius)  # never below the table
    away = across if float((middle - eye[:2]) @ across) > 0 else -across  # from the camera through the face
    # The plate's local y is its axis (across the face), its local x along the face.
    yaw = math.atan2(-across[0], across[1])

    def placed(thickness: float) -> tuple[Shape, np.ndarray]:
        centre_xy = middle + centre_x * along + (thickness / 2) * away
        shape = Shape(PLATE.name, (2 * radius, thickness, 2 * radius), {"radius": radius, ON_EDGE: 1.0})
        return shape, np.array([centre_xy[0], centre_xy[1], centre_z])

    def mismatch(thickness: float, weight: float) -> float:
        shape, position = placed(thickness)
        world_from_object = pose_matrix(position, yaw_rotation(yaw))
        return float(np.mean([
            silhouette_mismatch(silhouette_polygon(shape, view.camera_from_world @ world_from_object, camera),
                                view.mask, weight)
            for view in views
        ]))  # fmt: skip

    tried = np.arange(THICKNESS_RANGE[0], THICKNESS_RANGE[1] + 1e-9, THICKNESS_STEP)
    thickness = float(min(tried, key=lambda t: mismatch(float(t), THICKNESS_UNSEEN_WEIGHT)))
    shape, position = placed(thickness)
    # Its lower part may be hidden in its stand: the silhouette may reach where the masks do not, at a cost.
    shape.fit_error = mismatch(thickness, HIDDEN_WEIGHT)
    return FittedObject(shape, position, yaw)
