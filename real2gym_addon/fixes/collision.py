"""Collision geometry choices for an object: primitives, walls, a convex hull, CoACD pieces.

``primitives``: the shape's own boxes and cylinders (for a cup: a bottom disc and a
ring of wall boxes, which is also what ``walls`` builds: the cavity-preserving set).
``hull``: one convex hull of the visual mesh (closes a container's opening).
``coacd``: an approximate convex decomposition of the visual mesh with CoACD,
run in a separate process under a time limit so a bad mesh cannot hang the tool.
The process runs ``_coacd_worker.py`` as a script with the parent's ``sys.path``,
not a ``multiprocessing`` child: inside Blender the add-on's package is not
importable by name from a fresh interpreter, and a spawned child re-runs
Blender's main script.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from ..errors import Real2GymError
from ..geometry.shapes import Shape

COLLISION_MODES = ("primitives", "walls", "hull", "coacd")
COACD_TIME_LIMIT_S = 120.0
_WORKER = Path(__file__).with_name("_coacd_worker.py")


WORKER_NICENESS = 10
"""How much lower than the caller's (Blender's interface) the CoACD process runs (POSIX niceness)."""


def _lower_priority() -> None:
    os.nice(WORKER_NICENESS)


class CollisionError(Real2GymError):
    """A collision choice cannot be made for this object; its previous collision is kept."""


def coacd_pieces(
    shape: Shape, threshold: float = 0.05, max_pieces: int = 16, time_limit: float = COACD_TIME_LIMIT_S
) -> list[np.ndarray]:
    """Decomposes the shape's visual mesh into convex pieces with CoACD.

    Args:
        shape: The object's shape (its mesh is decomposed in the local frame).
        threshold: CoACD's concavity threshold (smaller: more, tighter pieces).
        max_pieces: The most pieces to keep (-1: no limit).
        time_limit: Seconds before giving up.

    Returns:
        The pieces' vertices (``Nx3`` each, local frame, metres).

    Raises:
        CollisionError: CoACD is missing, fails, or takes longer than ``time_limit``.
    """
    try:
        import coacd  # noqa: F401
    except ImportError as e:
        raise CollisionError(
            "CoACD is not installed (pip install coacd); the previous collision is kept"
        ) from e
    if not 0.01 <= threshold <= 1.0:
        raise CollisionError(f"CoACD threshold must be within 0.01 and 1, got {threshold}")
    mesh = shape.mesh()
    request = io.BytesIO()
    np.savez(
        request,
        vertices=np.asarray(mesh.vertices, float),
        faces=np.asarray(mesh.faces, np.int64),
        threshold=float(threshold),
        max_pieces=int(max_pieces),
    )
    # Below the interface's priority, and a core left to it: CoACD's threads took both of a 2-core machine's,
    # and Blender's timers fired once a second while it ran.
    threads = str(max(1, (os.cpu_count() or 2) - 1))
    environment = dict(
        os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), OMP_NUM_THREADS=threads
    )
    worker = subprocess.Popen(
        [sys.executable, str(_WORKER)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
        preexec_fn=_lower_priority if os.name == "posix" else None,
    )  # fmt: skip
    try:
        output, errors = worker.communicate(request.getvalue(), timeout=time_limit)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
        raise CollisionError(
            f"CoACD took longer than {time_limit:.0f} s on this mesh; the previous collision is kept "
            "(try a larger threshold or fewer pieces)"
        ) from None
    if worker.returncode != 0:
        lines = [line for line in errors.decode(errors="replace").splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {worker.returncode}"
        raise CollisionError(f"CoACD failed ({reason}); the previous collision is kept")
    parts = np.load(io.BytesIO(output))
    pieces = [parts[f"v{i}"] for i in range(len(parts.files) // 2) if len(parts[f"v{i}"]) >= 4]
    if not pieces:
        raise CollisionError("CoACD returned no usable piece; the previous collision is kept")
    return pieces


def set_collision(
    shape: Shape,
    mode: str,
    threshold: float = 0.05,
    max_pieces: int = 16,
    time_limit: float = COACD_TIME_LIMIT_S,
) -> Shape:
    """Returns a copy of ``shape`` with the chosen collision.

    Args:
        shape: The object's shape.
        mode: One of :data:`COLLISION_MODES`.
        threshold: CoACD's concavity threshold (``coacd`` only).
        max_pieces: The most CoACD pieces (``coacd`` only).
        time_limit: Seconds CoACD may take (``coacd`` only).

    Raises:
        CollisionError: Unknown mode, ``walls`` on a shape without a cavity, or CoACD failing.
    """
    import dataclasses

    if mode not in COLLISION_MODES:
        raise CollisionError(f"unknown collision {mode!r}; use one of {', '.join(COLLISION_MODES)}")
    if mode == "walls" and not shape.is_container:
        raise CollisionError(f"cavity-preserving walls need a container (cup or bowl), not a {shape.kind}")
    params = {k: v for k, v in shape.params.items() if not k.startswith("coacd_")}
    fresh = dataclasses.replace(
        shape, params=params, collision="primitives" if mode == "walls" else mode, hulls=None
    )
    if mode == "coacd":
        fresh.hulls = coacd_pieces(shape, threshold, max_pieces, time_limit)
        fresh.params.update(coacd_threshold=threshold, coacd_max_pieces=float(max_pieces))
    return fresh
