"""What the GUI session scripts share; they run inside Blender (see the test_*_gui.py files).

Each session imports this after putting its own folder on ``sys.path``.
"""

import json
import subprocess

import bpy


def view3d():
    """The first window and its 3D view: ``(window, area, sidebar region, main region)``."""
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    sidebar = next(r for r in area.regions if r.type == "UI")
    main = next(r for r in area.regions if r.type == "WINDOW")
    return window, area, sidebar, main


def finish(result: dict, path: str) -> None:
    """Writes what the session saw to ``path`` and quits Blender."""
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    bpy.ops.wm.quit_blender()


def screenshot(path: str) -> str:
    """Captures the whole X screen (Blender's own screenshot gives black under Xvfb)."""
    xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True).stdout
    subprocess.run(["convert", "xwd:-", path], input=xwd, check=True)
    return path


def click(window, x: int, y: int) -> None:
    """A left click at window coordinates (needs ``--enable-event-simulate``)."""
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    window.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
    window.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x, y=y)


def open_real2gym_tab(state: dict, window, sidebar) -> bool | None:
    """One step of opening the sidebar's Real2Gym tab by clicking down the tab strip.

    The tab's position depends on the theme and the other tabs, so the strip is
    clicked from the top, 12 px at a time, until the tab is active.

    Returns:
        True when the tab is open, False to call again later, None when no tab was found.
    """
    if sidebar.active_panel_category == "Real2Gym":
        return True
    if state.get("tab_y") is None:
        state["tab_y"] = sidebar.y + sidebar.height - 8
    if state["tab_y"] < sidebar.y:
        return None
    click(window, sidebar.x + sidebar.width - 10, state["tab_y"])
    state["tab_y"] -= 12
    return False


MODULE = "bl_ext.user_default.real2gym"


def install_extension(zip_path: str) -> None:
    """Installs and enables the extension from its zip (once), then starts from an empty scene."""
    if MODULE not in bpy.context.preferences.addons:
        bpy.ops.extensions.package_install_files(
            filepath=zip_path, repo="user_default", enable_on_install=True
        )
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)


def guarded(step, result: dict, path: str):
    """Wraps a timer step: an exception is recorded in ``result`` and the session ends."""
    import traceback

    def run():
        try:
            return step()
        except Exception:
            result["errors"].append(traceback.format_exc())
            finish(result, path)
            return None

    return run


def video_left_right(main) -> tuple[float, float]:
    """The video's left and right edges in the 3D view's main region (pixels): the scene camera's frame."""
    from bpy_extras.view3d_utils import location_3d_to_region_2d

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
