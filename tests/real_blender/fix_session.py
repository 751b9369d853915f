"""Fixes a broken run in the real Blender GUI under Xvfb; run by test_fix_gui.py.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python fix_session.py -- ZIP DEMO_DIR OUT_DIR RESULT_JSON SHOT_DIR

OUT_DIR holds a finished run whose cup rim was made too narrow (the block does
not fit). The session installs the extension, opens the run the way a user who
ran the command line would (the video behind the camera, the scene's folders,
*Load Report*), selects the keyframe the failed check points to, takes a
screenshot, applies the suggested fix from the panel's operator (invoke: worker
thread, modal timer, progress), waits, takes another, then undoes with
Blender's own undo and redo (Ctrl+Z, Ctrl+Shift+Z, keys simulated over the 3D
view) and with *Undo Fix*, recording report.json and the scene at each step
into RESULT_JSON.
"""

import importlib
import json
import os
import sys
import time
from pathlib import Path

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
WHEEL_STEPS = 60
SIDEBAR_WIDEN = 160  # screen pixels
result = {"steps": [], "errors": [], "progress": [], "warnings": []}
state = {"phase": "install", "tab_y": None, "waits": 0}


def _module(name: str):
    return importlib.import_module(f"{MODULE}.{name}")


_view3d = view3d


def _finish():
    finish(result, RESULT)


def _shoot(name: str) -> str:
    return screenshot(f"{SHOTS}/{name}.png")


def _register_fix_ui() -> None:
    """The extension registers the fix UI; stop early with a clear error if it did not."""
    if not hasattr(bpy.types, "REAL2GYM_OT_rim_scale"):
        raise RuntimeError("the extension did not register the fix UI (REAL2GYM_OT_rim_scale)")


def _report() -> dict:
    return json.loads(Path(OUT, "report.json").read_text())


def _record(name: str) -> None:
    """What report.json and the scene say now."""
    report = _report()
    fixes = bpy.context.scene.real2gym.fixes
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    result[name] = {
        "passed": report["verification"]["passed"],
        "edit_log": [[e["kind"], e["object"], e["args"]] for e in report.get("edit_log", [])],
        "cup_params": cup["params"],
        "scene_verification": fixes.verification,
        "scene_edit_count": fixes.edit_count,
        "keyframes": [[k.event, k.frame, k.verdict, k.failed] for k in fixes.keyframes],
        "active_keyframe": fixes.active_keyframe_index,
        "suggestions": [[s.name, s.check, s.frame, s.kind] for s in fixes.suggestions],
        "checks": {c.name: c.passed for c in fixes.checks},
        "cup_edits": [[e.name, e.arguments] for e in fixes.objects["cup"].edits],
        "status": fixes.status,
        "frame": bpy.context.scene.frame_current,
        "cup_object_width": _cup_width(),
    }


def _cup_width():
    """The reconstructed cup's width in the scene (None without the reconstruction)."""
    for obj in bpy.data.objects:
        if obj.real2gym.kind == "OBJECT" and obj.real2gym.source_name == "cup" and obj.type == "MESH":
            return round(max(obj.dimensions.x, obj.dimensions.y), 5)
    return None


def _key(window, main, key: str, **modifiers) -> None:
    x, y = main.x + main.width // 2, main.y + main.height // 2
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    window.event_simulate(type=key, value="PRESS", x=x, y=y, **modifiers)
    window.event_simulate(type=key, value="RELEASE", x=x, y=y, **modifiers)


def _scroll_sidebar(window, sidebar, steps: int, down: bool = True) -> None:
    x, y = sidebar.x + sidebar.width // 2, sidebar.y + sidebar.height // 2
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    for _ in range(steps):
        window.event_simulate(type="WHEELDOWNMOUSE" if down else "WHEELUPMOUSE", value="PRESS", x=x, y=y)


def _wait_for_fix(next_phase: str):
    fixes = bpy.context.scene.real2gym.fixes
    if fixes.running and state["waits"] < 1200:
        state["waits"] += 1
        result["progress"].append([round(fixes.progress, 2), fixes.progress_text])
        return 0.1
    state["waits"] = 0
    state["phase"] = next_phase
    return 0.5


def _wait_for_report(edits: int, next_phase: str):
    """Waits until report.json holds ``edits`` fixes (Blender's undo handler rewrites it)."""
    if len(_report().get("edit_log", [])) != edits and state["waits"] < 100:
        state["waits"] += 1
        return 0.1
    state["waits"] = 0
    state["phase"] = next_phase
    return 0.5


def _open_run(scene) -> None:
    """The scene a user has after running the CLI: the video behind the camera, the folders, the reconstruction."""
    demo_module = _module("real2gym_addon.demo")
    description = _module("real2gym_addon.scene").SceneDescription.from_demo(demo_module.load_demo(DEMO))
    _module("bridge.video_scene").build_video_scene(scene, description)
    settings = scene.real2gym
    settings.demo_dir, settings.out_dir = DEMO, OUT
    settings.video_frames, settings.video_fps = description.video.frames, description.video.fps
    try:
        reconstruction = _module("bridge.reconstruction")
    except ImportError:
        result["warnings"].append("no bridge.reconstruction in this build: the scene shows the video only")
        return
    built = reconstruction.build_reconstruction(scene, OUT)
    result["warnings"] += [str(w) for w in getattr(built, "warnings", [])]


def _step():
    window, area, sidebar, main = _view3d()
    phase = state["phase"]
    result["steps"].append(phase)
    scene = bpy.context.scene
    space = area.spaces[0]
    override = {"window": window, "area": area, "region": main}
    if phase == "install":
        install_extension(ZIP)
        _register_fix_ui()
        state["phase"] = "open"
        return 0.5
    if phase == "open":
        _open_run(scene)
        with bpy.context.temp_override(**override):
            result["load"] = sorted(bpy.ops.real2gym.load_review())
            # An operator called from a script pushes no undo step of its own (a click does):
            # push the one a click on Load Report makes, for Ctrl+Z to come back to.
            bpy.ops.ed.undo_push(message="Load Report")
        space.show_region_ui = True
        space.region_3d.view_perspective = "CAMERA"
        state["phase"] = "widen"
        return 0.5
    if phase == "widen":
        # Drag the sidebar's left edge: room for the keyframe list's columns.
        result.setdefault("sidebar_width_before", sidebar.width)
        x, y = sidebar.x + 8, sidebar.y + sidebar.height - 80  # beside a panel: the edge is there
        window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
        state["phase"] = "widen_press"
        return 0.3
    if phase == "widen_press":
        x, y = sidebar.x + 8, sidebar.y + sidebar.height - 80  # beside a panel: the edge is there
        window.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
        state["drag"] = (x, y)
        state["phase"] = "widen_drag"
        return 0.3
    if phase == "widen_drag":
        x, y = state["drag"]
        for dx in range(10, SIDEBAR_WIDEN + 1, 10):
            window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x - dx, y=y)
        state["phase"] = "widen_release"
        return 0.3
    if phase == "widen_release":
        x, y = state["drag"]
        window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x - SIDEBAR_WIDEN, y=y)
        state["phase"] = "widened"
        return 0.5
    if phase == "widened":
        # Under Xvfb the first drag only focuses the window: try again until the edge moves.
        state["drags"] = state.get("drags", 0) + 1
        widened = sidebar.width > result["sidebar_width_before"]
        state["phase"] = "fit" if widened or state["drags"] >= 3 else "widen"
        return 0.3
    if phase == "fit":
        with bpy.context.temp_override(**override):
            bpy.ops.view3d.view_center_camera()
        state["phase"] = "zoom"
        return 0.3
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
            state["phase"] = "select"
            return 0.3
        if open_real2gym_tab(state, window, sidebar) is None:
            result["errors"].append("no Real2Gym tab found in the sidebar")
            _finish()
            return None
        return 0.25
    if phase == "select":
        fixes = scene.real2gym.fixes
        suggestion = fixes.suggestions[0]
        index = next(i for i, k in enumerate(fixes.keyframes) if k.frame == suggestion.frame)
        scene.frame_set(0)
        space.region_3d.view_perspective = "PERSP"  # selecting must bring the camera view back
        with bpy.context.temp_override(**override):
            fixes.active_keyframe_index = index  # the UI list's property: its update jumps
        result["selected"] = {
            "index": index,
            "frame": scene.frame_current,
            "view": space.region_3d.view_perspective,
            "ious": [[i.frame, i.measured, round(i.iou, 4)] for i in fixes.ious],
            "iou_object": fixes.iou_object,
        }
        _scroll_sidebar(window, sidebar, WHEEL_STEPS)
        state["phase"] = "shoot_before"
        return 1.0
    if phase == "shoot_before":
        _record("before")
        result["screen"] = [window.width, window.height]
        result["area"] = [area.x, area.y, area.width, area.height]
        result["sidebar"] = [sidebar.x, sidebar.y, sidebar.width, sidebar.height]
        result["before_shot"] = _shoot("fix_before")
        with bpy.context.temp_override(**override):
            result["apply_invoke"] = sorted(bpy.ops.real2gym.apply_suggestion("INVOKE_DEFAULT", index=0))
        fixes = scene.real2gym.fixes
        result["apply_started"] = [fixes.running, fixes.progress_text]
        state["phase"] = "wait_apply"
        return 0.1
    if phase == "wait_apply":
        return _wait_for_fix("settle_apply")
    if phase == "settle_apply":
        state["phase"] = "shoot_after"
        return 1.0
    if phase == "shoot_after":
        _record("after")
        result["after_shot"] = _shoot("fix_after")
        _key(window, main, "Z", ctrl=True)  # Blender's own undo
        state["phase"] = "wait_blender_undo"
        return 0.5
    if phase == "wait_blender_undo":
        return _wait_for_report(1, "check_blender_undo")
    if phase == "check_blender_undo":
        _record("blender_undo")
        _key(window, main, "Z", ctrl=True, shift=True)  # and redo
        state["phase"] = "wait_blender_redo"
        return 0.5
    if phase == "wait_blender_redo":
        return _wait_for_report(2, "check_blender_redo")
    if phase == "check_blender_redo":
        _record("blender_redo")
        with bpy.context.temp_override(**override):
            result["undo_invoke"] = sorted(bpy.ops.real2gym.undo_fix("INVOKE_DEFAULT"))
        state["phase"] = "wait_undo"
        return 0.1
    if phase == "wait_undo":
        return _wait_for_fix("check_undo")
    if phase == "check_undo":
        _record("undone")
        result["undone_shot"] = _shoot("fix_undone")
        # CoACD takes seconds: it runs in the background while the interface keeps working.
        fixes = scene.real2gym.fixes
        fixes.collision_mode = "coacd"
        with bpy.context.temp_override(**override):
            result["coacd_invoke"] = sorted(
                bpy.ops.real2gym.set_collision("INVOKE_DEFAULT", object_name="cup", mode="coacd")
            )
        state["phase"] = "wait_coacd"
        return 0.1
    if phase == "wait_coacd":
        fixes = scene.real2gym.fixes
        state.setdefault("coacd_started", time.monotonic())
        if fixes.running and "coacd_shot" not in result and time.monotonic() - state["coacd_started"] > 3:
            result["coacd_shot"] = _shoot("fix_coacd_running")
            result["coacd_running_text"] = fixes.progress_text
        result["coacd_ticks"] = state["waits"] + 1  # this timer kept firing while CoACD ran
        result["coacd_seconds"] = time.monotonic() - state["coacd_started"]
        return _wait_for_fix("check_coacd")
    if phase == "check_coacd":
        _record("coacd")
        report = _report()
        cup = next(o for o in report["objects"] if o["name"] == "cup")
        result["coacd"].update(
            collision_mode=cup["collision_mode"],
            pieces=len(cup.get("hulls") or []),
            probe=report["edit_log"][-1].get("opening_probe"),
            probe_text=scene.real2gym.fixes.probe_result,
        )
        _finish()
        return None
    return None


bpy.app.timers.register(guarded(_step, result, RESULT), first_interval=2.0, persistent=True)
