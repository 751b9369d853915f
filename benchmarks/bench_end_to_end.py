"""End to end: the demo folder to report.json and scene.blend, as `real2gym run` does it.

Runs the command line in a child process (so its peak memory is its own),
reads the per-stage wall times from report.json, and measures in the same run
a baseline every pipeline must pay: decoding the video once with OpenCV.
Goal once all stages exist: a 150-frame 640x480 RGB-D demo with two objects to
a verified MJCF in under 60 s on 2 cores, peak memory under 2 GB.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import Figure

NAME = "end_to_end"


def _decode_video(demo: Path) -> float:
    import cv2

    started = time.perf_counter()
    capture = cv2.VideoCapture(str(demo / "video.mp4"))
    while capture.read()[0]:
        pass
    capture.release()
    return time.perf_counter() - started


def run(args) -> list[Figure]:
    """Measures the whole run on ``args.demo``."""
    demo = Path(args.demo)
    cli = Path(sys.executable).with_name("real2gym")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        subprocess.run([str(cli), "run", str(demo), "--out", out, "-q"], check=True, capture_output=True)
        wall = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        report = json.loads((Path(out) / "report.json").read_text())
    decode = _decode_video(demo)
    frames = report["video"]["frames"]
    figures = [
        Figure(
            NAME, f"wall time ({frames} frames)", wall, "s", decode, "decode video once", "< 60 s", wall < 60
        ),
        Figure(NAME, "peak memory", peak_mb, "MB", target="< 2048 MB", passed=peak_mb < 2048),
    ]
    for stage, seconds in report["timing"]["stages_s"].items():
        figures.append(Figure(NAME, f"stage {stage}", seconds, "s", decode, "decode video once"))
    return figures
