"""The add-on's preferences: defaults shared by every scene (the SAM2 checkpoint and config).

A scene's own SAM2 checkpoint wins; when it is empty, the preferences' is used
(:func:`sam2_defaults`). ``bl_idname`` is the extension's package name
(``bl_ext.<repository>.real2gym`` when installed as an extension), derived from
this package so that it is right wherever the extension is installed.

The preferences also list the SAM2 checkpoints that can be downloaded by name
(:mod:`~..real2gym_addon.models`) and whether each is in the model cache;
``bridge.models.model_fetch_job`` downloads one (the
``real2gym.fetch_model`` operator), only while Blender's online access is allowed.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.models import MODELS, list_models
from .properties import DEFAULT_SAM2_CONFIG

MODEL_ITEMS = [
    (
        m.name,
        m.name,
        f"SAM2.1 checkpoint, {m.size_bytes / 1e6:.0f} MB" if m.size_bytes else "SAM2.1 checkpoint",
    )
    for m in MODELS.values()
]

ADDON_ID = __package__.rpartition(".")[0]
"""The extension's top-level package, the key of ``context.preferences.addons``."""


class REAL2GYM_AP_preferences(bpy.types.AddonPreferences):
    """Defaults for every scene."""

    bl_idname = ADDON_ID

    sam2_checkpoint: bpy.props.StringProperty(
        name="SAM2 Checkpoint",
        description="Default SAM2 checkpoint (.pt), or a downloaded model's name, for scenes that do not set their own",
        subtype="FILE_PATH",
    )
    sam2_config: bpy.props.StringProperty(
        name="SAM2 Config", description="Default SAM2 config name", default=DEFAULT_SAM2_CONFIG
    )
    sam2_model: bpy.props.EnumProperty(
        name="Model", description="The SAM2 checkpoint to download", items=MODEL_ITEMS
    )

    def draw(self, context):
        column = self.layout.column()
        column.prop(self, "sam2_checkpoint")
        column.prop(self, "sam2_config")
        box = self.layout.box()
        box.label(text="SAM2 Models (use a downloaded one by typing its name as the checkpoint)")
        for row in list_models():
            line = box.row()
            line.label(text=row.info.name)
            line.label(text=f"{row.info.size_bytes / 1e6:.0f} MB" if row.info.size_bytes else "")
            line.label(
                text="Downloaded" if row.cached else "Not downloaded",
                icon="CHECKMARK" if row.cached else "BLANK1",
            )
        state = context.scene.real2gym if context.scene else None
        if state is not None and state.running:
            box.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
        line = box.row()
        line.enabled = bpy.app.online_access
        line.prop(self, "sam2_model", text="")
        line.operator("real2gym.fetch_model", icon="IMPORT").model = self.sam2_model
        if not bpy.app.online_access:
            box.label(text="Online access is off (Preferences > System > Network)", icon="INFO")
        if state is not None and state.segmentation_status:
            box.label(text=state.segmentation_status)


def sam2_defaults() -> tuple[str, str]:
    """The preferences' SAM2 checkpoint and config; empty when the add-on is not enabled."""
    addon = bpy.context.preferences.addons.get(ADDON_ID)
    preferences = addon.preferences if addon is not None else None
    if preferences is None:
        return "", DEFAULT_SAM2_CONFIG
    return bpy.path.abspath(preferences.sam2_checkpoint), preferences.sam2_config


CLASSES = [REAL2GYM_AP_preferences]
