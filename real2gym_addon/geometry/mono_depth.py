"""Metric depth from RGB alone, with a learned monocular model (an optional backend).

Every phone clip is RGB only. Where neither depth, a camera pose nor a known size is
given, a monocular *metric* depth model can stand in for a depth camera: Depth Anything
V2's metric checkpoints (``depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf`` and
its larger siblings, in the Hugging Face format: a folder with ``config.json`` and
``model.safetensors``). :func:`estimate_depth_folder` writes the model's depth for every
frame as the 16-bit PNGs of a ``depth/`` folder (millimetres), and the run goes on as with
a depth camera, less accurately (the model's scale is learned, not measured).

torch and transformers are imported only here and only when the backend is used (the
SAM2 stack installs torch; transformers comes with it in requirements-sam2.txt).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..errors import Real2GymError
from ..progress import Progress
from ..video import Video

PATCH = 14
"""The ViT's patch size: the model's input sides are multiples of it."""
INPUT_SIDE = 518
"""The shorter input side the Depth Anything models were trained at (pixels)."""
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
"""ImageNet normalisation, as the models' image processor applies it."""
MAX_DEPTH_MM = 65535


class MonoDepthError(Real2GymError):
    """The monocular depth backend cannot run with this checkpoint here."""


def mono_depth_status(checkpoint: str | Path) -> tuple[bool, str]:
    """Whether the backend can run with ``checkpoint``, and why not.

    Args:
        checkpoint: A folder in the Hugging Face format (``config.json``, weights).
    """
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        return False, (
            f"the monocular depth backend needs torch and transformers ({e.name} is missing): "
            "pip install -r requirements-sam2.txt"
        )
    folder = Path(checkpoint).expanduser()
    if not (folder / "config.json").is_file():
        return False, (
            f"depth model '{checkpoint}' is not a model folder (no config.json): give the folder of a Hugging "
            "Face checkpoint such as depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf"
        )
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(folder)
    except (OSError, ValueError) as e:
        return False, f"depth model '{checkpoint}': its config.json cannot be read ({e})"
    if getattr(config, "depth_estimation_type", "relative") != "metric":
        return False, (
            f"depth model '{checkpoint}' estimates relative depth, which has no metric scale; use a metric "
            "checkpoint (Depth-Anything-V2-Metric-*)"
        )
    return True, ""


class MonoDepth:
    """A loaded metric depth model.

    Args:
        checkpoint: The model folder (see :func:`mono_depth_status`).
        device: ``auto``, ``cpu`` or ``cuda``.

    Raises:
        MonoDepthError: The backend cannot run with this checkpoint.
    """

    def __init__(self, checkpoint: str | Path, device: str = "auto") -> None:
        available, reason = mono_depth_status(checkpoint)
        if not available:
            raise MonoDepthError(reason)
        import torch
        from transformers import AutoModelForDepthEstimation
        from transformers.utils import logging

        logging.disable_progress_bar()  # the run shows its own progress

        self._torch = torch
        self.device = "cuda" if device == "auto" and torch.cuda.is_available() else device
        self.device = "cpu" if self.device == "auto" else self.device
        try:
            self.model = AutoModelForDepthEstimation.from_pretrained(Path(checkpoint).expanduser())
        except (OSError, ValueError) as e:
            raise MonoDepthError(f"depth model '{checkpoint}' cannot be loaded: {e}") from e
        self.model.to(self.device).eval()
        self.name = Path(checkpoint).name

    def __call__(self, rgb: np.ndarray) -> np.ndarray:
        """The z-depth (metres, ``HxW`` float32) of an ``HxWx3`` uint8 RGB image."""
        height, width = rgb.shape[:2]
        scale = INPUT_SIDE / min(height, width)
        size = (
            max(PATCH, round(width * scale / PATCH) * PATCH),
            max(PATCH, round(height * scale / PATCH) * PATCH),
        )
        image = (cv2.resize(rgb, size, interpolation=cv2.INTER_CUBIC).astype(np.float32) / 255.0 - MEAN) / STD
        pixels = self._torch.from_numpy(image.transpose(2, 0, 1)[None].copy()).to(self.device)
        with self._torch.no_grad():
            depth = self.model(pixel_values=pixels).predicted_depth[0].float().cpu().numpy()
        return cv2.resize(depth, (width, height), interpolation=cv2.INTER_LINEAR).astype(np.float32)


def estimate_depth_folder(
    video: Video,
    model: MonoDepth,
    folder: Path,
    progress: Progress | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Path:
    """Writes the model's depth of every video frame as ``folder/NNNNNN.png`` (uint16 millimetres).

    Args:
        video: The demo's video.
        model: The loaded model.
        folder: Where to write (created).
        progress: Per-frame progress inside ``span``; carries cancellation.
        span: The part of the overall progress this covers.

    Returns:
        ``folder``.
    """
    progress = progress or Progress()
    folder.mkdir(parents=True, exist_ok=True)
    for index, frame in enumerate(video.iter_frames()):
        progress.step(
            f"estimating depth with {model.name}, frame {index}",
            span[0] + (span[1] - span[0]) * index / video.frames,
        )
        depth = model(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        millimetres = np.where(np.isfinite(depth) & (depth > 0), np.round(depth * 1000.0), 0)
        cv2.imwrite(str(folder / f"{index:06d}.png"), np.clip(millimetres, 0, MAX_DEPTH_MM).astype(np.uint16))
    return folder
