"""A door: a flat panel, with a bar handle standing off its outer face where one shows.

The panel's thickness is along local x, its width along y and its height along z: ``size`` is
``(thickness, width, height)``, the panel's own box. Its outer face (the one a hand pulls) is its
FRONT, the local +x face. A handle (:data:`.articulated.HANDLE_KEYS`) is a vertical bar (along z)
``handle_length`` long, held off the front face by two standoffs, its outer face ``handle_depth`` in
front of the panel, its middle at ``(handle_offset_y, handle_offset_z)`` on the face. The handle stands
OUTSIDE ``size``'s box, so the origin is the panel's centre and the panel's edges (where a hinge goes)
are at ``y = +-width / 2``; the box with the handle is the mesh's ``bounds``.
"""

from __future__ import annotations

from ..pieces import CollisionPiece, box_piece
from .articulated import AXIS_Z, HANDLE_KEYS, handle_pieces, pieces_corners, pieces_distance, with_handle
from .base import ShapeKind

HANDLE_AXIS = AXIS_Z
"""A door's bar handle runs up the door (local z)."""


def door_pieces(shape) -> list[CollisionPiece]:
    """The panel's box, then the handle's bar and its two standoffs where it has a handle."""
    return [box_piece(shape.size), *handle_pieces(shape, HANDLE_AXIS)]


def default_params(size) -> dict[str, float]:
    """A door fitted as a box has no parameters (no handle is assumed)."""
    return {}


def _mesh(shape):
    import trimesh

    return with_handle(trimesh.creation.box(extents=tuple(shape.size)), shape, HANDLE_AXIS)


DOOR = ShapeKind(
    "door",
    "A flat door panel (its thickness along x), with a bar handle on its outer (+x) face where one shows",
    optional_params=HANDLE_KEYS,
    mesh=_mesh,
    collision_pieces=door_pieces,
    outline_points=lambda shape: pieces_corners(door_pieces(shape)),
    surface_distance=lambda shape, points: pieces_distance(door_pieces(shape), points),
)
