"""A corrective prompt drawn in the real Blender GUI (Debian's 4.3.2 under Xvfb).

correction_session.py segments the bundled demo with the block's prompt drawn
on the cup's edge (its mask follows the cup), draws a box around the block on a
later frame with simulated mouse events, and segments again. This test checks
that Draw Box added a correction there (the main prompt stays), that it was
saved into prompts.json, and that the block's masks from that frame on now
match the truth while the frames before it are as they were.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

pytestmark = pytest.mark.gui
DEMO = REPO / "examples" / "block_in_cup"
FRAME = 30
BAD_BOX = [352, 215, 380, 326]  # the cup's left edge


def _masks(folder: Path, count: int) -> list[np.ndarray]:
    return [cv2.imread(str(folder / f"{frame:06d}.png"), 0) > 0 for frame in range(count)]


@pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")
def test_draw_box_on_a_later_frame_corrects_the_mask(tmp_path: Path) -> None:
    from real2gym.real2gym_addon.truth import load_truth, mask_iou

    OUTPUT.mkdir(parents=True, exist_ok=True)
    demo = Path(shutil.copytree(DEMO, tmp_path / "block_in_cup", ignore=shutil.ignore_patterns("truth.json")))
    prompts = json.loads((demo / "prompts.json").read_text())
    prompts["objects"][0].update(box=BAD_BOX, points=[[365, 270, 1]])
    (demo / "prompts.json").write_text(json.dumps(prompts))
    truth = [f.mask() for f in load_truth(DEMO).objects["block"].frames]
    ys, xs = np.nonzero(truth[FRAME])
    box = [int(xs.min()) - 3, int(ys.min()) - 3, int(xs.max()) + 4, int(ys.max()) + 4]

    out, result_file = tmp_path / "out", tmp_path / "result.json"
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("correction_session.py")), "--",
        str(_extension_zip()), str(demo), str(out), str(result_file), str(OUTPUT), str(FRAME), json.dumps(box),
    ]  # fmt: skip
    log = run_blender(command, env, timeout=400)
    (OUTPUT / "correction_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    (OUTPUT / "correction_result.json").write_text(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]
    assert result["draw_invoke"] == ["RUNNING_MODAL"] and result["second_invoke"] == ["RUNNING_MODAL"]
    for status in (result["first_status"], result["second_status"]):
        assert status == "2 objects segmented (classical)", status

    # Draw Box on frame 30 added a correction there; the main prompt stayed on frame 0.
    block = result["prompts_drawn"][0]
    assert block["name"] == "block" and block["frame"] == 0
    assert block["box"] == pytest.approx(BAD_BOX, abs=0.01)
    (correction,) = block["corrections"]
    assert correction["frame"] == FRAME
    assert correction["box"] == pytest.approx(box, abs=2.0)
    assert len(correction["points"]) == 1 and correction["points"][0][2] == 1
    saved = json.loads((demo / "prompts.json").read_text())["objects"][0]
    assert saved["box"] == BAD_BOX and [p["frame"] for p in saved["prompts"]] == [FRAME]
    assert result["prompts_after"] == result["prompts_drawn"]

    # Segment fixed the block's masks from frame 30 on and left the frames before it alone.
    first = _masks(Path(f"{out}_first_block_masks"), len(truth))
    second = _masks(out / "masks" / "block", len(truth))
    before = np.mean([mask_iou(first[f], truth[f]) for f in range(FRAME, len(truth))])
    after = np.mean([mask_iou(second[f], truth[f]) for f in range(FRAME, len(truth))])
    print(f"block IoU from frame {FRAME} on: {before:.3f} -> {after:.3f}")
    assert before < 0.2 and after > 0.8
    assert all(np.array_equal(first[f], second[f]) for f in range(FRAME))
    assert result["frame"] == 80
    for shot in ("drawing_shot", "panel_shot", "fixed_shot"):
        assert Path(result[shot]).is_file()
