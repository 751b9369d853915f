"""Blender operators: each reads its properties, calls one bridge function, reports."""

from . import draw_prompt, fixes, models, pipeline, segmentation, variants, verification

CLASSES = [
    *pipeline.CLASSES,
    *segmentation.CLASSES,
    *draw_prompt.CLASSES,
    *verification.CLASSES,
    *fixes.CLASSES,
    *models.CLASSES,
    *variants.CLASSES,
]

__all__ = ["CLASSES"]
