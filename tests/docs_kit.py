"""What the tests of generated docs share: tools/gen_docs.py, loaded as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def gen_docs():
    """``tools/gen_docs.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
