"""Drives a corrective prompt in the real Blender GUI under Xvfb; run by test_correction_gui.py.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python correction_session.py -- ZIP DEMO_DIR OUT_DIR RESULT_JSON SHOT_DIR FRAME BOX_JSON

The demo's block prompt is drawn on the cup's edge, so its mask follows the cup.
The session segments it from a click, keeps a copy of the block's masks, goes to
FRAME, draws BOX (video pixels, around the block there) and a point on it with
simulated mouse events (``real2gym.draw_prompt_box``: on a frame other than the
prompt's it adds a correction), opens the Real2Gym tab, takes a screenshot of the
panel listing the correction, segments again and takes one with the new masks.
Writes what it saw to RESULT_JSON and quits.
"""

import json
import os
import shutil
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpy_extras.view3d_utils import location_3d_to_region_2d
from mathutils import Vector
from session_kit import (  # noqa: E402
    finish,
    guarded,
    install_extension,
    open_real2gym_tab,
    screenshot,
    shift_video_left,
    view3d,
    zoom_video_to,
)

ZIP, DEMO, OUT, RESULT, SHOTS, FRAME, BOX = sys.argv[sys.argv.index("--") + 1 :][:7]
FRAME = int(FRAME)
BOX = json.loads(BOX)
SHOT_FRAME = 80  # the block is carried
result = {"steps": [], "errors": []}
state = {"phase": "install", "tab_y": None, "waits": 0}


def _region_position(pixel, main) -> tuple[float, float]:
    """Where a video pixel appears in the 3D view region, by projecting a 3D point on its ray."""
    camera = json.load(open(f"{DEMO}/camera.json"))
    depth = 0.7
    x = (pixel[0] - camera["cx"]) / camera["fx"] * depth
    y = (pixel[1] - camera["cy"]) / camera["fy"] * depth
    world = bpy.context.scene.camera.matrix_world @ Vector((x, -y, -depth))
    position = location_3d_to_region_2d(main, main.data, world)
    return position.x, position.y


def _wait_for_run(next_phase: str):
    settings = bpy.context.scene.real2gym
    if settings.running and state["waits"] < 600:
        state["waits"] += 1
        return 0.1
    state["waits"] = 0
    state["phase"] = next_phase
    return 0.2


def _prompts(scene) -> list:
    return [
        {
            "name": p.name,
            "frame": p.frame,
            "box": list(p.box),
            "corrections": [
                {"frame": c.frame, "box": list(c.box), "points": [[q.x, q.y, q.label] for q in c.points]}
                for c in p.corrections
            ],
        }
        for p in scene.real2gym.object_prompts
    ]


def _step():
    window, area, sidebar, main = view3d()
    phase = state["phase"]
    result["steps"].append(phase)
    scene = bpy.context.scene
    space = area.spaces[0]
    if phase == "install":
        install_extension(ZIP)
        state["phase"] = "segment"
        return 0.5
    if phase == "segment":
        settings = scene.real2gym
        settings.demo_dir, settings.out_dir = DEMO, OUT
        settings.segmentation_backend = "classical"
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["load"] = sorted(bpy.ops.real2gym.load_prompts())
            result["first_invoke"] = sorted(bpy.ops.real2gym.segment("INVOKE_DEFAULT"))
        state["phase"] = "wait_first"
        return 0.2
    if phase == "wait_first":
        return _wait_for_run("camera")
    if phase == "camera":
        result["first_status"] = scene.real2gym.segmentation_status
        shutil.copytree(f"{OUT}/masks/block", f"{OUT}_first_block_masks")
        scene.frame_set(FRAME)
        space.show_region_ui = True
        space.region_3d.view_perspective = "CAMERA"
        with bpy.context.temp_override(window=window, area=area, region=main):
            bpy.ops.view3d.view_center_camera()
        scene.real2gym.active_prompt_index = 0
        state["phase"] = "draw"
        return 0.5
    if phase == "draw":
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["draw_invoke"] = sorted(bpy.ops.real2gym.draw_prompt_box("INVOKE_DEFAULT"))
        x0, y0, x1, y1 = BOX
        start = [round(v) for v in _region_position((x0, y0), main)]
        end = [round(v) for v in _region_position((x1, y1), main)]
        point = [round(v) for v in _region_position(((x0 + x1) / 2, (y0 + y1) / 2), main)]
        ox, oy = main.x, main.y
        middle = [(start[0] + end[0]) // 2, (start[1] + end[1]) // 2]
        events = [
            ("MOUSEMOVE", "NOTHING", start, {}),
            ("LEFTMOUSE", "PRESS", start, {}),
            ("MOUSEMOVE", "NOTHING", middle, {}),
            ("MOUSEMOVE", "NOTHING", end, {}),
            ("LEFTMOUSE", "RELEASE", end, {}),
            ("MOUSEMOVE", "NOTHING", point, {}),
            ("LEFTMOUSE", "PRESS", point, {"shift": True}),
            ("LEFTMOUSE", "RELEASE", point, {"shift": True}),
        ]
        for kind, value, (x, y), keys in events:
            window.event_simulate(type=kind, value=value, x=ox + x, y=oy + y, **keys)
        state["phase"] = "drawn"
        return 0.5
    if phase == "drawn":
        result["drawing_shot"] = screenshot(f"{SHOTS}/correction_drawing.png")
        window.event_simulate(type="RET", value="PRESS", x=main.x + 10, y=main.y + 10)
        window.event_simulate(type="RET", value="RELEASE", x=main.x + 10, y=main.y + 10)
        state["phase"] = "check_draw"
        return 0.5
    if phase == "check_draw":
        result["prompts_drawn"] = _prompts(scene)
        with bpy.context.temp_override(window=window, area=area, region=main):
            bpy.ops.view3d.view_center_camera()
        state["phase"] = "zoom"
        return 0.3
    if phase == "zoom":
        zoom_video_to(space, main, sidebar.x - 24)
        state["phase"] = "shift"
        return 0.3
    if phase == "shift":
        shift_video_left(space, main)
        state["phase"] = "tab"
        return 0.5
    if phase == "tab":
        if sidebar.active_panel_category == "Real2Gym":
            state["phase"] = "shoot_panel"
            return 1.0
        if open_real2gym_tab(state, window, sidebar) is None:
            result["errors"].append("no Real2Gym tab found in the sidebar")
            finish(result, RESULT)
            return None
        return 0.25
    if phase == "shoot_panel":
        result["panel_shot"] = screenshot(f"{SHOTS}/correction_panel.png")
        scene.frame_set(SHOT_FRAME)
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["second_invoke"] = sorted(bpy.ops.real2gym.segment("INVOKE_DEFAULT"))
        state["phase"] = "wait_second"
        return 0.2
    if phase == "wait_second":
        return _wait_for_run("settle")
    if phase == "settle":
        state["phase"] = "shoot"
        return 1.5
    if phase == "shoot":
        result["second_status"] = scene.real2gym.segmentation_status
        result["prompts_after"] = _prompts(scene)
        result["frame"] = scene.frame_current
        result["fixed_shot"] = screenshot(f"{SHOTS}/correction_fixed.png")
        finish(result, RESULT)
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
