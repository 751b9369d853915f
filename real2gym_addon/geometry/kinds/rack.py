"""A rack: straight pegs a mug hangs on by its handle (the ``hang`` task), in one of two forms.

- **A mug tree** (the *stand* form): a round base (``base_radius``, ``base_thickness``) on the table, an
  upright post (``post_radius``, ``post_height``) on it; every peg starts on the post's axis at its own
  height (``peg{i}_height`` above the rack's bottom).
- **A hook board on a wall** (the *wall* form, which ``plate_thickness`` marks): a flat plate
  (``plate_width`` along the wall, ``plate_thickness`` out of it, ``post_height`` tall) whose back is on
  the wall; every peg starts on the plate's front face, ``peg{i}_offset`` along it from its middle and
  ``peg{i}_height`` above its bottom edge. The rack is fixed where it was fitted (the wall is scenery: it
  is not simulated, so nothing may lean on it).

In both, each peg runs out at its own azimuth (``peg{i}_azimuth``, about local z from local +x,
counter-clockwise seen from above; a wall's pegs point out of the wall at 0), tilted up from the
horizontal by ``peg_elevation``, for ``peg_length`` from its root to its tip's centre. All pegs share
their radius, length and elevation, as a rack's do.

The *post frame*: z up, its origin where the post's axis meets the rack's bottom (stand) or at the
middle of the plate's back face's bottom edge, x out of the wall (wall). The local frame is the
project's (z up, the origin at the centre of ``size``'s box, the post frame's axes): the post frame's
origin is off that centre (:func:`post_offset`). The box holds the base and the post, or the plate, and
each peg's axis from root to tip widened by the peg's radius every way (a cylinder's true extent is a
little less where it slants: the box never cuts it), never behind the wall.
"""

from __future__ import annotations

import math

import numpy as np

from ..pieces import GEOM_BOX, GEOM_CYLINDER, CollisionPiece, box_distance, upright_cylinder_distance
from .base import ShapeKind

MAX_PEGS = 6
"""The most pegs a rack may have (``peg0_*`` to ``peg5_*``)."""
PEG_KEYS = ("peg_height", "peg_azimuth")
"""Each peg's own parameters, numbered: ``peg{i}_height``, ``peg{i}_azimuth``."""
WALL_PEG_KEYS = ("peg_offset",)
"""A wall rack's pegs' own parameters besides :data:`PEG_KEYS`: ``peg{i}_offset``."""
SHARED_KEYS = ("post_height", "peg_radius", "peg_length", "peg_elevation", "peg_count")
"""Both forms' parameters besides the pegs' own (m; ``peg_elevation`` in radians, ``peg_count`` a count)."""
STAND_KEYS = ("base_radius", "base_thickness", "post_radius")
"""A mug tree's own parameters (m)."""
WALL_KEYS = ("plate_width", "plate_thickness")
"""A wall rack's own parameters (m)."""


def on_wall(params: dict) -> bool:
    """Whether ``params`` describe a hook board on a wall (the wall form), not a mug tree."""
    return "plate_thickness" in params


def floor(params: dict) -> float:
    """m above the table: what a hung object must clear, a mug tree's base's top, or the table under a wall
    rack."""
    return 0.0 if on_wall(params) else float(params["base_thickness"])


def peg_key(index: int, key: str) -> str:
    """``peg{index}_height`` from ``peg_height``: the numbered name of a peg's own parameter."""
    return f"peg{index}_{key.removeprefix('peg_')}"


def peg_count(params: dict) -> int:
    """How many pegs ``params`` describe.

    Raises:
        ValueError: ``peg_count`` is not a whole number from 1 to :data:`MAX_PEGS`, or a peg's own
            parameters are missing.
    """
    count = params.get("peg_count")
    if count is None or count != int(count) or not 1 <= count <= MAX_PEGS:
        raise ValueError(f"a rack's peg_count is a whole number from 1 to {MAX_PEGS}, got {count!r}")
    own = PEG_KEYS + WALL_PEG_KEYS if on_wall(params) else PEG_KEYS
    missing = [peg_key(i, k) for i in range(int(count)) for k in own if peg_key(i, k) not in params]
    missing += [k for k in SHARED_KEYS + (WALL_KEYS if on_wall(params) else STAND_KEYS) if k not in params]
    if missing:
        form = "a wall rack" if on_wall(params) else "a mug tree"
        raise ValueError(f"{form} of {int(count)} pegs lacks {', '.join(missing)}")
    return int(count)


def peg_direction(elevation: float, azimuth: float) -> np.ndarray:
    """``(3,)``: a peg's unit direction from its root to its tip, local frame."""
    return np.array(
        [
            math.cos(elevation) * math.cos(azimuth),
            math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation),
        ]
    )


def rack_heights(params: dict) -> list[str]:
    """The keys of ``params`` that are heights (a scale along z scales them)."""
    heights = ["post_height"] + [peg_key(i, "peg_height") for i in range(peg_count(params))]
    return heights if on_wall(params) else ["base_thickness", *heights]


def peg_root(params: dict, index: int) -> np.ndarray:
    """``(3,)``: where peg ``index``'s axis starts, post frame: on the post's axis, or on the plate's front
    face."""
    height = params[peg_key(index, "peg_height")]
    if on_wall(params):
        return np.array([params["plate_thickness"], params[peg_key(index, "peg_offset")], height])
    return np.array([0.0, 0.0, height])


def pegs_on_post(params: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each peg's root and tip (``(3,)`` each) in the post frame (module doc)."""
    pegs = []
    for i in range(peg_count(params)):
        root = peg_root(params, i)
        tip = root + params["peg_length"] * peg_direction(
            params["peg_elevation"], params[peg_key(i, "peg_azimuth")]
        )
        pegs.append((root, tip))
    return pegs


def bounds_on_post(params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The rack's box ``(low (3,), high (3,))`` in the post frame (see :func:`pegs_on_post`)."""
    if on_wall(params):
        half = params["plate_width"] / 2
        low = np.array([0.0, -half, 0.0])
        high = np.array([params["plate_thickness"], half, params["post_height"]])
    else:
        reach = max(params["base_radius"], params["post_radius"])
        low = np.array([-reach, -reach, 0.0])
        high = np.array([reach, reach, params["post_height"]])
    for root, tip in pegs_on_post(params):
        ends = np.stack([root, tip])
        low = np.minimum(low, ends.min(axis=0) - params["peg_radius"])
        high = np.maximum(high, ends.max(axis=0) + params["peg_radius"])
    if on_wall(params):
        low[0] = 0.0  # nothing reaches into the wall
    else:
        low[2] = 0.0  # a peg's root, widened by its radius, never reaches below the base
    return low, high


def size_of(params: dict) -> tuple[float, float, float]:
    """The full extents (m) of the box a rack of ``params`` fills."""
    low, high = bounds_on_post(params)
    return tuple(float(v) for v in high - low)


def post_offset(shape) -> np.ndarray:
    """``(3,)``: where the post's frame's origin (its axis at the rack's bottom) is in the local frame."""
    low, high = bounds_on_post(shape.params)
    return -(low + high) / 2


def scale_params(params: dict, factors) -> tuple[dict, tuple[float, float, float]]:
    """A scale's parameters: the pegs' heights follow z; the post's and pegs' radii and the pegs' length x;
    a wall rack's plate's thickness x and its width and its pegs' offsets y."""
    params = dict(params)
    for key in rack_heights(params):
        params[key] *= factors[2]
    for key in ("peg_radius", "peg_length", "plate_thickness" if on_wall(params) else "post_radius"):
        params[key] *= factors[0]
    if on_wall(params):
        params["plate_width"] *= factors[1]
        for i in range(peg_count(params)):
            params[peg_key(i, "peg_offset")] *= factors[1]
    return params, size_of(params)


def rack_pieces(shape) -> list[CollisionPiece]:
    """The base and the post (upright cylinders), or the plate (a box), then each peg (a cylinder from its
    root to its tip, yawed to its azimuth and tilted up by its elevation)."""
    p, origin = shape.params, post_offset(shape)
    if on_wall(p):
        half = (p["plate_thickness"] / 2, p["plate_width"] / 2, p["post_height"] / 2)
        pieces = [CollisionPiece(GEOM_BOX, half, tuple(origin + half * np.array([1.0, 0.0, 1.0])))]
    else:
        base = CollisionPiece(GEOM_CYLINDER, (p["base_radius"], p["base_thickness"] / 2, 0.0),
                              tuple(origin + [0.0, 0.0, p["base_thickness"] / 2]))  # fmt: skip
        post = CollisionPiece(GEOM_CYLINDER, (p["post_radius"], p["post_height"] / 2, 0.0),
                              tuple(origin + [0.0, 0.0, p["post_height"] / 2]))  # fmt: skip
        pieces = [base, post]
    for i, (root, tip) in enumerate(pegs_on_post(p)):
        pieces.append(
            CollisionPiece(
                GEOM_CYLINDER,
                (p["peg_radius"], p["peg_length"] / 2, 0.0),
                tuple(origin + (root + tip) / 2),
                yaw=p[peg_key(i, "peg_azimuth")],
                tilt=math.pi / 2 - p["peg_elevation"],
            )
        )
    return pieces


PEG_ROLLING_FRICTION = 0.001
"""Rolling resistance (m) of a rack's contacts. A mug hung on a peg rocks about it on a contact a few
millimetres across; a real one stops within a few swings (the peg's and the glaze's give, the handle
sliding a little), a MuJoCo contact without rolling friction never does. 1 mm is the order of a hard
ball's rolling resistance on wood; the hang sets settle within their half second with it, and three of
four swung on at 0.2-1.5 rad/s with none (0.5 mm left two at 0.2-0.3 rad/s; docs/benchmarks.md)."""


def _mesh(shape):
    import trimesh

    parts = []
    for piece in rack_pieces(shape):
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = piece.rotation(), piece.position
        if piece.kind == GEOM_BOX:
            parts.append(trimesh.creation.box(extents=2 * np.asarray(piece.size), transform=transform))
            continue
        radius, half_height, _ = piece.size
        parts.append(trimesh.creation.cylinder(radius=radius, height=2 * half_height, sections=24,
                                               transform=transform))  # fmt: skip
    return trimesh.util.concatenate(parts)


def _outline(shape, samples: int = 16) -> np.ndarray:
    """Rings round both ends of every piece: their projections' hull is the rack's silhouette's hull."""
    angles = np.linspace(0, 2 * math.pi, samples, endpoint=False)
    points = []
    for piece in rack_pieces(shape):
        if piece.kind == GEOM_BOX:
            corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * piece.size
            points.append(corners @ piece.rotation().T + piece.position)
            continue
        radius, half_height, _ = piece.size
        ring = np.c_[radius * np.cos(angles), radius * np.sin(angles), np.zeros(samples)]
        for end in (-half_height, half_height):
            points.append((ring + [0.0, 0.0, end]) @ piece.rotation().T + piece.position)
    return np.concatenate(points)


def rack_distance(shape, points: np.ndarray) -> np.ndarray:
    """Signed distance (m) from ``Nx3`` local points to the union of the rack's cylinders."""
    points = np.asarray(points, float)
    distances = []
    for piece in rack_pieces(shape):
        local = (points - piece.position) @ piece.rotation()
        if piece.kind == GEOM_BOX:
            distances.append(box_distance(local, np.asarray(piece.size)))
        else:
            distances.append(upright_cylinder_distance(local, piece.size[0], piece.size[1]))
    return np.min(distances, axis=0)


RACK = ShapeKind(
    "rack",
    "A rack of straight pegs: a mug tree (a round base, an upright post) or a hook board on a wall",
    params=SHARED_KEYS,
    optional_params=STAND_KEYS
    + WALL_KEYS
    + tuple(peg_key(i, k) for i in range(MAX_PEGS) for k in PEG_KEYS + WALL_PEG_KEYS),
    mesh=_mesh,
    collision_pieces=rack_pieces,
    outline_points=_outline,
    surface_distance=rack_distance,
    scale_params=scale_params,
    rolling_friction=PEG_ROLLING_FRICTION,
)
