"""Progress and cancellation for long runs.

Stages report what they are doing through a :class:`Progress`; entry points
show it (Blender's ``window_manager.progress_*`` and header text, a bar on the
command line) and cancel it from another thread with :meth:`Progress.cancel`.
A stage calls :meth:`Progress.step`, which raises
:class:`~real2gym_addon.errors.Cancelled` once cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .errors import Cancelled

ProgressCallback = Callable[[str, float], None]


class Progress:
    """Thread-safe progress of one run.

    Args:
        callback: Called with ``(stage message, overall fraction in [0, 1])`` on
            every update, from the thread doing the work. May be None.
    """

    def __init__(self, callback: ProgressCallback | None = None) -> None:
        self._callback = callback
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self.message = ""
        self.fraction = 0.0

    def step(self, message: str, fraction: float) -> None:
        """Records progress and stops the run if it was cancelled.

        Args:
            message: What is being done, for the user.
            fraction: Overall completion in [0, 1].

        Raises:
            Cancelled: :meth:`cancel` was called.
        """
        if self._cancel.is_set():
            raise Cancelled("cancelled by the user; nothing was written")
        with self._lock:
            self.message = message
            self.fraction = min(max(fraction, 0.0), 1.0)
        if self._callback is not None:
            self._callback(message, self.fraction)

    def cancel(self) -> None:
        """Asks the run to stop at its next :meth:`step`."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancel.is_set()
