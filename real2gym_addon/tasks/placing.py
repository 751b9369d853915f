"""Putting an object in a container (``place_in``) or on a support (``place_on``)."""

from __future__ import annotations

import numpy as np

from .base import TaskState, TaskType

ON_TOP_TOLERANCE = 0.01
"""m: how far the underside of an object placed on a support may be from the support's top."""
RESTING_TOLERANCE = 0.01
"""m: how far an object placed in a container may float above (or sink below) the surface under it."""


def within_opening(state: TaskState) -> tuple[float, bool]:
    """A round target's inner radius, and whether the moved object's centre is inside it and its underside
    below the target's rim."""
    shape = state.target_shape
    inner = shape.params.get("inner_radius", shape.size[0] / 2)
    return inner, bool(state.radial_offset() < inner and state.height_above_bottom() < shape.size[2])


def inside_success(state: TaskState) -> dict:
    """Inside the container's inner radius and below its rim, resting on its bottom (or on a bowl's wall
    where it curves up under the object's edge); for a target with a box-shaped cavity (a cabinet, a
    drawer), inside that cavity and resting on its floor."""
    shape, moved = state.target_shape, state.moved_shape
    if getattr(shape.entry, "cavity", None) is not None:
        return _inside_cavity(state)
    radial, height_above = state.radial_offset(), state.height_above_bottom()
    inner, inside = within_opening(state)
    floor = shape.params.get("bottom_thickness", 0.0)
    surface = floor
    if shape.is_container:
        surface = shape.inner_height(min(radial + min(moved.size[:2]) / 2, inner - 0.001))
    resting = floor - RESTING_TOLERANCE < height_above < surface + RESTING_TOLERANCE
    return {
        "passed": bool(inside and resting),
        "radial_offset_m": round(radial, 4),
        "inner_radius_m": round(inner, 4),
        "height_above_bottom_m": round(height_above, 4),
        "inside": bool(inside),
        "resting_on_bottom": bool(resting),
    }


def _inside_cavity(state: TaskState) -> dict:
    """Within the cavity's footprint and under its ceiling, resting on its floor (the target's frame)."""
    centre, half = state.target_shape.entry.cavity(state.target_shape)
    local = state.in_target_frame() - np.asarray(centre, float)
    moved_half = np.asarray(state.moved_shape.size, float) / 2
    above_floor = float(local[2] - moved_half[2] + half[2])
    inside = bool(
        np.all(np.abs(local[:2]) <= half[:2]) and local[2] + moved_half[2] <= half[2] + RESTING_TOLERANCE
    )
    resting = -RESTING_TOLERANCE < above_floor < RESTING_TOLERANCE
    return {
        "passed": bool(inside and resting),
        "cavity_offset_m": [round(float(v), 4) for v in local],
        "cavity_half_m": [round(float(v), 4) for v in half],
        "height_above_bottom_m": round(above_floor, 4),
        "inside": inside,
        "resting_on_bottom": bool(resting),
    }


def on_top_success(state: TaskState) -> dict:
    """Resting on the support's top, within its footprint."""
    shape = state.target_shape
    radial, height_above = state.radial_offset(), state.height_above_bottom()
    on_top = abs(height_above - shape.size[2]) < ON_TOP_TOLERANCE and radial < max(shape.size[:2]) / 2
    return {
        "passed": bool(on_top),
        "radial_offset_m": round(radial, 4),
        "height_above_bottom_m": round(height_above, 4),
    }


def _target_fields(target: dict | None) -> dict:
    if target is None:
        return {}
    params = target.get("params", {})
    return {"target": target["name"], "target_size": target["size"],
            "inner_radius": params.get("inner_radius", target["size"][0] / 2),
            "bottom_thickness": params.get("bottom_thickness", 0.0)}  # fmt: skip


PLACE_IN = TaskType(
    name="place_in",
    summary="the object ends inside the container's inner volume, resting on its bottom",
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=inside_success,
    task_json=_target_fields,
)
PLACE_ON = TaskType(
    name="place_on",
    summary="the object ends resting on the support's top, within its footprint",
    needs_target=True,
    releases=True,
    keyframes=("grasp", "lift", "release"),
    success=on_top_success,
    task_json=_target_fields,
)
