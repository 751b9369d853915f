"""A solid upright cylinder: a diameter and a height."""

from __future__ import annotations

import numpy as np

from ..pieces import cylinder_piece, ring_outline, upright_cylinder_distance
from .base import ShapeKind


def solid_mesh(shape):
    """A 48-sided cylinder as wide as the shape's x extent and as tall as its z."""
    import trimesh

    return trimesh.creation.cylinder(radius=shape.size[0] / 2, height=shape.size[2], sections=48)


def solid_outline(shape) -> np.ndarray:
    """Rings round the top and the bottom."""
    sx, _, sz = shape.size
    return ring_outline([-sz / 2, sz / 2], [sx / 2] * 2)


def solid_distance(shape, points: np.ndarray) -> np.ndarray:
    """To the cylinder's surface."""
    return upright_cylinder_distance(points, shape.size[0] / 2, shape.size[2] / 2)


CYLINDER = ShapeKind(
    "cylinder",
    "A solid cylinder",
    round=True,
    mesh=solid_mesh,
    collision_pieces=lambda shape: [cylinder_piece(shape.size)],
    outline_points=solid_outline,
    surface_distance=solid_distance,
)
