"""The baseline: the prompt frame's mask carried along by dense optical flow.

No colour model, no re-detection: what any tracker must beat. The benchmark
measures the classical backend against it in the same run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import cv2
import numpy as np

from .base import ObjectMask, Prompt, VideoSegmenter
from .initial import initial_mask


def warp_mask(mask: np.ndarray, previous_gray: np.ndarray, gray: np.ndarray, flow) -> np.ndarray:
    """Moves a mask from the previous frame to this one along the optical flow.

    Args:
        mask: ``HxW`` bool on the previous frame.
        previous_gray: ``HxW`` uint8, the previous frame.
        gray: ``HxW`` uint8, this frame.
        flow: An OpenCV dense optical flow object (``calc(I0, I1, None)``).

    Returns:
        ``HxW`` bool on this frame.
    """
    backward = flow.calc(gray, previous_gray, None)  # for each pixel here, where it was
    h, w = mask.shape
    grid_x, grid_y = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    warped = cv2.remap(
        mask.astype(np.float32), grid_x + backward[..., 0], grid_y + backward[..., 1], cv2.INTER_LINEAR
    )
    return warped > 0.5


class FlowWarpSegmenter(VideoSegmenter):
    """Warps each object's prompt-frame mask frame by frame with DIS optical flow."""

    name = "flow_warp"

    def __init__(self) -> None:
        self._frames: list[np.ndarray] = []
        self._gray: list[np.ndarray] = []
        self._seeds: dict[tuple[int, int], np.ndarray] = {}  # (object id, frame) -> the prompt's mask
        self._flow = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_FAST)

    def init_state(
        self, frames: Sequence[np.ndarray], depth: Sequence[np.ndarray | None] | None = None
    ) -> None:
        self._frames = list(frames)
        self._gray = [cv2.cvtColor(f, cv2.COLOR_BGR2GRAY) for f in self._frames]
        self._seeds = {}

    def add_prompt(self, object_id: int, prompt: Prompt) -> ObjectMask:
        """Seeds the object's mask on the prompt's frame; with prompts on several frames the
        warped mask is replaced by each prompt's own when propagation reaches its frame."""
        mask = initial_mask(self._frames[prompt.frame], prompt)
        self._seeds[object_id, prompt.frame] = mask
        return ObjectMask(mask, 1.0)

    def propagate(
        self, start_frame: int, reverse: bool = False
    ) -> Iterator[tuple[int, dict[int, ObjectMask]]]:
        step = -1 if reverse else 1
        end = -1 if reverse else len(self._frames)
        current: dict[int, np.ndarray] = {}
        for frame in range(start_frame, end, step):
            for object_id, mask in list(current.items()):
                current[object_id] = warp_mask(mask, self._gray[frame - step], self._gray[frame], self._flow)
            for (object_id, seed_frame), mask in self._seeds.items():
                if seed_frame == frame:
                    current[object_id] = mask
            yield frame, {i: ObjectMask(m, 1.0 if m.any() else 0.0) for i, m in current.items()}
