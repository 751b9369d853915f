"""Collision geometry choices for an object: primitives, walls, a convex hull, CoACD pieces.

``primitives``: the shape's own boxes and cylinders (for a cup: a bottom disc and a
ring of wall boxes, which is also what ``walls`` builds: the cavity-preserving set).
``hull``: one convex hull of the visual mesh (closes a container's opening).
``coacd``: an approximate convex decomposition of the visual mesh with CoACD,
run in a separate process under a time limit so a bad mesh cannot hang the tool.
"""

from __future__ import annotations

import multiprocessing
import queue

import numpy as np

from ..errors import Real2GymError
from ..geometry.shapes import Shape

COLLISION_MODES = ("primitives", "walls", "hull", "coacd")
COACD_TIME_LIMIT_S = 120.0


class CollisionError(Real2GymError):
    """A collision choice cannot be made for this object; its previous collision is kept."""


def _coacd_worker(vertices, faces, threshold, max_pieces, results) -> None:
    try:
        import coacd

        coacd.set_log_level("error")
        parts = coacd.run_coacd(coacd.Mesh(vertices, faces), threshold=threshold, max_convex_hull=max_pieces)
        results.put(("ok", [(np.asarray(v), np.asarray(f)) for v, f in parts]))
    except Exception as e:  # reported to the parent with its message
        results.put(("error", f"{type(e).__name__}: {e}"))


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
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    worker = context.Process(
        target=_coacd_worker,
        args=(np.asarray(mesh.vertices), np.asarray(mesh.faces), threshold, max_pieces, results),
        daemon=True,
    )
    worker.start()
    try:
        status, value = results.get(timeout=time_limit)
    except queue.Empty:
        worker.terminate()
        raise CollisionError(
            f"CoACD took longer than {time_limit:.0f} s on this mesh; the previous collision is kept "
            "(try a larger threshold or fewer pieces)"
        ) from None
    finally:
        worker.join(timeout=5)
    if status != "ok":
        raise CollisionError(f"CoACD failed ({value}); the previous collision is kept")
    pieces = [v for v, _ in value if len(v) >= 4]
    if not pieces:
        raise CollisionError("CoACD returned no usable piece; the previous collision is kept")
    return pieces


def set_collision(shape: Shape, mode: str, threshold: float = 0.05, max_pieces: int = 16) -> Shape:
    """Returns a copy of ``shape`` with the chosen collision.

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
        fresh.hulls = coacd_pieces(shape, threshold, max_pieces)
        fresh.params.update(coacd_threshold=threshold, coacd_max_pieces=float(max_pieces))
    return fresh
