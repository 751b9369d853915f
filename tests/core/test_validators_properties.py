"""Property-based tests of the validators at the door (Hypothesis).

Whatever JSON a user or a script writes into prompts.json, camera.json,
trajectory.json or a report, the validators either accept it, and then what
they return satisfies what the stages rely on, or refuse it with the user's
error type. Nothing else may come out: no KeyError, TypeError, IndexError.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import parse_camera
from real2gym.real2gym_addon.errors import DemoFolderError, OutputError, WarningLog
from real2gym.real2gym_addon.names import MAX_NAME_LENGTH, check_object_name, inside, name_problem
from real2gym.real2gym_addon.prompts import MAX_OBJECTS, MIN_BOX_SIDE, parse_prompts
from real2gym.real2gym_addon.report import check_report
from real2gym.real2gym_addon.trajectory import parse_trajectory

FRAMES, WIDTH, HEIGHT = 60, 640, 480
PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=True) | st.text(max_size=8)
)
any_json = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
"""Arbitrary JSON values, NaN and infinities included (Python's json reads them)."""

names = st.text(min_size=0, max_size=80) | st.sampled_from(
    [
        "block",
        "cup 2",
        "../x",
        "/etc/passwd",
        "a\\b",
        ".hidden",
        "..",
        "NUL",
        "tasse_café",
        "x\x00y",
        "a" * 65,
    ]
)
numbers = st.floats(-1e4, 1e4, allow_nan=False) | st.integers(-1000, 2000) | any_json
boxes = st.lists(numbers, min_size=3, max_size=5) | any_json


@st.composite
def prompt_objects(draw) -> dict:
    entry = {"name": draw(names), "box": draw(boxes)}
    for key, values in (
        ("frame", st.integers(-5, FRAMES + 5) | any_json),
        ("shape", st.sampled_from(["auto", "cup", "sphere", 3])),
        ("role", st.sampled_from(["manipulated", "static", "boss"])),
        ("points", st.lists(st.lists(numbers, min_size=2, max_size=4), max_size=3) | any_json),
    ):
        if draw(st.booleans()):
            entry[key] = draw(values)
    return entry


@st.composite
def prompts_files(draw) -> object:
    objects = draw(st.lists(prompt_objects() | any_json, min_size=0, max_size=MAX_OBJECTS + 3))
    names_ = [o.get("name") for o in objects if isinstance(o, dict)]
    task = {
        "type": draw(st.sampled_from(["place_in", "lift", "fly"])),
        "object": draw(st.sampled_from(names_ or ["x"])),
    }
    if draw(st.booleans()):
        task["target"] = draw(st.sampled_from(names_ or ["y"]))
    return draw(st.sampled_from([{"objects": objects, "task": task}, objects, {"objects": objects}]))


@PROPERTIES
@given(prompts_files())
def test_prompts_are_accepted_whole_or_refused_with_a_message(data) -> None:
    try:
        objects, task = parse_prompts(data, FRAMES, WIDTH, HEIGHT, WarningLog())
    except DemoFolderError as e:
        assert str(e).startswith("prompts.json")
        return
    assert 1 <= len(objects) <= MAX_OBJECTS
    assert len({o.name for o in objects}) == len(objects)
    for obj in objects:
        assert name_problem(obj.name) is None
        x0, y0, x1, y1 = obj.box
        assert 0 <= x0 < x1 <= WIDTH and 0 <= y0 < y1 <= HEIGHT
        assert min(x1 - x0, y1 - y0) >= MIN_BOX_SIDE
        assert 0 <= obj.frame < FRAMES
        assert all(0 <= x < WIDTH and 0 <= y < HEIGHT and label in (0, 1) for x, y, label in obj.points)
    assert task.object in {o.name for o in objects}


@PROPERTIES
@given(names)
def test_an_accepted_name_is_a_plain_file_name_inside_its_folder(name) -> None:
    root = Path("/nonexistent-root/out")
    if name_problem(name) is not None:
        with pytest.raises(DemoFolderError, match="the object name"):
            check_object_name(name, "prompts.json", DemoFolderError)
        return
    assert check_object_name(name, "prompts.json", DemoFolderError) == name
    assert len(name) <= MAX_NAME_LENGTH
    assert Path(name).name == name and not Path(name).is_absolute()
    assert inside(root, name, "masks", OutputError).parent == root


@st.composite
def poses(draw) -> list:
    rotation = Rotation.from_quat(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
        lambda q: sum(v * v for v in q) > 0.01)))  # fmt: skip
    matrix = np.eye(4)
    matrix[:3, :3] = rotation.as_matrix()
    matrix[:3, 3] = draw(st.lists(st.floats(-200, 200), min_size=3, max_size=3))
    noise = draw(st.sampled_from([0.0, 1e-7, 1e-4, 1e-2, 0.5]))
    matrix += noise * np.asarray(draw(st.lists(st.floats(-1, 1), min_size=16, max_size=16))).reshape(4, 4)
    if draw(st.booleans()):
        matrix[:, 2] *= -1  # a reflection
    return matrix.tolist()


@PROPERTIES
@given(poses() | any_json, st.floats(-1e7, 1e7) | any_json)
def test_camera_is_a_rigid_pose_or_refused(pose, fx) -> None:
    data = {"width": WIDTH, "height": HEIGHT, "fx": fx, "fy": 500.0, "cx": 320.0, "cy": 240.0}
    data["world_from_camera"] = pose
    try:
        camera = parse_camera(json.loads(json.dumps(data)))
    except DemoFolderError as e:
        assert str(e).startswith("camera.json")
        return
    assert camera.fx > 0 and math.isfinite(camera.fx)
    if camera.world_from_camera is not None:
        m = np.asarray(camera.world_from_camera)
        assert np.abs(m[:3, :3].T @ m[:3, :3] - np.eye(3)).max() <= 1e-3
        assert np.linalg.det(m[:3, :3]) > 0 and np.allclose(m[3], [0, 0, 0, 1], atol=1e-3)


@st.composite
def samples(draw) -> dict:
    sample = {
        "frame": draw(st.integers(-3, FRAMES + 3) | any_json),
        "position": draw(st.lists(st.floats(-2, 2) | any_json, min_size=2, max_size=4)),
        "quaternion": draw(st.lists(st.floats(-1.2, 1.2), min_size=3, max_size=5) | any_json),
    }
    key = draw(st.sampled_from(["gripper", "gripper_closure", "gripper_width_m", None]))
    if key:
        sample[key] = draw(st.floats(-0.5, 1.5) | any_json)
    return sample


@PROPERTIES
@given(
    st.lists(samples() | any_json, max_size=8) | any_json, st.sampled_from(["camera", "world", "base", None])
)
def test_trajectory_is_checked_sample_by_sample(sample_list, frame_of) -> None:
    data = {"samples": sample_list} if frame_of is None else {"frame_of": frame_of, "samples": sample_list}
    try:
        parsed = parse_trajectory(data, FRAMES, 30.0, WarningLog())
    except DemoFolderError as e:
        assert str(e).startswith("trajectory.json")
        return
    assert parsed.frame_of in ("camera", "world")
    assert (np.diff(parsed.frames) > 0).all() and 0 <= parsed.frames[0] and parsed.frames[-1] < FRAMES
    assert np.isfinite(parsed.positions).all()
    assert np.allclose(np.linalg.norm(parsed.quaternions, axis=1), 1.0)
    assert ((parsed.opening >= 0) & (parsed.opening <= 1)).all()


def test_a_well_formed_sparse_trajectory_is_accepted_with_its_gaps_said() -> None:
    log = WarningLog()
    data = {"samples": [{"frame": f, "position": [0, 0, 0.5], "quaternion": [1, 0, 0, 0], "gripper_closure": 0.0}
                        for f in (0, 10, 40, 59)]}  # fmt: skip
    parsed = parse_trajectory(data, FRAMES, 30.0, log)
    assert parsed.frames.tolist() == [0, 10, 40, 59] and parsed.opening.tolist() == [1.0] * 4
    said = " ".join(w.message for w in log.warnings)
    assert "no samples between frames 10 and 40 (1.0 s; 1 more gap over 0.5 s)" in said, said


REPORT = {
    "version": 1,
    "video": {"frames": FRAMES, "fps": 30.0, "width": WIDTH, "height": HEIGHT, "source": "/d/video.mp4"},
    "camera": {"fx": 500.0, "fy": 500.0, "cx": 320.0, "cy": 240.0, "width": WIDTH, "height": HEIGHT},
    "objects": [{"name": "block", "frames": [{"frame": 0, "position_cam": [0.0, 0.0, 0.5]}]}],
    "keyframes": [{"frame": 12, "event": "grasp", "object": "block"}],
    "artifacts": {"mjcf": "mjcf/scene.xml"},
    "segmentation": {"objects": [{"name": "block", "masks": "masks/block"}]},
}


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    yield path


@PROPERTIES
@given(st.data())
def test_a_tampered_report_is_valid_or_refused_naming_the_field(data) -> None:
    report = json.loads(json.dumps(REPORT))
    paths = list(_leaves(report))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        replacement = data.draw(
            any_json | names | st.sampled_from([float("nan"), -1, 10**9, "../../x", "/etc"])
        )
        if not path:
            report = replacement
            break
        target = report
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = replacement
        except (KeyError, IndexError, TypeError):
            continue
    try:
        checked = check_report(report, Path("/nonexistent-root/out"))
    except OutputError as e:
        assert "report.json" in str(e)
        return
    assert checked["video"]["frames"] >= 1
    for obj in checked.get("objects") or []:
        assert name_problem(obj["name"]) is None
