"""The add-on's state in Blender, and what the panels read.

Every property group is registered here, in one place: the fixing state
(:mod:`.fix_properties`), the Variants panel's (:mod:`.variants`), the scene
and object settings (:mod:`.properties`, whose scene group holds ``fixes`` and
``variants``) and the preferences (:mod:`.preferences`). :func:`register` is
the enabled add-on's; :func:`ensure_registered` is the headless writer's (the
bpy module, without the add-on enabled). Panels read the run's status through
:mod:`.watch` (the one report watcher) and the segmentation settings through
:mod:`.segmentation`; they never call the bridge.
"""

from __future__ import annotations

import bpy

from . import fix_properties, preferences, properties, variants

CLASSES = [*fix_properties.CLASSES, *variants.CLASSES, *properties.CLASSES, *preferences.CLASSES]
"""In registration order: a group is registered before the groups that point to it."""
_GROUPS = [*fix_properties.CLASSES, *variants.CLASSES, *properties.CLASSES]


def register() -> None:
    """Registers every class and adds ``scene.real2gym`` and ``object.real2gym``."""
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    properties.attach()


def unregister() -> None:
    """Undoes :func:`register`."""
    properties.detach()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)


def ensure_registered() -> bool:
    """Registers the property groups when the add-on is not enabled (the bpy module, the command line).

    Returns:
        Whether they were registered now (then :func:`release` them when done).
    """
    if hasattr(bpy.types.Scene, "real2gym"):
        return False
    for cls in _GROUPS:
        bpy.utils.register_class(cls)
    properties.attach()
    return True


def release() -> None:
    """Undoes :func:`ensure_registered`: the bpy module (4.2) crashes at interpreter exit while a
    Python-defined property group is still attached to its types."""
    properties.detach()
    for cls in reversed(_GROUPS):
        bpy.utils.unregister_class(cls)
