"""Fixing a scene where interaction happens: edits, collision choices, the opening probe.

The suggestions (:mod:`.suggest`, :mod:`.rules`) and what to review (:mod:`.review`) sit above the
check registry, which names each check's rule; they are imported by their module paths, so that
the registry importing :mod:`.rules` does not import them back."""

from .collision import COLLISION_MODES, CollisionError, coacd_pieces, set_collision
from .edits import FIX_KINDS, FixError, apply_fix, recorded_fixes, undo_last
from .probe import opening_probe

__all__ = [
    "COLLISION_MODES",
    "FIX_KINDS",
    "CollisionError",
    "FixError",
    "apply_fix",
    "coacd_pieces",
    "opening_probe",
    "recorded_fixes",
    "set_collision",
    "undo_last",
]
