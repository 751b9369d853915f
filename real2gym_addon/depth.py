"""Reading the demo's depth images: ``depth/000000.png ...``, 16-bit, times ``depth_scale``."""

from __future__ import annotations

import cv2
import numpy as np

from .demo import Demo
from .errors import DemoFolderError


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
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED) if path.is_file() else None
    if image is None:
        return None
    video = demo.video
    if image.shape[:2] != (video.height, video.width) or image.ndim != 2:
        raise DemoFolderError(
            f"depth/{path.name} is {image.shape[1]}x{image.shape[0]} but the video is "
            f"{video.width}x{video.height}; depth must be aligned with the video, one image per frame"
        )
    return image.astype(np.float32) * demo.camera.depth_scale
