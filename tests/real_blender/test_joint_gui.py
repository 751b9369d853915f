"""A door's joint in the real Blender GUI (Debian's 4.3.2 under Xvfb).

The microwave demo (tests/articulated_demos.py) is run by the command line; joint_session.py
opens the run in Blender, selects the door on a frame where it stands open, and takes the
screenshot the user guide shows: the door under its joint's arrow and range over the video, and
the Fixes panel's joint box. It then tilts the arrow and applies it from the viewport, and undoes
that with Ctrl+Z. This test checks what it recorded and keeps the screenshot.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from articulated_demos import GENERATOR, make_microwave_demo
from doc_images import doc_images_dir
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

pytestmark = [
    pytest.mark.gui,
    pytest.mark.skipif(not GENERATOR.is_file(), reason="the articulated demo generator is missing"),
]
SCREEN = "1600x1400x24"  # tall enough for the Fixes panel's joint box beside the video


def _crop_area(image: np.ndarray, result: dict) -> np.ndarray:
    """The 3D view with its sidebar (what the user guide shows)."""
    x, y, w, h = result["area"]
    screen_h = result["screen"][1]
    return image[screen_h - (y + h) : screen_h - y, x : x + w]


def test_the_door_and_its_joint_in_the_gui(tmp_path: Path) -> None:
    import cv2

    OUTPUT.mkdir(parents=True, exist_ok=True)
    demo, out, result_file = (
        make_microwave_demo(tmp_path / "demo"),
        tmp_path / "out",
        tmp_path / "result.json",
    )
    command = REPO / ".venv" / "bin" / "real2gym"
    prefix = [str(command)] if command.is_file() else [sys.executable, "-m", "real2gym_addon"]
    ran = subprocess.run([*prefix, "run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]  # it verifies
    joint = next(
        p for o in json.loads((out / "report.json").read_text())["objects"] for p in o.get("parts", [])
    )

    env = dict(
        os.environ,
        REAL2GYM_BLENDER_XVFB="1",
        REAL2GYM_BLENDER_SCREEN=SCREEN,
        BLENDER_USER_RESOURCES=str(tmp_path / "user"),
    )
    arguments = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("joint_session.py")), "--",
        str(_extension_zip()), str(out), str(result_file), str(OUTPUT),
    ]  # fmt: skip
    log = run_blender(arguments, env, timeout=400)
    (OUTPUT / "joint_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    (OUTPUT / "joint_result.json").write_text(result_file.read_text())
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]
    assert result["open"] == ["FINISHED"]

    # The door hangs on its joint's Empty under the microwave; selected, the panel shows its joint.
    door = result["door"]
    assert door == {
        **door,
        "parent": "microwave.door joint",
        "parent_type": "EMPTY",
        "grandparent": "microwave",
    }
    assert result["active"] == "microwave.door" and result["frame"] == 8
    assert result["joint_box"], "the Fixes panel never drew the joint box"
    box = result["joint_box"][-1]
    assert box["object"] == "microwave" and [p[:3] for p in box["parts"]] == [["door", "hinge", "given"]]
    assert box["parts"][0][3] == pytest.approx(joint["joint"]["axis_world"], abs=1e-5)
    assert box["parts"][0][4] == pytest.approx(joint["joint"]["range"], abs=1e-5)

    # From Viewport, in the background: the tilted arrow became the joint's axis; Ctrl+Z took it back.
    before, applied, undone = result["before"], result["applied"], result["undone"]
    assert result["apply_invoke"] == ["RUNNING_MODAL"]
    assert applied["joint"]["axis_world"] == pytest.approx(result["tilted_axis"], abs=1e-5)
    assert np.dot(applied["joint"]["axis_world"], before["joint"]["axis_world"]) == pytest.approx(
        math.cos(math.radians(30)), abs=1e-4
    )
    assert [e[:2] for e in applied["edit_log"]] == [["joint", "microwave"]] and applied[
        "scene_edit_count"
    ] == 1
    assert applied["arrow_axis"] == pytest.approx(result["tilted_axis"], abs=1e-5)  # rebuilt on the new axis
    assert applied["active"] == "microwave.door"  # the rebuilt door is still the one selected
    assert undone["joint"] == before["joint"] and undone["edit_log"] == [] and undone["scene_edit_count"] == 0
    assert undone["arrow_axis"] == pytest.approx(before["arrow_axis"], abs=1e-5)
    # The verdict: verified, then failed on the tilted hinge, then verified again after the undo.
    assert (before["verified"], applied["verified"], undone["verified"]) == (True, False, True)
    assert applied["checks"]["joint_fidelity"] is False and undone["checks"] == before["checks"]

    # The screenshot: the 3D view is drawn, and the door and its arrow lie inside it.
    image = cv2.imread(result["shot"])
    screen_w, screen_h = result["screen"]
    assert image.shape[:2] == (screen_h, screen_w)
    x, y, w, h = result["view"]
    for name, position in result["on_screen"].items():
        assert position is not None and x <= position[0] <= x + w and 0 <= position[1] <= screen_h, name
    area = _crop_area(image, result)
    assert area.std() > 10, "the 3D view is blank"
    cv2.imwrite(str(doc_images_dir() / "joint_panel.png"), area)
