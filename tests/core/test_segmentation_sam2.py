"""PLUMBING tests of the SAM2 backend, not accuracy tests.

The model here is SAM2's tiny config (``sam2.1_hiera_t``) with random weights,
saved as a checkpoint in SAM2's format (``{"model": state_dict}``) and run at an
input size of 128 px instead of 1024 (``image_size=128``, a Hydra override of
``model.image_size``) so the file runs in well under a minute on 2 cores. Its
masks are noise: these tests check that frames, prompts, masks, confidences and
errors pass through the backend correctly (shapes, dtypes, frame order, which
objects appear on which frames), never what the masks look like. Mask quality
with a real checkpoint belongs in ``benchmarks/``.

The tests that run SAM2 skip only when torch or sam2 is not installed; the
error-message tests for missing packages simulate the absence through
``sys.modules``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from real2gym_addon.demo import load_demo
from real2gym_addon.errors import SegmentationError
from real2gym_addon.segmentation import Prompt, Sam2Segmenter, sam2_backend, sam2_status, segment_demo

pytestmark = pytest.mark.sam2_plumbing

HAS_SAM2 = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("sam2") is not None
needs_sam2 = pytest.mark.skipif(
    not HAS_SAM2,
    reason="torch and sam2 are not installed (pip install -r requirements-sam2.txt, see README)",
)

CONFIG = "sam2.1_hiera_t"
IMAGE_SIZE = 128
HEIGHT, WIDTH = 48, 64  # not square, so a swapped height and width shows


def _frames(count: int = 4) -> list[np.ndarray]:
    """A grey square moving right on a dark background, ``HxWx3`` uint8 BGR."""
    frames = []
    for index in range(count):
        frame = np.full((HEIGHT, WIDTH, 3), 30, np.uint8)
        frame[12:32, 10 + 4 * index : 30 + 4 * index] = (60, 180, 220)
        frames.append(frame)
    return frames


def _check(result, where: str) -> None:
    assert result.mask.dtype == np.bool_, where
    assert result.mask.shape == (HEIGHT, WIDTH), where
    assert 0.0 <= result.confidence <= 1.0, where
    if not result.mask.any():
        assert result.confidence == 0.0, where


@pytest.fixture(autouse=True)
def _fresh_probe():
    """Each test probes the imports anew, so simulated missing modules do not stick."""
    sam2_backend._probe_imports.cache_clear()
    yield
    sam2_backend._probe_imports.cache_clear()


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """One torch thread: on a busy 2-core machine two threads contend and run 2-3 times slower."""
    if not HAS_SAM2:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_state() -> dict:
    """The state dict of a randomly initialised tiny SAM2 (seeded)."""
    import torch
    from sam2.build_sam import build_sam2_video_predictor

    torch.manual_seed(0)
    model = build_sam2_video_predictor(
        sam2_backend.config_name(CONFIG),
        None,
        device="cpu",
        hydra_overrides_extra=[f"++model.image_size={IMAGE_SIZE}"],
    )
    return model.state_dict()


@pytest.fixture(scope="module")
def checkpoint(tiny_state: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tiny_random.pt`` in SAM2's checkpoint format."""
    import torch

    path = tmp_path_factory.mktemp("sam2") / "tiny_random.pt"
    torch.save({"model": tiny_state}, path)
    return path


@pytest.fixture(scope="module")
def segmenter(checkpoint: Path) -> Sam2Segmenter:
    """The backend on the random tiny model, on the CPU, at 128 px."""
    return Sam2Segmenter(checkpoint, CONFIG, device="cpu", image_size=IMAGE_SIZE)


def test_importing_the_backend_does_not_import_torch():
    code = "import sys, real2gym_addon.segmentation; assert 'torch' not in sys.modules and 'sam2' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("sam2.1_hiera_t", "configs/sam2.1/sam2.1_hiera_t.yaml"),
        ("sam2.1_hiera_tiny", "configs/sam2.1/sam2.1_hiera_t.yaml"),
        ("sam2.1_hiera_base_plus.pt", "configs/sam2.1/sam2.1_hiera_b+.yaml"),
        ("sam2_hiera_l", "configs/sam2/sam2_hiera_l.yaml"),
        ("configs/sam2.1/sam2.1_hiera_s.yaml", "configs/sam2.1/sam2.1_hiera_s.yaml"),
    ],
)
def test_config_names_map_to_sam2_config_files(short, full):
    assert sam2_backend.config_name(short) == full


@needs_sam2
def test_box_prompt_gives_a_mask_of_the_frame_size(segmenter):
    segmenter.init_state(_frames())
    result = segmenter.add_prompt(3, Prompt(frame=1, box=(14.0, 12.0, 34.0, 32.0)))
    _check(result, "prompt frame")


@needs_sam2
def test_forward_and_backward_propagation_yield_every_frame_once(segmenter):
    segmenter.init_state(_frames())
    segmenter.add_prompt(3, Prompt(frame=1, box=(14.0, 12.0, 34.0, 32.0)))
    forward = list(segmenter.propagate(1))
    backward = list(segmenter.propagate(1, reverse=True))
    assert [frame for frame, _ in forward] == [1, 2, 3]
    assert [frame for frame, _ in backward] == [1, 0]
    for direction, steps in (("forward", forward), ("backward", backward)):
        for frame, masks in steps:
            assert set(masks) == {3}, f"{direction} frame {frame}"
            _check(masks[3], f"{direction} frame {frame}")


@needs_sam2
def test_objects_appear_once_their_prompt_frame_is_passed(segmenter):
    segmenter.init_state(_frames())
    segmenter.add_prompt(0, Prompt(frame=0, box=(10.0, 12.0, 30.0, 32.0)))
    points = np.array([[28.0, 22.0], [2.0, 2.0]], np.float32)
    segmenter.add_prompt(7, Prompt(frame=2, points=points, labels=np.array([1, 0], np.int32)))
    forward = {frame: set(masks) for frame, masks in segmenter.propagate(0)}
    assert forward == {0: {0}, 1: {0}, 2: {0, 7}, 3: {0, 7}}
    backward = {frame: set(masks) for frame, masks in segmenter.propagate(2, reverse=True)}
    assert backward == {2: {7}, 1: {7}, 0: {0, 7}}  # going backward, object 0 appears on its prompt frame
    assert [frame for frame, _ in segmenter.propagate(0, reverse=True)] == [0]


@needs_sam2
def test_segment_demo_runs_sam2_on_the_tiny_demo(segmenter, tiny_demo):
    demo = load_demo(tiny_demo)
    result = segment_demo(demo, segmenter)
    assert result.backend == "sam2"
    assert [track.name for track in result.objects] == [obj.name for obj in demo.objects]
    for track in result.objects:
        assert len(track.masks) == demo.video.frames
        assert all(
            m.shape == (demo.video.height, demo.video.width) and m.dtype == np.bool_ for m in track.masks
        )
        assert all(0.0 <= c <= 1.0 for c in track.confidence)


@needs_sam2
def test_status_is_available_with_packages_and_checkpoint(checkpoint):
    available, reason = sam2_status(checkpoint, CONFIG)
    assert available, reason
    assert "torch" in reason and "sam2.1_hiera_t" in reason


@needs_sam2
def test_missing_checkpoint_is_named(tmp_path):
    missing = tmp_path / "sam2.1_hiera_tiny.pt"
    assert sam2_status(missing, CONFIG) == (False, f"SAM2 checkpoint not found: {missing}")
    assert sam2_status(None, CONFIG)[0] is False
    with pytest.raises(SegmentationError, match="checkpoint not found") as error:
        Sam2Segmenter(missing, CONFIG, device="cpu")
    assert str(missing) in str(error.value)


@needs_sam2
def test_corrupt_checkpoint_is_named(tmp_path, checkpoint):
    random_bytes = tmp_path / "random.pt"
    random_bytes.write_bytes(np.random.default_rng(0).bytes(4096))
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])
    for path in (random_bytes, truncated):
        with pytest.raises(SegmentationError, match="cannot be read as a PyTorch checkpoint") as error:
            Sam2Segmenter(path, CONFIG, device="cpu", image_size=IMAGE_SIZE)
        assert str(path) in str(error.value) and "sam2.1_hiera_t.yaml" in str(error.value)


@needs_sam2
def test_checkpoint_for_another_config_is_named(tmp_path, checkpoint, tiny_state):
    with pytest.raises(SegmentationError, match="does not match config") as error:
        Sam2Segmenter(checkpoint, "sam2.1_hiera_s", device="cpu", image_size=IMAGE_SIZE)
    assert str(checkpoint) in str(error.value) and "sam2.1_hiera_s.yaml" in str(error.value)
    assert "missing" in str(error.value)

    import torch

    cut = tmp_path / "sam2.1_hiera_tiny.pt"
    torch.save({"model": {k: v for k, v in tiny_state.items() if not k.startswith("memory_encoder.")}}, cut)
    with pytest.raises(SegmentationError, match="weights missing .*memory_encoder"):
        Sam2Segmenter(cut, CONFIG, device="cpu", image_size=IMAGE_SIZE)

    reshaped = tmp_path / "reshaped.pt"
    torch.save({"model": {**tiny_state, "no_mem_embed": torch.zeros(1, 1, 3)}}, reshaped)
    with pytest.raises(SegmentationError, match="of another shape .*no_mem_embed"):
        Sam2Segmenter(reshaped, CONFIG, device="cpu", image_size=IMAGE_SIZE)

    not_sam2 = tmp_path / "not_sam2.pt"
    torch.save({"epoch": 3}, not_sam2)
    with pytest.raises(SegmentationError, match="holds no model weights"):
        Sam2Segmenter(not_sam2, CONFIG, device="cpu", image_size=IMAGE_SIZE)


@needs_sam2
def test_unknown_config_and_device_are_named(checkpoint):
    available, reason = sam2_status(checkpoint, "sam2.1_hiera_x")
    assert not available and "unknown SAM2 config 'sam2.1_hiera_x'" in reason and "sam2.1_hiera_t" in reason
    with pytest.raises(SegmentationError, match="unknown SAM2 device 'gpu'"):
        Sam2Segmenter(checkpoint, CONFIG, device="gpu")
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(SegmentationError, match="sees no CUDA GPU"):
            Sam2Segmenter(checkpoint, CONFIG, device="cuda")


def test_status_names_missing_torch(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)
    available, reason = sam2_status(tmp_path / "x.pt", CONFIG)
    assert not available
    assert "SAM2 needs PyTorch" in reason and "pip install torch==2.13.0" in reason
    with pytest.raises(SegmentationError, match="SAM2 needs PyTorch"):
        Sam2Segmenter(tmp_path / "x.pt", CONFIG)


@needs_sam2
def test_status_names_missing_sam2(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "sam2", None)
    available, reason = sam2_status(tmp_path / "x.pt", CONFIG)
    assert not available
    assert "SAM2 needs the 'sam2' package" in reason and "pip install" in reason


@needs_sam2
def test_status_names_a_missing_dependency_of_sam2(monkeypatch, tmp_path):
    for name in [n for n in sys.modules if n == "sam2" or n.startswith("sam2.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hydra", None)
    available, reason = sam2_status(tmp_path / "x.pt", CONFIG)
    assert not available
    assert "SAM2 needs the 'hydra-core' package" in reason and "requirements-sam2.txt" in reason
