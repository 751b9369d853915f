"""Object shapes: parameters, watertight meshes, collision pieces, silhouettes.

Every shape has a local frame with z up and the origin at the centre of its
bounding box (the contract's ``size`` is the full extent of that box). Its
visual mesh is a clean watertight trimesh; its collision description is a list
of primitives (boxes, cylinders) that keep a container's opening open: a cup is
a bottom disc and a ring of wall boxes, never one convex hull.

Containers have a radius profile along their height: the outer radius goes from
``base_radius`` at the bottom to ``outer_radius`` at the rim, straight for a cup
(a cylinder when the two are equal, else a frustum) and along a quarter ellipse
for a bowl (a rounded bottom curving up to a vertical rim). The wall keeps its
thickness horizontally; a curved or slanted wall is collided by rings of tilted
wall boxes, one ring per stretch of the profile.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

CUP_WALL_PIECES = 16
BOWL_WALL_RINGS = 4
"""Rings of wall boxes along a curved (bowl) wall."""
PROFILE_SAMPLES = 13
"""Heights at which a curved profile is sampled for meshes and outlines."""


@dataclasses.dataclass
class CollisionPiece:
    """One collision primitive in the object's local frame.

    Attributes:
        kind: ``"box"`` (half sizes) or ``"cylinder"`` (radius, half height), as MuJoCo geoms.
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


@dataclasses.dataclass
class Shape:
    """A fitted shape.

    Attributes:
        kind: ``box``, ``cylinder``, ``cup``, ``bowl``, ``plate`` or ``mesh``.
        size: Full bounding-box extents ``(sx, sy, sz)`` in metres, z up.
        params: Kind-specific parameters in metres (``radius``; a container's
            ``outer_radius`` at the rim, ``inner_radius``, ``wall_thickness``,
            ``bottom_thickness`` and optionally ``base_radius``, its outer radius
            at the bottom).
        vertices: For ``mesh``: ``Nx3`` local vertices of a closed hull; else None.
        fit_error: The fit's residual (silhouette 1 - IoU, lower is better).
        collision: ``primitives`` (boxes and cylinders; a container's walls
            stay open), ``hull`` (one convex hull of the visual mesh, which
            closes a container's opening) or ``coacd`` (the convex pieces in ``hulls``).
        hulls: For ``coacd``: the convex pieces' vertices (``Nx3`` each, local frame).
    """

    kind: str
    size: tuple[float, float, float]
    params: dict[str, float] = dataclasses.field(default_factory=dict)
    vertices: np.ndarray | None = None
    fit_error: float = 0.0
    collision: str = "primitives"
    hulls: list[np.ndarray] | None = None

    @property
    def is_container(self) -> bool:
        """True for shapes with an opening (cup, bowl)."""
        return self.kind in ("cup", "bowl")

    def to_report(self) -> dict:
        """The report's shape fields."""
        entry = {
            "shape": self.kind,
            "size": [round(float(v), 5) for v in self.size],
            "params": {k: round(float(v), 5) for k, v in self.params.items()},
            "fit_error": round(float(self.fit_error), 4),
            "collision_mode": self.collision,
            "collision": [p.to_report() for p in self.collision_pieces()],
        }
        if self.vertices is not None:
            entry["vertices"] = np.round(self.vertices, 5).tolist()
        if self.hulls:
            entry["hulls"] = [np.round(h, 5).tolist() for h in self.hulls]
        return entry

    @classmethod
    def from_report(cls, entry: dict) -> Shape:
        """The shape of a report.json object entry (see :meth:`to_report`)."""
        vertices = entry.get("vertices")
        return cls(
            kind=entry["shape"],
            size=tuple(float(v) for v in entry["size"]),
            params={k: float(v) for k, v in entry.get("params", {}).items()},
            vertices=None if vertices is None else np.asarray(vertices, float),
            fit_error=float(entry.get("fit_error", 0.0)),
            collision=entry.get("collision_mode", "primitives"),
            hulls=[np.asarray(h, float) for h in entry["hulls"]] if entry.get("hulls") else None,
        )

    def collision_pieces(self) -> list[CollisionPiece]:
        """The collision description in the local frame (empty for ``hull``: the mesh itself collides)."""
        sx, sy, sz = self.size
        if self.collision in ("hull", "coacd"):
            return []
        if self.kind == "box" or (self.kind == "mesh" and self.vertices is None):
            return [CollisionPiece("box", (sx / 2, sy / 2, sz / 2), (0.0, 0.0, 0.0))]
        if self.kind in ("cylinder", "plate"):
            return [CollisionPiece("cylinder", (sx / 2, sz / 2, 0.0), (0.0, 0.0, 0.0))]
        if self.is_container:
            return _container_pieces(self)
        return [CollisionPiece("box", (sx / 2, sy / 2, sz / 2), (0.0, 0.0, 0.0))]

    def surface_points(self, count: int = 600) -> np.ndarray:
        """Points spread over the outer surface (``Nx3``, local frame), for alignment."""
        mesh = self.mesh()
        import trimesh

        points, _ = trimesh.sample.sample_surface_even(mesh, count, seed=0)
        return np.asarray(points)

    def mesh(self):
        """The visual mesh: a watertight ``trimesh.Trimesh`` in the local frame."""
        import trimesh

        sx, sy, sz = self.size
        if self.kind == "box":
            return trimesh.creation.box(extents=(sx, sy, sz))
        if self.kind in ("cylinder", "plate"):
            return trimesh.creation.cylinder(radius=sx / 2, height=sz, sections=48)
        if self.is_container:
            return trimesh.creation.revolve(self.cross_section(), sections=48)
        hull = trimesh.convex.convex_hull(self.vertices)
        return hull

    def outline_points(self) -> np.ndarray:
        """Points on the outer hull (``Nx3``, local frame) whose projection's hull is the silhouette."""
        sx, sy, sz = self.size
        if self.kind == "box":
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
            return corners * np.array([sx, sy, sz]) / 2
        if self.kind in ("cylinder", "plate") or self.is_container:
            heights, radii = self.outer_profile() if self.is_container else ([-sz / 2, sz / 2], [sx / 2] * 2)
            angles = np.linspace(0, 2 * math.pi, 32, endpoint=False)
            ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
            return np.concatenate(
                [np.c_[ring * r, np.full(32, z)] for z, r in zip(heights, radii, strict=True)]
            )
        return np.asarray(self.vertices)

    def outer_profile(self, samples: int = PROFILE_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
        """A container's outer radius along its height: ``(z, r)`` arrays, local frame, bottom to rim.

        Args:
            samples: Heights for a curved (bowl) profile; a straight wall needs two.
        """
        sz = self.size[2]
        rim = self.params["outer_radius"]
        base = self.params.get("base_radius", rim)
        if self.kind == "bowl" and abs(base - rim) > 1e-9:
            t = np.linspace(0.0, 1.0, samples)
            return -sz / 2 + t * sz, base + (rim - base) * np.sqrt(1.0 - (1.0 - t) ** 2)
        return np.array([-sz / 2, sz / 2]), np.array([base, rim])

    def inner_height(self, radius: float) -> float:
        """How high (m, above the container's bottom) its inner surface is at ``radius`` from the axis:
        the floor's height, or higher where a profiled wall curves up."""
        section = self.cross_section()
        outer = len(self.outer_profile()[0])
        inner = section[1 + outer : -1][::-1]  # the inner wall, from the floor's edge up to the rim
        return float(np.interp(radius, inner[:, 0], inner[:, 1] - section[0, 1]))

    def cross_section(self) -> np.ndarray:
        """A container's solid cross-section in the ``(r, z)`` half-plane: ``Kx2``, from the axis
        under the bottom, up the outer wall, over the rim, down the inner wall, to the axis on the floor."""
        heights, radii = self.outer_profile()
        wall, bottom = self.params["wall_thickness"], self.params["bottom_thickness"]
        floor = heights[0] + bottom
        inner_heights = np.r_[floor, heights[heights > floor + 1e-9]]
        inner_radii = np.interp(inner_heights, heights, radii) - wall
        return np.concatenate(
            [
                [[0.0, heights[0]]],
                np.c_[radii, heights],
                np.c_[inner_radii, inner_heights][::-1],
                [[0.0, floor]],
            ]
        )


def _container_pieces(shape: Shape) -> list[CollisionPiece]:
    """A bottom disc and rings of wall boxes along the profile (one ring for a straight wall)."""
    heights, radii = shape.outer_profile()
    wall, bottom = shape.params["wall_thickness"], shape.params["bottom_thickness"]
    floor = heights[0] + bottom
    # The bottom disc reaches the wall's mid-line, under a bowl's rounded foot too.
    disc = max(float(radii[0]), float(np.interp(floor, heights, radii)) - wall / 2)
    pieces = [CollisionPiece("cylinder", (disc, bottom / 2, 0.0), (0.0, 0.0, heights[0] + bottom / 2))]
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
                    "box",
                    (wall / 2, half_length, along),
                    (centre_r * math.cos(angle), centre_r * math.sin(angle), centre_z),
                    angle,
                    tilt,
                )
            )
    return pieces
