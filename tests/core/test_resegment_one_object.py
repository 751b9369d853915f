"""Segmenting one object again after a correction, leaving the other objects alone.

``real2gym segment DEMO --out OUT --object NAME`` (and ``run_pipeline(...,
resegment=NAME)``) re-runs the backend for one object with all its prompts,
keeps every other object's masks (the PNG files, byte for byte) and report
entries, and refuses an output folder whose earlier segmentation does not fit
the demo any more. The tiny demo's block is first prompted on its left half
only (a bad prompt); a correction on frame 6 draws the whole block.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon import Progress, run_pipeline
from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.errors import Cancelled, DemoFolderError
from real2gym.real2gym_addon.segmentation import ClassicalSegmenter, resegment

FRAMES = 12
CORRECTION_FRAME = 6
CORRECTION = {"frame": CORRECTION_FRAME, "box": [20, 18, 42, 40], "points": [[31, 29, 1]]}


def _set_block(demo: Path, **fields) -> None:
    path = demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"][0].update(fields)
    path.write_text(json.dumps(data))


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _entry(report: dict, name: str) -> dict:
    return next(o for o in report["segmentation"]["objects"] if o["name"] == name)


def _mask(out: Path, name: str, frame: int) -> np.ndarray:
    return cv2.imread(str(out / "masks" / name / f"{frame:06d}.png"), cv2.IMREAD_GRAYSCALE) > 0


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes (to see that a refused run changed nothing)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def segmented(tiny_demo: Path, tmp_path: Path) -> Path:
    """The tiny demo segmented with the block's bad prompt (its left half); returns the output folder."""
    _set_block(tiny_demo, box=[8, 18, 19, 38], points=[[13, 28, 1]])
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    return out


def test_a_correction_resegments_one_object_and_leaves_the_other_alone(
    segmented: Path, tiny_demo: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    before = _report(segmented)
    _entry(before, "cup")["checked_by"] = "a person"  # a field of its own: kept, not made again
    (segmented / "report.json").write_text(json.dumps(before))
    prompted = []
    add_prompt = ClassicalSegmenter.add_prompt

    def recording(self, object_id, prompt):
        prompted.append((object_id, prompt.frame))
        return add_prompt(self, object_id, prompt)

    monkeypatch.setattr(ClassicalSegmenter, "add_prompt", recording)
    cup_files = {p.name: p.read_bytes() for p in (segmented / "masks" / "cup").iterdir()}
    old_block = [_mask(segmented, "block", f) for f in range(FRAMES)]
    _set_block(tiny_demo, prompts=[CORRECTION])
    capsys.readouterr()

    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", "block", "-q"]) == 0
    printed = capsys.readouterr().out
    assert prompted == [(0, 0), (0, CORRECTION_FRAME)]  # the block's two prompts, nothing of the cup
    assert "re-segmented: block (the other objects' masks were kept)" in printed
    assert "review: cup" not in printed
    after = _report(segmented)
    # (a) The cup: the same files byte for byte, and the same report entry.
    assert {p.name: p.read_bytes() for p in (segmented / "masks" / "cup").iterdir()} == cup_files
    assert _entry(after, "cup") == _entry(before, "cup")
    assert [o["name"] for o in after["segmentation"]["objects"]] == ["block", "cup"]
    assert after["segmentation"]["backend"] == before["segmentation"]["backend"] == "classical"
    assert "backend" not in _entry(after, "block")
    # (b) The block: as before up to the correction, the corrected mask from it on.
    block = [_mask(segmented, "block", f) for f in range(FRAMES)]
    new_frames, old_frames = _entry(after, "block")["frames"], _entry(before, "block")["frames"]
    for frame in range(CORRECTION_FRAME):
        assert np.array_equal(block[frame], old_block[frame]), f"block, frame {frame}"
        assert new_frames[frame] == old_frames[frame], f"block, frame {frame}"
    x0, y0, x1, y1 = CORRECTION["box"]
    for frame in range(CORRECTION_FRAME, FRAMES):
        assert not np.array_equal(block[frame], old_block[frame]), f"block, frame {frame}"
        # The whole block now (the bad prompt's mask held some 285 pixels of its 321).
        assert 300 <= new_frames[frame]["area"] <= 340 and old_frames[frame]["area"] < 290
    ys, xs = np.nonzero(block[CORRECTION_FRAME])
    assert x0 <= xs.min() and xs.max() < x1 and y0 <= ys.min() and ys.max() < y1
    # What segmenting every object with the correction gives, for the block too.
    full = tmp_path / "full"
    assert main(["segment", str(tiny_demo), "--out", str(full), "-q"]) == 0
    assert _entry(_report(full), "block") == _entry(after, "block")
    assert "checked_by" not in _entry(_report(full), "cup")
    for frame in range(FRAMES):
        name = f"{frame:06d}.png"
        assert (full / "masks" / "block" / name).read_bytes() == (
            segmented / "masks" / "block" / name
        ).read_bytes()


def test_the_object_segmented_again_needs_no_masks_of_its_own(segmented: Path, tiny_demo: Path) -> None:
    shutil.rmtree(segmented / "masks" / "block")
    _set_block(tiny_demo, prompts=[CORRECTION])
    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", "block", "-q"]) == 0
    assert len(list((segmented / "masks" / "block").iterdir())) == FRAMES


def test_pixels_of_a_kept_mask_stay_with_the_kept_object(
    segmented: Path, tiny_demo: Path, monkeypatch
) -> None:
    # A correction box over the block and half the cup: the backend's new block takes cup pixels.
    _set_block(
        tiny_demo, prompts=[{"frame": 6, "box": [20, 18, 75, 55], "points": [[31, 29, 1], [70, 48, 1]]}]
    )
    checked = {}
    assess = resegment._assess

    def recording(demo, frames, depth, results):
        checked["doubts"] = assess(demo, frames, depth, results)
        return checked["doubts"]

    monkeypatch.setattr(resegment, "_assess", recording)
    cup = [_mask(segmented, "cup", f) for f in range(FRAMES)]
    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", "block", "-q"]) == 0
    checked_block = checked["doubts"][0].masks
    assert max(int((checked_block[f] & cup[f]).sum()) for f in range(FRAMES)) > 100
    for frame in range(FRAMES):
        assert not (_mask(segmented, "block", frame) & cup[frame]).any(), f"frame {frame}"
        assert np.array_equal(_mask(segmented, "cup", frame), cup[frame])
    # The doubt checks ran on the new masks: the frames where it took in the cup are flagged.
    flagged = [f["frame"] for f in _entry(_report(segmented), "block")["frames"] if f["review"]]
    assert flagged and min(flagged) >= CORRECTION_FRAME


def test_the_earlier_geometry_and_verification_are_dropped_with_a_note(
    segmented: Path, tiny_demo: Path, capsys
) -> None:
    report = _report(segmented)
    report["table"] = {"normal_cam": [0.0, -1.0, 0.0], "offset_cam": 0.5}
    report["verification"] = {"passed": True, "checks": {"task_success": True}}
    report["warnings"] = [
        {"stage": "segmentation", "message": "object 'cup' is not visible after frame 9 (lost or occluded)"},
        {"stage": "segmentation", "message": "object 'block' is never visible (lost or occluded to the end)"},
        {"stage": "geometry", "message": "object 'cup': fitted as a cylinder"},
    ]
    (segmented / "report.json").write_text(json.dumps(report))
    _set_block(tiny_demo, prompts=[CORRECTION])
    capsys.readouterr()
    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", "block", "-q"]) == 0
    after = _report(segmented)
    assert "table" not in after and "verification" not in after and after["objects"] == []
    note = [line for line in capsys.readouterr().err.splitlines() if "geometry and verification" in line]
    assert len(note) == 1 and f"real2gym run {tiny_demo}" in note[0], note
    assert note[0].startswith("real2gym: warning (segmentation): report.json no longer holds")
    messages = [w["message"] for w in after["warnings"]]
    assert messages[0] == report["warnings"][0]["message"]  # about the cup, kept
    assert not any(m.startswith("object 'block' is never") or "fitted" in m for m in messages)


def test_a_different_backend_is_recorded_on_the_object(segmented: Path, tiny_demo: Path) -> None:
    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", "cup", "--backend", "flow_warp", "-q"]) == 0  # fmt: skip
    report = _report(segmented)
    assert report["segmentation"]["backend"] == "classical"
    assert _entry(report, "cup")["backend"] == "flow_warp" and "backend" not in _entry(report, "block")


def _add_lid(demo: Path, out: Path) -> None:
    path = demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"].append({"name": "lid", "frame": 0, "box": [40, 2, 60, 14]})
    path.write_text(json.dumps(data))


def _edit_report(out: Path, change) -> None:
    report = _report(out)
    change(report)
    (out / "report.json").write_text(json.dumps(report))


def _paint_mask(out: Path) -> None:
    mask = cv2.imread(str(out / "masks/cup/000003.png"), cv2.IMREAD_GRAYSCALE)
    mask[0:3, 0:3] = 255
    cv2.imwrite(str(out / "masks/cup/000003.png"), mask)


REFUSALS = {
    "unknown object": (
        "lid", lambda demo, out: None,
        r"prompts\.json has no object 'lid' to segment again; its objects are: block, cup$",
    ),
    "no earlier run": (
        "block", lambda demo, out: shutil.rmtree(out),
        r"holds no earlier segmentation \(no report\.json\); first segment all objects: real2gym segment",
    ),
    "no segmentation in the report": (
        "block", lambda demo, out: _edit_report(out, lambda r: r.pop("segmentation")),
        r"report\.json in .* holds no segmentation to keep",
    ),
    "a mask missing": (
        "block", lambda demo, out: (out / "masks/cup/000004.png").unlink(),
        r"masks/cup/000004\.png is missing from .*; segment all objects again: real2gym segment DEMO --out .* \(without --object\)$",
    ),
    "a mask edited": (
        "block", lambda demo, out: _paint_mask(out),
        r"masks/cup/000003\.png in .* does not match report\.json \(\d+ mask pixels, the report says \d+\): was it edited\?",
    ),
    "a mask of another size": (
        "block", lambda demo, out: cv2.imwrite(str(out / "masks/cup/000002.png"), np.zeros((10, 10), np.uint8)),
        r"masks/cup/000002\.png in .* is not a 96x72 one-channel mask",
    ),
    "an object added to prompts.json": (
        "block", _add_lid,
        r"the earlier segmentation in .* has the objects block, cup, prompts\.json now has block, cup, lid; segment all objects again",
    ),
    "another video length": (
        "block", lambda demo, out: _edit_report(out, lambda r: r["video"].update(frames=20)),
        r"is of a 96x72 video of 20 frames, the demo's is 96x72 with 12 frames; segment all objects again",
    ),
    "a report entry of another length": (
        "block", lambda demo, out: _edit_report(out, lambda r: r["segmentation"]["objects"][1]["frames"].pop()),
        r"report\.json has 11 frames of 'cup', the video has 12",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSALS, ids=list(REFUSALS))
def test_refusals_are_one_line_exit_2_and_change_nothing(
    case: str, segmented: Path, tiny_demo: Path, capsys
) -> None:
    name, breakage, message = REFUSALS[case]
    breakage(tiny_demo, segmented)
    before = _tree(segmented) if segmented.exists() else None
    capsys.readouterr()
    assert main(["segment", str(tiny_demo), "--out", str(segmented), "--object", name, "-q"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("real2gym: error: "), lines
    assert re.search(message, lines[0]), lines[0]
    if before is None:
        assert not segmented.exists()  # no empty output folder left behind
    else:
        assert _tree(segmented) == before


def test_object_is_an_option_of_segment_only(segmented: Path, tiny_demo: Path, capsys) -> None:
    assert main(["run", str(tiny_demo), "--out", str(segmented), "--object", "block"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unrecognized arguments: --object block" in err[0]
    with pytest.raises(ValueError, match="segment-only run"):
        run_pipeline(tiny_demo, segmented, resegment="block")


def test_the_core_refuses_an_unknown_object_before_touching_the_folder(
    tiny_demo: Path, tmp_path: Path
) -> None:
    with pytest.raises(DemoFolderError, match="no object 'lid'"):
        run_pipeline(tiny_demo, tmp_path / "new", last_stage="segment", resegment="lid")
    assert not (tmp_path / "new").exists()


def test_a_cancelled_resegmentation_leaves_the_folder_as_it_was(segmented: Path, tiny_demo: Path) -> None:
    _set_block(tiny_demo, prompts=[CORRECTION])
    before = _tree(segmented)
    progress = Progress(lambda message, fraction: progress.cancel() if "frame 8" in message else None)
    with pytest.raises(Cancelled):
        run_pipeline(tiny_demo, segmented, progress=progress, last_stage="segment", resegment="block")
    assert _tree(segmented) == before


def test_a_reduced_working_size_keeps_the_others_too(tiny_demo: Path, tmp_path: Path, monkeypatch) -> None:
    """Segmenting at half the video's size: the kept masks are reduced for the checks, never rewritten."""
    from real2gym.real2gym_addon.segmentation import run as segmentation_run

    monkeypatch.setattr(segmentation_run, "MAX_WORKING_SIDE", 48)
    _set_block(tiny_demo, box=[8, 18, 19, 38], points=[[13, 28, 1]])
    out, full = tmp_path / "out", tmp_path / "full"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    before = _tree(out)
    _set_block(tiny_demo, prompts=[CORRECTION])
    assert main(["segment", str(tiny_demo), "--out", str(out), "--object", "block", "-q"]) == 0
    assert main(["segment", str(tiny_demo), "--out", str(full), "-q"]) == 0
    after = _tree(out)
    report = _report(out)
    assert report["segmentation"]["working_scale"] == 0.5
    assert {k: v for k, v in after.items() if "cup" in k} == {k: v for k, v in before.items() if "cup" in k}
    assert _entry(report, "block") == _entry(_report(full), "block")
    for frame in range(FRAMES):
        assert not (_mask(out, "block", frame) & _mask(out, "cup", frame)).any()


def test_the_hands_masks_are_kept_when_one_object_is_segmented_again(tiny_demo: Path) -> None:
    """A hand (``role: hand``, its masks made elsewhere) keeps its masks and entry through ``--object``."""
    first = tiny_demo.parent / "first"
    assert main(["segment", str(tiny_demo), "--out", str(first), "-q"]) == 0
    shutil.copytree(first / "masks", tiny_demo / "masks")
    (tiny_demo / "masks" / "hand").mkdir()
    for frame in range(FRAMES):  # a hand coming down from the top edge
        mask = np.zeros((72, 96), np.uint8)
        mask[: 8 + frame, 40:52] = 255
        cv2.imwrite(str(tiny_demo / "masks" / "hand" / f"{frame:06d}.png"), mask)
    path = tiny_demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"].append({"name": "hand", "frame": 4, "box": [38, 0, 54, 14], "role": "hand"})
    path.write_text(json.dumps(data))
    out = tiny_demo.parent / "out_hand"
    assert main(["segment", str(tiny_demo), "--out", str(out), "--backend", "given", "-q"]) == 0
    hand_files = {p.name: p.read_bytes() for p in (out / "masks" / "hand").iterdir()}
    hands = _report(out)["segmentation"]["hands"]
    assert [h["name"] for h in hands] == ["hand"]
    assert "hand" not in [o["name"] for o in _report(out)["segmentation"]["objects"]]

    assert (
        main(["segment", str(tiny_demo), "--out", str(out), "--object", "block", "--backend", "given", "-q"])
        == 0
    )
    assert {p.name: p.read_bytes() for p in (out / "masks" / "hand").iterdir()} == hand_files
    assert _report(out)["segmentation"]["hands"] == hands
