"""An object's distance along the camera's rays: the median depth residual of its points.

Depth noise lies along the camera's rays. Fitting a shape by its points' distance to
its surface is biased under such noise: a point behind the seen face, inside the
object, is nearer to a side face than to the face its ray meets, so it pulls less than
a point as far in front does, and the fit comes out nearer the camera (by millimetres
once the noise is a fair share of the object's size). Along each point's ray the
residual (the measured distance less the distance at which the ray meets the posed
shape) is unbiased, and its median over the points is a robust measure of how far the
object is: :func:`along_rays` moves a fitted pose along the view until that median is 0.
"""

from __future__ import annotations

import numpy as np

from .camera import orientation
from .distance import surface_distance
from .shapes import Shape

TRACE_STEPS = 32
"""Sphere-tracing steps per ray (a ray meeting a face head-on converges in a few)."""
MAX_RAYS = 200
"""Rays traced per frame (a fixed subset): their median is as sure as it needs to be."""
HIT = 0.0005
"""m: a traced ray this close to the surface has met it."""
MIN_HITS = 20
"""Fewer rays than this meet the posed shape: its distance is left as fitted."""
MIN_SLOPE = 0.2
"""Where moving an object along its allowed direction changes its rays' median residual by less than this
share of the move (a resting object seen from straight above), its distance is left as fitted."""


def ray_residuals(
    shape: Shape, position: np.ndarray, rotation: np.ndarray, points_world: np.ndarray, eye: np.ndarray
) -> np.ndarray:
    """Measured distance less the distance at which each point's ray meets the posed shape (m).

    Args:
        shape: The shape.
        position: (3,) its centre, world frame (m).
        rotation: 3x3 its world rotation.
        points_world: ``Nx3`` depth points, world frame (m).
        eye: (3,) the camera's centre, world frame (m).

    Returns:
        ``N`` residuals, positive where a point lies beyond the surface; NaN where its ray misses the shape.
    """
    eye_local = (eye - position) @ rotation
    local = (points_world - position) @ rotation
    offset = local - eye_local
    measured = np.linalg.norm(offset, axis=1)
    direction = offset / np.maximum(measured, 1e-12)[:, None]
    reach = 0.5 * float(np.linalg.norm(shape.size))  # the bounding box's, centred on the origin
    # No ray meets the shape before its bounding sphere.
    t = np.full(len(local), max(0.0, float(np.linalg.norm(eye_local)) - reach))
    limit = float(np.linalg.norm(eye_local)) + reach
    gap = np.full(len(local), np.inf)
    for _ in range(TRACE_STEPS):
        going = (gap > HIT / 4) & (t < limit)
        if not going.any():
            break
        gap[going] = surface_distance(shape, eye_local + t[going, None] * direction[going])
        t[going] += np.maximum(gap[going], 0.0)
    return np.where(np.abs(gap) < HIT, measured - t, np.nan)


def _median_residual(shape, position, rotation, points_world, eye) -> float | None:
    residuals = ray_residuals(shape, position, rotation, points_world, eye)
    hits = residuals[np.isfinite(residuals)]
    return float(np.median(hits)) if len(hits) >= MIN_HITS else None


def along_rays(
    shape: Shape,
    fit: tuple[np.ndarray, float, np.ndarray, float],
    points_world: np.ndarray,
    eye: np.ndarray,
    keep_height: bool = False,
) -> tuple[np.ndarray, float, np.ndarray, float]:
    """The fitted pose moved along the view until its points' median ray residual is 0.

    Args:
        shape: The fitted shape.
        fit: ``(position, yaw, tilt, rms)`` as :func:`.motion.align` returns it.
        points_world: ``Nx3`` the points it was fitted to, world frame (m).
        eye: (3,) the camera's centre, world frame (m).
        keep_height: The object rests at a known height: it moves only along the table,
            along the view's horizontal part.

    Returns:
        The fit with its position moved (yaw, tilt and rms as given); unchanged where too
        few rays meet the shape or the move would not change what the rays see.
    """
    position, yaw, tilt, rms = fit
    if len(points_world) > MAX_RAYS:
        points_world = points_world[
            np.random.default_rng(0).choice(len(points_world), MAX_RAYS, replace=False)
        ]
    rotation = orientation(yaw, tilt if np.any(tilt) else None)
    view = np.asarray(position, float) - eye
    if keep_height:
        view[2] = 0.0
    norm = float(np.linalg.norm(view))
    first = _median_residual(shape, position, rotation, points_world, eye)
    if first is None or norm < 1e-9 or abs(first) < 1e-5:
        return fit
    view /= norm
    # Moving the object a distance s along the view lowers the median by about s (head-on faces); the
    # slope is measured, so a resting object seen from above, or a top face, is not pushed along the table.
    trial = first
    second = _median_residual(shape, position + trial * view, rotation, points_world, eye)
    if second is None:
        return fit
    slope = (second - first) / trial
    if slope > -MIN_SLOPE:
        return fit
    step = float(np.clip(-first / slope, -0.5 * min(shape.size), 0.5 * min(shape.size)))
    return position + step * view, yaw, tilt, rms
