"""A mesh: the user's own OBJ file, or the convex hull of the depth points closed down to the table."""

from __future__ import annotations

import numpy as np

from ..pieces import box_piece
from .base import ShapeKind


def _mesh(shape):
    import trimesh

    if shape.faces is not None:
        return trimesh.Trimesh(shape.vertices, shape.faces, process=False)
    return trimesh.convex.convex_hull(shape.vertices)


def _distance(shape, points: np.ndarray) -> np.ndarray:
    """To samples of its surface (unsigned: a mesh has no exact distance here)."""
    from scipy.spatial import cKDTree

    return cKDTree(shape.surface_points(800)).query(points)[0]


MESH = ShapeKind(
    "mesh",
    "The user's own OBJ mesh, or the hull of the depth points",
    user_file=True,
    mesh=_mesh,
    collision_pieces=lambda shape: [box_piece(shape.size)],  # primitives: its bounding box; else its hull
    outline_points=lambda shape: np.asarray(shape.vertices),
    surface_distance=_distance,
)
