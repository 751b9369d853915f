"""Ground truth of a demo folder (``truth.json``): masks as RLE, and a reader.

``truth.json`` is for scoring only; the pipeline never reads it. Masks use COCO's
run-length encoding: ``{"size": [h, w], "counts": [...]}`` where the counts run over
the mask in column-major (Fortran) order and start with a run of zeros (which may be
empty), exactly as pycocotools' uncompressed RLE. Compressed RLE strings (pycocotools'
``counts`` as ``str`` or ``bytes``) are read as well.

Poses are in the camera frame (OpenCV: x right, y down, z forward, metres) and the
world frame (z up, z = 0 on the table); quaternions are [w, x, y, z].
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


def encode_rle(mask: np.ndarray) -> dict[str, Any]:
    """Encode a binary mask as COCO uncompressed RLE.

    Args:
        mask: (H, W) array; non-zero is on the object. Rows are image rows (v), columns
            image columns (u).

    Returns:
        ``{"size": [H, W], "counts": [n0, n1, ...]}``: alternating run lengths of 0s
        and 1s over the column-major flattened mask, starting with 0s.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"a mask must be 2-D (H, W), got shape {mask.shape}")
    flat = mask.astype(bool).ravel(order="F")
    changes = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], changes, [flat.size]])
    counts = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        counts.insert(0, 0)
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


def _counts_from_string(text: str | bytes) -> list[int]:
    """Counts of a pycocotools compressed RLE string (``rleFrString`` in maskApi.c)."""
    data = text.encode("ascii") if isinstance(text, str) else bytes(text)
    counts: list[int] = []
    pos = 0
    while pos < len(data):
        value, shift, more = 0, 0, True
        while more:
            chunk = data[pos] - 48
            value |= (chunk & 0x1F) << (5 * shift)
            more = bool(chunk & 0x20)
            pos += 1
            shift += 1
            if not more and chunk & 0x10:
                value |= -1 << (5 * shift)
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


def compress_counts(counts: list[int]) -> str:
    """pycocotools' compressed string for uncompressed counts (``rleToString``).

    Args:
        counts: Uncompressed RLE counts.

    Returns:
        The ASCII string pycocotools writes in a compressed RLE's ``counts``.
    """
    chars = []
    for index, count in enumerate(counts):
        value = int(count) - (int(counts[index - 2]) if index > 2 else 0)
        more = True
        while more:
            chunk = value & 0x1F
            value >>= 5
            more = value != -1 if chunk & 0x10 else value != 0
            if more:
                chunk |= 0x20
            chars.append(chr(chunk + 48))
    return "".join(chars)


def decode_rle(rle: dict[str, Any]) -> np.ndarray:
    """Decode a COCO RLE (uncompressed list or compressed string counts).

    Args:
        rle: ``{"size": [H, W], "counts": ...}``.

    Returns:
        The mask, (H, W) bool.

    Raises:
        ValueError: If the counts do not add up to H x W.
    """
    height, width = (int(v) for v in rle["size"])
    counts = rle["counts"]
    if isinstance(counts, (str, bytes)):
        counts = _counts_from_string(counts)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.sum() != height * width:
        raise ValueError(
            f"RLE counts add up to {int(counts.sum())} pixels, the size says "
            f"{height} x {width} = {height * width}"
        )
    values = np.zeros(counts.size, dtype=bool)
    values[1::2] = True
    flat = np.repeat(values, counts)
    return flat.reshape((height, width), order="F")


def rle_area(rle: dict[str, Any]) -> int:
    """Number of pixels on the object (the sum of the odd runs)."""
    counts = rle["counts"]
    if isinstance(counts, (str, bytes)):
        counts = _counts_from_string(counts)
    return int(sum(counts[1::2]))


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two (H, W) masks; 1.0 when both are empty."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


@dataclass(frozen=True)
class TruthFrame:
    """One object at one video frame.

    Attributes:
        frame: Video frame index.
        position_cam: Centre of the object's bounding box, camera frame (m), (3,).
        quaternion_cam: Object orientation in the camera frame, [w, x, y, z].
        position_world: The same centre in the world frame (m), (3,).
        quaternion_world: Orientation in the world frame, [w, x, y, z].
        visible: Whether any of the object is seen.
        visible_fraction: Visible pixels over the pixels of the object rendered alone.
        rle: The visible mask, COCO uncompressed RLE.
    """

    frame: int
    position_cam: np.ndarray
    quaternion_cam: np.ndarray
    position_world: np.ndarray
    quaternion_world: np.ndarray
    visible: bool
    visible_fraction: float
    rle: dict[str, Any]

    def mask(self) -> np.ndarray:
        """The visible mask, (H, W) bool."""
        return decode_rle(self.rle)


@dataclass(frozen=True)
class TruthObject:
    """One object: its shape, size, mass and per-frame truth.

    Attributes:
        name: As in prompts.json.
        shape: ``box``, ``cup``, ``cylinder``...
        size: Full bounding-box extents in the object's frame, z up (m), (3,).
        mass: Kilograms.
        params: Shape parameters (e.g. ``outer_radius``, ``wall_thickness``), metres.
        frames: One entry per video frame, in order.
    """

    name: str
    shape: str
    size: np.ndarray
    mass: float
    params: dict[str, Any]
    frames: list[TruthFrame]


@dataclass(frozen=True)
class Truth:
    """A demo's ground truth.

    Attributes:
        version: Format version.
        world_from_camera: 4x4 transform (camera frame OpenCV, world frame z up).
        table_normal_cam: Unit table normal pointing up, camera frame, (3,).
        table_offset_cam: Plane offset d with ``normal_cam . p + d = 0`` (m).
        objects: Object name to its truth.
        keyframes: ``{"frame", "event", "object"}`` entries in frame order.
        gripper: Per-frame gripper poses in the camera frame (dicts as in the file).
        raw: The whole parsed file, for fields this reader does not model.
        hand: The demonstrator's hand seen in the video (its visible masks, and its grasp centre as
            ``position_world``/``position_cam``; no orientation), or None where the file has none.
    """

    version: int
    world_from_camera: np.ndarray
    table_normal_cam: np.ndarray
    table_offset_cam: float
    objects: dict[str, TruthObject]
    keyframes: list[dict[str, Any]]
    gripper: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    hand: TruthObject | None = None

    def track(self, name: str) -> TruthObject:
        """The object, or the hand, of that name."""
        if self.hand is not None and name == self.hand.name and name not in self.objects:
            return self.hand
        return self.objects[name]

    def keyframe(self, event: str, obj: str | None = None) -> int | None:
        """Frame of the first ``event`` (optionally for object ``obj``), or None."""
        for entry in self.keyframes:
            if entry["event"] == event and (obj is None or entry.get("object") == obj):
                return int(entry["frame"])
        return None


_OBJECT_KEYS = {"name", "shape", "size", "mass", "frames"}


def _read_frame(entry: dict[str, Any]) -> TruthFrame:
    return TruthFrame(
        frame=int(entry["frame"]),
        position_cam=np.asarray(entry["position_cam"], float),
        quaternion_cam=np.asarray(entry.get("quaternion_cam", [np.nan] * 4), float),
        position_world=np.asarray(entry.get("position_world", [np.nan] * 3), float),
        quaternion_world=np.asarray(entry.get("quaternion_world", [np.nan] * 4), float),
        visible=bool(entry["visible"]),
        visible_fraction=float(entry.get("visible_fraction", float(entry["visible"]))),
        rle=entry["mask"],
    )


def load_truth(path: str | Path) -> Truth:
    """Read ``truth.json``.

    Args:
        path: The file, or the demo folder that holds it.

    Returns:
        The parsed truth, arrays as numpy.

    Raises:
        FileNotFoundError: If there is no truth.json there.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "truth.json"
    raw = json.loads(path.read_text())
    objects = {}
    for entry in raw["objects"]:
        objects[entry["name"]] = TruthObject(
            name=entry["name"],
            shape=entry["shape"],
            size=np.asarray(entry["size"], float),
            mass=float(entry.get("mass", float("nan"))),
            params={k: v for k, v in entry.items() if k not in _OBJECT_KEYS},
            frames=[_read_frame(f) for f in entry["frames"]],
        )
    gripper = raw.get("gripper", {})
    hand = raw.get("hand")
    if hand is not None:
        hand = TruthObject(hand["name"], "hand", np.full(3, np.nan), float("nan"), {},
                           [_read_frame(f) for f in hand["frames"]])  # fmt: skip
    return Truth(
        version=int(raw["version"]),
        world_from_camera=np.asarray(raw["world_from_camera"], float),
        table_normal_cam=np.asarray(raw["table"]["normal_cam"], float),
        table_offset_cam=float(raw["table"]["offset_cam"]),
        objects=objects,
        keyframes=sorted(raw.get("keyframes", []), key=lambda k: k["frame"]),
        gripper=list(gripper.get("frames", []) if isinstance(gripper, dict) else gripper),
        raw=raw,
        hand=hand,
    )


def write_given_masks(truth: Truth, folder: str | Path, names: list[str], indexed: bool = False) -> Path:
    """Writes the truth's visible masks into a demo folder as masks made elsewhere (the ``given`` backend).

    With them a run measures what comes after segmentation on masks known to be right.

    Args:
        truth: The demo's truth.
        folder: The demo folder to write into.
        names: The objects in prompts.json's order (index k + 1 in the indexed layout); the hand's
            name (``Truth.hand``) writes the hand's masks.
        indexed: Write ``masks_indexed/`` (one grey-level index PNG per frame) instead of
            ``masks/<object>/`` (one PNG per object and frame; none where it is not seen).

    Returns:
        The folder of masks written.
    """
    import cv2

    root = Path(folder) / ("masks_indexed" if indexed else "masks")
    frames = len(next(iter(truth.objects.values())).frames)
    for frame in range(frames):
        masks = [truth.track(name).frames[frame].mask() for name in names]
        if indexed:
            index = np.zeros(masks[0].shape, np.uint8)
            for number, mask in enumerate(masks, start=1):
                index[mask] = number
            root.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(root / f"{frame:06d}.png"), index)
            continue
        for name, mask in zip(names, masks, strict=True):
            if mask.any():
                (root / name).mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(root / name / f"{frame:06d}.png"), mask.astype(np.uint8) * 255)
    return root


HAND_AREA_SHARE = 0.6
"""A hand's prompt (:func:`hand_prompt`) is drawn on the first frame where this share of its largest
visible area shows."""


def mask_prompt(mask: np.ndarray, pad: int = 2) -> tuple[list[int], list[int]]:
    """A prompt drawn from a visible mask as a user would: the mask's bounding box (exclusive ends) padded
    by ``pad`` pixels and clipped to the image, and the mask pixel farthest from its edge ``[x, y]``.

    Args:
        mask: ``HxW`` bool, not empty.
        pad: Pixels added around the box.
    """
    import cv2

    rows, cols = np.nonzero(mask)
    height, width = mask.shape
    box = [max(int(cols.min()) - pad, 0), max(int(rows.min()) - pad, 0),
           min(int(cols.max()) + 1 + pad, width), min(int(rows.max()) + 1 + pad, height)]  # fmt: skip
    inside = cv2.distanceTransform(np.pad(mask, 1).astype(np.uint8), cv2.DIST_L2, 3)[1:-1, 1:-1]
    y, x = np.unravel_index(int(np.argmax(inside)), inside.shape)
    return box, [int(x), int(y)]


def hand_prompt(truth: Truth, pad: int = 2) -> dict[str, Any] | None:
    """prompts.json's entry for the truth's hand, as a user would draw it (:func:`mask_prompt`) on the
    first frame where most of it shows (:data:`HAND_AREA_SHARE`); None where the truth has no hand."""
    if truth.hand is None:
        return None
    masks = [f.mask() for f in truth.hand.frames]
    areas = np.array([m.sum() for m in masks])
    if not areas.max():
        return None
    frame = int(np.nonzero(areas >= HAND_AREA_SHARE * areas.max())[0][0])
    box, point = mask_prompt(masks[frame], pad)
    return {"name": truth.hand.name, "frame": frame, "box": box, "points": [[*point, 1]], "role": "hand"}
