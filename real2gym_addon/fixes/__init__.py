"""Fixing a scene where interaction happens: edits, collision choices, the opening probe,
suggestions, and what to review (keyframes with their checks, silhouette IoUs)."""

from .collision import COLLISION_MODES, CollisionError, coacd_pieces, set_collision
from .edits import FIX_KINDS, FixError, apply_fix, recorded_fixes, undo_last
from .probe import opening_probe
from .review import keyframe_checks, silhouette_ious
from .suggest import suggest_fixes

__all__ = [
    "COLLISION_MODES",
    "FIX_KINDS",
    "CollisionError",
    "FixError",
    "apply_fix",
    "coacd_pieces",
    "keyframe_checks",
    "opening_probe",
    "recorded_fixes",
    "set_collision",
    "silhouette_ious",
    "suggest_fixes",
    "undo_last",
]
