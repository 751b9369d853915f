"""Blender operators: each reads its properties, calls one bridge function, reports."""

from . import draw_prompt, fixes, pipeline, segmentation, verification

CLASSES = [
    *pipeline.CLASSES,
    *segmentation.CLASSES,
    *draw_prompt.CLASSES,
    *verification.CLASSES,
    *fixes.CLASSES,
]

__all__ = ["CLASSES"]
