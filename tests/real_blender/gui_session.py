"""Drives the real Blender GUI under Xvfb; run by test_gui.py, not by pytest directly.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python gui_session.py -- ZIP DEMO_DIR OUT_DIR RESULT_JSON SCREENSHOT_PNG

Installs the extension zip, starts the pipeline the way a click does (invoke:
worker thread, modal timer, progress), switches the 3D view to the camera,
opens the sidebar's "Real2Gym" tab by clicking it, takes a screenshot of the
X screen with xwd, writes what it saw to RESULT_JSON and quits.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_kit import finish, guarded, install_extension, open_real2gym_tab, screenshot, view3d  # noqa: E402

ZIP, DEMO, OUT, RESULT, SCREENSHOT = sys.argv[sys.argv.index("--") + 1 :][:5]
result = {"steps": [], "errors": []}
state = {"phase": "install", "tab_y": None, "waits": 0}


_view3d = view3d


def _finish():
    finish(result, RESULT)


def _step():
    window, area, region, main = _view3d()
    phase = state["phase"]
    result["steps"].append(phase)
    if phase == "install":
        install_extension(ZIP)
        state["phase"] = "run"
        return 0.5
    if phase == "run":
        with bpy.context.temp_override(window=window, area=area, region=main):
            started = bpy.ops.real2gym.run_pipeline("INVOKE_DEFAULT", demo_dir=DEMO, out_dir=OUT)
        result["invoke"] = sorted(started)
        state["phase"] = "wait"
        return 0.2
    if phase == "wait":
        scene_state = bpy.context.scene.real2gym
        if scene_state.running and state["waits"] < 300:
            state["waits"] += 1
            result.setdefault("progress", []).append(round(scene_state.progress, 3))
            return 0.1
        result["status"] = scene_state.status
        result["frame_end"] = bpy.context.scene.frame_end
        result["camera"] = bpy.context.scene.camera.name if bpy.context.scene.camera else None
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
            _finish()
            return None
        return 0.25
    if phase == "shoot":
        result["category"] = region.active_panel_category
        result["screen"] = [window.width, window.height]
        result["sidebar"] = [region.x, region.y, region.width, region.height]
        screenshot(SCREENSHOT)
        _finish()
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
