"""prompts.json and truth.json of the hang scene (docs/data-contract.md, "The seed's other tasks").

Two objects: the ``mug`` (prompted as shape ``mug``, a free object; its truth is the project's cup with a
handle: ``size`` its box with the handle, the pose that box's centre, the axis off it towards local -x by
half the handle's reach past the wall) and the ``rack`` (shape ``rack``, static; the local frame z up
with its origin at the centre of its box, the post's axis off it; the parameters of
``real2gym_addon.geometry.kinds.rack``, plus ``hung_on_peg`` and ``post_axis_world``). A hook board
(``--wall``) has the wall form's parameters (``plate_width``, ``plate_thickness``, ``post_height``, each
peg's height, offset and azimuth; no base or post); its ``post_axis_world`` is where its post frame's origin
(the middle of the plate's back face's bottom edge) is on the wall, seen from above (world x, y).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _demo_gripper import FINGER_TRAVEL
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, gripper_entries, prompt_entry, world_from_camera
from _hang_scene import HangLayout
from _hang_sim import HangResult

TRUTH_VERSION = 1
_DIGITS = 6


def _r(values: Any) -> list[float]:
    return [round(float(v), _DIGITS) + 0.0 for v in np.ravel(values)]


def describe_objects(layout: HangLayout) -> list[ObjectSpec]:
    """The mug and the rack, as prompts and truth describe them (their masses come from the model)."""
    mug, rack = layout.mug, layout.rack
    low, high = rack.bounds()
    rack_params: dict[str, Any] = rack.params() | {
        "hung_on_peg": layout.peg,
        "post_axis_world": _r(rack.foot[:2]),
    }
    return [
        ObjectSpec("mug", "mug", "manipulated", "mug", "cup", mug.size.tolist(), mug.centre, mug.params()),
        ObjectSpec(
            "rack", "rack", "static", "rack", "rack", (high - low).tolist(), (low + high) / 2, rack_params
        ),
    ]


def prompts_json(objects: list[ObjectSpec], first_masks: dict[str, np.ndarray]) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's first-frame mask, and the ``hang`` task."""
    return {
        "objects": [prompt_entry(spec, first_masks[spec.name]) for spec in objects],
        "task": {"type": "hang", "object": "mug", "target": "rack"},
    }


def _param(value: Any) -> Any:
    return round(value, _DIGITS) if isinstance(value, float) else value


def truth_json(
    layout: HangLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: HangResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the other generators' form: camera, table, objects (shape, size, parameters, mass,
    per-frame poses and RLE masks), keyframes, the gripper per frame and the checks."""
    w_from_c = world_from_camera(layout)
    up_cam = w_from_c[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    entries = [
        {"name": spec.name, "shape": spec.shape, "role": spec.role, "size": _r(spec.size),
         **{k: _param(v) for k, v in spec.params.items()}, "mass": round(spec.mass, _DIGITS), "frames": spec.frames}
        for spec in objects
    ]  # fmt: skip
    return {
        "version": TRUTH_VERSION,
        "generator": generator,
        "scene": "hang",
        "video": {"frames": len(result.frames), "fps": fps, "width": intr.width, "height": intr.height},
        "camera": {"fx": intr.fx, "fy": intr.fy, "cx": intr.cx, "cy": intr.cy},
        "world_from_camera": [_r(row) for row in w_from_c],
        "table": {"normal_cam": _r(up_cam), "offset_cam": round(float(w_from_c[2, 3]), _DIGITS)},
        "objects": entries,
        "keyframes": result.events,
        "gripper": {
            "frame_of": "camera",
            "max_opening_m": 2 * FINGER_TRAVEL,
            "frames": gripper_entries(result, w_from_c),
        },
        "checks": result.checks,
    }
