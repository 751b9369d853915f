"""The Segmentation panel in the real Blender GUI (Debian's 4.3.2 under Xvfb).

segmentation_session.py segments the bundled demo from a click, draws the
block's box with simulated mouse events, segments again and takes screenshots
with the mask overlays shown and hidden. This test checks what it recorded and
that the overlay lies on the video where the mask says, on the frame shown.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from doc_images import doc_images_dir
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

pytestmark = pytest.mark.gui
DEMO = REPO / "examples" / "block_in_cup"
DOC_IMAGE = doc_images_dir() / "segmentation_panel.png"


def _screen_position(corners, pixel, width: int, height: int) -> np.ndarray:
    """Bilinear map of a video pixel onto the screenshot, from the video's corners there."""
    top_left, top_right, bottom_right, bottom_left = (np.asarray(c, float) for c in corners)
    u, v = pixel[0] / width, pixel[1] / height
    return (
        (1 - u) * (1 - v) * top_left
        + u * (1 - v) * top_right
        + u * v * bottom_right
        + (1 - u) * v * bottom_left
    )


@pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")
def test_draw_box_segment_and_see_the_masks(tmp_path: Path) -> None:
    import cv2

    OUTPUT.mkdir(parents=True, exist_ok=True)
    demo = Path(shutil.copytree(DEMO, tmp_path / "block_in_cup"))  # prompts.json gets saved: never the repo's
    out, result_file = tmp_path / "out", tmp_path / "result.json"
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("segmentation_session.py")), "--",
        str(_extension_zip()), str(demo), str(out), str(result_file), str(OUTPUT),
    ]  # fmt: skip
    log = run_blender(command, env, timeout=400)
    (OUTPUT / "segmentation_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    (OUTPUT / "segmentation_result.json").write_text(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]

    # Both runs went through the modal path and finished.
    assert result["first_invoke"] == ["RUNNING_MODAL"] and result["second_invoke"] == ["RUNNING_MODAL"]
    for status in (result["first_status"], result["second_status"]):
        assert status == "2 objects segmented (classical)", status
    # While it ran, the panel showed a progress bar (the screenshot is kept to look at).
    assert result.get("running_shot") and result["running_text"]
    assert result["draw_poll"] is True and result["draw_invoke"] == ["RUNNING_MODAL"]

    # The dragged box and the Shift+click point, in video pixels, within 2 px.
    prompt = result["prompt"]
    assert prompt["name"] == "block" and prompt["frame"] == 0
    assert prompt["box"] == pytest.approx([216, 225, 276, 290], abs=2.0)
    assert len(prompt["points"]) == 1 and prompt["points"][0][2] == 1
    assert prompt["points"][0][:2] == pytest.approx([245, 257], abs=2.0)
    assert result["cancel_invoke"] == ["RUNNING_MODAL"]
    assert result["box_after_cancel"] == prompt["box"], "Esc changed the prompt"
    saved = json.loads((demo / "prompts.json").read_text())
    assert saved["objects"][0]["box"] == pytest.approx(prompt["box"], abs=0.01)
    assert saved["task"]["type"] == "place_in" and (demo / "prompts.json.orig").is_file()

    # One video background and one overlay per object (not duplicated by the second run),
    # each overlay on the file of the frame shown.
    backgrounds = result["backgrounds"]
    assert [b["source"] for b in backgrounds] == ["MOVIE_CLIP", "IMAGE", "IMAGE"]
    assert [b["image"] for b in backgrounds[1:]] == ["Real2Gym Mask block", "Real2Gym Mask cup"]
    assert result["frame"] == 80, "the second run moved the user off the frame they were on"
    assert [b["frame_current"] for b in backgrounds[1:]] == [80, 80]
    assert result["shown_after_toggle"] == [True, False, False]

    # The overlay lies where the mask of the shown frame says: the difference between the
    # screenshots with and without overlays, against the block's mask mapped onto the screen.
    shown = cv2.imread(result["shown_shot"]).astype(int)
    hidden = cv2.imread(result["hidden_shot"]).astype(int)
    changed = np.abs(shown - hidden).sum(axis=2) > 40
    frame = result["frame"]
    corners = result["video_corners_on_screen"]
    ys, xs = np.nonzero(cv2.imread(str(out / "masks" / "block" / f"{frame:06d}.png"), 0))
    expected = _screen_position(corners, (xs.mean() + 0.5, ys.mean() + 0.5), 640, 480)
    left, top = _screen_position(corners, (xs.min(), ys.min()), 640, 480).astype(int) - 3
    right, bottom = _screen_position(corners, (xs.max() + 1, ys.max() + 1), 640, 480).astype(int) + 3
    window = changed[top:bottom, left:right]
    assert window.sum() > 0.5 * len(xs), "no overlay drawn over the block"
    wy, wx = np.nonzero(window)
    found = np.array([wx.mean() + left + 0.5, wy.mean() + top + 0.5])
    scale = np.linalg.norm(np.subtract(corners[1], corners[0])) / 640  # screen px per video px
    assert np.linalg.norm(found - expected) < 2.0 * max(scale, 1.0), (found, expected)

    # An unavailable backend: the operator refuses with the reason (the panel greys it).
    assert "sam2" in result["sam2_refusal"].lower() and result["sam2_shot"]

    # The screenshot for the user guide: the 3D view with the sidebar.
    x, y, w, h = result["area"]
    screen_h = result["screen"][1]
    crop = cv2.imread(result["shown_shot"])[screen_h - (y + h) : screen_h - y, x : x + w]
    DOC_IMAGE.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(DOC_IMAGE), crop)
