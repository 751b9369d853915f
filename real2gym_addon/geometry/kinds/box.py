"""A box: three extents, collided as itself."""

from __future__ import annotations

import numpy as np

from ..pieces import box_distance, box_piece
from .base import ShapeKind


def _mesh(shape):
    import trimesh

    return trimesh.creation.box(extents=tuple(shape.size))


def _outline(shape) -> np.ndarray:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return corners * np.asarray(shape.size, float) / 2


BOX = ShapeKind(
    "box",
    "A box: three extents",
    mesh=_mesh,
    collision_pieces=lambda shape: [box_piece(shape.size)],
    outline_points=_outline,
    surface_distance=lambda shape, points: box_distance(points, np.asarray(shape.size, float) / 2),
)
