"""The SAM2 backend: Meta's SAM2 video predictor behind :class:`VideoSegmenter`.

Optional: it needs torch, the ``sam2`` package and a checkpoint file
(``requirements-sam2.txt``). Nothing here imports them at module import time;
:func:`sam2_status` probes once whether they import and says what is missing,
so the user interface can grey the backend out with the reason.

SAM2 reads a video only as a folder of JPEG files, so :meth:`Sam2Segmenter.init_state`
writes the working frames to a temporary folder, lets SAM2 load them (resized to
its ``image_size``, 1024 for the released checkpoints) and removes the folder.
SAM2 keeps every frame in memory as ``3 x image_size x image_size`` float32
(12 MB a frame at 1024).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.resources
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..errors import SegmentationError
from ..models import ModelError, resolve_checkpoint
from .base import ObjectMask, Prompt, VideoSegmenter

DEVICES = ("cpu", "cuda", "auto")
_SIZE_ALIASES = {"tiny": "t", "small": "s", "base_plus": "b+", "large": "l"}
_PACKAGES = {"torch": "torch==2.13.0", "hydra": "hydra-core", "PIL": "pillow"}
_SHOWN = 3  # names quoted in a mismatch message


def config_name(config: str) -> str:
    """Maps a short SAM2 config name to the name SAM2's Hydra search path knows.

    Args:
        config: ``sam2.1_hiera_t``, ``sam2.1_hiera_tiny`` (the checkpoint's
            stem), ``sam2_hiera_l`` or the full ``configs/sam2.1/sam2.1_hiera_t.yaml``.

    Returns:
        The full name, e.g. ``configs/sam2.1/sam2.1_hiera_t.yaml``.
    """
    name = config.strip()
    if "/" in name:
        return name if name.endswith(".yaml") else name + ".yaml"
    stem = name.removesuffix(".yaml").removesuffix(".pt")
    for long, short in _SIZE_ALIASES.items():
        if stem.endswith("_" + long):
            stem = stem.removesuffix(long) + short
    folder = "sam2.1" if stem.startswith("sam2.1_") else "sam2"
    return f"configs/{folder}/{stem}.yaml"


def _known_configs() -> list[str]:
    root = importlib.resources.files("sam2") / "configs"
    names = []
    for folder in ("sam2.1", "sam2"):
        if (root / folder).is_dir():
            names += sorted(
                p.name.removesuffix(".yaml") for p in (root / folder).iterdir() if p.name.endswith(".yaml")
            )
    return names


def _check_config(config: str) -> str:
    full = config_name(config)
    if not (importlib.resources.files("sam2") / full).is_file():
        raise SegmentationError(
            f"unknown SAM2 config '{config}' ({full} is not in the sam2 package): "
            f"use one of {', '.join(_known_configs())}, the one that matches the checkpoint"
        )
    return full


@functools.cache
def _probe_imports() -> tuple[bool, str]:
    """Imports torch and SAM2's video predictor once; returns (ok, what is missing or the versions)."""
    try:
        import torch
    except ImportError as error:
        return False, f"SAM2 needs PyTorch ({error}): pip install torch==2.13.0 (see README)"
    except Exception as error:  # a broken install (missing shared library...)
        return False, f"PyTorch is installed but does not load ({type(error).__name__}: {error})"
    try:
        import sam2.build_sam  # noqa: F401  (imports hydra and the model code)
        import sam2.sam2_video_predictor  # noqa: F401
    except ImportError as error:
        module = (error.name or "sam2").split(".")[0]
        if module == "sam2":
            return False, (
                "SAM2 needs the 'sam2' package: SAM2_BUILD_CUDA=0 pip install --no-deps "
                "--no-build-isolation sam2==1.1.0 (see README)"
            )
        package = _PACKAGES.get(module, module)
        return False, f"SAM2 needs the '{package}' package: pip install -r requirements-sam2.txt (see README)"
    except Exception as error:
        return False, f"the sam2 package is installed but does not load ({type(error).__name__}: {error})"
    try:
        version = importlib.metadata.version("sam2")
    except importlib.metadata.PackageNotFoundError:
        version = "(version unknown)"
    return True, f"SAM2 {version} with torch {torch.__version__}"


def sam2_status(checkpoint: str | Path | None, config: str) -> tuple[bool, str]:
    """Says whether the SAM2 backend can run, and if not what is missing.

    Cheap after the first call (the import probe is cached); it does not read
    a checkpoint file, so a corrupt or mismatched one is only found by
    :class:`Sam2Segmenter`. A downloaded model's file is checked against its
    SHA-256 once per process (:func:`~real2gym_addon.models.cached_model`).

    Args:
        checkpoint: The ``.pt`` checkpoint file, a downloaded model's name
            (``sam2.1-tiny``, see :mod:`~real2gym_addon.models`), or None if none is chosen.
        config: The SAM2 config name (see :func:`config_name`); a model name brings its own.

    Returns:
        ``(available, reason)``: the reason names what is missing and what to
        do, or, when available, the versions found.
    """
    ok, reason = _probe_imports()
    if not ok:
        return False, reason
    try:
        if checkpoint:
            checkpoint, config = resolve_checkpoint(checkpoint, config)
    except ModelError as error:
        return False, str(error)
    try:
        full = _check_config(config)
    except SegmentationError as error:
        return False, str(error)
    if not checkpoint:
        return False, (
            "no SAM2 checkpoint chosen: set the checkpoint file (e.g. sam2.1_hiera_tiny.pt) "
            "or a downloaded model's name (real2gym models fetch sam2.1-tiny)"
        )
    if not Path(checkpoint).is_file():
        return False, f"SAM2 checkpoint not found: {checkpoint}"
    return True, f"{reason}, config {full}"


def _load_state_dict(checkpoint: Path, config: str) -> dict:
    import torch

    try:
        loaded = torch.load(checkpoint, map_location="cpu", weights_only=True)
    except Exception as error:
        # The first sentence only: torch goes on to suggest weights_only=False, unsafe for a file of weights.
        detail = (str(error).strip().splitlines() or [""])[0].split(". ")[0]
        raise SegmentationError(
            f"SAM2 checkpoint {checkpoint} cannot be read as a PyTorch checkpoint "
            f"({type(error).__name__}: {detail[:160]}); it is truncated or not a checkpoint: "
            f"download it again (config {config})"
        ) from None
    state = loaded.get("model", loaded) if isinstance(loaded, dict) else None
    if not isinstance(state, dict) or not state or not all(torch.is_tensor(v) for v in state.values()):
        raise SegmentationError(
            f"SAM2 checkpoint {checkpoint} holds no model weights (expected {{'model': state_dict}}); "
            f"choose a SAM2 checkpoint file (config {config})"
        )
    return state


def _check_match(model: Any, state: dict, checkpoint: Path, config: str) -> None:
    expected = model.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    reshaped = [
        f"{k} {tuple(state[k].shape)} vs {tuple(v.shape)}"
        for k, v in expected.items()
        if k in state and tuple(state[k].shape) != tuple(v.shape)
    ]
    if not (missing or unexpected or reshaped):
        return
    problems = []
    for label, names in (("missing", missing), ("unexpected", unexpected), ("of another shape", reshaped)):
        if names:
            problems.append(f"{len(names)} weights {label} (e.g. {', '.join(names[:_SHOWN])})")
    hint = config_name(checkpoint.stem) if checkpoint.stem.startswith("sam2") else None
    advice = f"; this file's name suggests config {hint}" if hint and hint != config else ""
    raise SegmentationError(
        f"SAM2 checkpoint {checkpoint} does not match config {config}: {'; '.join(problems)}. "
        f"Choose the config that belongs to the checkpoint{advice}"
    )


def _resolve_device(device: str) -> str:
    import torch

    if device not in DEVICES:
        raise SegmentationError(f"unknown SAM2 device '{device}': use one of {', '.join(DEVICES)}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SegmentationError(
            f"SAM2 device 'cuda' was asked for but this PyTorch ({torch.__version__}) sees no CUDA GPU: "
            "choose device 'cpu' or 'auto'"
        )
    return device


def _has_connected_components() -> bool:
    try:
        from sam2 import _C  # noqa: F401  (SAM2's optional CUDA extension)
    except Exception:
        return False
    return True


def _confidence(logits: np.ndarray, mask: np.ndarray, object_score: float | None) -> float:
    """Mean sigmoid of the logits inside the mask, times the object-present probability."""
    if not mask.any():
        return 0.0
    inside = float(np.mean(1.0 / (1.0 + np.exp(-np.clip(logits[mask], -50.0, 50.0)))))
    if object_score is not None:
        inside *= 1.0 / (1.0 + np.exp(-np.clip(object_score, -50.0, 50.0)))
    return float(np.clip(inside, 0.0, 1.0))


def _memory_as_float32(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Forward pre-hook of SAM2's memory attention: bfloat16 inputs to the module's float32."""
    import torch

    def cast(value: Any) -> Any:
        return value.float() if torch.is_tensor(value) and value.dtype == torch.bfloat16 else value

    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


class Sam2Segmenter(VideoSegmenter):
    """SAM2's video predictor: boxes and points on some frames, masks on all.

    An object may be prompted on several frames (a correction on a later frame,
    as SAM2's own interactive use adds): each prompted frame becomes one of
    SAM2's conditioning frames for that object. SAM2 attends to all of an
    object's conditioning frames when it tracks a frame, so a correction also
    nudges that object's masks before its frame (the other objects' masks are
    untouched); the classical and optical-flow backends restart the track
    exactly at the correction's frame.

    Constructing it loads the model (seconds) and raises
    :class:`~real2gym_addon.errors.SegmentationError` when torch or sam2 is
    missing, or the checkpoint is missing, unreadable or made for another config.

    Args:
        checkpoint: The SAM2 ``.pt`` file (``{"model": state_dict}``), or the name of
            a downloaded model (``sam2.1-tiny``; ``real2gym models fetch``).
        config: The matching config, e.g. ``sam2.1_hiera_t`` for ``sam2.1_hiera_tiny.pt``;
            a model name brings its own.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (CUDA when PyTorch sees a GPU).
        image_size: The model's input side in pixels, or None for the config's
            (1024). Smaller (a multiple of 32) runs faster with worse masks; the
            tests use it with an untrained model.
    """

    name = "sam2"

    def __init__(
        self,
        checkpoint: str | Path,
        config: str = "sam2.1_hiera_t",
        device: str = "auto",
        image_size: int | None = None,
    ) -> None:
        ok, reason = _probe_imports()
        if not ok:
            raise SegmentationError(reason)
        try:
            checkpoint, config = resolve_checkpoint(checkpoint, config)
        except ModelError as error:
            raise SegmentationError(str(error)) from None
        self.config = _check_config(config)
        self.checkpoint = Path(checkpoint)
        if not self.checkpoint.is_file():
            raise SegmentationError(
                f"SAM2 checkpoint not found: {self.checkpoint} (config {self.config}); "
                "choose the downloaded .pt file in the segmentation settings"
            )
        if image_size is not None and (image_size < 64 or image_size % 32):
            raise SegmentationError(f"SAM2 image_size {image_size} must be a multiple of 32, at least 64")
        self.device = _resolve_device(device)
        self._predictor = self._build(image_size)
        self._state: Any = None
        self._frame_count = 0
        self._prompt_frames: dict[int, list[int]] = {}

    def _build(self, image_size: int | None) -> Any:
        from sam2.build_sam import build_sam2_video_predictor

        state = _load_state_dict(self.checkpoint, self.config)
        overrides = [] if image_size is None else [f"++model.image_size={image_size}"]
        model = build_sam2_video_predictor(self.config, None, device="cpu", hydra_overrides_extra=overrides)
        _check_match(model, state, self.checkpoint, self.config)
        model.load_state_dict(state)
        if not _has_connected_components():
            model.fill_hole_area = 0  # SAM2 would skip the hole filling with a warning on every frame
        if not self._autocast:
            # SAM2 stores its memory in bfloat16, meant to be read under autocast; in float32 read it as float32.
            model.memory_attention.register_forward_pre_hook(_memory_as_float32, with_kwargs=True)
        return model.to(self.device).eval()

    @property
    def _autocast(self) -> bool:
        """Whether to run in bfloat16 autocast, as SAM2's own examples do on GPUs that support it."""
        import torch

        return self.device == "cuda" and torch.cuda.is_bf16_supported()

    @contextlib.contextmanager
    def _running(self, doing: str) -> Iterator[None]:
        """Runs a SAM2 call: in autocast on a GPU, with out-of-memory errors turned into user errors."""
        import torch

        precision = (
            torch.autocast("cuda", dtype=torch.bfloat16) if self._autocast else contextlib.nullcontext()
        )
        try:
            with precision:
                yield
        except (torch.OutOfMemoryError, MemoryError):
            raise SegmentationError(
                f"SAM2 ran out of memory on {self.device} {doing}: use a smaller SAM2 config, "
                "a shorter video, or a GPU with more memory"
            ) from None

    def init_state(
        self, frames: Sequence[np.ndarray], depth: Sequence[np.ndarray | None] | None = None
    ) -> None:
        if not frames:
            raise SegmentationError("SAM2 was given a video with no frames")
        with tempfile.TemporaryDirectory(prefix="real2gym_sam2_") as folder:
            for index, frame in enumerate(frames):
                path = Path(folder) / f"{index:06d}.jpg"
                if not cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 95]):
                    raise SegmentationError(f"cannot write frame {index} for SAM2 to {path}")
            with self._running(f"loading {len(frames)} frames"):
                self._state = self._predictor.init_state(folder, offload_video_to_cpu=self.device == "cuda")
        self._frame_count = len(frames)
        self._prompt_frames = {}

    def add_prompt(self, object_id: int, prompt: Prompt) -> ObjectMask:
        if self._state is None:
            raise SegmentationError("SAM2: init_state must be called before add_prompt")
        if not 0 <= prompt.frame < self._frame_count:
            raise SegmentationError(
                f"object {object_id}: prompt frame {prompt.frame} is outside the video (frames 0-{self._frame_count - 1})"
            )
        points = np.asarray(prompt.points, np.float32).reshape(-1, 2)
        if prompt.box is None and not len(points):
            raise SegmentationError(
                f"object {object_id}: the prompt on frame {prompt.frame} has no box and no point"
            )
        with self._running(f"prompting object {object_id} on frame {prompt.frame}"):
            _, object_ids, logits = self._predictor.add_new_points_or_box(
                self._state,
                frame_idx=prompt.frame,
                obj_id=object_id,
                points=points if len(points) else None,
                labels=np.asarray(prompt.labels, np.int32).reshape(-1) if len(points) else None,
                box=None if prompt.box is None else np.asarray(prompt.box, np.float32),
            )
        self._prompt_frames.setdefault(object_id, []).append(prompt.frame)
        return self._masks(prompt.frame, object_ids, logits)[object_id]

    def propagate(
        self, start_frame: int, reverse: bool = False
    ) -> Iterator[tuple[int, dict[int, ObjectMask]]]:
        if not 0 <= start_frame < self._frame_count:
            raise SegmentationError(
                f"SAM2: start frame {start_frame} is outside the video (0-{self._frame_count - 1})"
            )
        if not self._prompt_frames:
            frames = range(start_frame, -1, -1) if reverse else range(start_frame, self._frame_count)
            yield from ((frame, {}) for frame in frames)
            return
        # SAM2 skips a backward pass that starts on frame 0; a one-frame forward pass gives that frame.
        limit = 0 if reverse and start_frame == 0 else None
        steps = self._predictor.propagate_in_video(
            self._state,
            start_frame_idx=start_frame,
            max_frame_num_to_track=limit,
            reverse=reverse and limit is None,
        )
        while True:  # one step at a time, so autocast never stays on in the caller between frames
            with self._running(f"propagating from frame {start_frame}"):
                step = next(steps, None)
            if step is None:
                return
            frame, object_ids, logits = step
            masks = self._masks(frame, object_ids, logits)
            passed = {
                i
                for i, frames in self._prompt_frames.items()
                if (frame <= max(frames) if reverse else frame >= min(frames))
            }
            yield frame, {i: m for i, m in masks.items() if i in passed}

    def _masks(self, frame: int, object_ids: Sequence[int], logits: Any) -> dict[int, ObjectMask]:
        """``N x 1 x H x W`` SAM2 logits (one row per object id) to bool masks and confidences."""
        array = logits.detach().float().cpu().numpy()
        results = {}
        for row, object_id in enumerate(object_ids):
            object_logits = array[row, 0]
            mask = object_logits > 0.0
            score = self._object_score(object_id, frame)
            results[int(object_id)] = ObjectMask(mask, _confidence(object_logits, mask, score))
        return results

    def _object_score(self, object_id: int, frame: int) -> float | None:
        """SAM2's object-present logit for the object on the frame, if its state exposes it."""
        try:
            index = self._state["obj_id_to_idx"][object_id]
            stores = (
                self._state["temp_output_dict_per_obj"][index],
                self._state["output_dict_per_obj"][index],
            )
            for store in stores:
                for key in ("cond_frame_outputs", "non_cond_frame_outputs"):
                    out = store[key].get(frame)
                    if out is not None and out.get("object_score_logits") is not None:
                        return float(out["object_score_logits"].float().max())
        except (KeyError, TypeError, AttributeError):
            return None
        return None
