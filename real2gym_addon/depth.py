"""Reading the demo's depth images: ``depth/000000.png ...``, 16-bit, times ``depth_scale``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .errors import DemoFolderError

if TYPE_CHECKING:
    from .demo import Demo

CACHE_BYTES = 256 * 2**20
"""Decoded depth images kept between reads (about 400 frames at 640x480): the door's check, the
segmentation and the geometry stage each go through every frame, and a PNG decodes once."""

_decoded_images: OrderedDict[tuple[str, int, int], np.ndarray] = OrderedDict()
_decoded_lock = threading.Lock()


def _decode(path: Path) -> np.ndarray | None:
    """The image at ``path`` as stored (``cv2.IMREAD_UNCHANGED``), or None when it cannot be read.

    Decoded images are kept, least recently read out first, up to :data:`CACHE_BYTES`, under the
    file's path, modification time and size (a file written anew is decoded anew). The arrays
    are read-only: callers convert them (``astype``) before any change.
    """
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _decoded_lock:
        image = _decoded_images.get(key)
        if image is not None:
            _decoded_images.move_to_end(key)
            return image
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None or image.nbytes > CACHE_BYTES // 4:
        return image
    image.flags.writeable = False
    with _decoded_lock:
        _decoded_images[key] = image
        total = sum(i.nbytes for i in _decoded_images.values())
        while total > CACHE_BYTES and len(_decoded_images) > 1:
            _, dropped = _decoded_images.popitem(last=False)
            total -= dropped.nbytes
    return image


def read_depth(demo: Demo, frame: int) -> np.ndarray | None:
    """The depth of one video frame.

    Args:
        demo: The checked demo.
        frame: The video frame (0-based).

    Returns:
        ``HxW`` float32 z-depth in metres (0 = no reading), or None when the
        demo has no depth or no image for this frame.

    Raises:
        DemoFolderError: The image is not a single-channel image of the video's size.
    """
    if demo.depth_dir is None:
        return None
    path = demo.depth_dir / f"{frame:06d}.png"
    image = _decode(path) if path.is_file() else None
    if image is None:
        return None
    video = demo.video
    if image.shape[:2] != (video.height, video.width) or image.ndim != 2:
        raise DemoFolderError(
            f"depth/{path.name} is {image.shape[1]}x{image.shape[0]} but the video is "
            f"{video.width}x{video.height}; depth must be aligned with the video, one image per frame"
        )
    return image.astype(np.float32) * demo.camera.depth_scale


def _frames_text(frames: list[int]) -> str:
    shown = ", ".join(str(f) for f in frames[:5])
    return shown + (f" and {len(frames) - 5} more" if len(frames) > 5 else "")


def check_depth_images(folder: Path, frames: int, width: int, height: int) -> None:
    """Checks that ``folder`` holds one readable 16-bit PNG of the video's size per frame.

    Every image is decoded once (a few milliseconds each), so that a damaged or
    wrong file is named before any stage runs, not half-way through a run.

    Args:
        folder: The demo's ``depth`` folder.
        frames: Number of video frames.
        width: Video width in pixels.
        height: Video height in pixels.

    Raises:
        DemoFolderError: Naming the missing frames or the first wrong file and what is wrong with it.
    """
    missing = [f for f in range(frames) if not (folder / f"{f:06d}.png").is_file()]
    if missing:
        raise DemoFolderError(
            f"depth/ has no image for frame {_frames_text(missing)} (of 0 to {frames - 1}); give one "
            "16-bit PNG per video frame (000000.png ...) with 0 where there is no reading, or remove depth/"
        )
    for frame in range(frames):
        name = f"depth/{frame:06d}.png"
        image = _decode(folder / f"{frame:06d}.png")
        if image is None:
            raise DemoFolderError(f"{name} cannot be read as an image (damaged, or not a PNG)")
        if image.ndim != 2:
            raise DemoFolderError(
                f"{name} has {image.shape[2]} channels; depth must be a single-channel 16-bit PNG"
            )
        if image.dtype != np.uint16:
            raise DemoFolderError(
                f"{name} is {image.dtype.itemsize * 8}-bit; depth must be a 16-bit PNG "
                "(value x depth_scale = metres)"
            )
        if image.shape != (height, width):
            raise DemoFolderError(
                f"{name} is {image.shape[1]}x{image.shape[0]} but the video is {width}x{height}; "
                "depth must be aligned with the video"
            )
