"""Choosing a segmentation backend by name, with the reason when one is missing."""

from __future__ import annotations

import dataclasses

from ..errors import SegmentationError
from .base import VideoSegmenter

BACKENDS = ("classical", "sam2", "flow_warp")
DEFAULT_BACKEND = "classical"


@dataclasses.dataclass(frozen=True)
class SegmentationOptions:
    """How to segment.

    Attributes:
        backend: One of :data:`BACKENDS`.
        sam2_checkpoint: Path of a SAM2 checkpoint (``.pt``), or the name of a
            downloaded one (``sam2.1-tiny``, :mod:`~real2gym_addon.models`), for ``sam2``.
        sam2_config: SAM2 config name, e.g. ``sam2.1_hiera_t`` (a model name brings its own).
        device: ``auto``, ``cpu`` or ``cuda`` (SAM2 only).
    """

    backend: str = DEFAULT_BACKEND
    sam2_checkpoint: str = ""
    sam2_config: str = "sam2.1_hiera_t"
    device: str = "auto"


def backend_status(options: SegmentationOptions) -> tuple[bool, str]:
    """Returns whether the chosen backend can run here, and why not.

    Args:
        options: The chosen backend and its settings.
    """
    if options.backend not in BACKENDS:
        return False, f"unknown segmentation backend '{options.backend}'; use one of {', '.join(BACKENDS)}"
    if options.backend == "sam2":
        from .sam2_backend import sam2_status

        return sam2_status(options.sam2_checkpoint, options.sam2_config)
    return True, ""


def make_segmenter(options: SegmentationOptions) -> VideoSegmenter:
    """Builds the chosen backend.

    Raises:
        SegmentationError: The backend is unknown or cannot run here; the
            message names what is missing and offers the classical backend.
    """
    available, reason = backend_status(options)
    if not available:
        raise SegmentationError(f"{reason} (the classical backend works everywhere: --backend classical)")
    if options.backend == "sam2":
        from .sam2_backend import Sam2Segmenter

        return Sam2Segmenter(
            checkpoint=options.sam2_checkpoint, config=options.sam2_config, device=options.device
        )
    if options.backend == "flow_warp":
        from .flow_warp import FlowWarpSegmenter

        return FlowWarpSegmenter()
    from .classical import ClassicalSegmenter

    return ClassicalSegmenter()
