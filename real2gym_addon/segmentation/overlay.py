"""Coloured mask overlays for showing segmentation over the video.

:func:`write_overlays` turns the masks a run wrote (``OUT/masks/<object>/
000000.png``, 0 or 255) into RGBA images of the video's size,
``OUT/masks_overlay/<object>/000000.png``: the object's colour at
:data:`OVERLAY_ALPHA` on its mask, transparent elsewhere. Blender shows them as
image sequences in front of the video. The folder is replaced as a whole, so
an earlier run's overlays stay intact until the new ones are complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from ..errors import Real2GymError
from ..files import OutputFolder
from ..progress import Progress

OVERLAYS_NAME = "masks_overlay"
OVERLAY_ALPHA = 0.5
PALETTE = (
    (0.1, 1.0, 0.2),
    (1.0, 0.9, 0.1),
    (1.0, 0.2, 0.8),
    (0.1, 0.9, 1.0),
    (1.0, 0.5, 0.0),
    (0.6, 0.3, 1.0),
)
"""Default object colours (sRGB, 0 to 1), in prompts.json order: bright, unlike most objects."""

_PNG_FAST = [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_RLE]


def default_color(index: int) -> tuple[float, float, float]:
    """The palette colour of the ``index``-th object (sRGB, 0 to 1)."""
    return PALETTE[index % len(PALETTE)]


def overlay_image(mask: np.ndarray, color: Sequence[float], alpha: float = OVERLAY_ALPHA) -> np.ndarray:
    """Returns an RGBA overlay of a mask, in OpenCV's channel order.

    Args:
        mask: ``HxW`` bool (or 0/255 uint8), True on the object.
        color: ``(r, g, b)`` sRGB in [0, 1].
        alpha: Opacity on the mask, in [0, 1].

    Returns:
        ``HxWx4`` uint8 BGRA: ``color`` with ``alpha`` on the mask, all zero elsewhere.
    """
    image = np.zeros((*mask.shape[:2], 4), np.uint8)
    r, g, b = (int(round(min(max(c, 0.0), 1.0) * 255)) for c in color[:3])
    image[np.asarray(mask) > 0] = (b, g, r, int(round(alpha * 255)))
    return image


def write_overlays(
    out_dir: Path | str,
    objects: Sequence[tuple[str, str]],
    colors: Mapping[str, Sequence[float]] | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Writes ``OUT/masks_overlay/<object>/NNNNNN.png`` from a run's mask images, all at once.

    Args:
        out_dir: The run's output folder.
        objects: Per object, its name and its mask folder relative to ``out_dir``
            (the report's ``segmentation.objects[].masks``).
        colors: sRGB ``(r, g, b)`` in [0, 1] per object name; the palette for the others.
        progress: Receives per-frame progress; carries cancellation.

    Returns:
        The number of frames written per object.

    Raises:
        Real2GymError: A mask image is missing or unreadable, or the output
            folder cannot be written; the earlier overlays stay as they were.
    """
    with OutputFolder(out_dir) as output:
        return stage_overlays(Path(out_dir), objects, output.staging, colors, progress)


def stage_overlays(
    masks_root: Path,
    objects: Sequence[tuple[str, str]],
    target: Path,
    colors: Mapping[str, Sequence[float]] | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Writes ``target/masks_overlay/<object>/NNNNNN.png`` from the masks under ``masks_root``.

    A run stages its overlays this way beside its masks (``masks_root`` and ``target`` are both
    its staging folder); :func:`write_overlays` commits them into a finished run's folder.

    Args:
        masks_root: The folder the mask folders are relative to.
        objects: Per object, its name and its mask folder relative to ``masks_root``.
        target: The folder that receives ``masks_overlay/``.
        colors: sRGB ``(r, g, b)`` in [0, 1] per object name; the palette for the others.
        progress: Receives per-frame progress; carries cancellation.

    Returns:
        The number of frames written per object.

    Raises:
        Real2GymError: A mask image is missing or unreadable, or ``target`` cannot be written.
    """
    colors = colors or {}
    frames: dict[str, list[Path]] = {}
    for name, mask_dir in objects:
        files = sorted((masks_root / mask_dir).glob("[0-9]*.png"))
        if not files:
            raise Real2GymError(f"no masks of '{name}' in {masks_root / mask_dir}; segment the video again")
        frames[name] = files
    total = max(1, sum(len(f) for f in frames.values()))
    done = 0
    for index, (name, _) in enumerate(objects):
        color = colors.get(name) or default_color(index)
        folder = target / OVERLAYS_NAME / name
        folder.mkdir(parents=True)
        for path in frames[name]:
            mask = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
            if mask is None:
                raise Real2GymError(f"cannot read the mask {path} of '{name}'; segment the video again")
            if not cv2.imwrite(str(folder / path.name), overlay_image(mask, color), _PNG_FAST):
                raise Real2GymError(f"cannot write the mask overlay of '{name}' to {folder}")
            done += 1
            if progress is not None:
                progress.step(f"colouring the masks of '{name}'", done / total)
    return {name: len(files) for name, files in frames.items()}
