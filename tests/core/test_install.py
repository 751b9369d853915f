"""`pip install .`: the wheel holds every module, and a fresh venv with it alone runs the demo.

The development venv installs the project in editable mode, which maps the source folder and so hides a
package missing from pyproject.toml; only a real wheel in a fresh venv shows what users get.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_every_folder_of_modules_is_a_listed_package() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    for top in ("real2gym_addon", "state", "bridge", "operators", "panels"):
        for folder in [REPO / top, *(p for p in (REPO / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in folder.parts or not any(folder.glob("*.py")):
                continue
            package = ".".join(["real2gym", *folder.relative_to(REPO).parts])
            assert package in listed, (
                f"{folder.relative_to(REPO)} has modules but {package} is not in pyproject.toml"
            )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), str(REPO)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return next(folder.glob("real2gym-*.whl"))


def test_the_wheel_holds_the_core_modules(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in ("real2gym_addon/cli.py", "real2gym_addon/geometry/table.py", "real2gym_addon/mjcf/export.py",
                   "real2gym_addon/verify/checks.py", "real2gym_addon/segmentation/run.py", "bridge/pipeline.py",
                   "bridge/command.py", "state/properties.py"):  # fmt: skip
        assert f"real2gym/{module}" in names
    assert not any(n.startswith(("real2gym/tests/", "real2gym/examples/")) for n in names)


def test_a_fresh_venv_with_the_wheel_runs_the_demo_without_torch(wheel: Path, tmp_path: Path) -> None:
    """The runtime install: no torch, no bpy (so no scene.blend, with a note), the demo verified."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    probe = "import importlib.util as u; print(u.find_spec('torch') is None, u.find_spec('bpy') is None)"
    assert subprocess.run([str(python), "-c", probe], capture_output=True, text=True).stdout.split() == [
        "True",
        "True",
    ]
    out = tmp_path / "out"
    run = subprocess.run(
        [str(venv / "bin" / "real2gym"), "run", str(REPO / "examples" / "block_in_cup"), "--out", str(out), "-q",
         "--json"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["verdict"] == "verified" and "blend" not in result["paths"]
    assert "bpy module is not installed" in run.stderr
    assert (out / "mjcf" / "scene.xml").is_file()
