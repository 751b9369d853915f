"""The add-on's state in Blender: one PointerProperty on Scene and one on Object.

``scene.real2gym`` holds the run settings, the segmentation settings, the
object prompts being edited and the last result; ``object.real2gym`` marks
objects the pipeline made and what they stand for. Saved with the .blend, so a
processed file reopens with its settings. ``scene.real2gym.fixes`` is the fixing
state (:mod:`.fix_properties`), ``scene.real2gym.variants`` the Variants
panel's (:mod:`.variants`). The update callbacks show what a toggle changes
through the functions the bridge lends (:mod:`.hooks`); this package never imports the bridge.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.geometry.shape_kinds import SHAPE_KINDS
from ..real2gym_addon.prompts import ROLES
from ..real2gym_addon.segmentation.backends import DEFAULT_BACKEND, SEGMENTATION_BACKENDS
from ..real2gym_addon.segmentation.overlay import PALETTE
from ..real2gym_addon.verify.margin import DEFAULT_RUNS
from .fix_properties import REAL2GYM_PG_fixes
from .hooks import scene_update
from .variants import REAL2GYM_PG_variants

_BACKEND_ITEMS = [(b.name, b.label, b.description) for b in SEGMENTATION_BACKENDS.values()]
_ROLE_ICONS = {
    "manipulated": "VIEW_PAN",
    "container": "MESH_CYLINDER",
    "support": "MESH_PLANE",
    "static": "LOCKED",
    "hand": "ARMATURE_DATA",  # the demonstrator's hand or arm (the manipulated role has the hand icon)
}
_ROLE_TIPS = {
    "manipulated": "The hand moves it",
    "container": "Things go into it",
    "support": "Things go onto it",
    "static": "Scenery that stays put",
    "hand": "The demonstrator's hand or gripper: segmented as evidence of grasp and release, not simulated",
}
_ROLE_ITEMS = [(r, r.title(), _ROLE_TIPS[r], _ROLE_ICONS[r], i) for i, r in enumerate(ROLES)]
DEFAULT_SAM2_CONFIG = "sam2.1_hiera_t"
ERROR_PROPERTY = "real2gym_error_m"
"""The custom property of a simulated copy: its distance from the video-derived position on each frame."""


def _show_mask_changed(prompt, context) -> None:
    scene_update("overlay_visible", prompt.id_data, prompt.name, prompt.show_mask)


def _show_collision_changed(state, context) -> None:
    scene_update("collision_visible", state.id_data, state.show_collision)


class REAL2GYM_PG_marker(bpy.types.PropertyGroup):
    """A timeline marker Real2Gym made (``name`` is the marker's), so a re-run replaces only its own."""

    frame: bpy.props.IntProperty(name="Frame", description="The marker's frame when Real2Gym made it")


class REAL2GYM_PG_prompt_point(bpy.types.PropertyGroup):
    """A point prompt: a pixel on the object (label 1) or off it (label 0)."""

    x: bpy.props.FloatProperty(name="X", description="Video pixels from the left edge", min=0.0)
    y: bpy.props.FloatProperty(name="Y", description="Video pixels from the top edge", min=0.0)
    label: bpy.props.IntProperty(
        name="Label", description="1: on the object, 0: not on it", min=0, max=1, default=1
    )


class _FramePrompt:
    """A box and points drawn on one video frame: the properties an object's prompt and its
    corrections share.

    A mix-in, not a PropertyGroup: Blender registers the ``bpy.props`` annotations of base
    classes that are not Blender types along with the class's own.
    """

    frame: bpy.props.IntProperty(name="Frame", description="The video frame the box is drawn on", min=0)
    box: bpy.props.FloatVectorProperty(
        name="Box",
        description="x0, y0, x1, y1 in video pixels (x right, y down from the top-left corner)",
        size=4,
        min=0.0,
    )
    points: bpy.props.CollectionProperty(type=REAL2GYM_PG_prompt_point, name="Points")


class REAL2GYM_PG_prompt_correction(_FramePrompt, bpy.types.PropertyGroup):
    """A correction: a further box (and points) for the object on a later frame; its mask is
    re-seeded from there on (prompts.json's ``prompts`` list)."""


class REAL2GYM_PG_object_prompt(_FramePrompt, bpy.types.PropertyGroup):
    """One object of prompts.json: what to segment, and how to show its masks.

    ``name`` (the PropertyGroup's own) is the object's name in prompts.json.
    """

    source_name: bpy.props.StringProperty(
        name="Name in File", description="The name this object had in prompts.json when loaded"
    )
    corrections: bpy.props.CollectionProperty(
        type=REAL2GYM_PG_prompt_correction,
        name="Corrections",
        description="Boxes on later frames that correct the object's mask from their frame on",
    )
    shape: bpy.props.EnumProperty(
        name="Shape",
        items=[(k.name, k.name.title(), k.description) for k in SHAPE_KINDS.values()],
        default="auto",
    )
    role: bpy.props.EnumProperty(name="Role", items=_ROLE_ITEMS, default="manipulated")
    show_mask: bpy.props.BoolProperty(
        name="Show Mask",
        description="Show this object's masks over the video in the camera view",
        default=True,
        update=_show_mask_changed,
    )
    color: bpy.props.FloatVectorProperty(
        name="Color",
        description="Colour of the mask overlay (applied when segmenting)",
        subtype="COLOR_GAMMA",
        size=3,
        min=0.0,
        max=1.0,
        default=PALETTE[0],
    )


class REAL2GYM_PG_mask_review(bpy.types.PropertyGroup):
    """Frames where an object's mask is doubtful (``segmentation/quality.py``): a person should look."""

    object_name: bpy.props.StringProperty(name="Object", description="The object whose mask is doubtful")
    first: bpy.props.IntProperty(name="First Frame", description="The first doubtful frame of the run")
    last: bpy.props.IntProperty(name="Last Frame", description="The last doubtful frame of the run")
    reason: bpy.props.StringProperty(
        name="Reason", description="leak, merge, lost, partial, appearance, drift, specks or low_contrast"
    )


class REAL2GYM_PG_scene(bpy.types.PropertyGroup):
    """Run settings and the last result, stored on the scene."""

    demo_dir: bpy.props.StringProperty(
        name="Demo Folder",
        description="Folder with video.mp4 (or frames/), camera.json and prompts.json",
        subtype="DIR_PATH",
    )
    out_dir: bpy.props.StringProperty(
        name="Output Folder",
        description="Where report.json, scene.blend and the other results are written",
        subtype="DIR_PATH",
    )
    report_path: bpy.props.StringProperty(name="Report", description="The last run's report.json")
    status: bpy.props.StringProperty(name="Status", description="What the last run did")
    running: bpy.props.BoolProperty(name="Running", description="A run is in progress")
    progress: bpy.props.FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR")
    progress_text: bpy.props.StringProperty(name="Progress Text")
    video_frames: bpy.props.IntProperty(name="Frames", description="Frames in the loaded video")
    video_fps: bpy.props.FloatProperty(name="FPS", description="Frame rate of the loaded video")

    depth_model: bpy.props.StringProperty(
        name="Depth Model",
        description="For a demo without depth/: a monocular metric depth model's folder (Hugging Face format) "
        "that estimates each frame's depth (real2gym run --depth-model)",
        subtype="DIR_PATH",
    )
    replace_fixed_run: bpy.props.BoolProperty(
        name="Replace a Fixed Run",
        description="Run into an output folder whose report logs fixes, replacing them (real2gym run --force); "
        "off, such a run is refused so that an artist's fixes are not lost",
        default=False,
    )
    margin_runs: bpy.props.IntProperty(
        name="Margin Runs",
        description="After verifying, simulate this many perturbed copies of the scene (start poses, sizes, "
        "friction, mass, the hand's timing and opening) and show how many pass (real2gym run --margin); 0: none",
        default=DEFAULT_RUNS,
        min=0,
        max=64,
    )
    segmentation_backend: bpy.props.EnumProperty(
        name="Backend",
        description="How objects are segmented through the video",
        items=_BACKEND_ITEMS,
        default=DEFAULT_BACKEND,
    )
    sam2_checkpoint: bpy.props.StringProperty(
        name="SAM2 Checkpoint",
        description="SAM2 checkpoint (.pt) or a downloaded model's name (sam2.1-tiny); the preferences' when empty",
        subtype="FILE_PATH",
    )
    sam2_config: bpy.props.StringProperty(
        name="SAM2 Config", description="SAM2 config name", default=DEFAULT_SAM2_CONFIG
    )
    segmentation_device: bpy.props.EnumProperty(
        name="Device",
        description="Where SAM2 runs",
        items=[
            ("auto", "Auto", "CUDA when available, else the CPU"),
            ("cpu", "CPU", "The CPU"),
            ("cuda", "CUDA", "An NVIDIA GPU"),
        ],
        default="auto",
    )
    object_prompts: bpy.props.CollectionProperty(type=REAL2GYM_PG_object_prompt, name="Object Prompts")
    active_prompt_index: bpy.props.IntProperty(name="Active Prompt", min=0)
    segmentation_status: bpy.props.StringProperty(
        name="Segmentation Status", description="What the last segmentation did"
    )
    mask_reviews: bpy.props.CollectionProperty(type=REAL2GYM_PG_mask_review, name="Frames to Check")
    active_mask_review_index: bpy.props.IntProperty(name="Active Frames to Check", min=0)
    prompts_dir: bpy.props.StringProperty(
        name="Prompts Folder", description="The demo folder the object prompts were loaded from"
    )
    keyframe_markers: bpy.props.CollectionProperty(
        type=REAL2GYM_PG_marker,
        name="Keyframe Markers",
        description="The timeline markers of the interaction keyframes that Real2Gym added",
    )
    show_collision: bpy.props.BoolProperty(
        name="Show Collision",
        description="Show the objects' collision pieces (the Real2Gym Collision collection) in the viewport",
        default=False,
        update=_show_collision_changed,
    )
    verification_status: bpy.props.StringProperty(
        name="Verification Status", description="What the last verification, import or comparison did"
    )
    fixes: bpy.props.PointerProperty(type=REAL2GYM_PG_fixes)
    variants: bpy.props.PointerProperty(type=REAL2GYM_PG_variants)


class REAL2GYM_PG_object(bpy.types.PropertyGroup):
    """What an object made by Real2Gym stands for."""

    kind: bpy.props.EnumProperty(
        name="Kind",
        items=[
            ("NONE", "None", "Not made by Real2Gym"),
            ("CAMERA", "Camera", "The video camera"),
            ("OBJECT", "Object", "A reconstructed object"),
            ("TABLE", "Table", "The support surface"),
            ("COLLISION", "Collision", "A collision piece of an object"),
            (
                "PART",
                "Part",
                "A part of an object's mesh (a mug's handle), or a moving part on its joint (a door)",
            ),
            ("JOINT", "Joint", "A moving part's joint: its Z is the hinge's axis or the slide's direction"),
            ("JOINT_RANGE", "Joint Range", "The range a moving part's joint may move through, drawn"),
            ("SIMULATION", "Simulation", "A copy that plays the MuJoCo simulation (or its gripper)"),
        ],
        default="NONE",
    )
    source_name: bpy.props.StringProperty(
        name="Name in Report", description="The object's name in prompts.json and report.json"
    )
    part: bpy.props.StringProperty(
        name="Part",
        description="The moving part (its name in report.json) a joint, its part or its range is of",
    )
    role: bpy.props.EnumProperty(
        name="Role",
        # A variant's extra objects are distractors (real2gym_addon.variants), not prompts' roles.
        items=[(r, r.title(), f"The object is {r}") for r in (*ROLES, "distractor")],
        default="static",
    )
    shape: bpy.props.EnumProperty(
        name="Shape",
        items=[(k.name, k.name.title(), f"Fitted as {k.name}") for k in SHAPE_KINDS.values()],
        default="auto",
    )
    mass: bpy.props.FloatProperty(
        name="Mass",
        description="The object's mass in the simulation (kg); 0: from the density and its collision volume",
        min=0.0,
        soft_max=20.0,
        default=0.0,
        precision=3,
        unit="MASS",
    )
    density: bpy.props.FloatProperty(
        name="Density",
        description="kg/m3, used when the mass is 0 (600: wood and most plastics)",
        min=1.0,
        soft_max=20000.0,
        default=600.0,
    )
    friction: bpy.props.FloatProperty(
        name="Friction",
        description="Sliding friction coefficient of the object's collision pieces",
        min=0.0,
        soft_max=3.0,
        default=1.0,
    )
    fingerprint: bpy.props.StringProperty(
        name="Fingerprint",
        description="Hash of the mesh, transform and keyframes as Real2Gym built them; "
        "a re-run keeps the object when it no longer matches (it was edited)",
        options={"HIDDEN"},
    )


def has_box(prompt) -> bool:
    """Whether an object prompt (or a correction) has a box drawn (a new prompt has none)."""
    return prompt.box[2] > prompt.box[0] and prompt.box[3] > prompt.box[1]


def prompt_on_frame(prompt, frame: int):
    """The object's prompt drawn on ``frame``: itself (its main prompt), one of its corrections, or None."""
    if prompt.frame == frame:
        return prompt
    return next((c for c in prompt.corrections if c.frame == frame), None)


CLASSES = [
    REAL2GYM_PG_prompt_point,
    REAL2GYM_PG_prompt_correction,
    REAL2GYM_PG_object_prompt,
    REAL2GYM_PG_marker,
    REAL2GYM_PG_mask_review,
    REAL2GYM_PG_scene,
    REAL2GYM_PG_object,
]


def attach() -> None:
    """Adds ``scene.real2gym`` and ``object.real2gym``; call after registering CLASSES."""
    bpy.types.Scene.real2gym = bpy.props.PointerProperty(type=REAL2GYM_PG_scene)
    bpy.types.Object.real2gym = bpy.props.PointerProperty(type=REAL2GYM_PG_object)


def detach() -> None:
    """Removes what :func:`attach` added."""
    del bpy.types.Object.real2gym
    del bpy.types.Scene.real2gym
