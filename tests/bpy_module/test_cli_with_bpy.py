"""The real2gym command line with the PyPI bpy module: it writes scene.blend too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bpy

REPO = Path(__file__).resolve().parents[2]


def test_cli_writes_a_blend_that_matches_the_operator(tmp_path: Path) -> None:
    demo = REPO / "examples" / "block_in_cup"
    out = tmp_path / "out"
    result = subprocess.run(
        [str(Path(sys.executable).with_name("real2gym")), "run", str(demo), "--out", str(out), "-q"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"blend:  {out / 'scene.blend'}" in result.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["artifacts"]["blend"] == "scene.blend" and report["verification"]["passed"]

    from real2gym import state

    state.ensure_registered()  # as the enabled add-on would
    bpy.ops.wm.open_mainfile(filepath=str(out / "scene.blend"))
    scene = bpy.context.scene
    assert scene.camera.name == "Real2Gym Camera"
    assert (scene.frame_start, scene.frame_end) == (0, 149)
    assert scene.camera.data.background_images[0].clip.frame_duration == 150
    assert scene.real2gym.out_dir == str(out)


def test_a_full_disk_while_saving_the_blend_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """Blender's save fails with "No such file or directory" on a full disk; the user reads what it is.

    The output folder is on a 2 MB tmpfs (in a private mount namespace): the masks and
    mjcf/ fit, scene.blend does not.
    """
    disk = tmp_path / "disk"
    disk.mkdir()
    demo = REPO / "examples" / "block_in_cup"
    command = Path(sys.executable).with_name("real2gym")
    script = f"mount -t tmpfs -o size=2000k tmpfs {disk} && {command} run {demo} --out {disk}/out -q; echo rc=$?; ls -A {disk}"
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300
    )
    assert result.stdout.strip() == "rc=2", (
        result.stdout + result.stderr
    )  # nothing else printed, nothing left
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("real2gym: error: no space left on device: cannot save scene.blend"), lines[0]
