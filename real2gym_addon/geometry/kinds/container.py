"""What every container kind shares (cup, bowl): its wall along an outer profile, and a handle.

A container has a radius profile along its height: the outer radius goes from
``base_radius`` at the bottom to ``outer_radius`` at the rim (the kind's
``outer_profile`` says how). The wall keeps its thickness horizontally; a curved or
slanted wall is collided by rings of tilted wall boxes, one ring per stretch of the
profile, and the opening stays open. A cup may have a handle (see
:meth:`..shapes.Shape.handle_pieces`); the bounding box includes it, and the axis is off
the origin by :meth:`..shapes.Shape.axis_offset`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..pieces import GEOM_BOX, GEOM_CYLINDER, CollisionPiece, box_distance, ring_outline

CUP_WALL_PIECES = 16
"""Wall boxes around a container's ring."""
BOWL_WALL_RINGS = 4
"""Rings of wall boxes along a curved (bowl) wall."""
WALL_PARAMS = ("outer_radius", "inner_radius", "wall_thickness", "bottom_thickness")
"""Every container's parameters (m): radii at the rim, the wall's and the bottom's thickness."""
HANDLE_KEYS = ("handle_reach", "handle_bottom", "handle_top", "handle_thickness", "handle_width")
"""A cup's handle parameters (m): reach from the axis to the handle's outer edge, its lower and upper
edges' heights above the cup's bottom, its bar's thickness, and its width across (local y)."""


def straight_profile(shape, samples: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """A straight wall's outer radius at the bottom and at the rim (a frustum, or a cylinder when equal)."""
    sz = shape.size[2]
    rim = shape.params["outer_radius"]
    base = shape.params.get("base_radius", rim)
    return np.array([-sz / 2, sz / 2]), np.array([base, rim])


def mesh(shape):
    """The container revolved from its cross-section, with its handle where it has one."""
    import trimesh

    if shape.has_handle:
        return trimesh.util.concatenate([part for _, part in shape.parts()])
    return trimesh.creation.revolve(shape.cross_section(), sections=48)


def collision_pieces(shape) -> list[CollisionPiece]:
    """The wall's pieces about the axis, and the handle's."""
    offset = shape.axis_offset()
    walls = [dataclasses.replace(p, position=tuple(np.add(p.position, offset))) for p in wall_pieces(shape)]
    return walls + shape.handle_pieces()


def outline_points(shape) -> np.ndarray:
    """Rings along the outer profile (about the axis), and the handle's corners."""
    rings = ring_outline(*shape.outer_profile())
    if not shape.has_handle:
        return rings
    return np.concatenate([rings + shape.axis_offset(), shape.handle_mesh().vertices])


def surface_distance(shape, points: np.ndarray) -> np.ndarray:
    """To the cross-section revolved about the axis, and to the handle's bars."""
    axis = shape.axis_offset()  # off the origin for a cup with a handle
    radial = np.column_stack((np.hypot(points[:, 0] - axis[0], points[:, 1] - axis[1]), points[:, 2]))
    distance = cross_section_distance(radial, shape.cross_section())
    for piece in shape.handle_pieces():
        distance = np.minimum(distance, box_distance(points - piece.position, np.array(piece.size)))
    return distance


def wall_pieces(shape) -> list[CollisionPiece]:
    """A bottom disc and rings of wall boxes along the profile (one ring for a straight wall), about the
    container's own axis."""
    heights, radii = shape.outer_profile()
    wall, bottom = shape.params["wall_thickness"], shape.params["bottom_thickness"]
    floor = heights[0] + bottom
    # The bottom disc reaches the wall's mid-line, under a bowl's rounded foot too.
    disc = max(float(radii[0]), float(np.interp(floor, heights, radii)) - wall / 2)
    pieces = [CollisionPiece(GEOM_CYLINDER, (disc, bottom / 2, 0.0), (0.0, 0.0, heights[0] + bottom / 2))]
    rings = 1 if len(heights) == 2 else BOWL_WALL_RINGS
    stops = np.linspace(floor, heights[-1], rings + 1)
    middles = np.interp(stops, heights, radii) - wall / 2  # the wall's mid-line
    for ring in range(rings):
        (z0, z1), (r0, r1) = stops[ring : ring + 2], middles[ring : ring + 2]
        tilt = math.atan2(r1 - r0, z1 - z0)
        # Rings after the first reach down a little into the one below, so the wall has no gaps.
        overlap = wall / 2 if ring else 0.0
        along = math.hypot(r1 - r0, z1 - z0) / 2 + overlap / 2
        centre_r = (r0 + r1) / 2 - overlap / 2 * math.sin(tilt)
        centre_z = (z0 + z1) / 2 - overlap / 2 * math.cos(tilt)
        # Each box spans its sector's chord (plus a little) so the ring is closed.
        half_length = max(r0, r1) * math.tan(math.pi / CUP_WALL_PIECES) * 1.05 + wall / 2
        for i in range(CUP_WALL_PIECES):
            angle = 2 * math.pi * i / CUP_WALL_PIECES
            pieces.append(
                CollisionPiece(
                    GEOM_BOX,
                    (wall / 2, half_length, along),
                    (centre_r * math.cos(angle), centre_r * math.sin(angle), centre_z),
                    angle,
                    tilt,
                )
            )
    return pieces


def cross_section_distance(radial: np.ndarray, section: np.ndarray) -> np.ndarray:
    """Signed distance from ``(r, z)`` points to a solid of revolution's cross-section.

    The section's edges on the axis (its first and last) are not surfaces and are
    left out of the distance, but count for inside.
    """
    starts, ends = section, np.roll(section, -1, axis=0)
    edges = ends - starts
    r, z = radial[:, 0:1], radial[:, 1:2]
    surface = ~((np.abs(starts[:, 0]) < 1e-12) & (np.abs(ends[:, 0]) < 1e-12))
    # Each point to each surface edge, as (N, K) arrays per coordinate: fewer temporaries than (N, K, 2).
    s, e = starts[surface], edges[surface]
    dr, dz = r - s[:, 0], z - s[:, 1]
    t = (dr * e[:, 0] + dz * e[:, 1]) / np.maximum(e[:, 0] ** 2 + e[:, 1] ** 2, 1e-18)
    np.clip(t, 0.0, 1.0, out=t)
    dr -= t * e[:, 0]
    dz -= t * e[:, 1]
    distance = np.sqrt((dr * dr + dz * dz).min(axis=1))
    # Even-odd rule: a ray towards +r crosses the outline an odd number of times from inside.
    spans = (starts[:, 1] > z) != (ends[:, 1] > z)
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing_r = starts[:, 0] + (z - starts[:, 1]) * (edges[:, 0] / edges[:, 1])
    inside = np.count_nonzero(spans & (crossing_r > r), axis=1) % 2 == 1
    return np.where(inside, -distance, distance)


def container_kind(**fields):
    """The forms every container kind shares, for its entry (``ShapeKind(**container_kind(...))``)."""
    return dict(container=True, round=True, params=WALL_PARAMS, mesh=mesh, collision_pieces=collision_pieces,
                outline_points=outline_points, surface_distance=surface_distance, **fields)  # fmt: skip
