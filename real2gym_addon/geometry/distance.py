"""Signed distance from points to a shape's surface (the shape's local frame), for fitting and tracing.

A box, a cylinder or plate, a container (its cross-section revolved, a handle's bars
added) have exact distances; a mesh has the distance to samples of its surface.
"""

from __future__ import annotations

import numpy as np

from .shapes import Shape


def surface_distance(shape: Shape, points: np.ndarray) -> np.ndarray:
    """Signed distance (m) from local-frame points (``Nx3``) to the shape's surface."""
    sx, sy, sz = shape.size
    if shape.kind == "box":
        return _box_sdf(points, np.array([sx, sy, sz]) / 2)
    if shape.kind in ("cylinder", "plate"):
        radial = np.c_[np.hypot(points[:, 0], points[:, 1]), points[:, 2]]
        return _box_sdf_2d(radial, np.array([0.0, 0.0]), np.array([sx / 2, sz / 2]), radial_axis=True)
    if shape.is_container:
        axis = shape.axis_offset()  # off the origin for a cup with a handle
        radial = np.c_[np.hypot(points[:, 0] - axis[0], points[:, 1] - axis[1]), points[:, 2]]
        distance = _cross_section_sdf(radial, shape.cross_section())
        for piece in shape.handle_pieces():
            distance = np.minimum(distance, _box_sdf(points - piece.position, np.array(piece.size)))
        return distance
    from scipy.spatial import cKDTree

    samples = shape.surface_points(800)
    return cKDTree(samples).query(points)[0]


def _cross_section_sdf(radial: np.ndarray, section: np.ndarray) -> np.ndarray:
    """Signed distance from ``(r, z)`` points to a solid of revolution's cross-section.

    The section's edges on the axis (its first and last) are not surfaces and are
    left out of the distance, but count for inside.
    """
    starts, ends = section, np.roll(section, -1, axis=0)
    edges = ends - starts
    rel = radial[:, None, :] - starts[None]
    t = np.clip(np.einsum("nkd,kd->nk", rel, edges) / np.maximum((edges**2).sum(axis=1), 1e-18), 0.0, 1.0)
    gap = np.linalg.norm(rel - t[..., None] * edges[None], axis=2)
    on_axis = (np.abs(starts[:, 0]) < 1e-12) & (np.abs(ends[:, 0]) < 1e-12)
    distance = gap[:, ~on_axis].min(axis=1)
    # Even-odd rule: a ray towards +r crosses the outline an odd number of times from inside.
    z, r = radial[:, 1:2], radial[:, 0:1]
    spans = (starts[None, :, 1] > z) != (ends[None, :, 1] > z)
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing_r = starts[None, :, 0] + (z - starts[None, :, 1]) * edges[None, :, 0] / edges[None, :, 1]
    inside = (spans & (crossing_r > r)).sum(axis=1) % 2 == 1
    return np.where(inside, -distance, distance)


def _box_sdf(points: np.ndarray, half: np.ndarray) -> np.ndarray:
    q = np.abs(points) - half
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    inside = np.minimum(q.max(axis=1), 0.0)
    return outside + inside


def _box_sdf_2d(
    points: np.ndarray, centre: np.ndarray, half: np.ndarray, radial_axis: bool = False
) -> np.ndarray:
    offset = points - centre
    if radial_axis:
        offset[:, 0] = points[:, 0]  # the radius is already >= 0 and the box starts on the axis
    q = np.abs(offset) - half
    return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
