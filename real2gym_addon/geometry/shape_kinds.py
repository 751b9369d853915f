"""The shape table: one entry per kind a prompt may name or a report may hold.

prompts.json's ``shape``, the report's ``objects[].shape``, the Blender enums, the JSON
Schemas' enums, the flags other modules ask (does it hold things, is its outline round)
and the form of every shape (:class:`.shapes.Shape`'s mesh, collision pieces, outline and
distance) come from this table. Each kind is an entry in its own module under
:mod:`.kinds`; its fitter is :data:`.fit.FITTERS` under its name (fitting sits above the
shapes). ``auto`` and ``mug`` are prompt hints only and have no form of their own.

The articulated kinds (``cabinet``, ``door``, ``drawer``) have a FRONT, their local +x face: a
cabinet opens there, a door's outer face and a drawer's front wall are there, and their bar
handles stand off it. A cabinet and a drawer hold things in a box-shaped ``cavity``; they are not
``container`` kinds, which are round. A ``rack`` (a mug tree) is what a mug hangs on; a ``shelf``
(boards between sides, open on its front, local +x) is what a book is shelved on, a ``dish_rack`` (a row
of upright slots along local y) what a plate is shelved upright in.

Adding a shape: a module under ``kinds/`` with its entry, the entry in :data:`SHAPE_KINDS`,
its fitter in :data:`.fit.FITTERS`; ``tools/gen_docs.py`` and the schemas' test follow.
"""

from __future__ import annotations

from .kinds.base import ShapeKind
from .kinds.bowl import BOWL
from .kinds.box import BOX
from .kinds.cabinet import CABINET
from .kinds.cup import CUP
from .kinds.cylinder import CYLINDER
from .kinds.dish_rack import DISH_RACK
from .kinds.door import DOOR
from .kinds.drawer import DRAWER
from .kinds.mesh import MESH
from .kinds.plate import PLATE
from .kinds.rack import RACK
from .kinds.shelf import SHELF

AUTO = ShapeKind("auto", "Let the fit choose: box, cylinder, cup, bowl or plate", reported=False)
"""The prompt leaves the kind to the fit."""
MUG = ShapeKind("mug", "A cup whose handle is looked for on less evidence (reported as cup)", container=True,
                round=True, reported=False)  # fmt: skip
"""The prompt says the cup has a handle: it is looked for on less evidence, and fitted as a cup."""

SHAPE_KINDS: dict[str, ShapeKind] = {
    kind.name: kind
    for kind in (
        AUTO,
        BOX,
        CYLINDER,
        CUP,
        MUG,
        BOWL,
        PLATE,
        CABINET,
        DOOR,
        DRAWER,
        RACK,
        SHELF,
        DISH_RACK,
        MESH,
    )  # fmt: skip
}
"""Kind name -> its entry, in the order prompts.json's docs list them."""
PROMPT_SHAPES = tuple(SHAPE_KINDS)
"""What prompts.json's ``shape`` may say."""
REPORT_SHAPES = tuple(name for name, kind in SHAPE_KINDS.items() if kind.reported)
"""What report.json's ``objects[].shape`` may say."""
ROUND_KINDS = tuple(name for name, kind in SHAPE_KINDS.items() if kind.round)
"""Kinds whose outline from above is a circle."""
CONTAINER_KINDS = tuple(name for name, kind in SHAPE_KINDS.items() if kind.container)
"""Round kinds with an opening (cup, mug, bowl)."""
CAVITY_KINDS = tuple(name for name, kind in SHAPE_KINDS.items() if kind.cavity is not None)
"""Kinds that hold things in a box-shaped space open on one side (cabinet, drawer)."""

__all__ = ["AUTO", "BOWL", "BOX", "CABINET", "CUP", "CYLINDER", "DISH_RACK", "DOOR", "DRAWER", "MESH", "MUG",
           "PLATE", "RACK", "SHAPE_KINDS", "SHELF", "ShapeKind", "has_cavity", "is_container", "kind_entry"]  # fmt: skip


def kind_entry(kind: str) -> ShapeKind:
    """The entry of a kind a shape may have (one with a form).

    Raises:
        ValueError: Naming the kind, when it is not one a fitted shape can be.
    """
    entry = SHAPE_KINDS.get(kind)
    if entry is None or entry.mesh is None:
        raise ValueError(f"unknown shape kind {kind!r:.40}: a shape is one of {', '.join(REPORT_SHAPES)}")
    return entry


def is_container(kind: str) -> bool:
    """True for a round kind with an opening (cup, mug, bowl); False for an unknown kind."""
    entry = SHAPE_KINDS.get(kind)
    return entry is not None and entry.container


def has_cavity(kind: str) -> bool:
    """True for a kind with a box-shaped space inside, open on one side (cabinet, drawer); False for an
    unknown kind."""
    entry = SHAPE_KINDS.get(kind)
    return entry is not None and entry.cavity is not None
