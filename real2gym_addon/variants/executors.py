"""Where the variants run: this process, a process pool on this machine, or Ray.

Each executor runs the same task function on the same jobs and yields
``(job, result)`` as results come in (``result`` is the exception when the task
itself died, which :func:`~.batch.vary` records as that variant's reason). Ray is an
optional dependency; ``--executor ray`` without it is refused with what to install.

A pool's workers are fresh interpreters that import only what the task needs: inside
Blender they first make the in-memory packages the task's module lives in (``bl_ext``,
Blender's extensions namespace) by running ``_worker_packages.py`` with the parent's
package folders, and they never run the parent's main script (one run by ``blender -b
--python`` imports bpy, which a worker cannot).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import runpy
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..errors import Real2GymError

EXECUTORS = ("local", "ray")
_PACKAGES_SCRIPT = Path(__file__).with_name("_worker_packages.py")


def run_jobs(
    task: Callable, jobs: list, workers: int, executor: str = "local", address: str | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[tuple[object, object]]:  # fmt: skip
    """Runs ``task(job)`` for every job and yields ``(job, result or exception)`` in completion order.

    Args:
        task: A picklable top-level function of one job.
        jobs: The jobs (picklable).
        workers: Parallel processes (``local``) or concurrent tasks (``ray``).
        executor: ``local`` or ``ray``.
        address: A Ray cluster's address (``ray://host:10001`` or ``auto``); a local Ray is started
            when None and ``RAY_ADDRESS`` is unset.
        cancelled: Polled between results; True stops the run (tasks not started are dropped).

    Raises:
        Real2GymError: An unknown executor, or Ray asked for but not installed.
    """
    if executor not in EXECUTORS:
        raise Real2GymError(f"unknown executor '{executor}'; use one of {', '.join(EXECUTORS)}")
    if executor == "ray":
        return _ray(task, jobs, workers, address, cancelled)
    if workers <= 1:
        return _here(task, jobs, cancelled)
    return _pool(task, jobs, workers, cancelled)


def _here(task, jobs: Iterable, cancelled) -> Iterator:
    for job in jobs:
        if cancelled is not None and cancelled():
            return
        yield job, _guarded(task, job)


def _guarded(task, job):
    try:
        return task(job)
    except Exception as e:  # noqa: BLE001 - one variant's crash is that variant's result, not the batch's end
        return e


def _pool(task, jobs: list, workers: int, cancelled) -> Iterator:
    context = multiprocessing.get_context("spawn")  # no fork of a process that holds OpenGL or Blender
    initializer, arguments = _worker_setup(task)
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=initializer, initargs=arguments
    )
    try:
        with _main_script_hidden():  # the workers start as the jobs are submitted
            futures = {pool.submit(task, job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            if cancelled is not None and cancelled():
                return
            try:
                yield futures[future], future.result()
            except Exception as e:  # noqa: BLE001 - a worker that died: recorded for its variant
                yield futures[future], e
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _worker_setup(task: Callable) -> tuple[Callable | None, tuple]:
    """What a worker runs first so that it can import ``task``'s module: nothing in plain Python.

    A package made in memory rather than found by the import system (no ``__spec__``:
    Blender's ``bl_ext`` and ``bl_ext.<repository>`` above an extension) cannot be imported
    by a fresh interpreter; the worker makes it with the parent's folders before it
    unpickles its first task.
    """
    parts = task.__module__.split(".")
    packages = []
    for end in range(1, len(parts)):
        module = sys.modules.get(".".join(parts[:end]))
        if module is not None and getattr(module, "__spec__", None) is None:
            packages.append((module.__name__, list(getattr(module, "__path__", None) or [])))
    if not packages:
        return None, ()
    return runpy.run_path, (str(_PACKAGES_SCRIPT), {"PACKAGES": packages})


@contextlib.contextmanager
def _main_script_hidden():
    """Hides the main script's path from spawned workers, which would otherwise run it first.

    multiprocessing re-runs a main script (``__main__`` with a file and no module spec) in
    each worker, for functions defined there; the tasks here never are.
    """
    main = sys.modules.get("__main__")
    path = None
    if main is not None and getattr(main, "__spec__", None) is None:
        path = main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        if path is not None:
            main.__file__ = path


def _ray(task, jobs: list, workers: int, address: str | None, cancelled) -> Iterator:
    try:
        import ray
    except ImportError as e:
        raise Real2GymError(
            "--executor ray needs Ray, which is not installed here: pip install 'ray[default]' "
            "(or use --executor local)"
        ) from e
    started_here = not ray.is_initialized()
    if started_here:
        address = address or os.environ.get("RAY_ADDRESS")
        options = {"address": address} if address else {"num_cpus": max(1, workers)}
        ray.init(include_dashboard=False, log_to_driver=False, **options)
    try:
        remote = ray.remote(num_cpus=1)(task)
        refs = {remote.remote(job): job for job in jobs}
        pending = list(refs)
        while pending:
            if cancelled is not None and cancelled():
                for ref in pending:
                    ray.cancel(ref, force=True)
                return
            done, pending = ray.wait(pending, num_returns=1)
            try:
                yield refs[done[0]], ray.get(done[0])
            except Exception as e:  # noqa: BLE001 - ray.exceptions.RayTaskError: recorded for its variant
                yield refs[done[0]], e
    finally:
        if started_here:
            ray.shutdown()
