"""What the run operators share: synchronous execute, background invoke with a progress bar.

``execute`` (``blender -b``, scripts) runs the pipeline synchronously through
:func:`bridge.segmentation.run_scene_pipeline`. ``invoke`` (a click) starts it
in worker threads (:func:`bridge.segmentation.start_scene_pipeline`) and polls
it from a modal timer on the main thread, showing progress in the status bar
and the panel; Esc cancels while nothing is written yet.
"""

from __future__ import annotations

from ..bridge.segmentation import SceneJob, run_scene_pipeline, start_scene_pipeline
from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.pipeline import STAGES

_active: list[SceneJob] = []
"""The job running in this Blender session (at most one)."""


def _redraw(context) -> None:
    for area in context.screen.areas if context.screen else ():
        if area.type == "VIEW_3D":
            area.tag_redraw()


class RunOperator:
    """Mixin for operators that run the pipeline (up to :attr:`last_stage`).

    Subclasses set ``last_stage`` and may override :meth:`folders`.
    """

    last_stage = STAGES[-1]
    _job: SceneJob | None = None
    _timer = None

    def folders(self, context) -> tuple[str, str]:
        """The demo and output folders; empty for the scene's."""
        return "", ""

    def _report_run(self, run, what: str) -> None:
        for warning in run.log.warnings:
            self.report({"WARNING"}, f"{warning.stage}: {warning.message}")
        self.report({"INFO"}, f"Real2Gym: {what}")

    def execute(self, context):
        try:
            run = run_scene_pipeline(context.scene, *self.folders(context), last_stage=self.last_stage)
        except Real2GymError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._report_run(run, f"wrote {run.out_dir / 'report.json'}")
        return {"FINISHED"}

    def invoke(self, context, event):
        if _active:
            self.report({"ERROR"}, "a Real2Gym run is already in progress")
            return {"CANCELLED"}
        try:
            self._job = start_scene_pipeline(
                context.scene, *self.folders(context), last_stage=self.last_stage
            )
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
        _redraw(context)
        if not self._job.done:
            return {"RUNNING_MODAL"}
        # Not "running" while the scene is built: the saved scene.blend must not say so.
        state.running = False
        try:
            finished = self._job.advance(context.scene)
        except Real2GymError as e:
            self._end(context)
            state.status = f"Failed: {e}"
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if not finished:
            state.running = True
            return {"RUNNING_MODAL"}
        self._end(context)
        self._report_run(self._job.run, f"wrote {self._job.report}")
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
        _redraw(context)

    def cancel(self, context):
        """Blender ended the operator (a file was loaded, the window closed): stop the run."""
        if self._job is not None:
            self._job.cancel()
        self._end(context)
