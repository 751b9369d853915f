"""Reading the demonstration video: a movie file or a folder of frames.

The demo folder holds either ``video.<ext>`` (any container OpenCV's FFmpeg
reads) or ``frames/000000.png ...``. :func:`open_video` finds which, checks it
as a whole (readable, not truncated, one frame size, at least one frame) and
returns a :class:`Video` that hands out frames as ``HxWx3`` uint8 BGR arrays,
OpenCV's convention.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .errors import VideoError

_FRAME_NAME = re.compile(r"^(\d+)\.(png|jpg|jpeg|tif|tiff|bmp|exr)$", re.IGNORECASE)
DEFAULT_FPS = 30.0


def _cv2():
    """Imports OpenCV with FFmpeg's own console messages silenced (we report errors ourselves)."""
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    import cv2

    return cv2


@dataclasses.dataclass(frozen=True)
class Video:
    """A checked video.

    Attributes:
        path: The movie file, or the ``frames`` folder.
        frames: Number of frames that decode.
        fps: Frames per second (from the container, or the default for frames).
        width: Frame width in pixels.
        height: Frame height in pixels.
        frame_files: For a frame folder, one file per frame in order; else empty.
    """

    path: Path
    frames: int
    fps: float
    width: int
    height: int
    frame_files: tuple[Path, ...] = ()

    @property
    def is_sequence(self) -> bool:
        """True for a folder of frame images, False for a movie file."""
        return bool(self.frame_files)

    def iter_frames(self) -> Iterator[np.ndarray]:
        """Yields every frame in order as an ``HxWx3`` uint8 BGR array."""
        cv2 = _cv2()

        if self.is_sequence:
            for f in self.frame_files:
                image = cv2.imread(str(f), cv2.IMREAD_COLOR)
                if image is None:
                    raise VideoError(f"cannot read frame image {f}")
                yield image
            return
        capture = cv2.VideoCapture(str(self.path))
        try:
            for index in range(self.frames):
                ok, image = capture.read()
                if not ok:
                    raise VideoError(f"{self.path.name}: frame {index} cannot be decoded")
                yield image
        finally:
            capture.release()

    def read_frame(self, index: int) -> np.ndarray:
        """Returns frame ``index`` (0-based) as an ``HxWx3`` uint8 BGR array."""
        if not 0 <= index < self.frames:
            raise VideoError(f"frame {index} is out of range: the video has {self.frames} frames")
        cv2 = _cv2()

        if self.is_sequence:
            image = cv2.imread(str(self.frame_files[index]), cv2.IMREAD_COLOR)
        else:
            capture = cv2.VideoCapture(str(self.path))
            try:
                capture.set(cv2.CAP_PROP_POS_FRAMES, index)
                ok, image = capture.read()
            finally:
                capture.release()
            image = image if ok else None
        if image is None:
            raise VideoError(f"{self.path.name}: frame {index} cannot be decoded")
        return image


def find_video(demo_dir: Path) -> Path | None:
    """Returns the demo's movie file or ``frames`` folder, or None if it has neither."""
    preferred = demo_dir / "video.mp4"
    if preferred.is_file():
        return preferred
    movies = sorted(p for p in demo_dir.glob("video.*") if p.is_file())
    if movies:
        return movies[0]
    frames = demo_dir / "frames"
    if frames.is_dir():
        return frames
    return None


def open_video(path: Path, fps: float | None = None) -> Video:
    """Opens and checks a movie file or a folder of frames.

    Args:
        path: ``video.<ext>`` or a ``frames`` folder.
        fps: Frame rate for a frame folder (ignored for movies, whose container
            says); :data:`DEFAULT_FPS` when None.

    Returns:
        The checked video.

    Raises:
        VideoError: The video cannot be opened, has no frames, is truncated, or
            its frames differ in size.
    """
    path = Path(path)
    if path.is_dir():
        return _open_sequence(path, fps or DEFAULT_FPS)
    return _open_movie(path)


_CHECKED_MOVIES: dict[tuple[str, int, int], Video] = {}
"""Movies already checked by :func:`_open_movie`, under path, modification time and size: a run opens its
video three times (the demo, the summary's keyframe sheet and review pictures), and each check decodes it
whole."""


def _open_movie(path: Path) -> Video:
    stat = path.stat()
    if stat.st_size == 0:
        raise VideoError(f"{path} is empty (0 bytes)")
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _CHECKED_MOVIES:
        if len(_CHECKED_MOVIES) >= 16:
            _CHECKED_MOVIES.clear()
        _CHECKED_MOVIES[key] = _check_movie(path)
    return _CHECKED_MOVIES[key]


def _check_movie(path: Path) -> Video:
    """Decodes the whole movie: its frame count, rate and size, refused where a frame does not decode or
    differs in size."""
    cv2 = _cv2()

    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise VideoError(f"{path} cannot be opened as a video (unknown or damaged container)")
        declared = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        fps = float(capture.get(cv2.CAP_PROP_FPS)) or DEFAULT_FPS
        decoded, size = 0, None
        while True:
            ok, image = capture.read()
            if not ok:
                break
            if size is None:
                size = image.shape[:2]
            elif image.shape[:2] != size:
                raise VideoError(
                    f"{path.name}: frame {decoded} is {image.shape[1]}x{image.shape[0]}, "
                    f"frame 0 is {size[1]}x{size[0]}; all frames must have one size"
                )
            decoded += 1
    finally:
        capture.release()
    if decoded == 0:
        raise VideoError(f"{path} has no frame that decodes (empty or damaged video)")
    if declared > decoded:
        raise VideoError(
            f"{path.name} is truncated or damaged: its header says {declared} frames but "
            f"frame {decoded} does not decode; re-export or re-copy the video"
        )
    return Video(path=path, frames=decoded, fps=fps, width=size[1], height=size[0])


def _image_size(path: Path) -> tuple[int, int]:
    """Returns (width, height) of an image, reading only the PNG header when it can."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    cv2 = _cv2()

    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise VideoError(f"cannot read frame image {path}")
    return image.shape[1], image.shape[0]


def _open_sequence(folder: Path, fps: float) -> Video:
    numbered = []
    for entry in folder.iterdir():
        match = _FRAME_NAME.match(entry.name)
        if match and entry.is_file():
            numbered.append((int(match.group(1)), entry))
    if not numbered:
        raise VideoError(f"{folder} holds no frame images (expected 000000.png, 000001.png ...)")
    numbered.sort()
    for expected, (number, entry) in enumerate(numbered):
        if number != expected:
            raise VideoError(
                f"{folder}: frame {expected} is missing (the next file is {entry.name}); "
                "frames must be numbered from 0 without gaps"
            )
    files = tuple(entry for _, entry in numbered)
    width, height = _image_size(files[0])
    for index, entry in enumerate(files[1:], start=1):
        if entry.stat().st_size == 0:
            raise VideoError(f"frame {index} ({entry}) is empty (0 bytes)")
        size = _image_size(entry)
        if size != (width, height):
            raise VideoError(
                f"frame {index} ({entry.name}) is {size[0]}x{size[1]}, frame 0 is "
                f"{width}x{height}; all frames must have one size"
            )
    return Video(path=folder, frames=len(files), fps=fps, width=width, height=height, frame_files=files)
