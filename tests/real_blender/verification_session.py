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
    Session,
    Step,
    fit_video_left_of_sidebar,
    install,
    open_real2gym_tab,
    wait_for_job,
)
from session_view import scroll_sidebar  # noqa: E402

ZIP, DEMO, OUT, RESULT, SHOTS = sys.argv[sys.argv.index("--") + 1 :][:5]
SHOT_FRAME = 80  # the block is carried by the gripper


def _record_panel_draws(result: dict) -> None:
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
                    "margin": summary.margin,
                    "perturbed": [r.perturbed for r in summary.checks],
                    "status": context.scene.real2gym.verification_status,
                }
            )

    panel.draw = draw


def run_pipeline(session: Session) -> None:
    with session.override():
        session.result["run_invoke"] = sorted(
            bpy.ops.real2gym.run_pipeline("INVOKE_DEFAULT", demo_dir=DEMO, out_dir=OUT)
        )


def verify(session: Session) -> None:
    session.result["status"] = session.scene.real2gym.status
    _record_panel_draws(session.result)
    with session.override():
        session.result["verify_invoke"] = sorted(bpy.ops.real2gym.verify("INVOKE_DEFAULT"))


def camera_view(session: Session) -> None:
    """Frame 80 in the camera view, the block selected, the masks hidden (they would cover the objects)."""
    scene = session.scene
    session.result["verification_status"] = scene.real2gym.verification_status
    for prompt in scene.real2gym.object_prompts:
        prompt.show_mask = False
    scene.frame_set(SHOT_FRAME)
    block = bpy.data.objects["block"]
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    block.select_set(True)
    bpy.context.view_layer.objects.active = block
    session.show_camera_view()


def scroll_to_verification(session: Session) -> None:
    """Scrolls the sidebar down to the Verification and Object Physics panels."""
    scroll_sidebar(session.window, session.sidebar, 22)


def shoot(session: Session) -> None:
    scene, window, main, result = session.scene, session.window, session.main, session.result
    result["frame"] = scene.frame_current
    session.record_layout()
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
        position = location_3d_to_region_2d(main, main.data, bpy.data.objects[name].matrix_world.translation)
        positions[name] = [main.x + position.x, window.height - (main.y + position.y)]
    result["on_screen"] = positions
    result["camera_pose"] = [list(row) for row in scene.camera.matrix_world]
    result["markers"] = sorted([m.frame, m.name] for m in scene.timeline_markers)
    result["shot"] = session.shoot("verification_panel")


STEPS = [
    install(ZIP),
    Step("run", run_pipeline, after=0.2),
    wait_for_job("wait_run", after=0.3),
    Step("verify", verify, after=0.2),
    wait_for_job("wait_verify", after=0.3),
    Step("camera", camera_view, after=0.5),
    *fit_video_left_of_sidebar(),
    open_real2gym_tab(after=1.0),
    Step("scroll", scroll_to_verification, after=1.5),
    Step("shoot", shoot),
]
# test_verification_gui.py gives Blender 400 s.
Session(STEPS, RESULT, shots_dir=SHOTS, result={"panel_draws": []}, timeout=370).start()
