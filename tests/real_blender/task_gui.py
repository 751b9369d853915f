"""A generated task demo, run on the command line and opened in the real Blender GUI for its screenshot.

The hang, pour and shelve GUI tests share this: a generator films a short demo with the robot's recording
and the true masks, the command line runs it and it verifies, open_run_session.py opens the run in Blender
at a keyframe (plus some frames) and takes the user guide's screenshot of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from doc_images import doc_images_dir
from test_gui import OUTPUT, REPO, _extension_zip, run_blender

FILMED = ["--frames", "72", "--fps", "10", "--seed", "1", "--with-trajectory", "--with-world-from-camera",
          "--given-masks"]  # fmt: skip
"""The generators' options every GUI task demo uses (with its own ``--size``)."""


def open_task_run(
    tmp_path: Path, generator: str, size: str, name: str, event: str, after: int, scroll: int = 0,
    extra: tuple[str, ...] = (),
) -> dict:  # fmt: skip
    """Films ``generator``'s demo at ``size``, runs it (it must verify) and opens it in Blender on ``after``
    frames past the task's ``event`` keyframe, the sidebar scrolled down by ``scroll`` turns of the mouse wheel (the
    generator given ``extra`` options besides :data:`FILMED`); the
    screenshot goes to the test output as ``name``.png and, once
    checked not blank, to the docs' images.

    Returns:
        open_run_session.py's result (objects, actions, markers, frame, review, screen, view).
    """
    import cv2

    demo, out, result_file = tmp_path / "demo", tmp_path / "out", tmp_path / "result.json"
    made = subprocess.run([sys.executable, str(REPO / "tools" / generator), "--out", str(demo), "--size", size, *FILMED, *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    command = REPO / ".venv" / "bin" / "real2gym"
    prefix = [str(command)] if command.is_file() else [sys.executable, "-m", "real2gym_addon"]
    ran = subprocess.run([*prefix, "run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]  # it verifies
    OUTPUT.mkdir(parents=True, exist_ok=True)
    shot = OUTPUT / f"{name}.png"
    shot.unlink(missing_ok=True)
    env = dict(os.environ, REAL2GYM_BLENDER_XVFB="1", BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    arguments = [
        "--factory-startup", "--enable-event-simulate",
        "--python", str(Path(__file__).with_name("open_run_session.py")), "--",
        str(_extension_zip()), str(out), str(result_file), str(shot), event, str(after), str(scroll),
    ]  # fmt: skip
    log = run_blender(arguments, env)
    (OUTPUT / f"{name}_blender.log").write_text(log)
    assert result_file.is_file(), f"Blender ended without a result:\n{log[-3000:]}"
    result = json.loads(result_file.read_text())
    assert result["errors"] == [], result["errors"]
    assert "Traceback" not in log, log[-3000:]
    assert result["open"] == ["FINISHED"]
    assert result["review"]["verification"] == "PASSED"
    image = cv2.imread(str(shot))
    screen_w, screen_h = result["screen"]
    assert image.shape[:2] == (screen_h, screen_w)
    x, y, w, h = result["view"]
    view = image[screen_h - (y + h) : screen_h - y, x : x + w]
    assert view.std() > 10, "the 3D view is blank"
    cv2.imwrite(str(doc_images_dir() / f"{name}.png"), image)
    return result
