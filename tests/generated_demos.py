"""Demos made by tools/make_demo.py for tests, and their true masks as a segmentation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMALL = ["--width", "160", "--height", "120", "--frames", "40", "--fps", "12", "--seed", "3"]
"""A small, short demo (the scripted motion needs at least 3 s)."""


def generate(out: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs tools/make_demo.py into ``out`` with ``args``; returns the finished process (not checked)."""
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_demo.py"), "--out", str(out), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )


def true_masks(folder: Path):
    """The demo's true visible masks (truth.json) as a :class:`Segmentation`."""
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.segmentation.run import ObjectTrack, Segmentation
    from real2gym.real2gym_addon.truth import load_truth

    truth, demo = load_truth(folder), load_demo(folder)
    tracks = [
        ObjectTrack(o.name, [f.mask() for f in truth.objects[o.name].frames], [1.0] * demo.video.frames)
        for o in demo.objects
    ]
    return Segmentation("truth", 1.0, tracks)
