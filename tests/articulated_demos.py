"""A small articulated demo for the Blender tests: a microwave whose door's hinge is given.

Made by tools/make_articulated_demo.py (90 frames at 15 fps, 320x240), with the door's true hinge
(truth.json) written into prompts.json as a given joint: the tests are about Blender's side of moving
parts, and do not hang on the joint estimator. Standard library only: this also loads inside Blender.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "tools" / "make_articulated_demo.py"
MICROWAVE = ["--scene", "microwave", "--seed", "2", "--frames", "90", "--fps", "15", "--with-trajectory",
             "--with-world-from-camera", "--given-masks"]  # fmt: skip
"""The demo's options (the microwave's script needs at least 6 s of video)."""
CABINET = ["--scene", "cabinet", "--seed", "1", "--frames", "75", "--fps", "15", "--with-trajectory",
           "--with-world-from-camera", "--given-masks"]  # fmt: skip
"""A cabinet whose door is swung open by its handle (its script needs at least 4 s of video)."""


def generator_command() -> tuple[list[str], dict]:
    """How to run the generator here: the repository's venv where it is reachable, else this Python
    (real Blender's, in its Debian root, where the venv's interpreter is not) with the extension's
    packages (MuJoCo, OpenCV) on its path."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    venv = REPO / ".venv" / "bin" / "python"
    if venv.is_file():
        return [str(venv), str(GENERATOR)], env
    return [sys.executable, str(GENERATOR)], {**env, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def give_the_true_joint(demo: Path) -> dict:
    """Writes the part's true joint (truth.json's ``joints``) into prompts.json as a given joint; returns it."""
    truth = json.loads((demo / "truth.json").read_text())["joints"][0]
    prompts = json.loads((demo / "prompts.json").read_text())
    body = next(o for o in prompts["objects"] if o["name"] == truth["object"])
    part = next(p for p in body["parts"] if p["name"] == truth["part"])
    part["joint"] = {"type": truth["type"], "axis": truth["axis_world"], "pivot": truth["pivot_world"],
                     "range": truth["limits"], "closed": truth["closed_q"]}  # fmt: skip
    (demo / "prompts.json").write_text(json.dumps(prompts, indent=1))
    return truth


def _generate(options: list[str], demo: Path) -> None:
    command, env = generator_command()
    made = subprocess.run([*command, *options, "--out", str(demo)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]


def make_microwave_demo(demo: Path) -> Path:
    """Writes the microwave demo into ``demo`` (about 15 s); returns it.

    Raises:
        AssertionError: The generator failed (its output's tail in the message).
    """
    _generate(MICROWAVE, demo)
    give_the_true_joint(demo)
    return demo


def make_cabinet_demo(demo: Path) -> Path:
    """Writes the cabinet demo into ``demo`` (about 15 s; its joint left to the estimator); returns it.

    Raises:
        AssertionError: The generator failed (its output's tail in the message).
    """
    _generate(CABINET, demo)
    return demo
