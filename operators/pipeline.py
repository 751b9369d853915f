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
    bl_options = {"REGISTER"}

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


CLASSES = [REAL2GYM_OT_run_pipeline]
