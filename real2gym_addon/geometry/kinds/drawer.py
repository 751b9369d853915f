"""A drawer: an open-top box whose front wall (local +x) may carry a bar handle.

``size`` is the drawer's own box (without the handle); its four walls are ``wall_thickness`` thick
and its bottom ``bottom_thickness``. The space inside (:func:`cavity`) reaches the top face, where it
is open. A handle (:data:`.articulated.HANDLE_KEYS`) is a horizontal bar (along y) on the front face,
its middle at ``(handle_offset_y, handle_offset_z)``, standing ``handle_depth`` in front of it,
outside ``size``'s box (the box with the handle is the mesh's ``bounds``). It collides as its bottom,
four walls and the handle's boxes.
"""

from __future__ import annotations

import numpy as np

from ..pieces import CollisionPiece
from .articulated import (
    AXIS_Y,
    HANDLE_KEYS,
    box_between,
    box_corners,
    checked_cavity,
    handle_pieces,
    open_box_mesh,
    pieces_corners,
    pieces_distance,
    with_handle,
)
from .base import ShapeKind

HANDLE_AXIS = AXIS_Y
"""A drawer's bar handle runs across its front (local y)."""
WALL_SHARE = 0.05
"""A fitted drawer's walls are this fraction of its smaller horizontal extent thick, its bottom this
fraction of its height ..."""
WALL_RANGE = (0.004, 0.02)
"""... within these bounds (m)."""


def cavity(shape) -> tuple[np.ndarray, np.ndarray]:
    """The empty space inside: ``(centre (3,), half extents (3,))``, metres, local frame.

    It runs between the front and back walls (x) and the sides (y), from the bottom's top face up to
    the top face (z), where it is open.

    Raises:
        ValueError: The walls or the bottom leave no space inside.
    """
    half = np.asarray(shape.size, float) / 2
    wall, bottom = shape.params["wall_thickness"], shape.params["bottom_thickness"]
    low = np.array([-half[0] + wall, -half[1] + wall, -half[2] + bottom])
    high = np.array([half[0] - wall, half[1] - wall, half[2]])
    return checked_cavity(shape.kind, shape.size, low, high)


def wall_pieces(shape) -> list[CollisionPiece]:
    """The bottom (full footprint), the front and back walls (full width, above the bottom) and the two
    sides (between them), as boxes that do not overlap."""
    half = np.asarray(shape.size, float) / 2
    wall, bottom = shape.params["wall_thickness"], shape.params["bottom_thickness"]
    cavity(shape)  # the walls leave a space inside
    floor, x0, x1 = -half[2] + bottom, -half[0] + wall, half[0] - wall
    return [
        box_between(-half, [half[0], half[1], floor]),
        box_between([x1, -half[1], floor], half),
        box_between([-half[0], -half[1], floor], [x0, half[1], half[2]]),
        box_between([x0, -half[1], floor], [x1, -half[1] + wall, half[2]]),
        box_between([x0, half[1] - wall, floor], [x1, half[1], half[2]]),
    ]


def drawer_pieces(shape) -> list[CollisionPiece]:
    """The walls (:func:`wall_pieces`), then the handle's bar and standoffs where it has a handle."""
    return [*wall_pieces(shape), *handle_pieces(shape, HANDLE_AXIS)]


def default_params(size) -> dict[str, float]:
    """The parameters a drawer of ``size`` (m) gets where nothing measured them (a box fit; no handle)."""
    sx, sy, sz = size
    return {"wall_thickness": float(np.clip(WALL_SHARE * min(sx, sy), *WALL_RANGE)),
            "bottom_thickness": float(np.clip(WALL_SHARE * sz, *WALL_RANGE))}  # fmt: skip


def _mesh(shape):
    return with_handle(open_box_mesh(shape.size, *cavity(shape), axis=2), shape, HANDLE_AXIS)


def _outline(shape) -> np.ndarray:
    body = box_corners(np.zeros(3), np.asarray(shape.size, float) / 2)
    handle = handle_pieces(shape, HANDLE_AXIS)
    return np.concatenate([body, pieces_corners(handle)]) if handle else body


DRAWER = ShapeKind(
    "drawer",
    "An open-top box (a drawer), with a bar handle on its front (+x) wall where one shows",
    params=("wall_thickness", "bottom_thickness"),
    optional_params=HANDLE_KEYS,
    mesh=_mesh,
    collision_pieces=drawer_pieces,
    outline_points=_outline,
    surface_distance=lambda shape, points: pieces_distance(drawer_pieces(shape), points),
    cavity=cavity,
)
