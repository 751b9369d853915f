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


_SURFACE_TREES: dict[bytes, object] = {}
"""Surface samples' KD-trees by the mesh's vertices and faces: a mesh is the same on every frame a motion
fit asks it about, and its hull and samples made anew each time were 310 of a microwave scene's 340 s of
geometry (a cup fitted as the hull of its points, 30 000 distance calls)."""
SURFACE_TREES_KEPT = 16


def _distance(shape, points: np.ndarray) -> np.ndarray:
    """To samples of its surface (unsigned: a mesh has no exact distance here)."""
    import hashlib

    from scipy.spatial import cKDTree

    digest = hashlib.blake2b(np.ascontiguousarray(shape.vertices, float).tobytes(), digest_size=16)
    if shape.faces is not None:
        digest.update(np.ascontiguousarray(shape.faces, np.int64).tobytes())
    key = digest.digest()
    tree = _SURFACE_TREES.get(key)
    if tree is None:
        if len(_SURFACE_TREES) >= SURFACE_TREES_KEPT:
            _SURFACE_TREES.pop(next(iter(_SURFACE_TREES)))
        tree = _SURFACE_TREES[key] = cKDTree(shape.surface_points(800))
    return tree.query(points)[0]


MESH = ShapeKind(
    "mesh",
    "The user's own OBJ mesh, or the hull of the depth points",
    user_file=True,
    mesh=_mesh,
    collision_pieces=lambda shape: [box_piece(shape.size)],  # primitives: its bounding box; else its hull
    outline_points=lambda shape: np.asarray(shape.vertices),
    surface_distance=_distance,
)
