"""prompts.json and truth.json of the pour scene (docs/data-contract.md, "The seed's other tasks").

Two objects: the ``cup`` (shape ``cup``, manipulated, with its ``contents``: the spheres it holds) and the
``bowl`` (shape ``bowl``; a free object, so ``container`` as the other generators' bowl), each with the
project's container parameters, their pose the centre of their box (the axis, half the height up). The
task is ``pour`` from the cup into the bowl. truth.json is the hang scene's form (``_hang_truth``) with the
scene ``pour`` and a ``contents`` section: the spheres' count, radius, density and mass, how many end in
the bowl (``landed_in_target``, ``landed_share``) and in the cup (``left_in_source``), and their centres on
the first and the last frame (world, m).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, prompt_entry
from _hang_truth import truth_json as hang_truth_json
from _pour_scene import PourLayout
from _pour_sim import PourResult

_DIGITS = 6


def describe_objects(layout: PourLayout) -> list[ObjectSpec]:
    """The cup and the bowl, as prompts and truth describe them (their masses come from the model)."""
    cup, bowl = layout.cup, layout.bowl
    return [
        ObjectSpec("cup", "cup", "manipulated", "cup", "cup", cup.size.tolist(),
                   np.array([0.0, 0.0, cup.height / 2]), cup.params()),
        ObjectSpec("bowl", "bowl", "container", "bowl", "bowl", bowl.size.tolist(),
                   np.array([0.0, 0.0, bowl.height / 2]), bowl.params()),
    ]  # fmt: skip


def contents_prompt(layout: PourLayout) -> dict[str, Any]:
    """The cup's ``contents`` as prompts.json gives them: what a user can count and measure."""
    contents = layout.contents
    return {"kind": "particles", "count": contents.count, "radius": round(contents.radius, _DIGITS)}


def prompts_json(
    layout: PourLayout, objects: list[ObjectSpec], first_masks: dict[str, np.ndarray]
) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's first-frame mask, the cup's contents, the ``pour``
    task."""
    entries = [prompt_entry(spec, first_masks[spec.name]) for spec in objects]
    entries[0]["contents"] = contents_prompt(layout)
    return {"objects": entries, "task": {"type": "pour", "object": "cup", "target": "bowl"}}


def _points(values: np.ndarray) -> list[list[float]]:
    return [[round(float(v), _DIGITS) + 0.0 for v in point] for point in values]


def truth_json(
    layout: PourLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: PourResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the other generators' form (camera, table, objects with shape, size, parameters, mass,
    per-frame poses and RLE masks, keyframes, the gripper per frame, the checks), scene ``pour``, and the
    ``contents``."""
    contents = layout.contents
    count = len(result.landed)
    landed = int(result.landed.sum())
    section = {
        "kind": "particles",
        "count": count,
        "radius": round(contents.radius, _DIGITS),
        "density": contents.density,
        "mass_each": round(contents.mass_each, 9),
        "landed_in_target": landed,
        "landed_share": round(landed / count, 4) if count else 0.0,
        "left_in_source": int(result.in_cup.sum()),
        "start_positions_world": _points(result.start_positions),
        "end_positions_world": _points(result.end_positions),
    }
    truth = hang_truth_json(layout, intr, fps, objects, result, generator)  # reads the camera and the events
    return truth | {"scene": "pour", "contents": section}
