"""A shelf: horizontal boards between two sides, with a back, open on its front (local +x).

A book or a box is put on one of its boards (the ``shelve`` task). ``size`` is the outer box: its depth
along local x (the front at +x), its width along y and its height along z. The two sides stand at
y = +-width/2, ``side_thickness`` thick, the full depth and height; the back, ``back_thickness`` thick (0
for none), stands at the rear (x = -depth/2) between them. Each board spans between the sides from the
back's front face to the front, ``board_thickness`` thick, its top face ``board{i}_height`` above the
shelf's bottom (``board0`` the lowest; a bottom board on the floor has its top at ``board_thickness``,
a board whose top is at the full height caps the shelf).

Above each board is a space things stand in (:func:`spaces`): up to the next board's underside, or to
the sides' top for the highest board. The shelf collides as its boxes (never one hull, which would
fill the spaces); its visual mesh is the same boxes.
"""

from __future__ import annotations

import numpy as np

from ..pieces import CollisionPiece
from .articulated import box_between, box_corners, pieces_distance
from .base import ShapeKind

MAX_BOARDS = 6
"""The most boards a shelf may have (``board0_height`` to ``board5_height``)."""
SHARED_KEYS = ("side_thickness", "back_thickness", "board_thickness", "board_count")
"""A shelf's parameters besides its boards' heights (m; ``board_count`` a count)."""
THICKNESS_SHARE = 0.05
"""A shelf fitted without a measure of its boards gets boards and sides this share of its height thick ..."""
THICKNESS_RANGE = (0.008, 0.025)
"""... within these bounds (m)."""


def board_key(index: int) -> str:
    """``board{index}_height``: the name of a board's height parameter."""
    return f"board{index}_height"


def board_heights(params: dict) -> list[float]:
    """The boards' top faces above the shelf's bottom (m), lowest first.

    Raises:
        ValueError: ``board_count`` is not a whole number from 1 to :data:`MAX_BOARDS`, a board's height is
            missing, or two boards overlap (their tops closer than a board's thickness).
    """
    count = params.get("board_count")
    if count is None or count != int(count) or not 1 <= count <= MAX_BOARDS:
        raise ValueError(f"a shelf's board_count is a whole number from 1 to {MAX_BOARDS}, got {count!r}")
    missing = [board_key(i) for i in range(int(count)) if board_key(i) not in params]
    if missing:
        raise ValueError(f"a shelf of {int(count)} boards lacks {', '.join(missing)}")
    heights = [float(params[board_key(i)]) for i in range(int(count))]
    thickness = float(params["board_thickness"])
    if heights[0] < thickness - 1e-9 or np.any(np.diff(heights) < thickness - 1e-9):
        raise ValueError(
            f"a shelf's boards overlap or reach below its bottom: tops at {[round(h, 4) for h in heights]} m, "
            f"each {thickness:.4f} m thick"
        )
    return heights


def spaces(shape) -> list[tuple[np.ndarray, np.ndarray]]:
    """The space above each board (``(centre (3,), half extents (3,))``, m, local frame), lowest first.

    Each runs from the back's front face to the front (x), between the sides (y), and from the board's top
    to the next board's underside, or to the sides' top above the highest board; a board at the full
    height has no space above it (it is left out).
    """
    p, half = shape.params, np.asarray(shape.size, float) / 2
    heights = board_heights(p)
    x0, y0 = -half[0] + p["back_thickness"], -half[1] + p["side_thickness"]
    tops = [h - p["board_thickness"] for h in heights[1:]] + [2 * half[2]]
    out = []
    for bottom, top in zip(heights, tops, strict=True):
        if top - bottom > 1e-6:
            low = np.array([x0, y0, bottom - half[2]])
            high = np.array([half[0], -y0, top - half[2]])
            out.append(((low + high) / 2, (high - low) / 2))
    return out


def shelf_pieces(shape) -> list[CollisionPiece]:
    """The two sides, the back (where it has one) and each board, as boxes that do not overlap."""
    p, half = shape.params, np.asarray(shape.size, float) / 2
    side, back, board = p["side_thickness"], p["back_thickness"], p["board_thickness"]
    if 2 * side >= 2 * half[1] or back >= 2 * half[0]:
        raise ValueError(
            f"a shelf of size {[round(float(s), 4) for s in shape.size]} m has sides or a back too thick to leave "
            "room between them: make its side_thickness or back_thickness smaller"
        )
    y0, y1 = -half[1] + side, half[1] - side
    pieces = [box_between(-half, [half[0], y0, half[2]]), box_between([-half[0], y1, -half[2]], half)]
    x0 = -half[0] + back
    if back > 0:
        pieces.append(box_between([-half[0], y0, -half[2]], [x0, y1, half[2]]))
    for height in board_heights(p):
        pieces.append(box_between([x0, y0, height - board - half[2]], [half[0], y1, height - half[2]]))
    return pieces


def default_params(size) -> dict[str, float]:
    """A shelf of outer ``size`` (m) where nothing measured its boards: a bottom board and a top one."""
    thickness = float(np.clip(THICKNESS_SHARE * size[2], *THICKNESS_RANGE))
    return {"side_thickness": thickness, "back_thickness": thickness / 2, "board_thickness": thickness,
            "board_count": 2, board_key(0): thickness, board_key(1): float(size[2])}  # fmt: skip


def shelf_heights(params: dict) -> list[str]:
    """The keys of ``params`` that are heights (a scale along z scales them)."""
    return [board_key(i) for i in range(int(params["board_count"]))]


def scale_params(params: dict, factors) -> tuple[dict, None]:
    """A scale's parameters: the boards' heights follow z (a bottom board stays on the floor); the boards'
    and walls' thickness stays."""
    params = dict(params)
    for key in shelf_heights(params):
        if params[key] > params["board_thickness"] + 1e-9:
            params[key] *= factors[2]
    return params, None


def _mesh(shape):
    import trimesh

    boxes = []
    for piece in shelf_pieces(shape):
        boxes.append(trimesh.creation.box(extents=2 * np.asarray(piece.size), transform=_translation(piece)))
    return trimesh.util.concatenate(boxes)


def _translation(piece: CollisionPiece) -> np.ndarray:
    transform = np.eye(4)
    transform[:3, 3] = piece.position
    return transform


SHELF = ShapeKind(
    "shelf",
    "A shelf: boards between two sides, with a back, open on its front",
    params=SHARED_KEYS,
    optional_params=tuple(board_key(i) for i in range(MAX_BOARDS)),
    mesh=_mesh,
    collision_pieces=shelf_pieces,
    outline_points=lambda shape: box_corners(np.zeros(3), np.asarray(shape.size, float) / 2),
    surface_distance=lambda shape, points: pieces_distance(shelf_pieces(shape), points),
    spaces=spaces,
    scale_params=scale_params,
)
