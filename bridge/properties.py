"""The add-on's state in Blender: one PointerProperty on Scene and one on Object.

``scene.real2gym`` holds the run settings and the last result;
``object.real2gym`` marks objects the pipeline made and what they stand for.
Saved with the .blend, so a processed file reopens with its settings.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.prompts import ROLES, SHAPES


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
        ],
        default="NONE",
    )
    source_name: bpy.props.StringProperty(
        name="Name in Report", description="The object's name in prompts.json and report.json"
    )
    role: bpy.props.EnumProperty(
        name="Role", items=[(r, r.title(), f"The object is {r}") for r in ROLES], default="static"
    )
    shape: bpy.props.EnumProperty(
        name="Shape", items=[(s, s.title(), f"Fitted as {s}") for s in SHAPES], default="auto"
    )


CLASSES = [REAL2GYM_PG_scene, REAL2GYM_PG_object]


def attach() -> None:
    """Adds ``scene.real2gym`` and ``object.real2gym``; call after registering CLASSES."""
    bpy.types.Scene.real2gym = bpy.props.PointerProperty(type=REAL2GYM_PG_scene)
    bpy.types.Object.real2gym = bpy.props.PointerProperty(type=REAL2GYM_PG_object)


def detach() -> None:
    """Removes what :func:`attach` added."""
    del bpy.types.Object.real2gym
    del bpy.types.Scene.real2gym


def ensure_registered() -> None:
    """Registers the state classes when the extension is not enabled (bpy module, CLI)."""
    if hasattr(bpy.types.Scene, "real2gym"):
        return
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    attach()
