"""The ``pour`` task and a container's ``contents``: read from prompts.json, packed into the container, simulated
as free spheres, counted in the target by the task's predicate, and placed in time by the spill angle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym_addon.geometry.contents import Contents, fill_points, pour_events, spill_angle
from real2gym_addon.geometry.shapes import Shape
from real2gym_addon.mjcf.export import SceneObject, build_scene
from real2gym_addon.prompts import parse_prompts
from real2gym_addon.tasks import TASKS, TaskState
from real2gym_addon.verify.simulate import simulate


def _cup() -> Shape:
    return Shape("cup", (0.06, 0.06, 0.09), params={"outer_radius": 0.03, "inner_radius": 0.0265,
                                                   "wall_thickness": 0.0035, "bottom_thickness": 0.006})  # fmt: skip


def _bowl() -> Shape:
    return Shape("bowl", (0.15, 0.15, 0.055), params={"outer_radius": 0.075, "inner_radius": 0.071, "base_radius": 0.045,
                                                     "wall_thickness": 0.004, "bottom_thickness": 0.006})  # fmt: skip


def _prompts(contents=None, **task) -> dict:
    cup = {"name": "cup", "frame": 0, "box": [10, 10, 40, 60], "shape": "cup"}
    if contents is not None:
        cup["contents"] = contents
    return {"objects": [cup, {"name": "bowl", "frame": 0, "box": [60, 10, 120, 50], "shape": "bowl"}],
            "task": {"type": "pour", "object": "cup", "target": "bowl", **task}}  # fmt: skip


def test_contents_and_min_share_are_read_and_bad_values_named() -> None:
    objects, task = parse_prompts(
        _prompts({"count": 25, "radius": 0.005}, min_share=0.7), 10, 160, 120, WarningLog()
    )
    assert objects[0].contents == Contents(count=25, radius=0.005)
    assert task.min_share == 0.7 and task.to_json()["min_share"] == 0.7
    for bad, field in (({"count": 0}, "count"), ({"count": 2.5}, "count"), ({"radius": 0.5}, "radius"),
                       ({"kind": "water"}, "kind"), ({"density": -1}, "density")):  # fmt: skip
        with pytest.raises(DemoFolderError, match=f"object 'cup': contents '{field}'"):
            parse_prompts(_prompts(bad), 10, 160, 120, WarningLog())
    boxed = _prompts({"count": 5})
    boxed["objects"][0]["shape"] = "box"
    with pytest.raises(
        DemoFolderError, match="object 'cup': has 'contents' but its shape 'box' holds nothing"
    ):
        parse_prompts(boxed, 10, 160, 120, WarningLog())
    with pytest.raises(DemoFolderError, match="'min_share'"):
        parse_prompts(_prompts(min_share=1.5), 10, 160, 120, WarningLog())
    with pytest.raises(DemoFolderError, match="needs a 'target'"):
        parse_prompts({**_prompts(), "task": {"type": "pour", "object": "cup"}}, 10, 160, 120, WarningLog())


def test_the_spheres_pack_inside_the_cavity_apart_or_say_how_many_fit() -> None:
    cup, contents = _cup(), Contents(count=30, radius=0.004)
    points = fill_points(cup, contents)
    assert points.shape == (30, 3)
    gaps = np.linalg.norm(points[:, None] - points[None], axis=2) + np.eye(30)
    assert gaps.min() >= 2 * contents.radius  # none starts pressed into another
    assert np.hypot(points[:, 0], points[:, 1]).max() + contents.radius < 0.0265  # inside the wall
    assert points[:, 2].min() - contents.radius > -0.045 + 0.006  # above the floor
    bowl_points = fill_points(_bowl(), Contents(count=60))
    assert all(
        p[2] + 0.0275 >= _bowl().inner_height(math.hypot(p[0], p[1])) + 0.004 - 1e-6 for p in bowl_points
    )
    with pytest.raises(
        DemoFolderError, match=r"'cup': 400 spheres of 8 mm do not fit .*room for \d+ below the rim"
    ):
        fill_points(cup, Contents(count=400, radius=0.008), "cup")
    with pytest.raises(DemoFolderError, match="holds nothing"):
        fill_points(Shape("box", (0.05, 0.05, 0.05)), contents, "block")


def test_the_spill_angle_falls_as_the_cup_fills_and_places_the_pour_keyframes() -> None:
    cup = _cup()
    low, full = spill_angle(cup, Contents(count=10)), spill_angle(cup, Contents(count=80))
    assert 0 < full < low < math.pi / 2
    tilts = np.r_[
        np.zeros(10), np.linspace(0, 2.0, 20), np.full(10, 2.0), np.linspace(2.0, 0, 20), np.zeros(10)
    ]
    events = pour_events("cup", tilts, low)
    assert [e["event"] for e in events] == ["pour_start", "pour_end"]
    assert tilts[events[0]["frame"]] > low >= tilts[events[0]["frame"] - 1]
    assert tilts[events[1]["frame"]] <= low < tilts[events[1]["frame"] - 1]
    assert pour_events("cup", np.zeros(20), low) == []


def test_the_predicate_counts_the_spheres_in_the_targets_opening() -> None:
    bowl, cup = _bowl(), _cup()
    axis = np.array([0.2, 0.0, 0.0275])  # the bowl's box centre, its bottom on the table
    rng = np.random.default_rng(0)
    inside = axis + np.c_[rng.uniform(-0.04, 0.04, (20, 2)), np.full(20, -0.0275 + 0.012)]
    beside = inside + [0.2, 0.0, 0.0]
    state = TaskState(
        np.array([0.0, 0.0, 0.045]), cup, 0.1, axis, bowl, contents=inside, contents_radius=0.004
    )
    pour = TASKS["pour"].success
    assert pour(state)["passed"] and pour(state)["landed"] == 20
    mixed = np.r_[inside[:15], beside[15:]]  # 75 %: short of the default 80 %, enough for 70 %
    result = pour(TaskState(**{**state.__dict__, "contents": mixed}))
    assert not result["passed"] and result["landed_share"] == 0.75 and result["elsewhere"] == 5
    assert pour(TaskState(**{**state.__dict__, "contents": mixed, "min_share": 0.7}))["passed"]
    tipped = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], float)  # the bowl on its side: nothing is in it
    assert not pour(TaskState(**{**state.__dict__, "target_rotation": tipped}))["passed"]
    assert not pour(TaskState(**{**state.__dict__, "contents": None}))["passed"]


def test_exported_contents_rest_in_their_cup_and_are_recorded(tmp_path) -> None:
    class Camera:
        width, height, fx, fy, cx, cy = 160, 120, 150.0, 150.0, 80.0, 60.0

    objects = [SceneObject("cup", "manipulated", _cup(), np.array([0.0, 0.0, 0.045]), 0.4, contents=Contents(count=30)),
               SceneObject("bowl", "container", _bowl(), np.array([0.2, 0.0, 0.0275]), 0.0)]  # fmt: skip
    view = np.eye(4)
    view[:3, 3] = [0.0, -0.6, 0.3]
    scene = build_scene(objects, [-0.5, -0.5, 0.5, 0.5], view, Camera, None, tmp_path)
    record = simulate(scene.model, scene.name_map, None, 30.0, 20)
    assert record.contents["cup"].shape == (20 + 15, 30, 3) and "bowl" not in record.contents
    state = TaskState(record.positions["cup"][-1], _cup(), 0.0, record.positions["bowl"][-1], _bowl(),
                      moved_rotation=np.eye(3), contents=record.contents["cup"][-1], contents_radius=0.004)  # fmt: skip
    result = TASKS["pour"].success(state)
    assert not result["passed"] and result["left_in_source"] == 30  # nothing poured: all still in the cup
    assert record.deepest["cup"] < 0.002


def test_the_spill_probe_tips_the_contents_out_later_than_a_liquid_and_sooner_when_fuller() -> None:
    """Rolling spheres in a shallow fill gather in the corner until the wall slopes to the rim (past 90
    degrees), where a liquid's level surface reaches the rim at 71; a fuller cup, and a shallow bowl, spill
    sooner."""
    from real2gym_addon.mjcf.spill import probe_spill_angle

    cup = _cup()
    shallow, full = probe_spill_angle(cup, Contents(count=30)), probe_spill_angle(cup, Contents(count=80))
    assert math.radians(95) < shallow < math.radians(125)
    assert spill_angle(cup, Contents(count=30)) < shallow
    assert full < shallow
    assert probe_spill_angle(_bowl(), Contents(count=30)) < shallow
