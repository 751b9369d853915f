"""A dish rack's slots (:mod:`.kinds.dish_rack`) measured from its depth points, once its outer box is fitted.

The box comes from the silhouettes and the points like any box's (:func:`.fit.fit_box`): the dividers fill
its outline. What tells the slots apart is the depth near the top: the dividers' tops and upper faces are
points there, the slots between them are empty, so along the row the points near the top fall in runs,
one per divider, and across it they do not. Of the box's two ways round, the one whose runs repeat is the
row (local y). The runs' centres give the pitch and the count; their width the dividers' thickness (the
depth's cleaning drops the pixel on each side of a jump, the smoothing and a divider's end face seen at an
angle widen it: on the generated racks the widths came out 1-3 mm under the truth, with a pixel taken off
4-6 mm); the median of the points seen down the slots the base's top. The row's place is then fitted to
every point (their mean distance to the rack's boxes).

Without depth, or where no runs show, the slots keep :func:`.kinds.dish_rack.default_params` and the
caller says so.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import minimize

from .fit_base import DEPTH_CAP, FittedObject, RestView, all_points
from .kinds import dish_rack
from .shapes import Shape

TOP_BAND = 0.02
"""m: the points this far below the box's top are the dividers' tops and upper faces."""
ROW_BIN = 0.001
"""m: the bins along a side in which the top band's points are counted."""
RUN_SHARE = 0.05
"""A bin is in a run where it holds at least this share of the fullest bins' count (their 90th percentile)."""
MIN_RUN = 0.002
"""m: a run narrower than this is noise."""
MIN_DIVIDERS = 2
"""A row shows at least this many runs (one slot)."""
MAX_COVER = 0.75
"""The runs cover at most this share of the row (a solid top, its points' gaps chance, covers over 90 % of it;
dividers twice as thick as their slots 65 %) ..."""
MAX_WIDTH_RATIO = 3.0
"""... and the widest is at most this many times the narrowest (dividers are alike)."""
SCORE_POINTS = 3000
"""Depth points the fit of the row is scored on."""
ROW_SLACK = 0.003
"""m: how much wider than the fitted box the row of dividers may be."""
EDGE_MARGIN = 0.004
"""m: the base's top is looked for this far inside a slot's dividers and the base's front and back faces."""
MIN_FLOOR_POINTS = 4
"""The base's top is read where the slots show at least this many points below the rack's half height."""


@dataclasses.dataclass(frozen=True)
class Row:
    """The dividers' runs along one side of the box.

    Attributes:
        centres: Each run's centre along the side (m, from the box's centre): its points' median, in order.
        widths: Each run's width (m), as far as its bins hold points (the depth's noise widens it).
    """

    centres: np.ndarray
    widths: np.ndarray

    def regularity(self) -> float:
        """How evenly the runs repeat: the spread of their gaps over their mean (0 for a perfect row)."""
        gaps = np.diff(self.centres)
        return float(np.std(gaps) / max(np.mean(gaps), 1e-9)) if len(gaps) > 1 else 0.0


def _local(points: np.ndarray, position: np.ndarray, yaw: float) -> np.ndarray:
    """World points in a box's frame (its centre the origin, z from its bottom)."""
    c, s = math.cos(yaw), math.sin(yaw)
    offset = points - [position[0], position[1], 0.0]
    return np.c_[c * offset[:, 0] + s * offset[:, 1], -s * offset[:, 0] + c * offset[:, 1], offset[:, 2]]


def find_row(along: np.ndarray, half_width: float) -> Row | None:
    """The runs of points along one side (``along``: the top band's points' coordinates on it, m); None
    where fewer than :data:`MIN_DIVIDERS` show, or they are not a row of dividers (:data:`MAX_COVER`,
    :data:`MAX_WIDTH_RATIO`)."""
    edges = np.arange(-half_width - 0.01, half_width + 0.01 + ROW_BIN, ROW_BIN)
    counts, _ = np.histogram(along, bins=edges)
    counts = np.convolve(counts, np.ones(3) / 3, mode="same")
    if not counts.any():
        return None
    full = counts > RUN_SHARE * np.percentile(counts[counts > 0], 90)
    change = np.diff(np.r_[0, full.astype(int), 0])
    starts, ends = np.flatnonzero(change == 1), np.flatnonzero(change == -1)
    keep = (ends - starts) * ROW_BIN >= MIN_RUN
    starts, ends = starts[keep], ends[keep]
    widths = (ends - starts - 2) * ROW_BIN  # less the smoothing's bin on each side
    if len(starts) < MIN_DIVIDERS:
        return None
    if (
        widths.sum() > MAX_COVER * (ends[-1] - starts[0]) * ROW_BIN
        or widths.max() > MAX_WIDTH_RATIO * widths.min()
    ):
        return None
    centres = [
        float(np.median(along[(along >= a) & (along < b)]))
        for a, b in zip(edges[starts], edges[ends], strict=True)
    ]
    return Row(centres=np.array(centres), widths=widths)


def _turned(fitted: FittedObject, turn: int) -> tuple[tuple[float, float, float], float]:
    size = fitted.shape.size
    size = size if turn % 2 == 0 else (size[1], size[0], size[2])
    return tuple(float(v) for v in size), math.remainder(fitted.yaw + turn * math.pi / 2, 2 * math.pi)


def _rack(size, row: Row, base: float) -> tuple[dict, float]:
    """The rack's parameters from its row of runs, and where the row's middle is along y (m)."""
    count = len(row.centres) - 1
    steps = np.arange(count + 1)
    pitch, first = np.polyfit(steps, row.centres, 1)  # the centres as an even row
    divider = max(float(np.median(row.widths)), dish_rack.MIN_DIVIDER)
    params = {"base_thickness": base, "slot_count": float(count), "pitch": float(pitch),
              "slot_width": float(max(pitch - divider, 0.002))}  # fmt: skip
    return params, float(first + count * pitch / 2)


def _base(local: np.ndarray, params: dict, middle: float, size) -> float | None:
    """m: the base's top, the median height of the points seen down the slots below the rack's half height,
    behind the base's front and back faces (None where too few show). They are the floor's, its noise either
    side of it, and the dividers' faces' lowest parts above it: a low percentile (the tenth, taken before)
    read the noise's low side and made every base of twelve generated racks 2.0-4.8 mm thin, the median
    0.1-2.1 mm off either way."""
    centres = dish_rack.slot_centres(params) + middle
    inside = np.abs(local[:, 1, None] - centres[None, :]) < params["slot_width"] / 2 - EDGE_MARGIN
    within = np.abs(local[:, 0]) < size[0] / 2 - EDGE_MARGIN
    height = size[2]
    low = local[inside.any(axis=1) & within & (local[:, 2] < 0.5 * height), 2]
    if len(low) < MIN_FLOOR_POINTS:
        return None
    return float(np.clip(np.median(low), 0.002, 0.3 * height))


def _points_error(params: dict, size, middle: float, local: np.ndarray) -> float:
    """m: the points' mean distance to the rack's boxes (capped at 1 cm); inf where they do not fit."""
    shape = Shape(dish_rack.DISH_RACK.name, size, params)
    try:
        distance = shape.surface_distance(local - [0.0, middle, size[2] / 2])
    except ValueError:
        return math.inf
    return float(np.minimum(np.abs(distance), DEPTH_CAP).mean())


def _refined(params: dict, size, middle: float, local: np.ndarray) -> tuple[dict, float, float]:
    """The row's place fitted to the points, its pitch the runs' (no wider than the box's silhouettes
    allow). The dividers' thickness and the pitch stay as the runs measure them: the dividers' faces away
    from the camera are not seen, and the points' distance to the boxes, free to move the pitch, pulled a
    one-slot stand's dividers 10 mm together (its inner faces hidden by its plate)."""
    divider = params["pitch"] - params["slot_width"]
    widest = size[1] + ROW_SLACK
    pitch = max(min(params["pitch"], (widest - divider) / params["slot_count"] - 1e-6), divider + 0.002)
    params = {**params, "pitch": float(pitch), "slot_width": float(pitch - divider)}
    width = max(size[1], dish_rack.row_width(params))

    def loss(x):
        return _points_error(params, (size[0], width, size[2]), float(x[0]), local)

    result = minimize(loss, np.array([middle]), method="Nelder-Mead", options={"xatol": 2e-4, "fatol": 1e-5})
    best = float(result.x[0]) if result.fun <= loss([middle]) else middle
    return params, best, float(min(result.fun, loss([middle])))


def with_slots(fitted: FittedObject, views: list[RestView]) -> tuple[FittedObject, str | None]:
    """The fitted box as a dish rack with its slots as the depth shows them, and a warning where it shows none.

    Each of the box's two ways round is tried as the row; the one whose runs repeat most evenly, and then
    whose boxes lie nearest the points, is kept.
    """
    points = all_points(views)
    if len(points) > SCORE_POINTS:
        points = points[np.random.default_rng(0).choice(len(points), SCORE_POINTS, replace=False)]
    best = None
    for turn in (0, 1):
        size, yaw = _turned(fitted, turn)
        local = _local(points, fitted.position, yaw)
        top = local[local[:, 2] > size[2] - TOP_BAND]
        row = find_row(top[:, 1], size[1] / 2) if len(top) else None
        if row is None:
            continue
        default_base = dish_rack.default_params(size)["base_thickness"]
        params, middle = _rack(size, row, default_base)
        params["base_thickness"] = _base(local, params, middle, size) or default_base
        params, middle, error = _refined(params, size, middle, local)
        score = (round(row.regularity(), 1), error)
        if best is None or score < best[0]:
            best = (score, size, yaw, params, middle)
    if best is None:
        size = fitted.shape.size
        shape = Shape(
            dish_rack.DISH_RACK.name, size, dish_rack.default_params(size), fit_error=fitted.shape.fit_error
        )
        return dataclasses.replace(fitted, shape=shape), (
            "no divider of the dish rack shows in its depth; its slots are guessed from its width: check its slots"
        )
    _, size, yaw, params, middle = best
    size = (size[0], max(size[1], dish_rack.row_width(params)), size[2])
    shift = middle * np.array([-math.sin(yaw), math.cos(yaw), 0.0])  # the row's middle is the rack's centre
    shape = Shape(dish_rack.DISH_RACK.name, size, params, fit_error=fitted.shape.fit_error)
    return FittedObject(shape, fitted.position + shift, yaw), None
