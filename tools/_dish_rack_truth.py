"""prompts.json and truth.json of the dish rack scene (docs/data-contract.md, "The seed's other tasks").

Three objects: the ``plate`` (shape ``plate``, manipulated; standing on its edge: ``size`` its diameter,
thickness and diameter, its pose its centre with its axis along local y, and the parameters ``radius``
and ``on_edge`` 1), the ``stand`` and the ``dish_rack`` (shape ``dish_rack``, support: fixed to the table;
``size`` the depth, width and height, the pose the centre of the outer box, and the parameters of
``real2gym_addon.geometry.kinds.dish_rack``: ``base_thickness``, ``slot_count``, ``pitch`` and
``slot_width``). The task is ``shelve`` the plate in the dish rack. truth.json is the hang scene's form
(``_hang_truth``) with the scene ``dish_rack``; its check ``plate_in_slot`` (or ``missed_on_purpose``) names
the slot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, task_prompts
from _dish_rack_scene import DishRackLayout
from _dish_rack_sim import DishRackResult
from _hang_truth import truth_json as hang_truth_json


def describe_objects(layout: DishRackLayout) -> list[ObjectSpec]:
    """The plate, the stand and the dish rack, as prompts and truth describe them (their masses come from the
    model)."""
    plate, stand, rack = layout.plate, layout.stand, layout.rack
    edge = {"radius": plate.radius, "on_edge": 1}
    return [
        ObjectSpec("plate", "plate", "manipulated", "plate", "plate", plate.size.tolist(), np.zeros(3), edge),
        ObjectSpec(
            "stand",
            "stand",
            "support",
            "dish_rack",
            "dish_rack",
            stand.size.tolist(),
            np.zeros(3),
            stand.params(),
        ),  # fmt: skip
        ObjectSpec(
            "dish_rack",
            "dish_rack",
            "support",
            "dish_rack",
            "dish_rack",
            rack.size.tolist(),
            np.zeros(3),
            rack.params(),
        ),  # fmt: skip
    ]


def prompts_json(objects: list[ObjectSpec], first_masks: dict[str, np.ndarray]) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's first-frame mask, and the ``shelve`` task."""
    return task_prompts(objects, first_masks, {"type": "shelve", "object": "plate", "target": "dish_rack"})


def truth_json(
    layout: DishRackLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: DishRackResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the other generators' form (camera, table, objects with shape, size, parameters, mass,
    per-frame poses and RLE masks, keyframes, the gripper per frame, the checks), scene ``dish_rack``."""
    return hang_truth_json(layout, intr, fps, objects, result, generator) | {"scene": "dish_rack"}
