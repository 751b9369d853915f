"""A moving part's joint in the real Blender GUI under Xvfb; run by test_joint_gui.py.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python joint_session.py -- ZIP OUT_DIR RESULT_JSON SHOT_DIR

OUT_DIR holds a finished run of the microwave demo (tests/articulated_demos.py). The session
installs the extension, presses *Open Run* on it, goes to a frame where the door stands open in
the camera view, selects the door (the Fixes panel then shows its joint), scrolls the sidebar to
the joint's box and takes a screenshot. Then it tilts the joint's arrow 30 degrees and presses
*From Viewport* (invoke: worker thread, modal timer), waits, and undoes with Blender's Ctrl+Z,
recording report.json and the scene at each step into RESULT_JSON.
"""

import json
import math
import os
import sys
from pathlib import Path

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpy_extras.view3d_utils import location_3d_to_region_2d  # noqa: E402
from mathutils import Vector  # noqa: E402
from session_kit import (  # noqa: E402
    MODULE,
    Again,
    Session,
    Step,
    fit_video_left_of_sidebar,
    fix_job,
    install,
    open_real2gym_tab,
    wait_for_job,
)
from session_view import press, scroll_sidebar  # noqa: E402

ZIP, OUT, RESULT, SHOTS = sys.argv[sys.argv.index("--") + 1 :][:4]
OBJECT, PART = "microwave", "door"
SHOT_FRAME = 8  # the door stands open, before the gripper reaches the cup
WHEEL_STEPS = 60  # down to the Fixes panel's joint box
TILT = math.radians(30)


def _report() -> dict:
    return json.loads(Path(OUT, "report.json").read_text())


def _joint_entry(report: dict) -> dict:
    body = next(o for o in report["objects"] if o["name"] == OBJECT)
    return next(p for p in body["parts"] if p["name"] == PART)["joint"]


def _arrow_axis() -> list[float]:
    bpy.context.view_layer.update()
    return [round(v, 6) for v in bpy.data.objects[f"{OBJECT}.{PART}"].parent.matrix_world.col[2][:3]]


def _record(result: dict, name: str) -> None:
    report = _report()
    fixes = bpy.context.scene.real2gym.fixes
    result[name] = {
        "joint": _joint_entry(report),
        "edit_log": [[e["kind"], e["object"], e["args"]] for e in report.get("edit_log", [])],
        "checks": {k: v["passed"] for k, v in report["verification"]["checks"].items()},
        "verified": report["verification"]["passed"],
        "scene_edit_count": fixes.edit_count,
        "scene_verification": fixes.verification,
        "arrow_axis": _arrow_axis(),
        "status": fixes.status,
        "active": getattr(bpy.context.view_layer.objects.active, "name", None),
    }


def _record_joint_box(result: dict) -> None:
    """Wraps the Fixes panel's joint box to record what it drew."""
    panel = bpy.types.REAL2GYM_PT_fixes
    original = panel._draw_joints

    def draw(self, layout, context, target):
        original(self, layout, context, target)
        if len(result["joint_box"]) < 20:
            result["joint_box"].append(
                {
                    "object": target.name,
                    "parts": [
                        [p.name, p.joint_type, p.source, list(p.axis), list(p.angle_range)]
                        for p in target.parts
                    ],
                }
            )

    panel._draw_joints = draw


def open_run(session: Session) -> None:
    result = session.result
    _record_joint_box(result)
    with session.override():
        result["open"] = sorted(bpy.ops.real2gym.open_run("INVOKE_DEFAULT", out_dir=OUT))
        bpy.ops.ed.undo_push(message="Open Run")  # a click pushes one; Ctrl+Z comes back here


def select_door(session: Session) -> None:
    """The door open in the camera view, selected; the masks hidden (they would cover it)."""
    scene = session.scene
    for prompt in scene.real2gym.object_prompts:
        prompt.show_mask = False
    scene.frame_set(SHOT_FRAME)
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    door.select_set(True)
    bpy.context.view_layer.objects.active = door
    session.show_camera_view()
    session.result["door"] = {
        "parent": door.parent.name,
        "parent_type": door.parent.type,
        "grandparent": door.parent.parent.name,
        "rotation_z": door.rotation_euler.z,
    }


def scroll_to_joint(session: Session) -> None:
    scroll_sidebar(session.window, session.sidebar, WHEEL_STEPS)


def shoot(session: Session) -> None:
    scene, window, main, result = session.scene, session.window, session.main, session.result
    result["frame"] = scene.frame_current
    result["active"] = bpy.context.view_layer.objects.active.name
    session.record_layout()
    # Where the door's middle and its arrow's two ends appear on the screenshot (x right, y down).
    arrow = bpy.data.objects[f"{OBJECT}.{PART} joint"]
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    middle = sum((v.co for v in door.data.vertices), Vector()) / len(door.data.vertices)
    points = {
        "door": door.matrix_world @ middle,
        "arrow": arrow.matrix_world.translation,
        "arrow tip": arrow.matrix_world @ Vector((0.0, 0.0, arrow.empty_display_size)),
    }
    positions = {}
    for name, point in points.items():
        position = location_3d_to_region_2d(main, main.data, point)
        positions[name] = (
            None if position is None else [main.x + position.x, window.height - (main.y + position.y)]
        )
    result["on_screen"] = positions
    _record(result, "before")
    result["shot"] = session.shoot("joint_panel")


def from_viewport(session: Session) -> None:
    """Tilts the arrow 30 degrees about its own X and applies the joint as the viewport shows it."""
    arrow = bpy.data.objects[f"{OBJECT}.{PART}"].parent
    arrow.rotation_euler.x += TILT
    session.result["tilted_axis"] = _arrow_axis()
    with session.override():
        session.result["apply_invoke"] = sorted(
            bpy.ops.real2gym.set_joint("INVOKE_DEFAULT", object_name=OBJECT, part=PART, from_viewport=True)
        )


def blender_undo(session: Session) -> None:
    _record(session.result, "applied")
    session.result["applied_shot"] = session.shoot("joint_applied")
    main = session.main
    x, y = main.x + main.width // 2, main.y + main.height // 2
    session.window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    press(session.window, "Z", x, y, ctrl=True)


def wait_for_undo(session: Session) -> Again | None:
    """Done when report.json has no fix left (Blender's undo handler rewrote it and verified again)."""
    return Again(0.2) if _report().get("edit_log") else None


def after_undo(session: Session) -> None:
    _record(session.result, "undone")


STEPS = [
    install(ZIP),
    Step("open", open_run, after=0.5),
    Step("select", select_door, after=0.3),
    *fit_video_left_of_sidebar(),
    open_real2gym_tab(after=0.5),
    Step("scroll", scroll_to_joint, after=1.5),
    Step("shoot", shoot, after=0.2),
    Step("from_viewport", from_viewport, after=0.1),
    wait_for_job("wait_apply", after=1.0, job=fix_job),
    Step("blender_undo", blender_undo, after=0.5),
    Step("wait_undo", wait_for_undo, after=0.5, timeout=60),
    Step("after_undo", after_undo),
]
# test_joint_gui.py gives Blender 400 s.
Session(STEPS, RESULT, shots_dir=SHOTS, result={"joint_box": [], "module": MODULE}, timeout=370).start()
