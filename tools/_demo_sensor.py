"""Make rendered images look like a real RGB-D sensor's.

Colour: slight optical blur and Gaussian read noise (the video codec adds compression
on top). Depth: a stereo-like sensor; the error grows with the square of the depth,
is spatially smooth (it comes from matching windows) and quantised in sub-pixel
disparity steps; readings are missing at depth edges, in random dropout blobs and out
of range. The noise is kept smooth so that 16-bit PNGs still compress.
"""

from __future__ import annotations

import cv2
import numpy as np

DEPTH_SCALE = 0.001  # metres per depth unit
_BASELINE_M = 0.05  # virtual stereo baseline
_SUBPIXEL = 4  # disparity steps per pixel
_RANGE_M = (0.15, 3.0)


def _smooth_field(rng: np.random.Generator, shape: tuple[int, int], cell: int) -> np.ndarray:
    """Zero-mean, unit-variance-ish noise that varies over about ``cell`` pixels."""
    h, w = shape
    coarse = rng.normal(0.0, 1.0, (h // cell + 2, w // cell + 2)).astype(np.float32)
    field = cv2.resize(coarse, (w + 2 * cell, h + 2 * cell), interpolation=cv2.INTER_CUBIC)
    return field[cell : cell + h, cell : cell + w]


def noisy_rgb(rgb: np.ndarray, rng: np.random.Generator, sigma: float = 2.0) -> np.ndarray:
    """Blur an image slightly and add read noise.

    Args:
        rgb: Clean image, (H, W, 3) uint8.
        rng: Random generator.
        sigma: Standard deviation of the read noise, in 8-bit levels.

    Returns:
        The noisy image, (H, W, 3) uint8.
    """
    blurred = cv2.GaussianBlur(rgb, (0, 0), 0.7).astype(np.float32)
    grain = rng.normal(0.0, sigma, rgb.shape).astype(np.float32)
    shading = 1.0 + 0.015 * _smooth_field(rng, rgb.shape[:2], 64)[..., None]
    return np.clip(blurred * shading + grain, 0, 255).astype(np.uint8)


def sensor_depth(
    depth: np.ndarray, fx: float, rng: np.random.Generator, noise_at_half_metre: float = 0.0
) -> np.ndarray:
    """Turn a perfect depth image into a plausible stereo depth sensor's output.

    Args:
        depth: z-depth along the optical axis (m), (H, W); 0 = nothing there.
        fx: Focal length in pixels (sets the disparity quantisation).
        rng: Random generator.
        noise_at_half_metre: 0 for a good structured-light-like sensor; else the depth
            noise (m, one sigma) at 0.5 m of a consumer stereo camera (a ZED on a desk:
            about 0.02), nearly all of it smooth over ~12 px, a little per pixel, with 15-30 %
            of the readings missing in patches (textureless and dark areas).

    Returns:
        Depth in units of ``DEPTH_SCALE`` metres, (H, W) uint16; 0 = no reading.
    """
    h, w = depth.shape
    valid = (depth > _RANGE_M[0]) & (depth < _RANGE_M[1])
    safe = np.where(valid, depth, 1.0).astype(np.float32)
    disparity = fx * _BASELINE_M / safe
    # Matching error of about 0.06 px, smooth over ~32 px, then quarter-pixel steps:
    # at 0.65 m about 0.8 mm of noise and 3.4 mm steps, both growing with depth^2.
    disparity += 0.06 * _smooth_field(rng, (h, w), 32)
    if noise_at_half_metre:
        # dz = z^2 / (fx b) * dd: the disparity error giving that noise at 0.5 m.
        sigma_px = noise_at_half_metre * fx * _BASELINE_M / 0.25
        # Smooth, as block matching and the camera's own filtering leave it (a ZED's depth varies about
        # a millimetre at 1 m between neighbouring pixels, though a centimetre over a desk); a little per pixel.
        disparity += sigma_px * (
            _smooth_field(rng, (h, w), 12) + 0.05 * rng.normal(0.0, 1.0, (h, w)).astype(np.float32)
        )
    disparity = np.round(disparity * _SUBPIXEL) / _SUBPIXEL
    noisy = fx * _BASELINE_M / np.maximum(disparity, 1e-3)

    # Missing readings where the depth jumps (occlusion boundaries), a little dilated.
    grad = np.maximum(
        np.abs(cv2.Sobel(safe, cv2.CV_32F, 1, 0, ksize=3)),
        np.abs(cv2.Sobel(safe, cv2.CV_32F, 0, 1, ksize=3)),
    )
    edges = ((grad > 0.08) & valid).astype(np.uint8)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8)) > 0
    ragged = _smooth_field(rng, (h, w), 4) > -0.3
    holes = edges & ragged
    # Dropout blobs: where a smooth random field peaks, more often far away.
    blobs = _smooth_field(rng, (h, w), 24) > 2.3 - 0.4 * np.clip(safe - 0.5, 0, 2)
    holes |= blobs
    if noise_at_half_metre:
        missing = rng.uniform(0.15, 0.30)
        field = _smooth_field(rng, (h, w), 16)
        holes |= field > np.quantile(field, 1.0 - missing)

    out = np.round(noisy / DEPTH_SCALE)
    out[~valid | holes] = 0
    return np.clip(out, 0, 65535).astype(np.uint16)
