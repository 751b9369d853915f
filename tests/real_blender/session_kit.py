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
