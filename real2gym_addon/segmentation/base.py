"""The segmenter interface, modelled on SAM2's video predictor.

A backend is started on a video (:meth:`VideoSegmenter.init_state`), given
prompts for an object on a frame (:meth:`VideoSegmenter.add_prompt`: a box
and/or positive and negative points), and propagates them through the video
forward or backward (:meth:`VideoSegmenter.propagate`), yielding one mask and a
confidence per object and frame. Object ids are small integers chosen by the
caller, as in SAM2.

All images are at the backend's working resolution: frames ``HxWx3`` uint8 BGR
(OpenCV's order), depth ``HxW`` float32 metres (0 = no reading), masks ``HxW``
bool, pixel coordinates ``(x, y)`` from the top-left corner.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np


@dataclasses.dataclass
class ObjectMask:
    """One object's mask on one frame.

    Attributes:
        mask: ``HxW`` bool, True on the visible part of the object.
        confidence: How sure the backend is, in [0, 1]; 0 when the object is not seen.
    """

    mask: np.ndarray
    confidence: float

    @property
    def area(self) -> int:
        """Number of mask pixels."""
        return int(self.mask.sum())


@dataclasses.dataclass(frozen=True)
class Prompt:
    """Prompts for one object on one frame.

    Attributes:
        frame: The frame index (0-based).
        box: ``(x0, y0, x1, y1)`` in pixels, or None.
        points: ``Kx2`` float pixel coordinates ``(x, y)``; may be empty.
        labels: ``K`` ints, 1 = on the object, 0 = not on it.
    """

    frame: int
    box: tuple[float, float, float, float] | None = None
    points: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.float32))
    labels: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0,), np.int32))

    def scaled(self, factor: float) -> Prompt:
        """Returns the prompt with pixel coordinates multiplied by ``factor``."""
        box = None if self.box is None else tuple(float(v) * factor for v in self.box)
        return dataclasses.replace(self, box=box, points=np.asarray(self.points, np.float32) * factor)


class VideoSegmenter(abc.ABC):
    """A video object segmenter: prompts on some frames, masks on all frames."""

    name: ClassVar[str] = ""
    keeps_masks: ClassVar[bool] = False
    """Its masks are the user's own, known to be right: the doubt checks flag frames and cap the
    confidence but do not correct the masks (the ``given`` backend)."""

    def start_on(self, demo) -> None:
        """Meets the demo folder before :meth:`init_state` (:func:`..run.segment_demo` calls it).

        A backend that reads what the folder holds besides the video (masks made
        elsewhere: the ``given`` backend) takes it here; the others need nothing.

        Args:
            demo: The checked :class:`~real2gym_addon.demo.Demo`; an object's id is its
                index in ``demo.objects``.
        """
        return None

    @abc.abstractmethod
    def init_state(
        self, frames: Sequence[np.ndarray], depth: Sequence[np.ndarray | None] | None = None
    ) -> None:
        """Starts on a video, forgetting any earlier video and prompts.

        Args:
            frames: The video, each ``HxWx3`` uint8 BGR.
            depth: Per frame ``HxW`` float32 z-depth in metres (0 = no reading),
                aligned with the frames, or None where the demo has no depth.
        """

    @abc.abstractmethod
    def add_prompt(self, object_id: int, prompt: Prompt) -> ObjectMask:
        """Adds prompts for an object on a frame and returns its mask there.

        Args:
            object_id: The caller's id for the object.
            prompt: The box and/or points on one frame.

        Returns:
            The object's mask on the prompt's frame.
        """

    @abc.abstractmethod
    def propagate(
        self, start_frame: int, reverse: bool = False
    ) -> Iterator[tuple[int, dict[int, ObjectMask]]]:
        """Propagates the prompts through the video from ``start_frame``.

        Forward (``reverse=False``) yields frames ``start_frame .. N-1``, backward
        yields ``start_frame .. 0``. On each frame it yields the objects whose
        prompt frame has been passed (as SAM2 does): an object prompted on
        frame 40 appears from frame 40 on going forward, and up to frame 40
        going backward.

        Args:
            start_frame: The first frame to yield.
            reverse: Propagate towards frame 0.

        Yields:
            ``(frame, {object_id: ObjectMask})``.
        """
