"""The fixing state in Blender: ``scene.real2gym.fixes``.

What the Keyframes, Suggestions and Fixes panels show, copied from the run's
report.json by ``bridge.review.show_report`` (the keyframes with their checks'
verdicts, the checks, the suggestions, each object's edit log, the silhouette
IoUs around the selected keyframe), and the fix settings the user edits. The
report stays the truth: these are refreshed from it after every fix.

The add-on's scene settings declare ``fixes`` (``scene.real2gym.fixes``);
:mod:`state` registers these classes first.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.fixes.collision import COACD_TIME_LIMIT_S, COLLISION_MODES
from .hooks import scene_update

_COLLISION_LABELS = {
    "primitives": ("Primitives", "The shape's own boxes and cylinders (a cup: bottom disc and wall boxes)"),
    "walls": ("Walls", "Cavity-preserving wall pieces; containers only"),
    "hull": ("Convex Hull", "One convex hull of the visual mesh (closes a container's opening)"),
    "coacd": ("CoACD", "Approximate convex decomposition of the visual mesh (runs in the background)"),
}
_COLLISION_ITEMS = [(m, *_COLLISION_LABELS[m]) for m in COLLISION_MODES]
EVENTS = ("grasp", "lift", "release", "contact")
_EVENT_ITEMS = [(e, e.title(), f"A {e} keyframe") for e in EVENTS]


def _keyframe_selected(state, context) -> None:
    scene_update("keyframe_selected", state.id_data, state.active_keyframe_index)


class REAL2GYM_PG_keyframe(bpy.types.PropertyGroup):
    """An interaction keyframe of the run, with the verdict of the checks that concern it."""

    event: bpy.props.StringProperty(name="Event", description="grasp, lift, release or contact")
    object_name: bpy.props.StringProperty(name="Object", description="The object the event is about")
    frame: bpy.props.IntProperty(name="Frame", description="Video frame (= scene frame)")
    checks: bpy.props.StringProperty(name="Checks", description="The checks that concern this keyframe")
    failed: bpy.props.StringProperty(name="Failed", description="Those of them that failed")
    verdict: bpy.props.EnumProperty(
        name="Verdict",
        items=[
            ("PASSED", "Passed", "Every check of this keyframe passed"),
            ("FAILED", "Failed", "A check of this keyframe failed"),
            ("UNKNOWN", "Not Verified", "The run is not verified, or no check concerns this keyframe"),
        ],
        default="UNKNOWN",
    )


class REAL2GYM_PG_check(bpy.types.PropertyGroup):
    """One check of the verification (``name``: the check's name)."""

    passed: bpy.props.BoolProperty(name="Passed")
    figures: bpy.props.StringProperty(name="Figures", description="The check's measured figures")


class REAL2GYM_PG_suggestion(bpy.types.PropertyGroup):
    """A fix suggested from a failed check (``name``: its text)."""

    check: bpy.props.StringProperty(name="Check", description="The failed check it addresses")
    frame: bpy.props.IntProperty(name="Frame", description="Where to look")
    kind: bpy.props.StringProperty(name="Fix", description="The kind of fix it applies")


class REAL2GYM_PG_edit(bpy.types.PropertyGroup):
    """One logged fix of an object (``name``: its kind)."""

    arguments: bpy.props.StringProperty(name="Arguments")
    time: bpy.props.StringProperty(name="Time", description="When it was applied (UTC)")


class REAL2GYM_PG_part(bpy.types.PropertyGroup):
    """A moving part of an object (``name``: the part's) and its joint as report.json has it.

    The joint's fields start as the report's and are what *Set Joint* applies when edited.
    """

    joint_type: bpy.props.StringProperty(name="Joint", description="hinge or slide")
    source: bpy.props.StringProperty(
        name="Source", description="estimated (from the video), given (prompts.json) or edited (a fix)"
    )
    closed: bpy.props.FloatProperty(
        name="Closed", description="The joint's value where the part is closed (radians or metres)"
    )
    axis: bpy.props.FloatVectorProperty(
        name="Axis",
        description="The hinge's axis, or the slide's direction (world frame)",
        size=3,
        subtype="XYZ",
        precision=4,
    )
    pivot: bpy.props.FloatVectorProperty(
        name="Pivot",
        description="A point on the hinge's axis (world frame); a slide's part centre at 0",
        size=3,
        subtype="TRANSLATION",
        unit="LENGTH",
    )
    angle_range: bpy.props.FloatVectorProperty(
        name="Range",
        description="The hinge's range, from its lower to its upper end",
        size=2,
        unit="ROTATION",
    )
    length_range: bpy.props.FloatVectorProperty(
        name="Range", description="The slide's travel, from its lower to its upper end", size=2, unit="LENGTH"
    )
    damping: bpy.props.FloatProperty(
        name="Damping", description="N*m*s/rad (hinge) or N*s/m (slide)", min=0.0, max=50.0, precision=3
    )
    frictionloss: bpy.props.FloatProperty(
        name="Friction", description="Dry friction: N*m (hinge) or N (slide)", min=0.0, max=50.0, precision=3
    )


class REAL2GYM_PG_fix_object(bpy.types.PropertyGroup):
    """An object of the run (``name``: its name in report.json), its moving parts and its edit log."""

    role: bpy.props.StringProperty(name="Role")
    shape: bpy.props.StringProperty(name="Shape")
    collision_mode: bpy.props.StringProperty(name="Collision")
    is_container: bpy.props.BoolProperty(name="Container")
    parts: bpy.props.CollectionProperty(type=REAL2GYM_PG_part, name="Moving Parts")
    edits: bpy.props.CollectionProperty(type=REAL2GYM_PG_edit, name="Edits")


class REAL2GYM_PG_frame_iou(bpy.types.PropertyGroup):
    """The silhouette IoU on one frame around the selected keyframe."""

    frame: bpy.props.IntProperty(name="Frame")
    iou: bpy.props.FloatProperty(name="IoU", min=0.0, max=1.0)
    measured: bpy.props.BoolProperty(name="Measured", description="False: no mask there (hidden)")


class REAL2GYM_PG_fixes(bpy.types.PropertyGroup):
    """The run under review and the fix settings (``scene.real2gym.fixes``)."""

    report_dir: bpy.props.StringProperty(
        name="Reviewed Run", description="The output folder whose report.json is shown", subtype="DIR_PATH"
    )
    report_stamp: bpy.props.StringProperty(
        name="Report Time", description="report.json's modification time (ns) when shown"
    )
    edit_count: bpy.props.IntProperty(
        name="Edits", description="Fixes in report.json's edit log when shown (keeps undo in step)"
    )
    verification: bpy.props.EnumProperty(
        name="Verification",
        items=[
            ("NONE", "Not Verified", "The run has no verification"),
            ("PASSED", "Verified", "Every check passed"),
            ("FAILED", "Failed", "A check failed"),
            ("STALE", "Changed", "Fixed since the last verification: verify again"),
        ],
        default="NONE",
    )
    checks: bpy.props.CollectionProperty(type=REAL2GYM_PG_check, name="Checks")
    keyframes: bpy.props.CollectionProperty(type=REAL2GYM_PG_keyframe, name="Keyframes")
    active_keyframe_index: bpy.props.IntProperty(
        name="Active Keyframe",
        description="Selecting a keyframe jumps to its frame in the camera view",
        min=0,
        update=_keyframe_selected,
    )
    ious: bpy.props.CollectionProperty(type=REAL2GYM_PG_frame_iou, name="Silhouette IoU")
    iou_object: bpy.props.StringProperty(name="IoU Object", description="The object the IoUs are of")
    suggestions: bpy.props.CollectionProperty(type=REAL2GYM_PG_suggestion, name="Suggestions")
    objects: bpy.props.CollectionProperty(type=REAL2GYM_PG_fix_object, name="Objects")

    fix_object: bpy.props.StringProperty(name="Object", description="The object to fix")
    verify_after_fix: bpy.props.BoolProperty(
        name="Verify after Fix",
        description="Simulate the demo again after each fix (untick to make several fixes first)",
        default=True,
    )
    rim_scale: bpy.props.FloatProperty(
        name="Rim Scale",
        description="Factor on a container's radius; its bottom and wall thickness stay",
        default=1.1,
        min=0.01,
        soft_min=0.5,
        soft_max=2.0,
        step=1,
        precision=3,
    )
    scale_factors: bpy.props.FloatVectorProperty(
        name="Scale", description="Factors along x, y, z about the object's base", size=3, default=(1, 1, 1)
    )
    offset: bpy.props.FloatVectorProperty(
        name="Offset", description="World offset", size=3, subtype="TRANSLATION", unit="LENGTH"
    )
    offset_whole_motion: bpy.props.BoolProperty(
        name="Whole Motion", description="Move every frame, not only from the current frame on"
    )
    offset_blend: bpy.props.IntProperty(
        name="Blend", description="Frames over which the offset blends in", default=5, min=0, soft_max=30
    )
    collision_mode: bpy.props.EnumProperty(name="Collision", items=_COLLISION_ITEMS, default="walls")
    coacd_threshold: bpy.props.FloatProperty(
        name="Threshold",
        description="CoACD concavity threshold (smaller: more, tighter pieces)",
        default=0.05,
        min=0.01,
        max=1.0,
        precision=3,
    )
    coacd_max_pieces: bpy.props.IntProperty(
        name="Max Pieces", description="The most convex pieces CoACD keeps", default=16, min=1, max=256
    )
    coacd_time_limit: bpy.props.FloatProperty(
        name="Time Limit",
        description="Seconds CoACD may take before the previous collision is kept",
        default=COACD_TIME_LIMIT_S,
        min=0.01,
        subtype="TIME_ABSOLUTE",
        unit="TIME_ABSOLUTE",
    )
    keyframe_event: bpy.props.EnumProperty(name="Event", items=_EVENT_ITEMS, default="grasp")
    status: bpy.props.StringProperty(name="Status", description="What the last fix did")
    probe_result: bpy.props.StringProperty(name="Opening Probe", description="The last opening probe")
    running: bpy.props.BoolProperty(name="Fixing", description="A fix is in progress")
    progress: bpy.props.FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR")
    progress_text: bpy.props.StringProperty(name="Progress Text")


CLASSES = [
    REAL2GYM_PG_keyframe,
    REAL2GYM_PG_check,
    REAL2GYM_PG_suggestion,
    REAL2GYM_PG_edit,
    REAL2GYM_PG_part,
    REAL2GYM_PG_fix_object,
    REAL2GYM_PG_frame_iou,
    REAL2GYM_PG_fixes,
]
