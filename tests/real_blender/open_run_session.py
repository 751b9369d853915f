"""Opens a finished run in the real Blender GUI under Xvfb; run by test_gui.py, not by pytest directly.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python open_run_session.py -- ZIP OUT_DIR RESULT_JSON SCREENSHOT_PNG

Installs the extension zip, presses *Open Run* on a run's output folder the way
the sidebar does (with the folder given, so no file browser), goes to the grasp
keyframe in the camera view with the sidebar's Real2Gym tab open, takes a
screenshot of the X screen, writes what the scene holds to RESULT_JSON and quits.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_kit import finish, guarded, install_extension, open_real2gym_tab, screenshot, view3d  # noqa: E402

ZIP, OUT, RESULT, SCREENSHOT = sys.argv[sys.argv.index("--") + 1 :][:4]
result = {"steps": [], "errors": []}
state = {"phase": "install", "tab_y": None}


def _step():
    window, area, region, main = view3d()
    phase = state["phase"]
    result["steps"].append(phase)
    if phase == "install":
        install_extension(ZIP)
        state["phase"] = "open"
        return 0.5
    if phase == "open":
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["open"] = sorted(bpy.ops.real2gym.open_run("INVOKE_DEFAULT", out_dir=OUT))
        scene = bpy.context.scene
        actions = {
            o.name: o.animation_data.action.name
            for o in scene.objects
            if o.animation_data and o.animation_data.action
        }
        result["objects"] = sorted(o.name for o in scene.objects)
        result["actions"] = actions
        result["camera"] = scene.camera.name if scene.camera else None
        result["frame_end"] = scene.frame_end
        result["markers"] = sorted((m.name, m.frame) for m in scene.timeline_markers)
        fixes = scene.real2gym.fixes
        result["review"] = {
            "report_dir": fixes.report_dir,
            "keyframes": len(fixes.keyframes),
            "verification": fixes.verification,
        }
        grasp = next((m.frame for m in scene.timeline_markers if m.name.startswith("grasp")), 0)
        scene.frame_set(grasp)
        area.spaces[0].region_3d.view_perspective = "CAMERA"
        area.spaces[0].show_region_ui = True
        state["phase"] = "tab"
        return 0.5
    if phase == "tab":
        if region.active_panel_category == "Real2Gym":
            state["phase"] = "shoot"
            return 1.0
        if open_real2gym_tab(state, window, region) is None:
            result["errors"].append("no Real2Gym tab found in the sidebar")
            finish(result, RESULT)
            return None
        return 0.25
    if phase == "shoot":
        result["category"] = region.active_panel_category
        result["screen"] = [window.width, window.height]
        result["view"] = [main.x, main.y, main.width, main.height]
        screenshot(SCREENSHOT)
        finish(result, RESULT)
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
