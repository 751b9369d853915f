"""Checks shared by the tests of the generators' Cycles films (tests/bpy_module/test_articulated_cycles.py and
test_task_cycles.py): the same simulation filmed by MuJoCo and by Blender's Cycles must give the same masks
and depth, frame by frame, and other looks."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from real2gym.real2gym_addon.truth import decode_rle


def film_masks(demo: Path) -> dict[str, list[np.ndarray]]:
    """Each object's true visible mask on every frame of the demo folder ``demo``."""
    truth = json.loads((demo / "truth.json").read_text())
    return {o["name"]: [decode_rle(f["mask"]) for f in o["frames"]] for o in truth["objects"]}


def mask_ious(ours: list[np.ndarray], theirs: list[np.ndarray], least: int = 50) -> np.ndarray:
    """The two films' masks' IoU on each frame where either holds over ``least`` pixels."""
    ious = []
    for mine, other in zip(ours, theirs, strict=True):
        union = (mine | other).sum()
        if union > least:
            ious.append((mine & other).sum() / union)
    return np.array(ious)


def assert_same_depth(films: dict[str, Path], frames: tuple[int, ...], median_mm: float = 6.0) -> None:
    """Where both films read depth (about half of each image: far walls are out of the sensor's range, and it
    drops readings), the readings differ by their sensors' noise (a few mm at a metre) only."""
    for frame in frames:
        depths = [cv2.imread(str(films[r] / "depth" / f"{frame:06d}.png"), cv2.IMREAD_UNCHANGED).astype(float)
                  for r in ("mujoco", "cycles")]  # fmt: skip
        both = (depths[0] > 0) & (depths[1] > 0)
        assert both.mean() > 0.7 * min((d > 0).mean() for d in depths) > 0.3, frame
        assert np.median(np.abs(depths[0] - depths[1])[both]) < median_mm, frame


def first_frames(films: dict[str, Path]) -> list[np.ndarray]:
    """Frame 0 of each film's video.mp4 (MuJoCo's, then Cycles'), BGR float."""
    frames = []
    for renderer in ("mujoco", "cycles"):
        capture = cv2.VideoCapture(str(films[renderer] / "video.mp4"))
        ok, frame = capture.read()
        capture.release()
        assert ok, renderer
        frames.append(frame.astype(float))
    return frames
