"""Videos the comparison writes: H.264 that browsers play, readable back by OpenCV."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.video_out import VideoWriter, h264_available


def _frames(count: int, width: int, height: int) -> list[np.ndarray]:
    frames = []
    for index in range(count):
        frame = np.zeros((height, width, 3), np.uint8)
        frame[:, : width // 2] = (40, 90, 200)  # a BGR orange-ish half: colours must survive the conversion
        cv2.circle(frame, (5 + 3 * index, height // 2), 6, (255, 255, 255), -1)
        frames.append(frame)
    return frames


@pytest.mark.parametrize("size", [(144, 96), (135, 61)])
def test_h264_round_trip(tmp_path: Path, size: tuple[int, int]) -> None:
    """An odd size is padded by a black pixel (4:2:0 needs even ones); every frame comes back."""
    av = pytest.importorskip("av")
    assert h264_available()
    path = tmp_path / "v.mp4"
    frames = _frames(12, *size)
    with VideoWriter(path, 24.0, size) as writer:
        for frame in frames:
            writer.write(frame)
    assert writer.codec == "h264"
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.codec_context.pix_fmt == "yuv420p"
        assert float(stream.average_rate) == pytest.approx(24.0)
    video = cv2.VideoCapture(str(path))
    read = []
    while True:
        ok, frame = video.read()
        if not ok:
            break
        read.append(frame)
    assert len(read) == len(frames)
    even = (size[0] + size[0] % 2, size[1] + size[1] % 2)
    assert read[0].shape == (even[1], even[0], 3)
    original = frames[3][: size[1], : size[0] // 2 - 4].astype(float).mean(axis=(0, 1))
    decoded = read[3][: size[1], : size[0] // 2 - 4].astype(float).mean(axis=(0, 1))
    assert np.abs(original - decoded).max() < 6  # B, G, R kept in their order


def test_a_frame_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    with VideoWriter(tmp_path / "v.mp4", 10.0, (64, 48)) as writer:
        with pytest.raises(ValueError, match="frame is 32x48, the video 64x48"):
            writer.write(np.zeros((48, 32, 3), np.uint8))
        writer.write(np.zeros((48, 64, 3), np.uint8))
