"""Depth as real cameras give it: invalid readings, mixed pixels and noise that grows with distance.

:func:`clean_depth` sets to 0 (no reading) what no fit should use: zeros, NaN,
infinities, readings beyond :data:`MAX_DEPTH`, the mixed ("flying") pixels a
stereo or time-of-flight camera puts between a near surface and the one
behind it, and the borders of holes. :func:`patch_noise` measures the fine-scale depth noise from
local plane fits on small patches, as ``sigma(z) = sigma_1m * z**2`` (stereo
noise grows with the square of the distance).
"""

from __future__ import annotations

import cv2
import numpy as np

from ..demo import Camera

MAX_DEPTH = 8.0
"""Readings beyond this many metres are treated as none (stereo cameras report wild far values)."""

JUMP_FRACTION = 0.04
"""A pixel whose 3x3 neighbourhood spans more than this share of its depth lies on a discontinuity."""

JUMP_SIGMAS = 6.0
"""... and more than this many depth-noise sigmas (noise alone rarely spans it in nine pixels)."""

NEIGHBOURHOOD = np.ones((3, 3), np.uint8)
"""The neighbourhood of the discontinuity test (a pixel and its eight neighbours)."""

NOISE_PATCH = 16
"""Side in pixels of the patches whose plane residuals measure the fine-scale noise."""

NOISE_PATCH_VALID = 0.9
"""A patch is used for the noise only when this share of its pixels has a reading."""


def readings(depth: np.ndarray, max_depth: float = MAX_DEPTH) -> np.ndarray:
    """The depth with invalid readings (0, NaN, inf, negative, beyond ``max_depth`` m) set to 0, float32."""
    valid = np.nan_to_num(np.asarray(depth, np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    valid[(valid < 0) | (valid > max_depth)] = 0.0
    return valid


def clean_depth(depth: np.ndarray, noise_1m: float = 0.0, max_depth: float = MAX_DEPTH) -> np.ndarray:
    """Drops invalid readings, mixed pixels at depth discontinuities and the borders of holes.

    Args:
        depth: ``HxW`` z-depth in metres, 0 (or NaN, inf, negative) = no reading.
        noise_1m: Depth noise at 1 m in metres (see :func:`patch_noise`); a
            neighbourhood must span more than :data:`JUMP_SIGMAS` noise sigmas
            to count as a discontinuity, so very noisy depth is not emptied.
        max_depth: Readings beyond this many metres are dropped.

    Returns:
        ``HxW`` float32 metres, 0 where there is no usable reading. A pixel is
        0 when its 3x3 neighbourhood spans more than :data:`JUMP_FRACTION` of
        its depth (both sides of an object's edge and the flying pixels between
        them), or when it borders a hole of at least 3x3 pixels (stereo readings
        at a hole's border are unreliable, and a mixed pixel there has no second
        surface beside it to betray it); single missing pixels are no hole.
    """
    clean = readings(depth, max_depth)
    valid = clean > 0
    nearest = cv2.erode(np.where(valid, clean, np.float32(np.inf)), NEIGHBOURHOOD)
    farthest = cv2.dilate(clean, NEIGHBOURHOOD)
    jump = np.maximum(JUMP_FRACTION * clean, JUMP_SIGMAS * noise_1m * clean**2)
    holes = cv2.morphologyEx((~valid).astype(np.uint8), cv2.MORPH_OPEN, NEIGHBOURHOOD)  # not single drop-outs
    hole_border = cv2.dilate(holes, NEIGHBOURHOOD) > 0
    clean[(farthest - nearest > jump) | hole_border] = 0.0
    return clean


def patch_noise(camera: Camera, depth: np.ndarray, step: int = 2) -> float:
    """Fine-scale depth noise at 1 m from plane fits on small patches.

    Each :data:`NOISE_PATCH`-pixel patch that is nearly all valid gets a
    least-squares plane; its RMS residual over its depth squared estimates
    ``sigma_1m``. The median over patches is returned (edges and corners are a
    minority of patches). Stereo matchers
    smooth over their window, so this is a lower bound of the noise a large
    plane shows; :func:`.table.fit_table_frames` measures that on the table.

    Args:
        camera: Intrinsics (pixels).
        depth: ``HxW`` z-depth, metres, 0 = no reading (invalid values are dropped here).
        step: Pixel stride inside a patch (speed).

    Returns:
        ``sigma_1m`` in metres (the noise of a reading at 1 m); 0 when no patch is nearly all valid.
    """
    size = NOISE_PATCH
    rows, cols = depth.shape[0] // size, depth.shape[1] // size
    v, u = np.mgrid[0 : rows * size : step, 0 : cols * size : step].astype(np.float64)
    z = readings(depth)[: rows * size : step, : cols * size : step].astype(np.float64)
    points = np.stack([(u - camera.cx) * z / camera.fx, (v - camera.cy) * z / camera.fy, z], axis=-1)
    per_side = size // step
    points = points.reshape(rows, per_side, cols, per_side, 3).transpose(0, 2, 1, 3, 4)
    points = points.reshape(rows * cols, per_side * per_side, 3)
    weight = (points[..., 2] > 0).astype(np.float64)
    full = weight.mean(axis=1) >= NOISE_PATCH_VALID
    if not full.any():
        return 0.0
    points, weight = points[full], weight[full]
    count = weight.sum(axis=1)
    centre = (points * weight[..., None]).sum(axis=1) / count[:, None]
    centred = (points - centre[:, None]) * weight[..., None]
    covariance = np.einsum("pni,pnj->pij", centred, centred) / count[:, None, None]
    mean_square = np.clip(np.linalg.eigvalsh(covariance)[:, 0], 0.0, None)
    ratios = np.sqrt(mean_square) / centre[:, 2] ** 2
    return float(np.median(ratios))
