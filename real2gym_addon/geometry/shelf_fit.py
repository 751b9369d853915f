"""A shelf's boards (:mod:`.kinds.shelf`) measured from its depth points, once its outer box is fitted.

The box comes from the silhouettes and the points like a cabinet's (:func:`.fit.fit_open_box`): a shelf is
a box open on its front. What is inside it the silhouette does not show; the depth does. Seen through
the front, each board's face towards the camera is a flat layer of points at one height (its top where the
camera is above it, its underside where it is below), which the back wall and the sides, upright, are
not: the boards are the heights where the points between the sides pile up. A board's thickness is how
far its front edge's points reach down from its top, the sides' thickness how far in from the box's
sides the points on the front face reach; the back's is not seen from the front and keeps the default.

Without depth points the boards keep :func:`.kinds.shelf.default_params` (a bottom and a top board): the
caller says so.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .fit_base import FittedObject, RestView, _all_points, _camera_centre
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
EDGE_REACH = 0.04
"""m: how far below a board's top its front edge's points are looked for."""
FLOOR_CUT = 0.01
"""m: near the table the depth points are the table's (the fit drops them): a board whose edge reaches this low
is not measured by it."""


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
    """The heights (m) where the points pile up: bins well above the median, merged within 3 cm, each
    the median height of its points."""
    if len(heights) < MIN_LAYER_POINTS:
        return []
    edges = np.arange(-LAYER_BIN, total + 2 * LAYER_BIN, LAYER_BIN)
    counts, _ = np.histogram(heights, edges)
    # Two bins at once: a face's points straddle a bin's edge.
    pairs = counts[:-1] + counts[1:]
    floor = max(MIN_LAYER_POINTS, MIN_LAYER_SHARE * len(heights), LAYER_PEAK * float(np.median(pairs)))
    layers = []
    for i in np.argsort(-pairs):
        if pairs[i] < floor:
            break
        centre = edges[i + 1]
        if all(abs(centre - other) >= SAME_BOARD for other in layers):
            layers.append(centre)
    out = []
    for centre in sorted(layers):
        near = heights[np.abs(heights - centre) <= 2 * LAYER_BIN]
        out.append(float(np.median(near)))
    return out


def measure_boards(fitted: FittedObject, views: list[RestView]) -> Boards | None:
    """The boards the depth shows inside the fitted box, or None without depth points inside it."""
    points = _all_points(views)
    if not len(points):
        return None
    size = np.asarray(fitted.shape.size, float)
    half = size / 2
    local = _local(points, fitted)
    camera = _local(_camera_centre(views)[None], fitted)[0]
    inside = (np.abs(local[:, 1]) < half[1] - INSIDE_MARGIN) & (local[:, 0] > -half[0] + INSIDE_MARGIN)
    front = np.abs(local[:, 0] - half[0]) < FRONT_BAND
    faces = inside & ~front
    layers = _layers(local[faces, 2], size[2])
    if not layers:
        return None
    edge_points = local[inside & front]
    thickness = _board_thickness(layers, camera[2], edge_points)
    board = thickness if thickness is not None else shelf.default_params(size)["board_thickness"]
    # A layer below the camera is a board's top; above it, its underside (its top a thickness higher).
    tops = sorted(min(z if z <= camera[2] else z + board, size[2]) for z in layers)
    if tops[0] < board:
        tops[0] = board  # the bottom board on the floor
    return Boards(tops, thickness, _side_thickness(local, half, tops, board))


def _board_thickness(layers: list[float], camera_z: float, edge: np.ndarray) -> float | None:
    """m: the median over the boards seen from above (and off the floor) of how far their front edge's points
    reach below their top (the edge's lowest 5 %), or None where no edge shows."""
    reaches = []
    for z in layers:
        if z > camera_z or (z - EDGE_REACH < FLOOR_CUT and len(layers) > 1):
            continue  # seen from below; or a bottom board, whose edge's foot is lost with the table's points
        below = edge[(edge[:, 2] <= z + LAYER_BIN) & (edge[:, 2] >= z - EDGE_REACH), 2]
        if len(below) >= 5:
            reaches.append(z - float(np.percentile(below, 5)))
    if not reaches:
        return None
    return float(np.clip(np.median(reaches), *shelf.THICKNESS_RANGE))


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


def with_boards(fitted: FittedObject, views: list[RestView]) -> tuple[FittedObject, str | None]:
    """The fitted shelf with its boards as the depth shows them, and a warning where it shows none."""
    boards = measure_boards(fitted, views)
    if boards is None:
        return fitted, (
            "no board of the shelf shows in its depth; it has a bottom and a top board: check its boards"
        )
    params = dict(fitted.shape.params)
    if boards.board_thickness is not None:
        params["board_thickness"] = boards.board_thickness
    if boards.side_thickness is not None:
        params["side_thickness"] = boards.side_thickness
    for key in [k for k in params if k.startswith("board") and k.endswith("_height")]:
        del params[key]
    params.update({shelf.board_key(i): h for i, h in enumerate(boards.heights[: shelf.MAX_BOARDS])})
    params["board_count"] = min(len(boards.heights), shelf.MAX_BOARDS)
    shape = Shape(shelf.SHELF.name, fitted.shape.size, params, fit_error=fitted.shape.fit_error)
    try:
        shelf.shelf_pieces(shape)
    except ValueError as e:
        return (
            fitted,
            f"the shelf's boards as its depth shows them do not fit its box ({e}): check its boards",
        )
    return dataclasses.replace(fitted, shape=shape), None
