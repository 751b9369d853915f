"""A pour, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_pour_demo.py films a short pour (72 frames at 10 fps, 320x240: a cup of 30 spheres taken from the
side, tipped over a bowl and set back) with the robot's recording; the command line runs it on its true
masks and it verifies; open_run_session.py opens the run in Blender half a second after the pour starts and
takes the user guide's screenshot of it: the tipped cup, the simulated spheres falling into the bowl, the
Real2Gym tab's verdict.
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

pytestmark = [pytest.mark.gui]
GENERATOR = REPO / "tools" / "make_pour_demo.py"
DEMO = ["--size", "320x240", "--frames", "72", "--fps", "10", "--seed", "1", "--with-trajectory",
        "--with-world-from-camera", "--given-masks"]  # fmt: skip


def test_a_pour_in_the_gui(tmp_path: Path) -> None:
    import cv2

    demo, out, result_file = tmp_path / "demo", tmp_path / "out", tmp_path / "result.json"
    made = subprocess.run([sys.executable, str(GENERATOR), "--out", str(demo), *DEMO], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    command = REPO / ".venv" / "bin" / "real2gym"
    prefix = [str(command)] if command.is_file() else [sys.executable, "-m", "real2gym_addon"]
    ran = subprocess.run([*prefix, "run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]  # it verifies
    OUTPUT.mkdir(parents=True, exist_ok=True)
    shot = OUTPUT / "pour.png"
    shot.unlink(missing_ok=True)
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    arguments = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("open_run_session.py")), "--",
        str(_extension_zip()), str(out), str(result_file), str(shot), "pour_start", "5",
    ]  # fmt: skip
    log = run_blender(arguments, env)
    (OUTPUT / "pour_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log, log[-3000:]
    assert result["open"] == ["FINISHED"]
    spheres = {f"cup contents {i:03d} sim" for i in range(30)}
    assert {"cup", "bowl", "cup sim", "bowl sim", "Real2Gym Camera"} | spheres <= set(result["objects"])
    assert {"cup", "cup sim"} | spheres <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp cup", "pour_start cup", "pour_end cup", "release cup"} <= set(markers)
    assert result["frame"] == markers["pour_start cup"] + 5
    assert result["review"]["verification"] == "PASSED"

    image = cv2.imread(str(shot))
    screen_w, screen_h = result["screen"]
    assert image.shape[:2] == (screen_h, screen_w)
    x, y, w, h = result["view"]
    view = image[screen_h - (y + h) : screen_h - y, x : x + w]
    assert view.std() > 10, "the 3D view is blank"
    cv2.imwrite(str(doc_images_dir() / "pour.png"), image)
