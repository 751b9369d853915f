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


def silhouette_iou(polygon: np.ndarray, mask: np.ndarray, margin: int = 4) -> float:
    """IoU between a filled polygon and a mask, computed in their joint bounding box.

    Args:
        polygon: ``Kx2`` pixels.
        mask: ``HxW`` bool.
        margin: Extra pixels around the joint box.
    """
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return 0.0
    x0 = int(max(0, min(xs.min(), polygon[:, 0].min()) - margin))
    y0 = int(max(0, min(ys.min(), polygon[:, 1].min()) - margin))
    x1 = int(min(w, max(xs.max(), polygon[:, 0].max()) + margin + 1))
    y1 = int(min(h, max(ys.max(), polygon[:, 1].max()) + margin + 1))
    if x1 <= x0 or y1 <= y0:
        return 0.0
    canvas = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shifted = np.round((polygon - [x0, y0]) * 4).astype(np.int32)  # 2 fractional bits
    cv2.fillPoly(canvas, [shifted], 1, lineType=cv2.LINE_8, shift=2)
    crop = mask[y0:y1, x0:x1]
    union = np.logical_or(canvas, crop).sum()
    return float(np.logical_and(canvas, crop).sum() / union) if union else 0.0
