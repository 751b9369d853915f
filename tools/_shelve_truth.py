"""prompts.json and truth.json of the shelve scene (docs/data-contract.md, "The seed's other tasks").

Two objects: the ``book`` (shape ``box``, manipulated; ``size`` its length, width and height, its pose its
centre) and the ``shelf`` (shape ``shelf``, support: fixed to the table, the book goes onto it; ``size``
its depth, width and height, its pose the centre of its outer box, the open front along local +x, and the
parameters of ``real2gym_addon.geometry.kinds.shelf``: ``side_thickness``, ``back_thickness``,
``board_thickness``, ``board_count`` and ``board<i>_height``, each board's top above the shelf's bottom).
The task is ``shelve`` the book on the shelf. truth.json is the hang scene's form (``_hang_truth``) with
the scene ``shelve``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, task_prompts
from _hang_truth import truth_json as hang_truth_json
from _shelve_scene import ShelveLayout
from _shelve_sim import ShelveResult


def describe_objects(layout: ShelveLayout) -> list[ObjectSpec]:
    """The book and the shelf, as prompts and truth describe them (their masses come from the model)."""
    book, shelf = layout.book, layout.shelf
    return [
        ObjectSpec("book", "book", "manipulated", "box", "box", book.size.tolist(), np.zeros(3), {}),
        ObjectSpec(
            "shelf", "shelf", "support", "shelf", "shelf", shelf.size.tolist(), np.zeros(3), shelf.params()
        ),
    ]


def prompts_json(objects: list[ObjectSpec], first_masks: dict[str, np.ndarray]) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's first-frame mask, and the ``shelve`` task."""
    return task_prompts(objects, first_masks, {"type": "shelve", "object": "book", "target": "shelf"})


def truth_json(
    layout: ShelveLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: ShelveResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the other generators' form (camera, table, objects with shape, size, parameters, mass,
    per-frame poses and RLE masks, keyframes, the gripper per frame, the checks), scene ``shelve``."""
    return hang_truth_json(layout, intr, fps, objects, result, generator) | {"scene": "shelve"}
