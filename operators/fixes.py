"""Operators of the Keyframes, Suggestions and Fixes panels.

Each fix operator reads its properties, prepares one change with the bridge
(:mod:`bridge.fixes`) and runs it: synchronously from ``execute`` (scripts,
``blender -b``), in a worker thread from ``invoke`` (a click), polled by a modal
timer that shows progress, so that CoACD and MuJoCo never freeze the interface.
Every change is logged in report.json by the core and is undoable: with
*Undo Fix*, and with Blender's own undo (the bridge keeps report.json in step).
A fix that does not apply reports the core's message and changes nothing.
"""

from __future__ import annotations

import bpy

from ..bridge import fixes, review
from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.fixes.collision import COACD_TIME_LIMIT_S, COLLISION_MODES
from ..state.fix_properties import EVENTS
from ._running import JobOperator

_OBJECT = "The object (its name in report.json); empty: the panel's object to fix"
_COLLISION_ITEMS = [(m, m.title(), f"{m} collision") for m in COLLISION_MODES]
_EVENT_ITEMS = [(e, e.title(), f"A {e} keyframe") for e in EVENTS]


def _number(value: float) -> float:
    """A float property's value as typed: Blender stores float32 (1.07 reads 1.0700000524520874)."""
    return float(f"{value:.7g}")


def _numbers(values) -> list[float]:
    return [_number(v) for v in values]


class FixOperator(JobOperator):
    """Mixin: a change to the reviewed run, a job (:class:`~._running.JobOperator`) whose progress and
    status show in the Fixes panel.

    Subclasses implement :meth:`request`.
    """

    # Undoable (Ctrl+Z, with report.json kept in step), but never redone from the Adjust Last Operation
    # panel: that re-runs execute() on the UI thread, and a CoACD fix takes up to two minutes.
    bl_options = {"UNDO"}

    def request(self, context) -> fixes.FixRequest:
        """The change to make, from the operator's properties."""
        raise NotImplementedError

    def make_job(self, context):
        return fixes.fix_job(context.scene, self.request(context))

    def progress_state(self, context):
        return review.fix_settings(context.scene)

    def finished(self, context, outcome: fixes.FixOutcome) -> set[str]:
        for warning in outcome.warnings:
            self.report({"WARNING"}, warning)
        self.report({"WARNING"} if outcome.passed is False else {"INFO"}, outcome.message())
        return {"FINISHED"}


class REAL2GYM_OT_rim_scale(FixOperator, bpy.types.Operator):
    """Scale a container's rim (its radius), keeping its bottom and wall thickness; then verify again"""

    bl_idname = "real2gym.rim_scale"
    bl_label = "Scale Rim"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    factor: bpy.props.FloatProperty(name="Factor", default=1.1, soft_min=0.5, soft_max=2.0, precision=3)

    def request(self, context):
        fix = {"kind": "radius_scale", "object": self.object_name, "factor": _number(self.factor)}
        return fixes.fix_request(context.scene, fix)


class REAL2GYM_OT_scale_object(FixOperator, bpy.types.Operator):
    """Scale an object about its base (it stays on its support); then verify again"""

    bl_idname = "real2gym.scale_object"
    bl_label = "Scale"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    factors: bpy.props.FloatVectorProperty(name="Factors", size=3, default=(1.0, 1.0, 1.0), soft_min=0.1)

    def request(self, context):
        fix = {"kind": "scale", "object": self.object_name, "factors": _numbers(self.factors)}
        return fixes.fix_request(context.scene, fix)


class REAL2GYM_OT_offset_object(FixOperator, bpy.types.Operator):
    """Move an object (world offset) from a frame on, blended in, or over its whole motion; then verify again"""

    bl_idname = "real2gym.offset_object"
    bl_label = "Offset"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    delta: bpy.props.FloatVectorProperty(name="Offset", size=3, subtype="TRANSLATION", unit="LENGTH")
    frame: bpy.props.IntProperty(name="From Frame", description="-1: the current frame", default=-1, min=-1)
    blend: bpy.props.IntProperty(name="Blend", description="Frames to blend in over", default=5, min=0)
    whole_motion: bpy.props.BoolProperty(name="Whole Motion", description="Move every frame")

    def request(self, context):
        frame = None if self.whole_motion else (context.scene.frame_current if self.frame < 0 else self.frame)
        fix = {"kind": "offset", "object": self.object_name, "delta": _numbers(self.delta), "frame": frame}
        fix["blend"] = self.blend
        return fixes.fix_request(context.scene, fix)


class REAL2GYM_OT_set_collision(FixOperator, bpy.types.Operator):
    """Replace an object's collision (for a container, a probe checks its opening); then verify again"""

    bl_idname = "real2gym.set_collision"
    bl_label = "Set Collision"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    mode: bpy.props.EnumProperty(name="Collision", items=_COLLISION_ITEMS)
    threshold: bpy.props.FloatProperty(name="CoACD Threshold", default=0.05, precision=3)
    max_pieces: bpy.props.IntProperty(name="CoACD Max Pieces", default=16)
    time_limit: bpy.props.FloatProperty(name="CoACD Time Limit (s)", default=COACD_TIME_LIMIT_S)

    def request(self, context):
        fix = {"kind": "collision", "object": self.object_name, "mode": self.mode}
        fix.update(threshold=_number(self.threshold), max_pieces=self.max_pieces)  # as the CLI records them
        if self.mode == "coacd":
            fix["time_limit"] = _number(self.time_limit)
        return fixes.fix_request(context.scene, fix)


class REAL2GYM_OT_set_joint(FixOperator, bpy.types.Operator):
    """Change a moving part's joint (axis, pivot, range, damping, friction), or take it as the viewport shows it; then verify again"""

    bl_idname = "real2gym.set_joint"
    bl_label = "Set Joint"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    part: bpy.props.StringProperty(name="Part", description="The moving part; empty when the object has one")
    axis: bpy.props.FloatVectorProperty(
        name="Axis", description="The hinge's axis or the slide's direction, world frame", size=3
    )
    pivot: bpy.props.FloatVectorProperty(
        name="Pivot", description="A point on the hinge's axis, world frame", size=3, unit="LENGTH"
    )
    range_lo: bpy.props.FloatProperty(name="Range From", description="Radians (hinge) or metres (slide)")
    range_hi: bpy.props.FloatProperty(name="Range To", description="Radians (hinge) or metres (slide)")
    damping: bpy.props.FloatProperty(name="Damping", min=0.0, max=50.0)
    frictionloss: bpy.props.FloatProperty(name="Friction", min=0.0, max=50.0)
    from_viewport: bpy.props.BoolProperty(
        name="From Viewport",
        description="Take the axis and pivot from the joint's arrow (its Empty's Z and location) and the range from "
        "the part's limit constraint, as they are in the viewport now",
    )

    def request(self, context):
        # Only what the caller set changes; the rest stays the report's (or the viewport's).
        changes = {}
        for key in ("axis", "pivot", "range_lo", "range_hi", "damping", "frictionloss"):
            if self.properties.is_property_set(key):
                value = getattr(self, key)
                changes[key] = _numbers(value) if key in ("axis", "pivot") else _number(value)
        return fixes.joint_request(context.scene, self.object_name, self.part, changes, self.from_viewport)


class REAL2GYM_OT_add_keyframe(FixOperator, bpy.types.Operator):
    """Add an interaction keyframe of an object at the current frame (replaces its keyframe of that event)"""

    bl_idname = "real2gym.add_keyframe"
    bl_label = "Add Keyframe"

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)
    event: bpy.props.EnumProperty(name="Event", items=_EVENT_ITEMS)
    frame: bpy.props.IntProperty(name="Frame", description="-1: the current frame", default=-1, min=-1)

    def request(self, context):
        frame = context.scene.frame_current if self.frame < 0 else self.frame
        fix = {"kind": "keyframe", "object": self.object_name, "event": self.event, "frame": frame}
        return fixes.fix_request(context.scene, fix)


class REAL2GYM_OT_move_keyframe(FixOperator, bpy.types.Operator):
    """Move the selected keyframe to the current frame"""

    bl_idname = "real2gym.move_keyframe"
    bl_label = "Move Keyframe Here"

    index: bpy.props.IntProperty(name="Keyframe", description="-1: the selected one", default=-1, min=-1)
    frame: bpy.props.IntProperty(name="Frame", description="-1: the current frame", default=-1, min=-1)

    def request(self, context):
        frame = context.scene.frame_current if self.frame < 0 else self.frame
        return fixes.keyframe_request(context.scene, self.index, frame)


class REAL2GYM_OT_delete_keyframe(FixOperator, bpy.types.Operator):
    """Delete the selected keyframe"""

    bl_idname = "real2gym.delete_keyframe"
    bl_label = "Delete Keyframe"

    index: bpy.props.IntProperty(name="Keyframe", description="-1: the selected one", default=-1, min=-1)

    def request(self, context):
        return fixes.keyframe_request(context.scene, self.index, None)


class REAL2GYM_OT_apply_suggestion(FixOperator, bpy.types.Operator):
    """Apply this suggested fix and verify again"""

    bl_idname = "real2gym.apply_suggestion"
    bl_label = "Apply"

    index: bpy.props.IntProperty(name="Suggestion", description="Its place in the list, from 0", min=0)

    def request(self, context):
        return fixes.suggestion_request(context.scene, self.index)


class REAL2GYM_OT_repair(FixOperator, bpy.types.Operator):
    """Apply the suggested fixes in turn, verifying after each, until the scene verifies (each step is undoable)"""

    bl_idname = "real2gym.repair"
    bl_label = "Repair"

    rounds: bpy.props.IntProperty(
        name="Rounds", description="At most this many fixes", default=5, min=1, max=20
    )

    def request(self, context):
        return fixes.repair_request(context.scene, self.rounds)


class REAL2GYM_OT_undo_fix(FixOperator, bpy.types.Operator):
    """Revert the last fix of the run (report.json and the scene) and verify again"""

    bl_idname = "real2gym.undo_fix"
    bl_label = "Undo Fix"

    def request(self, context):
        return fixes.undo_request(context.scene)


class REAL2GYM_OT_load_review(bpy.types.Operator):
    """Show a finished run's keyframes, checks and suggestions from its report.json"""

    bl_idname = "real2gym.load_review"
    bl_label = "Load Report"
    bl_options = {"REGISTER", "UNDO"}

    out_dir: bpy.props.StringProperty(
        name="Output Folder",
        description="The run's output folder; the scene's when empty",
        subtype="DIR_PATH",
    )

    def execute(self, context):
        try:
            report = review.load_review(context.scene, self.out_dir)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Loaded {len(report.keyframes)} keyframes")
        return {"FINISHED"}


class REAL2GYM_OT_go_to_frame(bpy.types.Operator):
    """Go to this frame in the camera view (and select its keyframe)"""

    bl_idname = "real2gym.go_to_frame"
    bl_label = "Go to Frame"
    bl_options = {"REGISTER"}

    frame: bpy.props.IntProperty(name="Frame", min=0)

    def execute(self, context):
        review.go_to_frame(context.scene, self.frame)
        return {"FINISHED"}


class REAL2GYM_OT_opening_probe(bpy.types.Operator):
    """Drop a probe into the container and report whether it reaches the bottom (nothing is changed)"""

    bl_idname = "real2gym.opening_probe"
    bl_label = "Opening Probe"
    bl_options = {"REGISTER"}

    object_name: bpy.props.StringProperty(name="Object", description=_OBJECT)

    def execute(self, context):
        try:
            fixes.probe_in_scene(context.scene, self.object_name)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        result = review.fix_settings(context.scene).probe_result
        self.report({"INFO"}, result)
        return {"FINISHED"}


CLASSES = [
    REAL2GYM_OT_load_review,
    REAL2GYM_OT_go_to_frame,
    REAL2GYM_OT_rim_scale,
    REAL2GYM_OT_scale_object,
    REAL2GYM_OT_offset_object,
    REAL2GYM_OT_set_collision,
    REAL2GYM_OT_set_joint,
    REAL2GYM_OT_add_keyframe,
    REAL2GYM_OT_move_keyframe,
    REAL2GYM_OT_delete_keyframe,
    REAL2GYM_OT_apply_suggestion,
    REAL2GYM_OT_repair,
    REAL2GYM_OT_undo_fix,
    REAL2GYM_OT_opening_probe,
]
