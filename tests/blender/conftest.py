"""Fixtures of the Blender tiers: the PyPI bpy module and the real Blender binary.

The same tests run in both. The extension is installed from the *built zip*
(``dist/real2gym-*-linux_x64.zip``, or ``REAL2GYM_EXTENSION_ZIP``) the way a
user installs it, into the user resources folder that the test runner points
``BLENDER_USER_RESOURCES`` at (a throw-away folder), and every test starts from
an empty scene. Standard library and bpy only: nothing else is importable in
Blender's Python until the extension's wheels are installed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import bpy
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
MODULE = "bl_ext.user_default.real2gym"


def extension_zip() -> Path:
    """Returns the built extension zip for this machine's platform."""
    given = os.environ.get("REAL2GYM_EXTENSION_ZIP")
    if given:
        return Path(given)
    found = sorted((REPO / "dist").glob("real2gym-*-linux_x64.zip"))
    if not found:
        pytest.exit("no built extension zip in dist/: run tools/build_extension.py --platforms linux-x64", 2)
    return found[-1]


@pytest.fixture(scope="session", autouse=True)
def extension():
    """Installs and enables the extension from its zip once per session; returns its module."""
    if MODULE not in bpy.context.preferences.addons:
        zip_path = extension_zip()
        result = bpy.ops.extensions.package_install_files(
            filepath=str(zip_path), repo="user_default", enable_on_install=True
        )
        assert result == {"FINISHED"}, f"installing {zip_path} failed: {result}"
    assert MODULE in bpy.context.preferences.addons, "the extension did not enable"
    return sys.modules[MODULE]


@pytest.fixture(autouse=True)
def empty_scene(extension):
    """Starts every test from Blender's factory scene, emptied, with the extension enabled."""
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    yield bpy.context.scene


@pytest.fixture
def tiny_demo(tmp_path: Path) -> Path:
    """A copy of the checked-in tiny demo (12 frames, 96x72, 24 fps)."""
    return Path(shutil.copytree(DATA / "tiny_demo", tmp_path / "tiny_demo"))


@pytest.fixture(scope="session")
def verified_demo_run(extension, tmp_path_factory) -> Path:
    """The bundled demo run once per session by the installed extension's core, verified.

    Tests read it, or copy it before changing it.
    """
    import importlib

    main = importlib.import_module(f"{MODULE}.real2gym_addon.cli").main
    out = tmp_path_factory.mktemp("demo_run") / "out"
    assert main(["run", str(REPO / "examples" / "block_in_cup"), "--out", str(out), "--no-blend", "-q"]) == 0
    return out
