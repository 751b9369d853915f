"""Opens a finished run in the real Blender GUI under Xvfb; run by test_gui.py, not by pytest directly.

Usage (inside Blender): blender --factory-startup --enable-event-simulate
    --python open_run_session.py -- ZIP OUT_DIR RESULT_JSON SCREENSHOT_PNG [MARKER [OFFSET [SCROLL]]]

Installs the extension zip, presses *Open Run* on a run's output folder the way
the sidebar does (with the folder given, so no file browser), goes to the keyframe
whose marker starts with MARKER (``grasp`` by default), OFFSET frames on, in the
camera view with the sidebar's Real2Gym tab open (its mouse wheel turned SCROLL times down, where
the frames to check push the Verification section below the screen), takes a screenshot of the X
screen, writes what the scene holds to RESULT_JSON and quits.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_kit import Session, Step, final_screenshot, install, open_real2gym_tab  # noqa: E402

ARGS = sys.argv[sys.argv.index("--") + 1 :]
ZIP, OUT, RESULT, SCREENSHOT = ARGS[:4]
MARKER = ARGS[4] if len(ARGS) > 4 else "grasp"
OFFSET = int(ARGS[5]) if len(ARGS) > 5 else 0
SCROLL = int(ARGS[6]) if len(ARGS) > 6 else 0


def open_run(session: Session) -> None:
    scene, result = session.scene, session.result
    with session.override():
        result["open"] = sorted(bpy.ops.real2gym.open_run("INVOKE_DEFAULT", out_dir=OUT))
    result["objects"] = sorted(o.name for o in scene.objects)
    result["actions"] = {
        o.name: o.animation_data.action.name
        for o in scene.objects
        if o.animation_data and o.animation_data.action
    }
    result["camera"] = scene.camera.name if scene.camera else None
    result["frame_end"] = scene.frame_end
    result["markers"] = sorted((m.name, m.frame) for m in scene.timeline_markers)
    fixes = scene.real2gym.fixes
    result["review"] = {
        "report_dir": fixes.report_dir,
        "keyframes": len(fixes.keyframes),
        "verification": fixes.verification,
    }
    shown = next((m.frame for m in scene.timeline_markers if m.name.startswith(MARKER)), 0) + OFFSET
    scene.frame_set(min(shown, scene.frame_end))
    result["frame"] = scene.frame_current
    session.show_camera_view()


def scroll_sidebar(session: Session) -> None:
    """Turns the mouse wheel over the sidebar SCROLL times, as a user scrolls it down."""
    sidebar = session.sidebar
    x, y = sidebar.x + sidebar.width // 2, sidebar.y + sidebar.height // 2
    session.window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    for _ in range(SCROLL):
        session.window.event_simulate(type="WHEELDOWNMOUSE", value="PRESS", x=x, y=y)
    session.result["scrolled"] = SCROLL


STEPS = [
    install(ZIP),
    Step("open", open_run, after=0.5),
    open_real2gym_tab(after=1.0),
    *([Step("scroll", scroll_sidebar, after=0.5)] if SCROLL else []),
    Step("settle", lambda session: None, after=0.5),
    final_screenshot(SCREENSHOT),
]
Session(STEPS, RESULT).start()
