"""Shapes and tasks are tables used everywhere (issue 27): no module outside a kind's or a task's own
entry decides on a shape kind or a task type by its name.

Every module of the add-on (the core and the Blender side) is parsed; a string literal that names a
shape kind or a task type fails the test where the code decides by it: compared with something
(``kind == "cup"``, ``hint in ("cup", "mug")``), used as the kind of a new ``Shape(...)``, or a key
of a dict keyed by kind. The kind's own module under ``geometry/kinds/`` (and the table modules)
may name it. Docstrings, messages and JSON keys that happen to spell a kind (a prompt's ``"box"``,
MJCF's ``<mesh>``) do not decide anything and are not flagged.
"""

from __future__ import annotations

import ast
from pathlib import Path

from real2gym.real2gym_addon.geometry.pieces import GEOM_BOX, GEOM_CYLINDER
from real2gym.real2gym_addon.geometry.shape_kinds import AUTO, SHAPE_KINDS
from real2gym.real2gym_addon.tasks import TASKS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("real2gym_addon", "state", "bridge", "operators", "panels")
SHAPE_HOMES = {"real2gym_addon/geometry/shape_kinds.py"}
"""Modules that may name any kind: the table. A kind's own module is ``geometry/kinds/<kind>.py``."""
TASK_HOME = "real2gym_addon/tasks/"
"""The task table's package: its entries name their types."""
GEOM_HOMES = {"real2gym_addon/geometry/pieces.py"}
"""Where MuJoCo's geom types (``box``, ``cylinder``: not shape kinds) are named."""


def _deciding_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, text)`` of the string literals that a decision rests on."""
    found = []

    def strings(node: ast.AST) -> list[ast.Constant]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return []

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            # ``"box" in entry`` asks for a key: the needle of a membership test decides nothing.
            membership = all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
            for side in node.comparators if membership else [node.left, *node.comparators]:
                found += [(c.lineno, c.value) for c in strings(side)]
        elif (
            isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Shape"
        ):
            if node.args:
                found += [(c.lineno, c.value) for c in strings(node.args[0])]
            found += [(k.value.lineno, k.value.value) for k in node.keywords if k.arg == "kind"
                      and isinstance(k.value, ast.Constant)]  # fmt: skip
        elif (
            isinstance(node, ast.Dict)
            and node.keys
            and all(isinstance(k, ast.Constant) and k.value in SHAPE_KINDS for k in node.keys)
        ):
            found += [(k.lineno, k.value) for k in node.keys]
    return found


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path))


def test_no_module_decides_by_a_shape_kinds_name_outside_its_entry() -> None:
    offences = []
    for relative, tree in _modules():
        if relative in SHAPE_HOMES:
            continue
        for line, text in _deciding_literals(tree):
            if text not in SHAPE_KINDS or text == AUTO.name:  # "auto" is every option's word (depth, device)
                continue
            if relative == f"real2gym_addon/geometry/kinds/{text}.py":
                continue
            if relative in GEOM_HOMES and text in (GEOM_BOX, GEOM_CYLINDER):
                continue
            offences.append(f"{relative}:{line}: {text!r}")
    assert not offences, "decided by a shape kind's name (use its entry in shape_kinds):\n" + "\n".join(
        offences
    )


def test_no_module_decides_by_a_task_types_name_outside_the_task_table() -> None:
    offences = []
    for relative, tree in _modules():
        if relative.startswith(TASK_HOME):
            continue
        offences += [
            f"{relative}:{line}: {text!r}" for line, text in _deciding_literals(tree) if text in TASKS
        ]
    assert not offences, "decided by a task type's name (use its entry in tasks.TASKS):\n" + "\n".join(
        offences
    )


def test_the_scan_finds_what_it_is_for() -> None:
    """The scan itself: a comparison, a Shape(...) and a kind-keyed dict are found; a docstring, a
    message and a JSON key are not."""
    code = '''
"""A cup."""
if kind == "cup" or hint in ("bowl", "mug"):
    shape = Shape("box", size)
table = {"plate": 1, "mesh": 2}
box = entry.get("box")
listed = "box" not in entry
message = f"the cup is {kind}"
'''
    assert sorted(text for _, text in _deciding_literals(ast.parse(code))) == [
        "bowl",
        "box",
        "cup",
        "mesh",
        "mug",
        "plate",
    ]
