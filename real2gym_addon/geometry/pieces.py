"""Collision pieces: the primitives a shape collides with in MuJoCo.

A piece is a box or a cylinder in the object's local frame. Their geom types are
MuJoCo's names (:data:`GEOM_BOX`, :data:`GEOM_CYLINDER`), not shape kinds: a cup
collides with one cylinder and sixteen boxes.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

GEOM_BOX = "box"
"""A piece that is a box: ``size`` holds its half extents."""
GEOM_CYLINDER = "cylinder"
"""A piece that is a cylinder: ``size`` holds its radius and half height."""
DEFAULT_DENSITY = 600.0
"""kg/m3 that fills an object's pieces where it has no mass: wood and most plastics."""


@dataclasses.dataclass
class CollisionPiece:
    """One collision primitive in the object's local frame.

    Attributes:
        kind: :data:`GEOM_BOX` (half sizes) or :data:`GEOM_CYLINDER` (radius, half height), as MuJoCo geoms.
        size: Box half extents ``(hx, hy, hz)``, or ``(radius, half_height, 0)``.
        position: Centre (3,), metres, local frame.
        yaw: Rotation about local z, radians.
        tilt: Rotation about the piece's own y axis before the yaw, radians (a
            slanted wall box leans its top outwards by this angle).
    """

    kind: str
    size: tuple[float, float, float]
    position: tuple[float, float, float]
    yaw: float = 0.0
    tilt: float = 0.0

    def rotation(self) -> np.ndarray:
        """3x3 rotation in the object's frame: ``Rz(yaw) @ Ry(tilt)``."""
        cy, sy, ct, st = math.cos(self.yaw), math.sin(self.yaw), math.cos(self.tilt), math.sin(self.tilt)
        return np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
            [[ct, 0.0, st], [0.0, 1.0, 0.0], [-st, 0.0, ct]]
        )

    def to_report(self) -> dict:
        """As a JSON-ready dict."""
        return {
            "kind": self.kind,
            "size": [round(v, 6) for v in self.size],
            "position": [round(v, 6) for v in self.position],
            "yaw": round(self.yaw, 6),
            "tilt": round(self.tilt, 6),
        }


def box_piece(size) -> CollisionPiece:
    """One box filling a bounding box of full extents ``size`` (m), centred on the origin."""
    sx, sy, sz = size
    return CollisionPiece(GEOM_BOX, (sx / 2, sy / 2, sz / 2), (0.0, 0.0, 0.0))


def cylinder_piece(size) -> CollisionPiece:
    """One upright cylinder as wide as ``size``'s x extent and as tall as its z, centred on the origin."""
    sx, _, sz = size
    return CollisionPiece(GEOM_CYLINDER, (sx / 2, sz / 2, 0.0), (0.0, 0.0, 0.0))


def box_distance(points: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Signed distance (m) from ``Nx3`` points to a box of half extents ``half`` centred on the origin."""
    q = np.abs(points) - half
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    inside = np.minimum(q.max(axis=1), 0.0)
    return outside + inside


def upright_cylinder_distance(points: np.ndarray, radius: float, half_height: float) -> np.ndarray:
    """Signed distance (m) from ``Nx3`` points to an upright cylinder centred on the origin."""
    radial = np.c_[np.hypot(points[:, 0], points[:, 1]), points[:, 2]]
    q = np.abs(radial) - np.array([radius, half_height])
    return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)


def ring_outline(heights, radii, samples: int = 32) -> np.ndarray:
    """Points on circles about the z axis, one of ``samples`` points per ``(height, radius)``: ``Nx3``."""
    angles = np.linspace(0, 2 * math.pi, samples, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.concatenate([np.c_[ring * r, np.full(samples, z)] for z, r in zip(heights, radii, strict=True)])
