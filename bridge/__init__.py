"""The one place where Blender data and the core's plain data meet.

Core results (the scene description, the typed geometry, the verification's
simulation) become Blender data here, and Blender objects become plain records
here. Operators call these functions; they never build Blender data from core
results themselves. Nothing is imported here, so that :mod:`.command` (the
``real2gym`` command) imports without bpy.
"""


def connect_state() -> None:
    """Lends ``state/`` the functions its update callbacks call (:mod:`..state.hooks`)."""
    from ..state.hooks import SCENE_UPDATES
    from .overlays import set_overlay_visible
    from .reconstruction import set_collision_visible
    from .review import select_keyframe

    SCENE_UPDATES.update(
        overlay_visible=set_overlay_visible,
        collision_visible=set_collision_visible,
        keyframe_selected=select_keyframe,
    )
