"""The task table (issue 27): one entry per task type, read by prompts.json's check, the verifier, the
Gymnasium environment, task.json and the docs; no task-type literal outside its entry."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from docs_kit import gen_docs

from real2gym.real2gym_addon import prompts
from real2gym.real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.tasks import TASKS, TaskState, TaskType, task_type

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "real2gym_addon"
EVENT_NAMES = {"grasp", "lift", "contact", "release", "push", "open", "closed", "steps"}
"""Names with another meaning as well (docs/data-contract.md): the keyframe events (``open`` is an event
and a task type alike) and report.json's ``verification.simulation.steps`` (physics steps), older than the
``steps`` task; a comparison of a task's type with one of them is still found."""


def _cup() -> Shape:
    return Shape("cup", (0.08, 0.08, 0.1), params={"inner_radius": 0.036, "bottom_thickness": 0.006,
                                                   "wall_thickness": 0.004, "outer_radius": 0.04})  # fmt: skip


BLOCK = Shape("box", (0.03, 0.03, 0.03))


def test_place_in_passes_inside_on_the_bottom_and_fails_beside_or_above() -> None:
    cup = _cup()
    axis = np.array([0.3, 0.1, 0.05])
    bottom = axis[2] - 0.05
    inside = TaskState(np.array([0.305, 0.1, bottom + 0.006 + 0.015]), BLOCK, 0.1, axis, cup)
    beside = dataclasses.replace(inside, moved_position=np.array([0.4, 0.1, 0.015]))
    on_rim = dataclasses.replace(inside, moved_position=np.array([0.3, 0.1, bottom + 0.1 + 0.015]))
    place_in = TASKS["place_in"].success
    assert place_in(inside)["passed"] and place_in(inside)["inside"]
    assert not place_in(beside)["passed"] and not place_in(beside)["inside"]
    assert not place_in(on_rim)["passed"]


def test_place_on_and_lift() -> None:
    plate = Shape("box", (0.2, 0.2, 0.02))
    axis = np.array([0.0, 0.0, 0.01])
    on_top = TaskState(np.array([0.02, 0.0, 0.02 + 0.015]), BLOCK, 0.05, axis, plate)
    assert TASKS["place_on"].success(on_top)["passed"]
    assert not TASKS["place_on"].success(
        dataclasses.replace(on_top, moved_position=np.array([0.3, 0, 0.015]))
    )["passed"]
    assert TASKS["lift"].success(TaskState(np.zeros(3), BLOCK, 0.05))["passed"]
    assert not TASKS["lift"].success(TaskState(np.zeros(3), BLOCK, 0.01))["passed"]


def _bowl() -> Shape:
    return Shape("bowl", (0.16, 0.16, 0.06), params={"inner_radius": 0.072, "bottom_thickness": 0.006,
                                                     "wall_thickness": 0.008, "outer_radius": 0.08})  # fmt: skip


def test_stack_reads_the_physics_nested_or_on_top_carried_and_standing() -> None:
    """A block nested in a bowl, or on a box, passes only while the target carries its weight and stands;
    the same positions with the weight on the table (a block resting against the bowl's side) fail."""
    stack = TASKS["stack"].success
    bowl_axis = np.array([0.2, 0.0, 0.03])  # the bowl's box centre: its bottom at z = 0
    nested = TaskState(np.array([0.21, 0.0, 0.006 + 0.015]), BLOCK, 0.08, bowl_axis, _bowl(),
                       target_rotation=np.eye(3), support_share=0.99, target_tilt_rad=0.01)  # fmt: skip
    figures = stack(nested)
    assert figures["passed"] and figures["relation"] == "nested" and figures["support_share"] == 0.99
    assert not stack(dataclasses.replace(nested, support_share=0.3))["passed"]  # the table carries it
    tipped = stack(dataclasses.replace(nested, target_tilt_rad=np.radians(25)))
    assert not tipped["passed"] and not tipped["target_standing"]
    beside = stack(
        dataclasses.replace(nested, moved_position=np.array([0.32, 0.0, 0.015]), support_share=0.2)
    )
    assert not beside["passed"] and beside["relation"] is None
    base = Shape("box", (0.06, 0.06, 0.05))
    on_top = TaskState(np.array([0.028, 0.0, 0.05 + 0.015]), BLOCK, 0.08, np.array([0.0, 0.0, 0.025]), base,
                       target_rotation=np.eye(3), support_share=1.0, target_tilt_rad=0.0)  # fmt: skip
    assert stack(on_top)["relation"] == "on_top" and stack(on_top)["passed"]
    off_edge = dataclasses.replace(on_top, moved_position=np.array([0.04, 0.0, 0.065]))  # 1 cm past the edge
    assert not stack(off_edge)["passed"]
    unmeasured = stack(dataclasses.replace(on_top, support_share=None))  # a steps task's earlier frames
    assert unmeasured["passed"] and unmeasured["support_share"] is None


def test_an_unknown_type_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(
        Exception,
        match="unknown task type 'plug'; use one of place_in, place_on, stack, hang, shelve, insert, pour, lift",
    ):
        task_type("plug")


def _prompts(kind: str, target: str | None) -> dict:
    return {"objects": [{"name": "block", "frame": 0, "box": [10, 10, 40, 40]},
                        {"name": "cup", "frame": 0, "box": [60, 10, 100, 60], "shape": "cup", "role": "container"}],
            "task": {"type": kind, "object": "block", **({"target": target} if target else {})}}  # fmt: skip


def test_a_new_entry_is_all_prompts_json_needs(monkeypatch) -> None:
    """Adding a task type is one entry: prompts.json then accepts it, with its own field rules."""
    wipe = TaskType("wipe", "the object ends at the target", needs_target=True, releases=True,
                    keyframes=("grasp", "release"), success=lambda state: {"passed": True})  # fmt: skip
    monkeypatch.setitem(TASKS, "wipe", wipe)
    _, task = prompts.parse_prompts(_prompts("wipe", "cup"), 10, 200, 100, WarningLog())
    assert task.type == "wipe"
    with pytest.raises(DemoFolderError, match="task 'wipe' needs a 'target' among the objects"):
        prompts.parse_prompts(_prompts("wipe", None), 10, 200, 100, WarningLog())
    monkeypatch.delitem(TASKS, "wipe")
    with pytest.raises(DemoFolderError, match="unknown task type 'wipe'"):
        prompts.parse_prompts(_prompts("wipe", "cup"), 10, 200, 100, WarningLog())


def _literals_outside_the_table(root: Path = CORE) -> list[str]:
    found = []
    for path in root.rglob("*.py"):
        if path.is_relative_to(root / "tasks"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in TASKS and node.value not in EVENT_NAMES:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.value!r}")
            if isinstance(
                node, ast.Compare
            ):  # a name that is also an event: only where a task's type is compared
                text = ast.unparse(node)
                parts = [node.left, *node.comparators]
                if "type" in text and any(isinstance(p, ast.Constant) and p.value in TASKS for p in parts):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {text}")
    return found


def test_no_task_type_literal_outside_its_entry() -> None:
    assert not _literals_outside_the_table(), _literals_outside_the_table()


def test_the_scan_finds_a_planted_literal(tmp_path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "entry.py").write_text('NAME = "place_on"\n')
    (tmp_path / "planted.py").write_text('def f(task):\n    return task["type"] == "lift" or "place_on"\n')
    found = _literals_outside_the_table(tmp_path)
    assert len(found) == 2, found
    assert any("'place_on'" in f for f in found) and any("== 'lift'" in f for f in found)


def test_the_docs_table_of_tasks_is_generated_from_the_table() -> None:
    text = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    generated = gen_docs()
    assert generated.with_tasks_table(text) == text, "docs/checks.md is out of date: run tools/gen_docs.py"
    for task in TASKS.values():
        assert f"`{task.name}`" in generated.tasks_table()


def test_task_json_takes_its_success_fields_from_the_entry(verified_demo_run: Path) -> None:
    from real2gym.real2gym_addon.gym.export import task_description
    from real2gym.real2gym_addon.report import Report, read_report
    from real2gym.real2gym_addon.variants.plan import VariationPlan

    report = read_report(verified_demo_run)
    success = task_description(report, VariationPlan())["success"]
    assert success["type"] == "place_in" and success["released"] is True
    assert success["target"] == "cup" and success["inner_radius"] > 0
    lifting = Report.from_json({**report.to_json(), "task": {"type": "lift", "object": "block"}})
    lifted = task_description(lifting, VariationPlan())["success"]
    assert lifted["released"] is False and lifted["raised_m"] == pytest.approx(0.02)
