"""Doubt about masks: which frames a person should look at, and why.

Whatever backend made them, the masks of all objects are checked together,
frame by frame, against what a correct mask cannot do, and each object's
confidence is capped by what the checks find. A frame whose mask is doubtful
carries ``review`` with one reason (:data:`REASONS`), most serious first:

- ``merge``: two objects' masks are mostly the same pixels (intersection over union above 0.5);
- ``leak``: the mask grew past :data:`LEAK_RATIO` times its prompt-frame area, or
  doubled within a few frames (it took in the table, a hand, the window);
- ``lost``: no mask, while the place where the object was last seen looks as it did then;
- ``partial``: the mask holds only part of the object: it is under :data:`PARTIAL_AREA` of
  its prompt-frame area while the pixels around it still show the object's colours (more
  than :data:`PARTIAL_RING` of them: part of the object was left out, rather than hidden
  by something of other colours, such as a gripper), or it is judged against a
  prompt-frame mask that fills too little of the box drawn there (spans under
  :data:`PARTIAL_SPAN` of its width or height, or leaves one side of it emptier than the
  opposite one by more than :data:`PARTIAL_LOPSIDED` of it: a loosely drawn box, with a
  margin all round, is fine), so that every mask carried from it is doubtful too;
- ``appearance``: the mask's colours are not the object's colours on its prompt frame;
- ``drift``: an object that should stay put (a static, support or container object)
  moved away from where it was prompted;
- ``specks``: the mask is scattered pieces, not one object;
- ``low_contrast``: its outline barely differs from the surroundings (white on white)
  and its size changed, so nothing in the image confirms the edge.

Two corrections come first. Static objects keep their prompt-frame mask: where
the backend's mask of a static, support or container object no longer agrees
with where the object was prompted (lost, or leaked over the table), the mask
becomes the part of its prompt-frame mask whose pixels still look as they did
then (a hand passing over it, or an object placed in it, changes them), found
again near its last place so that a shaking or turning camera moves it along. And a
pixel belongs to at most one object: the nearer one where depth exists,
otherwise the manipulated object over a static one, otherwise the smaller one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import cv2
import numpy as np

REASONS = ("merge", "leak", "lost", "partial", "appearance", "drift", "specks", "low_contrast")
"""Why a frame is flagged, most serious first."""
STATIC_ROLES = ("static", "support", "container")
LEAK_RATIO = 2.5
"""A mask this many times its prompt-frame area has taken in something else."""
GROWTH_RATIO = 2.0
"""... and so has one this many times its median area over the last :data:`RECENT` frames."""
RECENT = 5
PARTIAL_AREA = 0.5
"""A mask under this share of its prompt-frame area holds only part of the object (hidden, or lost)."""
PARTIAL_RING = 0.03
"""Share of the pixels around a shrunken mask in the object's colours from which part of it was left out."""
PARTIAL_SPAN = 0.5
"""A prompt-frame mask spanning less than this share of its box's width or height missed part of it ..."""
PARTIAL_LOPSIDED = 0.15
"""... and so does one whose gaps to two opposite sides of the box differ by more than this share of it."""
DRIFT_AREA = 1.5
"""A static object's backend mask elsewhere and at most this many times its prompt area is the object moved
(a larger one is a leak, and the object stays where it was)."""
MERGE_SHARE = 0.5
"""Intersection over union from which two objects' masks are one."""
CHANGED = 14.0
"""Lab a+b units: a pixel of a static object whose colour changed this much is covered by something else."""
DEPTH_APART = 0.05
"""Metres between two objects' median depths from which depth decides which one is in front."""
MATCH = 0.6
AGREE = 0.8
"""IoU with a static object's expected mask from which the backend's own mask is kept."""
REFIND_AREA = 0.25
"""A moved object's mask under this share of its prompt area is looked for again as it was prompted ..."""
REFIND_MATCH = 0.8
"""... and found where its prompt-frame patch matches this well (normalised correlation) ..."""
REFIND_SEARCH = 2.0
"""... within this many object sizes of where it was last seen."""
STAY_MARGIN = 0.1
"""A found patch moves only when the new place matches this much better than the old one."""
"""Normalised correlation from which a static object's prompt-frame patch is found again."""
MIN_STATIC_SHARE = 0.3
"""Share of a static object's prompt mask that must still look the same for it to be there."""
APPEARANCE_DISTANCE = 0.55
"""Bhattacharyya distance between the mask's colours and the prompt frame's beyond which they differ."""
LOW_CONTRAST = 8.0
"""Lab units between the inside and outside of the outline under which the edge is doubtful."""
REVIEW_CONFIDENCE = 0.45
"""The confidence a flagged frame gets at most."""
_VISIBLE = 16


@dataclasses.dataclass
class Doubt:
    """The checks' verdict on one object's masks.

    Attributes:
        masks: Per frame ``HxW`` bool (corrected: static objects kept, overlaps removed).
        confidence: Per frame in [0, 1], capped by the checks.
        review: Per frame: a person should look at it.
        reason: Per frame, one of :data:`REASONS`, or None.
    """

    masks: list[np.ndarray]
    confidence: list[float]
    review: list[bool]
    reason: list[str | None]


def _area(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _centroid(mask: np.ndarray) -> np.ndarray | None:
    ys, xs = np.nonzero(mask)
    return None if xs.size == 0 else np.array([xs.mean(), ys.mean()])


def _box(mask: np.ndarray, margin: int, shape: tuple[int, int]) -> tuple[slice, slice] | None:
    rows = np.flatnonzero(mask.any(axis=1))  # a row and a column pass: far quicker than every pixel's index
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    h, w = shape
    return (
        slice(max(0, rows[0] - margin), min(h, rows[-1] + 1 + margin)),
        slice(max(0, cols[0] - margin), min(w, cols[-1] + 1 + margin)),
    )


_HUE_BINS, _SATURATION_BINS = 12, 4
_COMMON_COLOUR = 0.05
"""Share of an object's pixels from which a (hue, saturation) bin is one of its colours."""


def _hue_histogram(image: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """Hue and saturation histogram of the mask's pixels (no value: shade), summing to 1."""
    region = _box(mask, 0, mask.shape)
    if region is None or _area(mask) < _VISIBLE:
        return None
    hsv = cv2.cvtColor(np.ascontiguousarray(image[region]), cv2.COLOR_BGR2HSV)
    hist = cv2.calcHist(
        [hsv], [0, 1], mask[region].astype(np.uint8), [_HUE_BINS, _SATURATION_BINS], [0, 180, 0, 256]
    )
    return cv2.normalize(hist, hist, 1.0, 0.0, cv2.NORM_L1)


def _colour_around(image: np.ndarray, mask: np.ndarray, others: np.ndarray, colours: np.ndarray) -> float:
    """Share of the pixels around ``mask`` (not in it or in ``others``) in one of the object's ``colours``."""
    radius = max(2, int(0.3 * np.sqrt(_area(mask))))
    region = _box(mask, radius + 1, mask.shape)
    if region is None:
        return 0.0
    crop = mask[region].astype(np.uint8)
    ring = (cv2.dilate(crop, _disk(radius)) > 0) & (crop == 0) & ~others[region]
    if not ring.any():
        return 0.0
    hsv = cv2.cvtColor(np.ascontiguousarray(image[region]), cv2.COLOR_BGR2HSV)
    hue = np.minimum(hsv[..., 0].astype(np.int32) * _HUE_BINS // 180, _HUE_BINS - 1)
    saturation = hsv[..., 1].astype(np.int32) * _SATURATION_BINS // 256
    common = colours.reshape(_HUE_BINS, _SATURATION_BINS)[hue, saturation] > _COMMON_COLOUR
    return float(common[ring].mean())


def _edge_contrast(image_lab: np.ndarray, depth: np.ndarray | None, mask: np.ndarray) -> float:
    """Lab distance between a thin band inside the outline and one outside (inf where depth shows the edge)."""
    region = _box(mask, 6, mask.shape)
    if region is None:
        return float("inf")
    crop = mask[region].astype(np.uint8)
    kernel = np.ones((5, 5), np.uint8)
    inner = (crop > 0) & (cv2.erode(crop, kernel) == 0)
    outer = (cv2.dilate(crop, kernel) > 0) & (crop == 0)
    if inner.sum() < 4 or outer.sum() < 4:
        return float("inf")
    lab = image_lab[region].reshape(-1, 3).astype(np.float32)
    difference = lab[inner.ravel()].mean(axis=0) - lab[outer.ravel()].mean(axis=0)
    contrast = float(np.linalg.norm(difference))
    if depth is not None:
        d = depth[region]
        near_in, near_out = d[inner & (d > 0)], d[outer & (d > 0)]
        if near_in.size > 4 and near_out.size > 4 and abs(np.median(near_out) - np.median(near_in)) > 0.01:
            return float("inf")
    return contrast


class _Frames:
    """Grey and Lab views of the working-size frames, made once each."""

    def __init__(self, frames: Sequence[np.ndarray]) -> None:
        self.frames = frames
        self._grey: dict[int, np.ndarray] = {}
        self._lab: dict[int, np.ndarray] = {}

    def grey(self, frame: int) -> np.ndarray:
        if frame not in self._grey:
            grey = cv2.cvtColor(self.frames[frame], cv2.COLOR_BGR2GRAY)
            self._grey[frame] = cv2.GaussianBlur(grey, (5, 5), 0).astype(np.float32)
        return self._grey[frame]

    def lab(self, frame: int) -> np.ndarray:
        if frame not in self._lab:
            self._lab[frame] = cv2.cvtColor(self.frames[frame], cv2.COLOR_BGR2LAB)
        return self._lab[frame]

    def find(
        self, frame: int, reference: int, mask: np.ndarray, shift: tuple[int, int], search: int
    ) -> tuple[tuple[int, int], float, float] | None:
        """Where the patch around ``mask`` on ``reference`` is on ``frame``, near ``shift``.

        Returns:
            The shift ``(dx, dy)`` in pixels, the normalised correlation of the
            best match, and the brightness gain; None when the patch has no texture.
        """
        region = _box(mask, 4, mask.shape)
        if region is None:
            return None
        template = self.grey(reference)[region]
        if template.size < 16 or float(template.std()) < 2.0:
            return None
        h, w = mask.shape
        y0, y1 = region[0].start + shift[1] - search, region[0].stop + shift[1] + search
        x0, x1 = region[1].start + shift[0] - search, region[1].stop + shift[0] + search
        cy0, cx0 = max(0, y0), max(0, x0)
        window = self.grey(frame)[cy0 : min(h, y1), cx0 : min(w, x1)]
        if window.shape[0] < template.shape[0] or window.shape[1] < template.shape[1]:
            return None
        scores = cv2.matchTemplate(window, template, cv2.TM_CCOEFF_NORMED)
        _, best, _, (bx, by) = cv2.minMaxLoc(scores)
        stay_x, stay_y = region[1].start + shift[0] - cx0, region[0].start + shift[1] - cy0
        if 0 <= stay_y < scores.shape[0] and 0 <= stay_x < scores.shape[1]:
            stay = float(scores[stay_y, stay_x])
            if stay >= best - STAY_MARGIN:  # as good where it was: a partly covered patch does not move it
                bx, by, best = stay_x, stay_y, stay
        dx, dy = cx0 + bx - region[1].start, cy0 + by - region[0].start
        found = self.grey(frame)[
            region[0].start + dy : region[0].stop + dy, region[1].start + dx : region[1].stop + dx
        ]
        gain = float(np.median(found) / max(np.median(template), 1.0))
        return (int(dx), int(dy)), float(best), gain


def _unchanged(now: np.ndarray, then: np.ndarray, gain: float) -> np.ndarray:
    """Pixels whose colour is the same in two Lab images: a shadow or a change of light (lightness
    scaled by up to 2x either way) is not a change; another colour is."""
    lightness_now = now[..., 0].astype(np.float32) + 8.0
    lightness_then = gain * then[..., 0].astype(np.float32) + 8.0
    ratio = lightness_now / lightness_then
    chroma = np.abs(now[..., 1:].astype(np.float32) - then[..., 1:].astype(np.float32)).sum(axis=2)
    return (chroma <= CHANGED) & (ratio >= 0.5) & (ratio <= 2.0)


def _shifted(mask: np.ndarray, shift: tuple[int, int]) -> np.ndarray:
    dx, dy = shift
    if not dx and not dy:
        return mask
    h, w = mask.shape[:2]
    moved = np.zeros_like(mask)
    moved[max(0, dy) : h + min(0, dy), max(0, dx) : w + min(0, dx)] = mask[
        max(0, -dy) : h + min(0, -dy), max(0, -dx) : w + min(0, -dx)
    ]
    return moved


def _keep_static(
    frames: _Frames,
    frame: int,
    prompt_frame: int,
    prompt_mask: np.ndarray,
    shift: tuple[int, int],
    search: float = 1 / 3,
    match_at_least: float = MATCH,
    share: float = MIN_STATIC_SHARE,
) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The visible part of an object's prompt mask on ``frame``, and where it is now.

    The patch around the prompt mask is found again near its last place (a
    camera that shakes or turns moves a static object; a moved one was put down
    looking as it did); the part of the mask whose pixels still look as on the
    prompt frame is what shows. None when the patch is not found (the object is
    mostly covered, moved, turned, or the view changed too much).

    Args:
        frames: The video's views.
        frame: The frame to look on.
        prompt_frame: The frame of the prompt (the reference).
        prompt_mask: The object's mask on it.
        shift: Where it was last found, ``(dx, dy)`` pixels from its prompt-frame place.
        search: How far from ``shift`` to look, in object sizes (square root of its area).
        match_at_least: The normalised correlation a match needs.
        share: The share of the mask that must still look the same.
    """
    size = int(np.sqrt(max(_area(prompt_mask), 1)))
    match = frames.find(frame, prompt_frame, prompt_mask, shift, max(6, int(size * search)))
    if match is None or match[1] < match_at_least:
        return None
    shift, _, gain = match
    expected = _shifted(prompt_mask, shift)
    region = _box(expected, 2, expected.shape)
    if region is None:
        return None
    same = _unchanged(frames.lab(frame)[region], _shifted(frames.lab(prompt_frame), shift)[region], gain)
    same &= expected[region]
    same = cv2.morphologyEx(same.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)) > 0
    if same.sum() < share * expected[region].sum():
        return None
    kept = np.zeros_like(prompt_mask)
    kept[region] = same
    return kept, shift


def _exclusive(masks: list[np.ndarray], order: list[int], depth: np.ndarray | None) -> list[str | None]:
    """Removes pixels claimed by two objects from the one behind; returns ``merge`` where overlaps were large.

    Args:
        masks: This frame's masks, changed in place.
        order: Precedence when depth cannot tell (lower is in front).
        depth: This frame's depth (m), or None.
    """
    doubts: list[str | None] = [None] * len(masks)
    areas = [_area(m) for m in masks]
    for a in range(len(masks)):
        for b in range(a + 1, len(masks)):
            if not areas[a] or not areas[b]:
                continue
            overlap = masks[a] & masks[b]
            shared = _area(overlap)
            if not shared:
                continue
            if shared > MERGE_SHARE * (areas[a] + areas[b] - shared):
                doubts[a] = doubts[b] = "merge"
            front = a if order[a] <= order[b] else b
            if depth is not None:  # where depth clearly tells which is in front, it decides
                near = [np.median(depth[m & ~overlap & (depth > 0)]) if (m & ~overlap & (depth > 0)).sum() > 8
                        else np.nan for m in (masks[a], masks[b])]  # fmt: skip
                if np.isfinite(near).all() and abs(near[0] - near[1]) > DEPTH_APART:
                    front = a if near[0] < near[1] else b
            behind = b if front == a else a
            masks[behind] &= ~overlap
            areas[behind] = _area(masks[behind])
    return doubts


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = _area(a | b)
    return _area(a & b) / union if union else 1.0


def _disk(radius: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def _fills_box(mask: np.ndarray, box: Sequence[float] | None) -> bool:
    """Whether a prompt-frame mask fills the box drawn around the object (True without a box).

    A box drawn loosely leaves a margin on every side; a mask that holds only part of the
    object leaves one side of the box much emptier than the opposite one, or spans little of it.
    """
    if box is None:
        return True
    x0, y0, x1, y1 = box
    width, height = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    ys, xs = np.nonzero(mask)
    if xs.size == 0:
        return False
    left, right = max(0.0, (xs.min() - x0) / width), max(0.0, (x1 - xs.max() - 1) / width)
    top, bottom = max(0.0, (ys.min() - y0) / height), max(0.0, (y1 - ys.max() - 1) / height)
    span = min(1.0 - left - right, 1.0 - top - bottom)
    lopsided = max(abs(left - right), abs(top - bottom))
    return span >= PARTIAL_SPAN and lopsided <= PARTIAL_LOPSIDED


def _specks(mask: np.ndarray, reference_area: float) -> bool:
    region = _box(mask, 1, mask.shape)
    if region is None:
        return False
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask[region].astype(np.uint8), connectivity=8)
    if count <= 2:
        return False
    areas = np.sort(stats[1:, cv2.CC_STAT_AREA])[::-1]
    pieces = int((areas >= max(4.0, 0.02 * reference_area)).sum())
    return pieces >= 3 and areas[0] < 0.6 * areas.sum()


def assess(
    masks: list[list[np.ndarray]],
    confidence: list[list[float]],
    frames: Sequence[np.ndarray],
    depth: Sequence[np.ndarray | None] | None,
    roles: Sequence[str],
    prompt_frames: Sequence[int | Sequence[int]],
    prompt_boxes: Sequence[dict[int, Sequence[float] | None]] | None = None,
) -> list[Doubt]:
    """Checks every object's masks together and says where they are doubtful.

    Args:
        masks: Per object, per frame ``HxW`` bool at the frames' size (working size).
        confidence: Per object, per frame, the backend's confidence in [0, 1].
        frames: The video, ``HxWx3`` uint8 BGR at the masks' size.
        depth: Per frame ``HxW`` float32 metres (0 = none), or None.
        roles: Per object, its role from prompts.json.
        prompt_frames: Per object, the frame it was prompted on, or all its prompt frames
            (corrections): each frame is judged against the latest prompt at or before it.
        prompt_boxes: Per object, prompt frame -> the box drawn there ``(x0, y0, x1, y1)`` in
            the frames' pixels (None for a prompt of points only); None when not known.

    Returns:
        Per object, the corrected masks, capped confidences and review flags.
    """
    count, frame_count = len(masks), len(frames)
    depth = depth if depth is not None else [None] * frame_count
    anchors = [sorted({p} if isinstance(p, int) else set(p)) for p in prompt_frames]
    references = {
        (o, f): (masks[o][f].copy(), max(_area(masks[o][f]), 1), _hue_histogram(frames[f], masks[o][f]))
        for o in range(count)
        for f in anchors[o]
    }
    boxes = prompt_boxes if prompt_boxes is not None else [{} for _ in range(count)]
    fills = {(o, f): _fills_box(references[o, f][0], boxes[o].get(f)) for o, f in references}
    static = [roles[o] in STATIC_ROLES for o in range(count)]
    # In front when depth cannot tell: moved objects over static ones, then the smaller.
    order = sorted(range(count), key=lambda o: (static[o], references[o, anchors[o][0]][1]))
    order = [order.index(o) for o in range(count)]
    views = _Frames(frames)
    shifts = [(0, 0)] * count
    out = [Doubt([], [], [], []) for _ in range(count)]
    last_seen: list[int | None] = [None] * count
    anchor_now = [anchors[o][0] for o in range(count)]
    for frame in range(frame_count):
        current = [masks[o][frame].copy() for o in range(count)]
        conf = [float(confidence[o][frame]) for o in range(count)]
        reasons: list[str | None] = [None] * count
        # Each object is judged against its latest prompt at or before this frame (a correction
        # prompt is a new reference from its frame on).
        for o in range(count):
            latest = max((f for f in anchors[o] if f <= frame), default=anchors[o][0])
            if latest != anchor_now[o]:
                anchor_now[o], shifts[o] = latest, (0, 0)
        reference = [references[o, anchor_now[o]][0] for o in range(count)]
        reference_area = [references[o, anchor_now[o]][1] for o in range(count)]
        reference_colours = [references[o, anchor_now[o]][2] for o in range(count)]
        for o in range(count):
            if not static[o] or frame in anchors[o]:
                continue
            found = _keep_static(views, frame, anchor_now[o], reference[o], shifts[o])
            if found is not None:
                kept, shifts[o] = found
                expected = _shifted(reference[o], shifts[o])
                if _iou(current[o], expected) < AGREE:  # the backend lost or leaked it: keep its place
                    current[o] = kept
                    conf[o] = max(conf[o], 0.6 + 0.35 * min(1.0, _area(kept) / reference_area[o]))
                continue
            # Covered, or changed by what was put in or on it: it stays where it was last found,
            # unless the backend follows it clearly elsewhere (then it moved, and a person checks).
            home = _shifted(reference[o], shifts[o])
            centre, home_centre = _centroid(current[o]), _centroid(home)
            size = np.sqrt(reference_area[o])
            if (centre is not None and np.hypot(*(centre - home_centre)) > 0.5 * size
                    and _area(current[o]) <= DRIFT_AREA * reference_area[o]):  # fmt: skip
                reasons[o] = "drift"
                continue
            around = cv2.dilate(home.astype(np.uint8), _disk(max(2, int(0.15 * size)))) > 0
            if _area(current[o] & ~around) > 0.5 * reference_area[o]:
                reasons[o] = "leak"
            showing = home & _unchanged(views.lab(frame), _shifted(views.lab(anchor_now[o]), shifts[o]), 1.0)
            inside = current[o] & around
            current[o] = inside if _area(inside) > max(0.5 * _area(showing), _VISIBLE) else showing
            conf[o] = min(max(conf[o], 0.3), 0.5)
        for o in range(count):
            if static[o] or frame in anchors[o] or _area(current[o]) >= REFIND_AREA * reference_area[o]:
                continue
            # A moved object the backend lost (or keeps only a sliver of) may have been put down looking
            # as it did when prompted: find that again near where it was last seen, clear of the others.
            last = out[o].masks[last_seen[o]] if last_seen[o] is not None else reference[o]
            then, home = _centroid(last), _centroid(reference[o])
            if then is None or home is None:
                continue
            guess = (int(round(then[0] - home[0])), int(round(then[1] - home[1])))
            found = _keep_static(
                views, frame, anchor_now[o], reference[o], guess, REFIND_SEARCH, REFIND_MATCH, 0.5
            )
            if found is None:
                continue
            kept = found[0]
            taken = np.zeros_like(kept)
            for other in range(count):
                if other != o:
                    taken |= current[other]
            if _area(kept & taken) < 0.3 * _area(kept) and _area(kept) > _area(current[o]):
                current[o] = kept
                conf[o] = max(conf[o], 0.5 + 0.3 * min(1.0, _area(kept) / reference_area[o]))
        merges = _exclusive(current, order, depth[frame])
        for o in range(count):
            reasons[o] = merges[o] or reasons[o]
            area = _area(current[o])
            recent = [a for a in out[o].masks[-RECENT:] if a is not None]
            recent_areas = [_area(m) for m in recent if _area(m) >= _VISIBLE]
            if area >= _VISIBLE:
                if reasons[o] is None and (
                    area > LEAK_RATIO * reference_area[o]
                    or (len(recent_areas) >= 3 and area > GROWTH_RATIO * float(np.median(recent_areas)))
                ):
                    reasons[o] = "leak"
                if reasons[o] is None and not fills[o, anchor_now[o]]:
                    reasons[o] = "partial"
                if (reasons[o] is None and area < PARTIAL_AREA * reference_area[o]
                        and reference_colours[o] is not None):  # fmt: skip
                    others = np.zeros_like(current[o])
                    for other in range(count):
                        if other != o:
                            others |= current[other]
                    if _colour_around(frames[frame], current[o], others, reference_colours[o]) > PARTIAL_RING:
                        reasons[o] = "partial"
                if reasons[o] is None and reference_colours[o] is not None:
                    colours = _hue_histogram(frames[frame], current[o])
                    distance = cv2.compareHist(reference_colours[o], colours, cv2.HISTCMP_BHATTACHARYYA)
                    if distance > APPEARANCE_DISTANCE:
                        reasons[o] = "appearance"
                if reasons[o] is None and _specks(current[o], reference_area[o]):
                    reasons[o] = "specks"
                if reasons[o] is None:
                    contrast = _edge_contrast(views.lab(frame), depth[frame], current[o])
                    if contrast < LOW_CONTRAST:
                        conf[o] = min(conf[o], 0.6)
                        if not 0.6 <= area / reference_area[o] <= 1.6:
                            reasons[o] = "low_contrast"
                last_seen[o] = frame
            elif reasons[o] is None and last_seen[o] is not None:
                then = out[o].masks[last_seen[o]]
                region = _box(then, 4, then.shape)
                size = int(np.sqrt(reference_area[o]))
                match = views.find(frame, last_seen[o], then, (0, 0), max(4, size // 4)) if region else None
                if match is not None and match[1] > 0.85:  # it looks as when it was last seen, nearby
                    reasons[o] = "lost"
            if reasons[o] is not None:
                conf[o] = min(conf[o], REVIEW_CONFIDENCE)
            out[o].masks.append(current[o])
            out[o].confidence.append(float(np.clip(conf[o], 0.0, 1.0)))
            out[o].review.append(reasons[o] is not None)
            out[o].reason.append(reasons[o])
    return out


def flagged_ranges(frames: Sequence[dict]) -> list[tuple[int, int, str]]:
    """Runs of consecutive flagged frames of one object, from its report entries.

    Args:
        frames: The object's ``segmentation.objects[].frames`` entries (``frame``, ``review``, ``reason``).

    Returns:
        ``(first, last, reason)`` per run, the reason being the run's most frequent one.
    """
    runs: list[list] = []
    for entry in frames:
        if not entry.get("review"):
            continue
        if runs and entry["frame"] == runs[-1][1] + 1:
            runs[-1][1] = entry["frame"]
            runs[-1][2].append(entry.get("reason") or "doubtful")
        else:
            runs.append([entry["frame"], entry["frame"], [entry.get("reason") or "doubtful"]])
    return [(first, last, max(set(reasons), key=reasons.count)) for first, last, reasons in runs]
