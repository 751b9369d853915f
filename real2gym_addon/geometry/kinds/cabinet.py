"""A cabinet: a box open on its front (local +x), with a back, two sides, a top and a bottom.

It stands for a cupboard, a wall cabinet or a microwave's body: something a cup is put into through
the front. Its ``size`` is the outer box; every wall is ``wall_thickness`` thick. The space inside
(:func:`cavity`) reaches the front face, where it is open. It collides as its five walls (never one
hull, which would close the opening); its visual mesh is the same solid, one closed surface.
"""

from __future__ import annotations

import numpy as np

from ..pieces import CollisionPiece
from .articulated import box_between, box_corners, checked_cavity, open_box_mesh, pieces_distance
from .base import ShapeKind

WALL_SHARE = 0.05
"""A fitted cabinet's walls are this fraction of its smallest extent thick ..."""
WALL_RANGE = (0.005, 0.02)
"""... within these bounds (m)."""


def cavity(shape) -> tuple[np.ndarray, np.ndarray]:
    """The empty space inside: ``(centre (3,), half extents (3,))``, metres, local frame.

    It runs from the back wall's inner face to the front face (x), between the sides (y) and between
    the bottom and the top (z).

    Raises:
        ValueError: The walls leave no space inside.
    """
    half, wall = np.asarray(shape.size, float) / 2, shape.params["wall_thickness"]
    low = np.array([-half[0] + wall, -half[1] + wall, -half[2] + wall])
    high = np.array([half[0], half[1] - wall, half[2] - wall])
    return checked_cavity(shape.kind, shape.size, low, high)


def wall_pieces(shape) -> list[CollisionPiece]:
    """The five walls as boxes that do not overlap: the back (full size), the two sides (from the back to
    the front), the bottom and the top (between the sides)."""
    half, wall = np.asarray(shape.size, float) / 2, shape.params["wall_thickness"]
    cavity(shape)  # the walls leave a space inside
    x0, x1, y0, y1 = -half[0] + wall, half[0], -half[1] + wall, half[1] - wall
    return [
        box_between(-half, [x0, half[1], half[2]]),
        box_between([x0, -half[1], -half[2]], [x1, y0, half[2]]),
        box_between([x0, y1, -half[2]], [x1, half[1], half[2]]),
        box_between([x0, y0, -half[2]], [x1, y1, -half[2] + wall]),
        box_between([x0, y0, half[2] - wall], [x1, y1, half[2]]),
    ]


def default_params(size) -> dict[str, float]:
    """The parameters a cabinet of outer ``size`` (m) gets where nothing measured them (a box fit)."""
    return {"wall_thickness": float(np.clip(WALL_SHARE * min(size), *WALL_RANGE))}


def _mesh(shape):
    return open_box_mesh(shape.size, *cavity(shape), axis=0)


CABINET = ShapeKind(
    "cabinet",
    "A box open on its front: a cabinet, or a microwave's body",
    params=("wall_thickness",),
    mesh=_mesh,
    collision_pieces=wall_pieces,
    outline_points=lambda shape: box_corners(np.zeros(3), np.asarray(shape.size, float) / 2),
    surface_distance=lambda shape, points: pieces_distance(wall_pieces(shape), points),
    cavity=cavity,
)
