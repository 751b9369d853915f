"""The real Blender binary in batch mode: ``blender -b --python-expr``, as users script it."""

from __future__ import annotations

import json
import os
import subprocess
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
