"""Operators of the Segmentation panel: object prompts and the Segment button.

``real2gym.load_prompts`` / ``real2gym.save_prompts`` move the object prompts
between the demo folder's prompts.json and the scene; ``real2gym.add_prompt`` /
``real2gym.remove_prompt`` edit the list; ``real2gym.segment`` runs the load
and segment stages with the scene's backend and prompts (saved first) and shows
the masks over the video; ``real2gym.resegment_object`` segments only the active
object again (after a correction), keeping the others' masks. Drawing a prompt's
box is ``real2gym.draw_prompt_box`` (:mod:`.draw_prompt`).
"""

from __future__ import annotations

import bpy

from ..bridge import prompts
from ..bridge.mask_review import go_to_mask_review
from ..real2gym_addon.errors import Real2GymError
from ._running import RunOperator


class REAL2GYM_OT_load_prompts(bpy.types.Operator):
    """Load the object prompts from the demo folder's prompts.json (replaces the list)"""

    bl_idname = "real2gym.load_prompts"
    bl_label = "Load Prompts"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        try:
            count = prompts.load_prompts(context.scene)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Loaded {count} object prompts")
        return {"FINISHED"}


class REAL2GYM_OT_save_prompts(bpy.types.Operator):
    """Save the object prompts into the demo folder's prompts.json (keeps the task; backup prompts.json.orig)"""

    bl_idname = "real2gym.save_prompts"
    bl_label = "Save Prompts"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return len(context.scene.real2gym.object_prompts) > 0

    def execute(self, context):
        try:
            written = prompts.save_prompts(context.scene)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, "Saved prompts.json" if written else "prompts.json already holds these prompts")
        return {"FINISHED"}


class REAL2GYM_OT_add_prompt(bpy.types.Operator):
    """Add an object prompt on the current frame (then draw its box)"""

    bl_idname = "real2gym.add_prompt"
    bl_label = "Add Object Prompt"
    bl_options = {"REGISTER", "UNDO"}

    name: bpy.props.StringProperty(name="Name", default="object")

    def execute(self, context):
        prompts.add_prompt(context.scene, self.name)
        return {"FINISHED"}


class REAL2GYM_OT_remove_prompt(bpy.types.Operator):
    """Remove the active object prompt (prompts.json changes when saved)"""

    bl_idname = "real2gym.remove_prompt"
    bl_label = "Remove Object Prompt"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        state = context.scene.real2gym
        return 0 <= state.active_prompt_index < len(state.object_prompts)

    def execute(self, context):
        prompts.remove_prompt(context.scene, context.scene.real2gym.active_prompt_index)
        return {"FINISHED"}


class REAL2GYM_OT_segment(RunOperator, bpy.types.Operator):
    """Segment every object through the video with the chosen backend and show the masks"""

    bl_idname = "real2gym.segment"
    bl_label = "Segment"
    bl_options = {"REGISTER"}

    last_stage = "segment"


class REAL2GYM_OT_resegment_object(RunOperator, bpy.types.Operator):
    """Segment only the active object again, with its corrections; the other objects keep their masks"""

    bl_idname = "real2gym.resegment_object"
    bl_label = "Re-Segment Active Object"
    bl_options = {"REGISTER"}

    last_stage = "segment"

    @classmethod
    def poll(cls, context):
        state = context.scene.real2gym
        return 0 <= state.active_prompt_index < len(state.object_prompts)

    def resegment(self, context) -> str | None:
        state = context.scene.real2gym
        return state.object_prompts[state.active_prompt_index].name


class REAL2GYM_OT_go_to_mask_review(bpy.types.Operator):
    """Go to the first frame of these doubtful masks, with the object's mask shown over the video"""

    bl_idname = "real2gym.go_to_mask_review"
    bl_label = "Go to Frames to Check"
    bl_options = {"REGISTER"}

    index: bpy.props.IntProperty(
        name="Index", description="The entry of the list; -1: the selected one", default=-1
    )

    def execute(self, context):
        state = context.scene.real2gym
        try:
            go_to_mask_review(context.scene, state.active_mask_review_index if self.index < 0 else self.index)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        return {"FINISHED"}


CLASSES = [
    REAL2GYM_OT_load_prompts,
    REAL2GYM_OT_save_prompts,
    REAL2GYM_OT_add_prompt,
    REAL2GYM_OT_remove_prompt,
    REAL2GYM_OT_segment,
    REAL2GYM_OT_resegment_object,
    REAL2GYM_OT_go_to_mask_review,
]
