"""The import graph of the add-on has no cycles, and no layer imports one above it (issue 27).

Every module of the core (``real2gym_addon/``) and of the Blender side (``state/``,
``bridge/``, ``operators/``, ``panels/``) is parsed, not imported, and each of its imports,
also those inside function bodies, becomes an edge. Imports under ``if TYPE_CHECKING:``
never run and are left out. ``from package import name`` is an edge to ``package.name``
when that is a module, else to ``package``; importing ``a.b.c`` from outside ``a.b``
also runs ``a.b``'s ``__init__``, so that is an edge too (the layer roots excepted: the
core's ``__init__`` is its public facade and imports its own modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("real2gym_addon", "state", "bridge", "operators", "panels")
LAYERS = {"real2gym_addon": 0, "state": 1, "bridge": 2, "operators": 3, "panels": 3}
"""A module may import its own layer and those below it (docs/architecture.md)."""
FORBIDDEN = {("panels", "bridge"), ("panels", "operators"), ("operators", "panels")}
"""Imports that the layer numbers allow but the architecture does not."""
FOUNDATION = {"errors", "about", "progress", "names", "json_files", "files", "report", "targets", "cli_args"}
"""The core's ground floor: these import nothing of the core but each other."""
FLOORS = [
    FOUNDATION,
    {"geometry.shapes", "geometry.shape_kinds", "geometry.kinds", "geometry.pieces", "geometry.contents", "tasks"},
    {"video", "video_out", "depth", "prompts", "prompts_file", "trajectory", "mesh_file", "demo", "truth",
     "models"},
    {"geometry", "segmentation", "mjcf", "verify", "fixes", "physics", "viewer", "run_options"},
    {"render"},
    {"scene", "summary", "pipeline", "reverify", "fixes.repair", "compare", "variants", "gym", "batch"},
    {"cli_variants", "cli", "__main__"},
]  # fmt: skip
"""The core's floors, from the ground up (docs/architecture.md): a module imports only its own floor and
those below. A module belongs to the floor of its longest listed prefix."""


def floor_of(module: str) -> int:
    """The floor of a core module (``real2gym_addon.geometry.fit`` -> that of ``geometry``)."""
    name = module.removeprefix("real2gym_addon.")
    parts = name.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        for number, floor in enumerate(FLOORS):
            if prefix in floor:
                return number
    raise AssertionError(f"{module} is on no floor: add it to FLOORS and docs/architecture.md")


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imported(module: str, path: Path, node: ast.AST, modules: dict[str, Path]) -> set[str]:
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            anchor = base[: len(base) - (node.level - 1)]
            target = ".".join(anchor + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        target = target.removeprefix("real2gym.")
        named = {f"{target}.{alias.name}" for alias in node.names} & modules.keys()
        found = named or ({target} & modules.keys())
    else:
        found = {alias.name.removeprefix("real2gym.") for alias in node.names} & modules.keys()
    runs = set(found)
    for name in found:  # importing a.b.c from outside a.b runs a.b's __init__ first
        parts = name.split(".")
        for depth in range(2, len(parts)):
            package = ".".join(parts[:depth])
            if package in modules and not module.startswith(package + ".") and module != package:
                runs.add(package)
    return runs - {module}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs (see the module's description)."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_lines(tree)
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno not in skipped:
                edges |= _imported(module, path, node, modules)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_cycle_through_a_function_body_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    modules = {"real2gym_addon.x": Path("x.py"), "real2gym_addon.y": Path("y.py")}
    inner = ast.parse("def f():\n    from .y import thing\n").body[0].body[0]
    assert _imported("real2gym_addon.x", Path("x.py"), inner, modules) == {"real2gym_addon.y"}


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_layer_imports_one_above_it() -> None:
    wrong = []
    for module, imports in import_graph().items():
        layer = module.split(".")[0]
        for other in imports:
            other_layer = other.split(".")[0]
            if LAYERS[other_layer] > LAYERS[layer] or (layer, other_layer) in FORBIDDEN:
                wrong.append(f"{module} -> {other}")
    assert not wrong, "imports against the layers: " + ", ".join(sorted(wrong))


def test_the_ground_floor_imports_only_the_ground_floor() -> None:
    graph = import_graph()
    wrong = []
    for module, imports in graph.items():
        if module.startswith("real2gym_addon.") and floor_of(module) == 0:
            wrong += [f"{module} -> {other}" for other in imports
                      if not other.startswith("real2gym_addon.") or floor_of(other) != 0]  # fmt: skip
    assert not wrong, ", ".join(sorted(wrong))


def test_no_core_module_imports_a_floor_above_its_own() -> None:
    wrong = []
    for module, imports in import_graph().items():
        if not module.startswith("real2gym_addon.") or module == "real2gym_addon":
            continue
        wrong += [f"{module} -> {other}" for other in imports
                  if other.startswith("real2gym_addon.") and floor_of(other) > floor_of(module)]  # fmt: skip
    assert not wrong, "imports against the floors: " + ", ".join(sorted(wrong))
