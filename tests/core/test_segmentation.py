"""The classical segmentation backend on small drawn videos with known masks.

Each video is drawn here with OpenCV and written as lossless ``frames/*.png``:
a red block on a textured table beside a blue cup, with sensor noise and
blur, and a grey occluder (a gripper or a hand) that passes in front of the
block. The truth is the block's *visible* part, as in ``truth.json``. The
floors asserted here are looser than the benchmark's targets
(``benchmarks/bench_segmentation.py``), so the tests do not flake.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym_addon.demo import load_demo
from real2gym_addon.errors import WarningLog
from real2gym_addon.segmentation import ClassicalSegmenter, FlowWarpSegmenter, segment_demo
from real2gym_addon.segmentation.base import Prompt
from real2gym_addon.truth import mask_iou

BLOCK = 30  # px, edge of the block at 320x240
OCCLUDER = (150, 230)  # x range (px) of the occluder in the occlusion video


def _table(width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """A wood-like background: tan planks with grain, ``HxWx3`` uint8 BGR."""
    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    grain = 12 * np.sin(x / width * 40 + 3 * np.sin(y / height * 7)) + 8 * ((y // (height / 6)) % 2)
    table = np.stack([120 + grain, 165 + grain, 205 + grain], axis=-1)
    table += rng.normal(0, 4, table.shape)
    return np.clip(table, 0, 255).astype(np.uint8)


def _write_demo(
    folder: Path,
    block_x: list[int],
    occluder: list[tuple[int, int] | None],
    size: tuple[int, int] = (320, 240),
    noise: float = 3.0,
    scale: int = 1,
) -> dict[str, list[np.ndarray]]:
    """Draws the video and writes the demo folder.

    Args:
        folder: The demo folder to write.
        block_x: Per frame, the block's left edge (px at 320x240).
        occluder: Per frame, the occluder's ``(x0, x1)`` (px at 320x240), or None.
        size: ``(width, height)`` at scale 1.
        noise: Sensor noise, standard deviation in grey levels (0: identical frames).
        scale: Every length is multiplied by this (for 4K videos).

    Returns:
        Per object name, per frame, its visible mask ``HxW`` bool at the video's size.
    """
    width, height = size
    rng = np.random.default_rng(0)
    table = _table(width, height, rng)
    cv2.circle(table, (250, 170), 25, (170, 80, 30), -1)  # the cup
    cup = np.zeros((height, width), np.uint8)
    cv2.circle(cup, (250, 170), 25, 1, -1)
    cup = cv2.resize(cup, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST) > 0
    (folder / "frames").mkdir(parents=True)
    truth = []
    for index, (x, hidden_by) in enumerate(zip(block_x, occluder, strict=True)):
        image = table.copy()
        rows, columns = slice(100, 100 + BLOCK), slice(x, x + BLOCK)
        shade = np.linspace(0.85, 1.0, BLOCK, dtype=np.float32)[None, :, None]  # lit from the right
        image[rows, columns] = (np.array([30, 35, 200], np.float32) * shade).astype(np.uint8)
        block = np.zeros((height, width), bool)
        block[rows, columns] = True
        if hidden_by is not None:
            image[20:, hidden_by[0] : hidden_by[1]] = (185, 190, 190)
            block[20:, hidden_by[0] : hidden_by[1]] = False
        if noise:
            image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
            image = cv2.GaussianBlur(image, (3, 3), 0)
        if scale != 1:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
            block = (
                cv2.resize(block.astype(np.uint8), None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
                > 0
            )
        cv2.imwrite(str(folder / "frames" / f"{index:06d}.png"), image)
        truth.append(block)
    width, height = width * scale, height * scale
    x = block_x[0]
    prompts = {
        "objects": [
            {
                "name": "block",
                "frame": 0,
                "box": [(x - 4) * scale, 96 * scale, (x + BLOCK + 4) * scale, (100 + BLOCK + 4) * scale],
                "points": [[(x + BLOCK // 2) * scale, (100 + BLOCK // 2) * scale, 1]],
                "shape": "box",
                "role": "manipulated",
            },
            {
                "name": "cup",
                "frame": 0,
                "box": [220 * scale, 140 * scale, 280 * scale, 200 * scale],
                "shape": "cup",
            },
        ],
        "task": {"type": "place_in", "object": "block", "target": "cup"},
    }
    camera = {"width": width, "height": height, "fx": 300.0 * scale, "fy": 300.0 * scale}
    camera.update(cx=width / 2, cy=height / 2)
    (folder / "camera.json").write_text(json.dumps(camera))
    (folder / "prompts.json").write_text(json.dumps(prompts))
    return {"block": truth, "cup": [cup] * len(truth)}


def _occlusion_video(folder: Path) -> list[np.ndarray]:
    """The block slides right behind a still occluder, hidden for 13 frames, and comes out.

    Returns:
        The block's visible mask per frame.
    """
    block_x = [60] * 10 + [60 + 4 * i for i in range(1, 51)]  # 60 frames, 4 px/frame from frame 10
    return _write_demo(folder, block_x, [OCCLUDER] * len(block_x))["block"]


def _block(segmentation):
    return next(track for track in segmentation.objects if track.name == "block")


def _mean_iou(track, truth: list[np.ndarray]) -> float:
    return float(np.mean([mask_iou(track.masks[f], t) for f, t in enumerate(truth) if t.any()]))


@pytest.fixture(scope="module")
def occlusion(tmp_path_factory) -> tuple[Path, list[np.ndarray], object]:
    """The occlusion demo, its truth and the classical segmentation of it."""
    folder = tmp_path_factory.mktemp("occlusion") / "demo"
    truth = _occlusion_video(folder)
    return folder, truth, segment_demo(load_demo(folder), ClassicalSegmenter())


def test_classical_follows_the_visible_part_and_beats_the_baseline(occlusion) -> None:
    folder, truth, segmentation = occlusion
    baseline = segment_demo(load_demo(folder), FlowWarpSegmenter())
    ours, theirs = _mean_iou(_block(segmentation), truth), _mean_iou(_block(baseline), truth)
    assert ours >= 0.8, f"classical mean IoU {ours:.3f}"
    assert ours > theirs + 0.1, f"classical {ours:.3f} vs flow_warp {theirs:.3f}"
    cup = next(track for track in segmentation.objects if track.name == "cup")
    assert all(c > 0.5 for c in cup.confidence), "the cup is always in full view"


def test_hidden_object_is_not_visible_then_found_again(occlusion) -> None:
    _, truth, segmentation = occlusion
    block = _block(segmentation)
    hidden = [f for f, t in enumerate(truth) if not t.any()]
    assert len(hidden) >= 10
    for frame in hidden:
        assert not block.masks[frame].any(), f"frame {frame}: a mask while the block is hidden"
        assert block.confidence[frame] == 0.0
    out_again = [f for f, t in enumerate(truth) if f > hidden[-1] and t.sum() >= 0.5 * BLOCK * BLOCK]
    found = [mask_iou(block.masks[f], truth[f]) for f in out_again]
    assert found and min(found) >= 0.7, f"IoU after the occlusion: {np.round(found, 2)}"
    assert block.confidence[out_again[-1]] > 0.5


def test_masks_are_written_as_0_255_pngs(occlusion, tmp_path: Path) -> None:
    _, truth, segmentation = occlusion
    segmentation.write(tmp_path / "masks")
    for track in segmentation.objects:
        files = sorted((tmp_path / "masks" / track.name).glob("*.png"))
        assert [f.name for f in files] == [f"{i:06d}.png" for i in range(len(truth))]
        for frame in (0, 30, len(truth) - 1):
            image = cv2.imread(str(files[frame]), cv2.IMREAD_UNCHANGED)
            assert image.dtype == np.uint8 and image.shape == truth[0].shape
            assert set(np.unique(image)) <= {0, 255}
            np.testing.assert_array_equal(image > 0, track.masks[frame])


def test_4k_video_is_segmented_reduced_and_masks_come_back_full_size(tmp_path: Path) -> None:
    truth = _write_demo(tmp_path / "demo", [60, 64, 68], [None] * 3, size=(320, 180), scale=12)
    log = WarningLog()
    segmentation = segment_demo(load_demo(tmp_path / "demo"), ClassicalSegmenter(), log=log)
    assert segmentation.working_scale < 0.5
    assert any("3840x2160" in w.message for w in log.warnings)
    for track in segmentation.objects:  # the cup is 200 px wide at working size: tracked reduced
        for frame, expected in enumerate(truth[track.name]):
            assert track.masks[frame].shape == (2160, 3840)
            iou = mask_iou(track.masks[frame], expected)
            assert iou >= 0.85, f"{track.name} on frame {frame}: IoU {iou:.3f}"


def test_identical_frames_warn_and_keep_the_masks_still(tmp_path: Path) -> None:
    _write_demo(tmp_path / "demo", [60] * 6, [None] * 6, noise=0.0)
    log = WarningLog()
    segmentation = segment_demo(load_demo(tmp_path / "demo"), ClassicalSegmenter(), log=log)
    assert any("identical" in w.message for w in log.warnings)
    for track in segmentation.objects:
        assert track.masks[0].any()
        for frame, mask in enumerate(track.masks):
            assert mask_iou(mask, track.masks[0]) >= 0.99, f"{track.name} moved on frame {frame}"
            assert track.confidence[frame] > 0.5


def test_object_never_seen_again_is_named_in_a_warning(tmp_path: Path) -> None:
    # The occluder slides over the still block from the left and stays.
    occluder = [None] * 5 + [(0, 40 + 8 * i) for i in range(1, 16)]
    truth = _write_demo(tmp_path / "demo", [60] * 20, occluder)["block"]
    log = WarningLog()
    segmentation = segment_demo(load_demo(tmp_path / "demo"), ClassicalSegmenter(), log=log)
    last_seen = max(f for f, t in enumerate(truth) if t.sum() >= 16)
    messages = [w.message for w in log.warnings if "'block'" in w.message]
    assert messages, [w.message for w in log.warnings]
    reported = int(re.search(r"after frame (\d+)", messages[0]).group(1))
    assert abs(reported - last_seen) <= 1, messages[0]
    assert not any(m for m in log.warnings if "'cup'" in m.message)
    assert not _block(segmentation).masks[-1].any()


def test_an_arm_of_the_objects_colour_reaching_out_of_it_is_cut_off() -> None:
    """A held object's mask must not follow an arm of its colour away from it (a mug taking in the arm)."""
    rng = np.random.default_rng(3)
    table = _table(320, 240, rng)
    frames, block = [], np.zeros((240, 320), bool)
    block[100 : 100 + BLOCK, 60 : 60 + BLOCK] = True
    for index in range(16):
        image = table.copy()
        image[block] = (30, 35, 200)
        if index >= 3:  # an arm of nearly the block's colour grows out of its right side
            image[105:125, 60 + BLOCK : min(320, 60 + BLOCK + 20 * (index - 2))] = (40, 45, 190)
        frames.append(np.clip(image + rng.normal(0, 3, image.shape), 0, 255).astype(np.uint8))
    segmenter = ClassicalSegmenter()
    segmenter.init_state(frames)
    box = (56.0, 96.0, 64.0 + BLOCK, 104.0 + BLOCK)
    segmenter.add_prompt(0, Prompt(frame=0, box=box, points=np.zeros((0, 2), np.float32),
                                   labels=np.zeros(0, np.int32)))  # fmt: skip
    reach = 1.3 * 0.5 * np.hypot(BLOCK + 8, BLOCK + 8)  # the tracker's reach around the box's centre
    for frame, masks in segmenter.propagate(0):
        mask = masks[0].mask
        ys, xs = np.nonzero(mask)
        assert xs.size, frame
        assert np.hypot(xs - 75, ys - 115).max() <= reach + 2, f"frame {frame}: the mask follows the arm"
        assert mask_iou(mask, block) > 0.5, frame
