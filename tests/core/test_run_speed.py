"""The demo run's speed (issue 28) without changing its figures: a depth PNG is decoded once per run
(the door's check, the segmentation and the geometry stage read every frame; the decoded image is kept
under its path, time and size), and paths are smoothed without importing scipy.signal."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon import depth


def test_a_depth_image_decodes_once_and_again_when_rewritten(tmp_path, monkeypatch) -> None:
    path = tmp_path / "000000.png"
    cv2.imwrite(str(path), np.full((4, 6), 700, np.uint16))
    decoded = []
    real = cv2.imread
    monkeypatch.setattr(depth.cv2, "imread", lambda *a: decoded.append(a[0]) or real(*a))
    first, second = depth._decode(path), depth._decode(path)
    assert len(decoded) == 1 and first is second and int(first[0, 0]) == 700
    with pytest.raises(ValueError):
        first[0, 0] = 1  # kept images are read-only: a caller converts before it changes one
    cv2.imwrite(str(path), np.full((4, 6), 900, np.uint16))
    os.utime(path, ns=(1, 1))  # a new time, whatever the file system's resolution
    assert int(depth._decode(path)[0, 0]) == 900 and len(decoded) == 2


def test_the_cache_keeps_to_its_budget(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(depth, "CACHE_BYTES", 4 * 200 * 200 * 2)  # four images
    monkeypatch.setattr(depth, "_decoded_images", type(depth._decoded_images)())
    for frame in range(10):
        cv2.imwrite(str(tmp_path / f"{frame:06d}.png"), np.full((200, 200), frame, np.uint16))
        depth._decode(tmp_path / f"{frame:06d}.png")
    assert sum(i.nbytes for i in depth._decoded_images.values()) <= depth.CACHE_BYTES
    assert [int(i[0, 0]) for i in depth._decoded_images.values()] == [6, 7, 8, 9]


def test_path_smoothing_is_scipys_savitzky_golay() -> None:
    """motion.smooth replaces scipy.signal.savgol_filter (whose import costs a run half a second)."""
    from scipy.signal import savgol_filter

    from real2gym.real2gym_addon.geometry.motion import smooth

    rng = np.random.default_rng(0)
    for shape in ((7,), (8, 3), (151, 2)):
        values = rng.normal(size=shape).cumsum(axis=0)
        assert np.allclose(smooth(values), savgol_filter(values, 7, 2, axis=0), rtol=0, atol=1e-12)
