"""The Verification panel in the real Blender GUI (Debian's 4.3.2 under Xvfb).

verification_session.py runs the whole pipeline on the bundled demo from a
click, verifies again from the panel's operator, and takes a screenshot at
frame 80 in the camera view: the video, the reconstruction posed from the video
and the simulation's copies together, with the Verification panel. This test
checks what it recorded and keeps the screenshot for the user guide.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from doc_images import doc_images_dir
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

from real2gym.real2gym_addon.verify.registry import CHECKS

pytestmark = pytest.mark.gui
DEMO = REPO / "examples" / "block_in_cup"
DOC_IMAGE = doc_images_dir() / "verification_panel.png"


@pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")
def test_run_verify_and_see_the_simulation(tmp_path: Path) -> None:
    import cv2

    OUTPUT.mkdir(parents=True, exist_ok=True)
    out, result_file = tmp_path / "out", tmp_path / "result.json"
    env = dict(
        os.environ,
        REAL2GYM_BLENDER_XVFB="1",
        REAL2GYM_BLENDER_SCREEN="1600x1200x24",
        BLENDER_USER_RESOURCES=str(tmp_path / "user"),
    )
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("verification_session.py")), "--",
        str(_extension_zip()), str(DEMO), str(out), str(result_file), str(OUTPUT),
    ]  # fmt: skip
    log = run_blender(command, env, timeout=400)
    (OUTPUT / "verification_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    (OUTPUT / "verification_result.json").write_text(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]

    # Both the run and the verification went through the modal path (worker thread, timer).
    assert result["run_invoke"] == ["RUNNING_MODAL"] and result["verify_invoke"] == ["RUNNING_MODAL"]
    assert result["verification_status"] == "Verified"
    report = json.loads((out / "report.json").read_text())
    assert report["verification"]["passed"]

    # The panel drew the verdict and one passed row per check, with its figure.
    draws = result["panel_draws"]
    assert draws, "the Verification panel was never drawn"
    last = draws[-1]
    assert last["verified"] is True and last["status"] == "Verified"
    labels = [label for label, _, _ in last["checks"]]
    # One row per check of the report, in its order, labelled from the checks table.
    assert labels == [CHECKS[name].label for name in report["verification"]["checks"]]
    # all but simulation_stable (written only when it fails) and joint_fidelity (the demo has no moving parts)
    assert labels[:2] == ["Task", "Grasp"] and len(labels) == len(CHECKS) - 2
    assert all(passed and figure for _, passed, figure in last["checks"])
    # The margin: the run's and the panel's Verify both simulated 8 perturbed copies (Run Options' default).
    assert last["margin"] == "verified, 8 of 8 perturbed runs" == report["verification"]["margin"]["verdict"]
    assert last["perturbed"] == ["8/8"] * len(labels)

    # The reconstruction, its hidden collision pieces and the simulated copies are in the scene.
    objects = result["objects"]
    assert objects["block"]["kind"] == "OBJECT" and objects["block"]["collections"] == ["Real2Gym"]
    assert objects["block sim"]["collections"] == ["Real2Gym Sim"]
    assert not objects["block collision 0"]["visible"]
    assert result["frame"] == 80
    assert [80 > f for f, _ in result["markers"]].count(True) == 2  # grasp and lift before frame 80
    # On frame 80 the simulated block is where the video-derived one is (the carry is faithful).
    on_screen = {k: np.array(v) for k, v in result["on_screen"].items()}
    x, y, w, h = result["sidebar"]
    for name in ("block", "cup"):
        assert on_screen[name][0] < x, f"{name} is under the sidebar"
        assert np.linalg.norm(on_screen[name] - on_screen[f"{name} sim"]) < 15
    shot = cv2.imread(result["shot"])
    screen_w, screen_h = result["screen"]
    sidebar = shot[screen_h - (y + h) : screen_h - y, x : x + w]
    assert sidebar.std() > 10, "the sidebar region is blank"

    # The screenshot for the user guide: the 3D view with the sidebar.
    ax, ay, aw, ah = result["area"]
    crop = shot[screen_h - (ay + ah) : screen_h - ay, ax : ax + aw]
    DOC_IMAGE.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(DOC_IMAGE), crop)
