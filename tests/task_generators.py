"""Running the task generators (tools/make_<task>_demo.py) in tests: small settings, a run in its own process,
and the checks every generator that writes only its own folders must pass.

A generator runs apart (``subprocess``): the tools' modules import the add-on under its own name, and MuJoCo's
OpenGL context is the process's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 160, 120  # pixels of a small demo


def small_options(frames: int) -> list[str]:
    """A small demo's options: ``WIDTH`` x ``HEIGHT`` pixels, ``frames`` frames at 10 fps, seed 1."""
    return ["--size", f"{WIDTH}x{HEIGHT}", "--frames", str(frames), "--fps", "10", "--seed", "1"]


def run_generator(tool: str, out: Path, small: list[str], *args: str) -> subprocess.CompletedProcess:
    """Run ``tools/<tool>`` on ``out`` with the options ``small`` and then ``args`` (later ones win).

    Returns:
        The finished process, its output captured as text; MUJOCO_GL defaults to egl.
    """
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / tool), "--out", str(out), *small, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )


def assert_refused(result: subprocess.CompletedProcess, message: str, out: Path) -> None:
    """The run exited 2 for options it cannot film, saying ``message``, and wrote no ``out``."""
    assert result.returncode == 2 and message in result.stderr
    assert not out.exists()


def assert_foreign_folder_left_alone(
    tool: str, demo: Path, other_tool: str, small: list[str], root: Path
) -> None:
    """A folder made by ``other_tool`` (a copy of ``demo``'s truth.json saying so, beside a user's depth and
    prompts) under the empty folder ``root`` is refused by ``tool``: exit 2, every file as it was, no staging
    folder left behind."""
    mine = root / "mine"
    (mine / "depth").mkdir(parents=True)
    (mine / "depth" / "000000.png").write_bytes(b"my depth")
    (mine / "prompts.json").write_text('{"objects": []}')
    truth = json.loads((demo / "truth.json").read_text())
    truth["generator"]["tool"] = f"tools/{other_tool}"
    (mine / "truth.json").write_text(json.dumps(truth))
    before = {p: p.read_bytes() for p in mine.rglob("*") if p.is_file()}
    result = run_generator(tool, mine, small)
    assert result.returncode == 2 and "did not make" in result.stderr
    assert {p: p.read_bytes() for p in mine.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in root.iterdir()) == ["mine"]  # no staging folder left behind


def assert_contract_files(demo: Path, frames: int, masked: tuple[str, ...] = ()) -> None:
    """A small demo made with ``--with-trajectory --with-world-from-camera`` (and ``--given-masks`` where
    ``masked`` names its objects) has the data contract's files: the video, one depth PNG per frame (and one
    mask PNG per frame and object), a ``WIDTH`` x ``HEIGHT`` camera with its pose, one gripper sample per
    frame."""
    for name in ("video.mp4", "camera.json", "prompts.json", "trajectory.json", "truth.json", "README.md"):
        assert (demo / name).is_file(), name
    assert len(list((demo / "depth").glob("*.png"))) == frames
    for name in masked:
        assert len(list((demo / "masks" / name).glob("*.png"))) == frames
    camera = json.loads((demo / "camera.json").read_text())
    assert (camera["width"], camera["height"]) == (WIDTH, HEIGHT) and len(camera["world_from_camera"]) == 4
    samples = json.loads((demo / "trajectory.json").read_text())["samples"]
    assert len(samples) == frames and all(len(s["quaternion"]) == 4 for s in samples)
