"""A flat plate: a low cylinder, or a shallow dish where a raised rim shows; or a plate standing on its edge.

A plate lying flat has its axis along local z: ``size`` is ``(2 radius, 2 radius, thickness)``. One standing
on its edge (``on_edge`` 1: in a dish rack's slot, a plate stand) has its axis along local y, so that its
faces look along the rack's row: ``size`` is ``(2 radius, thickness, 2 radius)``; it is drawn and collides
flat (a dish's rim is not fitted on its edge), and its outline from above is not round.
"""

from __future__ import annotations

import math

import numpy as np

from ..pieces import GEOM_CYLINDER, CollisionPiece, cylinder_piece, ring_outline, upright_cylinder_distance
from . import container
from .base import ShapeKind
from .cup import CUP
from .cylinder import solid_distance, solid_mesh, solid_outline

ON_EDGE = "on_edge"
"""The parameter that stands a plate on its edge (1), its axis along local y."""
_AXIS_TO_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
"""Turns local z to local y (about x): an upright disc's frame to an on-edge plate's."""


def on_edge(shape) -> bool:
    """True for a plate standing on its edge (its axis along local y)."""
    return bool(shape.params.get(ON_EDGE, 0.0))


def dish(shape):
    """A plate with a raised rim as the open container it is (its dish the inside: the rim a wall of
    ``rim_width``, the floor ``dish_depth`` below the top); None for a flat one or one on its edge."""
    if "dish_depth" not in shape.params or on_edge(shape):
        return None
    rim, width = shape.params["radius"], shape.params["rim_width"]
    params = {"outer_radius": rim, "inner_radius": rim - width, "wall_thickness": width,
              "bottom_thickness": shape.size[2] - shape.params["dish_depth"]}  # fmt: skip
    return type(shape)(CUP.name, shape.size, params)


def _mesh(shape):
    if on_edge(shape):
        import trimesh

        disc = trimesh.creation.cylinder(radius=shape.size[0] / 2, height=shape.size[1], sections=48)
        transform = np.eye(4)
        transform[:3, :3] = _AXIS_TO_Y
        return disc.apply_transform(transform)
    dished = dish(shape)
    return solid_mesh(shape) if dished is None else dished.mesh()


def _collision(shape):
    if on_edge(shape):  # a cylinder turned by the piece's tilt (z to x) and yaw (x to y)
        size = (shape.size[0] / 2, shape.size[1] / 2, 0.0)
        return [CollisionPiece(GEOM_CYLINDER, size, (0.0, 0.0, 0.0), yaw=math.pi / 2, tilt=math.pi / 2)]
    dished = dish(shape)
    return [cylinder_piece(shape.size)] if dished is None else container.wall_pieces(dished)


def _outline(shape) -> np.ndarray:
    if on_edge(shape):
        half = shape.size[1] / 2
        return ring_outline([-half, half], [shape.size[0] / 2] * 2) @ _AXIS_TO_Y.T
    return solid_outline(shape)


def _distance(shape, points: np.ndarray) -> np.ndarray:
    if on_edge(shape):
        return upright_cylinder_distance(
            np.asarray(points) @ _AXIS_TO_Y, shape.size[0] / 2, shape.size[1] / 2
        )
    return solid_distance(shape, points)


PLATE = ShapeKind(
    "plate",
    "A flat plate, with a raised rim where one shows",
    round=True,
    params=("radius",),
    optional_params=("rim_width", "dish_depth", ON_EDGE),
    mesh=_mesh,
    collision_pieces=_collision,
    outline_points=_outline,  # the silhouette is the dish's outer cylinder
    surface_distance=_distance,  # fitted against its depth as the dish (fit.py asks for it)
    open_form=dish,
    round_when=lambda shape: not on_edge(shape),
)
