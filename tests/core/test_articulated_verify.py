"""A body with a hinged door, exported to MJCF and simulated: the door turns about its joint only, the
hand's push closes it, and the open / close / steps predicates read its joint."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym_addon.geometry.camera import pose_matrix
from real2gym_addon.geometry.fit_base import FittedObject
from real2gym_addon.geometry.keyframes import GripperTrajectory
from real2gym_addon.geometry.motion import Motion
from real2gym_addon.geometry.parts import Joint, PartGeometry
from real2gym_addon.geometry.shapes import Shape
from real2gym_addon.geometry.stage import Geometry, ObjectGeometry
from real2gym_addon.geometry.table import Table
from real2gym_addon.prompts import parse_prompts
from real2gym_addon.verify.run import verify_scene

FPS, FRAMES = 30.0, 75
BODY = (0.30, 0.30, 0.25)
DOOR = (0.02, 0.30, 0.25)
OPEN = np.pi / 2


class _Camera:
    width, height, fx, fy, cx, cy = 320, 240, 300.0, 300.0, 160.0, 120.0


def _hinged_box(q: np.ndarray) -> ObjectGeometry:
    """A box body on the table with a door on its +x face, hinged on its -y edge, turning outwards by +q."""
    body_centre = np.array([0.0, 0.0, BODY[2] / 2])
    door_centre = np.array([BODY[0] / 2 + DOOR[0] / 2 + 0.001, 0.0, BODY[2] / 2])
    pivot = np.array([BODY[0] / 2 + 0.001, -BODY[1] / 2, 0.0])
    joint = Joint("hinge", np.array([0.0, 0.0, -1.0]), pivot, (0.0, OPEN), closed=0.0)
    door = PartGeometry("door", Shape("box", DOOR), door_centre, np.eye(3), 0.0, joint, q.copy(),
                        np.ones(len(q), bool))  # fmt: skip
    motion = Motion(
        np.repeat(body_centre[None], len(q), 0), np.zeros(len(q)), np.ones(len(q), bool), static=True
    )
    fitted = FittedObject(Shape("box", BODY), body_centre, 0.0)
    return ObjectGeometry("cabinet", "static", fitted, motion, [True] * len(q), [door])


def _push_path(q: np.ndarray) -> GripperTrajectory:
    """Closed fingers pointing down, on the door's outer face 0.22 m out from the hinge, following ``q``."""
    joint = _hinged_box(q).parts[0].joint
    positions, quats = [], []
    for value in q:
        turn = Rotation.from_rotvec(joint.axis * value).as_matrix()
        outward = turn @ np.array([1.0, 0.0, 0.0])
        along = turn @ np.array([0.0, 1.0, 0.0])
        point = joint.pivot + along * 0.22 + outward * (DOOR[0] + 0.012)
        positions.append([point[0], point[1], 0.22])  # the palm above the door's top edge
        frame = np.column_stack([np.cross(along, [0.0, 0.0, -1.0]), along, [0.0, 0.0, -1.0]])
        quats.append(Rotation.from_matrix(frame).as_quat()[[3, 0, 1, 2]])
    return GripperTrajectory(np.array(positions), np.array(quats), np.zeros(len(q)), "synthesised")


def _geometry(q_video: np.ndarray, q_hand: np.ndarray) -> Geometry:
    world_from_camera = pose_matrix(
        np.array([0.9, -0.5, 0.6]), Rotation.from_euler("xyz", [-120, 0, 60], degrees=True).as_matrix()
    )
    table = Table(np.array([0.0, -1.0, 0.0]), 0.6, [-0.5, -0.5, 0.8, 0.5])
    keyframes = [{"frame": 20, "event": "push", "object": "cabinet.door"},
                 {"frame": 55, "event": "closed", "object": "cabinet.door"}]  # fmt: skip
    return Geometry(table, world_from_camera, [_hinged_box(q_video)], keyframes, _push_path(q_hand))


def _closing(frames: int = FRAMES) -> np.ndarray:
    """Open for 20 frames, pushed shut over 35, then closed."""
    q = np.full(frames, OPEN)
    q[20:55] = np.linspace(OPEN, 0.0, 35)
    q[55:] = 0.0
    return q


@pytest.fixture(scope="module")
def pushed_shut(tmp_path_factory):
    q = _closing()
    # The hand ends a little inside closed, as a hand pressing a door against its stop does.
    geometry = _geometry(q, np.minimum(q, np.maximum(q, -0.02)) - 0.03 * (np.arange(FRAMES) >= 55))
    task = {"type": "close", "object": "cabinet", "part": "door"}
    return verify_scene(geometry, _Camera(), task, FPS, tmp_path_factory.mktemp("mjcf")), geometry


def test_the_push_closes_the_door_and_close_passes(pushed_shut) -> None:
    verification, _ = pushed_shut
    q = verification.record.joint_values["cabinet.door"]
    assert q[0] == pytest.approx(OPEN, abs=0.02)  # starts where the video shows it
    task = verification.checks["task_success"]
    assert task["passed"], task
    assert task["opening"] <= 0.05
    assert verification.checks["joint_fidelity"]["passed"], verification.checks["joint_fidelity"]
    assert "grasp_held" not in verification.checks  # pushed, never grasped: not judged
    assert verification.checks["penetration"]["passed"], verification.checks["penetration"]


def test_the_door_turns_about_its_axis_only(pushed_shut) -> None:
    verification, geometry = pushed_shut
    model, scene = verification.scene.model, verification.scene
    door = model.body(scene.name_map["cabinet.door"])
    assert model.body_jntnum[door.id] == 1
    joint = model.joint(f"{scene.name_map['cabinet.door']}_joint")
    assert joint.type[0] == 3  # mjJNT_HINGE
    assert np.allclose(joint.range, [0.0, OPEN], atol=1e-6)
    # Every simulated pose of the door is its closed pose turned about the fitted axis by the joint's value.
    part = geometry.objects[0].parts[0]
    record = verification.record
    for frame in (0, 30, 60):
        expected = part.pose_at(record.joint_values["cabinet.door"][frame])[:3, 3]
        assert np.linalg.norm(record.positions["cabinet.door"][frame] - expected) < 0.002


def test_a_hand_that_stops_halfway_fails_close_and_fidelity(tmp_path) -> None:
    q = _closing()
    halfway = np.maximum(q, OPEN / 2)
    geometry = _geometry(q, halfway)
    verification = verify_scene(geometry, _Camera(), {"type": "close", "object": "cabinet", "part": "door"}, FPS,
                                tmp_path)  # fmt: skip
    task = verification.checks["task_success"]
    assert not task["passed"] and task["opening"] > 0.15, task
    assert not verification.checks["joint_fidelity"]["passed"]
    assert not verification.passed


def test_open_and_steps_read_the_same_joint(pushed_shut) -> None:
    from real2gym_addon.verify.checks import task_success

    verification, geometry = pushed_shut
    record = verification.record
    opened = task_success({"type": "open", "object": "cabinet", "part": "door"}, geometry, record)
    assert not opened["passed"] and opened["opening"] < 0.05
    half_shut = {"type": "close", "object": "cabinet", "part": "door", "to": 0.5}
    shut = {"type": "close", "object": "cabinet", "part": "door"}
    result = task_success({"type": "steps", "steps": [half_shut, shut]}, geometry, record)
    assert result["passed"] and result["in_order"], result
    assert [s["to"] for s in result["steps"]] == [0.5, 0.05]
    half_done, shut_done = (s["done_frame"] for s in result["steps"])
    assert 25 <= half_done < shut_done <= 60, result
    # Shut before half shut cannot be: the same two steps the other way round are out of order.
    result = task_success({"type": "steps", "steps": [shut, half_shut]}, geometry, record)
    assert not result["passed"] and not result["in_order"]


def _prompts(task: dict, parts=None) -> dict:
    cabinet = {"name": "cabinet", "frame": 0, "box": [10, 10, 200, 200], "shape": "box", "role": "static"}
    if parts is not None:
        cabinet["parts"] = parts
    return {"objects": [cabinet, {"name": "cup", "frame": 0, "box": [220, 100, 260, 160]}], "task": task}


DOOR_PROMPT = {"name": "door", "frame": 0, "box": [150, 20, 200, 190], "joint": "auto"}


def test_prompts_read_parts_and_the_new_tasks() -> None:
    close = {"type": "close", "object": "cabinet", "part": "door"}
    objects, task = parse_prompts(_prompts(close, [DOOR_PROMPT]), 10, 320, 240, WarningLog())
    assert objects[0].parts[0].name == "door" and objects[0].parts[0].joint == "auto"
    assert task.part == "door" and task.to_json() == {**close, "target": None}
    steps = {"type": "steps", "steps": [{"type": "place_in", "object": "cup", "target": "cabinet"}, close]}
    _, task = parse_prompts(_prompts(steps, [DOOR_PROMPT]), 10, 320, 240, WarningLog())
    assert task.object == "cup" and task.target == "cabinet" and len(task.steps) == 2
    given = {
        **DOOR_PROMPT,
        "joint": {"type": "hinge", "axis": [0, 0, 1], "pivot": [0.1, 0, 0], "range": [0, 1.6]},
    }
    objects, _ = parse_prompts(_prompts(close, [given]), 10, 320, 240, WarningLog())
    assert objects[0].parts[0].given["source"] == "given"


@pytest.mark.parametrize(
    ("task", "parts", "says"),
    [
        ({"type": "close", "object": "cabinet", "part": "lid"}, [DOOR_PROMPT], "its parts are door"),
        ({"type": "open", "object": "cabinet", "part": "door"}, None, "has no 'parts'"),
        ({"type": "open", "object": "cabinet", "part": "door", "to": 2}, [DOOR_PROMPT], "'to' is a share"),
        ({"type": "steps", "steps": []}, [DOOR_PROMPT], "a list of 1 to"),
        ({"type": "steps", "steps": [{"type": "steps"}]}, [DOOR_PROMPT], "steps[0]: unknown task type"),
        (
            {"type": "close", "object": "cabinet", "part": "door"},
            [DOOR_PROMPT, DOOR_PROMPT],
            "already has a part",
        ),
        (
            {"type": "close", "object": "cabinet", "part": "door"},
            [{**DOOR_PROMPT, "joint": "ball"}],
            "'joint' is one",
        ),
        (
            {"type": "close", "object": "cabinet", "part": "door"},
            [{**DOOR_PROMPT, "joint": {"type": "hinge", "axis": [0, 0, 1]}}],
            "a given joint needs",
        ),
    ],
)
def test_bad_parts_and_tasks_are_named(task, parts, says) -> None:
    with pytest.raises(DemoFolderError, match=None) as error:
        parse_prompts(_prompts(task, parts), 10, 320, 240, WarningLog())
    assert says in str(error.value), str(error.value)
