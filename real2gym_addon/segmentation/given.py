"""Masks made elsewhere: the ``given`` backend reads them from the demo folder.

Users who segment on another machine (SAM2 on a GPU, an annotation tool) bring
their masks in one of two layouts (docs/data-contract.md, "Masks made elsewhere"):

- ``masks/<object name>/000000.png ...``: one 8-bit or 1-bit PNG per object and
  frame, non-zero on the object; a missing file means the object is not seen there.
- ``masks_indexed/000000.png ...``: one palette-indexed PNG per frame (the DAVIS
  layout), index k for the k-th object of prompts.json, 0 for the background.

The masks go through the same doubt checks as any backend's (``quality.assess``), so
a given mask that jumps or leaks is flagged in the report as a tracked one would be; but
they are kept as given (the checks correct a tracker's masks, not the user's).
The prompts still name the objects and their frames; they do not change the masks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np

from ..errors import SegmentationError
from .base import ObjectMask, Prompt, VideoSegmenter

PER_OBJECT = "masks"
"""The folder of one sub-folder of PNGs per object."""
INDEXED = "masks_indexed"
"""The folder of one palette-indexed PNG per frame."""
MAX_MASK_BYTES = 64 * 1024 * 1024
"""A mask PNG larger than this is not a mask (refused before it is decoded)."""


def mask_file(folder: Path, frame: int) -> Path:
    """The PNG of ``frame`` in a folder of masks: ``000012.png``."""
    return folder / f"{frame:06d}.png"


def given_layout(demo_path: Path) -> str | None:
    """Which layout of masks a demo folder holds (:data:`PER_OBJECT` or :data:`INDEXED`), or None."""
    if (demo_path / PER_OBJECT).is_dir():
        return PER_OBJECT
    if (demo_path / INDEXED).is_dir():
        return INDEXED
    return None


def _read_png(path: Path, flags: int) -> np.ndarray:
    """Decodes a PNG, refusing a file that is not one (named in the message)."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise SegmentationError(f"the mask {path} cannot be read ({e.strerror})") from None
    if not path.is_file() or size > MAX_MASK_BYTES:
        raise SegmentationError(f"the mask {path} is not a PNG file of at most {MAX_MASK_BYTES // 2**20} MB")
    image = cv2.imread(str(path), flags)
    if image is None:
        raise SegmentationError(f"the mask {path} is not a readable PNG image")
    return image


def _palette(path: Path) -> np.ndarray | None:
    """A palette PNG's colours (``Kx3`` RGB, index order) from its PLTE chunk; None without one."""
    data = path.read_bytes()
    position = 8  # after the PNG signature
    while position + 8 <= len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        if kind == b"PLTE":
            colours = np.frombuffer(data[position + 8 : position + 8 + length], np.uint8)
            return colours[: len(colours) // 3 * 3].reshape(-1, 3)
        if kind == b"IDAT":
            return None
        position += 12 + length
    return None


def read_indexed(path: Path) -> np.ndarray:
    """A DAVIS-layout mask as ``HxW`` object indices (0 = background).

    OpenCV expands a palette PNG to colours; each colour is mapped back to its
    palette index. A grey-level PNG's values are the indices themselves.

    Raises:
        SegmentationError: A colour that is not in the palette, or a colour image without one.
    """
    image = _read_png(path, cv2.IMREAD_UNCHANGED)
    if image.ndim == 2:
        return image.astype(np.int32)
    palette = _palette(path)
    if palette is None:
        raise SegmentationError(
            f"the mask {path} is a colour image without a palette; masks_indexed/ holds palette-indexed "
            "or grey-level PNGs (index k = the k-th object of prompts.json)"
        )
    rgb = image[..., 2::-1].astype(np.int32)  # BGR(A) -> RGB
    codes = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    palette_codes = (
        (palette[:, 0].astype(np.int32) << 16) | (palette[:, 1].astype(np.int32) << 8) | palette[:, 2]
    )
    first = {}
    for index, code in enumerate(palette_codes.tolist()):
        first.setdefault(code, index)
    unique, inverse = np.unique(codes, return_inverse=True)
    missing = [hex(c) for c in unique.tolist() if c not in first]
    if missing:
        raise SegmentationError(
            f"the mask {path} has colours that are not in its palette ({', '.join(missing[:3])})"
        )
    return np.array([first[c] for c in unique.tolist()], np.int32)[inverse].reshape(codes.shape)


class GivenMasksSegmenter(VideoSegmenter):
    """Reads the masks a user brought with the demo folder, at the working size."""

    name = "given"
    keeps_masks = True

    def __init__(self) -> None:
        self._demo = None
        self._masks: dict[int, list[np.ndarray]] = {}
        self._added: set[int] = set()
        self._size: tuple[int, int] | None = None

    def start_on(self, demo) -> None:
        layout = given_layout(Path(demo.path))
        if layout is None:
            raise SegmentationError(
                f"the demo folder {demo.path} has neither masks/<object>/ nor masks_indexed/; the 'given' "
                "backend reads the masks made elsewhere from there (docs/data-contract.md)"
            )
        if layout == PER_OBJECT:
            for obj in demo.objects:
                if not (Path(demo.path) / PER_OBJECT / obj.name).is_dir():
                    raise SegmentationError(
                        f"object '{obj.name}': no folder masks/{obj.name}/ in {demo.path} (one PNG per frame, "
                        "non-zero on the object)"
                    )
        self._demo, self._layout = demo, layout

    def init_state(
        self, frames: Sequence[np.ndarray], depth: Sequence[np.ndarray | None] | None = None
    ) -> None:
        if self._demo is None:
            raise SegmentationError(
                "the 'given' backend reads masks from a demo folder: start it on one first"
            )
        self._size = frames[0].shape[:2]
        self._masks, self._added = self._read_all(len(frames)), set()

    def _read_all(self, count: int) -> dict[int, list[np.ndarray]]:
        demo, folder = self._demo, Path(self._demo.path)
        video_size = (demo.video.height, demo.video.width)
        masks = {index: [] for index in range(len(demo.objects))}
        for frame in range(count):
            if self._layout == INDEXED:
                path = mask_file(folder / INDEXED, frame)
                indices = read_indexed(path) if path.exists() else np.zeros(video_size, np.int32)
                self._check_size(indices, path, video_size)
                for index in masks:
                    masks[index].append(self._working(indices == index + 1))
                continue
            for index, obj in enumerate(demo.objects):
                path = mask_file(folder / PER_OBJECT / obj.name, frame)
                mask = (
                    _read_png(path, cv2.IMREAD_GRAYSCALE) > 0 if path.exists() else np.zeros(video_size, bool)
                )
                self._check_size(mask, path, video_size)
                masks[index].append(self._working(mask))
        return masks

    @staticmethod
    def _check_size(image: np.ndarray, path: Path, video_size: tuple[int, int]) -> None:
        if image.shape[:2] != video_size:
            raise SegmentationError(
                f"the mask {path} is {image.shape[1]}x{image.shape[0]}; the video is "
                f"{video_size[1]}x{video_size[0]}"
            )

    def _working(self, mask: np.ndarray) -> np.ndarray:
        """A video-size mask at the working size."""
        if mask.shape == self._size:
            return mask
        height, width = self._size
        return cv2.resize(mask.astype(np.uint8), (width, height), interpolation=cv2.INTER_NEAREST) > 0

    def _result(self, object_id: int, frame: int) -> ObjectMask:
        mask = self._masks[object_id][frame]
        return ObjectMask(mask, 1.0 if mask.any() else 0.0)

    def add_prompt(self, object_id: int, prompt: Prompt) -> ObjectMask:
        if object_id not in self._masks:
            raise SegmentationError(f"object id {object_id} is not one of the demo's objects")
        self._added.add(object_id)
        result = self._result(object_id, prompt.frame)
        if not result.mask.any():
            name = self._demo.objects[object_id].name
            where = (
                f"masks_indexed/{prompt.frame:06d}.png has no index {object_id + 1}"
                if self._layout == INDEXED
                else f"masks/{name}/{prompt.frame:06d}.png is empty or missing"
            )
            raise SegmentationError(
                f"object '{name}': its prompt is on frame {prompt.frame}, but {where}; the given masks and "
                "prompts.json must agree on where the object is seen"
            )
        return result

    def propagate(
        self, start_frame: int, reverse: bool = False
    ) -> Iterator[tuple[int, dict[int, ObjectMask]]]:
        count = len(next(iter(self._masks.values()), []))
        frames = range(start_frame, -1, -1) if reverse else range(start_frame, count)
        for frame in frames:
            yield frame, {object_id: self._result(object_id, frame) for object_id in sorted(self._added)}
