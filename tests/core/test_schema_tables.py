"""The JSON Schemas in docs/schemas/ name the shape kinds and task types of the code's tables (issue 27):
adding an entry to a table without its schema enum fails here."""

from __future__ import annotations

import json
from pathlib import Path

from real2gym.real2gym_addon.geometry.shape_kinds import (
    PROMPT_SHAPES,
    REPORT_SHAPES,
    SHAPE_KINDS,
    is_container,
)
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.tasks import TASKS

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _enums_named(data, key: str) -> list[list]:
    """Every ``enum`` under a property called ``key``, anywhere in a schema."""
    found = []
    if isinstance(data, dict):
        for name, value in data.items():
            if name == key and isinstance(value, dict) and "enum" in value:
                found.append(value["enum"])
            found += _enums_named(value, key)
    elif isinstance(data, list):
        for value in data:
            found += _enums_named(value, key)
    return found


def test_the_schemas_shape_enums_are_the_shape_table() -> None:
    assert _enums_named(_schema("prompts.schema.json"), "shape") == [list(PROMPT_SHAPES)]
    assert _enums_named(_schema("report.schema.json"), "shape") == [list(REPORT_SHAPES)]


def test_the_schemas_task_enums_are_the_task_table() -> None:
    prompts = _schema("prompts.schema.json")
    enums = _enums_named(prompts, "type")
    assert enums[0] == list(TASKS)
    assert enums[1] == [
        name for name, task in TASKS.items() if task.needs_target
    ]  # the "if" that needs a target
    assert _enums_named(_schema("report.schema.json"), "type") == [list(TASKS)]


def test_a_shapes_container_flag_comes_from_its_kind() -> None:
    for name, kind in SHAPE_KINDS.items():
        assert is_container(name) == kind.container
        if kind.reported:
            assert Shape(name, (0.1, 0.1, 0.1)).is_container == kind.container
    assert not is_container("sphere")
