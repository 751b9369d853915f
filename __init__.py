"""Real2Gym: turn a manipulation video into a physically verified MuJoCo scene.

The Blender extension's entry point. Nothing here but registration: the core
lives in ``real2gym_addon`` (no bpy), the Blender side in ``bridge``,
``operators`` and ``panels``. bpy is imported inside register() so that the
package also imports in plain Python (the ``real2gym`` command line).
"""


def _classes() -> list:
    from . import operators, panels
    from .bridge import fix_properties, preferences, properties

    return [
        *properties.CLASSES,
        *preferences.CLASSES,
        *fix_properties.CLASSES,
        *operators.CLASSES,
        *panels.CLASSES,
    ]


def register() -> None:
    """Registers the classes and the add-on's state on Scene and Object."""
    import bpy

    from .bridge import fix_properties, properties

    for cls in _classes():
        bpy.utils.register_class(cls)
    properties.attach()
    fix_properties.attach()


def unregister() -> None:
    """Unregisters everything :func:`register` registered, in reverse order."""
    import bpy

    from .bridge import fix_properties, properties

    fix_properties.detach()
    properties.detach()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
