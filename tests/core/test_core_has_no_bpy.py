"""The core (real2gym_addon) must work without Blender: it never imports bpy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "real2gym_addon"
BLENDER_MODULES = {"bpy", "bpy_extras", "mathutils", "bmesh", "gpu", "blf", "aud", "bl_math"}


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            names.update(a.value.split(".")[0] for a in node.args if isinstance(a, ast.Constant))
    return names


def test_no_core_module_imports_blender() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(_imported_modules(path) & BLENDER_MODULES)
        for path in CORE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_core_imports_with_blender_modules_blocked() -> None:
    code = (
        "import sys, pkgutil, importlib\n"
        f"for name in {sorted(BLENDER_MODULES)!r}: sys.modules[name] = None\n"
        "import real2gym.real2gym_addon as core\n"
        "for info in pkgutil.iter_modules(core.__path__):\n"
        "    if info.name != '__main__': importlib.import_module('real2gym.real2gym_addon.' + info.name)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
