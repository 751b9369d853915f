"""The one place where Blender data and the core's plain data meet.

Core results (the scene description, the typed geometry, the verification's
simulation) become Blender data here, and Blender objects become plain records
here. Operators call these functions; they never build Blender data from core
results themselves. Nothing is imported here, so that :mod:`.command` (the
``real2gym`` command) imports without bpy.
"""
