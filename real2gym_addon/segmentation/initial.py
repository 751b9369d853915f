"""The first mask of an object, from its prompt: GrabCut in the box, seeded by points.

Where depth exists, pixels whose depth jumps away from the object's (the table
far behind a raised object, or a nearer occluder) start as probable background.
"""

from __future__ import annotations

import cv2
import numpy as np

from .base import Prompt

_ITERATIONS = 5
_POINT_RADIUS = 4
_SEED = 0


def initial_mask(frame: np.ndarray, prompt: Prompt, depth: np.ndarray | None = None) -> np.ndarray:
    """Segments the prompted object on its prompt frame.

    Args:
        frame: ``HxWx3`` uint8 BGR.
        prompt: The box and/or points (pixels).
        depth: ``HxW`` float32 metres (0 = no reading), or None.

    Returns:
        ``HxW`` bool mask of the object (the largest component touching the
        positive points, or the box centre).
    """
    h, w = frame.shape[:2]
    labels = np.full((h, w), cv2.GC_BGD, np.uint8)
    if prompt.box is not None:
        x0, y0, x1, y1 = (int(round(v)) for v in prompt.box)
    else:
        positive = prompt.points[prompt.labels == 1]
        x0, y0 = positive.min(axis=0) - 20
        x1, y1 = positive.max(axis=0) + 20
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    labels[y0:y1, x0:x1] = cv2.GC_PR_FGD
    if depth is not None:
        _mark_depth_outliers(labels, depth, (x0, y0, x1, y1))
    for (x, y), label in zip(np.asarray(prompt.points, float), prompt.labels, strict=True):
        cv2.circle(labels, (int(x), int(y)), _POINT_RADIUS, int(cv2.GC_FGD if label == 1 else cv2.GC_BGD), -1)
    # GrabCut on a crop around the box, with a margin of background for its colour model.
    margin = max(10, (x1 - x0 + y1 - y0) // 4)
    cx0, cy0, cx1, cy1 = max(x0 - margin, 0), max(y0 - margin, 0), min(x1 + margin, w), min(y1 + margin, h)
    crop_labels = labels[cy0:cy1, cx0:cx1].copy()
    crop = np.ascontiguousarray(frame[cy0:cy1, cx0:cx1])
    if (crop_labels == cv2.GC_BGD).any() and np.isin(crop_labels, (cv2.GC_PR_FGD, cv2.GC_FGD)).any():
        background, foreground = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
        cv2.setRNGSeed(_SEED)  # GrabCut seeds its colour models by k-means: same input, same mask
        cv2.grabCut(crop, crop_labels, None, background, foreground, _ITERATIONS, cv2.GC_INIT_WITH_MASK)
    mask = np.zeros((h, w), bool)
    mask[cy0:cy1, cx0:cx1] = np.isin(crop_labels, (cv2.GC_FGD, cv2.GC_PR_FGD))
    return _component_at_prompt(mask, prompt)


def _mark_depth_outliers(labels: np.ndarray, depth: np.ndarray, box: tuple[int, int, int, int]) -> None:
    x0, y0, x1, y1 = box
    inner = depth[y0 + (y1 - y0) // 4 : y1 - (y1 - y0) // 4, x0 + (x1 - x0) // 4 : x1 - (x1 - x0) // 4]
    readings = inner[inner > 0]
    if readings.size < 10:
        return
    centre = float(np.median(readings))
    spread = max(0.03, float(np.percentile(np.abs(readings - centre), 90)) * 2.0)
    region = depth[y0:y1, x0:x1]
    far = (region > 0) & (np.abs(region - centre) > spread)
    labels[y0:y1, x0:x1][far] = cv2.GC_PR_BGD


def _component_at_prompt(mask: np.ndarray, prompt: Prompt) -> np.ndarray:
    count, components, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if count <= 2:
        return mask
    positive = np.asarray(prompt.points, float)[np.asarray(prompt.labels) == 1]
    keep = {int(components[int(y), int(x)]) for x, y in positive} - {0}
    if not keep:
        keep = {1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))}
    return np.isin(components, list(keep))
