"""Signed distance from points to a shape's surface (the shape's local frame), for fitting and tracing.

Each kind's entry in the shape table says how (:attr:`.kinds.base.ShapeKind.surface_distance`):
a box, a cylinder or plate, a container (its cross-section revolved, a handle's bars
added) have exact distances; a mesh has the distance to samples of its surface.
"""

from __future__ import annotations

import numpy as np

from .shapes import Shape


def surface_distance(shape: Shape, points: np.ndarray) -> np.ndarray:
    """Signed distance (m) from local-frame points (``Nx3``) to the shape's surface."""
    return shape.surface_distance(points)
