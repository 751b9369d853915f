"""Blender operators: each reads its properties, calls one bridge function, reports."""

from . import pipeline

CLASSES = [*pipeline.CLASSES]

__all__ = ["CLASSES"]
