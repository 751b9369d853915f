"""Shared test settings. Standard library only: this file also loads inside Blender."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
