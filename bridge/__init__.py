"""The one place where Blender data and the core's plain data meet.

Core results (the scene description) become Blender data here, and Blender
objects become plain records here. Operators and panels call these functions;
they never build Blender data from core results themselves.
"""

from . import preferences, properties

CLASSES = [*properties.CLASSES, *preferences.CLASSES]

__all__ = ["CLASSES"]
