"""SAM2.1-tiny speed on the bundled demo, with RANDOM weights: a speed figure only.

The model is SAM2.1's tiny config (``sam2.1_hiera_t``) at its own input size
(1024 px), initialised with ``torch.manual_seed(0)`` and saved as a checkpoint
in a temporary folder: nothing is downloaded. Its masks are noise, so there is
no IoU figure; a trained checkpoint does the same arithmetic, so it should run
at about the same speed. Random weights can leave a prompt's mask empty, which
:func:`segment_demo` refuses; then the benchmark hands back the prompt's box as
the mask (SAM2's own state is untouched) so that the timing goes on.

SAM2 runs through :func:`segment_demo` exactly as bench_segmentation runs the
classical backend (same frames, same objects, the segmenter's own time counted
by ``timing.timed``), on the CPU twice: with one torch thread and with one per core.
The classical backend on one core, on the same frames in the same run, is the
baseline. SAM2 needs several seconds a frame on a CPU, so there it runs on the
first :data:`CPU_FRAMES` frames of the demo (the figure names say so); each
frame after the prompt's attends to more remembered frames until SAM2's memory
is full (``num_maskmem``: 7 frames), so a longer video runs slower per frame than
this prefix (the slowest frame is reported too).

Environment:
    REAL2GYM_BENCH_DEVICE: ``cpu`` (default) or ``cuda``: one run on the GPU
        (bfloat16 autocast where the GPU supports it, as the backend does) after
        an untimed warm-up on two frames, with the peak GPU memory.
    REAL2GYM_BENCH_SAM2_FRAMES: how many frames from the start to segment;
        ``0`` for all. Default :data:`CPU_FRAMES` on the CPU, all on a GPU.

Skipped (with a line on stderr) when torch or sam2 is missing, and on the CPU
under ``--quick`` (it takes about two minutes on two cores).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from run import REPO, Figure
from timing import segment_timed

sys.path.insert(0, str(REPO))  # the core package, from a checkout

if TYPE_CHECKING:
    from real2gym_addon.demo import Demo
    from real2gym_addon.segmentation import VideoSegmenter

NAME = "sam2"
CONFIG = "sam2.1_hiera_t"
CPU_FRAMES = 4
"""Frames segmented on the CPU: two runs of this many take about 2 minutes on 2 cores."""
WARM_UP_FRAMES = 2
DEVICE_ENV = "REAL2GYM_BENCH_DEVICE"
FRAMES_ENV = "REAL2GYM_BENCH_SAM2_FRAMES"
RANDOM = "random weights"


def _missing() -> str | None:
    """Names what is missing for SAM2, or None."""
    for module in ("torch", "sam2"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -r requirements-sam2.txt, see README)"
    return None


def _random_checkpoint(folder: Path) -> Path:
    """Builds SAM2.1-tiny with seeded random weights and saves it in SAM2's format (``{"model": ...}``)."""
    import torch
    from sam2.build_sam import build_sam2_video_predictor

    from real2gym_addon.segmentation.sam2_backend import config_name

    torch.manual_seed(0)
    model = build_sam2_video_predictor(config_name(CONFIG), None, device="cpu")
    path = folder / "sam2.1_hiera_tiny_random.pt"
    torch.save({"model": model.state_dict()}, path)
    return path


def _first_frames(demo: Demo, frames: int) -> Demo:
    """The demo cut to its first ``frames`` frames (the video and depth are read only that far)."""
    if not 0 < frames < demo.video.frames:
        return demo
    return dataclasses.replace(demo, video=dataclasses.replace(demo.video, frames=frames))


def _for_timing(segmenter: VideoSegmenter) -> VideoSegmenter:
    """Wraps SAM2: a prompt's empty mask becomes its box, and each propagated frame's seconds are kept
    (``.frame_seconds``)."""
    from real2gym_addon.segmentation import ObjectMask, VideoSegmenter

    class ForTiming(VideoSegmenter):
        name = segmenter.name

        def __init__(self) -> None:
            self.frame_seconds: list[float] = []
            self.shape: tuple[int, int] = (0, 0)  # the working frames' height and width, pixels

        def init_state(self, frames, depth=None) -> None:
            self.shape = frames[0].shape[:2]
            segmenter.init_state(frames, depth)

        def add_prompt(self, object_id, prompt):
            result = segmenter.add_prompt(object_id, prompt)
            if result.mask.any() or prompt.box is None:
                return result
            mask = np.zeros(self.shape, bool)
            x0, y0, x1, y1 = (int(round(v)) for v in prompt.box)
            mask[max(y0, 0) : y1, max(x0, 0) : x1] = True
            return ObjectMask(mask, result.confidence)

        def propagate(self, start_frame, reverse=False) -> Iterator:
            frames = segmenter.propagate(start_frame, reverse)
            while True:
                started = time.perf_counter()
                item = next(frames, None)
                self.frame_seconds.append(time.perf_counter() - started)
                if item is None:
                    return
                yield item

    return ForTiming()


def _reset_peak_rss() -> bool:
    """Resets the kernel's peak-RSS mark of this process (Linux); False where it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _rss_mb(field: str) -> float | None:
    """``VmRSS`` (now) or ``VmHWM`` (peak since the last reset) of this process in MB (Linux), else None."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return None


def _settings(args) -> tuple[str, int] | None:
    """(device, frames to segment, 0 = all), or None with a line on stderr where the run is skipped."""
    device = os.environ.get(DEVICE_ENV, "cpu").strip().lower()
    if device not in ("cpu", "cuda"):
        print(f"{NAME}: {DEVICE_ENV}={device!r} is not cpu or cuda; skipped", file=sys.stderr)
        return None
    if device == "cpu" and getattr(args, "quick", False):
        print(f"{NAME}: skipped with --quick (SAM2 on the CPU takes about 2 minutes)", file=sys.stderr)
        return None
    text = os.environ.get(FRAMES_ENV, "").strip()
    if text and not text.isdigit():
        print(f"{NAME}: {FRAMES_ENV}={text!r} is not a whole number; skipped", file=sys.stderr)
        return None
    return device, int(text) if text else (CPU_FRAMES if device == "cpu" else 0)


def _runs(device: str) -> list[tuple[str, int]]:
    """(label, torch threads) of each timed run: on the CPU one thread, then one per core."""
    import torch

    if device == "cuda":
        return [(f"cuda, {torch.cuda.get_device_name()}", torch.get_num_threads())]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return [("cpu, 1 thread", 1)] + ([(f"cpu, {cores} threads", cores)] if cores > 1 else [])


def _sam2_figures(full: Demo, demo: Demo, which: str, device: str, classical: float) -> list[Figure]:
    """Loads SAM2 with random weights and times it on ``demo`` in each of :func:`_runs`.

    Args:
        full: The whole demo (its first frames warm a GPU up).
        demo: The frames to time.
        which: Which frames those are, for the figure names.
        device: ``cpu`` or ``cuda``.
        classical: The classical backend's frames/s per object on ``demo``, the baseline.

    Returns:
        The model's load time, and per run its frames/s per object and slowest frame.
    """
    import torch

    from real2gym_addon.segmentation import Sam2Segmenter

    threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory(prefix="real2gym_bench_sam2_") as folder:
        checkpoint = _random_checkpoint(Path(folder))
        started = time.perf_counter()
        sam2 = Sam2Segmenter(checkpoint, CONFIG, device=device)
        figures = [Figure(NAME, f"model load ({device}, {RANDOM})", time.perf_counter() - started, "s")]
    if device == "cuda":
        # CUDA's and cuBLAS's start-up, untimed.
        segment_timed(_first_frames(full, WARM_UP_FRAMES), _for_timing(sam2))
        torch.cuda.reset_peak_memory_stats()
    try:
        for label, run_threads in _runs(device):
            torch.set_num_threads(run_threads)
            print(f"{NAME}: segmenting, {label} ...", file=sys.stderr, flush=True)
            timing = _for_timing(sam2)
            fps, slowest = segment_timed(demo, timing)[1], max(timing.frame_seconds)
            figures += [
                Figure(
                    NAME,
                    f"frames/s per object, {which}, {label} ({RANDOM})",
                    fps,
                    "frames/s",
                    classical,
                    "classical, 1 core",
                ),
                Figure(NAME, f"classical's frames/s over SAM2's, {label}", classical / fps, "x"),
                Figure(NAME, f"slowest frame, {which}, {label} ({RANDOM})", slowest, "s"),
            ]
    finally:
        torch.set_num_threads(threads)
    if device == "cuda":
        peak_gpu = torch.cuda.max_memory_allocated() / 2**20
        figures.append(Figure(NAME, f"peak GPU memory, {which}", peak_gpu, "MB"))
    return figures


def run(args) -> list[Figure]:
    """Times SAM2.1-tiny (random weights) against the classical backend on ``args.demo``."""
    settings = _settings(args)
    if settings is None:
        return []
    device, frames = settings
    missing = _missing()
    if missing:
        print(f"{NAME}: skipped: {missing}", file=sys.stderr)
        return []
    os.environ.setdefault("TQDM_DISABLE", "1")  # SAM2's progress bars; read when tqdm is first imported
    import cv2
    import torch

    from real2gym_addon.demo import load_demo
    from real2gym_addon.segmentation import ClassicalSegmenter

    if device == "cuda" and not torch.cuda.is_available():
        print(
            f"{NAME}: {DEVICE_ENV}=cuda, but torch {torch.__version__} sees no GPU; skipped", file=sys.stderr
        )
        return []
    full = load_demo(args.demo)
    demo = _first_frames(full, frames)
    count, total = demo.video.frames, full.video.frames
    which = f"{count} frames" if count == total else f"first {count} of {total} frames"
    print(f"{NAME}: {device}, {which} of {full.path.name}, {len(demo.objects)} objects", file=sys.stderr)

    cv2.setNumThreads(1)
    classical = segment_timed(demo, ClassicalSegmenter())[1]
    rss_before = _rss_mb("VmRSS")
    exact_peak = _reset_peak_rss()
    figures = _sam2_figures(full, demo, which, device, classical)
    peak = _rss_mb("VmHWM") if exact_peak else None
    if peak is None:  # no resettable mark: the process's peak, earlier benchmarks included
        peak, exact_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, False
    name = f"peak RSS, SAM2 load and runs ({device})" if exact_peak else "peak RSS of the whole process"
    figures.append(Figure(NAME, name, peak, "MB", rss_before, "RSS before loading SAM2"))
    return figures
