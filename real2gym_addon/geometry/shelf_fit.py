"""A shelf's boards (:mod:`.kinds.shelf`) measured from its depth points, once its outer box is fitted.

The box comes from the silhouettes and the points like a cabinet's (:func:`.fit.fit_open_box`): a shelf is
a box open on its front. What is inside it the silhouette does not show; the depth does. Seen through
the front, each board's face towards the camera is a flat layer of points at one height (its top where the
camera is above it, its underside where it is below), which the back wall and the sides, upright, are
not: the boards are the heights where the points between the sides pile up. A board's thickness is how
far its front edge's points reach (where a coarse image loses a top seen at a grazing angle, the front
edges, seen face on, place the boards too), the sides' thickness how far in from the box's
sides the points on the front face reach; the back's is not seen from the front and keeps the default.

Without depth points the boards keep :func:`.kinds.shelf.default_params` (a bottom and a top board): the
caller says so.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..demo import Camera
from .fit_base import DEPTH_CAP, FittedObject, RestView, all_points, camera_centre
from .kinds import shelf
from .shapes import Shape

LAYER_BIN = 0.003
"""m: the bins in which the points' heights are counted."""
MIN_LAYER_SHARE = 0.04
"""A board's layer holds at least this share of the points between the sides ..."""
MIN_LAYER_POINTS = 30
"""... and at least this many."""
LAYER_PEAK = 3.0
"""... and stands this many times above the median bin (the back wall's even spread)."""
SAME_BOARD = 0.03
"""m: layers closer than this are one board."""
INSIDE_MARGIN = 0.02
"""m: points this far inside the box's sides and in front of its back count as the inside's."""
FRONT_BAND = 0.008
"""m: points within this of the front face are on the boards' and the sides' front edges."""
SCORE_POINTS = 3000
"""Depth points a turn of the box is scored on."""
MIN_EDGE_POINTS = 8
"""Points a board's front edge needs ..."""
MIN_EDGE_SHARE = 0.01
"""... and a share of the front face's points each of its 3 mm bins holds."""
FLOOR_CUT = 0.01
"""m: near the table the depth points are the table's (the fit drops them): a board's edge that reaches this low
does not measure its thickness."""


@dataclasses.dataclass(frozen=True)
class Boards:
    """What the depth measured inside a shelf.

    Attributes:
        heights: Each board's top above the shelf's bottom (m), lowest first.
        board_thickness: m, measured from the front edges, or None where none were seen.
        side_thickness: m, measured from the sides' front faces, or None.
    """

    heights: list[float]
    board_thickness: float | None
    side_thickness: float | None


def _local(points: np.ndarray, fitted: FittedObject) -> np.ndarray:
    """World points in the shelf's local frame, z from its bottom."""
    c, s = np.cos(fitted.yaw), np.sin(fitted.yaw)
    offset = points - fitted.position
    return np.c_[c * offset[:, 0] + s * offset[:, 1], -s * offset[:, 0] + c * offset[:, 1],
                 offset[:, 2] + fitted.shape.size[2] / 2]  # fmt: skip


def _layers(heights: np.ndarray, total: float) -> list[float]:
    """The heights (m) where the points pile up in a thin layer: bins well above the median of their
    neighbourhood (a broad bump, more of the back wall seen, is no layer), merged within 3 cm, each the
    median height of its points."""
    if len(heights) < MIN_LAYER_POINTS:
        return []
    edges = np.arange(-LAYER_BIN, total + 2 * LAYER_BIN, LAYER_BIN)
    counts, _ = np.histogram(heights, edges)
    # Two bins at once: a face's points straddle a bin's edge.
    pairs = counts[:-1] + counts[1:]
    floor = max(MIN_LAYER_POINTS, MIN_LAYER_SHARE * len(heights))
    reach = int(round(SAME_BOARD / LAYER_BIN))
    layers = []
    for i in np.argsort(-pairs):
        if pairs[i] < floor:
            break
        around = np.r_[pairs[max(0, i - reach) : max(0, i - 2)], pairs[i + 3 : i + reach + 1]]
        if len(around) and pairs[i] < LAYER_PEAK * float(np.median(around)):
            continue
        centre = edges[i + 1]
        if all(abs(centre - other) >= SAME_BOARD for other in layers):
            layers.append(centre)
    out = []
    for centre in sorted(layers):
        near = heights[np.abs(heights - centre) <= 2 * LAYER_BIN]
        out.append(float(np.median(near)))
    return out


def _front_edges(heights: np.ndarray, total: float) -> list[tuple[float, float]]:
    """The boards' front edges among the points on the front face between the sides: runs of heights where
    they lie (the faces between the boards are open), each as ``(low, high)`` (m, the 5th and 95th
    percentiles of its points)."""
    if len(heights) < MIN_EDGE_POINTS:
        return []
    edges = np.arange(-LAYER_BIN, total + 2 * LAYER_BIN, LAYER_BIN)
    counts, _ = np.histogram(heights, edges)
    full = counts >= max(2, MIN_EDGE_SHARE * len(heights))
    runs, start = [], None
    for i, on in enumerate(np.r_[full, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            inside = heights[(heights >= edges[start]) & (heights < edges[i])]
            if len(inside) >= MIN_EDGE_POINTS:
                runs.append((float(np.percentile(inside, 5)), float(np.percentile(inside, 95))))
            start = None
    return runs


def measure_boards(fitted: FittedObject, views: list[RestView], pixel: float = 0.0) -> Boards | None:
    """The boards the depth shows inside the fitted box, or None without depth points inside it.

    Two readings, merged: the flat layers of points between the sides (a board's top seen from above, its
    underside from below), and the runs of points on the front face between the sides (each board's front
    edge, seen face on). The edges survive where a coarse depth image loses a board's top seen at a grazing
    angle; the layers place a top seen from above more exactly.
    """
    points = all_points(views)
    if not len(points):
        return None
    size = np.asarray(fitted.shape.size, float)
    half = size / 2
    local = _local(points, fitted)
    camera = _local(camera_centre(views)[None], fitted)[0]
    inside = (np.abs(local[:, 1]) < half[1] - INSIDE_MARGIN) & (local[:, 0] > -half[0] + INSIDE_MARGIN)
    front = np.abs(local[:, 0] - half[0]) < FRONT_BAND
    layers = _layers(local[inside & ~front, 2], size[2])
    fronts = _front_edges(local[inside & front, 2], size[2])
    if not layers and not fronts:
        return None
    # A band of n pixels' centres spans n - 1 pixels: the edge is a pixel (``pixel``, m at its distance) wider.
    spans = [high - low + pixel for low, high in fronts if low > FLOOR_CUT or len(fronts) == 1]
    thickness = float(np.clip(np.median(spans), *shelf.THICKNESS_RANGE)) if spans else None
    board = thickness if thickness is not None else shelf.default_params(size)["board_thickness"]
    # A layer below the camera is a board's top; above it, its underside (its top a thickness higher).
    seen = [(z, True) if z <= camera[2] else (z + board, False) for z in layers]
    tops = [z for z, from_above in seen if from_above]
    for _, high in fronts:
        if all(abs(high - top) >= SAME_BOARD for top in tops):
            tops.append(high)
    for z, from_above in seen:
        if not from_above and all(abs(z - top) >= SAME_BOARD for top in tops):
            tops.append(z)
    # A board whose top is within its thickness of the sides' top caps the shelf (its edge's top rows are the
    # silhouette's, which the depth loses first).
    tops = sorted(size[2] if top > size[2] - board - 2 * LAYER_BIN else top for top in tops)
    if tops[0] < board:
        tops[0] = board  # the bottom board on the floor
    return Boards(tops, thickness, _side_thickness(local, half, tops, board))


def _side_thickness(local: np.ndarray, half: np.ndarray, tops: list[float], board: float) -> float | None:
    """m: how far in from the box's sides the front face's points reach where no board is (the sides'
    front edges, between the boards' edges), the median over both sides, or None where neither shows."""
    front = local[np.abs(local[:, 0] - half[0]) < FRONT_BAND]
    for top in tops:
        front = front[(front[:, 2] < top - board - FRONT_BAND) | (front[:, 2] > top + FRONT_BAND)]
    out = []
    for sign in (-1.0, 1.0):
        band = front[(sign * front[:, 1] > half[1] - 0.05)]
        if len(band) >= 5:
            out.append(half[1] - float(np.percentile(sign * band[:, 1], 5)))
    if not out:
        return None
    return float(np.clip(np.median(out), *shelf.THICKNESS_RANGE))


def _with(fitted: FittedObject, boards: Boards | None) -> Shape | None:
    """The fitted box as a shelf with ``boards`` (its defaults without), or None where they do not fit in it."""
    params = dict(shelf.default_params(fitted.shape.size))
    if boards is not None:
        if boards.board_thickness is not None:
            params["board_thickness"] = boards.board_thickness
        if boards.side_thickness is not None:
            params["side_thickness"] = boards.side_thickness
        for key in [k for k in params if k.startswith("board") and k.endswith("_height")]:
            del params[key]
        heights = boards.heights[: shelf.MAX_BOARDS]
        params.update({shelf.board_key(i): h for i, h in enumerate(heights)}, board_count=len(heights))
    shape = Shape(shelf.SHELF.name, fitted.shape.size, params, fit_error=fitted.shape.fit_error)
    try:
        shelf.shelf_pieces(shape)
    except ValueError:
        return None
    return shape


def _turns(fitted: FittedObject, views: list[RestView]) -> list[FittedObject]:
    """The fitted box and its quarter turns about its centre (extents swapped with them) whose front faces the
    camera: a box's silhouette does not say which of its sides is open."""
    toward = camera_centre(views)[:2] - fitted.position[:2]
    out = []
    for turn in range(4):
        yaw = fitted.yaw + turn * math.pi / 2
        if math.cos(yaw) * toward[0] + math.sin(yaw) * toward[1] <= 0:
            continue
        size = (
            fitted.shape.size
            if turn % 2 == 0
            else (fitted.shape.size[1], fitted.shape.size[0], fitted.shape.size[2])
        )
        shape = Shape(shelf.SHELF.name, size, shelf.default_params(size), fit_error=fitted.shape.fit_error)
        out.append(FittedObject(shape, fitted.position, math.remainder(yaw, 2 * math.pi)))
    return out


def _inside_error(shape: Shape, fitted: FittedObject, points: np.ndarray) -> float:
    """m: the points' mean distance to the shelf's boards, sides and back (capped at 1 cm)."""
    local = _local(points, fitted) - [0.0, 0.0, fitted.shape.size[2] / 2]
    return float(np.minimum(np.abs(shape.surface_distance(local)), DEPTH_CAP).mean())


def with_boards(
    fitted: FittedObject, views: list[RestView], camera: Camera | None = None
) -> tuple[FittedObject, str | None]:
    """The fitted shelf with its boards as the depth shows them, and a warning where it shows none.

    Of the box's turns whose front faces the camera, the one whose sides, back and boards lie nearest the
    points is kept: the outer box alone fitted one shelf with its side taken for its front (0.36 m deep and
    0.25 m wide where it is 0.23 by 0.36), and only the inside, its back and boards, tells them apart.
    """
    points = all_points(views)
    if len(points) > SCORE_POINTS:
        points = points[np.random.default_rng(0).choice(len(points), SCORE_POINTS, replace=False)]
    best = None
    for turned in _turns(fitted, views) or [fitted]:
        pixel = 0.0
        if camera is not None:
            pixel = float(np.linalg.norm(camera_centre(views) - turned.position)) / camera.fx
        boards = measure_boards(turned, views, pixel)
        shape = _with(turned, boards)
        if shape is None:
            continue
        score = _inside_error(shape, turned, points) if len(points) else 0.0
        if best is None or score < best[0]:
            best = (score, dataclasses.replace(turned, shape=shape), boards)
    if best is None:
        return fitted, "the shelf's boards as its depth shows them do not fit its box: check its boards"
    _, chosen, boards = best
    if boards is None:
        return chosen, (
            "no board of the shelf shows in its depth; it has a bottom and a top board: check its boards"
        )
    return chosen, None
