"""Drives the Verification panel in the real Blender GUI under Xvfb; run by test_verification_gui.py.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python verification_session.py -- ZIP DEMO_DIR OUT_DIR RESULT_JSON SHOT_DIR

Installs the extension zip, runs the whole pipeline the way a click does
(invoke: worker thread, modal timer, progress), verifies again from the
Verification panel's operator (invoke), goes to frame 80 in the camera view with
the block selected, opens the Real2Gym tab and takes a screenshot (xwd) with the
reconstruction and the simulated copies over the video (the mask overlays
hidden). Writes what it saw,
including what the Verification panel drew, to RESULT_JSON and quits.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpy_extras.view3d_utils import location_3d_to_region_2d
from session_kit import (  # noqa: E402
    MODULE,
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
SHOT_FRAME = 80  # the block is carried by the gripper
result = {"steps": [], "errors": [], "panel_draws": []}
state = {"phase": "install", "tab_y": None, "waits": 0}


_view3d = view3d


def _finish():
    finish(result, RESULT)


def _shoot(name: str) -> str:
    return screenshot(f"{SHOTS}/{name}.png")


def _to_region(world, main) -> tuple[float, float]:
    position = location_3d_to_region_2d(main, main.data, world)
    return position.x, position.y


def _record_panel_draws():
    """Wraps the Verification panel's draw to record what it listed (from the same state call)."""
    panel = bpy.types.REAL2GYM_PT_verification
    verification = sys.modules[f"{MODULE}.state.watch"]
    original = panel.draw

    def draw(self, context):
        original(self, context)
        summary = verification.verification_summary(context.scene)
        if summary is not None and len(result["panel_draws"]) < 50:
            result["panel_draws"].append(
                {
                    "verified": summary.verified,
                    "checks": [[r.label, r.passed, r.figure] for r in summary.checks],
                    "status": context.scene.real2gym.verification_status,
                }
            )

    panel.draw = draw


def _wait(next_phase: str):
    if bpy.context.scene.real2gym.running and state["waits"] < 900:
        state["waits"] += 1
        return 0.1
    state["waits"] = 0
    state["phase"] = next_phase
    return 0.3


def _step():
    window, area, sidebar, main = _view3d()
    phase = state["phase"]
    result["steps"].append(phase)
    scene = bpy.context.scene
    space = area.spaces[0]
    if phase == "install":
        install_extension(ZIP)
        state["phase"] = "run"
        return 0.5
    if phase == "run":
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["run_invoke"] = sorted(
                bpy.ops.real2gym.run_pipeline("INVOKE_DEFAULT", demo_dir=DEMO, out_dir=OUT)
            )
        state["phase"] = "wait_run"
        return 0.2
    if phase == "wait_run":
        return _wait("verify")
    if phase == "verify":
        result["status"] = scene.real2gym.status
        _record_panel_draws()
        with bpy.context.temp_override(window=window, area=area, region=main):
            result["verify_invoke"] = sorted(bpy.ops.real2gym.verify("INVOKE_DEFAULT"))
        state["phase"] = "wait_verify"
        return 0.2
    if phase == "wait_verify":
        return _wait("camera")
    if phase == "camera":
        result["verification_status"] = scene.real2gym.verification_status
        for prompt in scene.real2gym.object_prompts:  # the masks would cover the objects
            prompt.show_mask = False
        scene.frame_set(SHOT_FRAME)
        block = bpy.data.objects["block"]
        for obj in bpy.context.view_layer.objects:
            obj.select_set(False)
        block.select_set(True)
        bpy.context.view_layer.objects.active = block
        space.show_region_ui = True
        space.region_3d.view_perspective = "CAMERA"
        with bpy.context.temp_override(window=window, area=area, region=main):
            bpy.ops.view3d.view_center_camera()
        state["phase"] = "zoom"
        return 0.5
    if phase == "zoom":
        # The whole video left of the sidebar: scale it to the free width...
        zoom_video_to(space, main, sidebar.x - main.x - 24)
        state["phase"] = "shift"
        return 0.3
    if phase == "shift":
        # ...and shift it to the view's left edge.
        shift_video_left(space, main)
        state["phase"] = "tab"
        return 0.5
    if phase == "tab":
        if sidebar.active_panel_category == "Real2Gym":
            state["phase"] = "settle"
            return 1.0
        if open_real2gym_tab(state, window, sidebar) is None:
            result["errors"].append("no Real2Gym tab found in the sidebar")
            _finish()
            return None
        return 0.25
    if phase == "settle":
        # Scroll the sidebar down to the Verification and Object Physics panels.
        x, y = sidebar.x + sidebar.width // 2, sidebar.y + sidebar.height // 2
        window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
        for _ in range(30):
            window.event_simulate(type="WHEELDOWNMOUSE", value="PRESS", x=x, y=y)
        state["phase"] = "shoot"
        return 1.5
    if phase == "shoot":
        result["frame"] = scene.frame_current
        result["screen"] = [window.width, window.height]
        result["sidebar"] = [sidebar.x, sidebar.y, sidebar.width, sidebar.height]
        result["area"] = [area.x, area.y, area.width, area.height]
        result["objects"] = {
            o.name: {
                "kind": o.real2gym.kind,
                "collections": [c.name for c in o.users_collection],
                "location": list(o.matrix_world.translation),
                "visible": o.visible_get(),
            }
            for o in scene.objects
        }
        # Where the block and its simulated copy appear on the screenshot (x right, y down).
        positions = {}
        for name in ("block", "block sim", "cup", "cup sim"):
            x, y = _to_region(bpy.data.objects[name].matrix_world.translation, main)
            positions[name] = [main.x + x, window.height - (main.y + y)]
        result["on_screen"] = positions
        result["camera_pose"] = [list(row) for row in scene.camera.matrix_world]
        result["markers"] = sorted([m.frame, m.name] for m in scene.timeline_markers)
        result["shot"] = _shoot("verification_panel")
        _finish()
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
