"""Object shapes: parameters, watertight meshes, collision pieces, silhouettes.

Every shape has a local frame with z up and the origin at the centre of its
bounding box (the contract's ``size`` is the full extent of that box). Its
visual mesh is a clean watertight trimesh; its collision description is a list
of primitives (boxes, cylinders) that keep a container's opening open: a cup is
a bottom disc and a ring of wall boxes, never one convex hull. What a kind's form
is (its mesh, pieces, outline, distance, profile) is its entry in the shape table
(:mod:`.shape_kinds`, one module per kind under :mod:`.kinds`); :class:`Shape` asks it.

Containers have a radius profile along their height: the outer radius goes from
``base_radius`` at the bottom to ``outer_radius`` at the rim, straight for a cup
(a cylinder when the two are equal, else a frustum) and along a quarter ellipse
for a bowl (a rounded bottom curving up to a vertical rim).

A cup may have a handle (a mug): a C-shaped bar on the local +x side, joined to
the wall at two heights, collided by three boxes (two arms and the outer bar)
and kept as its own part (:meth:`Shape.parts`). The bounding box, and so the
local origin, include it: the cup's axis is then off the origin, at
:meth:`Shape.axis_offset`, on the side away from the handle.

A cabinet, a door and a drawer (:mod:`.kinds.articulated`) have a front, their local
+x face. A cabinet (open on its front) and a drawer (open on its top) hold things in a
box-shaped space, :meth:`Shape.cavity`. A door's or a drawer's bar handle stands in
front of ``size``'s box, which is the panel's or the drawer's own. A rack
(:mod:`.kinds.rack`, a mug tree) is a base, a post and pegs; its post is off the
origin where its pegs reach further on one side.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from .kinds import rack
from .kinds.bowl import PROFILE_SAMPLES
from .kinds.container import HANDLE_KEYS
from .kinds.rack import RACK
from .pieces import GEOM_BOX, CollisionPiece
from .shape_kinds import ShapeKind, kind_entry

__all__ = ["HANDLE_KEYS", "PROFILE_SAMPLES", "CollisionPiece", "Shape"]


@dataclasses.dataclass
class Shape:
    """A fitted shape.

    Attributes:
        kind: A reported kind of the shape table (:data:`.shape_kinds.REPORT_SHAPES`).
        size: Full bounding-box extents ``(sx, sy, sz)`` in metres, z up.
        params: Kind-specific parameters in metres (``radius``; a container's
            ``outer_radius`` at the rim, ``inner_radius``, ``wall_thickness``,
            ``bottom_thickness`` and optionally ``base_radius``, its outer radius
            at the bottom; a cup with a handle adds :data:`HANDLE_KEYS`; a plate with a raised
            rim adds ``rim_width``, the rim's radial width, and ``dish_depth``, how much lower
            its middle is than the rim's top; a cabinet has ``wall_thickness``, a drawer
            ``wall_thickness`` and ``bottom_thickness``, and a door or a drawer with a bar handle
            :data:`.kinds.articulated.HANDLE_KEYS`).
        vertices: For ``mesh``: ``Nx3`` local vertices of a closed hull; else None.
        fit_error: The fit's residual (silhouette 1 - IoU, lower is better).
        collision: ``primitives`` (boxes and cylinders; a container's walls
            stay open), ``hull`` (one convex hull of the visual mesh, which
            closes a container's opening) or ``coacd`` (the convex pieces in ``hulls``).
        hulls: For ``coacd``: the convex pieces' vertices (``Nx3`` each, local frame).
        faces: For a ``mesh`` the user gave: ``Fx3`` triangle indices into ``vertices``
            (None: the mesh is the vertices' convex hull).
    """

    kind: str
    size: tuple[float, float, float]
    params: dict[str, float] = dataclasses.field(default_factory=dict)
    vertices: np.ndarray | None = None
    fit_error: float = 0.0
    collision: str = "primitives"
    hulls: list[np.ndarray] | None = None
    faces: np.ndarray | None = None

    @property
    def entry(self) -> ShapeKind:
        """The kind's entry in the shape table.

        Raises:
            ValueError: The kind is not one a fitted shape can be.
        """
        return kind_entry(self.kind)

    @property
    def is_container(self) -> bool:
        """True for shapes with an opening (cup, bowl: :data:`.shape_kinds.CONTAINER_KINDS`)."""
        return self.entry.container

    @property
    def is_round(self) -> bool:
        """True for shapes whose outline from above is a circle (:data:`.shape_kinds.ROUND_KINDS`, less a plate
        standing on its edge)."""
        return self.entry.round and (self.entry.round_when is None or self.entry.round_when(self))

    @property
    def has_handle(self) -> bool:
        """True for a container with a handle (its parameters in :data:`HANDLE_KEYS`)."""
        return self.is_container and "handle_reach" in self.params

    def axis_offset(self) -> np.ndarray:
        """Where a container's axis crosses local z = 0: ``(3,)``, metres.

        The origin is the bounding box's centre: the axis is off it, towards
        local -x, by half the handle's protrusion; at the origin for every other shape.
        """
        if not self.has_handle:
            return np.zeros(3)
        widest = float(np.max(self.outer_profile()[1]))
        return np.array([-max(self.params["handle_reach"] - widest, 0.0) / 2, 0.0, 0.0])

    def dished(self) -> Shape:
        """The open container the shape is for its distances and collision (a plate with a raised rim is
        a shallow dish: the kind's ``open_form``); else itself."""
        opened = self.entry.open_form(self) if self.entry.open_form else None
        return self if opened is None else opened

    def body(self) -> Shape:
        """The shape without its handle, centred on its own axis (itself when it has none)."""
        if not self.has_handle:
            return self
        widest = float(np.max(self.outer_profile()[1]))
        params = {k: v for k, v in self.params.items() if k not in HANDLE_KEYS}
        return Shape(self.kind, (2 * widest, 2 * widest, self.size[2]), params, fit_error=self.fit_error)

    def scaled(self, factors: tuple[float, float, float]) -> Shape:
        """The shape scaled along its local axes (a round one by one factor across; see ``fixes.edits.scale``).

        Radii, the wall's thickness and a handle's reach follow x, heights (a container's bottom, a
        handle's edges) z; a bar handle's place on its face follows y and z, its length and depth
        stay (hardware keeps its size). The bounding box's centre stays the origin, so an object
        standing on its bottom rises by half its change in height.
        """
        factors = tuple(float(f) for f in factors)
        params = dict(self.params)
        for key in (
            "radius",
            "outer_radius",
            "inner_radius",
            "base_radius",
            "wall_thickness",
            "rim_width",
            "handle_reach",
            "handle_thickness",
        ):
            if key in params:
                params[key] *= factors[0]
        for key in ("bottom_thickness", "dish_depth", "handle_bottom", "handle_top"):
            if key in params:
                params[key] *= factors[2]
        if "handle_width" in params:
            params["handle_width"] *= factors[1]
        for key, factor in (("handle_offset_y", factors[1]), ("handle_offset_z", factors[2])):
            if key in params:
                params[key] *= factor
        size = tuple(s * f for s, f in zip(self.size, factors, strict=True))
        if self.entry.scale_params is not None:  # a rack's pegs, a shelf's boards, a dish rack's slots
            params, implied = self.entry.scale_params(params, factors)
            size = size if implied is None else implied
        return dataclasses.replace(
            self,
            size=size,
            params=params,
            vertices=None if self.vertices is None else self.vertices * np.array(factors),
            hulls=[h * np.array(factors) for h in self.hulls] if self.hulls else None,
        )

    def rim_scaled(self, factor: float) -> Shape:
        """A container with its opening scaled by ``factor``: the bottom and the wall's thickness stay.

        Raises:
            ValueError: Not a container, or the opening would close.
        """
        if not self.is_container:
            raise ValueError(f"a {self.kind} has no rim")
        params = dict(self.params)
        wall = params["wall_thickness"]
        inner = params["inner_radius"] * factor
        if inner <= 0.001:
            raise ValueError(f"a rim scale of {factor:g} leaves no opening")
        if "base_radius" in params:  # the profile keeps its form
            params["base_radius"] *= (inner + wall) / params["outer_radius"]
        params.update(inner_radius=inner, outer_radius=inner + wall)
        shape = dataclasses.replace(
            self, params=params, hulls=None if self.collision == "coacd" else self.hulls
        )
        if shape.collision == "coacd":  # its pieces were of the old rim
            shape.collision = "primitives"
        shape.size = shape.bounding_size()
        return shape

    def bounding_size(self) -> tuple[float, float, float]:
        """The full extents the parameters imply (a container's widest radius and its handle's reach).

        Edits that change a container's radii set ``size`` from this.
        """
        if self.kind == RACK.name:
            return rack.size_of(self.params)
        if not self.is_container:
            return tuple(self.size)
        widest = float(np.max(self.outer_profile()[1]))
        if not self.has_handle:
            return (2 * widest, 2 * widest, self.size[2])
        reach = max(self.params["handle_reach"], widest)
        return (widest + reach, max(2 * widest, self.params["handle_width"]), self.size[2])

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
        if self.faces is not None:
            entry["faces"] = np.asarray(self.faces, int).tolist()
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
            faces=np.asarray(entry["faces"], np.int64) if entry.get("faces") is not None else None,
        )

    def collision_pieces(self) -> list[CollisionPiece]:
        """The collision description in the local frame (empty for ``hull``: the mesh itself collides)."""
        if self.collision in ("hull", "coacd"):
            return []
        return self.entry.collision_pieces(self)

    def surface_distance(self, points: np.ndarray) -> np.ndarray:
        """Signed distance (m) from local-frame points (``Nx3``) to the surface."""
        return self.entry.surface_distance(self, points)

    def cavity(self) -> tuple[np.ndarray, np.ndarray]:
        """The box-shaped space inside a cabinet or a drawer (the kind's ``cavity``): ``(centre (3,),
        half extents (3,))``, metres, local frame; its open side reaches the shape's face there.

        Raises:
            ValueError: The kind has no such space, or its walls leave none.
        """
        if self.entry.cavity is None:
            raise ValueError(f"a {self.kind} has no box-shaped space inside (not a cabinet or a drawer)")
        return self.entry.cavity(self)

    def spaces(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The box-shaped spaces things stand in, each ``(centre (3,), half extents (3,))`` in the local frame:
        a cabinet's or a drawer's cavity, a shelf's space above each board, a dish rack's slots (the kind's
        ``spaces``); none for other kinds."""
        if self.entry.spaces is not None:
            return self.entry.spaces(self)
        return [self.cavity()] if self.entry.cavity is not None else []

    def handle_pieces(self) -> list[CollisionPiece]:
        """A handle's collision boxes in the local frame (none without one): the lower arm, the upper
        arm and the outer bar, open between bar and wall so the handle can be hooked or grasped."""
        if not self.has_handle:
            return []
        (x0, z0), (x1, _), (_, z1), (x2, _) = self._handle_outline()[:4]
        t, half_width = self.params["handle_thickness"], self.params["handle_width"] / 2
        bar = max((z1 - z0) / 2 - t, t / 2)
        return [
            CollisionPiece(GEOM_BOX, ((x1 - x0) / 2, half_width, t / 2), ((x0 + x1) / 2, 0.0, z0 + t / 2)),
            CollisionPiece(GEOM_BOX, ((x1 - x2) / 2, half_width, t / 2), ((x1 + x2) / 2, 0.0, z1 - t / 2)),
            CollisionPiece(GEOM_BOX, (t / 2, half_width, bar), (x1 - t / 2, 0.0, (z0 + z1) / 2)),
        ]

    def _handle_outline(self) -> np.ndarray:
        """The handle's C-shaped side outline in the local ``(x, z)`` plane: ``8x2``, counter-clockwise
        from the lower arm's root in the wall (the arms start at the wall's mid-line)."""
        p, sz = self.params, self.size[2]
        heights, radii = self.outer_profile()
        axis, wall, t = self.axis_offset()[0], p["wall_thickness"], p["handle_thickness"]
        z0, z1 = -sz / 2 + p["handle_bottom"], -sz / 2 + p["handle_top"]
        root0 = axis + float(np.interp(z0 + t / 2, heights, radii)) - wall / 2
        root1 = axis + float(np.interp(z1 - t / 2, heights, radii)) - wall / 2
        out = axis + p["handle_reach"]
        return np.array([[root0, z0], [out, z0], [out, z1], [root1, z1], [root1, z1 - t], [out - t, z1 - t],
                         [out - t, z0 + t], [root0, z0 + t]])  # fmt: skip

    def handle_mesh(self):
        """The handle as a watertight ``trimesh.Trimesh`` in the local frame (its outline extruded across y)."""
        import trimesh

        outline, half_width = self._handle_outline(), self.params["handle_width"] / 2
        vertices = np.concatenate(
            [np.c_[outline[:, 0], np.full(8, y), outline[:, 1]] for y in (-half_width, half_width)]
        )
        cap = np.array([[0, 1, 6], [0, 6, 7], [6, 1, 2], [6, 2, 5], [5, 2, 3], [5, 3, 4]])
        sides = [[[i, (i + 1) % 8 + 8, (i + 1) % 8], [i, i + 8, (i + 1) % 8 + 8]] for i in range(8)]
        faces = np.concatenate([cap, cap[:, ::-1] + 8, np.reshape(sides, (-1, 3))])
        return trimesh.Trimesh(vertices, faces, process=False)

    def parts(self) -> list[tuple[str, object]]:
        """The visual mesh in parts an artist edits apart: ``[("body", mesh), ("handle", mesh)]`` for a
        cup with a handle, ``[("body", mesh())]`` otherwise (trimeshes, local frame)."""
        if not self.has_handle:
            return [("body", self.mesh())]
        body = self.body().mesh()
        body.apply_translation(self.axis_offset())
        return [("body", body), ("handle", self.handle_mesh())]

    def surface_points(self, count: int = 600) -> np.ndarray:
        """Points spread over the outer surface (``Nx3``, local frame), for alignment."""
        mesh = self.mesh()
        import trimesh

        library_log = logging.getLogger("trimesh")
        level = library_log.level
        library_log.setLevel(logging.ERROR)  # not "only got N/M samples!" on the user's stderr: fewer is fine
        try:
            points, _ = trimesh.sample.sample_surface_even(mesh, count, seed=0)
        finally:
            library_log.setLevel(level)
        return np.asarray(points)

    def mesh(self):
        """The visual mesh: a watertight ``trimesh.Trimesh`` in the local frame."""
        return self.entry.mesh(self)

    def outline_points(self) -> np.ndarray:
        """Points on the outer hull (``Nx3``, local frame) whose projection's hull is the silhouette."""
        return self.entry.outline_points(self)

    def outer_profile(self, samples: int = PROFILE_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
        """A container's outer radius along its height: ``(z, r)`` arrays, bottom to rim, ``r`` from its
        axis (see :meth:`axis_offset`).

        Args:
            samples: Heights for a curved (bowl) profile; a straight wall needs two.
        """
        if self.entry.outer_profile is None:
            raise ValueError(f"a {self.kind} has no outer profile (not a container)")
        return self.entry.outer_profile(self, samples)

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
        inner_heights = np.concatenate(([floor], heights[heights > floor + 1e-9]))
        inner_radii = np.interp(inner_heights, heights, radii) - wall
        return np.concatenate(
            [
                [[0.0, heights[0]]],
                np.column_stack((radii, heights)),
                np.column_stack((inner_radii, inner_heights))[::-1],
                [[0.0, floor]],
            ]
        )
