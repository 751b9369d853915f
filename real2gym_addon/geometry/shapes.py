"""Object shapes: parameters, watertight meshes, collision pieces, silhouettes.

Every shape has a local frame with z up and the origin at the centre of its
bounding box (the contract's ``size`` is the full extent of that box). Its
visual mesh is a clean watertight trimesh; its collision description is a list
of primitives (boxes, cylinders) that keep a container's opening open: a cup is
a bottom disc and a ring of wall boxes, never one convex hull.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

CUP_WALL_PIECES = 16


@dataclasses.dataclass
class CollisionPiece:
    """One collision primitive in the object's local frame.

    Attributes:
        kind: ``"box"`` (half sizes) or ``"cylinder"`` (radius, half height), as MuJoCo geoms.
        size: Box half extents ``(hx, hy, hz)``, or ``(radius, half_height, 0)``.
        position: Centre (3,), metres, local frame.
        yaw: Rotation about local z, radians.
    """

    kind: str
    size: tuple[float, float, float]
    position: tuple[float, float, float]
    yaw: float = 0.0

    def to_report(self) -> dict:
        """As a JSON-ready dict."""
        return {
            "kind": self.kind,
            "size": [round(v, 6) for v in self.size],
            "position": [round(v, 6) for v in self.position],
            "yaw": round(self.yaw, 6),
        }


@dataclasses.dataclass
class Shape:
    """A fitted shape.

    Attributes:
        kind: ``box``, ``cylinder``, ``cup``, ``bowl``, ``plate`` or ``mesh``.
        size: Full bounding-box extents ``(sx, sy, sz)`` in metres, z up.
        params: Kind-specific parameters in metres (``radius``, ``wall_thickness``...).
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
            return _cup_pieces(
                self.params["outer_radius"],
                self.params["wall_thickness"],
                self.params["bottom_thickness"],
                sz,
            )
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
            return _cup_mesh(
                self.params["outer_radius"], self.params["inner_radius"], self.params["bottom_thickness"], sz
            )
        hull = trimesh.convex.convex_hull(self.vertices)
        return hull

    def outline_points(self) -> np.ndarray:
        """Points on the outer hull (``Nx3``, local frame) whose projection's hull is the silhouette."""
        sx, sy, sz = self.size
        if self.kind == "box":
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
            return corners * np.array([sx, sy, sz]) / 2
        if self.kind in ("cylinder", "plate") or self.is_container:
            angles = np.linspace(0, 2 * math.pi, 32, endpoint=False)
            ring = np.stack([np.cos(angles), np.sin(angles)], axis=1) * (sx / 2)
            return np.concatenate([np.c_[ring, np.full(32, -sz / 2)], np.c_[ring, np.full(32, sz / 2)]])
        return np.asarray(self.vertices)


def _cup_pieces(outer: float, wall: float, bottom: float, height: float) -> list[CollisionPiece]:
    pieces = [CollisionPiece("cylinder", (outer, bottom / 2, 0.0), (0.0, 0.0, -height / 2 + bottom / 2))]
    middle = outer - wall / 2
    # Each wall box spans its sector's chord (plus a little overlap) so the ring is closed.
    half_length = middle * math.tan(math.pi / CUP_WALL_PIECES) * 1.05 + wall / 2
    wall_height = height - bottom
    for i in range(CUP_WALL_PIECES):
        angle = 2 * math.pi * i / CUP_WALL_PIECES
        pieces.append(
            CollisionPiece(
                "box",
                (wall / 2, half_length, wall_height / 2),
                (middle * math.cos(angle), middle * math.sin(angle), -height / 2 + bottom + wall_height / 2),
                angle,
            )
        )
    return pieces


def _cup_mesh(outer: float, inner: float, bottom: float, height: float, sections: int = 48):
    """A watertight open-top cup: revolve the wall's cross-section about z."""
    import trimesh

    z0, z1 = -height / 2, height / 2
    profile = np.array(
        [[0.0, z0], [outer, z0], [outer, z1], [inner, z1], [inner, z0 + bottom], [0.0, z0 + bottom]]
    )
    return trimesh.creation.revolve(profile, sections=sections)
