"""Masks made elsewhere (issue 28): the ``given`` backend reads masks/<object>/ or masks_indexed/ from
the demo folder, at the working size, through the same doubt checks; bad files are named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import load_demo
from real2gym.real2gym_addon.errors import SegmentationError
from real2gym.real2gym_addon.segmentation.backends import BACKENDS, SegmentationOptions, make_segmenter
from real2gym.real2gym_addon.segmentation.given import read_indexed
from real2gym.real2gym_addon.segmentation.run import segment_demo
from real2gym.real2gym_addon.truth import load_truth, mask_iou, write_given_masks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("given") / "demo"
    shutil.copytree(EXAMPLE, folder)
    return folder


def _names(folder: Path) -> list[str]:
    return [o["name"] for o in json.loads((folder / "prompts.json").read_text())["objects"]]


def _segment(folder: Path):
    return segment_demo(load_demo(folder), make_segmenter(SegmentationOptions(backend="given")))


@pytest.mark.parametrize("indexed", [False, True], ids=["per_object", "indexed"])
def test_given_masks_come_back_as_they_were_given(example, tmp_path, indexed) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(example, folder)
    truth = load_truth(folder)
    write_given_masks(truth, folder, _names(folder), indexed=indexed)
    segmentation = _segment(folder)
    assert segmentation.backend == "given" and "given" in BACKENDS
    for track in segmentation.objects:
        frames = truth.objects[track.name].frames
        ious = [mask_iou(track.masks[f], t.mask()) for f, t in enumerate(frames) if t.mask().any()]
        assert min(ious) == 1.0, f"{track.name}: {min(ious):.3f}"
        unseen = [f for f, t in enumerate(frames) if not t.mask().any()]
        assert all(not track.masks[f].any() for f in unseen)


def test_given_masks_are_checked_like_any_backends(example, tmp_path) -> None:
    """A given mask that jumps across the picture on one frame is flagged, as a tracked one would be."""
    folder = tmp_path / "demo"
    shutil.copytree(example, folder)
    names = _names(folder)
    write_given_masks(load_truth(folder), folder, names)
    path = folder / "masks" / names[0] / "000040.png"
    mask = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    moved = np.zeros_like(mask)
    moved[:40, :40] = 255  # the object's mask in a corner, far from where it was
    cv2.imwrite(str(path), moved)
    track = _segment(folder).objects[0]
    assert track.reason[40], "a mask that jumps is not flagged"


def test_a_palette_png_reads_as_indices(tmp_path) -> None:
    """OpenCV expands a palette PNG to colours: the indices are recovered from its PLTE chunk."""
    pytest.importorskip("PIL")
    from PIL import Image

    index = np.zeros((6, 8), np.uint8)
    index[1:3, 1:4], index[4:, 5:] = 1, 2
    image = Image.fromarray(index, mode="P")
    image.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0] + [0, 0, 0] * 253)
    image.save(tmp_path / "000000.png")
    assert np.array_equal(read_indexed(tmp_path / "000000.png"), index)


def test_bad_given_masks_are_named(example, tmp_path) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(example, folder)
    with pytest.raises(SegmentationError, match="neither masks/<object>/ nor masks_indexed/"):
        _segment(folder)
    names = _names(folder)
    (folder / "masks" / names[0]).mkdir(parents=True)
    with pytest.raises(SegmentationError, match=f"object '{names[1]}': no folder masks/{names[1]}/"):
        _segment(folder)
    write_given_masks(load_truth(folder), folder, names)
    cv2.imwrite(str(folder / "masks" / names[1] / "000003.png"), np.zeros((10, 10), np.uint8))
    with pytest.raises(SegmentationError, match=r"000003.png is 10x10; the video is \d+x\d+"):
        _segment(folder)
    (folder / "masks" / names[1] / "000003.png").write_bytes(b"not a png")
    with pytest.raises(SegmentationError, match="000003.png is not a readable PNG"):
        _segment(folder)
