"""The operator of the add-on preferences' model list: download a SAM2 checkpoint by name.

``real2gym.fetch_model`` downloads into the model cache (resuming a partial
download). From the preferences (invoke) it works in the background with a
progress bar (Esc cancels and keeps the partial file); from scripts and
``blender -b`` (execute) synchronously. Both call one bridge function, the
same core function as ``real2gym models fetch``.
"""

from __future__ import annotations

import bpy

from ..bridge.models import model_fetch_job
from ..state.preferences import MODEL_ITEMS
from ._running import JobOperator


class REAL2GYM_OT_fetch_model(JobOperator, bpy.types.Operator):
    """Download a SAM2 checkpoint into the model cache; then type its name as the SAM2 checkpoint"""

    bl_idname = "real2gym.fetch_model"
    bl_label = "Download"
    bl_options = {"REGISTER"}
    status_property = "segmentation_status"

    model: bpy.props.EnumProperty(name="Model", description="The SAM2 checkpoint", items=MODEL_ITEMS)

    def make_job(self, context):
        return model_fetch_job(self.model)

    def finished(self, context, path) -> set[str]:
        context.scene.real2gym.segmentation_status = f"Downloaded {self.model}"
        self.report({"INFO"}, f"Real2Gym: {self.model} is in {path}")
        return {"FINISHED"}

    def modal(self, context, event):
        for area in context.screen.areas if context.screen else ():
            if area.type == "PREFERENCES":
                area.tag_redraw()  # the preferences show the progress bar
        return super().modal(context, event)


CLASSES = [REAL2GYM_OT_fetch_model]
