"""The one way long operators run: a job, synchronous from ``execute``, in the background from ``invoke``.

Every long operator (run, segment, verify, import the simulation, fix, CoACD,
repair, compare, download a model) makes one :class:`~..bridge.jobs.ThreadJob`
from its properties (:meth:`JobOperator.make_job`). ``execute`` (``blender -b``,
scripts) runs it synchronously; ``invoke`` (a click) starts it and polls it from
a modal timer on the main thread, showing progress in the status bar and the
panel; Esc cancels while nothing is written yet. While a job runs, every job
operator's button is greyed out with the running job's name: one job at a time.
"""

from __future__ import annotations

from ..bridge.jobs import ThreadJob, running
from ..bridge.scene_run import scene_pipeline_job
from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.pipeline import STAGES


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

    Subclasses implement :meth:`make_job` and :meth:`finished`, and may override
    :meth:`progress_state` (where the progress bar and the failure are shown) and
    :meth:`run_now` (a synchronous path of their own). A failure is a
    ``Real2GymError``: reported, ``{'CANCELLED'}``, and written to the progress
    state's :attr:`status_property`.
    """

    status_property = "status"
    _job: ThreadJob | None = None
    _timer = None

    def make_job(self, context) -> ThreadJob:
        """The job, not started, from the operator's properties and the scene."""
        raise NotImplementedError

    def finished(self, context, outcome) -> set[str]:
        """Reports a finished job's outcome; returns the operator's result."""
        return {"FINISHED"}

    def progress_state(self, context):
        """The property group with ``running``, ``progress``, ``progress_text`` and :attr:`status_property`."""
        return context.scene.real2gym

    def run_now(self, context):
        """Does the work synchronously; returns the outcome."""
        return self.make_job(context).run_now(context.scene)

    @classmethod
    def poll(cls, context):
        job = running()
        if job is not None:
            cls.poll_message_set(f"{job.name[:1].upper()}{job.name[1:]} is running; wait for it to finish")
            return False
        return True

    def _failed(self, context, error: Real2GymError) -> set[str]:
        setattr(self.progress_state(context), self.status_property, f"Failed: {error}")
        self.report({"ERROR"}, str(error))
        return {"CANCELLED"}

    def execute(self, context):
        try:
            outcome = self.run_now(context)
        except Real2GymError as e:
            return self._failed(context, e)
        return self.finished(context, outcome)

    def invoke(self, context, event):
        try:
            self._job = self.make_job(context).start()
        except Real2GymError as e:
            return self._failed(context, e)
        state = self.progress_state(context)
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
        state = self.progress_state(context)
        progress = self._job.progress
        state.progress = progress.fraction
        state.progress_text = f"{progress.message or 'Starting'} ({self._job.elapsed:.0f} s)"
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
            return self._failed(context, e)
        if not finished:
            state.running = True
            return {"RUNNING_MODAL"}
        self._end(context)
        return self.finished(context, self._job.outcome)

    def _end(self, context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        self.progress_state(context).running = False
        redraw_views(context)

    def cancel(self, context):
        """Blender ended the operator (a file was loaded, the window closed): stop the job."""
        if self._job is not None:
            self._job.abandon()
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

    def make_job(self, context) -> ThreadJob:
        return scene_pipeline_job(
            context.scene,
            *self.folders(context),
            last_stage=self.last_stage,
            resegment=self.resegment(context),
        )

    def finished(self, context, run) -> set[str]:
        for warning in run.log.warnings:
            self.report({"WARNING"}, f"{warning.stage}: {warning.message}")
        self.report({"INFO"}, f"Real2Gym: wrote {run.out_dir / 'report.json'}")
        return {"FINISHED"}
