"""Work in a worker thread whose result is applied to the scene on the main thread.

bpy is not thread-safe: a :class:`ThreadJob` runs its ``work`` (plain core
code: simulating, verifying, composing a video) in a worker thread and its
``apply`` (building Blender data) on the main thread, when the modal operator
polling it calls :meth:`ThreadJob.advance`. It has the same shape as
:class:`~.pipeline.BackgroundRun`: ``progress``, ``done``, ``cancel()``,
``advance(scene)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import bpy

from ..real2gym_addon.progress import Progress


class ThreadJob:
    """One piece of work in a worker thread, then one step on the main thread.

    Args:
        work: Called in the worker thread with the job's :class:`Progress`;
            must not touch bpy. Its return value is handed to ``apply``.
        apply: Called on the main thread with ``(scene, work's result)``; its
            return value becomes :attr:`outcome`.
        name: The thread's name.
    """

    def __init__(
        self,
        work: Callable[[Progress], Any],
        apply: Callable[[bpy.types.Scene, Any], Any],
        name: str = "real2gym-job",
    ) -> None:
        self.progress = Progress()
        self.outcome: Any = None
        self.error: BaseException | None = None
        self._work, self._apply = work, apply
        self._result: Any = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            self._result = self._work(self.progress)
        except BaseException as e:  # handed to the main thread in advance()
            self.error = e

    def start(self) -> ThreadJob:
        """Starts the work in the worker thread; returns the job."""
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        """True once the worker thread has ended: call :meth:`advance`."""
        return not self._thread.is_alive()

    def cancel(self) -> None:
        """Asks the work to stop at its next progress step."""
        self.progress.cancel()

    def advance(self, scene: bpy.types.Scene) -> bool:
        """Applies the work's result to ``scene``; call when :attr:`done`.

        Returns:
            True (the job is finished; :attr:`outcome` is set).

        Raises:
            Real2GymError: The work failed or was cancelled; the scene is unchanged.
        """
        self._thread.join()
        if self.error is not None:
            raise self.error
        self.outcome = self._apply(scene, self._result)
        return True
