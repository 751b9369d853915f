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

ZIP, DEMO, OUT, RESULT, SHOTS = sys.argv[sys.argv.index("--") + 1 :][:5]
WHEEL_STEPS = 60
SIDEBAR_WIDEN = 160  # screen pixels
DRAGS = 3  # under Xvfb the first drag may only focus the window


def _module(name: str):
    return importlib.import_module(f"{MODULE}.{name}")


def _report() -> dict:
    return json.loads(Path(OUT, "report.json").read_text())


def _record(result: dict, name: str) -> None:
    """What report.json and the scene say now, into ``result[name]``."""
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


def _key(session: Session, key: str, **modifiers) -> None:
    """Presses ``key`` with the mouse over the 3D view's middle."""
    main = session.main
    x, y = main.x + main.width // 2, main.y + main.height // 2
    session.window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    press(session.window, key, x, y, **modifiers)


def _record_fix_progress(session: Session, fixes) -> None:
    session.result["progress"].append([round(fixes.progress, 2), fixes.progress_text])


def _wait_for_fix(name: str, after: float) -> Step:
    return wait_for_job(name, after, job=fix_job, on_wait=_record_fix_progress)


def _wait_for_edits(name: str, edits: int) -> Step:
    """A step done when report.json holds ``edits`` fixes (Blender's undo handler rewrites it)."""

    def run(session: Session) -> Again | None:
        return Again(0.1) if len(_report().get("edit_log", [])) != edits else None

    return Step(name, run, after=0.5, timeout=30)


def open_run(session: Session) -> None:
    """The scene a user has after running the CLI: the video behind the camera, the folders, the reconstruction."""
    if not hasattr(bpy.types, "REAL2GYM_OT_rim_scale"):
        raise RuntimeError("the extension did not register the fix UI (REAL2GYM_OT_rim_scale)")
    scene, result = session.scene, session.result
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
    else:
        built = reconstruction.build_reconstruction(scene, OUT)
        result["warnings"] += [str(w) for w in getattr(built, "warnings", [])]
    with session.override():
        result["load"] = sorted(bpy.ops.real2gym.load_review())
        # An operator called from a script pushes no undo step of its own (a click does):
        # push the one a click on Load Report makes, for Ctrl+Z to come back to.
        bpy.ops.ed.undo_push(message="Load Report")
    session.show_camera_view()


def widen_sidebar(session: Session) -> Again | None:
    """Drags the sidebar's left edge SIDEBAR_WIDEN pixels left: room for the keyframe list's columns.

    One action a call: move to the edge, press, drag, release, look; the drag is
    tried again, DRAGS times at the most, until the sidebar is wider.
    """
    window, sidebar, result = session.window, session.sidebar, session.result
    result.setdefault("sidebar_width_before", sidebar.width)
    action = (session.calls - 1) % 5
    if action == 0:
        x, y = sidebar.x + 8, sidebar.y + sidebar.height - 80  # beside a panel: the edge is there
        session.state["drag"] = (x, y)
        window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
        return Again(0.3)
    x, y = session.state["drag"]
    if action == 1:
        window.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
        return Again(0.3)
    if action == 2:
        for dx in range(10, SIDEBAR_WIDEN + 1, 10):
            window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x - dx, y=y)
        return Again(0.3)
    if action == 3:
        window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x - SIDEBAR_WIDEN, y=y)
        return Again(0.5)
    if sidebar.width > result["sidebar_width_before"] or session.calls >= 5 * DRAGS:
        return None
    return Again(0.3)


def select_keyframe(session: Session) -> None:
    """Selects the keyframe the first suggestion points to, from another frame and view: it must jump back."""
    scene, space = session.scene, session.space
    fixes = scene.real2gym.fixes
    suggestion = fixes.suggestions[0]
    index = next(i for i, k in enumerate(fixes.keyframes) if k.frame == suggestion.frame)
    scene.frame_set(0)
    space.region_3d.view_perspective = "PERSP"  # selecting must bring the camera view back
    with session.override():
        fixes.active_keyframe_index = index  # the UI list's property: its update jumps
    session.result["selected"] = {
        "index": index,
        "frame": scene.frame_current,
        "view": space.region_3d.view_perspective,
        "ious": [[i.frame, i.measured, round(i.iou, 4)] for i in fixes.ious],
        "iou_object": fixes.iou_object,
    }
    scroll_sidebar(session.window, session.sidebar, WHEEL_STEPS)


def apply_fix(session: Session) -> None:
    result = session.result
    _record(result, "before")
    session.record_layout()
    result["before_shot"] = session.shoot("fix_before")
    with session.override():
        result["apply_invoke"] = sorted(bpy.ops.real2gym.apply_suggestion("INVOKE_DEFAULT", index=0))
    fixes = session.scene.real2gym.fixes
    result["apply_started"] = [fixes.running, fixes.progress_text]


def blender_undo(session: Session) -> None:
    _record(session.result, "after")
    session.result["after_shot"] = session.shoot("fix_after")
    _key(session, "Z", ctrl=True)


def blender_redo(session: Session) -> None:
    _record(session.result, "blender_undo")
    _key(session, "Z", ctrl=True, shift=True)


def undo_fix(session: Session) -> None:
    _record(session.result, "blender_redo")
    with session.override():
        session.result["undo_invoke"] = sorted(bpy.ops.real2gym.undo_fix("INVOKE_DEFAULT"))


def start_coacd(session: Session) -> None:
    """CoACD takes seconds: it runs in the background while the interface keeps working."""
    _record(session.result, "undone")
    session.result["undone_shot"] = session.shoot("fix_undone")
    session.scene.real2gym.fixes.collision_mode = "coacd"
    with session.override():
        session.result["coacd_invoke"] = sorted(
            bpy.ops.real2gym.set_collision("INVOKE_DEFAULT", object_name="cup", mode="coacd")
        )


def wait_coacd(session: Session) -> Again | None:
    """Waits for CoACD, counting this timer's calls meanwhile and taking a screenshot of its progress."""
    fixes, result = session.scene.real2gym.fixes, session.result
    started = session.state.setdefault("coacd_started", time.monotonic())
    if fixes.running and "coacd_shot" not in result and time.monotonic() - started > 3:
        result["coacd_shot"] = session.shoot("fix_coacd_running")
        result["coacd_running_text"] = fixes.progress_text
    result["coacd_ticks"] = session.calls  # this timer kept firing while CoACD ran
    result["coacd_seconds"] = time.monotonic() - started
    if not fixes.running:
        return None
    _record_fix_progress(session, fixes)
    return Again(0.1)


def check_coacd(session: Session) -> None:
    _record(session.result, "coacd")
    report = _report()
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    session.result["coacd"].update(
        collision_mode=cup["collision_mode"],
        pieces=len(cup.get("hulls") or []),
        probe=report["edit_log"][-1].get("opening_probe"),
        probe_text=session.scene.real2gym.fixes.probe_result,
    )


STEPS = [
    install(ZIP),
    Step("open", open_run, after=0.5),
    Step("widen", widen_sidebar, after=0.3),
    *fit_video_left_of_sidebar(),
    open_real2gym_tab(after=0.3),
    Step("select", select_keyframe, after=1.0),
    Step("apply", apply_fix, after=0.1),
    _wait_for_fix("wait_apply", after=1.5),
    Step("blender_undo", blender_undo, after=0.5),
    _wait_for_edits("wait_blender_undo", 1),
    Step("blender_redo", blender_redo, after=0.5),
    _wait_for_edits("wait_blender_redo", 2),
    Step("undo_fix", undo_fix, after=0.1),
    _wait_for_fix("wait_undo", after=0.5),
    Step("coacd", start_coacd, after=0.1),
    Step("wait_coacd", wait_coacd, after=0.5),
    Step("check_coacd", check_coacd),
]
# test_fix_gui.py gives Blender 400 s.
Session(STEPS, RESULT, shots_dir=SHOTS, result={"progress": [], "warnings": []}, timeout=370).start()
