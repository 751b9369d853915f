"""Blender panels: they draw the add-on's state and offer its operators."""

from . import main

CLASSES = [*main.CLASSES]

__all__ = ["CLASSES"]
