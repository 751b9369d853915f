"""An open bowl: a rounded bottom whose wall curves up to a vertical rim."""

from __future__ import annotations

import numpy as np

from .base import ShapeKind
from .container import container_kind, straight_profile

PROFILE_SAMPLES = 13
"""Heights at which a curved profile is sampled for meshes and outlines."""


def curved_profile(shape, samples: int = PROFILE_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """The outer radius along a quarter ellipse from ``base_radius`` at the bottom to ``outer_radius`` at
    the rim (straight when the two are equal)."""
    sz = shape.size[2]
    rim = shape.params["outer_radius"]
    base = shape.params.get("base_radius", rim)
    if abs(base - rim) <= 1e-9:
        return straight_profile(shape)
    t = np.linspace(0.0, 1.0, samples)
    return -sz / 2 + t * sz, base + (rim - base) * np.sqrt(1.0 - (1.0 - t) ** 2)


BOWL = ShapeKind(
    **container_kind(
        name="bowl",
        description="An open bowl whose wall curves up",
        optional_params=("base_radius",),
        outer_profile=curved_profile,
    )
)
