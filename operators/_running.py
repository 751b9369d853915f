"""What the long-running operators share: synchronous execute, background invoke with a progress bar.

``execute`` (``blender -b``, scripts) does the work synchronously through a
bridge function. ``invoke`` (a click) starts a *job* from the bridge (the
pipeline's :class:`~..bridge.pipeline.BackgroundRun`, a
:class:`~..bridge.jobs.ThreadJob`, the comparison's job) and polls it from a
modal timer on the main thread, showing progress in the status bar and the
panel; Esc cancels while nothing is written yet. A job has ``progress``,
``done``, ``cancel()`` and ``advance(scene)``, which does the next main-thread
step and returns True when the job is finished.
"""

from __future__ import annotations

from ..bridge.segmentation import run_scene_pipeline, start_scene_pipeline
from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.pipeline import STAGES

_active: list = []
"""The job running in this Blender session (at most one)."""


def redraw_views(context, sidebars_only: bool = False) -> None:
    """Redraws the 3D views (only their sidebars while a progress bar moves: cheap)."""
    for area in context.screen.areas if context.screen else ():
        if area.type != "VIEW_3D":
            continue
        if not sidebars_only:
            area.tag_redraw()
            continue
        for region in area.regions:
            if region.type == "UI":
                region.tag_redraw()


class JobOperator:
    """Mixin for operators whose work is long: synchronous ``execute``, modal ``invoke``.

    Subclasses implement :meth:`run_now` (the synchronous work, which reports
    itself), :meth:`start_job` (starts the same work as a job) and
    :meth:`job_finished` (reports a finished job). A failure is a
    ``Real2GymError``: reported, ``{'CANCELLED'}``, and written to
    ``scene.real2gym.<status_property>``.
    """

    status_property = "status"
    _job = None
    _timer = None

    def run_now(self, context) -> None:
        """Does the work synchronously and reports it."""
        raise NotImplementedError

    def start_job(self, context):
        """Starts the work as a job (see the module's description) and returns it."""
        raise NotImplementedError

    def job_finished(self, context, job) -> None:
        """Reports a finished job."""

    def execute(self, context):
        try:
            self.run_now(context)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        return {"FINISHED"}

    def invoke(self, context, event):
        if _active:
            self.report({"ERROR"}, "a Real2Gym run is already in progress")
            return {"CANCELLED"}
        try:
            self._job = self.start_job(context)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        _active.append(self._job)
        state = context.scene.real2gym
        state.running, state.progress, state.progress_text = True, 0.0, "Starting"
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            self._job.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        state = context.scene.real2gym
        progress = self._job.progress
        state.progress, state.progress_text = progress.fraction, progress.message
        context.window_manager.progress_update(int(progress.fraction * 100))
        redraw_views(context)
        if not self._job.done:
            return {"RUNNING_MODAL"}
        # Not "running" while the scene is built: a scene.blend saved meanwhile must not say so.
        state.running = False
        try:
            finished = self._job.advance(context.scene)
        except Real2GymError as e:
            self._end(context)
            setattr(state, self.status_property, f"Failed: {e}")
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if not finished:
            state.running = True
            return {"RUNNING_MODAL"}
        self._end(context)
        self.job_finished(context, self._job)
        return {"FINISHED"}

    def _end(self, context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.scene.real2gym.running = False
        if self._job in _active:
            _active.remove(self._job)
        redraw_views(context)

    def cancel(self, context):
        """Blender ended the operator (a file was loaded, the window closed): stop the job."""
        if self._job is not None:
            self._job.cancel()
        self._end(context)


class RunOperator(JobOperator):
    """Mixin for operators that run the pipeline (up to :attr:`last_stage`).

    Subclasses set ``last_stage`` and may override :meth:`folders` and :meth:`resegment`.
    """

    last_stage = STAGES[-1]

    def folders(self, context) -> tuple[str, str]:
        """The demo and output folders; empty for the scene's."""
        return "", ""

    def resegment(self, context) -> str | None:
        """The one object to segment again, keeping the others' masks; None for all."""
        return None

    def _report_run(self, run, what: str) -> None:
        for warning in run.log.warnings:
            self.report({"WARNING"}, f"{warning.stage}: {warning.message}")
        self.report({"INFO"}, f"Real2Gym: {what}")

    def run_now(self, context) -> None:
        run = run_scene_pipeline(
            context.scene,
            *self.folders(context),
            last_stage=self.last_stage,
            resegment=self.resegment(context),
        )
        self._report_run(run, f"wrote {run.out_dir / 'report.json'}")

    def start_job(self, context):
        return start_scene_pipeline(
            context.scene,
            *self.folders(context),
            last_stage=self.last_stage,
            resegment=self.resegment(context),
        )

    def job_finished(self, context, job) -> None:
        self._report_run(job.run, f"wrote {job.report}")
