"""The Real2Gym panel in the real Blender GUI (Debian's 4.3.2 under Xvfb)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output" / "gui"

pytestmark = pytest.mark.gui


def _extension_zip() -> Path:
    given = os.environ.get("REAL2GYM_EXTENSION_ZIP")
    if given:
        return Path(given)
    found = sorted((REPO / "dist").glob("real2gym-*-linux_x64.zip"))
    assert found, "no built extension zip in dist/"
    return found[-1]


def run_blender(args: list[str], env: dict, timeout: float = 300) -> str:
    """Runs tools/blender; kills the whole process group (Xvfb too) on time-out.

    Returns:
        stdout and stderr together.
    """
    process = subprocess.Popen(
        [str(REPO / "tools" / "blender"), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(f"Blender did not finish in {timeout} s:\n{output[-3000:]}") from None
    assert process.returncode == 0, f"Blender exited with {process.returncode}:\n{output[-3000:]}"
    return output


def test_panel_draws_in_the_sidebar(tmp_path: Path) -> None:
    import cv2

    OUTPUT.mkdir(parents=True, exist_ok=True)
    shot = OUTPUT / "real2gym_panel.png"
    shot.unlink(missing_ok=True)
    result_file = tmp_path / "result.json"
    demo = REPO / "examples" / "block_in_cup"
    if not demo.is_dir():
        demo = REPO / "tests" / "data" / "tiny_demo"
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("gui_session.py")), "--",
        str(_extension_zip()), str(demo), str(tmp_path / "out"), str(result_file), str(shot),
    ]  # fmt: skip
    log = run_blender(command, env)
    (OUTPUT / "blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]
    # The click ran the pipeline in a worker thread and finished it on the main thread.
    assert result["invoke"] == ["RUNNING_MODAL"]
    assert result["status"].startswith("Loaded") and result["camera"] == "Real2Gym Camera"
    assert (tmp_path / "out" / "report.json").is_file() and (tmp_path / "out" / "scene.blend").is_file()
    # The sidebar shows the Real2Gym tab, and it is drawn (not an empty region).
    assert result["category"] == "Real2Gym"
    image = cv2.imread(str(shot))
    screen_w, screen_h = result["screen"]
    x, y, w, h = result["sidebar"]
    assert image.shape[:2] == (screen_h, screen_w)
    sidebar = image[screen_h - (y + h) : screen_h - y, x : x + w]
    assert sidebar.std() > 10, "the sidebar region is blank"
    # Text and buttons: many distinct grey levels across the panel rows.
    assert len(np.unique(sidebar.reshape(-1, 3), axis=0)) > 50


def test_open_run_builds_a_command_line_run_in_the_gui(tmp_path: Path) -> None:
    """A run made by the command line (bpy 4.2 module) opens in Blender 4.3's GUI from its folder alone."""
    import shutil
    import subprocess
    import sys
    import tempfile

    import cv2

    # A short, neutral output path: the screenshot is the user guide's and the README's picture.
    neutral = Path(tempfile.mkdtemp(prefix="real2gym-"))
    out = neutral / "block_in_cup"
    run = subprocess.run(
        [sys.executable, "-m", "real2gym_addon", "run", str(REPO / "examples" / "block_in_cup"), "--out", str(out),
         "-q", "--no-blend"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    OUTPUT.mkdir(parents=True, exist_ok=True)
    shot = OUTPUT / "open_run.png"
    shot.unlink(missing_ok=True)
    result_file = tmp_path / "result.json"
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    command = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("open_run_session.py")), "--",
        str(_extension_zip()), str(out), str(result_file), str(shot),
    ]  # fmt: skip
    try:
        log = run_blender(command, env)
    finally:
        shutil.rmtree(neutral, ignore_errors=True)
    (OUTPUT / "open_run.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log, log[-3000:]
    assert result["open"] == ["FINISHED"]
    assert {"block", "cup", "block sim", "cup sim", "Real2Gym Camera", "Real2Gym Table"} <= set(
        result["objects"]
    )
    assert {"block", "cup", "block sim", "cup sim"} <= set(result["actions"])
    assert result["camera"] == "Real2Gym Camera" and result["frame_end"] == 149
    assert {name for name, _ in result["markers"]} >= {"grasp block", "lift block", "release block"}
    assert Path(result["review"]["report_dir"]) == out.resolve() and result["review"]["keyframes"] >= 3
    assert result["review"]["verification"] == "PASSED"
    image = cv2.imread(str(shot))
    screen_w, screen_h = result["screen"]
    x, y, w, h = result["view"]
    view = image[screen_h - (y + h) : screen_h - y, x : x + w]
    assert view.std() > 10, "the 3D view is blank"
    from doc_images import doc_images_dir

    cv2.imwrite(
        str(doc_images_dir() / "open_run.png"), cv2.resize(image, (1200, 750), interpolation=cv2.INTER_AREA)
    )
