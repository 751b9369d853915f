"""The layers (docs/architecture.md): the core (real2gym_addon) never imports bpy nor refers to the
Blender side; panels read state and never import the bridge."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "real2gym_addon"
BLENDER_SIDE = {"bridge", "operators", "panels", "state"}
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


def _resolved_imports(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, relative imports resolved against its package (dotted from the repo)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(p for p in [*parts, node.module or ""] if p)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            names.update(
                a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
    return names


def _package(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts if path.name == "__init__.py" and parts.pop() else parts[:-1])


def test_the_core_never_refers_to_the_blender_side() -> None:
    """No module under real2gym_addon/ imports bridge, operators, panels or state (absolute, relative leaving
    the package, or by import_module), and none climbs out of the package with a relative import."""
    offenders = {}
    for path in CORE.rglob("*.py"):
        imports = _resolved_imports(path, _package(path))
        bad = {n for n in imports if set(n.split(".")) & BLENDER_SIDE}
        relative_out = [
            node.level
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.level > len(path.relative_to(CORE).parts)
        ]
        if bad or relative_out:
            offenders[str(path.relative_to(REPO))] = sorted(bad) + [
                f"relative import of level {n}" for n in relative_out
            ]
    assert offenders == {}


def test_the_guard_catches_a_relative_import_out_of_the_core(tmp_path: Path) -> None:
    """The check above is not vacuous: the import the command line used to make is caught."""
    module = tmp_path / "probe.py"
    module.write_text("from ..bridge.pipeline import stage_headless_blend\n")
    assert "bridge" in {p for n in _resolved_imports(module, "real2gym_addon") for p in n.split(".")}
    assert ast.parse(module.read_text()).body[0].level > len(Path("cli.py").parts)


def test_panels_import_no_bridge_module() -> None:
    offenders = {}
    for path in (REPO / "panels").rglob("*.py"):
        bad = {n for n in _resolved_imports(path, _package(path)) if n.split(".")[0] == "bridge"}
        if bad:
            offenders[path.name] = sorted(bad)
    assert offenders == {}
