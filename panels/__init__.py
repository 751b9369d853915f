"""Blender panels: they draw the add-on's state and offer its operators."""

from . import fixes, main, segmentation, variants, verification

CLASSES = [*main.CLASSES, *segmentation.CLASSES, *verification.CLASSES, *fixes.CLASSES, *variants.CLASSES]

__all__ = ["CLASSES"]
