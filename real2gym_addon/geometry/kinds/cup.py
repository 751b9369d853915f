"""An open cup, straight or tapered, with a handle where one shows (a mug)."""

from __future__ import annotations

from .base import ShapeKind
from .container import HANDLE_KEYS, container_kind, straight_profile

CUP = ShapeKind(
    **container_kind(
        name="cup",
        description="An open cup, straight or tapered, with a handle where one shows",
        optional_params=("base_radius", *HANDLE_KEYS),
        outer_profile=straight_profile,
    )
)
