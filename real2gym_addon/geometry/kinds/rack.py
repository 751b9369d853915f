"""A rack: a mug tree, a round base with an upright post and straight pegs that rise from it.

A mug hangs on a peg by its handle (the ``hang`` task). The post stands on the base; every peg starts
on the post's axis at its own height (``peg{i}_height`` above the rack's bottom) and runs out at its own
azimuth (``peg{i}_azimuth``, about local z from local +x, counter-clockwise seen from above), tilted up
from the horizontal by ``peg_elevation``, for ``peg_length`` to its tip's centre. All pegs share their
radius, length and elevation, as a mug tree's do.

The local frame is the project's (z up, the origin at the centre of ``size``'s box): the post's axis is
off that centre where the pegs reach further on one side (:func:`post_offset`). The box holds the base,
the post and each peg's axis from root to tip widened by the peg's radius every way (a cylinder's true
extent is a little less where it slants: the box never cuts it).
"""

from __future__ import annotations

import math

import numpy as np

from ..pieces import GEOM_CYLINDER, CollisionPiece, upright_cylinder_distance
from .base import ShapeKind

MAX_PEGS = 6
"""The most pegs a rack may have (``peg0_*`` to ``peg5_*``)."""
PEG_KEYS = ("peg_height", "peg_azimuth")
"""Each peg's own parameters, numbered: ``peg{i}_height``, ``peg{i}_azimuth``."""
SHARED_KEYS = ("base_radius", "base_thickness", "post_radius", "post_height", "peg_radius", "peg_length",
               "peg_elevation", "peg_count")  # fmt: skip
"""A rack's parameters besides the pegs' own (m; ``peg_elevation`` in radians, ``peg_count`` a count)."""


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
    missing = [peg_key(i, k) for i in range(int(count)) for k in PEG_KEYS if peg_key(i, k) not in params]
    if missing:
        raise ValueError(f"a rack of {int(count)} pegs lacks {', '.join(missing)}")
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
    return ["base_thickness", "post_height"] + [peg_key(i, "peg_height") for i in range(peg_count(params))]


def pegs_on_post(params: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each peg's root and tip (``(3,)`` each) in the post's frame: the post's axis through x = y = 0,
    z = 0 at the rack's bottom."""
    pegs = []
    for i in range(peg_count(params)):
        root = np.array([0.0, 0.0, params[peg_key(i, "peg_height")]])
        tip = root + params["peg_length"] * peg_direction(
            params["peg_elevation"], params[peg_key(i, "peg_azimuth")]
        )
        pegs.append((root, tip))
    return pegs


def bounds_on_post(params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The rack's box ``(low (3,), high (3,))`` in the post's frame (see :func:`pegs_on_post`)."""
    reach = max(params["base_radius"], params["post_radius"])
    low = np.array([-reach, -reach, 0.0])
    high = np.array([reach, reach, params["post_height"]])
    for root, tip in pegs_on_post(params):
        ends = np.stack([root, tip])
        low = np.minimum(low, ends.min(axis=0) - params["peg_radius"])
        high = np.maximum(high, ends.max(axis=0) + params["peg_radius"])
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
    """A scale's parameters: the pegs' heights follow z; the post's and pegs' radii and the pegs' length x."""
    params = dict(params)
    for key in rack_heights(params):
        params[key] *= factors[2]
    for key in ("post_radius", "peg_radius", "peg_length"):
        params[key] *= factors[0]
    return params, size_of(params)


def rack_pieces(shape) -> list[CollisionPiece]:
    """The base and the post (upright cylinders), then each peg (a cylinder from the post's axis to its
    tip, yawed to its azimuth and tilted up by its elevation)."""
    p, origin = shape.params, post_offset(shape)
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
        radius, half_height, _ = piece.size
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = piece.rotation(), piece.position
        parts.append(trimesh.creation.cylinder(radius=radius, height=2 * half_height, sections=24,
                                               transform=transform))  # fmt: skip
    return trimesh.util.concatenate(parts)


def _outline(shape, samples: int = 16) -> np.ndarray:
    """Rings round both ends of every piece: their projections' hull is the rack's silhouette's hull."""
    angles = np.linspace(0, 2 * math.pi, samples, endpoint=False)
    points = []
    for piece in rack_pieces(shape):
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
        distances.append(upright_cylinder_distance(local, piece.size[0], piece.size[1]))
    return np.min(distances, axis=0)


RACK = ShapeKind(
    "rack",
    "A mug tree: a round base, an upright post and straight pegs rising from it",
    params=SHARED_KEYS,
    optional_params=tuple(peg_key(i, k) for i in range(MAX_PEGS) for k in PEG_KEYS),
    mesh=_mesh,
    collision_pieces=rack_pieces,
    outline_points=_outline,
    surface_distance=rack_distance,
    scale_params=scale_params,
    rolling_friction=PEG_ROLLING_FRICTION,
)
