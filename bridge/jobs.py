"""Background work for the GUI: one job kind, one job at a time.

bpy is not thread-safe: a :class:`ThreadJob` runs its ``work`` (plain core
code: the pipeline's analysis, simulating, fixing, CoACD, composing a video) in
a worker thread and its ``apply`` (building Blender data) on the main thread,
when the modal operator polling it calls :meth:`ThreadJob.advance`. Every
background operation is one: a run, a segmentation, a verification, a fix, a
comparison (whose renders are main-thread steps before its work). Scripts and
``blender -b`` run the same job synchronously with :meth:`ThreadJob.run_now`.

At most one job runs in a Blender session: :meth:`ThreadJob.start` refuses a
second (:func:`running` says which one runs), and the slot is freed when the
job is finished, fails, or, abandoned by its operator, its work ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.progress import Progress

_running: list[ThreadJob] = []
"""The job running in this Blender session (at most one)."""


def running() -> ThreadJob | None:
    """The job running in this Blender session, or None."""
    return _running[0] if _running else None


class ThreadJob:
    """Work in a worker thread, then its result applied to the scene on the main thread.

    Args:
        work: Called in the worker thread with the job's :class:`Progress`;
            must not touch bpy. Its return value is handed to ``apply``.
        apply: Called on the main thread with ``(scene, work's result)``; its
            return value becomes :attr:`outcome`.
        name: What the job does, for messages ("a fix", "the comparison").
        progress: The progress the work reports to; a new one when None.
    """

    def __init__(
        self,
        work: Callable[[Progress], Any],
        apply: Callable[[bpy.types.Scene, Any], Any],
        name: str = "a Real2Gym job",
        progress: Progress | None = None,
    ) -> None:
        self.name = name
        self.progress = progress or Progress()
        self.outcome: Any = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self._work, self._apply = work, apply
        self._result: Any = None
        self._thread: threading.Thread | None = None
        self._abandoned = False

    def _run(self) -> None:
        try:
            self._result = self._work(self.progress)
        except BaseException as e:  # handed to the main thread in advance()
            self.error = e
        finally:
            if self._abandoned:
                self._release()

    def _claim(self) -> None:
        other = running()
        if other is not None and other is not self:
            raise Real2GymError(f"{other.name} is running; wait for it to finish (Esc cancels it)")
        if other is None:
            _running.append(self)

    def _release(self) -> None:
        if self in _running:
            _running.remove(self)

    def start(self) -> ThreadJob:
        """Starts the work in a worker thread (the GUI); returns the job.

        Raises:
            Real2GymError: Another job is running; nothing was started.
        """
        self._claim()
        self._thread = threading.Thread(target=self._run, name="real2gym-job", daemon=True)
        self._thread.start()
        return self

    def run_now(self, scene: bpy.types.Scene) -> Any:
        """Does the work on this thread and applies it (scripts, ``blender -b``); returns :attr:`outcome`.

        Raises:
            Real2GymError: Another job is running, or the work failed; the scene is unchanged.
        """
        self._claim()
        self._run()
        self.advance(scene)
        return self.outcome

    @property
    def done(self) -> bool:
        """True once the worker thread has ended: call :meth:`advance`."""
        return self._thread is None or not self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        """Seconds since the job was made."""
        return time.monotonic() - self.started

    def cancel(self) -> None:
        """Asks the work to stop at its next progress step."""
        self.progress.cancel()

    def abandon(self) -> None:
        """Nobody will finish this job (its operator ended): it is cancelled and frees the slot when its
        work ends."""
        self._abandoned = True
        self.cancel()
        if self.done:
            self._release()

    def advance(self, scene: bpy.types.Scene) -> bool:
        """Applies the work's result to ``scene``; call when :attr:`done`.

        Returns:
            True when the job is finished (:attr:`outcome` is set); a job with main-thread steps
            before its work (the comparison's renders) returns False until then.

        Raises:
            Real2GymError: The work failed or was cancelled; the scene is unchanged.
        """
        if self._thread is not None:
            self._thread.join()
        try:
            if self.error is not None:
                raise self.error
            self.outcome = self._apply(scene, self._result)
        finally:
            self._release()
        return True
