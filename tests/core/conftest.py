"""Fixtures of the core tier (plain Python, no bpy)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from demo_factory import make_demo

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A small valid demo folder (movie file) in a temporary folder."""
    return make_demo(tmp_path / "demo")


@pytest.fixture
def tiny_demo(tmp_path: Path) -> Path:
    """A copy of the checked-in tiny demo (tests/data/tiny_demo)."""
    return Path(shutil.copytree(DATA / "tiny_demo", tmp_path / "tiny_demo"))
