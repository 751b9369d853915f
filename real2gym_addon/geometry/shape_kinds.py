"""The shape kinds: one entry per kind a prompt may name or a report may hold.

prompts.json's ``shape``, the report's ``objects[].shape``, the Blender enums, the JSON
Schemas' enums and the flags that other modules ask (does it hold things, is its outline
round) read this table. The fitting and the mesh and collision builders still dispatch
on the kind in :mod:`.fit` and :mod:`.shapes` (moving them into the entries is the next
step of the shape table, docs/limits.md).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ShapeKind:
    """One kind of shape.

    Attributes:
        name: As prompts.json and report.json write it.
        description: What it is, for the user (Blender's tooltips, docs).
        container: It has an opening that holds things (a ``place_in`` target).
        round: Its outline seen from above is a circle (fitted as a cylinder by a known size).
        reported: A fit can end as this kind in report.json (``auto`` and ``mug`` are only
            prompt hints: ``auto`` becomes the kind chosen, ``mug`` a cup with a handle).
    """

    name: str
    description: str
    container: bool = False
    round: bool = False
    reported: bool = True


SHAPE_KINDS: dict[str, ShapeKind] = {
    kind.name: kind
    for kind in (
        ShapeKind("auto", "Let the fit choose: box, cylinder, cup, bowl or plate", reported=False),
        ShapeKind("box", "A box: three extents"),
        ShapeKind("cylinder", "A solid cylinder", round=True),
        ShapeKind("cup", "An open cup, straight or tapered, with a handle where one shows", container=True,
                  round=True),
        ShapeKind("mug", "A cup whose handle is looked for on less evidence (reported as cup)", container=True,
                  round=True, reported=False),
        ShapeKind("bowl", "An open bowl whose wall curves up", container=True, round=True),
        ShapeKind("plate", "A flat plate, with a raised rim where one shows", round=True),
        ShapeKind("mesh", "The user's own OBJ mesh, or the hull of the depth points"),
    )
}  # fmt: skip
"""Kind name -> its entry, in the order prompts.json's docs list them."""
PROMPT_SHAPES = tuple(SHAPE_KINDS)
"""What prompts.json's ``shape`` may say."""
REPORT_SHAPES = tuple(name for name, kind in SHAPE_KINDS.items() if kind.reported)
"""What report.json's ``objects[].shape`` may say."""
ROUND_KINDS = tuple(name for name, kind in SHAPE_KINDS.items() if kind.round)
"""Kinds whose outline from above is a circle."""
CONTAINER_KINDS = tuple(name for name, kind in SHAPE_KINDS.items() if kind.container)
"""Kinds with an opening."""


def is_container(kind: str) -> bool:
    """True for a kind with an opening (cup, mug, bowl); False for an unknown kind."""
    entry = SHAPE_KINDS.get(kind)
    return entry is not None and entry.container
