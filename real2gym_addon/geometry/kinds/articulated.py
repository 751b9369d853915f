"""What the articulated kinds share (cabinet, door, drawer): walls of boxes, a shell open on one face,
and a bar handle on the front.

Every shape here is made of axis-aligned boxes in its local frame (z up, the origin at the centre of
``size``'s box). Its FRONT is its local +x face: a cabinet opens there, a door's outer face and a
drawer's front wall are there, and a bar handle stands off it. The boxes never overlap, so their
volumes add up to the solid's (the collision's mass is right) and the signed distance to the solid is
the least of the distances to them.

A bar handle (:data:`HANDLE_KEYS`) is a straight bar of square section held off the front face by two
standoffs, one at each end; it is a C when seen from its side. It stands outside ``size``'s box: the
box is the panel's (or the drawer's) and the handle adds ``handle_depth`` in front of it
(the box with the handle is the mesh's ``bounds``).
"""

from __future__ import annotations

import numpy as np

from ..pieces import GEOM_BOX, CollisionPiece, box_distance

HANDLE_KEYS = ("handle_length", "handle_depth", "handle_thickness", "handle_offset_y", "handle_offset_z")
"""A bar handle's parameters (m): the bar's length, how far its outer face stands in front of the front
face (local +x), the side of its square section (the standoffs' too), and where its middle is on the
front face (local y and z of the bar's centre). There is a handle where ``handle_length`` is given; the
others default to :data:`HANDLE_DEFAULTS`."""
HANDLE_DEFAULTS = {
    "handle_depth": 0.03,
    "handle_thickness": 0.012,
    "handle_offset_y": 0.0,
    "handle_offset_z": 0.0,
}
"""m: a bar handle's parameters where a shape leaves them out (a kitchen cabinet's bar pull)."""
AXIS_Y, AXIS_Z = 1, 2
"""Local axes a handle's bar may run along: y (across a drawer's front) or z (up a door)."""


def box_between(low, high) -> CollisionPiece:
    """The box piece between two opposite corners ``low`` and ``high`` (3,), metres, local frame."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    return CollisionPiece(GEOM_BOX, tuple((high - low) / 2), tuple((high + low) / 2))


def pieces_distance(pieces: list[CollisionPiece], points: np.ndarray) -> np.ndarray:
    """Signed distance (m) from ``Nx3`` local points to the union of unrotated box pieces (negative inside)."""
    points = np.asarray(points, float)
    return np.min([box_distance(points - p.position, np.asarray(p.size)) for p in pieces], axis=0)


def box_corners(centre, half) -> np.ndarray:
    """The eight corners (``8x3``, metres) of the box of half extents ``half`` about ``centre``."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return np.asarray(centre, float) + signs * np.asarray(half, float)


def pieces_corners(pieces: list[CollisionPiece]) -> np.ndarray:
    """The corners of every unrotated box piece: ``(8N)x3``, metres, local frame."""
    return np.concatenate([box_corners(p.position, p.size) for p in pieces])


def checked_cavity(kind: str, size, low, high) -> tuple[np.ndarray, np.ndarray]:
    """The cavity between corners ``low`` and ``high`` (m) as ``(centre (3,), half extents (3,))``.

    Raises:
        ValueError: Naming the kind and its size, when the walls leave no room inside.
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    if np.any(high - low <= 0):
        raise ValueError(f"a {kind} of size {[round(float(s), 4) for s in size]} m has walls too thick to "
                         "leave a space inside: make its wall_thickness (and bottom_thickness) smaller")  # fmt: skip
    return (low + high) / 2, (high - low) / 2


def open_box_mesh(size, cavity_centre, cavity_half, axis: int):
    """A box with a box-shaped hollow open on its ``+axis`` face, as one watertight ``trimesh.Trimesh``.

    The surface is closed: the outer faces, the rim round the opening, and the hollow's walls (facing
    into it). The hollow must reach the ``+axis`` face and stay inside the box on every other side.

    Args:
        size: Full extents ``(sx, sy, sz)`` of the outer box, metres, centred on the local origin.
        cavity_centre: The hollow's centre (3,), metres, local frame.
        cavity_half: The hollow's half extents (3,), metres.
        axis: The local axis (0 x, 1 y, 2 z) on whose + face it opens.
    """
    import trimesh

    # Built with the opening on canonical +u and turned by a cyclic permutation of the axes (a
    # rotation, so the faces keep facing outwards).
    order = [axis, (axis + 1) % 3, (axis + 2) % 3]
    half = np.asarray(size, float)[order] / 2
    low = (np.asarray(cavity_centre, float) - cavity_half)[order]
    high = (np.asarray(cavity_centre, float) + cavity_half)[order]
    outer = [[(-half[0], half[0])[i], (-half[1], half[1])[j], (-half[2], half[2])[k]]
             for i in (0, 1) for j in (0, 1) for k in (0, 1)]  # fmt: skip
    inner = [
        [u, (low[1], high[1])[j], (low[2], high[2])[k]]
        for u in (half[0], low[0])
        for j in (0, 1)
        for k in (0, 1)
    ]
    canonical = np.array(outer + inner)

    def o(i, j, k):  # an outer corner
        return 4 * i + 2 * j + k

    def f(j, k):  # the opening's corner on the front face
        return 8 + 2 * j + k

    def b(j, k):  # the hollow's far corner
        return 12 + 2 * j + k

    quads = [  # each with the direction it faces (out of the solid)
        ((o(0, 0, 0), o(0, 1, 0), o(0, 1, 1), o(0, 0, 1)), (-1, 0, 0)),
        ((o(0, 0, 0), o(1, 0, 0), o(1, 0, 1), o(0, 0, 1)), (0, -1, 0)),
        ((o(0, 1, 0), o(1, 1, 0), o(1, 1, 1), o(0, 1, 1)), (0, 1, 0)),
        ((o(0, 0, 0), o(1, 0, 0), o(1, 1, 0), o(0, 1, 0)), (0, 0, -1)),
        ((o(0, 0, 1), o(1, 0, 1), o(1, 1, 1), o(0, 1, 1)), (0, 0, 1)),
        ((o(1, 0, 0), o(1, 1, 0), f(1, 0), f(0, 0)), (1, 0, 0)),  # the rim round the opening
        ((o(1, 0, 1), o(1, 1, 1), f(1, 1), f(0, 1)), (1, 0, 0)),
        ((o(1, 0, 0), o(1, 0, 1), f(0, 1), f(0, 0)), (1, 0, 0)),
        ((o(1, 1, 0), o(1, 1, 1), f(1, 1), f(1, 0)), (1, 0, 0)),
        ((b(0, 0), b(1, 0), b(1, 1), b(0, 1)), (1, 0, 0)),  # the hollow's walls, facing into it
        ((b(0, 0), b(1, 0), f(1, 0), f(0, 0)), (0, 0, 1)),
        ((b(0, 1), b(1, 1), f(1, 1), f(0, 1)), (0, 0, -1)),
        ((b(0, 0), f(0, 0), f(0, 1), b(0, 1)), (0, 1, 0)),
        ((b(1, 0), f(1, 0), f(1, 1), b(1, 1)), (0, -1, 0)),
    ]
    faces = []
    for (a, b_, c, d), facing in quads:
        normal = np.cross(canonical[b_] - canonical[a], canonical[c] - canonical[a])
        quad = (a, b_, c, d) if normal @ facing > 0 else (d, c, b_, a)
        faces += [quad[:3], (quad[0], quad[2], quad[3])]
    vertices = np.empty_like(canonical)
    vertices[:, order] = canonical
    return trimesh.Trimesh(vertices, np.array(faces), process=False)


def handle_of(shape) -> dict[str, float] | None:
    """A shape's bar handle parameters (:data:`HANDLE_KEYS`, defaults filled in), or None without one."""
    if "handle_length" not in shape.params:
        return None
    return {**HANDLE_DEFAULTS, **{k: float(v) for k, v in shape.params.items() if k in HANDLE_KEYS}}


def _handle_frame(shape, along: int) -> tuple[dict[str, float], float, float, float, float]:
    """A handle's parameters, the front face's x and its bar's span along ``along`` and across it (m).

    Raises:
        ValueError: The bar is shorter than its two standoffs or stands off less than its thickness.
    """
    handle = handle_of(shape)
    length, depth, thick = handle["handle_length"], handle["handle_depth"], handle["handle_thickness"]
    if thick <= 0 or length < 2 * thick or depth < thick:
        raise ValueError(f"a {shape.kind}'s handle needs handle_length >= 2 x handle_thickness and handle_depth >= "
                         f"handle_thickness > 0 (got {length:g}, {depth:g}, {thick:g} m)")  # fmt: skip
    middle = {AXIS_Y: handle["handle_offset_y"], AXIS_Z: handle["handle_offset_z"]}
    across = AXIS_Z if along == AXIS_Y else AXIS_Y
    return handle, shape.size[0] / 2, middle[along], middle[across], across


def handle_pieces(shape, along: int) -> list[CollisionPiece]:
    """A bar handle's boxes in the local frame: the bar, then its two standoffs (none where the bar sits
    on the face); an empty list without a handle.

    Args:
        shape: A shape with :data:`HANDLE_KEYS` in its params (or none).
        along: The local axis the bar runs along: :data:`AXIS_Y` or :data:`AXIS_Z`.
    """
    if handle_of(shape) is None:
        return []
    handle, front, middle, side, across = _handle_frame(shape, along)
    length, depth, thick = handle["handle_length"], handle["handle_depth"], handle["handle_thickness"]

    def piece(x0, x1, a0, a1):
        low, high = np.array([x0, 0.0, 0.0]), np.array([x1, 0.0, 0.0])
        low[along], high[along] = a0, a1
        low[across], high[across] = side - thick / 2, side + thick / 2
        return box_between(low, high)

    ends = middle - length / 2, middle + length / 2
    pieces = [piece(front + depth - thick, front + depth, *ends)]
    if depth - thick > 1e-9:
        pieces += [piece(front, front + depth - thick, ends[0], ends[0] + thick),
                   piece(front, front + depth - thick, ends[1] - thick, ends[1])]  # fmt: skip
    return pieces


def handle_mesh(shape, along: int):
    """A bar handle as one watertight ``trimesh.Trimesh`` (its C-shaped side outline extruded across the
    bar), local frame; None without a handle. ``along`` as for :func:`handle_pieces`."""
    import trimesh

    if handle_of(shape) is None:
        return None
    handle, front, middle, side, across = _handle_frame(shape, along)
    length, depth, thick = handle["handle_length"], handle["handle_depth"], handle["handle_thickness"]
    if depth - thick <= 1e-9:  # the bar lies on the face: a plain box
        (bar,) = handle_pieces(shape, along)
        return trimesh.creation.box(extents=2 * np.asarray(bar.size), transform=_translation(bar.position))
    x0, x1, xb = front, front + depth, front + depth - thick
    a0, a1 = middle - length / 2, middle + length / 2
    outline = np.array([[x0, a0], [x1, a0], [x1, a1], [x0, a1], [x0, a1 - thick], [xb, a1 - thick],
                        [xb, a0 + thick], [x0, a0 + thick]])  # fmt: skip
    vertices = np.zeros((16, 3))
    for layer, c in enumerate((side - thick / 2, side + thick / 2)):
        rows = slice(8 * layer, 8 * layer + 8)
        vertices[rows, 0], vertices[rows, along], vertices[rows, across] = outline[:, 0], outline[:, 1], c
    cap = np.array([[0, 1, 6], [0, 6, 7], [6, 1, 2], [6, 2, 5], [5, 2, 3], [5, 3, 4]])
    sides = [[[i, (i + 1) % 8 + 8, (i + 1) % 8], [i, i + 8, (i + 1) % 8 + 8]] for i in range(8)]
    mesh = trimesh.Trimesh(vertices, np.concatenate([cap, cap[:, ::-1] + 8, np.reshape(sides, (-1, 3))]),
                           process=False)  # fmt: skip
    if mesh.volume < 0:  # the outline's plane is (x, z) or (x, y): one of them turns it inside out
        mesh.invert()
    return mesh


def _translation(position) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, 3] = position
    return matrix


def with_handle(body, shape, along: int):
    """``body`` (a watertight trimesh, local frame) with the shape's bar handle added where it has one."""
    import trimesh

    handle = handle_mesh(shape, along)
    return body if handle is None else trimesh.util.concatenate([body, handle])
