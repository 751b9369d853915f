"""The Real2Gym tab in the 3D view's sidebar."""

from __future__ import annotations

import bpy

from ._sidebar import SidebarPanel


class REAL2GYM_PT_main(SidebarPanel, bpy.types.Panel):
    """Demo and output folders, the Run button and the last result."""

    bl_idname = "REAL2GYM_PT_main"
    bl_label = "Real2Gym"

    def draw(self, context):
        layout = self.layout
        state = context.scene.real2gym
        column = layout.column(align=True)
        column.label(text="Demo Folder")
        column.prop(state, "demo_dir", text="")
        column.label(text="Output Folder")
        column.prop(state, "out_dir", text="")
        row = layout.row()
        row.scale_y = 1.4
        row.enabled = not state.running
        row.operator("real2gym.run_pipeline", icon="PLAY")
        opener = layout.row()
        opener.enabled = not state.running
        opener.operator("real2gym.open_run", text="Open Run...", icon="FILE_FOLDER")
        if state.running:
            layout.progress(factor=state.progress, type="BAR", text=state.progress_text or "Working")
            layout.label(text="Press Esc to cancel", icon="INFO")
        elif state.status:
            layout.label(
                text=state.status, icon="CHECKMARK" if not state.status.startswith("Failed") else "ERROR"
            )


class REAL2GYM_PT_video(SidebarPanel, bpy.types.Panel):
    """What was loaded: the video and the camera."""

    bl_idname = "REAL2GYM_PT_video"
    bl_label = "Video and Camera"
    bl_parent_id = "REAL2GYM_PT_main"

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        state = scene.real2gym
        if not state.video_frames:
            layout.label(text="No video loaded yet")
            return
        column = layout.column(align=True)
        column.label(text=f"{state.video_frames} frames at {state.video_fps:g} fps", icon="FILE_MOVIE")
        column.label(text=f"{scene.render.resolution_x} x {scene.render.resolution_y} px", icon="IMAGE_DATA")
        camera = scene.camera
        if camera is not None and camera.type == "CAMERA":
            column.label(text=f"{camera.name}: {camera.data.lens:.1f} mm lens", icon="CAMERA_DATA")
        if state.report_path:
            layout.label(text=bpy.path.basename(state.report_path), icon="TEXT")


class REAL2GYM_PT_run_options(SidebarPanel, bpy.types.Panel):
    """The run's options that the Segmentation panel does not hold (real2gym run --depth-model, --force)."""

    bl_idname = "REAL2GYM_PT_run_options"
    bl_label = "Run Options"
    bl_parent_id = "REAL2GYM_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        state = context.scene.real2gym
        layout.enabled = not state.running
        column = layout.column(align=True)
        column.label(text="Depth Model (RGB-only demos)")
        column.prop(state, "depth_model", text="")
        layout.prop(state, "replace_fixed_run")
        layout.prop(state, "margin_runs")


CLASSES = [REAL2GYM_PT_main, REAL2GYM_PT_video, REAL2GYM_PT_run_options]
