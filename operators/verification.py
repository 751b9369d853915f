"""Operators of the Verification panel: Verify, Import Simulation, Compare, Show Collision.

``real2gym.verify`` re-verifies the scene's output folder with the objects'
physics settings and keys the simulation's copies; ``real2gym.import_simulation``
simulates again and keys the copies without verifying; ``real2gym.compare``
writes the comparison video with Blender's render of the reconstruction in the
middle. From the GUI (invoke) they work in the background with a progress bar
(Esc cancels); from scripts and ``blender -b`` (execute) synchronously. Each
calls one bridge function, so a script gets the same result.
"""

from __future__ import annotations

import bpy

from ..bridge.comparison import CompareJob, compare_in_scene
from ..bridge.reconstruction import toggle_collision
from ..bridge.verification import import_job, verify_job
from ._running import JobOperator

_OUT_DIR = bpy.props.StringProperty(
    name="Output Folder", description="The run's output folder; the scene's when empty", subtype="DIR_PATH"
)


class REAL2GYM_OT_verify(JobOperator, bpy.types.Operator):
    """Verify the scene again in MuJoCo with the objects' physics settings, and show the simulation"""

    bl_idname = "real2gym.verify"
    bl_label = "Verify"
    bl_options = {"UNDO"}  # an undo step; no redo panel (it would simulate again on the UI thread)
    status_property = "verification_status"

    out_dir: _OUT_DIR

    def make_job(self, context):
        return verify_job(context.scene, self.out_dir)

    def finished(self, context, verified) -> set[str]:
        for warning in verified.warnings:
            self.report({"WARNING"}, warning)
        if verified.passed:
            self.report({"INFO"}, "Real2Gym: verified, every check passed")
        else:
            self.report({"WARNING"}, f"Real2Gym: not verified; failed: {', '.join(verified.failed)}")
        return {"FINISHED"}


def _imported(imported) -> str:
    worst = max(imported.max_error_m.values(), default=0.0)
    return (
        f"Real2Gym: keyed {len(imported.objects)} simulated objects over {imported.frames} frames "
        f"(largest distance from the video: {worst * 1000:.1f} mm)"
    )


class REAL2GYM_OT_import_simulation(JobOperator, bpy.types.Operator):
    """Simulate the run again and key its copies in the Real2Gym Sim collection (the reconstruction is kept)"""

    bl_idname = "real2gym.import_simulation"
    bl_label = "Import Simulation"
    bl_options = {"UNDO"}  # an undo step; no redo panel (it would simulate again on the UI thread)
    status_property = "verification_status"

    out_dir: _OUT_DIR

    def make_job(self, context):
        return import_job(context.scene, self.out_dir)

    def finished(self, context, imported) -> set[str]:
        self.report({"INFO"}, _imported(imported))
        return {"FINISHED"}


class REAL2GYM_OT_compare(JobOperator, bpy.types.Operator):
    """Write compare/comparison.mp4: the video, Blender's render of the reconstruction, the simulation"""

    bl_idname = "real2gym.compare"
    bl_label = "Compare"
    bl_options = {"REGISTER"}
    status_property = "verification_status"

    out_dir: _OUT_DIR

    def make_job(self, context):
        return CompareJob(context.scene, self.out_dir)

    def run_now(self, context):
        return compare_in_scene(context.scene, self.out_dir)  # renders inside one call: no job slot to poll

    def finished(self, context, compared) -> set[str]:
        for warning in compared.warnings:
            self.report({"WARNING"}, warning)
        self.report({"INFO"}, f"Real2Gym: wrote {compared.artifacts['comparison_video']}")
        return {"FINISHED"}


class REAL2GYM_OT_toggle_collision(bpy.types.Operator):
    """Show or hide the objects' collision pieces (the Real2Gym Collision collection)"""

    bl_idname = "real2gym.toggle_collision"
    bl_label = "Show Collision"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        shown = toggle_collision(context.scene)
        self.report({"INFO"}, "Collision pieces shown" if shown else "Collision pieces hidden")
        return {"FINISHED"}


CLASSES = [
    REAL2GYM_OT_verify,
    REAL2GYM_OT_import_simulation,
    REAL2GYM_OT_compare,
    REAL2GYM_OT_toggle_collision,
]
