"""A segmenter's own time: what the segmentation benchmarks count as its speed.

bench_segmentation, bench_segmentation_varied and bench_sam2 run a segmenter through
:func:`segment_demo` and count only the seconds spent inside the segmenter
(``init_state``, ``add_prompt``, ``propagate``), not video decoding or the pipeline's
own work, so that backends measured in one run compare fairly.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from real2gym_addon.demo import Demo
    from real2gym_addon.segmentation import Segmentation, VideoSegmenter


def timed(segmenter: VideoSegmenter) -> VideoSegmenter:
    """Wraps a segmenter so the seconds spent inside it add up in ``.seconds``.

    Args:
        segmenter: Any :class:`VideoSegmenter`; its results pass through unchanged.

    Returns:
        A segmenter with the same name whose ``seconds`` attribute is the wall-clock time,
        in seconds, spent in ``segmenter``'s ``init_state``, ``add_prompt`` and
        ``propagate`` (each propagated frame counted while it is produced).
    """
    from real2gym_addon.segmentation import VideoSegmenter

    class Timed(VideoSegmenter):
        name = segmenter.name

        def __init__(self) -> None:
            self.seconds = 0.0

        def init_state(self, frames, depth=None) -> None:
            started = time.perf_counter()
            segmenter.init_state(frames, depth)
            self.seconds += time.perf_counter() - started

        def add_prompt(self, object_id, prompt):
            started = time.perf_counter()
            result = segmenter.add_prompt(object_id, prompt)
            self.seconds += time.perf_counter() - started
            return result

        def propagate(self, start_frame, reverse=False) -> Iterator:
            frames = segmenter.propagate(start_frame, reverse)
            while True:
                started = time.perf_counter()
                item = next(frames, None)
                self.seconds += time.perf_counter() - started
                if item is None:
                    return
                yield item

    return Timed()


def segment_timed(demo: Demo, segmenter: VideoSegmenter) -> tuple[Segmentation, float]:
    """Segments a demo with :func:`segment_demo`, counting only the segmenter's time.

    Args:
        demo: The loaded demo (its video's frame count is the one segmented).
        segmenter: The backend to run.

    Returns:
        The segmentation and the speed in frames per second per object: the demo's
        frames times its prompted objects, over the segmenter's seconds (see :func:`timed`).
    """
    from real2gym_addon.errors import WarningLog
    from real2gym_addon.segmentation import segment_demo

    counted = timed(segmenter)
    segmentation = segment_demo(demo, counted, log=WarningLog())
    return segmentation, demo.video.frames * len(demo.objects) / counted.seconds
