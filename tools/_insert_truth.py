"""prompts.json and truth.json of the insert scene (docs/data-contract.md, "The seed's other tasks").

Two objects: the ``peg`` (shape ``cylinder``, manipulated; ``size`` its diameter, diameter and length, its
pose its centre, z along its axis) and the ``socket`` (shape ``cup``, container: a free, heavy holder the
peg goes into; ``size`` its diameter, diameter and height, its pose the centre of its bounding box, and the
parameters of ``real2gym_addon.geometry.kinds.cup``: ``outer_radius``, ``inner_radius`` (the hole's),
``wall_thickness`` and ``bottom_thickness`` (the hole's bottom above its base)). The task is ``insert`` the
peg into the socket. truth.json is the hang scene's form (``_hang_truth``) with the scene ``insert``; its
check ``peg_inserted`` (or ``blocked_on_purpose``) gives the inserted and the intended depth.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, task_prompts
from _hang_truth import truth_json as hang_truth_json
from _insert_scene import InsertLayout
from _insert_sim import InsertResult


def describe_objects(layout: InsertLayout) -> list[ObjectSpec]:
    """The peg and the socket, as prompts and truth describe them (their masses come from the model)."""
    peg, socket = layout.peg, layout.socket
    return [
        ObjectSpec("peg", "peg", "manipulated", "cylinder", "cylinder", peg.size.tolist(), np.zeros(3), {}),
        ObjectSpec(
            "socket", "socket", "container", "cup", "cup", socket.size.tolist(), np.zeros(3), socket.params()
        ),
    ]


def prompts_json(objects: list[ObjectSpec], first_masks: dict[str, np.ndarray]) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's first-frame mask, and the ``insert`` task."""
    return task_prompts(objects, first_masks, {"type": "insert", "object": "peg", "target": "socket"})


def truth_json(
    layout: InsertLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: InsertResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the other generators' form (camera, table, objects with shape, size, parameters, mass,
    per-frame poses and RLE masks, keyframes, the gripper per frame, the checks), scene ``insert``."""
    return hang_truth_json(layout, intr, fps, objects, result, generator) | {"scene": "insert"}
