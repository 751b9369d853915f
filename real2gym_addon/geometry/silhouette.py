"""Silhouettes of posed shapes in the image, and how well they match masks."""

from __future__ import annotations

import cv2
import numpy as np

from ..demo import Camera
from .camera import project, transform
from .shapes import Shape


def silhouette_polygon(shape: Shape, camera_from_object: np.ndarray, camera: Camera) -> np.ndarray:
    """The convex outline of a posed shape in pixels (``Kx2`` float32).

    Args:
        shape: The shape (local frame, z up, origin at the box centre).
        camera_from_object: 4x4 pose of the shape in the camera frame.
        camera: Intrinsics.
    """
    pixels = project(camera, transform(camera_from_object, shape.outline_points()))
    return cv2.convexHull(pixels.astype(np.float32)).reshape(-1, 2)


def polygon_coverage(polygon: np.ndarray, x0: int, y0: int, width: int, height: int) -> np.ndarray:
    """How much of each pixel a convex polygon covers, in ``[0, 1]`` (``height x width``).

    Pixel ``(u, v)`` is the unit square centred on ``(u, v)``, as the masks are
    sampled. The coverage is the signed distance of the pixel centre to the
    outline plus one half, clipped: exact for a straight edge through the pixel,
    and unbiased, where filling the polygon with a line-drawing rasteriser adds
    about half a pixel all round (a fit against it shrinks small objects by a few
    per cent).

    Args:
        polygon: ``Kx2`` pixels, convex, in either winding.
        x0: The window's left pixel column.
        y0: The window's top pixel row.
        width: The window's width in pixels.
        height: The window's height in pixels.
    """
    points = np.asarray(polygon, float)
    if len(points) < 3:
        return np.zeros((height, width))
    edges = np.roll(points, -1, axis=0) - points
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    keep = lengths > 1e-9
    points, edges, lengths = points[keep], edges[keep], lengths[keep]
    if len(points) < 3:
        return np.zeros((height, width))
    # Inward normals: the polygon's area sign gives the winding.
    area = np.sum(points[:, 0] * np.roll(points[:, 1], -1) - np.roll(points[:, 0], -1) * points[:, 1])
    normals = np.c_[-edges[:, 1], edges[:, 0]] / lengths[:, None] * np.sign(area or 1.0)
    offsets = np.einsum("ij,ij->i", normals, points)
    us = np.arange(x0, x0 + width, dtype=float)
    vs = np.arange(y0, y0 + height, dtype=float)
    # Distance inside every edge's half-plane; the smallest is the distance to the outline.
    inside = (
        normals[:, 0, None, None] * us[None, None, :]
        + normals[:, 1, None, None] * vs[None, :, None]
        - offsets[:, None, None]
    ).min(axis=0)
    return np.clip(inside + 0.5, 0.0, 1.0)


def silhouette_iou(polygon: np.ndarray, mask: np.ndarray, margin: int = 4) -> float:
    """IoU between a convex polygon (with pixel coverage) and a mask, in their joint bounding box.

    Args:
        polygon: ``Kx2`` pixels, convex.
        mask: ``HxW`` bool.
        margin: Extra pixels around the joint box.
    """
    return 1.0 - silhouette_mismatch(polygon, mask, 1.0, margin)


def silhouette_mismatch(
    polygon: np.ndarray, mask: np.ndarray, unseen_weight: float, margin: int = 4
) -> float:
    """How badly a convex polygon explains a mask that may be partly occluded, in ``[0, 1]``.

    Mask pixels the polygon misses count fully; polygon pixels outside the mask
    (the object may be hidden there, behind a hand or a gripper) count
    ``unseen_weight``. With a weight of 1 this is one minus the IoU.

    Args:
        polygon: ``Kx2`` pixels, convex.
        mask: ``HxW`` bool: the seen part of the object.
        unseen_weight: Cost of a polygon pixel the mask does not show, in ``[0, 1]``.
        margin: Extra pixels around the joint box.
    """
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return 1.0
    x0 = int(max(0, min(xs.min(), np.floor(polygon[:, 0].min())) - margin))
    y0 = int(max(0, min(ys.min(), np.floor(polygon[:, 1].min())) - margin))
    x1 = int(min(w, max(xs.max(), np.ceil(polygon[:, 0].max())) + margin + 1))
    y1 = int(min(h, max(ys.max(), np.ceil(polygon[:, 1].max())) + margin + 1))
    if x1 <= x0 or y1 <= y0:
        return 1.0
    coverage = polygon_coverage(polygon, x0, y0, x1 - x0, y1 - y0)
    crop = mask[y0:y1, x0:x1]
    union = np.maximum(coverage, crop).sum()
    if not union:
        return 1.0
    missed = (crop * (1.0 - coverage)).sum()
    unseen = (coverage * ~crop).sum()
    return float((missed + unseen_weight * unseen) / union)
