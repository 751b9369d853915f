"""The Variants sub-panel of the Real2Gym tab, and its Ranges.

Variants: the count, seed and jobs, Make Variants (with its progress bar), the
list of the last batch (verified variants ticked with what they change, dropped
ones with their reason), Load and Compare with Demo for the selected one, and
Show Demo while a variant is shown. Ranges: what a variant may change, as the
core's variation plan has it. Everything comes from ``scene.real2gym.variants``.
"""

from __future__ import annotations

from pathlib import Path

import bpy

from ..state.variants import active_entry, shown_variant
from ._sidebar import SidebarPanel, wrapped_label


class REAL2GYM_UL_variants(bpy.types.UIList):
    """One row per variant: verified or dropped, its id, what it changes or why it was dropped."""

    bl_idname = "REAL2GYM_UL_variants"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        split = layout.split(factor=0.34, align=True)
        split.label(text=item.name, icon="CHECKMARK" if item.passed else "X")
        detail = split.row(align=True)
        detail.alert = not item.passed
        detail.label(text=item.changes if item.passed else item.reason)


class REAL2GYM_PT_variants(SidebarPanel, bpy.types.Panel):
    """Variants of the verified run: make them, list them, load one or compare it with the demo."""

    bl_idname = "REAL2GYM_PT_variants"
    bl_label = "Variants"
    bl_parent_id = "REAL2GYM_PT_main"

    def draw(self, context):
        layout = self.layout
        variants = context.scene.real2gym.variants
        column = layout.column(align=True)
        row = column.row(align=True)
        row.prop(variants, "count")
        row.prop(variants, "seed")
        column.prop(variants, "jobs")
        run = layout.row()
        run.scale_y = 1.3
        run.enabled = not variants.running
        run.operator("real2gym.vary", icon="MOD_ARRAY")
        if variants.running:
            layout.progress(factor=variants.progress, type="BAR", text=variants.progress_text or "Working")
            layout.label(text="Press Esc to stop (the previous set is kept)", icon="INFO")
        if not variants.entries:
            layout.operator("real2gym.list_variants", icon="FILE_REFRESH")
        else:
            self._draw_list(layout, context, variants)
        shown = shown_variant(context.scene)
        if shown:
            box = layout.box()
            box.label(text=f"The scene shows {shown}", icon="HIDE_OFF")
            box.operator("real2gym.open_run", text="Show Demo", icon="LOOP_BACK").out_dir = variants.run_dir
        if variants.status and not variants.running:
            failed = variants.status.startswith("Failed")
            wrapped_label(layout, context, variants.status, icon="ERROR" if failed else "INFO")

    def _draw_list(self, layout, context, variants) -> None:
        layout.label(text=f"Variants of {Path(variants.run_dir).name}", icon="FILE_FOLDER")
        row = layout.row()
        row.template_list(
            "REAL2GYM_UL_variants", "", variants, "entries", variants, "active_entry_index", rows=5
        )
        side = row.column(align=True)
        side.operator("real2gym.list_variants", text="", icon="FILE_REFRESH")
        entry = active_entry(variants)
        if entry is None:
            return
        details = layout.column(align=True)
        details.enabled = False
        text = entry.changes if entry.passed else f"Dropped: {entry.reason}"
        wrapped_label(details, context, f"{entry.name}: {text} ({entry.seconds:.1f} s)")
        buttons = layout.row(align=True)
        buttons.enabled = entry.passed and not variants.running
        buttons.operator("real2gym.load_variant", text="Load", icon="IMPORT").variant_id = entry.name
        buttons.operator(
            "real2gym.compare_variant", text="Compare", icon="SEQ_SPLITVIEW"
        ).variant_id = entry.name


class REAL2GYM_PT_variant_ranges(SidebarPanel, bpy.types.Panel):
    """What a variant may change: the objects' start, size and rim, the table, physics, distractors, the look."""

    bl_idname = "REAL2GYM_PT_variant_ranges"
    bl_label = "Ranges"
    bl_parent_id = "REAL2GYM_PT_variants"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        variants = context.scene.real2gym.variants
        layout.enabled = not variants.running
        objects = layout.column(align=True)
        objects.prop(variants, "position_m", text="Object Shift +-")
        objects.prop(variants, "yaw_deg", text="Object Turn +-")
        _span(objects, variants, "size_scale", "Object Size")
        target = layout.column(align=True)
        target.prop(variants, "target_position_m", text="Target Shift +-")
        target.prop(variants, "target_yaw_deg", text="Target Turn +-")
        _span(target, variants, "rim_scale", "Rim")
        scene = layout.column(align=True)
        _span(scene, variants, "table_height_m", "Table Height")
        _span(scene, variants, "friction_scale", "Friction")
        _span(scene, variants, "mass_scale", "Mass")
        distractors = layout.column(align=True)
        _span(distractors, variants, "distractors", "Distractors")
        _span(distractors, variants, "distractor_size_m", "Their Size")
        look = layout.column(align=True, heading="Look")
        look.prop(variants, "colours")
        look.prop(variants, "table_texture")
        look.prop(variants, "background")
        _span(look, variants, "light_intensity", "Light")
        look.prop(variants, "light_tilt_deg", text="Light Tilt +-")
        look.prop(variants, "only_share")
        layout.prop(variants, "settle_s")


def _span(layout, variants, name: str, text: str) -> None:
    """A (low, high) pair on one row, split as the other properties: ``text``, then its two ends side by side."""
    split = layout.split(factor=0.4, align=True)
    label = split.row()
    label.alignment = "RIGHT"
    label.label(text=text)
    ends = split.row(align=True)
    ends.use_property_split = False
    ends.prop(variants, name, index=0, text="")
    ends.prop(variants, name, index=1, text="")


CLASSES = [REAL2GYM_UL_variants, REAL2GYM_PT_variants, REAL2GYM_PT_variant_ranges]
