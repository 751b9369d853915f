"""A dish rack: a row of upright slots on a base, a plate standing on its edge in each.

A plate is shelved upright in one of its slots (the ``shelve`` task). ``size`` is the outer box: its
depth along local x, its width along y (the row) and its height along z. The base, ``base_thickness``
thick, fills the whole footprint on the floor. ``slot_count`` slots stand in a row along y, ``pitch``
apart centre to centre, the row centred; each slot is the gap, ``slot_width`` wide, between two upright
dividers ``pitch - slot_width`` thick that span the full depth and rise from the base's top to the full
height. Divider ``k`` (0 to ``slot_count``) is centred at ``y = (k - slot_count / 2) * pitch``; slot
``j`` at ``y = (j + 1/2 - slot_count / 2) * pitch``. A wire rack's tines are drawn as such walls: a plate
leans on a tine as on a wall.

Each slot is a space a plate stands in (:func:`spaces`), from the base's top to the top. The rack
collides as its boxes (never one hull, which would fill the slots).
"""

from __future__ import annotations

import numpy as np

from ..pieces import CollisionPiece
from .articulated import box_between, box_corners, pieces_distance
from .base import ShapeKind

MAX_SLOTS = 16
"""The most slots a dish rack may have."""
KEYS = ("base_thickness", "slot_count", "pitch", "slot_width")
"""A dish rack's parameters (m; ``slot_count`` a count)."""
MIN_DIVIDER = 0.001
"""m: the thinnest divider a dish rack may have (``pitch - slot_width``)."""


def slot_centres(params: dict) -> np.ndarray:
    """Each slot's centre along local y (m), in order.

    Raises:
        ValueError: ``slot_count`` is not a whole number from 1 to :data:`MAX_SLOTS`, or the dividers
            would be thinner than :data:`MIN_DIVIDER` (``slot_width`` not less than ``pitch``).
    """
    count = params.get("slot_count")
    if count is None or count != int(count) or not 1 <= count <= MAX_SLOTS:
        raise ValueError(f"a dish rack's slot_count is a whole number from 1 to {MAX_SLOTS}, got {count!r}")
    if params["slot_width"] <= 0 or params["pitch"] - params["slot_width"] < MIN_DIVIDER:
        raise ValueError(
            f"a dish rack's slots ({params['slot_width'] * 1000:.1f} mm wide, {params['pitch'] * 1000:.1f} mm apart) "
            f"leave no divider between them: its slot_width must be at least {MIN_DIVIDER * 1000:.0f} mm less than "
            "its pitch"
        )
    return (np.arange(int(count)) + 0.5 - count / 2) * params["pitch"]


ROUNDING = 1e-4
"""m: how much wider than the rack its row may be read back: report.json keeps sizes and parameters to 10
micrometres, and a row as wide as its rack, its pitch counted once per slot, came back up to 30 micrometres
wider than it (a run's report then could not be simulated again)."""


def row_width(params: dict) -> float:
    """m: the row of dividers' full width along y (outer divider face to outer divider face)."""
    return float(params["slot_count"] * params["pitch"] + params["pitch"] - params["slot_width"])


def spaces(shape) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each slot's space (``(centre (3,), half extents (3,))``, m, local frame), in order along y: the full
    depth, between its dividers, from the base's top to the top."""
    p, half = shape.params, np.asarray(shape.size, float) / 2
    bottom = -half[2] + p["base_thickness"]
    height = (half[2] - bottom) / 2
    return [
        (np.array([0.0, y, bottom + height]), np.array([half[0], p["slot_width"] / 2, height]))
        for y in slot_centres(p)
    ]


def dish_rack_pieces(shape) -> list[CollisionPiece]:
    """The base and each divider, as boxes that do not overlap."""
    p, half = shape.params, np.asarray(shape.size, float) / 2
    centres = slot_centres(p)
    if row_width(p) > 2 * half[1] + ROUNDING or p["base_thickness"] >= 2 * half[2]:
        raise ValueError(
            f"a dish rack of size {[round(float(s), 4) for s in shape.size]} m cannot hold {int(p['slot_count'])} "
            f"slots {p['pitch'] * 1000:.1f} mm apart ({row_width(p) * 1000:.1f} mm of dividers) on a base "
            f"{p['base_thickness'] * 1000:.1f} mm thick: make it wider or taller, or its pitch smaller"
        )
    top = -half[2] + p["base_thickness"]
    pieces = [box_between(-half, [half[0], half[1], top])]
    divider = (p["pitch"] - p["slot_width"]) / 2
    for y in np.append(centres - p["pitch"] / 2, centres[-1] + p["pitch"] / 2):
        pieces.append(box_between([-half[0], y - divider, top], [half[0], y + divider, half[2]]))
    return pieces


def default_params(size, plate_thickness: float = 0.015) -> dict[str, float]:
    """A dish rack of outer ``size`` (m) where nothing measured its slots: slots twice a plate's thickness
    wide, dividers a third of that, as many as the width holds."""
    width = 2 * plate_thickness
    pitch = width + max(plate_thickness / 1.5, MIN_DIVIDER)
    count = int(np.clip((size[1] - (pitch - width)) // pitch, 1, MAX_SLOTS))
    base = float(np.clip(0.08 * size[2], 0.004, 0.015))
    return {"base_thickness": base, "slot_count": count, "pitch": float(pitch), "slot_width": float(width)}


def scale_params(params: dict, factors) -> tuple[dict, None]:
    """A scale's parameters: the row's pitch and slots follow y (the dividers keep their share), the base's
    thickness z."""
    params = dict(params)
    params["pitch"] *= factors[1]
    params["slot_width"] *= factors[1]
    params["base_thickness"] *= factors[2]
    return params, None


def _mesh(shape):
    import trimesh

    boxes = []
    for piece in dish_rack_pieces(shape):
        transform = np.eye(4)
        transform[:3, 3] = piece.position
        boxes.append(trimesh.creation.box(extents=2 * np.asarray(piece.size), transform=transform))
    return trimesh.util.concatenate(boxes)


DISH_RACK = ShapeKind(
    "dish_rack",
    "A dish rack: a row of upright slots on a base, a plate standing in each",
    params=KEYS,
    mesh=_mesh,
    collision_pieces=dish_rack_pieces,
    outline_points=lambda shape: box_corners(np.zeros(3), np.asarray(shape.size, float) / 2),
    surface_distance=lambda shape, points: pieces_distance(dish_rack_pieces(shape), points),
    spaces=spaces,
    scale_params=scale_params,
)
