"""Blender panels: they draw the add-on's state and offer its operators."""

from . import main, segmentation

CLASSES = [*main.CLASSES, *segmentation.CLASSES]

__all__ = ["CLASSES"]
