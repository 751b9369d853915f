"""Writing videos that browsers, chat previews and slide tools play: H.264 in MP4.

OpenCV's writer (kept for reading video) can only write MPEG-4 part 2 (``mp4v``)
from its pip wheel, which browsers do not play. :class:`VideoWriter` encodes
H.264 (yuv420p, the ``faststart`` layout a browser can stream) through PyAV,
whose wheels carry FFmpeg with libx264; where PyAV is missing it falls back to
``mp4v`` and says so in :attr:`VideoWriter.codec`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

H264_CRF = 20
"""libx264's constant rate factor: visually lossless for these renders at a few MB a minute."""


def h264_available() -> bool:
    """Whether videos are written as H.264 (PyAV is installed), not ``mp4v``."""
    import importlib.util

    return importlib.util.find_spec("av") is not None


class VideoWriter:
    """Writes BGR frames (OpenCV's order) to an MP4 file.

    Args:
        path: The ``.mp4`` to write.
        fps: Frames per second.
        size: ``(width, height)`` of every frame; odd sizes are padded by one
            black pixel (H.264's 4:2:0 needs even ones).

    Attributes:
        codec: ``"h264"``, or ``"mp4v"`` when PyAV is not installed.
    """

    def __init__(self, path: Path | str, fps: float, size: tuple[int, int]) -> None:
        self.path = Path(path)
        self.size = (int(size[0]), int(size[1]))
        self._even = (self.size[0] + self.size[0] % 2, self.size[1] + self.size[1] % 2)
        try:
            import av
        except ImportError:
            av = None
        if av is None:
            import cv2

            self.codec = "mp4v"
            self._cv = cv2.VideoWriter(str(self.path), cv2.VideoWriter_fourcc(*"mp4v"), fps, self.size)
            return
        from fractions import Fraction

        self.codec = "h264"
        self._cv = None
        self._container = av.open(str(self.path), mode="w", options={"movflags": "faststart"})
        self._stream = self._container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        self._stream.width, self._stream.height = self._even
        self._stream.pix_fmt = "yuv420p"
        self._stream.options = {"crf": str(H264_CRF), "preset": "medium"}
        self._frame_type = av.VideoFrame

    def write(self, bgr: np.ndarray) -> None:
        """Appends one ``HxWx3`` uint8 BGR frame of the writer's size."""
        if bgr.shape[:2] != (self.size[1], self.size[0]):
            raise ValueError(
                f"frame is {bgr.shape[1]}x{bgr.shape[0]}, the video {self.size[0]}x{self.size[1]}"
            )
        if self._cv is not None:
            self._cv.write(bgr)
            return
        if self._even != self.size:
            padded = np.zeros((self._even[1], self._even[0], 3), np.uint8)
            padded[: bgr.shape[0], : bgr.shape[1]] = bgr
            bgr = padded
        frame = self._frame_type.from_ndarray(np.ascontiguousarray(bgr), format="bgr24")
        for packet in self._stream.encode(frame):
            self._container.mux(packet)

    def close(self) -> None:
        """Flushes the encoder and closes the file."""
        if self._cv is not None:
            self._cv.release()
            return
        for packet in self._stream.encode():
            self._container.mux(packet)
        self._container.close()

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
