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

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prompt_steps import draw_box_and_point, end_drawing, segment, segment_again, show_prompt_frame  # noqa: E402
from session_kit import (  # noqa: E402
    Again,
    Session,
    Step,
    fit_video_left_of_sidebar,
    install,
    open_real2gym_tab,
    record_progress,
    wait_for_job,
)
from session_view import press, video_pixel_in_region  # noqa: E402

ZIP, DEMO, OUT, RESULT, SHOTS = sys.argv[sys.argv.index("--") + 1 :][:5]
DRAWN_BOX = (216.0, 225.0, 276.0, 290.0)  # video pixels: around the block on frame 0
DRAWN_POINT = (245.0, 257.0)
SHOT_FRAME = 80  # the block is carried, moving about 11 px per frame


def _to_screen(pixel, main, window) -> list[float]:
    """A video pixel's position on the screenshot (x right, y down from the top-left)."""
    rx, ry = video_pixel_in_region(DEMO, pixel, main)
    return [main.x + rx, window.height - (main.y + ry)]


def camera_view(session: Session) -> None:
    session.result["first_status"] = session.scene.real2gym.segmentation_status
    show_prompt_frame(session, 0)


def draw(session: Session) -> None:
    with session.override():
        session.result["draw_poll"] = bpy.ops.real2gym.draw_prompt_box.poll()
    session.result["mouse"] = draw_box_and_point(session, DEMO, DRAWN_BOX, DRAWN_POINT)


def check_draw(session: Session) -> None:
    """Records the drawn prompt; then draws another box and presses Esc, which must leave it unchanged."""
    prompt = session.scene.real2gym.object_prompts[0]
    session.result["prompt"] = {
        "name": prompt.name,
        "frame": prompt.frame,
        "box": list(prompt.box),
        "points": [[p.x, p.y, p.label] for p in prompt.points],
    }
    with session.override():
        session.result["cancel_invoke"] = sorted(bpy.ops.real2gym.draw_prompt_box("INVOKE_DEFAULT"))
    main, window = session.main, session.window
    start, end = ([round(v) for v in video_pixel_in_region(DEMO, p, main)] for p in ((20, 20), (120, 100)))
    ox, oy = main.x, main.y
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=ox + start[0], y=oy + start[1])
    window.event_simulate(type="LEFTMOUSE", value="PRESS", x=ox + start[0], y=oy + start[1])
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=ox + end[0], y=oy + end[1])
    window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=ox + end[0], y=oy + end[1])
    press(window, "ESC", ox + end[0], oy + end[1])


def check_cancel(session: Session) -> None:
    session.result["box_after_cancel"] = list(session.scene.real2gym.object_prompts[0].box)


def wait_second(session: Session) -> Again | None:
    """Waits for the second segmentation, with a screenshot of the panel's progress bar mid-run."""
    settings = session.scene.real2gym
    if not settings.running:
        return None
    if 0.2 < settings.progress < 0.9 and "running_shot" not in session.result:
        # After a redraw at this progress.
        if session.state.get("progress_seen") is None:
            session.state["progress_seen"] = settings.progress
            return Again(0.3)
        session.result["running_shot"] = session.shoot("segmentation_running")
        session.result["running_text"] = settings.progress_text
    record_progress(session, settings)
    return Again(0.1)


def shoot(session: Session) -> None:
    scene, result, window, main = session.scene, session.result, session.window, session.main
    result["second_status"] = scene.real2gym.segmentation_status
    result["prompts_after"] = [p.name for p in scene.real2gym.object_prompts]
    result["backgrounds"] = [
        {
            "source": bg.source,
            "image": bg.image.name if bg.image else None,
            "frame_current": (bg.image_user if bg.source == "IMAGE" else bg.clip_user).frame_current,
            "shown": bg.show_background_image,
        }
        for bg in scene.camera.data.background_images
    ]
    result["frame"] = scene.frame_current
    session.record_layout()
    width, height = scene.render.resolution_x, scene.render.resolution_y
    result["video_corners_on_screen"] = [
        _to_screen(p, main, window) for p in [(0, 0), (width, 0), (width, height), (0, height)]
    ]
    result["shown_shot"] = session.shoot("segmentation_panel")
    for prompt in scene.real2gym.object_prompts:
        prompt.show_mask = False


def shoot_hidden(session: Session) -> None:
    """The masks hidden; then SAM2 without a checkpoint: the panel greys the reason and the Segment button."""
    scene = session.scene
    session.result["hidden_shot"] = session.shoot("segmentation_masks_hidden")
    session.result["shown_after_toggle"] = [
        bg.show_background_image for bg in scene.camera.data.background_images
    ]
    for prompt in scene.real2gym.object_prompts:
        prompt.show_mask = True
    scene.real2gym.segmentation_backend = "sam2"


def shoot_sam2(session: Session) -> None:
    session.result["sam2_shot"] = session.shoot("segmentation_sam2_unavailable")
    with session.override():
        try:
            bpy.ops.real2gym.segment()
        except RuntimeError as e:
            session.result["sam2_refusal"] = str(e)
    session.scene.real2gym.segmentation_backend = "classical"


STEPS = [
    install(ZIP),
    segment(DEMO, OUT),
    wait_for_job("wait_first", after=0.2, on_wait=record_progress),
    Step("camera", camera_view, after=0.5),
    Step("draw", draw, after=0.5),
    end_drawing("segmentation_drawing"),
    Step("check_draw", check_draw, after=0.5),
    Step("check_cancel", check_cancel, after=0.3),
    *fit_video_left_of_sidebar(),
    open_real2gym_tab(after=0.1),
    segment_again(SHOT_FRAME),
    Step("wait_second", wait_second, after=1.7),
    Step("shoot", shoot, after=1.0),
    Step("shoot_hidden", shoot_hidden, after=1.0),
    Step("shoot_sam2", shoot_sam2),
]
# test_segmentation_gui.py gives Blender 400 s.
Session(STEPS, RESULT, shots_dir=SHOTS, timeout=370).start()
