"""A flat plate: a low cylinder, or a shallow dish where a raised rim shows."""

from __future__ import annotations

from ..pieces import cylinder_piece
from . import container
from .base import ShapeKind
from .cup import CUP
from .cylinder import solid_distance, solid_mesh, solid_outline


def dish(shape):
    """A plate with a raised rim as the open container it is (its dish the inside: the rim a wall of
    ``rim_width``, the floor ``dish_depth`` below the top); None for a flat one."""
    if "dish_depth" not in shape.params:
        return None
    rim, width = shape.params["radius"], shape.params["rim_width"]
    params = {"outer_radius": rim, "inner_radius": rim - width, "wall_thickness": width,
              "bottom_thickness": shape.size[2] - shape.params["dish_depth"]}  # fmt: skip
    return type(shape)(CUP.name, shape.size, params)


def _mesh(shape):
    dished = dish(shape)
    return solid_mesh(shape) if dished is None else dished.mesh()


def _collision(shape):
    dished = dish(shape)
    return [cylinder_piece(shape.size)] if dished is None else container.wall_pieces(dished)


PLATE = ShapeKind(
    "plate",
    "A flat plate, with a raised rim where one shows",
    round=True,
    params=("radius",),
    optional_params=("rim_width", "dish_depth"),
    mesh=_mesh,
    collision_pieces=_collision,
    outline_points=solid_outline,  # the silhouette is the dish's outer cylinder
    surface_distance=solid_distance,  # fitted against its depth as the dish (fit.py asks for it)
    open_form=dish,
)
