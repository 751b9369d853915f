"""Completes a mask that covers only part of a resting object, from the depth beside it.

A classical mask often holds one face of an object and misses the next: the lit top
of a block seen from above but not its shaded side, or the part a shadow crosses.
The shape fitted to that half is half as large. :func:`grow_in_depth` adds the pixels
next to the mask that rise above the table no higher than the masked part does and
join it without a depth jump (:func:`.depth_clean.clean_depth` empties the jumps),
so a face that continues the object joins it and the table, the gripper above it and
the other objects do not. Then the band without a usable reading along the grown part's
outline joins where its raw readings rise above the table or where there are none (depth
cameras drop readings at an object's edge): that edge is the object's, and the silhouette
fit needs it (a 2-pixel band missing all round makes a 4 cm block 14 % small).
"""

from __future__ import annotations

import cv2
import numpy as np

from ..demo import Camera
from .depth_clean import clean_depth, readings

MIN_RISE = 0.006
"""A grown pixel stands at least this far (m) above the table ..."""

RISE_SIGMAS = 3.0
"""... and at least this many depth-noise sigmas, so noisy table depth does not join."""

TOP_MARGIN = 0.01
"""A grown pixel is no higher (m) than the masked part's top plus this."""

REACH = 1.0
"""Growth stays within this many times the mask's own extent of it."""

EDGE_BAND = 2
"""Pixels of the emptied band along the outline that may join it."""

LEVEL_BIN = 0.002
"""m of the table's true depth: the table's pixels are grouped by where the plane puts them, this finely,
and each group's own reading is the level a pixel there must rise above."""

LEVEL_MIN_PIXELS = 12
"""A group of the table's pixels measures its level only with at least this many readings."""

NEAR_MASK = 3
"""Pixels round the mask that do not measure the table (its edge's mixed readings)."""


def grow_in_depth(
    mask: np.ndarray,
    depth: np.ndarray,
    camera: Camera,
    world_from_camera: np.ndarray,
    blocked: np.ndarray | None = None,
    noise_1m: float = 0.0,
) -> np.ndarray:
    """The mask with the depth-connected part of its object that it missed.

    Args:
        mask: ``HxW`` bool, one object's mask on a frame where it rests on the table.
        depth: ``HxW`` depth in metres as read (0, NaN = no reading).
        camera: Intrinsics (pixels).
        world_from_camera: 4x4 camera pose on this frame (z-up world, table at z = 0).
        blocked: ``HxW`` bool pixels no growth may take (the other objects' masks).
        noise_1m: Depth noise at 1 m (m); the rise a pixel needs grows with it.

    Returns:
        ``HxW`` bool, a superset of ``mask`` (``mask`` itself when nothing joins).
    """
    rows, cols = np.nonzero(mask)
    if len(rows) < 10:
        return mask
    extent = int(max(np.ptp(rows), np.ptp(cols))) + 1
    reach = int(np.ceil(REACH * extent))
    top, left = max(rows.min() - reach, 0), max(cols.min() - reach, 0)
    bottom, right = min(rows.max() + reach + 1, mask.shape[0]), min(cols.max() + reach + 1, mask.shape[1])
    raw = readings(depth[top:bottom, left:right]).astype(np.float64)
    z = clean_depth(raw, noise_1m).astype(np.float64)
    v, u = np.mgrid[top:bottom, left:right].astype(np.float64)
    rays = np.stack([(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, np.ones_like(u)], axis=-1)
    up = rays @ world_from_camera[2, :3]
    inside = mask[top:bottom, left:right]
    height = z * up + world_from_camera[2, 3]
    masked = height[inside & (z > 0)]
    if len(masked) < 10:
        return mask
    ceiling = float(np.percentile(masked, 98)) + TOP_MARGIN
    free = cv2.dilate(inside.astype(np.uint8), np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)) > 0
    if blocked is not None:
        free &= ~blocked[top:bottom, left:right]

    envelope = np.maximum(MIN_RISE, RISE_SIGMAS * noise_1m * z**2)
    level = _table_level(height, z, up, world_from_camera[2, 3], envelope, free & ~_near(inside))

    def raised(depth_m: np.ndarray, rise: np.ndarray | None = None) -> np.ndarray:
        h = depth_m * up + world_from_camera[2, 3]
        if rise is None:
            rise = np.maximum(MIN_RISE, RISE_SIGMAS * noise_1m * depth_m**2)
        return (depth_m > 0) & (h > rise) & (h < ceiling) & free

    region = raised(z, level) | inside
    count, labels = cv2.connectedComponents(region.astype(np.uint8), connectivity=4)
    joined = np.unique(labels[inside])
    region = np.isin(labels, joined[joined > 0]) | inside
    # Only the grown part's outline: where the mask already reached the object's edge, its
    # own outline stands.
    band = (z == 0) & (raised(raw) | ((raw == 0) & free))
    added = region & ~inside
    for _ in range(EDGE_BAND):
        step = band & ~region & (cv2.dilate(added.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0)
        added |= step
        region |= step
    grown = mask.copy()
    grown[top:bottom, left:right] |= region
    return grown


def _near(inside: np.ndarray) -> np.ndarray:
    size = 2 * NEAR_MASK + 1
    return cv2.dilate(inside.astype(np.uint8), np.ones((size, size), np.uint8)) > 0


def _table_level(
    height: np.ndarray,
    z: np.ndarray,
    up: np.ndarray,
    camera_height: float,
    envelope: np.ndarray,
    table: np.ndarray,
) -> np.ndarray:
    """Per pixel of the window: how high a pixel must stand to be off the table there (m).

    The table's noise has structure: a stereo camera's depth is quantised in disparity, so the table
    reads in bands of one true depth each, a band a centimetre and more above the plane beside one at
    it (the generators' stereo-like depth: rows up to 13.5 mm up at 1.1 m). One rise for the window
    (the noise's 3 sigma) either lets such a band join an object touching it or cuts an object's low
    edge that stands 1-2 cm up. So the table is read where it is: its pixels (within the noise's
    envelope of the plane, away from the mask) grouped by the true depth the plane gives them, each
    group's median is its level, and a pixel must stand :data:`MIN_RISE` (or three sigmas of what is
    left, the noise about the levels, where that is more) above its group's level; never more than the
    envelope.

    Args:
        height: Window heights above the table (m), where ``z`` reads.
        z: Window depth (m), 0 = no reading.
        up: Per pixel, the ray's world-z per metre of depth.
        camera_height: The camera's height above the table (m).
        envelope: Per pixel, the noise's rise (the rise without the levels).
        table: Pixels that may measure the table (free, away from the mask).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        plane_depth = np.where(up < 0, -camera_height / up, np.inf)
    candidates = table & (z > 0) & (np.abs(height) <= envelope) & np.isfinite(plane_depth)
    if candidates.sum() < LEVEL_MIN_PIXELS:
        return envelope
    finite = np.isfinite(plane_depth)
    bins = np.full(z.shape, -1, np.int64)
    low = float(plane_depth[finite].min())
    bins[finite] = ((plane_depth[finite] - low) / LEVEL_BIN).astype(np.int64)
    groups = bins[candidates]
    values = height[candidates]
    order = np.argsort(groups, kind="stable")
    groups, values = groups[order], values[order]
    edges = np.flatnonzero(np.diff(groups)) + 1
    starts, ends = np.r_[0, edges], np.r_[edges, len(groups)]
    counts = ends - starts
    keep = counts >= LEVEL_MIN_PIXELS
    if not keep.any():
        return envelope
    centres = groups[starts[keep]].astype(float)
    levels = np.array([np.median(values[a:b]) for a, b in zip(starts[keep], ends[keep], strict=True)])
    residual = values - np.interp(groups.astype(float), centres, levels)
    spread = 1.4826 * float(np.median(np.abs(residual)))
    level = np.interp(np.where(bins >= 0, bins, 0).astype(float), centres, levels)
    rise = np.maximum(level, 0.0) + max(MIN_RISE, RISE_SIGMAS * spread)
    return np.minimum(rise, envelope)
