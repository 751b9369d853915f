"""Fixtures of the core tier (plain Python, no bpy)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
