"""The 3D view in the GUI sessions: finding it, simulated mouse and keys, framing the video, screenshots.

Runs inside Blender (the session scripts import it through session_kit.py).
Window coordinates are pixels from the window's bottom-left corner; region
coordinates from the region's; video pixels from the video's top-left corner.
Simulated events need Blender started with ``--enable-event-simulate``.
"""

import json
import subprocess

import bpy
from bpy_extras.view3d_utils import location_3d_to_region_2d
from mathutils import Vector


def view3d():
    """The first window and its 3D view: ``(window, area, sidebar region, main region)``."""
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    sidebar = next(r for r in area.regions if r.type == "UI")
    main = next(r for r in area.regions if r.type == "WINDOW")
    return window, area, sidebar, main


def screenshot(path: str) -> str:
    """Captures the whole X screen (Blender's own screenshot gives black under Xvfb); returns ``path``."""
    xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True).stdout
    subprocess.run(["convert", "xwd:-", path], input=xwd, check=True)
    return path


def click(window, x: int, y: int) -> None:
    """A left click at window coordinates."""
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    window.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
    window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x, y=y)


def press(window, key: str, x: int, y: int, **modifiers) -> None:
    """Presses and releases ``key`` (a Blender event type) with the mouse at window coordinates (x, y).

    ``modifiers`` are ``ctrl=True``, ``shift=True`` and the like.
    """
    window.event_simulate(type=key, value="PRESS", x=x, y=y, **modifiers)
    window.event_simulate(type=key, value="RELEASE", x=x, y=y, **modifiers)


def scroll_sidebar(window, sidebar, steps: int) -> None:
    """Turns the mouse wheel down ``steps`` times over the sidebar's middle."""
    x, y = sidebar.x + sidebar.width // 2, sidebar.y + sidebar.height // 2
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    for _ in range(steps):
        window.event_simulate(type="WHEELDOWNMOUSE", value="PRESS", x=x, y=y)


def drag_box_and_point(window, main, start, end, point) -> None:
    """Drags a box from ``start`` to ``end`` and Shift+clicks ``point`` (region coordinates of ``main``).

    What ``real2gym.draw_prompt_box`` waits for after its invoke: the box, then a
    positive point; Enter (not sent here) ends the drawing, Esc cancels it.
    """
    middle = [(start[0] + end[0]) // 2, (start[1] + end[1]) // 2]
    events = [
        ("MOUSEMOVE", "NOTHING", start, {}),
        ("LEFTMOUSE", "PRESS", start, {}),
        ("MOUSEMOVE", "NOTHING", middle, {}),
        ("MOUSEMOVE", "NOTHING", end, {}),
        ("LEFTMOUSE", "RELEASE", end, {}),
        ("MOUSEMOVE", "NOTHING", point, {}),
        ("LEFTMOUSE", "PRESS", point, {"shift": True}),
        ("LEFTMOUSE", "RELEASE", point, {"shift": True}),
    ]
    for kind, value, (x, y), keys in events:
        window.event_simulate(type=kind, value=value, x=main.x + x, y=main.y + y, **keys)


def video_pixel_in_region(demo_dir: str, pixel, main) -> tuple[float, float]:
    """Where a video pixel appears in the 3D view's main region, by projecting a point on its ray.

    Args:
        demo_dir: the demo folder; its camera.json holds the video camera's intrinsics.
        pixel: ``(x, y)`` in video pixels.
        main: the 3D view's main region, in the scene camera's view.
    """
    with open(f"{demo_dir}/camera.json") as f:
        camera = json.load(f)
    depth = 0.7
    x = (pixel[0] - camera["cx"]) / camera["fx"] * depth
    y = (pixel[1] - camera["cy"]) / camera["fy"] * depth
    # OpenCV camera coordinates to Blender's camera (y up, looking along -z).
    world = bpy.context.scene.camera.matrix_world @ Vector((x, -y, -depth))
    position = location_3d_to_region_2d(main, main.data, world)
    return position.x, position.y


def video_left_right(main) -> tuple[float, float]:
    """The video's left and right edges in the 3D view's main region (pixels): the scene camera's frame."""
    scene = bpy.context.scene
    camera = scene.camera
    frame = [camera.matrix_world @ v for v in camera.data.view_frame(scene=scene)]
    top_right, top_left = frame[0], frame[3]
    left = location_3d_to_region_2d(main, main.data, top_left)
    right = location_3d_to_region_2d(main, main.data, top_right)
    return left.x, right.x


def zoom_video_to(space, main, width: float) -> None:
    """Zooms the camera view so that the video is ``width`` region pixels wide.

    Blender's camera-view zoom ``z`` scales the frame by ``((sqrt(2) + z / 50) / 2) ** 2``.
    """
    left, right = video_left_right(main)
    region_3d = space.region_3d
    factor = (2**0.5 + region_3d.view_camera_zoom / 50) ** 2 / 4 * width / (right - left)
    region_3d.view_camera_zoom = 50 * (2 * factor**0.5 - 2**0.5)


def shift_video_left(space, main, margin: float = 12) -> None:
    """Shifts the camera view so that the video's left edge is ``margin`` pixels from the region's."""
    left, right = video_left_right(main)
    offset = space.region_3d.view_camera_offset[0] + (left - margin) / (2 * (right - left))
    space.region_3d.view_camera_offset = (offset, 0.0)
