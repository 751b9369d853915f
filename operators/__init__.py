"""Blender operators: each reads its properties, calls one bridge function, reports."""

from . import draw_prompt, pipeline, segmentation

CLASSES = [*pipeline.CLASSES, *segmentation.CLASSES, *draw_prompt.CLASSES]

__all__ = ["CLASSES"]
