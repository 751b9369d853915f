"""tools/build_extension.py builds an installable extension zip with its wheels.

Builds the linux-x64 zip of this repository for Python 3.11 and 3.13. The first
run downloads the wheels into wheels/ (a minute); later runs reuse them.
"""

import importlib.util
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "build_extension.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("build_extension", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_extension = _load_tool()


def _run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=900, cwd=REPO
    )


@pytest.fixture(scope="module")
def linux_zip(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    try:
        build_extension.find_blender_ext(None)
    except build_extension.BuildError as error:
        pytest.skip(str(error))
    out = tmp_path_factory.mktemp("dist")
    completed = _run_tool("--platforms", "linux-x64", "--python", "3.11,3.13", "--out", str(out))
    assert completed.returncode == 0, completed.stderr
    zips = list(out.glob("real2gym-*-linux_x64.zip"))
    assert len(zips) == 1, f"expected one linux-x64 zip in {out}, found {zips}"
    assert str(zips[0]) in completed.stdout, "the zip and its size are printed"
    with zipfile.ZipFile(zips[0]) as archive:
        yield archive


def test_zip_has_a_manifest_listing_its_wheels(linux_zip: zipfile.ZipFile) -> None:
    manifest = tomllib.loads(linux_zip.read("blender_manifest.toml").decode("utf-8"))
    assert manifest["id"] == "real2gym"
    assert manifest["wheels"], "the manifest lists the wheels"
    names = set(linux_zip.namelist())
    for wheel in manifest["build"]["generated"]["wheels"]:
        assert wheel.removeprefix("./") in names, f"{wheel} is listed but not in the zip"


def test_zip_carries_mujoco_for_both_pythons_and_no_numpy(linux_zip: zipfile.ZipFile) -> None:
    wheels = [n.removeprefix("wheels/") for n in linux_zip.namelist() if n.startswith("wheels/")]
    for python in ("cp311", "cp313"):
        assert any(w.startswith("mujoco_core-") and f"-{python}-" in w for w in wheels), python
        assert any(w.startswith("scipy-") and f"-{python}-" in w for w in wheels), python
    for package in ("mujoco-", "trimesh-", "opencv_python_headless-", "coacd-", "pyopengl-"):
        assert any(w.startswith(package) for w in wheels), package
    assert not [w for w in wheels if w.lower().startswith("numpy-")], "Blender ships numpy"
    assert all("manylinux" in w or w.endswith("-any.whl") for w in wheels), "only Linux wheels"


def test_zip_holds_the_add_on_and_no_development_files(linux_zip: zipfile.ZipFile) -> None:
    names = linux_zip.namelist()
    assert "__init__.py" in names
    assert any(n.startswith("real2gym_addon/") for n in names)
    for folder in ("tests/", "tools/", ".venv/", "examples/", "build/", ".git/"):
        assert not [n for n in names if n.startswith(folder)], f"{folder} must not be shipped"
    assert not [n for n in names if "__pycache__" in n]


def test_offline_build_reuses_the_wheel_cache(linux_zip: zipfile.ZipFile, tmp_path: Path) -> None:
    completed = _run_tool("--platforms", "linux-x64", "--offline", "--out", str(tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert list(tmp_path.glob("real2gym-*-linux_x64.zip"))


def test_unknown_platform_is_one_line_and_exit_2() -> None:
    completed = _run_tool("--platforms", "amiga-68k", "--offline")
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and "amiga-68k" in completed.stderr


def test_staging_manifest_fills_wheels_and_platforms_only() -> None:
    text = '# keep\nid = "real2gym"\nwheels = []\n\n[build]\npaths_exclude_pattern = ["/tests/"]\n'
    result = build_extension.staging_manifest(text, ["b-1-py3-none-any.whl"], ["linux-x64"])
    parsed = tomllib.loads(result)
    assert parsed["wheels"] == ["./wheels/b-1-py3-none-any.whl"]
    assert parsed["platforms"] == ["linux-x64"]
    assert parsed["build"] == {"paths_exclude_pattern": ["/tests/"]}
    assert result.startswith("# keep\nid = ")
