"""The step machine the GUI session scripts share; they run inside Blender (see the test_*_gui.py files).

A session script is a list of named steps. ``Session`` runs them one at a time
from a Blender timer: a step is a function of the session that returns
``None`` when it is done (the next step runs ``Step.after`` seconds later) or
``Again(seconds)`` to be called again (while a job runs, while a tab is being
found). After the last step, or at the first error or time-out, the session
writes what it saw to the result file (``errors`` names the failing step, with
its traceback) and quits Blender.

Each session imports this after putting its own folder on ``sys.path``;
session_view.py holds the 3D view's helpers (simulated input, framing the
video, screenshots), prompt_steps.py the steps of the sessions that segment.
"""

import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import bpy
from session_view import click, screenshot, shift_video_left, view3d, zoom_video_to

MODULE = "bl_ext.user_default.real2gym"
STEP_TIMEOUT = 240.0  # seconds one step may keep answering Again
SESSION_TIMEOUT = 270.0  # seconds from the first step to the last: below test_gui.run_blender's 300


@dataclass(frozen=True)
class Again:
    """A step's answer: not done yet, call it again after ``seconds``."""

    seconds: float = 0.1


@dataclass(frozen=True)
class Step:
    """One named step of a session.

    Attributes:
        name: what ``result["steps"]`` and error messages call it.
        run: called with the session; returns None when done, or ``Again``.
        after: seconds from the step's end to the next step (time for Blender to redraw).
        timeout: seconds the step may keep answering ``Again`` before the session fails.
    """

    name: str
    run: Callable[["Session"], "Again | None"]
    after: float = 0.3
    timeout: float = STEP_TIMEOUT


class Session:
    """Runs a list of steps from a Blender timer and writes the result file at the end.

    A step reaches the GUI through the session: ``window``, ``area``, ``sidebar``
    and ``main`` (the first 3D view's window, area, sidebar region and main region,
    looked up again before every call: loading a file replaces them), ``space``,
    ``scene``, ``override()``, ``result`` (written at the end), ``state`` (kept
    between calls, not written) and ``calls`` (how often the current step has
    been called, this call included).

    Args:
        steps: the steps, in order.
        result_path: the JSON file written at the end.
        shots_dir: the folder ``shoot`` writes its screenshots into.
        result: the result's first fields besides ``steps`` and ``errors``.
        timeout: seconds the whole session may take, from its first step.
    """

    def __init__(
        self,
        steps: list[Step],
        result_path: str,
        shots_dir: str | None = None,
        result: dict | None = None,
        timeout: float = SESSION_TIMEOUT,
    ) -> None:
        self.steps = steps
        self.result_path = result_path
        self.shots_dir = shots_dir
        self.result = {"steps": [], "errors": [], **(result or {})}
        self.timeout = timeout
        self.state = {}
        self.calls = 0
        self.window = self.area = self.sidebar = self.main = None
        self._index = 0
        self._started = None
        self._step_started = None
        self._finished = False

    def start(self, first_interval: float = 2.0) -> None:
        """Registers the timer that runs the steps (it survives loading a file)."""
        bpy.app.timers.register(self._tick, first_interval=first_interval, persistent=True)

    @property
    def scene(self):
        """The current scene."""
        return bpy.context.scene

    @property
    def space(self):
        """The 3D view's space (its ``region_3d`` holds the view's camera, zoom and offset)."""
        return self.area.spaces[0]

    def override(self):
        """A context override for operators that need the 3D view: ``with session.override(): ...``."""
        return bpy.context.temp_override(window=self.window, area=self.area, region=self.main)

    def show_camera_view(self) -> None:
        """Shows the 3D view through the scene's camera, with the sidebar open."""
        self.space.region_3d.view_perspective = "CAMERA"
        self.space.show_region_ui = True

    def record_layout(self) -> None:
        """Records where the screen's parts are, for the tests to crop the screenshots.

        ``screen`` is the window's ``[width, height]``; ``area`` (the 3D view),
        ``sidebar`` and ``view`` (its main region) are ``[x, y, width, height]``
        in pixels from the window's bottom-left corner.
        """
        for key, part in (("area", self.area), ("sidebar", self.sidebar), ("view", self.main)):
            self.result[key] = [part.x, part.y, part.width, part.height]
        self.result["screen"] = [self.window.width, self.window.height]

    def shoot(self, name: str) -> str:
        """Captures the X screen to ``shots_dir/name.png``; returns the path."""
        return screenshot(f"{self.shots_dir}/{name}.png")

    def finish(self) -> None:
        """Writes the result file and quits Blender (once)."""
        if self._finished:
            return
        self._finished = True
        with open(self.result_path, "w") as f:
            json.dump(self.result, f, indent=1)
        bpy.ops.wm.quit_blender()

    def _fail(self, step: Step, message: str) -> None:
        self.result["errors"].append(f"step {step.name!r}: {message}")
        self.finish()

    def _tick(self) -> float | None:
        """The timer: one call of the current step; returns the seconds to the next call, or None."""
        now = time.monotonic()
        if self._started is None:
            self._started = self._step_started = now
        step = self.steps[self._index]
        self.result["steps"].append(step.name)
        self.calls += 1
        if now - self._started > self.timeout:
            self._fail(step, f"the session timed out after {self.timeout:g} s")
            return None
        if now - self._step_started > step.timeout:
            self._fail(step, f"timed out after {step.timeout:g} s")
            return None
        try:
            self.window, self.area, self.sidebar, self.main = view3d()
            answer = step.run(self)
        except Exception:
            self._fail(step, traceback.format_exc())
            return None
        if isinstance(answer, Again):
            return answer.seconds
        self._index += 1
        self.calls = 0
        self._step_started = time.monotonic()
        if self._index == len(self.steps):
            self.finish()
            return None
        return step.after


# Steps the sessions share.


def install(zip_path: str, after: float = 0.5) -> Step:
    """A step that installs and enables the extension from its zip (once), then starts from an empty scene."""

    def run(session: Session) -> None:
        if MODULE not in bpy.context.preferences.addons:
            bpy.ops.extensions.package_install_files(
                filepath=zip_path, repo="user_default", enable_on_install=True
            )
        bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)

    return Step("install", run, after)


def open_real2gym_tab(after: float = 1.0) -> Step:
    """A step that opens the sidebar's Real2Gym tab by clicking down the tab strip.

    The tab's position depends on the theme and the other tabs, so the strip is
    clicked from the top, 12 px at a time, until the tab is active; the step fails
    when the clicks pass the sidebar's bottom.
    """

    def run(session: Session) -> Again | None:
        sidebar = session.sidebar
        if sidebar.active_panel_category == "Real2Gym":
            return None
        tab_y = session.state.setdefault("tab_y", sidebar.y + sidebar.height - 8)
        if tab_y < sidebar.y:
            raise RuntimeError("no Real2Gym tab found in the sidebar")
        click(session.window, sidebar.x + sidebar.width - 10, tab_y)
        session.state["tab_y"] = tab_y - 12
        return Again(0.25)

    return Step("tab", run, after)


def final_screenshot(path: str) -> Step:
    """A step that records the sidebar's open tab and the layout, then captures the screen to ``path``."""

    def run(session: Session) -> None:
        session.result["category"] = session.sidebar.active_panel_category
        session.record_layout()
        screenshot(path)

    return Step("shoot", run)


def scene_job(scene):
    """The settings of the scene's pipeline and segmentation jobs (``running``, ``progress``)."""
    return scene.real2gym


def fix_job(scene):
    """The settings of the scene's fix jobs (``running``, ``progress``, ``progress_text``)."""
    return scene.real2gym.fixes


def record_progress(session: Session, job) -> None:
    """Keeps a running job's progress (0 to 1, 3 decimals) in ``result["progress"]``."""
    session.result.setdefault("progress", []).append(round(job.progress, 3))


def wait_for_job(
    name: str,
    after: float,
    job: Callable = scene_job,
    on_wait: Callable[[Session, object], None] | None = None,
    timeout: float = STEP_TIMEOUT,
) -> Step:
    """A step that is done when a job started by an operator's invoke no longer runs.

    Args:
        name: the step's name.
        after: seconds from the job's end to the next step.
        job: returns, for the scene, the settings whose ``running`` flag is the job's.
        on_wait: called with the session and those settings at each look while the job runs.
        timeout: seconds the job may run.
    """

    def run(session: Session) -> Again | None:
        settings = job(session.scene)
        if not settings.running:
            return None
        if on_wait is not None:
            on_wait(session, settings)
        return Again(0.1)

    return Step(name, run, after, timeout)


def fit_video_left_of_sidebar() -> list[Step]:
    """Steps that show the whole video in the camera view, left of the sidebar, at the view's left edge."""

    def center(session: Session) -> None:
        with session.override():
            bpy.ops.view3d.view_center_camera()

    def zoom(session: Session) -> None:
        zoom_video_to(session.space, session.main, session.sidebar.x - session.main.x - 24)

    def shift(session: Session) -> None:
        shift_video_left(session.space, session.main)

    return [Step("center", center, 0.3), Step("zoom", zoom, 0.3), Step("shift", shift, 0.5)]
