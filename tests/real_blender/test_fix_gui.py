"""Fixing a broken run in the real Blender GUI (Debian's 4.3.2 under Xvfb).

The bundled demo is processed with the command line, then broken on purpose
(the cup's rim 15 % too narrow for the block). fix_session.py opens it in
Blender, selects the keyframe the failed check points to, applies the
suggested fix from the panel, and undoes it with Blender's undo, redo and
*Undo Fix*. This test checks report.json and the scene at each step, and keeps
the before/after screenshots for the user guide.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from doc_images import doc_images_dir
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

pytestmark = pytest.mark.gui
DEMO = REPO / "examples" / "block_in_cup"
DOC_IMAGES = doc_images_dir()
SCREEN = "1600x1400x24"  # tall enough for the Keyframes, Suggestions and Fixes panels together


def _real2gym(*args: str) -> subprocess.CompletedProcess:
    command = REPO / ".venv" / "bin" / "real2gym"
    prefix = [str(command)] if command.is_file() else [sys.executable, "-m", "real2gym_addon"]
    return subprocess.run([*prefix, *map(str, args)], capture_output=True, text=True, cwd=REPO, timeout=300)


def _broken_run(out: Path) -> dict:
    """Runs the pipeline on the demo, then narrows the cup's rim; returns the broken report."""
    ran = _real2gym("run", DEMO, "--out", out, "--no-blend", "-q")
    assert ran.returncode == 0, ran.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    block = next(o for o in report["objects"] if o["name"] == "block")
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    half_diagonal = (block["size"][0] ** 2 + block["size"][1] ** 2) ** 0.5 / 2
    factor = 0.85 * half_diagonal / cup["params"]["inner_radius"]
    broke = _real2gym("fix", out, "--object", "cup", "--rim-scale", f"{factor:.6f}")
    assert broke.returncode == 1, broke.stdout + broke.stderr  # 1: not verified any more
    return json.loads((out / "report.json").read_text())


def _crop_area(shot: str, result: dict, target: Path) -> None:
    """Keeps the 3D view with its sidebar (what the user guide shows)."""
    import cv2

    x, y, w, h = result["area"]
    screen_h = result["screen"][1]
    image = cv2.imread(shot)
    target.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(target), image[screen_h - (y + h) : screen_h - y, x : x + w])


@pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")
def test_a_broken_rim_is_fixed_from_the_panel_and_undone(tmp_path: Path) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    out, result_file = tmp_path / "out", tmp_path / "result.json"
    broken = _broken_run(out)
    broken_cup = next(o for o in broken["objects"] if o["name"] == "cup")["params"]
    suggestion = broken["verification"]["suggestions"][0]
    assert suggestion["fix"]["kind"] == "radius_scale"

    env = dict(
        os.environ,
        REAL2GYM_BLENDER_XVFB="1",
        REAL2GYM_BLENDER_SCREEN=SCREEN,
        BLENDER_USER_RESOURCES=str(tmp_path / "user"),
    )
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("fix_session.py")), "--",
        str(_extension_zip()), str(DEMO), str(out), str(result_file), str(OUTPUT),
    ]  # fmt: skip
    log = run_blender(command, env, timeout=400)
    (OUTPUT / "fix_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    (OUTPUT / "fix_result.json").write_text(result_file.read_text())
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]
    assert result["load"] == ["FINISHED"]

    # Selecting the keyframe the failed check points to jumps there, in the camera view, with IoUs.
    selected, before = result["selected"], result["before"]
    assert selected["frame"] == suggestion["frame"] and selected["view"] == "CAMERA"
    event, frame, verdict, failed = before["keyframes"][selected["index"]]
    assert frame == suggestion["frame"] and verdict == "FAILED" and "task_success" in failed
    assert [f for f, _, _ in selected["ious"]] == list(range(frame - 2, frame + 3))
    assert selected["iou_object"] == "block"
    assert not before["passed"] and before["scene_verification"] == "FAILED"
    assert before["suggestions"][0][3] == "radius_scale" and before["suggestions"][0][2] == frame
    assert [e[:2] for e in before["edit_log"]] == [["radius_scale", "cup"]]

    # The suggested fix, applied from the panel in the background: verified, logged, shown.
    assert result["apply_invoke"] == ["RUNNING_MODAL"] and result["apply_started"][0] is True
    after = result["after"]
    assert after["passed"] and after["scene_verification"] == "PASSED"
    assert [e[0] for e in after["edit_log"]] == ["radius_scale", "radius_scale"]
    assert after["edit_log"][1][2] == {"factor": suggestion["fix"]["factor"]}
    assert {k[2] for k in after["keyframes"]} == {"PASSED"} and all(after["checks"].values())
    assert after["suggestions"] == [] and len(after["cup_edits"]) == 2
    assert after["cup_params"]["inner_radius"] > broken_cup["inner_radius"]
    if before["cup_object_width"] is not None:  # the reconstruction follows the fix
        assert after["cup_object_width"] > before["cup_object_width"]

    # Blender's undo takes report.json back with the scene, and redo forward again.
    undo, redo = result["blender_undo"], result["blender_redo"]
    assert len(undo["edit_log"]) == 1 and undo["cup_params"] == broken_cup and not undo["passed"]
    assert undo["scene_verification"] == "FAILED" and undo["scene_edit_count"] == 1
    assert len(redo["edit_log"]) == 2 and redo["cup_params"] == after["cup_params"] and redo["passed"]
    assert redo["scene_verification"] == "PASSED"

    # Undo Fix: the broken rim again, in report.json and in the scene.
    assert result["undo_invoke"] == ["RUNNING_MODAL"]
    undone = result["undone"]
    assert undone["cup_params"] == broken_cup and not undone["passed"]
    assert undone["scene_verification"] == "FAILED" and len(undone["edit_log"]) == 1
    assert undone["suggestions"] and undone["cup_edits"] == before["cup_edits"]

    # CoACD ran in the background: the session's own timer kept firing, the panel showed progress.
    assert result["coacd_invoke"] == ["RUNNING_MODAL"]
    assert result["coacd_ticks"] > result["coacd_seconds"] and "CoACD on cup" in result["coacd_running_text"]
    coacd = result["coacd"]
    assert coacd["collision_mode"] == "coacd" and coacd["pieces"] > 4
    assert coacd["probe"]["passed"] and "reaches the bottom" in coacd["probe_text"]
    assert coacd["edit_log"][-1][:2] == ["collision", "cup"]

    for name, shot in (("fix_before", result["before_shot"]), ("fix_after", result["after_shot"])):
        _crop_area(shot, result, DOC_IMAGES / f"{name}.png")
