"""Real2Gym: turn a manipulation video into a physically verified MuJoCo scene.

The Blender extension's entry point. Nothing here but registration: the core
lives in ``real2gym_addon`` (no bpy), the add-on's state in ``state``, the
Blender side in ``bridge``, ``operators`` and ``panels`` (docs/architecture.md).
bpy is imported inside register() so that the package also imports in plain
Python (the ``real2gym`` command line).
"""


def _handlers() -> list:
    import bpy

    return [bpy.app.handlers.undo_post, bpy.app.handlers.redo_post]


def register() -> None:
    """Registers the state, the operators and the panels, and keeps report.json in step with undo."""
    import bpy

    from . import operators, panels, state
    from .bridge import connect_state
    from .bridge.fixes import sync_with_undo

    state.register()
    connect_state()
    for cls in [*operators.CLASSES, *panels.CLASSES]:
        bpy.utils.register_class(cls)
    for handlers in _handlers():
        if sync_with_undo not in handlers:
            handlers.append(sync_with_undo)


def unregister() -> None:
    """Unregisters everything :func:`register` registered, in reverse order."""
    import bpy

    from . import operators, panels, state
    from .bridge.fixes import sync_with_undo

    for handlers in _handlers():
        if sync_with_undo in handlers:
            handlers.remove(sync_with_undo)
    for cls in reversed([*operators.CLASSES, *panels.CLASSES]):
        bpy.utils.unregister_class(cls)
    state.unregister()
