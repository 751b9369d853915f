"""Steps of the sessions that segment and draw prompts (segmentation_session.py, correction_session.py).

Runs inside Blender; see session_kit.py for the step machine.
"""

import bpy
from session_kit import Session, Step
from session_view import drag_box_and_point, press, video_pixel_in_region


def segment(demo_dir: str, out_dir: str, after: float = 0.2) -> Step:
    """A step that loads the demo's prompts and starts the classical segmentation the way a click does."""

    def run(session: Session) -> None:
        settings = session.scene.real2gym
        settings.demo_dir, settings.out_dir = demo_dir, out_dir
        settings.segmentation_backend = "classical"
        with session.override():
            session.result["load"] = sorted(bpy.ops.real2gym.load_prompts())
            session.result["first_invoke"] = sorted(bpy.ops.real2gym.segment("INVOKE_DEFAULT"))

    return Step("segment", run, after)


def segment_again(frame: int, after: float = 0.1) -> Step:
    """A step that goes to ``frame`` and starts the segmentation again (invoke)."""

    def run(session: Session) -> None:
        session.scene.frame_set(frame)
        with session.override():
            session.result["second_invoke"] = sorted(bpy.ops.real2gym.segment("INVOKE_DEFAULT"))

    return Step("segment_again", run, after)


def show_prompt_frame(session: Session, frame: int) -> None:
    """Goes to ``frame`` in the camera view, the sidebar shown, the first object's prompt active."""
    session.scene.frame_set(frame)
    session.show_camera_view()
    with session.override():
        bpy.ops.view3d.view_center_camera()
    session.scene.real2gym.active_prompt_index = 0


def draw_box_and_point(session: Session, demo_dir: str, box, point) -> dict:
    """Starts *Draw Box* (invoke), drags ``box`` and Shift+clicks ``point`` in the camera view.

    Args:
        session: the session; ``result["draw_invoke"]`` gets what the invoke returned.
        demo_dir: the demo folder (its camera.json maps video pixels into the view).
        box: ``(x0, y0, x1, y1)`` in video pixels.
        point: ``(x, y)`` in video pixels.

    Returns:
        The mouse positions in the 3D view's main region: ``start``, ``end`` and ``point``.
    """
    with session.override():
        session.result["draw_invoke"] = sorted(bpy.ops.real2gym.draw_prompt_box("INVOKE_DEFAULT"))
    x0, y0, x1, y1 = box
    mouse = {
        "start": [round(v) for v in video_pixel_in_region(demo_dir, (x0, y0), session.main)],
        "end": [round(v) for v in video_pixel_in_region(demo_dir, (x1, y1), session.main)],
        "point": [round(v) for v in video_pixel_in_region(demo_dir, point, session.main)],
    }
    drag_box_and_point(session.window, session.main, mouse["start"], mouse["end"], mouse["point"])
    return mouse


def end_drawing(shot_name: str, after: float = 0.5) -> Step:
    """A step that takes a screenshot mid-drawing (the live rectangle on screen), then presses Enter."""

    def run(session: Session) -> None:
        session.result["drawing_shot"] = session.shoot(shot_name)
        main = session.main
        press(session.window, "RET", main.x + 10, main.y + 10)

    return Step("drawn", run, after)
