"""Drives the Segmentation panel in the real Blender GUI under Xvfb; run by test_segmentation_gui.py.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python segmentation_session.py -- ZIP DEMO_DIR OUT_DIR RESULT_JSON SHOT_DIR

Installs the extension zip, segments the demo the way a click does (invoke:
worker threads, modal timer, progress), switches the 3D view to the camera,
draws the block's box and a point with simulated mouse events
(``real2gym.draw_prompt_box``), segments again, opens the Real2Gym tab and
takes screenshots (xwd) with the mask overlays shown and hidden. Writes what it
saw to RESULT_JSON and quits. Expected mouse positions come from projecting
points through the camera (``world_to_camera_view`` and
``location_3d_to_region_2d``), not from the add-on's own mapping.
"""

import json
import os
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

ZIP, DEMO, OUT, RESULT, SHOTS = sys.argv[sys.argv.index("--") + 1 :][:5]
DRAWN_BOX = (216.0, 225.0, 276.0, 290.0)  # video pixels: around the block on frame 0
DRAWN_POINT = (245.0, 257.0)
SHOT_FRAME = 80  # the block is carried, moving about 11 px per frame
result = {"steps": [], "errors": []}
state = {"phase": "install", "tab_y": None, "waits": 0}


_view3d = view3d


def _finish():
    finish(result, RESULT)


def _shoot(name: str) -> str:
    return screenshot(f"{SHOTS}/{name}.png")


def _region_position(pixel, main) -> tuple[float, float]:
    """Where a video pixel appears in the 3D view region, by projecting a 3D point on its ray."""
    camera = json.load(open(f"{DEMO}/camera.json"))
    depth = 0.7
    x = (pixel[0] - camera["cx"]) / camera["fx"] * depth
    y = (pixel[1] - camera["cy"]) / camera["fy"] * depth
    # OpenCV camera coordinates to Blender's camera (y up, looking along -z).
    world = bpy.context.scene.camera.matrix_world @ Vector((x, -y, -depth))
    position = location_3d_to_region_2d(main, main.data, world)
    return position.x, position.y


def _to_screen(pixel, main, window) -> list[float]:
    """A video pixel's position on the screenshot (x right, y down from the top-left)."""
    rx, ry = _region_position(pixel, main)
    return [main.x + rx, window.height - (main.y + ry)]


def _wait_for_run(next_phase: str):
    scene_state = bpy.context.scene.real2gym
    if scene_state.running and state["waits"] < 600:
        state["waits"] += 1
        result.setdefault("progress", []).append(round(scene_state.progress, 3))
        return 0.1
    state["waits"] = 0
    state["phase"] = next_phase
    return 0.2


def _step():
    window, area, sidebar, main = _view3d()
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
        scene.frame_set(0)
        space.show_region_ui = True
        space.region_3d.view_perspective = "CAMERA"
        with bpy.context.temp_override(window=window, area=area, region=main):
            bpy.ops.view3d.view_center_camera()
        scene.real2gym.active_prompt_index = 0
        state["phase"] = "draw"
        return 0.5
    if phase == "draw":
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["draw_poll"] = bpy.ops.real2gym.draw_prompt_box.poll()
            result["draw_invoke"] = sorted(bpy.ops.real2gym.draw_prompt_box("INVOKE_DEFAULT"))
        x0, y0, x1, y1 = DRAWN_BOX
        start = [round(v) for v in _region_position((x0, y0), main)]
        end = [round(v) for v in _region_position((x1, y1), main)]
        point = [round(v) for v in _region_position(DRAWN_POINT, main)]
        result["mouse"] = {"start": start, "end": end, "point": point}
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
        # Mid-drawing: the live rectangle is on screen.
        result["drawing_shot"] = _shoot("segmentation_drawing")
        window.event_simulate(type="RET", value="PRESS", x=main.x + 10, y=main.y + 10)
        window.event_simulate(type="RET", value="RELEASE", x=main.x + 10, y=main.y + 10)
        state["phase"] = "check_draw"
        return 0.5
    if phase == "check_draw":
        prompt = scene.real2gym.object_prompts[0]
        result["prompt"] = {
            "name": prompt.name,
            "frame": prompt.frame,
            "box": list(prompt.box),
            "points": [[p.x, p.y, p.label] for p in prompt.points],
        }
        # Esc leaves the prompt unchanged: draw another box, then cancel.
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["cancel_invoke"] = sorted(bpy.ops.real2gym.draw_prompt_box("INVOKE_DEFAULT"))
        start = [round(v) for v in _region_position((20, 20), main)]
        end = [round(v) for v in _region_position((120, 100), main)]
        ox, oy = main.x, main.y
        window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=ox + start[0], y=oy + start[1])
        window.event_simulate(type="LEFTMOUSE", value="PRESS", x=ox + start[0], y=oy + start[1])
        window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=ox + end[0], y=oy + end[1])
        window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=ox + end[0], y=oy + end[1])
        window.event_simulate(type="ESC", value="PRESS", x=ox + end[0], y=oy + end[1])
        window.event_simulate(type="ESC", value="RELEASE", x=ox + end[0], y=oy + end[1])
        state["phase"] = "check_cancel"
        return 0.5
    if phase == "check_cancel":
        prompt = scene.real2gym.object_prompts[0]
        result["box_after_cancel"] = list(prompt.box)
        with bpy.context.temp_override(window=window, area=area, region=main):
            bpy.ops.view3d.view_center_camera()
        state["phase"] = "zoom"
        return 0.3
    if phase == "zoom":
        # The whole video left of the sidebar: scale it to the free width...
        zoom_video_to(space, main, sidebar.x - 24)
        state["phase"] = "shift"
        return 0.3
    if phase == "shift":
        # ...and shift it to the view's left edge.
        shift_video_left(space, main)
        state["phase"] = "tab"
        return 0.5
    if phase == "tab":
        if sidebar.active_panel_category == "Real2Gym":
            scene.frame_set(SHOT_FRAME)
            with bpy.context.temp_override(window=window, area=area, region=main):
                result["second_invoke"] = sorted(bpy.ops.real2gym.segment("INVOKE_DEFAULT"))
            state["phase"] = "wait_second"
            return 0.1
        if open_real2gym_tab(state, window, sidebar) is None:
            result["errors"].append("no Real2Gym tab found in the sidebar")
            _finish()
            return None
        return 0.25
    if phase == "wait_second":
        settings = scene.real2gym
        if settings.running and 0.2 < settings.progress < 0.9 and "running_shot" not in result:
            # The panel's progress bar, mid-run (after a redraw at this progress).
            if state.get("progress_seen") is None:
                state["progress_seen"] = settings.progress
                return 0.3
            result["running_shot"] = _shoot("segmentation_running")
            result["running_text"] = settings.progress_text
        return _wait_for_run("settle")
    if phase == "settle":
        state["phase"] = "shoot"
        return 1.5
    if phase == "shoot":
        camera = scene.camera
        result["second_status"] = scene.real2gym.segmentation_status
        result["prompts_after"] = [p.name for p in scene.real2gym.object_prompts]
        result["backgrounds"] = [
            {
                "source": bg.source,
                "image": bg.image.name if bg.image else None,
                "frame_current": (bg.image_user if bg.source == "IMAGE" else bg.clip_user).frame_current,
                "shown": bg.show_background_image,
            }
            for bg in camera.data.background_images
        ]
        result["frame"] = scene.frame_current
        result["screen"] = [window.width, window.height]
        result["sidebar"] = [sidebar.x, sidebar.y, sidebar.width, sidebar.height]
        result["view"] = [main.x, main.y, main.width, main.height]
        result["area"] = [area.x, area.y, area.width, area.height]
        width, height = scene.render.resolution_x, scene.render.resolution_y
        result["video_corners_on_screen"] = [
            _to_screen(p, main, window) for p in [(0, 0), (width, 0), (width, height), (0, height)]
        ]
        result["shown_shot"] = _shoot("segmentation_panel")
        for prompt in scene.real2gym.object_prompts:
            prompt.show_mask = False
        state["phase"] = "shoot_hidden"
        return 1.0
    if phase == "shoot_hidden":
        result["hidden_shot"] = _shoot("segmentation_masks_hidden")
        result["shown_after_toggle"] = [
            bg.show_background_image for bg in scene.camera.data.background_images
        ]
        for prompt in scene.real2gym.object_prompts:
            prompt.show_mask = True
        # SAM2 without a checkpoint: the panel greys the reason and the Segment button.
        scene.real2gym.segmentation_backend = "sam2"
        state["phase"] = "shoot_sam2"
        return 1.0
    if phase == "shoot_sam2":
        result["sam2_shot"] = _shoot("segmentation_sam2_unavailable")
        with bpy.context.temp_override(window=window, area=area, region=main):
            try:
                bpy.ops.real2gym.segment()
            except RuntimeError as e:
                result["sam2_refusal"] = str(e)
        scene.real2gym.segmentation_backend = "classical"
        _finish()
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
