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
from session_kit import (  # noqa: E402
    Session,
    Step,
    final_screenshot,
    install,
    open_real2gym_tab,
    record_progress,
    wait_for_job,
)

ZIP, DEMO, OUT, RESULT, SCREENSHOT = sys.argv[sys.argv.index("--") + 1 :][:5]


def run_pipeline(session: Session) -> None:
    with session.override():
        started = bpy.ops.real2gym.run_pipeline("INVOKE_DEFAULT", demo_dir=DEMO, out_dir=OUT)
    session.result["invoke"] = sorted(started)


def camera_view(session: Session) -> None:
    scene, result = session.scene, session.result
    result["status"] = scene.real2gym.status
    result["frame_end"] = scene.frame_end
    result["camera"] = scene.camera.name if scene.camera else None
    session.show_camera_view()


STEPS = [
    install(ZIP),
    Step("run", run_pipeline, after=0.2),
    wait_for_job("wait", after=0.1, on_wait=record_progress),
    Step("camera", camera_view, after=0.5),
    open_real2gym_tab(after=1.0),
    final_screenshot(SCREENSHOT),
]
Session(STEPS, RESULT).start()
