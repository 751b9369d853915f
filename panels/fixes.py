"""The Keyframes, Suggestions and Fixes sub-panels of the Real2Gym tab.

Keyframes: the run's verdict and checks, its interaction keyframes with the
checks that concern them (selecting one jumps there in the camera view and
shows the silhouette IoU around it), and adding, moving and deleting them.
Suggestions: after a failed verification, the fixes the core suggests, each
with Apply and Go to Frame. Fixes: the object to fix, rim scale, scale, offset,
collision (with CoACD's settings and the opening probe), the joints of an object
with moving parts (the selected door's or drawer's), Verify, Undo Fix, and the
object's edit log. Everything shown comes from report.json
through ``scene.real2gym.fixes`` (:mod:`bridge.review`).
"""

from __future__ import annotations

import math

import bpy

from ..state.watch import report_changed
from ._sidebar import SidebarPanel, wrapped_label

_EVENT_ICONS = {"grasp": "VIEW_PAN", "lift": "TRIA_UP", "release": "TRIA_DOWN", "contact": "SNAP_FACE"}
_VERDICT_ICONS = {"PASSED": "CHECKMARK", "FAILED": "ERROR", "UNKNOWN": "QUESTION"}


def _state(context):
    return context.scene.real2gym.fixes


def _active_keyframe(state):
    if 0 <= state.active_keyframe_index < len(state.keyframes):
        return state.keyframes[state.active_keyframe_index]
    return None


class REAL2GYM_UL_keyframes(bpy.types.UIList):
    """One row per interaction keyframe: verdict, event, object, frame, the checks that concern it."""

    bl_idname = "REAL2GYM_UL_keyframes"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.alert = item.verdict == "FAILED"
        event = row.row(align=True)
        event.ui_units_x = 4.4
        event.label(text=item.event, icon=_EVENT_ICONS.get(item.event, "KEYFRAME_HLT"))
        name = row.row(align=True)
        name.ui_units_x = 2.6
        name.label(text=item.object_name)
        frame = row.row(align=True)
        frame.ui_units_x = 1.8
        frame.label(text=str(item.frame))
        row.label(text=item.failed or item.checks or "no check", icon=_VERDICT_ICONS[item.verdict])


class REAL2GYM_PT_keyframes(SidebarPanel, bpy.types.Panel):
    """The run's verdict and checks, and its keyframes: select one to look at it."""

    bl_idname = "REAL2GYM_PT_keyframes"
    bl_label = "Keyframes"
    bl_parent_id = "REAL2GYM_PT_main"

    def draw(self, context):
        layout = self.layout
        state = _state(context)
        if not state.report_dir or report_changed(context.scene):
            row = layout.row()
            row.operator(
                "real2gym.load_review",
                text="Reload Report" if state.report_dir else "Load Report",
                icon="FILE_REFRESH" if state.report_dir else "IMPORT",
            )
            if not state.report_dir:
                hint = layout.row()
                hint.enabled = False
                hint.label(text="Shows the output folder's report.json", icon="INFO")
                return
        if state.running:
            layout.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
        self._draw_verdict(layout, context, state)
        row = layout.row()
        row.template_list(
            "REAL2GYM_UL_keyframes", "", state, "keyframes", state, "active_keyframe_index", rows=4
        )
        buttons = row.column(align=True)
        busy = state.running
        active = _active_keyframe(state)
        add = buttons.operator("real2gym.add_keyframe", text="", icon="ADD")
        add.event, add.object_name = state.keyframe_event, active.object_name if active else ""
        buttons.operator("real2gym.delete_keyframe", text="", icon="REMOVE")
        buttons.separator()
        buttons.operator("real2gym.move_keyframe", text="", icon="TIME")
        buttons.enabled = not busy
        add_row = layout.row(align=True)
        add_row.prop(state, "keyframe_event", text="Add")
        add_row.label(text=f"at frame {context.scene.frame_current}")
        if active is not None:
            self._draw_active(layout, state, active)

    def _draw_verdict(self, layout, context, state) -> None:
        failed = [c for c in state.checks if not c.passed]
        box = layout.box()
        if state.verification == "PASSED":
            box.label(text=f"Verified: all {len(state.checks)} checks passed", icon="CHECKMARK")
        elif state.verification == "FAILED":
            column = box.column(align=True)
            column.alert = True
            names = ", ".join(c.name for c in failed)
            wrapped_label(column, context, f"Not verified: {names} failed", "ERROR")
            for check in failed:
                if check.figures:
                    hint = box.column(align=True)
                    hint.enabled = False
                    wrapped_label(hint, context, f"{check.name}: {check.figures}", "BLANK1")
        elif state.verification == "STALE":
            box.label(text="Fixed since the last verification", icon="QUESTION")
            box.operator("real2gym.verify", icon="PHYSICS")
        else:
            box.label(text="Not verified yet", icon="QUESTION")

    def _draw_active(self, layout, state, keyframe) -> None:
        column = layout.column(align=True)
        verdict = {"PASSED": "passed", "FAILED": f"failed: {keyframe.failed}", "UNKNOWN": "not verified"}
        row = column.row()
        row.alert = keyframe.verdict == "FAILED"
        row.label(
            text=f"{keyframe.event.title()}, frame {keyframe.frame}: {verdict[keyframe.verdict]}",
            icon=_VERDICT_ICONS[keyframe.verdict],
        )
        if keyframe.checks:
            hint = column.row()
            hint.enabled = False
            hint.label(text=f"Checks: {keyframe.checks}", icon="BLANK1")
        if not state.ious:
            return
        column.separator()
        column.label(text=f"Silhouette IoU, {state.iou_object} (mask / reconstruction)", icon="IMAGE_DATA")
        row = column.row(align=True)
        for item in state.ious:
            cell = row.column(align=True)
            cell.alert = item.measured and item.iou < 0.5
            header = cell.row()
            header.enabled = item.frame == keyframe.frame
            header.label(text=f"f {item.frame}")
            cell.label(text=f"{item.iou:.2f}" if item.measured else "hidden")


class REAL2GYM_PT_suggestions(SidebarPanel, bpy.types.Panel):
    """After a failed verification: the suggested fixes, each ready to apply."""

    bl_idname = "REAL2GYM_PT_suggestions"
    bl_label = "Suggestions"
    bl_parent_id = "REAL2GYM_PT_main"

    @classmethod
    def poll(cls, context):
        state = _state(context)
        return state.verification == "FAILED" or len(state.suggestions) > 0

    def draw(self, context):
        layout = self.layout
        state = _state(context)
        if not state.suggestions:
            wrapped_label(layout, context, "No suggestion for these failures: try the fixes below.", "INFO")
            return
        row = layout.row()
        row.enabled = not state.running
        row.operator("real2gym.repair", icon="MODIFIER")
        for index, suggestion in enumerate(state.suggestions):
            box = layout.box()
            wrapped_label(box, context, suggestion.name, "LIGHT")
            hint = box.row()
            hint.enabled = False
            hint.label(text=f"{suggestion.check}, frame {suggestion.frame} ({suggestion.kind})")
            row = box.row(align=True)
            row.enabled = not state.running
            apply = row.operator("real2gym.apply_suggestion", icon="CHECKMARK")
            apply.index = index
            go = row.operator("real2gym.go_to_frame", text=f"Go to Frame {suggestion.frame}", icon="TIME")
            go.frame = suggestion.frame


def _jointed_object(context, state, target):
    """The object whose joints the Fixes panel shows: the selected part's or joint's, else the object to fix."""
    active = context.active_object
    if active is not None and active.real2gym.part:
        selected = state.objects.get(active.real2gym.source_name)
        if selected is not None and selected.parts:
            return selected
    return target if target is not None and len(target.parts) else None


class REAL2GYM_PT_fixes(SidebarPanel, bpy.types.Panel):
    """Fix an object where interaction happens, re-verify, undo; and its edit log."""

    bl_idname = "REAL2GYM_PT_fixes"
    bl_label = "Fixes"
    bl_parent_id = "REAL2GYM_PT_main"

    @classmethod
    def poll(cls, context):
        return bool(_state(context).report_dir)

    def draw(self, context):
        layout = self.layout
        state = _state(context)
        layout.prop_search(state, "fix_object", state, "objects", text="Object")
        target = state.objects.get(state.fix_object)
        if target is not None:
            hint = layout.row()
            hint.enabled = False
            hint.label(text=f"{target.role}, {target.shape}, collision: {target.collision_mode}")
        if state.running:
            layout.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
        body = layout.column()
        body.enabled = not state.running and target is not None
        self._draw_fixes(body, context, state, target)
        if state.status and not state.running:
            wrapped_label(
                layout, context, state.status, "ERROR" if state.status.startswith("Failed") else "INFO"
            )
        if target is not None:
            self._draw_edit_log(layout, target)

    def _draw_fixes(self, layout, context, state, target) -> None:
        name = state.fix_object
        rim = layout.row(align=True)
        rim.enabled = target is not None and target.is_container
        rim.prop(state, "rim_scale", text="Rim")
        op = rim.operator("real2gym.rim_scale", text="Scale Rim")
        op.object_name, op.factor = name, state.rim_scale

        column = layout.column(align=True)
        column.row(align=True).prop(state, "scale_factors", text="")
        op = column.operator("real2gym.scale_object", text="Scale about Base")
        op.object_name, op.factors = name, state.scale_factors

        column = layout.column(align=True)
        column.row(align=True).prop(state, "offset", text="")
        row = column.row(align=True)
        row.prop(state, "offset_whole_motion", toggle=True)
        sub = row.row(align=True)
        sub.enabled = not state.offset_whole_motion
        sub.prop(state, "offset_blend")
        frame = context.scene.frame_current
        label = "Offset Whole Motion" if state.offset_whole_motion else f"Offset from Frame {frame}"
        op = column.operator("real2gym.offset_object", text=label)
        op.object_name, op.delta, op.frame = name, state.offset, frame
        op.blend, op.whole_motion = state.offset_blend, state.offset_whole_motion

        column = layout.column(align=True)
        column.prop(state, "collision_mode", text="")
        if state.collision_mode == "coacd":
            column.prop(state, "coacd_threshold")
            column.prop(state, "coacd_max_pieces")
            column.prop(state, "coacd_time_limit")
        row = column.row(align=True)
        op = row.operator("real2gym.set_collision")
        op.object_name, op.mode = name, state.collision_mode
        op.threshold, op.max_pieces = state.coacd_threshold, state.coacd_max_pieces
        op.time_limit = state.coacd_time_limit
        probe = row.row(align=True)
        probe.enabled = target is not None and target.is_container
        probe.operator("real2gym.opening_probe", text="Probe", icon="TRIA_DOWN").object_name = name
        if state.probe_result:
            hint = layout.column()
            hint.enabled = False
            wrapped_label(hint, context, state.probe_result)

        joints_of = _jointed_object(context, state, target)
        if joints_of is not None:
            self._draw_joints(layout, context, joints_of)

        layout.prop(state, "verify_after_fix")
        row = layout.row(align=True)
        undo = row.row(align=True)
        undo.enabled = state.edit_count > 0
        undo.operator("real2gym.undo_fix", icon="LOOP_BACK")

    def _draw_joints(self, layout, context, target) -> None:
        """Each moving part's joint (editable), Set Joint, and Set Joint from the viewport's arrow and limits."""
        box = layout.box()
        box.label(text=f"Joints of {target.name}", icon="CON_ROTLIMIT")
        active = context.active_object
        for part in target.parts:
            hinge = part.joint_type == "hinge"
            column = box.column(align=True)
            selected = active is not None and (active.real2gym.source_name, active.real2gym.part) == (
                target.name,
                part.name,
            )
            closed = (
                f"{math.degrees(part.closed):.0f}\N{DEGREE SIGN}" if hinge else f"{part.closed * 100:.1f} cm"
            )
            column.label(
                text=f"{part.name}: {part.joint_type}{' (selected)' if selected else ''}",
                icon="DRIVER_ROTATIONAL_DIFFERENCE" if hinge else "DRIVER_DISTANCE",
            )
            hint = column.row()
            hint.enabled = False
            hint.label(text=f"{part.source}, closed at {closed}", icon="BLANK1")
            column.prop(part, "axis", text="Axis" if hinge else "Direction")
            if hinge:
                column.prop(part, "pivot", text="Pivot")
            column.prop(part, "angle_range" if hinge else "length_range", text="Range")
            column.prop(part, "damping")
            column.prop(part, "frictionloss")
            row = column.row(align=True)
            op = row.operator("real2gym.set_joint", icon="CHECKMARK")
            op.object_name, op.part = target.name, part.name
            op.axis, op.pivot = part.axis, part.pivot
            op.range_lo, op.range_hi = part.angle_range if hinge else part.length_range
            op.damping, op.frictionloss = part.damping, part.frictionloss
            op = row.operator("real2gym.set_joint", text="From Viewport", icon="VIEW3D")
            op.object_name, op.part, op.from_viewport = target.name, part.name, True
        hint = box.column()
        hint.enabled = False
        wrapped_label(
            hint,
            context,
            "From Viewport: the axis and pivot from the joint's arrow (its Z and origin), the range from the "
            "part's limit constraint.",
        )

    def _draw_edit_log(self, layout, target) -> None:
        box = layout.box()
        box.label(text=f"Edit log of {target.name} ({len(target.edits)})", icon="TEXT")
        if not target.edits:
            hint = box.row()
            hint.enabled = False
            hint.label(text="No fixes yet")
            return
        column = box.column(align=True)
        for edit in reversed(target.edits):
            column.label(text=f"{edit.name}: {edit.arguments}")
            hint = column.row()
            hint.enabled = False
            hint.label(text=edit.time.replace("T", " ").replace("+00:00", " UTC"), icon="BLANK1")


CLASSES = [REAL2GYM_UL_keyframes, REAL2GYM_PT_keyframes, REAL2GYM_PT_suggestions, REAL2GYM_PT_fixes]
