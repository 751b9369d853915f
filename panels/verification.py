"""The Verification and Object Physics sub-panels of the Real2Gym tab."""

from __future__ import annotations

import bpy

from ..state.properties import ERROR_PROPERTY
from ..state.watch import verification_summary
from ._sidebar import SidebarPanel, wrapped_label

_KINDS = {"OBJECT", "TABLE", "COLLISION", "SIMULATION"}


class REAL2GYM_PT_verification(SidebarPanel, bpy.types.Panel):
    """The verdict, one row per check with its key figure, the suggested fixes, and the buttons."""

    bl_idname = "REAL2GYM_PT_verification"
    bl_label = "Verification"
    bl_parent_id = "REAL2GYM_PT_main"

    def draw(self, context):
        layout = self.layout
        state = context.scene.real2gym
        summary = verification_summary(context.scene)
        if summary is None or summary.verified is None:
            layout.label(text="Not verified yet: run up to Verify", icon="INFO")
        else:
            verdict = layout.row()
            verdict.alert = not summary.verified
            verdict.label(
                text="Verified: all checks pass" if summary.verified else "Not verified",
                icon="CHECKMARK" if summary.verified else "ERROR",
            )
            if summary.margin:
                margin = layout.column()
                margin.alert = not summary.robust
                wrapped_label(margin, context, f"Margin: {summary.margin}", icon="MOD_NOISE")
            checks = layout.column(align=True)
            for row in summary.checks:
                split = checks.split(factor=0.45, align=True)
                split.label(text=row.label, icon="CHECKMARK" if row.passed else "X")
                if row.perturbed:  # how many of the perturbed copies it passed in, a narrow column of its own
                    split = split.split(factor=0.78, align=True)
                    split.label(text=row.figure)
                    split.label(text=row.perturbed)
                else:
                    split.label(text=row.figure)
            if summary.suggestions:  # listed with their Apply buttons in the Suggestions panel
                count = len(summary.suggestions)
                layout.label(
                    text=f"{count} suggested fix{'es' if count > 1 else ''}: see Suggestions", icon="LIGHT"
                )

        if state.running:
            layout.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
            layout.label(text="Press Esc to cancel", icon="INFO")
        column = layout.column(align=True)
        column.enabled = not state.running
        verify = column.row(align=True)
        verify.scale_y = 1.3
        verify.operator("real2gym.verify", icon="PHYSICS")
        buttons = column.row(align=True)
        buttons.operator("real2gym.import_simulation", text="Import Sim", icon="IMPORT")
        buttons.operator("real2gym.compare", icon="SEQ_SPLITVIEW")
        column.operator(
            "real2gym.toggle_collision",
            text="Hide Collision" if state.show_collision else "Show Collision",
            icon="MOD_PHYSICS",
            depress=state.show_collision,
        )
        if state.verification_status.startswith("Failed") and not state.running:
            wrapped_label(layout, context, state.verification_status, icon="ERROR")


class REAL2GYM_PT_object_physics(SidebarPanel, bpy.types.Panel):
    """The active Real2Gym object's physics settings (mass, density, friction) and what it stands for."""

    bl_idname = "REAL2GYM_PT_object_physics"
    bl_label = "Object Physics"
    bl_parent_id = "REAL2GYM_PT_main"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.real2gym.kind in _KINDS

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        settings = obj.real2gym
        if settings.kind == "COLLISION" and obj.parent is not None:
            obj = obj.parent
            settings = obj.real2gym
        layout.label(text=obj.name, icon="OBJECT_DATA")
        if settings.kind == "SIMULATION":
            layout.label(text="A simulated copy: re-import to update")
            if ERROR_PROPERTY in obj:
                layout.label(text=f"Distance to the video: {obj[ERROR_PROPERTY] * 1000:.1f} mm")
            return
        if settings.kind != "OBJECT":
            layout.label(text="The table: static, at z = 0")
            return
        column = layout.column(align=True)
        column.use_property_split = True
        column.use_property_decorate = False
        column.prop(settings, "mass", text="Mass (0 = auto)")
        if settings.mass <= 0:
            auto = column.row()
            auto.enabled = False
            auto.label(text="auto: from the density and the collision volume")
        density = column.row(align=True)
        density.enabled = settings.mass <= 0
        density.prop(settings, "density")
        column.prop(settings, "friction")
        info = layout.column(align=True)
        info.enabled = False
        info.use_property_split = True
        info.use_property_decorate = False
        info.prop(settings, "role")
        info.prop(settings, "shape")


CLASSES = [REAL2GYM_PT_verification, REAL2GYM_PT_object_physics]
