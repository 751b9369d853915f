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
    # Pixels more than two away from the outline are wholly in or out: a fill decides them.
    # Only the band along the outline needs the distance.
    coverage = np.zeros((height, width), np.float64)
    scaled = np.round((points - [x0, y0]) * 16).astype(np.int32)  # 4 fractional bits
    filled = np.zeros((height, width), np.uint8)
    cv2.fillPoly(filled, [scaled], 1, lineType=cv2.LINE_8, shift=4)
    band = np.zeros((height, width), np.uint8)
    cv2.polylines(band, [scaled], True, 1, thickness=5, lineType=cv2.LINE_8, shift=4)
    coverage[filled > 0] = 1.0
    rows, cols = np.nonzero(band)
    # Distance inside every edge's half-plane; the smallest is the distance to the outline.
    inside = (normals @ np.stack([cols + float(x0), rows + float(y0)]) - offsets[:, None]).min(axis=0)
    coverage[rows, cols] = np.clip(inside + 0.5, 0.0, 1.0)
    return coverage


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """``(x0, y0, x1, y1)`` of a mask's set pixels (inclusive), or None for an empty mask."""
    rows, cols = mask.any(axis=1), mask.any(axis=0)
    if not rows.any():
        return None
    y0, y1 = int(rows.argmax()), len(rows) - 1 - int(rows[::-1].argmax())
    x0, x1 = int(cols.argmax()), len(cols) - 1 - int(cols[::-1].argmax())
    return x0, y0, x1, y1


def silhouette_iou(polygon: np.ndarray, mask: np.ndarray, margin: int = 4) -> float:
    """IoU between a convex polygon (with pixel coverage) and a mask, in their joint bounding box.

    Args:
        polygon: ``Kx2`` pixels, convex.
        mask: ``HxW`` bool.
        margin: Extra pixels around the joint box.
    """
    return 1.0 - silhouette_mismatch(polygon, mask, 1.0, margin)


def silhouette_mismatch(
    polygon: np.ndarray,
    mask: np.ndarray,
    unseen_weight: float,
    margin: int = 4,
    hidden: np.ndarray | None = None,
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
        hidden: ``HxW`` bool, or None: pixels where something known stands in front of the object (its
            own door): the polygon may cover them or not at no cost.
    """
    if hidden is None or not hidden.any():
        return _mismatches(polygon, [mask], unseen_weight, margin)[0]
    sums = _coverage_sums(polygon, [mask, hidden & ~mask], margin)
    if sums[0] is None:
        return 1.0
    seen, covered, total = sums[0]
    behind = sums[1][1] if sums[1] is not None else 0.0
    missed, unseen = seen - covered, total - covered - behind
    return float((missed + unseen_weight * unseen) / (missed + total - behind))


def mask_outside(polygon: np.ndarray, mask: np.ndarray, margin: int = 4) -> float:
    """Share of a mask's pixels that a convex polygon does not cover, in ``[0, 1]`` (1 for an empty mask).

    What the silhouette of a partly seen object must explain: the part that shows lies inside it;
    where it reaches beyond the mask the object may be hidden.
    """
    sums = _coverage_sums(polygon, [mask], margin)[0]
    if sums is None:
        return 1.0
    seen, covered, _ = sums
    return (seen - covered) / seen


def silhouette_ious(
    polygon: np.ndarray, masks: list[np.ndarray], margin: int = 4, boxes: list | None = None
) -> list[float]:
    """:func:`silhouette_iou` of one polygon against several masks of one size (the outline's
    coverage is computed once, over the joint bounding box). ``boxes``: the masks' :func:`mask_box`, where
    the caller has them (a fit tries many polygons against the same masks)."""
    return [1.0 - mismatch for mismatch in _mismatches(polygon, masks, 1.0, margin, boxes)]


def _joint_box(
    polygon: np.ndarray, boxes: list, shape: tuple[int, int], margin: int
) -> tuple[int, int, int, int]:
    """``(x0, y0, x1, y1)``, end exclusive, of the polygon and the mask boxes together, ``margin`` pixels
    wider, within an image of ``shape``."""
    h, w = shape
    low, high = np.min(boxes, axis=0)[:2], np.max(boxes, axis=0)[2:]
    x0 = int(max(0, min(low[0], np.floor(polygon[:, 0].min())) - margin))
    y0 = int(max(0, min(low[1], np.floor(polygon[:, 1].min())) - margin))
    x1 = int(min(w, max(high[0], np.ceil(polygon[:, 0].max())) + margin + 1))
    y1 = int(min(h, max(high[1], np.ceil(polygon[:, 1].max())) + margin + 1))
    return x0, y0, x1, y1


def _coverage_sums(
    polygon: np.ndarray, masks: list[np.ndarray], margin: int, boxes: list | None = None
) -> list[tuple[int, float, float] | None]:
    """Per mask ``(seen, covered, total)``: its pixels, the polygon's coverage summed over them, and the
    coverage summed over the masks' and polygon's joint box; None for an empty mask (or one outside the
    image). ``boxes``: the masks' :func:`mask_box`, where the caller has them."""
    boxes = [mask_box(mask) for mask in masks] if boxes is None else boxes
    present = [box for box in boxes if box is not None]
    if not present:
        return [None] * len(masks)
    x0, y0, x1, y1 = _joint_box(polygon, present, masks[0].shape, margin)
    if x1 <= x0 or y1 <= y0:
        return [None] * len(masks)
    coverage = polygon_coverage(polygon, x0, y0, x1 - x0, y1 - y0)
    total = float(coverage.sum())
    sums = []
    for mask, box in zip(masks, boxes, strict=True):
        crop = mask[y0:y1, x0:x1] if box is not None else None
        seen = np.count_nonzero(crop) if crop is not None else 0
        sums.append((seen, float(coverage[crop].sum()), total) if seen else None)
    return sums


def _mismatches(
    polygon: np.ndarray, masks: list[np.ndarray], unseen_weight: float, margin: int, boxes: list | None = None
) -> list[float]:
    """:func:`silhouette_mismatch` against each mask; 1 for an empty mask.

    With the polygon's coverage ``c`` (in [0, 1]) and a mask's ``m`` pixels: missed = sum over m of (1 - c),
    unseen = sum of c off m, union = sum of max(c, m) = missed + sum of c; so one sum of c under the mask
    gives all three.
    """
    mismatches = []
    for sums in _coverage_sums(polygon, masks, margin, boxes):
        if sums is None:
            mismatches.append(1.0)
            continue
        seen, covered, total = sums
        missed, unseen = seen - covered, total - covered
        mismatches.append(float((missed + unseen_weight * unseen) / (missed + total)))
    return mismatches
