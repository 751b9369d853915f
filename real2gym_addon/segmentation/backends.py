"""The segmentation backends: one table entry each, chosen by name, with the reason when one is missing.

:data:`SEGMENTATION_BACKENDS` names each backend's label and description (the
Blender menu, ``--backend``), the module under ``segmentation/`` that implements
it, its availability check, how it is built and which :class:`SegmentationOptions`
it reads (the panel shows those settings). Adding a backend is a module with a
:class:`~.base.VideoSegmenter` and one entry here.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

from ..errors import SegmentationError
from .base import VideoSegmenter

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


@dataclasses.dataclass(frozen=True)
class Backend:
    """One segmentation backend.

    Attributes:
        name: Its name in prompts, reports and ``--backend``.
        label: Its name in the Blender menu.
        description: A line on what it does and what it needs.
        module: The module under ``segmentation/`` that implements it (imported only when used).
        make: ``(the imported module, options) -> VideoSegmenter``.
        status: ``(options) -> (available, reason)``, importing what it needs inside;
            None when it runs everywhere.
        options: The :class:`SegmentationOptions` fields it reads besides ``backend``.
    """

    name: str
    label: str
    description: str
    module: str
    make: Callable[..., VideoSegmenter]
    status: Callable[[SegmentationOptions], tuple[bool, str]] | None = None
    options: tuple[str, ...] = ()


def _sam2_status(options: SegmentationOptions) -> tuple[bool, str]:
    from .sam2_backend import sam2_status

    return sam2_status(options.sam2_checkpoint, options.sam2_config)


SEGMENTATION_BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend(
            "classical",
            label="Classical",
            description="OpenCV colour and depth tracking; works everywhere",
            module="classical",
            make=lambda module, options: module.ClassicalSegmenter(),
        ),
        Backend(
            "sam2",
            label="SAM2",
            description="Meta's SAM2 video predictor; needs torch, sam2 and a checkpoint",
            module="sam2_backend",
            make=lambda module, options: module.Sam2Segmenter(
                checkpoint=options.sam2_checkpoint, config=options.sam2_config, device=options.device
            ),
            status=_sam2_status,
            options=("sam2_checkpoint", "sam2_config", "device"),
        ),
        Backend(
            "flow_warp",
            label="Optical Flow",
            description="The first mask carried along by optical flow (the baseline)",
            module="flow_warp",
            make=lambda module, options: module.FlowWarpSegmenter(),
        ),
        Backend(
            "given",
            label="Given Masks",
            description="Masks made elsewhere, read from the demo folder's masks/ or masks_indexed/",
            module="given",
            make=lambda module, options: module.GivenMasksSegmenter(),
        ),
    )
}
"""Every segmentation backend, in menu order."""

BACKENDS = tuple(SEGMENTATION_BACKENDS)
"""The backends' names (``--backend`` choices)."""


def backend_status(options: SegmentationOptions) -> tuple[bool, str]:
    """Returns whether the chosen backend can run here, and why not.

    Args:
        options: The chosen backend and its settings.
    """
    backend = SEGMENTATION_BACKENDS.get(options.backend)
    if backend is None:
        names = ", ".join(SEGMENTATION_BACKENDS)
        return False, f"unknown segmentation backend '{options.backend}'; use one of {names}"
    if backend.status is None:
        return True, ""
    return backend.status(options)


def make_segmenter(options: SegmentationOptions) -> VideoSegmenter:
    """Builds the chosen backend.

    Raises:
        SegmentationError: The backend is unknown or cannot run here; the
            message names what is missing and offers the classical backend.
    """
    available, reason = backend_status(options)
    if not available:
        raise SegmentationError(f"{reason} (the classical backend works everywhere: --backend classical)")
    backend = SEGMENTATION_BACKENDS[options.backend]
    module = importlib.import_module(f"{__package__}.{backend.module}")
    return backend.make(module, options)
