"""Operators that run the pipeline.

``real2gym.run_pipeline`` runs the whole pipeline on a demo folder. From the
GUI (invoke) it works in a thread with a progress bar and Esc cancels it; from
``blender -b`` scripts (execute) it runs synchronously. Both call the bridge's
functions, so a script gets the same result as a button press.
"""

from __future__ import annotations

import bpy

from ..bridge.pipeline import BackgroundRun, run_in_scene
from ..real2gym_addon.errors import Real2GymError


def _folders(op, context) -> tuple[str, str]:
    state = context.scene.real2gym
    demo_dir = bpy.path.abspath(op.demo_dir or state.demo_dir)
    out_dir = bpy.path.abspath(op.out_dir or state.out_dir)
    return demo_dir, out_dir


class REAL2GYM_OT_run_pipeline(bpy.types.Operator):
    """Run Real2Gym on a demo folder: load the video, build the scene, write report.json"""

    bl_idname = "real2gym.run_pipeline"
    bl_label = "Run Real2Gym"
    bl_options = {"REGISTER"}

    demo_dir: bpy.props.StringProperty(
        name="Demo Folder", description="Demo folder; the scene's setting when empty", subtype="DIR_PATH"
    )
    out_dir: bpy.props.StringProperty(
        name="Output Folder", description="Output folder; the scene's setting when empty", subtype="DIR_PATH"
    )

    _job: BackgroundRun | None = None
    _timer = None

    def execute(self, context):
        demo_dir, out_dir = _folders(self, context)
        if not demo_dir or not out_dir:
            self.report({"ERROR"}, "Set the demo folder and the output folder first")
            return {"CANCELLED"}
        try:
            run = run_in_scene(context.scene, demo_dir, out_dir)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for warning in run.log.warnings:
            self.report({"WARNING"}, f"{warning.stage}: {warning.message}")
        self.report({"INFO"}, f"Real2Gym: wrote {run.out_dir / 'report.json'}")
        return {"FINISHED"}

    def invoke(self, context, event):
        demo_dir, out_dir = _folders(self, context)
        if not demo_dir or not out_dir:
            self.report({"ERROR"}, "Set the demo folder and the output folder first")
            return {"CANCELLED"}
        state = context.scene.real2gym
        if state.running:
            self.report({"ERROR"}, "A Real2Gym run is already in progress")
            return {"CANCELLED"}
        self._job = BackgroundRun(demo_dir, out_dir)
        self._job.start()
        state.running, state.progress, state.progress_text = True, 0.0, "Starting"
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            self._job.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        state = context.scene.real2gym
        progress = self._job.progress
        state.progress, state.progress_text = progress.fraction, progress.message
        context.window_manager.progress_update(int(progress.fraction * 100))
        for area in context.screen.areas if context.screen else ():
            if area.type == "VIEW_3D":
                area.tag_redraw()
        if not self._job.done:
            return {"RUNNING_MODAL"}
        return self._finish(context)

    def _finish(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        state = context.scene.real2gym
        state.running = False
        try:
            report = self._job.finish(context.scene)
        except Real2GymError as e:
            state.status = f"Failed: {e}"
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for warning in self._job.run.log.warnings:
            self.report({"WARNING"}, f"{warning.stage}: {warning.message}")
        self.report({"INFO"}, f"Real2Gym: wrote {report}")
        return {"FINISHED"}


CLASSES = [REAL2GYM_OT_run_pipeline]
