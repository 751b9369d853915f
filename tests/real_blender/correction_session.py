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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prompt_steps import draw_box_and_point, end_drawing, segment, segment_again, show_prompt_frame  # noqa: E402
from session_kit import (  # noqa: E402
    Session,
    Step,
    fit_video_left_of_sidebar,
    install,
    open_real2gym_tab,
    wait_for_job,
)

ZIP, DEMO, OUT, RESULT, SHOTS, FRAME, BOX = sys.argv[sys.argv.index("--") + 1 :][:7]
FRAME = int(FRAME)
BOX = json.loads(BOX)
SHOT_FRAME = 80  # the block is carried


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


def camera_view(session: Session) -> None:
    """Keeps the first masks of the block, then FRAME in the camera view."""
    session.result["first_status"] = session.scene.real2gym.segmentation_status
    shutil.copytree(f"{OUT}/masks/block", f"{OUT}_first_block_masks")
    show_prompt_frame(session, FRAME)


def draw(session: Session) -> None:
    x0, y0, x1, y1 = BOX
    draw_box_and_point(session, DEMO, BOX, ((x0 + x1) / 2, (y0 + y1) / 2))


def check_draw(session: Session) -> None:
    session.result["prompts_drawn"] = _prompts(session.scene)


def shoot_panel(session: Session) -> None:
    session.result["panel_shot"] = session.shoot("correction_panel")


def shoot(session: Session) -> None:
    scene, result = session.scene, session.result
    result["second_status"] = scene.real2gym.segmentation_status
    result["prompts_after"] = _prompts(scene)
    result["frame"] = scene.frame_current
    result["fixed_shot"] = session.shoot("correction_fixed")


STEPS = [
    install(ZIP),
    segment(DEMO, OUT),
    wait_for_job("wait_first", after=0.2),
    Step("camera", camera_view, after=0.5),
    Step("draw", draw, after=0.5),
    end_drawing("correction_drawing"),
    Step("check_draw", check_draw, after=0.3),
    *fit_video_left_of_sidebar(),
    open_real2gym_tab(after=1.0),
    Step("shoot_panel", shoot_panel, after=0.1),
    segment_again(SHOT_FRAME, after=0.2),
    wait_for_job("wait_second", after=1.7),
    Step("shoot", shoot),
]
# test_correction_gui.py gives Blender 400 s.
Session(STEPS, RESULT, shots_dir=SHOTS, timeout=370).start()
