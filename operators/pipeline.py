"""The operator that runs the whole pipeline.

``real2gym.run_pipeline`` runs the pipeline on a demo folder with the scene's
segmentation settings and object prompts. From the GUI (invoke) it works in
threads with a progress bar and Esc cancels it; from ``blender -b`` scripts
(execute) it runs synchronously. Both call the bridge's functions, so a script
gets the same result as a button press.
"""

from __future__ import annotations

import bpy

from ._running import RunOperator


class REAL2GYM_OT_run_pipeline(RunOperator, bpy.types.Operator):
    """Run Real2Gym on a demo folder: load the video, segment the objects, build the scene, write report.json"""

    bl_idname = "real2gym.run_pipeline"
    bl_label = "Run Real2Gym"
    # An undo step (Ctrl+Z takes the built scene back), but no redo panel: redoing would run the whole
    # pipeline again on the UI thread.
    bl_options = {"UNDO"}

    demo_dir: bpy.props.StringProperty(
        name="Demo Folder", description="Demo folder; the scene's setting when empty", subtype="DIR_PATH"
    )
    out_dir: bpy.props.StringProperty(
        name="Output Folder", description="Output folder; the scene's setting when empty", subtype="DIR_PATH"
    )
    last_stage: bpy.props.EnumProperty(
        name="Up To",
        description="The last stage to run",
        items=[
            ("load", "Load", "Check the demo folder and load the video"),
            ("segment", "Segment", "Also segment every object through the video"),
            ("geometry", "Geometry", "Also fit the table, the shapes, the motion and the keyframes"),
            ("verify", "Verify", "Also export MJCF, simulate the demo and check it"),
        ],
        default="verify",
    )

    def folders(self, context) -> tuple[str, str]:
        return self.demo_dir, self.out_dir


class REAL2GYM_OT_open_run(bpy.types.Operator):
    """Open a finished run's output folder: build its whole scene from report.json (video camera, objects,
    collisions, keyframes, the simulation's copies, the review), whichever Blender or command line made it"""

    bl_idname = "real2gym.open_run"
    bl_label = "Open Run"
    bl_options = {"UNDO"}  # an undo step; no redo panel (it would build and simulate again on the UI thread)

    out_dir: bpy.props.StringProperty(
        name="Output Folder", description="A run's output folder (with report.json)", subtype="DIR_PATH"
    )

    def invoke(self, context, event):
        if self.out_dir:
            return self.execute(context)
        self.directory = (
            bpy.path.abspath(context.scene.real2gym.out_dir) if context.scene.real2gym.out_dir else ""
        )
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    directory: bpy.props.StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def execute(self, context):
        from ..bridge.pipeline import open_run
        from ..real2gym_addon.errors import Real2GymError

        folder = self.out_dir or self.directory
        if not folder:
            self.report({"ERROR"}, "choose a run's output folder (the one holding report.json)")
            return {"CANCELLED"}
        try:
            report = open_run(context.scene, folder)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        verdict = report.verification
        state = "not simulated" if verdict is None else "verified" if verdict.passed else "not verified"
        self.report({"INFO"}, f"Real2Gym: opened {folder} ({len(report.objects)} objects, {state})")
        return {"FINISHED"}


CLASSES = [REAL2GYM_OT_run_pipeline, REAL2GYM_OT_open_run]
