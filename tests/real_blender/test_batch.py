"""The real Blender binary in batch mode: ``blender -b --python-expr``, as users script it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_gui import REPO, _extension_zip, run_blender


def test_blender_b_python_expr_runs_the_pipeline(tmp_path: Path) -> None:
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    install = (
        "import bpy; "
        f"bpy.ops.extensions.package_install_files(filepath={str(_extension_zip())!r}, repo='user_default', "
        "enable_on_install=True); bpy.ops.wm.save_userpref()"
    )
    run_blender(["-b", "--python-exit-code", "2", "--python-expr", install], env)
    demo, out = REPO / "tests" / "data" / "tiny_demo", tmp_path / "out"
    expr = (
        f"import bpy; bpy.ops.real2gym.run_pipeline(demo_dir={str(demo)!r}, out_dir={str(out)!r}, "
        "last_stage='segment')"
    )
    log = run_blender(["-b", "--python-exit-code", "2", "--python-expr", expr], env)
    assert "Real2Gym: wrote" in log
    report = json.loads((out / "report.json").read_text())
    assert report["video"]["frames"] == 12 and report["artifacts"]["blend"] == "scene.blend"

    bad = f"import bpy; bpy.ops.real2gym.run_pipeline(demo_dir={str(tmp_path / 'missing')!r}, out_dir={str(out)!r})"
    failed = subprocess.run(
        [str(REPO / "tools" / "blender"), "-b", "--python-exit-code", "2", "--python-expr", bad],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert failed.returncode == 2
    assert "demo folder not found" in failed.stdout + failed.stderr


def test_the_command_lines_scene_blend_opens_in_blender_4_3(tmp_path: Path) -> None:
    """The PyPI bpy module the command line writes with (4.2 LTS) writes files every Blender from 4.2 on
    reads; Blender 5's new header is refused by 4.x ("incomplete header, may be from a newer version")."""
    out = tmp_path / "out"
    run = subprocess.run(
        [str(Path(sys.executable).with_name("real2gym")), "run", str(REPO / "examples" / "block_in_cup"), "--out",
         str(out), "-q"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    log = run_blender(["-b", str(out / "scene.blend"), "--python", str(Path(__file__).with_name("inspect_blend.py"))],
                      dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user")))  # fmt: skip
    line = next(line for line in log.splitlines() if line.startswith("R2G-JSON "))
    info = json.loads(line[len("R2G-JSON ") :])
    assert info["version"].startswith("4.3") and tuple(info["file_version"][:2]) <= (4, 3)
    objects = info["objects"]
    for name in ("block", "cup"):
        assert objects[name]["action"] and objects[name]["keys"] == 150, objects[name]
        assert objects[name]["source"] == name
        assert objects[f"{name} sim"]["keys"] == 150 and "real2gym_error_m" in objects[f"{name} sim"]["props"]
    assert any(o["parent"] == "cup" and o["type"] == "MESH" for o in objects.values())  # its collision pieces
    assert info["scene"]["camera"] == "Real2Gym Camera" and info["scene"]["frame_end"] == 149
    assert {"grasp block", "lift block", "release block"} <= set(info["scene"]["markers"])
    assert Path(info["scene"]["out_dir"]).resolve() == out.resolve()
