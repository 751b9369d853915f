"""The add-on's preferences: defaults shared by every scene (the SAM2 checkpoint and config).

A scene's own SAM2 checkpoint wins; when it is empty, the preferences' is used
(:func:`sam2_defaults`). ``bl_idname`` is the extension's package name
(``bl_ext.<repository>.real2gym`` when installed as an extension), derived from
this package so that it is right wherever the extension is installed.
"""

from __future__ import annotations

import bpy

from .properties import DEFAULT_SAM2_CONFIG

ADDON_ID = __package__.rpartition(".")[0]
"""The extension's top-level package, the key of ``context.preferences.addons``."""


class REAL2GYM_AP_preferences(bpy.types.AddonPreferences):
    """Defaults for every scene."""

    bl_idname = ADDON_ID

    sam2_checkpoint: bpy.props.StringProperty(
        name="SAM2 Checkpoint",
        description="Default SAM2 checkpoint (.pt) for scenes that do not set their own",
        subtype="FILE_PATH",
    )
    sam2_config: bpy.props.StringProperty(
        name="SAM2 Config", description="Default SAM2 config name", default=DEFAULT_SAM2_CONFIG
    )

    def draw(self, context):
        column = self.layout.column()
        column.prop(self, "sam2_checkpoint")
        column.prop(self, "sam2_config")


def sam2_defaults() -> tuple[str, str]:
    """The preferences' SAM2 checkpoint and config; empty when the add-on is not enabled."""
    addon = bpy.context.preferences.addons.get(ADDON_ID)
    preferences = addon.preferences if addon is not None else None
    if preferences is None:
        return "", DEFAULT_SAM2_CONFIG
    return bpy.path.abspath(preferences.sam2_checkpoint), preferences.sam2_config


CLASSES = [REAL2GYM_AP_preferences]
