"""The monocular metric depth backend: its checks, and its plumbing on a tiny model with random weights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from generated_demos import SMALL, generate

from real2gym.real2gym_addon.demo import load_demo
from real2gym.real2gym_addon.geometry.mono_depth import (
    MonoDepth,
    MonoDepthError,
    estimate_depth_folder,
    mono_depth_status,
)

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def _tiny_model(folder: Path, kind: str = "metric") -> Path:
    """A Depth Anything V2 of 0.2 M parameters with random weights, saved as a Hugging Face folder."""
    backbone = transformers.Dinov2Config(
        hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64, patch_size=14,
        image_size=518, out_features=["stage1", "stage2", "stage3", "stage4"], reshape_hidden_states=False,
    )  # fmt: skip
    config = transformers.DepthAnythingConfig(
        backbone_config=backbone, reassemble_hidden_size=32, neck_hidden_sizes=[8, 16, 32, 32],
        fusion_hidden_size=16, head_hidden_size=8, depth_estimation_type=kind, max_depth=2,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.DepthAnythingForDepthEstimation(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_model(tmp_path_factory.mktemp("depth") / "tiny-metric")


@pytest.fixture(scope="module")
def rgb_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated demo without depth and without a camera pose."""
    out = tmp_path_factory.mktemp("rgb") / "demo"
    result = generate(out, *SMALL, "--no-depth")
    assert result.returncode == 0, result.stderr
    return out


def test_a_folder_that_is_no_model_or_a_relative_one_is_refused(tmp_path: Path) -> None:
    available, reason = mono_depth_status(tmp_path / "nowhere")
    assert not available and "no config.json" in reason
    relative = _tiny_model(tmp_path / "relative", kind="relative")
    available, reason = mono_depth_status(relative)
    assert not available and "relative depth" in reason
    with pytest.raises(MonoDepthError, match="relative depth"):
        MonoDepth(relative)


def test_depth_for_every_frame_at_the_video_size(tiny_model: Path, rgb_demo: Path, tmp_path: Path) -> None:
    model = MonoDepth(tiny_model, device="cpu")
    depth = model(np.random.default_rng(0).integers(0, 255, (120, 160, 3), dtype=np.uint8))
    assert depth.shape == (120, 160) and depth.dtype == np.float32
    assert np.isfinite(depth).all() and (depth > 0).all() and depth.max() <= 2.0  # the config's max_depth
    demo = load_demo(rgb_demo)
    folder = estimate_depth_folder(demo.video, model, tmp_path / "depth")
    files = sorted(folder.glob("*.png"))
    assert [f.name for f in files] == [f"{i:06d}.png" for i in range(demo.video.frames)]
    image = cv2.imread(str(files[0]), cv2.IMREAD_UNCHANGED)
    assert image.dtype == np.uint16 and image.shape == (120, 160) and image.min() > 0


def test_the_run_takes_its_depth_from_the_model(tiny_model: Path, rgb_demo: Path, tmp_path: Path) -> None:
    """Without the model the RGB-only demo is refused at the door; with it, the run gets depth and goes on.
    Random weights give no real table, so how far it gets is not the point: it must end cleanly."""

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "real2gym_addon", "run", str(rgb_demo), "--out", str(tmp_path / "out"),
             "--no-blend", *extra],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    refused = run()
    assert refused.returncode == 2 and "known size" in refused.stderr
    result = run("--depth-model", str(tiny_model))
    assert "Traceback" not in result.stderr
    assert "estimating depth with tiny-metric" in result.stderr
    if result.returncode in (0, 1):
        report = json.loads((tmp_path / "out" / "report.json").read_text())
        assert report["artifacts"]["depth"] == "depth_estimated"
        assert len(list((tmp_path / "out" / "depth_estimated").glob("*.png"))) == 40
        assert any("monocular model tiny-metric" in w["message"] for w in report["warnings"])
    else:  # stopped in the geometry stage, with its message, and left nothing behind
        assert result.returncode == 2 and "real2gym: error:" in result.stderr
        assert not (tmp_path / "out").exists()


def test_a_bad_model_stops_the_run_before_anything_is_written(rgb_demo: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "real2gym_addon", "run", str(rgb_demo), "--out", str(tmp_path / "out"),
         "--depth-model", str(tmp_path / "missing")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "no config.json" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
