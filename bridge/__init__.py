"""The one place where Blender data and the core's plain data meet.

Core results (the scene description) become Blender data here, and Blender
objects become plain records here. Operators and panels call these functions;
they never build Blender data from core results themselves.
"""

from . import fix_properties, preferences, properties

CLASSES = [*properties.CLASSES, *preferences.CLASSES, *fix_properties.CLASSES]

__all__ = ["CLASSES"]
