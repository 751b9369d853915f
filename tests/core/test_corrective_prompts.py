"""Corrective prompts: several prompts for one object, later ones re-seeding its mask.

prompts.json may give an object a ``prompts`` list beside (or instead of) its
single ``frame``/``box``/``points`` (``docs/data-contract.md``). These tests check
the reader and the editor's writer, the backends' restart of a track on a
correction's frame, and on the bundled demo that a correction rescues a block
whose first prompt was drawn on the cup's edge, leaving the earlier frames and
the cup alone.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import load_demo
from real2gym.real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym.real2gym_addon.prompts import Correction, ObjectPrompt, parse_prompts
from real2gym.real2gym_addon.prompts_file import read_prompts_file, save_prompts_file
from real2gym.real2gym_addon.segmentation import ClassicalSegmenter, FlowWarpSegmenter, Prompt, segment_demo
from real2gym.real2gym_addon.segmentation import run as segmentation_run
from real2gym.real2gym_addon.truth import load_truth, mask_iou

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "examples" / "block_in_cup"
VIDEO = (40, 160, 120)  # frames, width, height for the parsing tests


def _parse(*objects: dict, log: WarningLog | None = None) -> tuple[ObjectPrompt, ...]:
    data = {"objects": list(objects), "task": {"type": "lift", "object": objects[0]["name"]}}
    parsed, _ = parse_prompts(data, *VIDEO, log if log is not None else WarningLog())
    return parsed


# -- reading prompts.json ------------------------------------------------------------------


def test_the_single_prompt_form_is_unchanged() -> None:
    (cup,) = _parse({"name": "cup", "frame": 3, "box": [10, 10, 40, 40], "points": [[20, 20, 1]]})
    assert cup == ObjectPrompt("cup", 3, (10, 10, 40, 40), ((20, 20, 1),), "auto", "manipulated")
    assert cup.corrections == () and cup.prompts == (Correction(3, (10, 10, 40, 40), ((20, 20, 1),)),)


def test_prompts_beside_the_single_prompt_are_corrections_in_frame_order() -> None:
    (cup,) = _parse(
        {
            "name": "cup",
            "frame": 2,
            "box": [10, 10, 40, 40],
            "prompts": [
                {"frame": 30, "box": [50, 20, 80, 60], "points": [[60, 30, 1], [5, 5, 0]]},
                {"frame": 12, "box": [30, 10, 60, 40]},
            ],
        }
    )
    assert (cup.frame, cup.box, cup.points) == (2, (10, 10, 40, 40), ())
    assert cup.corrections == (
        Correction(12, (30, 10, 60, 40)),
        Correction(30, (50, 20, 80, 60), ((60, 30, 1), (5, 5, 0))),
    )


def test_without_a_single_prompt_the_earliest_listed_one_is_the_main_prompt() -> None:
    (cup,) = _parse(
        {
            "name": "cup",
            "prompts": [{"frame": 25, "box": [50, 20, 80, 60]}, {"frame": 7, "box": [10, 10, 40, 40]}],
        }
    )
    assert (cup.frame, cup.box) == (7, (10, 10, 40, 40))
    assert cup.corrections == (Correction(25, (50, 20, 80, 60)),)
    # A listed prompt before the single one: the earliest is still the main one.
    (cup,) = _parse(
        {"name": "cup", "frame": 9, "box": [10, 10, 40, 40], "prompts": [{"frame": 4, "box": [1, 1, 9, 9]}]}
    )
    assert (cup.frame, cup.corrections) == (4, (Correction(9, (10, 10, 40, 40)),))


def test_a_correction_box_is_clipped_to_the_image_with_a_warning() -> None:
    log = WarningLog()
    (cup,) = _parse(
        {
            "name": "cup",
            "frame": 0,
            "box": [1, 1, 20, 20],
            "prompts": [{"frame": 5, "box": [150, 100, 190, 130]}],
        },
        log=log,
    )
    assert cup.corrections[0].box == (150, 100, 160, 120)
    assert [w.message for w in log.warnings] == [
        "object 'cup': box [150.0, 100.0, 190.0, 130.0] on frame 5 was clipped to the image"
    ]


BAD_PROMPTS = {
    "not a list": ({"frame": 0, "box": [1, 1, 20, 20], "prompts": {"frame": 3}}, ": 'prompts' must be a list"),
    "entry not an object": ({"prompts": [[3, [1, 1, 20, 20]]]}, r", prompts\[0\]: must be a JSON object"),
    "no frame": ({"prompts": [{"box": [1, 1, 20, 20]}]}, r", prompts\[0\]: needs a 'frame'"),
    "frame past the end": (
        {"frame": 0, "box": [1, 1, 20, 20], "prompts": [{"frame": 5, "box": [1, 1, 20, 20]}, {"frame": 40, "box": [1, 1, 20, 20]}]},
        r", prompts\[1\]: prompt frame 40 is out of range; the video has frames 0 to 39",
    ),
    "frame not whole": ({"prompts": [{"frame": 2.5, "box": [1, 1, 20, 20]}]}, r", prompts\[0\]: 'frame' must be a whole frame number"),
    "no box": ({"prompts": [{"frame": 3}]}, r", prompts\[0\]: 'box' must be \[x0, y0, x1, y1\] in pixels, got None"),
    "box of three": ({"prompts": [{"frame": 3, "box": [1, 2, 3]}]}, r", prompts\[0\]: 'box' must be"),
    "box without area": ({"prompts": [{"frame": 3, "box": [20, 20, 10, 30]}]}, r", prompts\[0\]: box \[20, 20, 10, 30\] on frame 3 has zero area"),
    "box off the image": ({"prompts": [{"frame": 3, "box": [200, 10, 220, 30]}]}, r", prompts\[0\]: box .* lies outside the 160x120 image"),
    "box too small": ({"prompts": [{"frame": 3, "box": [10, 10, 12, 30]}]}, r", prompts\[0\]: box .* is under 4 pixels on a side"),
    "point off the image": (
        {"prompts": [{"frame": 3, "box": [1, 1, 20, 20], "points": [[170, 5, 1]]}]},
        r", prompts\[0\]: point \[170, 5, 1\] on frame 3 lies outside the 160x120 image",
    ),
    "point label": (
        {"prompts": [{"frame": 3, "box": [1, 1, 20, 20], "points": [[5, 5, 2]]}]},
        r", prompts\[0\]: points\[0\] must be \[x, y, label\] with label 0 or 1",
    ),
    "same frame as the single prompt": (
        {"frame": 6, "box": [1, 1, 20, 20], "prompts": [{"frame": 6, "box": [5, 5, 30, 30]}]},
        r", prompts\[0\]: the object already has a prompt on frame 6",
    ),
    "two listed on one frame": (
        {"prompts": [{"frame": 6, "box": [1, 1, 20, 20]}, {"frame": 9, "box": [1, 1, 20, 20]}, {"frame": 6, "box": [5, 5, 30, 30]}]},
        r", prompts\[2\]: the object already has a prompt on frame 6",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_PROMPTS, ids=list(BAD_PROMPTS))
def test_bad_corrections_are_refused_naming_the_object_and_the_prompt(case: str) -> None:
    fields, message = BAD_PROMPTS[case]
    with pytest.raises(DemoFolderError, match=rf"^prompts\.json, object 'cup'{message}"):
        _parse({"name": "cup", **fields})


def test_the_demo_reader_checks_corrections_against_the_video(tiny_demo: Path) -> None:
    path = tiny_demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"][0]["prompts"] = [{"frame": 6, "box": [30, 18, 50, 38], "points": [[40, 28, 1]]}]
    path.write_text(json.dumps(data))
    block = load_demo(tiny_demo).objects[0]
    assert (block.frame, block.corrections) == (0, (Correction(6, (30, 18, 50, 38), ((40, 28, 1),)),))
    data["objects"][0]["prompts"][0]["frame"] = 12
    path.write_text(json.dumps(data))
    with pytest.raises(
        DemoFolderError, match=r"object 'block', prompts\[0\]: prompt frame 12 is out of range"
    ):
        load_demo(tiny_demo)


# -- the editor's reader and writer ----------------------------------------------------------


def test_corrections_survive_a_load_and_save_round_trip(tiny_demo: Path) -> None:
    path = tiny_demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"][0]["prompts"] = [{"frame": 6, "box": [30, 18, 50, 38], "note": "hand-drawn"}]
    cup = data["objects"][1]
    data["objects"][1] = {
        "name": "cup",
        "prompts": [{"frame": 0, "box": cup["box"]}, {"frame": 4, "box": [55, 30, 85, 60]}],
        "shape": "cup",
        "role": "container",
    }
    path.write_text(json.dumps(data))
    original = path.read_bytes()
    prompts = read_prompts_file(tiny_demo)
    assert prompts[0].corrections == (Correction(6, (30, 18, 50, 38)),)
    assert (prompts[1].frame, prompts[1].corrections) == (0, (Correction(4, (55, 30, 85, 60)),))
    # Saved unchanged: nothing is written (each object keeps its form, list entries their fields).
    assert save_prompts_file(tiny_demo, [(p, p.name) for p in prompts]) is False
    assert path.read_bytes() == original

    # A new correction, given out of order, and one removed: written in frame order, read back the same.
    block = dataclasses.replace(
        prompts[0],
        corrections=(Correction(9, (40, 20, 60, 40), ((50, 30, 1),)), *prompts[0].corrections),
    )
    cup = dataclasses.replace(prompts[1], corrections=())
    assert save_prompts_file(tiny_demo, [(block, "block"), (cup, "cup")]) is True
    saved = json.loads(path.read_text())["objects"]
    assert saved[0]["prompts"] == [
        {"frame": 6, "box": [30, 18, 50, 38], "note": "hand-drawn"},
        {"frame": 9, "box": [40, 20, 60, 40], "points": [[50, 30, 1]]},
    ]
    assert saved[1]["prompts"] == [{"frame": 0, "box": [56, 32, 86, 62]}] and "box" not in saved[1]
    again = read_prompts_file(tiny_demo)
    assert again[0] == dataclasses.replace(
        block, corrections=tuple(sorted(block.corrections, key=lambda c: c.frame))
    )
    assert again[1] == cup
    load_demo(tiny_demo)  # and a run accepts it

    # The last correction removed from a single-prompt object: no 'prompts' left.
    assert save_prompts_file(
        tiny_demo, [(dataclasses.replace(again[0], corrections=()), "block"), (cup, "cup")]
    )
    assert "prompts" not in json.loads(path.read_text())["objects"][0]


def test_saving_makes_the_earliest_prompt_the_main_one_and_refuses_two_on_a_frame(tiny_demo: Path) -> None:
    block, cup = read_prompts_file(tiny_demo)
    moved = dataclasses.replace(block, frame=8, corrections=(Correction(3, (1, 2, 30, 40)),))
    assert save_prompts_file(tiny_demo, [(moved, "block"), (cup, "cup")])
    entry = json.loads((tiny_demo / "prompts.json").read_text())["objects"][0]
    assert (entry["frame"], entry["box"]) == (3, [1, 2, 30, 40])
    assert entry["prompts"] == [{"frame": 8, "box": [8, 18, 28, 38], "points": [[18, 28, 1]]}]
    twice = dataclasses.replace(block, corrections=(Correction(0, (1, 2, 30, 40)),))
    before = (tiny_demo / "prompts.json").read_bytes()
    with pytest.raises(DemoFolderError, match="object 'block' has two prompts on frame 0"):
        save_prompts_file(tiny_demo, [(twice, "block"), (cup, "cup")])
    assert (tiny_demo / "prompts.json").read_bytes() == before


# -- the backends ----------------------------------------------------------------------------------


def _two_squares(count: int = 10) -> list[np.ndarray]:
    """A red and green square moving right and a still blue one on a grey, textured background."""
    rng = np.random.default_rng(1)
    background = np.clip(rng.normal(128, 6, (90, 120, 3)), 0, 255).astype(np.uint8)
    frames = []
    for index in range(count):
        frame = background.copy()
        frame[20:40, 10 + 3 * index : 20 + 3 * index] = (30, 30, 200)
        frame[20:40, 20 + 3 * index : 30 + 3 * index] = (40, 180, 40)
        frame[55:80, 85:110] = (200, 60, 30)
        frames.append(frame)
    return frames


def _propagated(
    segmenter, frames, prompts, start: int, reverse: bool = False
) -> dict[int, dict[int, np.ndarray]]:
    segmenter.init_state(frames)
    for object_id, prompt in prompts:
        segmenter.add_prompt(object_id, prompt)
    return {
        frame: {i: m.mask.copy() for i, m in masks.items()}
        for frame, masks in segmenter.propagate(start, reverse)
    }


@pytest.mark.parametrize("backend", [ClassicalSegmenter, FlowWarpSegmenter], ids=["classical", "flow_warp"])
def test_a_correction_restarts_the_track_on_its_frame_only(backend) -> None:
    frames = _two_squares()
    square = Prompt(frame=2, box=(13.0, 17.0, 26.0, 43.0))  # only the red half of the square: a bad prompt
    blue = Prompt(frame=0, box=(82.0, 52.0, 113.0, 83.0))
    correction = Prompt(frame=6, box=(25.0, 16.0, 51.0, 44.0))  # around the whole square
    plain = [(0, square), (1, blue)]
    corrected = [*plain, (0, correction)]
    segmenter = backend()
    segmenter.init_state(frames)
    seed = segmenter.add_prompt(0, correction).mask

    def same(a: dict, b: dict, object_id: int) -> bool:
        return (object_id in a) == (object_id in b) and np.array_equal(
            a.get(object_id, 0), b.get(object_id, 0)
        )

    before = _propagated(segmenter, frames, plain, 0)
    after = _propagated(segmenter, frames, corrected, 0)
    assert sorted(before) == sorted(after) == list(range(10))
    assert before[2][0].sum() == 200  # the prompt took the red half, not the whole square
    assert all(same(before[f], after[f], 1) for f in range(10))  # the blue square: untouched
    assert all(same(before[f], after[f], 0) for f in range(6))  # the square before the correction
    assert np.array_equal(after[6][0], seed)  # restarted from the correction on its frame
    # Backward from the end, each object's frames before its first prompt are as without the correction.
    before = _propagated(segmenter, frames, plain, 9, reverse=True)
    after = _propagated(segmenter, frames, corrected, 9, reverse=True)
    assert all(same(before[f], after[f], 1) for f in range(10))
    assert all(same(before[f], after[f], 0) for f in range(3))
    # From the correction on, the whole square is followed; without it, its red half at best.
    forward = {
        name: _propagated(segmenter, frames, prompts, 0)
        for name, prompts in (("plain", plain), ("fixed", corrected))
    }
    iou = {name: [] for name in forward}
    for frame in range(6, 10):
        truth = np.zeros(frames[0].shape[:2], bool)
        truth[20:40, 10 + 3 * frame : 30 + 3 * frame] = True
        for name, masks in forward.items():
            iou[name].append(mask_iou(masks[frame][0], truth))
    assert max(iou["plain"]) < 0.55 and min(iou["fixed"]) > 0.7, iou


HAS_SAM2 = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("sam2") is not None


@pytest.mark.sam2_plumbing
@pytest.mark.skipif(not HAS_SAM2, reason="torch and sam2 are not installed (requirements-sam2.txt)")
def test_sam2_takes_several_prompts_for_one_object(tmp_path: Path) -> None:
    """Plumbing on a random tiny model (as test_segmentation_sam2.py): the correction is used on its frame."""
    import torch
    from sam2.build_sam import build_sam2_video_predictor

    from real2gym.real2gym_addon.segmentation import Sam2Segmenter, sam2_backend

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        model = build_sam2_video_predictor(
            sam2_backend.config_name("sam2.1_hiera_t"), None, device="cpu",
            hydra_overrides_extra=["++model.image_size=128"],
        )  # fmt: skip
        torch.save({"model": model.state_dict()}, tmp_path / "tiny_random.pt")
        segmenter = Sam2Segmenter(tmp_path / "tiny_random.pt", "sam2.1_hiera_t", device="cpu", image_size=128)
        frames = [cv2.resize(f, (64, 48)) for f in _two_squares(6)]
        segmenter.init_state(frames)
        segmenter.add_prompt(0, Prompt(frame=1, box=(6.0, 10.0, 20.0, 28.0)))
        segmenter.add_prompt(1, Prompt(frame=0, box=(44.0, 28.0, 60.0, 44.0)))
        corrected = segmenter.add_prompt(0, Prompt(frame=4, box=(12.0, 10.0, 28.0, 28.0))).mask.copy()
        forward = {frame: masks for frame, masks in segmenter.propagate(0)}
        assert {frame: set(masks) for frame, masks in forward.items()} == {
            0: {1}, 1: {0, 1}, 2: {0, 1}, 3: {0, 1}, 4: {0, 1}, 5: {0, 1}
        }  # fmt: skip
        assert np.array_equal(forward[4][0].mask, corrected)  # the correction's frame gives its mask
        backward = {frame: set(masks) for frame, masks in segmenter.propagate(4, reverse=True)}
        assert backward == {4: {0}, 3: {0}, 2: {0}, 1: {0}, 0: {0, 1}}  # up to its latest prompt
    finally:
        torch.set_num_threads(threads)


# -- the bundled demo ------------------------------------------------------------------------------

CORRECTION_FRAME = 20


def _bbox(mask: np.ndarray) -> list[int]:
    ys, xs = np.nonzero(mask)
    return [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]


def _segment(folder: Path, block: dict, monkeypatch: pytest.MonkeyPatch):
    """Segments the bundled demo with the block's prompts replaced; returns the result and the
    backend's own masks (working size, before the quality checks) per object."""
    shutil.copytree(BUNDLED, folder, ignore=shutil.ignore_patterns("truth.json"))
    data = json.loads((folder / "prompts.json").read_text())
    data["objects"][0] = {
        **{k: v for k, v in data["objects"][0].items() if k not in ("box", "points")},
        **block,
    }
    (folder / "prompts.json").write_text(json.dumps(data))
    raw = {}

    def recording(masks, *args):
        raw["masks"] = [[m.copy() for m in per_object] for per_object in masks]
        return assess(masks, *args)

    assess = segmentation_run.assess
    monkeypatch.setattr(segmentation_run, "assess", recording)
    return segment_demo(load_demo(folder), ClassicalSegmenter()), raw["masks"]


def test_a_correction_rescues_a_block_prompted_on_the_cups_edge(tmp_path: Path, monkeypatch) -> None:
    truth = load_truth(BUNDLED)
    block_truth = [f.mask() for f in truth.objects["block"].frames]
    x0, y0, x1, y1 = _bbox(block_truth[CORRECTION_FRAME])
    centre = [(x0 + x1) // 2, (y0 + y1) // 2, 1]
    bad = {"frame": 0, "box": [352, 215, 380, 326], "points": [[365, 270, 1]]}  # the cup's left edge
    correction = {"frame": CORRECTION_FRAME, "box": [x0 - 3, y0 - 3, x1 + 3, y1 + 3], "points": [centre]}
    without, raw_without = _segment(tmp_path / "bad", bad, monkeypatch)
    fixed, raw_fixed = _segment(tmp_path / "fixed", {**bad, "prompts": [correction]}, monkeypatch)

    def iou(result, frames) -> float:
        return float(np.mean([mask_iou(result.objects[0].masks[f], block_truth[f]) for f in frames]))

    after = range(CORRECTION_FRAME, len(block_truth))
    print(f"block IoU from frame {CORRECTION_FRAME} on: {iou(without, after):.3f} -> {iou(fixed, after):.3f}")
    assert iou(without, after) < 0.2 and iou(fixed, after) > 0.8
    block, fixed_block = without.objects[0], fixed.objects[0]
    for frame in range(CORRECTION_FRAME):  # before the correction: as without it
        assert np.array_equal(block.masks[frame], fixed_block.masks[frame]), f"block, frame {frame}"
    # The cup is tracked alone: the backend's masks of it are the same in both runs...
    for frame, (a, b) in enumerate(zip(raw_without[1], raw_fixed[1], strict=True)):
        assert np.array_equal(a, b), f"cup, frame {frame}"
    # ...and after the quality checks (a pixel goes to one object) they differ only where a block mask is.
    for frame, (a, b) in enumerate(zip(without.objects[1].masks, fixed.objects[1].masks, strict=True)):
        elsewhere = ~(block.masks[frame] | fixed_block.masks[frame])
        assert np.array_equal(a & elsewhere, b & elsewhere), f"cup, frame {frame}"
    # From the correction on, the block is judged against the correction, not the bad prompt.
    flagged = sum(bool(fixed_block.reason[f]) for f in after)
    print(f"block frames flagged after the correction: {flagged} of {len(after)}")
    assert flagged < 0.3 * len(after)
