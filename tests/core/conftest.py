"""Fixtures of the core tier (plain Python, no bpy)."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest
from articulated_demos import make_cabinet_demo

from demo_factory import make_demo

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A small valid demo folder (movie file) in a temporary folder."""
    return make_demo(tmp_path / "demo")


@pytest.fixture
def tiny_demo(tmp_path: Path) -> Path:
    """A copy of the checked-in tiny demo (tests/data/tiny_demo)."""
    return Path(shutil.copytree(DATA / "tiny_demo", tmp_path / "tiny_demo"))


@pytest.fixture(scope="session")
def verified_demo_run(tmp_path_factory) -> Path:
    """The bundled demo run once per session, verified; tests read it, or copy it before changing it."""
    from real2gym.real2gym_addon.cli import main

    out = tmp_path_factory.mktemp("demo_run") / "out"
    assert main(["run", str(DEMO), "--out", str(out), "--no-blend", "-q"]) == 0
    return out


@pytest.fixture(scope="session")
def cabinet_run(tmp_path_factory) -> Path:
    """A generated cabinet whose door is swung open by its handle, the robot's hand recorded
    (tests/articulated_demos.py: 75 frames at 15 fps, its joint estimated), run once per session
    (about 25 s) and verified; tests read it, or copy it before changing it."""
    from real2gym.real2gym_addon.cli import main

    root = tmp_path_factory.mktemp("cabinet")
    demo, out = make_cabinet_demo(root / "demo"), root / "out"
    assert main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"]) == 0
    return out


@pytest.fixture(scope="session")
def recording():
    """tools/_recording.py, which writes one gripper motion in each of trajectory.json's forms."""
    tools = str(Path(__file__).resolve().parents[2] / "tools")
    sys.path.insert(0, tools)
    try:
        return importlib.import_module("_recording")
    finally:
        sys.path.remove(tools)
