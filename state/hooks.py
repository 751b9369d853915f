"""What a property's update does in the scene, beyond storing the value: functions the bridge lends.

``state/`` stores; the bridge changes Blender data. A checkbox that shows a mask or a
collision, or a click on a keyframe, must reach the bridge, which imports this package;
so ``state/`` never imports the bridge. Instead the add-on's ``register()`` fills
:data:`SCENE_UPDATES` with the bridge's functions (``bridge.connect_state``), and the
update callbacks call them through :func:`scene_update`. Unfilled (a test that registers
the state alone), an update only stores the value.
"""

from __future__ import annotations

from collections.abc import Callable

SCENE_UPDATES: dict[str, Callable[..., None]] = {}
"""Hook name -> the bridge's function: ``overlay_visible(scene, object_name, visible)``,
``collision_visible(scene, visible)``, ``keyframe_selected(scene, index)``."""


def scene_update(name: str, *args) -> None:
    """Calls the bridge's function for ``name`` with ``args``, if the add-on connected one."""
    update = SCENE_UPDATES.get(name)
    if update is not None:
        update(*args)
