"""The Segmentation sub-panel of the Real2Gym tab: backend, object prompts, Segment."""

from __future__ import annotations

import bpy

from ..real2gym_addon.segmentation.backends import SEGMENTATION_BACKENDS
from ..state.properties import has_box, prompt_on_frame
from ..state.segmentation import backend_availability, segmentation_options
from ._sidebar import SidebarPanel, wrapped_label

_OPTION_PROPERTIES = {
    "sam2_checkpoint": ("sam2_checkpoint", "SAM2 Checkpoint"),
    "sam2_config": ("sam2_config", "Config"),
    "device": ("segmentation_device", "Device"),
}
"""A backend's option (its ``options`` in the backend table) -> the scene property that sets it, and its text."""


class REAL2GYM_UL_prompts(bpy.types.UIList):
    """One row per object prompt: colour, name, frame, role, mask visibility."""

    bl_idname = "REAL2GYM_UL_prompts"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        swatch = row.row()
        swatch.ui_units_x = 1.0
        swatch.prop(item, "color", text="")
        row.prop(item, "name", text="", emboss=False)
        frame = row.row()
        frame.ui_units_x = 1.8
        frame.label(text=f"f {item.frame}")
        role = row.row()
        role.ui_units_x = 1.9
        role.prop(item, "role", text="", icon_only=True)
        row.prop(item, "show_mask", text="", emboss=False, icon="HIDE_OFF" if item.show_mask else "HIDE_ON")


class REAL2GYM_UL_mask_reviews(bpy.types.UIList):
    """One row per run of doubtful frames: object, frames, reason, and a button to go there."""

    bl_idname = "REAL2GYM_UL_mask_reviews"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=item.object_name, icon="ERROR")
        frames = f"{item.first}" if item.first == item.last else f"{item.first}-{item.last}"
        row.label(text=f"{frames}  {item.reason.replace('_', ' ')}")
        row.operator("real2gym.go_to_mask_review", text="", icon="PLAY", emboss=False).index = index


class REAL2GYM_PT_segmentation(SidebarPanel, bpy.types.Panel):
    """Choose the backend, edit the object prompts, segment and see the masks."""

    bl_idname = "REAL2GYM_PT_segmentation"
    bl_label = "Segmentation"
    bl_parent_id = "REAL2GYM_PT_main"

    @staticmethod
    def _draw_option(layout, state, options, option: str) -> None:
        """One setting of the chosen backend; a file path on a line of its own, with the preferences' default."""
        name, text = _OPTION_PROPERTIES.get(option, (option, option.replace("_", " ").title()))
        if not hasattr(state, name):
            return
        if state.bl_rna.properties[name].subtype != "FILE_PATH":
            layout.prop(state, name, text=text)
            return
        layout.label(text=text)
        layout.prop(state, name, text="")
        default = getattr(options, option, "")
        if not getattr(state, name) and default:
            hint = layout.row()
            hint.enabled = False
            hint.label(text=f"Preferences: {bpy.path.basename(default)}")

    def draw(self, context):
        layout = self.layout
        state = context.scene.real2gym
        options = segmentation_options(context.scene)
        available, reason = backend_availability(options)

        column = layout.column()
        column.prop(state, "segmentation_backend")
        if not available:
            greyed = column.column(align=True)
            greyed.enabled = False
            wrapped_label(greyed, context, reason, icon="ERROR")
        backend = SEGMENTATION_BACKENDS.get(state.segmentation_backend)
        if backend is not None and backend.options:
            settings = column.column(align=True)
            for option in backend.options:
                self._draw_option(settings, state, options, option)

        layout.label(text="Object Prompts")
        row = layout.row()
        row.template_list(
            "REAL2GYM_UL_prompts", "", state, "object_prompts", state, "active_prompt_index", rows=3
        )
        buttons = row.column(align=True)
        buttons.operator("real2gym.add_prompt", text="", icon="ADD")
        buttons.operator("real2gym.remove_prompt", text="", icon="REMOVE")
        self._draw_active(layout, state)

        files = layout.row(align=True)
        files.operator("real2gym.load_prompts", icon="IMPORT")
        files.operator("real2gym.save_prompts", icon="EXPORT")
        layout.operator("real2gym.draw_prompt_box", icon="SELECT_SET")
        self._draw_correction_hint(layout, state, context.scene.frame_current)
        space = context.space_data
        if space is not None and space.type == "VIEW_3D" and space.region_3d.view_perspective != "CAMERA":
            hint = layout.row()
            hint.enabled = False
            hint.label(text="Numpad 0: camera view, to draw", icon="INFO")

        if state.running:
            layout.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
            layout.label(text="Press Esc to cancel", icon="INFO")
            return
        row = layout.row()
        row.scale_y = 1.4
        row.enabled = available
        row.operator("real2gym.segment", icon="MOD_MASK")
        if state.segmentation_status:  # after a correction, only the active object needs segmenting again
            again = layout.row()
            again.enabled = available
            again.operator("real2gym.resegment_object", icon="FILE_REFRESH")
            layout.label(text=state.segmentation_status, icon="CHECKMARK")
        if state.mask_reviews:
            layout.label(text="Frames to Check (doubtful masks)")
            layout.template_list(
                "REAL2GYM_UL_mask_reviews",
                "",
                state,
                "mask_reviews",
                state,
                "active_mask_review_index",
                rows=3,
            )

    @staticmethod
    def _draw_correction_hint(layout, state, frame: int) -> None:
        """Says that drawing on this frame adds a correction rather than moving the prompt."""
        if not 0 <= state.active_prompt_index < len(state.object_prompts):
            return
        prompt = state.object_prompts[state.active_prompt_index]
        if has_box(prompt) and prompt_on_frame(prompt, frame) is None:
            hint = layout.row()
            hint.enabled = False
            hint.label(text="Draw Box here adds a correction", icon="INFO")

    def _draw_active(self, layout, state) -> None:
        if not 0 <= state.active_prompt_index < len(state.object_prompts):
            return
        prompt = state.object_prompts[state.active_prompt_index]
        column = layout.column(align=True)
        column.prop(prompt, "frame")
        column.label(text="Box x0, y0, x1, y1 (video px)")
        column.row(align=True).prop(prompt, "box", text="")
        kind = layout.row(align=True)
        kind.prop(prompt, "role", text="")
        kind.prop(prompt, "shape", text="")
        positive = sum(1 for p in prompt.points if p.label)
        layout.label(text=f"Points: {positive} on the object, {len(prompt.points) - positive} off it")
        if prompt.corrections:
            column = layout.column(align=True)
            column.label(text="Corrections (mask re-seeded from)")
            for index, correction in enumerate(prompt.corrections):
                row = column.row(align=True)
                row.label(text=f"frame {correction.frame}", icon="SELECT_SET")
                row.operator("real2gym.remove_correction", text="", icon="X").index = index


CLASSES = [REAL2GYM_UL_prompts, REAL2GYM_UL_mask_reviews, REAL2GYM_PT_segmentation]
