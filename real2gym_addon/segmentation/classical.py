"""The classical backend: optical flow, colour and depth, no learned weights.

Each object is tracked in a region of interest around where it was (objects
larger than :data:`_MAX_WORK_SIDE` pixels are processed reduced there). On
every frame the last mask is carried along by DIS optical flow: the spatial
prior. Each pixel near it is then scored by the log ratio of a foreground
colour model (an HSV histogram with coarse value, so that shadows matter
little, taken on the prompt frame) to a background model adapted every frame
from a ring of pixels around the prediction, plus depth consistency where
depth exists; pixels left unsure on a blurred edge are decided by how much of
the object's colour they hold. What comes out is the *visible* part of the
object: an occluder (a gripper, a hand) takes the background's colours and
drops out of the mask. When nothing of the object's colour is left it is
reported as not visible (an empty mask, confidence 0) and searched for on the
next frames, near where it was and then wider, until a region of its colour
and size shows again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import cv2
import numpy as np

from .base import ObjectMask, Prompt, VideoSegmenter
from .initial import initial_mask

_BINS = (4, 32, 8)  # HSV histogram: value, hue, saturation (coarse value: shading)
_DARK = 40  # below this value (0-255) hue and saturation are noise: one bin
_EPS = 1e-4  # histogram floor: unseen colours are neutral, not certain
_MAX_LOG_RATIO = 5.0
_INSIDE_BONUS = 0.25  # log odds for a pixel inside the flow-warped mask
_OUTSIDE_SLOPE = 4.0  # log odds lost per band width outside it
_DEPTH_PENALTY = 3.0  # log odds against a depth far from the object's
_DEPTH_MARGIN = 0.02  # m of depth motion allowed between frames
_BG_MEMORY = 0.5  # weight of the previous local background histogram
_BG_GLOBAL = 0.3  # weight of the prompt frame's whole-image background
_MAX_WORK_SIDE = 128  # objects larger than this (px) are processed reduced
_REDETECT_LOG_RATIO = 2.0  # mean colour evidence a re-found region needs
_PART_LOG_RATIO = 1.0  # mean colour evidence a second piece of the mask needs
_ALIVE_LOG_RATIO = 0.5  # below this mean colour evidence the mask is not the object
_UNSURE_LOG_RATIO = 1.0  # edge pixels with log odds within this are unmixed
_UNMIX_WINDOW = 7  # px, where an edge pixel's pure colours are taken from
_UNMIX_CONTRAST = 10.0  # grey levels; below this object and background are too alike
_OBJECT_LIKE_LOG_RATIO = 2.0  # ring pixels this like the object never teach the background
_ANCHOR_AREA = 1.5  # above this share of its prompt area a mask keeps only prompt-frame object colours
_GROWTH_CAP = 1.3  # a mask grows at most this much from one frame to the next (else it leaks)
_REACH = 1.3  # a mask over _REACH_AREA keeps only what lies within this many half-diagonals of the centre
_REACH_AREA = 1.2  # ... and only a mask within this share of its prompt area either way moves the centre
_SKIN_PENALTY = 4.0  # log odds against skin-coloured pixels, for objects that are not skin-coloured
_SKIN_OBJECT_SHARE = 0.1  # share of skin-coloured pixels above which an object counts as skin-coloured


@dataclasses.dataclass
class _Track:
    """One object's state while propagating (all pixel figures at working size)."""

    foreground: np.ndarray  # colour histogram, sums to 1
    global_background: np.ndarray
    background: np.ndarray  # adapted per frame
    reference_area: float  # px on the prompt frame
    scale: float  # processing scale inside the region of interest
    mask: np.ndarray  # HxW bool, the last mask (empty while lost)
    box: tuple[int, int, int, int]  # last seen bbox, exclusive ends
    frame: int
    velocity: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(2))
    lost_for: int = 0
    confidence: float = 1.0
    skin_coloured: bool = False  # the object's own colours are skin-like: hands are not cut out
    centre: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(2))  # x, y of the object
    reach: float = 0.0  # half the diagonal of its prompt-frame box: how far from the centre it extends


def colour_bins(image: np.ndarray) -> np.ndarray:
    """Colour histogram bin of each pixel.

    HSV with coarse value, so that a shadow moves a colour little; grey pixels
    (no saturation) share one hue bin and dark ones one bin per value.

    Args:
        image: ``HxWx3`` uint8 BGR.

    Returns:
        ``HxW`` int32 bin index in ``[0, 4*32*8)``.
    """
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV_FULL)
    value = (hsv[..., 2] >> 6).astype(np.int32)
    hue = (hsv[..., 0] >> 3).astype(np.int32)
    saturation = (hsv[..., 1] >> 5).astype(np.int32)
    saturation[hsv[..., 2] < _DARK] = 0
    hue[saturation == 0] = 0
    return (value * _BINS[1] + hue) * _BINS[2] + saturation


def skin(image: np.ndarray) -> np.ndarray:
    """Pixels of skin colour (hands, arms), by the usual YCrCb box.

    Args:
        image: ``HxWx3`` uint8 BGR.

    Returns:
        ``HxW`` bool.
    """
    ycrcb = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    y, cr, cb = ycrcb[..., 0], ycrcb[..., 1], ycrcb[..., 2]
    return (y > 50) & (cr >= 138) & (cr <= 173) & (cb >= 77) & (cb <= 127)


def _histogram(bins: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Smoothed, normalised histogram of ``bins[where]`` (uniform when empty)."""
    counts = np.bincount(bins[where], minlength=_BINS[0] * _BINS[1] * _BINS[2]).astype(np.float64)
    counts = counts.reshape(_BINS)
    for axis in range(3):  # [1, 2, 1] / 4 along each axis
        mode = "wrap" if axis == 1 else "edge"  # hue is circular
        padded = np.pad(counts, [(1, 1) if a == axis else (0, 0) for a in range(3)], mode=mode)
        low = np.take(padded, range(0, counts.shape[axis]), axis=axis)
        high = np.take(padded, range(2, counts.shape[axis] + 2), axis=axis)
        counts = 0.5 * counts + 0.25 * (low + high)
    total = counts.sum()
    return (counts / total).ravel() if total > 0 else np.full(counts.size, 1.0 / counts.size)


def _log_ratio(foreground: np.ndarray, background: np.ndarray) -> np.ndarray:
    table = np.log(foreground + _EPS) - np.log(background + _EPS)
    return np.clip(table, -_MAX_LOG_RATIO, _MAX_LOG_RATIO).astype(np.float32)


def _bbox(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(mask)
    if xs.size == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _disk(radius: int) -> np.ndarray:
    radius = max(1, int(radius))
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def _unmix_edge(image: np.ndarray, logit: np.ndarray) -> np.ndarray:
    """Re-decides unsure pixels (blurred edges) by how much object colour they hold.

    An edge pixel's colour is taken as a blend ``c = a f + (1 - a) b`` of the
    mean colours of the sure object (``f``) and sure background (``b``) pixels
    around it; it is on the object when ``a > 0.5``, as a mask drawn on the
    sharp image would have it.

    Args:
        image: ``HxWx3`` uint8 BGR.
        logit: ``HxW`` float32 log odds of the object.

    Returns:
        The log odds with the unsure pixels replaced by ``2 (a - 0.5)``.
    """
    sure_object = (logit > _UNSURE_LOG_RATIO).astype(np.float32)
    sure_background = (logit < -_UNSURE_LOG_RATIO).astype(np.float32)
    unsure = (sure_object == 0) & (sure_background == 0)
    if not unsure.any():
        return logit
    colour = image.astype(np.float32)
    window = (_UNMIX_WINDOW, _UNMIX_WINDOW)
    count_object = cv2.boxFilter(sure_object, -1, window, normalize=False)
    count_background = cv2.boxFilter(sure_background, -1, window, normalize=False)
    sum_object = cv2.boxFilter(colour * sure_object[..., None], -1, window, normalize=False)
    sum_background = cv2.boxFilter(colour * sure_background[..., None], -1, window, normalize=False)
    mean_object = sum_object / np.maximum(count_object, 1)[..., None]
    mean_background = sum_background / np.maximum(count_background, 1)[..., None]
    contrast = mean_object - mean_background
    contrast_sq = (contrast * contrast).sum(axis=2)
    share = ((colour - mean_background) * contrast).sum(axis=2) / np.maximum(contrast_sq, 1e-6)
    use = unsure & (count_object > 0) & (count_background > 0) & (contrast_sq > _UNMIX_CONTRAST**2)
    result = logit.copy()
    result[use] = 2.0 * (share[use] - 0.5)
    return result


class ClassicalSegmenter(VideoSegmenter):
    """Flow-propagated colour/depth segmentation with occlusion and re-detection.

    Args:
        flow_preset: DIS optical flow preset (``cv2.DISOPTICAL_FLOW_PRESET_*``).
    """

    name = "classical"

    def __init__(self, flow_preset: int = cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST) -> None:
        self._frames: list[np.ndarray] = []
        self._depth: list[np.ndarray | None] = []
        self._seeds: dict[tuple[int, int], _Track] = {}  # (object id, frame) -> the track a prompt starts
        self._flow = cv2.DISOpticalFlow_create(flow_preset)

    def init_state(
        self, frames: Sequence[np.ndarray], depth: Sequence[np.ndarray | None] | None = None
    ) -> None:
        self._frames = list(frames)
        self._depth = list(depth) if depth is not None else [None] * len(self._frames)
        self._seeds = {}

    def add_prompt(self, object_id: int, prompt: Prompt) -> ObjectMask:
        """Seeds the object's track on the prompt's frame (see :meth:`VideoSegmenter.add_prompt`).

        An object may be prompted on several frames: propagation restarts its
        track from each prompt's seed when it reaches that frame (a later prompt
        corrects the mask from its frame on); a second prompt on the same frame
        replaces the first.
        """
        image, depth = self._frames[prompt.frame], self._depth[prompt.frame]
        mask = initial_mask(image, prompt, depth)
        bins = colour_bins(image)
        box = _bbox(mask)
        if box is None:
            return ObjectMask(mask, 0.0)
        area = float(mask.sum())
        outside = ~(cv2.dilate(mask.astype(np.uint8), _disk(2)) > 0)
        track = _Track(
            foreground=_histogram(bins, mask),
            global_background=_histogram(bins, outside),
            background=_histogram(bins, outside),
            reference_area=area,
            scale=min(1.0, _MAX_WORK_SIDE / max(box[2] - box[0], box[3] - box[1])),
            mask=mask,
            box=box,
            frame=prompt.frame,
            skin_coloured=float(skin(image)[mask].mean()) > _SKIN_OBJECT_SHARE,
            centre=np.array([(box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0]),
            reach=0.5 * float(np.hypot(box[2] - box[0], box[3] - box[1])),
        )
        # One pass of the tracker on the prompt frame sets the confidence; the seed stays GrabCut's
        # mask, which follows the object's edge better than the colour model does.
        _, _, track.confidence = self._follow(track, prompt.frame, prompt.frame)
        self._seeds[object_id, prompt.frame] = track
        return ObjectMask(track.mask, track.confidence)

    def propagate(
        self, start_frame: int, reverse: bool = False
    ) -> Iterator[tuple[int, dict[int, ObjectMask]]]:
        step = -1 if reverse else 1
        end = -1 if reverse else len(self._frames)
        tracks: dict[int, _Track] = {}
        for frame in range(start_frame, end, step):
            for (object_id, seed_frame), seed in self._seeds.items():
                if seed_frame == frame:  # the object's first prompt, or a correction: (re)start from it
                    tracks[object_id] = dataclasses.replace(seed)
            results = {}
            for object_id, track in tracks.items():
                if track.frame != frame:
                    self._advance(track, frame)
                results[object_id] = ObjectMask(track.mask, track.confidence)
            yield frame, results

    # -- one frame -------------------------------------------------------------------

    def _advance(self, track: _Track, frame: int) -> None:
        """Moves ``track`` from its frame to ``frame`` (the next one either way)."""
        previous = track.frame
        track.frame = frame
        if track.lost_for == 0:
            region, roi, confidence = self._follow(track, previous, frame)
        else:
            region, roi, confidence = self._search(track, frame)
        track.mask = np.zeros_like(track.mask)
        box = _bbox(region) if region.sum() >= max(3.0, 0.004 * track.reference_area) else None
        if box is None:
            track.confidence = 0.0
            track.lost_for += 1
            return
        x0, y0, x1, y1 = roi
        track.mask[y0:y1, x0:x1] = region
        box = (box[0] + x0, box[1] + y0, box[2] + x0, box[3] + y0)
        centre_then = np.array([track.box[0] + track.box[2], track.box[1] + track.box[3]]) / 2.0
        centre_now = np.array([box[0] + box[2], box[1] + box[3]]) / 2.0
        if track.lost_for == 0:
            track.velocity = 0.5 * track.velocity + 0.5 * (centre_now - centre_then)
        else:
            track.velocity = np.zeros(2)
            track.centre = centre_now
        track.box, track.confidence, track.lost_for = box, confidence, 0

    def _roi(self, track: _Track, margin: float) -> tuple[int, int, int, int]:
        h, w = track.mask.shape
        x0, y0, x1, y1 = track.box
        dx, dy = track.velocity
        return (
            max(0, int(x0 + min(dx, 0) - margin)),
            max(0, int(y0 + min(dy, 0) - margin)),
            min(w, int(np.ceil(x1 + max(dx, 0) + margin))),
            min(h, int(np.ceil(y1 + max(dy, 0) + margin))),
        )

    def _crop(
        self, track: _Track, frame: int, roi: tuple[int, int, int, int]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The frame (BGR) and depth (m, or None) inside ``roi``, at the track's processing scale."""
        x0, y0, x1, y1 = roi
        image = self._frames[frame][y0:y1, x0:x1]
        depth = self._depth[frame]
        depth = None if depth is None else depth[y0:y1, x0:x1]
        if track.scale < 1.0:
            size = (max(8, round((x1 - x0) * track.scale)), max(8, round((y1 - y0) * track.scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            if depth is not None:
                depth = cv2.resize(depth, size, interpolation=cv2.INTER_NEAREST)
        return np.ascontiguousarray(image), depth

    def _follow(
        self, track: _Track, previous: int, frame: int
    ) -> tuple[np.ndarray, tuple[int, int, int, int], float]:
        """Tracks a visible object from ``previous`` to ``frame``.

        Returns:
            The mask inside the region of interest (bool), that region
            ``(x0, y0, x1, y1)`` at working size, and the confidence.
        """
        size = np.sqrt(track.reference_area)
        speed = float(np.hypot(*track.velocity))
        band_full = max(3.0, 0.25 * size) + speed
        roi = self._roi(track, 2.0 * band_full + 8)
        x0, y0, x1, y1 = roi
        image, depth = self._crop(track, frame, roi)
        before, before_depth = self._crop(track, previous, roi)
        last = track.mask[y0:y1, x0:x1].astype(np.float32)
        work_h, work_w = image.shape[:2]
        if track.scale < 1.0:
            last = cv2.resize(last, (work_w, work_h), interpolation=cv2.INTER_AREA)
        # Spatial prior: the last mask carried along the flow (for each pixel here, where it was).
        predicted = last > 0.5
        moved = np.zeros(2)  # where the object's centre moved since ``previous``, working-size pixels
        if previous != frame:
            gray, gray_before = (cv2.cvtColor(i, cv2.COLOR_BGR2GRAY) for i in (image, before))
            backward = self._flow.calc(gray, gray_before, None)
            grid_x, grid_y = np.meshgrid(
                np.arange(work_w, dtype=np.float32), np.arange(work_h, dtype=np.float32)
            )
            warped = cv2.remap(last, grid_x + backward[..., 0], grid_y + backward[..., 1], cv2.INTER_LINEAR)
            predicted = warped > 0.5 if (warped > 0.5).any() else predicted
            near = self._near(track, roi, (work_w, work_h))
            if near.any():
                moved = -np.median(backward[near], axis=0) / track.scale
        band = band_full * track.scale
        outside = cv2.distanceTransform((~predicted).astype(np.uint8), cv2.DIST_L2, 3)
        logit = _INSIDE_BONUS - _OUTSIDE_SLOPE * outside / band
        # Colour: the fixed object model against the background around the prediction.
        bins = colour_bins(image)
        ring = (outside > max(2.0, 0.1 * band + 1)) & (outside <= max(4.0, band))
        anchored = _log_ratio(track.foreground, track.global_background)[bins]  # against the prompt frame
        object_like = anchored > _OBJECT_LIKE_LOG_RATIO
        local = _histogram(bins, ring & ~object_like)
        track.background = _BG_MEMORY * track.background + (1.0 - _BG_MEMORY) * local
        background = (1.0 - _BG_GLOBAL) * track.background + _BG_GLOBAL * track.global_background
        colour = _log_ratio(track.foreground, background)[bins]
        logit += colour
        if depth is not None and before_depth is not None:
            logit -= self._depth_penalty(depth, before_depth, last > 0.5)
        if not track.skin_coloured:  # a hand or an arm over the object is not the object
            logit -= _SKIN_PENALTY * skin(image)
        logit = _unmix_edge(image, cv2.GaussianBlur(logit.astype(np.float32), (3, 3), 0))
        if track.scale < 1.0:  # back to working size, for a smooth edge
            logit = cv2.resize(logit, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
            colour = cv2.resize(colour, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
            anchored = cv2.resize(anchored, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
        region = self._clean(logit > 0, colour, track.reference_area)
        centre = track.centre + moved
        if region.sum() > _REACH_AREA * track.reference_area:  # an arm reaches out of it: keep its reach
            within = self._near(dataclasses.replace(track, centre=centre), roi, (x1 - x0, y1 - y0), _REACH)
            region = self._clean(region & within, colour, track.reference_area)
        if region.sum() > _ANCHOR_AREA * track.reference_area:
            # Larger than the object was: the local background model may have learnt what the mask
            # took in (a hand, an arm, the window). Keep what is the object's colour against the
            # prompt frame's whole background, which saw those things as background.
            region = self._clean(region & (anchored > 0), colour, track.reference_area)
        cap = _GROWTH_CAP * max(float(track.mask.sum()), 0.8 * track.reference_area)
        if region.sum() > cap:  # grown too fast to be the object: keep its most object-like pixels
            threshold = float(np.quantile(logit[region], 1.0 - cap / region.sum()))
            region = self._clean(logit > max(threshold, 0.0), colour, track.reference_area)
        if region.any() and float(colour[region].mean()) < _ALIVE_LOG_RATIO:
            region[:] = False
        track.centre = centre
        # The whole object, neither partly hidden nor grown into something else, gives its centre.
        if 1 / _REACH_AREA <= region.sum() / track.reference_area <= _REACH_AREA:
            ys, xs = np.nonzero(region)
            track.centre = np.array(
                [(xs.min() + xs.max() + 1) / 2.0 + x0, (ys.min() + ys.max() + 1) / 2.0 + y0]
            )
        return region, roi, self._confidence(colour[region], track.reference_area)

    @staticmethod
    def _near(
        track: _Track, roi: tuple[int, int, int, int], size: tuple[int, int], reach: float = 1.0
    ) -> np.ndarray:
        """Pixels of the region of interest (at ``size``) within ``reach`` half-diagonals of the track's centre."""
        x0, y0, x1, y1 = roi
        width, height = size
        xs = x0 + (np.arange(width, dtype=np.float32) + 0.5) * (x1 - x0) / width
        ys = y0 + (np.arange(height, dtype=np.float32) + 0.5) * (y1 - y0) / height
        dx, dy = xs[None, :] - track.centre[0], ys[:, None] - track.centre[1]
        return dx * dx + dy * dy <= (reach * track.reach) ** 2

    @staticmethod
    def _depth_penalty(depth: np.ndarray, before_depth: np.ndarray, last: np.ndarray) -> np.ndarray:
        """Log odds against pixels whose depth (m) is far from the object's last depths."""
        readings = before_depth[last & (before_depth > 0)]
        if readings.size < 10:
            return np.zeros(depth.shape, np.float32)
        low, high = np.percentile(readings, (5, 95))
        far = (depth > 0) & ((depth < low - _DEPTH_MARGIN) | (depth > high + _DEPTH_MARGIN))
        return far.astype(np.float32) * _DEPTH_PENALTY

    @staticmethod
    def _clean(region: np.ndarray, colour: np.ndarray, reference_area: float) -> np.ndarray:
        """Keeps the largest component and others of clear object colour (not specks)."""
        count, labels, stats, _ = cv2.connectedComponentsWithStats(region.astype(np.uint8), connectivity=8)
        if count <= 2:
            return region
        areas = stats[1:, cv2.CC_STAT_AREA]
        evidence = np.bincount(labels.ravel(), colour.ravel(), minlength=count)[1:] / np.maximum(areas, 1)
        keep = (areas >= max(2.0, 0.003 * reference_area)) & (evidence >= _PART_LOG_RATIO)
        keep[int(np.argmax(areas))] = True
        return np.isin(labels, 1 + np.flatnonzero(keep))

    @staticmethod
    def _confidence(colour: np.ndarray, reference_area: float) -> float:
        """Mean colour posterior of the mask pixels, times sqrt(visible share of the object)."""
        if colour.size == 0:
            return 0.0
        posterior = float(np.mean(1.0 / (1.0 + np.exp(-colour))))
        return posterior * min(1.0, float(np.sqrt(colour.size / reference_area)))

    def _search(self, track: _Track, frame: int) -> tuple[np.ndarray, tuple[int, int, int, int], float]:
        """Looks for a lost object near where it was seen last, wider each frame (as :meth:`_follow`)."""
        size = np.sqrt(track.reference_area)
        roi = self._roi(track, size * (1.0 + 0.5 * track.lost_for))
        x0, y0, x1, y1 = roi
        image, _ = self._crop(track, frame, roi)
        bins = colour_bins(image)
        background = 0.5 * track.background + 0.5 * track.global_background
        colour = _log_ratio(track.foreground, background)[bins]
        if track.scale < 1.0:
            colour = cv2.resize(colour, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
        count, labels, stats, centroids = cv2.connectedComponentsWithStats(
            (colour > 0).astype(np.uint8), connectivity=8
        )
        areas = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
        evidence = np.bincount(labels.ravel(), colour.ravel(), minlength=count) / np.maximum(areas, 1)
        last = np.array([(track.box[0] + track.box[2]) / 2.0 - x0, (track.box[1] + track.box[3]) / 2.0 - y0])
        distance = np.hypot(*(centroids - last).T) / size
        score = evidence + np.log(np.clip(areas / track.reference_area, 1e-6, 1.0)) - 0.5 * distance
        min_area = max(16.0, 0.02 * track.reference_area)
        fits = (areas >= min_area) & (areas <= 4.0 * track.reference_area) & (evidence >= _REDETECT_LOG_RATIO)
        fits[0] = False  # the background label
        best = int(np.argmax(np.where(fits, score, -np.inf))) if fits.any() else 0
        region = labels == best if best else np.zeros(labels.shape, bool)
        return region, roi, self._confidence(colour[region], track.reference_area)
