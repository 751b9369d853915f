"""A plate standing on its edge (:mod:`.kinds.plate`, ``on_edge``): in a dish rack's slot or a plate stand.

Its depth points are an upright face: seen from above they lie along a line (the plate's plane), and
they rise as far as they spread along it. The face, seen at an angle, is a disc cut off below where a
divider or the stand hides it: each height's leftmost and rightmost points lie on the disc's rim. A
circle fitted to them gives the radius and the centre's height, so the plate's bottom, hidden in the
slot, is found and not taken to be on the table. The centre is half the plate's thickness behind the
face the camera sees.
"""

from __future__ import annotations

import math

import numpy as np

from ..demo import Camera
from .fit_base import FittedObject, RestView, _all_points, _camera_centre, _silhouette_error
from .kinds.plate import ON_EDGE, PLATE
from .shapes import Shape

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
THICKNESS_RANGE = (0.003, 0.03)
"""m: the thinnest and thickest plate fitted."""


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


def _circle(xz: np.ndarray) -> tuple[float, float, float]:
    """Least-squares circle through ``Nx2`` points: centre x, centre z, radius."""
    a = np.c_[2 * xz, np.ones(len(xz))]
    (cx, cz, c), *_ = np.linalg.lstsq(a, (xz**2).sum(axis=1), rcond=None)
    return float(cx), float(cz), float(math.sqrt(max(c + cx * cx + cz * cz, 1e-8)))


def _rim(xz: np.ndarray) -> np.ndarray:
    """The face's leftmost and rightmost points at each height (``Nx2``, ``(x, z)``)."""
    out = []
    for low in np.arange(xz[:, 1].min(), xz[:, 1].max(), SLICE):
        row = xz[(xz[:, 1] >= low) & (xz[:, 1] < low + SLICE)]
        if len(row) >= MIN_SLICE_POINTS:
            z = float(row[:, 1].mean())
            out += [(float(row[:, 0].min()), z), (float(row[:, 0].max()), z)]
    return np.array(out).reshape(-1, 2)


def fit_on_edge(views: list[RestView], camera: Camera) -> FittedObject:
    """The plate standing on its edge whose face the views' points show: its axis across the face, its radius
    and centre from its rim's points, its thickness the face's spread across (a pixel's less)."""
    points = _all_points(views)
    along, across, width, thin, _ = _spreads(points)
    middle = points[:, :2].mean(axis=0)
    xz = np.c_[(points[:, :2] - middle) @ along, points[:, 2]]
    top = float(np.percentile(xz[:, 1], 98))
    centre_x, radius = 0.0, width / 2
    centre_z = top - radius
    rim = _rim(xz)
    if len(rim) >= MIN_RIM_POINTS:
        cx, cz, r = _circle(rim)
        if 0.5 * width / 2 <= r <= 2.0 * width / 2:  # else the rim's points were not a disc's
            centre_x, centre_z, radius = cx, min(cz, top - r + 0.002), r
    centre_z = max(centre_z, radius)  # never below the table
    eye = _camera_centre(views)
    pixel = float(np.linalg.norm(eye - points.mean(axis=0))) / camera.fx
    thickness = float(np.clip(thin - pixel, *THICKNESS_RANGE))
    away = across if float((middle - eye[:2]) @ across) > 0 else -across  # from the camera through the face
    centre_xy = middle + centre_x * along + (thickness / 2) * away
    # The plate's local y is its axis (across the face), its local x along the face.
    yaw = math.atan2(-across[0], across[1])
    shape = Shape(PLATE.name, (2 * radius, thickness, 2 * radius), {"radius": radius, ON_EDGE: 1.0})
    position = np.array([centre_xy[0], centre_xy[1], centre_z])
    shape.fit_error = _silhouette_error(shape, position, yaw, views, camera)
    return FittedObject(shape, position, yaw)
