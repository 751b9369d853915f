"""Operators of the Variants panel: Vary, List Variants, Load Variant, Compare with Demo.

``real2gym.vary`` draws and verifies a batch of variants of the scene's run with
the panel's ranges; ``real2gym.load_variant`` opens one verified variant in the
scene (as Open Run opens a run); ``real2gym.compare_variant`` writes the variant's
compare.png beside the demo and shows it. From the GUI (invoke) they work in the
background with a progress bar (Esc cancels); from scripts and ``blender -b``
(execute) synchronously. Each calls one bridge function (:mod:`bridge.variants`).
"""

from __future__ import annotations

import bpy

from ..bridge import variants
from ..real2gym_addon.errors import Real2GymError
from ._running import JobOperator

_OUT_DIR = bpy.props.StringProperty(
    name="Output Folder",
    description="The varied run's output folder; the scene's when empty",
    subtype="DIR_PATH",
)
_VARIANT = bpy.props.StringProperty(
    name="Variant", description="The variant's id (v0003); the one selected in the list when empty"
)


class VariantsOperator(JobOperator):
    """Mixin: a job whose progress and status show in the Variants panel."""

    def progress_state(self, context):
        return context.scene.real2gym.variants


class REAL2GYM_OT_vary(VariantsOperator, bpy.types.Operator):
    """Draw variants of the verified run within the ranges, adapt the demo to each and verify them
    (Esc stops between variants and keeps the previous set)"""

    bl_idname = "real2gym.vary"
    bl_label = "Make Variants"
    bl_options = {"UNDO"}  # an undo step for the list; no redo panel (it would vary again on the UI thread)

    out_dir: _OUT_DIR

    def make_job(self, context):
        return variants.vary_job(context.scene, self.out_dir)

    def finished(self, context, varied: variants.Varied) -> set[str]:
        # None verified is a batch that ran but gave nothing to use: a warning, with the list's reasons.
        self.report(
            {"INFO"} if varied.passed else {"WARNING"},
            f"Real2Gym: {varied.passed} of {len(varied.entries)} variants verified, in {varied.folder / 'variants'}"
            + ("" if varied.passed else "; the list says why each was dropped"),
        )
        return {"FINISHED"}


class REAL2GYM_OT_list_variants(bpy.types.Operator):
    """List the variants already made for the run (by the command line or an earlier session)"""

    bl_idname = "real2gym.list_variants"
    bl_label = "List Variants"
    bl_options = {"REGISTER"}

    out_dir: _OUT_DIR

    def execute(self, context):
        try:
            entries = variants.list_variants(context.scene, self.out_dir)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        passed = sum(bool(e["passed"]) for e in entries)
        self.report({"INFO"}, f"Real2Gym: {passed} of {len(entries)} variants verified")
        return {"FINISHED"}


class REAL2GYM_OT_load_variant(VariantsOperator, bpy.types.Operator):
    """Show a verified variant in the scene: its camera, objects, distractors and simulation
    (edited objects are kept; Open Run on the varied run shows the demo again)"""

    bl_idname = "real2gym.load_variant"
    bl_label = "Load Variant"
    bl_options = {"UNDO"}  # an undo step; no redo panel (it would build and simulate again on the UI thread)

    variant_id: _VARIANT
    out_dir: _OUT_DIR

    def make_job(self, context):
        return variants.load_variant_job(context.scene, self.variant_id, self.out_dir)

    def finished(self, context, loaded: variants.LoadedVariant) -> set[str]:
        self.report(
            {"INFO"},
            f"Real2Gym: showing {loaded.variant_id} ({len(loaded.objects)} objects, {loaded.frames} frames)",
        )
        return {"FINISHED"}


class REAL2GYM_OT_compare_variant(VariantsOperator, bpy.types.Operator):
    """Render the demo and the variant from the video camera, first and last frames, into the
    variant's compare.png, and show it"""

    bl_idname = "real2gym.compare_variant"
    bl_label = "Compare with Demo"
    bl_options = {"REGISTER"}

    variant_id: _VARIANT
    out_dir: _OUT_DIR

    def make_job(self, context):
        return variants.compare_job(context.scene, self.variant_id, self.out_dir)

    def finished(self, context, image) -> set[str]:
        shown = variants.show_image(context, image)
        where = "shown in the Image Editor" if shown else f"loaded as the image '{image.name}'"
        self.report({"INFO"}, f"Real2Gym: wrote {image.filepath} ({where})")
        return {"FINISHED"}


CLASSES = [REAL2GYM_OT_vary, REAL2GYM_OT_list_variants, REAL2GYM_OT_load_variant, REAL2GYM_OT_compare_variant]
