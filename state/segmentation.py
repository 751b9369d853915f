"""The scene's segmentation settings, and whether its backend can run here (read by panels and runs).

:func:`segmentation_options` reads the scene's backend choice (an empty SAM2
checkpoint or config falls back to the add-on preferences');
:func:`backend_availability` says whether the backend can run here and why not,
probed once per setting so that panels can ask on every redraw. Both derive
from the core's backend table (``SEGMENTATION_BACKENDS``).
"""

from __future__ import annotations

import importlib.util
import os

import bpy

from ..real2gym_addon.models import cache_path, is_model_name
from ..real2gym_addon.segmentation.backends import SEGMENTATION_BACKENDS, SegmentationOptions, backend_status
from .preferences import sam2_defaults

_CORE = __package__.rpartition(".")[0] + ".real2gym_addon.segmentation"
_status_cache: dict[tuple, tuple[bool, str]] = {}


def segmentation_options(scene: bpy.types.Scene) -> SegmentationOptions:
    """The scene's segmentation settings; an empty SAM2 checkpoint or config falls back to the preferences'."""
    state = scene.real2gym
    default_checkpoint, default_config = sam2_defaults()
    checkpoint = bpy.path.abspath(state.sam2_checkpoint) if state.sam2_checkpoint else default_checkpoint
    return SegmentationOptions(
        backend=state.segmentation_backend,
        sam2_checkpoint=checkpoint,
        sam2_config=state.sam2_config.strip() or default_config,
        device=state.segmentation_device,
    )


def _probe(options: SegmentationOptions) -> tuple[bool, str]:
    backend = SEGMENTATION_BACKENDS.get(options.backend)
    if backend is not None and importlib.util.find_spec(f"{_CORE}.{backend.module}") is None:
        return False, f"the {options.backend} backend is not part of this installation"
    try:
        return backend_status(options)
    except ImportError as e:
        return False, f"the {options.backend} backend cannot be loaded: {e}"


def backend_availability(options: SegmentationOptions) -> tuple[bool, str]:
    """Whether the chosen backend can run here, and why not.

    Probed once per setting (and checkpoint file state), so that panels can ask
    on every redraw without importing torch each time.

    Args:
        options: The backend and its settings.

    Returns:
        ``(available, reason)``; the reason is empty when available.
    """
    checkpoint = options.sam2_checkpoint
    if is_model_name(checkpoint):  # a model name: its file in the cache, so a download shows
        checkpoint = str(cache_path(checkpoint.strip()))
    stamp = os.stat(checkpoint).st_mtime if checkpoint and os.path.isfile(checkpoint) else None
    key = (options, stamp)
    if key not in _status_cache:
        _status_cache[key] = _probe(options)
    return _status_cache[key]
