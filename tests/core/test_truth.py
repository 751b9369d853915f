"""truth.json helpers: COCO run-length masks and the reader benchmarks score with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.truth import (
    compress_counts,
    decode_rle,
    encode_rle,
    load_truth,
    mask_iou,
    rle_area,
)

# A mask and the compressed RLE string pycocotools 2.0 writes for it (mask.encode).
COCO_MASK = np.array(
    [
        [0, 0, 0, 0, 0, 0, 1],
        [0, 1, 1, 0, 0, 0, 0],
        [0, 1, 1, 0, 1, 1, 1],
        [0, 1, 1, 0, 1, 1, 1],
        [0, 0, 0, 0, 1, 1, 1],
        [0, 0, 0, 0, 1, 1, 1],
    ],
    dtype=bool,
)
COCO_STRING = "733071H1OO"


def _random_masks() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    masks = [np.zeros((1, 1), bool), np.ones((1, 1), bool), np.zeros((5, 3), bool)]
    masks.append(np.ones((4, 9), bool))
    for _ in range(40):
        h, w = rng.integers(1, 30, 2)
        masks.append(rng.random((h, w)) < rng.random())
    return masks


def test_counts_are_column_major_and_start_with_zeros() -> None:
    mask = np.array([[0, 1, 1], [1, 1, 0]])
    assert encode_rle(mask) == {"size": [2, 3], "counts": [1, 4, 1]}
    first_on = np.array([[1, 0], [0, 0]])
    assert encode_rle(first_on) == {"size": [2, 2], "counts": [0, 1, 3]}


@pytest.mark.parametrize("index", range(44))
def test_round_trip(index: int) -> None:
    mask = _random_masks()[index]
    rle = encode_rle(mask)
    assert sum(rle["counts"]) == mask.size
    assert rle_area(rle) == int(mask.sum())
    decoded = decode_rle(json.loads(json.dumps(rle)))
    assert decoded.dtype == bool and decoded.shape == mask.shape
    assert np.array_equal(decoded, mask)
    compressed = {"size": rle["size"], "counts": compress_counts(rle["counts"])}
    assert np.array_equal(decode_rle(compressed), mask)


def test_reads_and_writes_pycocotools_strings() -> None:
    assert compress_counts(encode_rle(COCO_MASK)["counts"]) == COCO_STRING
    for counts in (COCO_STRING, COCO_STRING.encode("ascii")):
        assert np.array_equal(decode_rle({"size": [6, 7], "counts": counts}), COCO_MASK)


def test_inconsistent_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="2 x 3"):
        decode_rle({"size": [2, 3], "counts": [1, 2]})
    with pytest.raises(ValueError, match="2-D"):
        encode_rle(np.zeros((2, 2, 2)))


def test_mask_iou() -> None:
    a = np.zeros((4, 4), bool)
    b = np.zeros((4, 4), bool)
    assert mask_iou(a, b) == 1.0
    a[:2] = True
    b[1:3] = True
    assert mask_iou(a, b) == pytest.approx(4 / 12)


def test_load_truth(tmp_path: Path) -> None:
    mask = np.zeros((3, 4), bool)
    mask[1, 1:3] = True
    frame = {
        "frame": 0,
        "position_cam": [0.1, 0.0, 0.7],
        "quaternion_cam": [1, 0, 0, 0],
        "position_world": [0.0, 0.0, 0.02],
        "quaternion_world": [1, 0, 0, 0],
        "visible": True,
        "visible_fraction": 0.5,
        "mask": encode_rle(mask),
    }
    truth = {
        "version": 1,
        "world_from_camera": np.eye(4).tolist(),
        "table": {"normal_cam": [0, -1, 0], "offset_cam": 0.5},
        "objects": [
            {
                "name": "cup",
                "shape": "cup",
                "size": [0.09, 0.09, 0.09],
                "outer_radius": 0.045,
                "mass": 0.18,
                "frames": [frame],
            }
        ],
        "keyframes": [
            {"frame": 9, "event": "release", "object": "block"},
            {"frame": 3, "event": "grasp", "object": "block"},
        ],
        "gripper": {"frame_of": "camera", "frames": [{"frame": 0, "gripper": 1.0}]},
    }
    (tmp_path / "truth.json").write_text(json.dumps(truth))
    loaded = load_truth(tmp_path)
    assert load_truth(tmp_path / "truth.json").version == 1
    cup = loaded.objects["cup"]
    assert cup.params == {"outer_radius": 0.045}
    assert cup.size.shape == (3,) and cup.mass == pytest.approx(0.18)
    assert np.array_equal(cup.frames[0].mask(), mask)
    assert cup.frames[0].visible_fraction == 0.5
    assert loaded.keyframe("grasp") == 3
    assert loaded.keyframe("release", "block") == 9
    assert loaded.keyframe("contact") is None
    assert [k["event"] for k in loaded.keyframes] == ["grasp", "release"]
    assert loaded.table_offset_cam == 0.5 and loaded.gripper[0]["gripper"] == 1.0
