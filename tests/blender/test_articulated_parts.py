"""Moving parts in Blender: a microwave's door on its hinge, turned by one channel, held to its range.

One small articulated demo per session (tests/articulated_demos.py: a microwave, 90 frames at
15 fps, its door's hinge given in prompts.json as the generator's truth has it, so the scene does
not hang on the joint estimator), run once by the installed extension's own core; each test works
on a copy. What an artist sees (the door under its joint's arrow, under the microwave, keyed from
the video's ``q``), what holds the door (locks and a limit constraint), the simulation's door beside
it, and the joint fix from the panel's operator and from the viewport, with its undo.

The scene verifies (the cup put in, the door pushed shut, as one ``steps`` task); a hinge tilted by
30 degrees fails it, and the undo verifies it again.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
from pathlib import Path

import bpy
import numpy as np
import pytest
from articulated_demos import GENERATOR, make_microwave_demo

MODULE = "bl_ext.user_default.real2gym"
OBJECT, PART = "microwave", "door"
TILT = math.radians(30)

pytestmark = pytest.mark.skipif(not GENERATOR.is_file(), reason="the articulated demo generator is missing")


def _module(name: str):
    return importlib.import_module(f"{MODULE}.{name}")


@pytest.fixture(scope="session")
def microwave_run(extension, tmp_path_factory) -> Path:
    """The microwave demo made and run once per session (about 40 s); tests copy it before changing it."""
    root = tmp_path_factory.mktemp("microwave")
    demo, out = make_microwave_demo(root / "demo"), root / "out"
    main = _module("real2gym_addon.cli").main
    ran = main(["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q"])
    assert ran == 0, "the microwave scene does not verify"
    return out


@pytest.fixture
def run(microwave_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(microwave_run, tmp_path / "run"))


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _part_entry(report: dict) -> dict:
    body = next(o for o in report["objects"] if o["name"] == OBJECT)
    return next(p for p in body["parts"] if p["name"] == PART)


def _core_part(report: dict):
    """The door as the installed core reads it (``PartGeometry``)."""
    return _module("real2gym_addon.geometry.parts").PartGeometry.from_report(_part_entry(report))


def _fcurve(obj, data_path: str, index: int):
    curves = _module("bridge.reconstruction").object_fcurves(obj)
    return next(c for c in curves if c.data_path == data_path and c.array_index == index)


def _keys(curve) -> np.ndarray:
    co = np.empty(2 * len(curve.keyframe_points), np.float32)
    curve.keyframe_points.foreach_get("co", co)
    return co.reshape(-1, 2)


def _world_vertices(obj) -> np.ndarray:
    matrix = np.array(obj.matrix_world, float)
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(float) @ matrix[:3, :3].T + matrix[:3, 3]


def _turn(door, joint) -> tuple[float, np.ndarray]:
    """The door's turn about its joint's Z (rad) and its Z axis in the joint's frame, as evaluated."""
    bpy.context.view_layer.update()
    local = np.linalg.inv(np.array(joint.matrix_world, float)) @ np.array(door.matrix_world, float)
    return math.atan2(local[1, 0], local[0, 0]), local[:3, 2]


def _joint_rms(report: dict) -> float:
    """The joint_fidelity check's RMS (rad) between the simulated and the video's door."""
    return report["verification"]["checks"]["joint_fidelity"]["parts"][f"{OBJECT}.{PART}"]["rms"]


def _open(scene, out: Path) -> None:
    """Builds the run's reconstruction and shows its report in the Fixes panel's state."""
    _module("bridge.reconstruction").build_reconstruction(scene, out)
    scene.real2gym.out_dir = str(out)
    assert bpy.ops.real2gym.load_review() == {"FINISHED"}


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "time"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_the_door_hangs_on_its_joint_under_the_body_and_follows_the_video(run: Path, empty_scene) -> None:
    _open(empty_scene, run)
    report = _report(run)
    part = _core_part(report)
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    joint, body = door.parent, bpy.data.objects[OBJECT]
    assert joint.type == "EMPTY" and joint.real2gym.kind == "JOINT" and joint.parent == body
    assert joint.empty_display_type == "SINGLE_ARROW" and joint.empty_display_size > 0.1  # the door's height
    assert door.real2gym.kind == "PART" and (door.real2gym.source_name, door.real2gym.part) == (OBJECT, PART)

    # The arrow lies on the hinge: its Z is the axis, its origin on the axis line.
    bpy.context.view_layer.update()
    world = np.array(joint.matrix_world, float)
    assert world[:3, 2] @ part.joint.axis > 1 - 1e-6
    offset = world[:3, 3] - part.joint.pivot
    assert np.linalg.norm(offset - (offset @ part.joint.axis) * part.joint.axis) < 1e-4

    # Z rotation keyed on every frame: q - closed, the video's q where it was measured.
    keys = _keys(_fcurve(door, "rotation_euler", 2))
    frames = report["video"]["frames"]
    assert keys[:, 0].tolist() == list(range(frames))
    measured = [(f["frame"], f["q"]) for f in _part_entry(report)["frames"] if f["q"] is not None]
    assert len(measured) > frames // 2
    for frame, q in measured:
        assert keys[frame, 1] == pytest.approx(q - part.joint.closed, abs=1e-5)

    # On any frame, the door stands where the core says it stands at that frame's q.
    vertices = np.asarray(part.shape.mesh().vertices, float)
    q = part.filled_q()
    for frame in (0, frames // 2, frames - 1):
        empty_scene.frame_set(frame)
        pose = part.pose_at(q[frame])
        expected = vertices @ pose[:3, :3].T + pose[:3, 3]
        assert np.abs(_world_vertices(door) - expected).max() < 1e-4, frame

    drawing = bpy.data.objects[f"{OBJECT}.{PART} range"]
    assert drawing.parent == joint and drawing.real2gym.kind == "JOINT_RANGE" and drawing.hide_render
    assert len(drawing.data.edges) > 10 and len(drawing.data.polygons) == 0


def test_turning_the_door_is_held_to_its_axis_and_range(run: Path, empty_scene) -> None:
    _open(empty_scene, run)
    part = _core_part(_report(run))
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    joint = door.parent
    lo, hi = (v - part.joint.closed for v in part.joint.range)
    assert tuple(door.lock_rotation) == (True, True, False) and all(door.lock_location)
    limit = door.constraints["Real2Gym Joint Range"]
    assert limit.type == "LIMIT_ROTATION" and limit.owner_space == "LOCAL" and limit.use_transform_limit
    assert (limit.min_z, limit.max_z) == pytest.approx((lo, hi), abs=1e-6)

    empty_scene.frame_set(10)
    bpy.context.view_layer.update()
    door.rotation_euler.z = hi + 0.7  # turned past the open end
    assert _turn(door, joint)[0] == pytest.approx(hi, abs=1e-4)
    door.rotation_euler.z = lo - 0.5  # and past the closed end
    assert _turn(door, joint)[0] == pytest.approx(lo, abs=1e-4)
    door.rotation_euler.z = (lo + hi) / 2
    door.rotation_euler.x = 0.4  # about another axis: it stays on the hinge
    door.rotation_euler.y = -0.3
    angle, z = _turn(door, joint)
    assert angle == pytest.approx((lo + hi) / 2, abs=1e-4) and z == pytest.approx([0, 0, 1], abs=1e-6)


def test_the_simulated_door_plays_the_simulated_joint_values(run: Path, empty_scene) -> None:
    report = _module("bridge.pipeline").open_run(empty_scene, run)
    part = _core_part(report.to_json())
    record = _module("bridge.simulation").simulate_run(report).record  # deterministic: what Open Run keyed
    simulated = record.joint_values[f"{OBJECT}.{PART}"]
    copy = bpy.data.objects[f"{OBJECT}.{PART} sim"]
    assert copy.real2gym.kind == "SIMULATION" and copy.parent.type == "EMPTY"
    assert copy.parent.parent == bpy.data.objects[f"{OBJECT} sim"]
    keys = _keys(_fcurve(copy, "rotation_euler", 2))
    assert keys[:, 1] == pytest.approx(simulated[: len(keys)] - part.joint.closed, abs=1e-5)
    # Beside the video's door: on the first frame both stand at the video's q.
    empty_scene.frame_set(0)
    bpy.context.view_layer.update()
    video_door = bpy.data.objects[f"{OBJECT}.{PART}"]
    assert np.abs(_world_vertices(copy) - _world_vertices(video_door)).max() < 0.005
    arrows = np.array(copy.parent.matrix_world, float), np.array(video_door.parent.matrix_world, float)
    assert (
        np.linalg.norm(arrows[0][:3, 3] - arrows[1][:3, 3]) < 0.005
        and arrows[0][:3, 2] @ arrows[1][:3, 2] > 0.9999
    )
    assert copy.parent.empty_display_size == pytest.approx(video_door.parent.empty_display_size, abs=1e-4)


def test_a_tilted_axis_changes_the_verdict_and_undo_brings_it_back(run: Path, empty_scene) -> None:
    fixes = _module("bridge.fixes")
    _open(empty_scene, run)
    state = empty_scene.real2gym.fixes
    before = _report(run)
    part = _core_part(before)
    item = state.objects[OBJECT].parts[PART]
    assert (item.joint_type, item.source) == ("hinge", part.joint.source)
    assert tuple(item.angle_range) == pytest.approx(part.joint.range, abs=1e-6)

    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    door.select_set(True)
    bpy.context.view_layer.objects.active = door
    # The axis tilted by 30 degrees about a horizontal line square to it.
    side = np.cross(part.joint.axis, [0.0, 0.0, 1.0])
    side = side / np.linalg.norm(side) if np.linalg.norm(side) > 1e-6 else np.array([1.0, 0.0, 0.0])
    tilted = part.joint.axis * math.cos(TILT) + np.cross(side, part.joint.axis) * math.sin(TILT)
    assert bpy.ops.real2gym.set_joint(object_name=OBJECT, part=PART, axis=tilted.tolist()) == {"FINISHED"}
    after = _report(run)
    joint = _part_entry(after)["joint"]
    assert joint["axis_world"] == pytest.approx(tilted, abs=1e-5) and joint["source"] == "edited"
    assert joint["pivot_world"] == _part_entry(before)["joint"]["pivot_world"]  # only what was set changed
    assert [e["kind"] for e in after["edit_log"]] == ["joint"] and state.edit_count == 1
    assert after["verification"]["checks"]["joint_fidelity"]["passed"] is False
    # The scene follows: the arrow is the new axis, the panel shows it.
    bpy.context.view_layer.update()
    arrow = bpy.data.objects[f"{OBJECT}.{PART}"].parent
    assert np.array(arrow.matrix_world)[:3, 2] @ tilted > 1 - 1e-5
    assert state.objects[OBJECT].parts[PART].axis[:] == pytest.approx(tilted, abs=1e-5)
    assert state.objects[OBJECT].parts[PART].source == "edited"
    door = bpy.context.view_layer.objects.active  # the rebuilt door, still selected
    assert door.name == f"{OBJECT}.{PART}" and door.select_get() and door.parent == arrow

    # Undo Fix: the joint as it was, and the verdict (verified again from the report) as it was.
    assert bpy.ops.real2gym.undo_fix() == {"FINISHED"}
    undone = _report(run)
    assert _part_entry(undone)["joint"] == _part_entry(before)["joint"] and state.edit_count == 0
    tilted_checks, undone_checks = after["verification"]["checks"], undone["verification"]["checks"]
    assert tilted_checks != undone_checks, "a door hinged 30 degrees off changed nothing in the simulation"
    assert (before["verification"]["passed"], after["verification"]["passed"], undone["verification"]["passed"]) == (
        True, False, True)  # fmt: skip
    assert _joint_rms(before) == pytest.approx(_joint_rms(undone), abs=0.02)
    assert _joint_rms(after) > _joint_rms(undone) + 0.1  # the tilted door strays from the video's
    bpy.context.view_layer.update()
    arrow = bpy.data.objects[f"{OBJECT}.{PART}"].parent
    assert np.array(arrow.matrix_world)[:3, 2] @ part.joint.axis > 1 - 1e-6

    # Blender's undo and redo take report.json and the verdict along (the undo handler, as Ctrl+Z runs it).
    assert bpy.ops.real2gym.set_joint(object_name=OBJECT, part=PART, axis=tilted.tolist()) == {"FINISHED"}
    assert _report(run)["verification"]["checks"] == tilted_checks
    state.edit_count = 0  # what an undo step from before the fix brings back
    fixes.sync_with_undo()
    assert _part_entry(_report(run))["joint"] == _part_entry(before)["joint"]
    assert _report(run)["verification"]["checks"] == undone_checks
    state.edit_count = 1
    fixes.sync_with_undo()
    assert _part_entry(_report(run))["joint"]["axis_world"] == pytest.approx(tilted, abs=1e-5)
    assert _report(run)["verification"]["checks"] == tilted_checks


def test_set_joint_from_the_viewport_reads_the_arrow_and_the_limits(
    run: Path, tmp_path: Path, empty_scene
) -> None:
    _open(empty_scene, run)
    empty_scene.real2gym.fixes.verify_after_fix = False  # the report's joint is what this test looks at
    part = _core_part(_report(run))
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    arrow = door.parent
    arrow.rotation_euler.x += TILT  # the artist tilts the arrow ...
    arrow.location.z += 0.01  # ... lifts it (along the axis: the same hinge) ...
    door.constraints["Real2Gym Joint Range"].max_z = 1.0  # ... and narrows the range
    bpy.context.view_layer.update()
    world = np.array(arrow.matrix_world, float)
    assert bpy.ops.real2gym.set_joint(object_name=OBJECT, part=PART, from_viewport=True) == {"FINISHED"}
    joint = _part_entry(_report(run))["joint"]
    assert joint["axis_world"] == pytest.approx(world[:3, 2], abs=1e-5)
    assert joint["axis_world"] @ part.joint.axis == pytest.approx(math.cos(TILT), abs=1e-4)
    assert joint["pivot_world"] == pytest.approx(world[:3, 3], abs=1e-5)
    assert joint["range"] == pytest.approx([part.joint.range[0], 1.0 + part.joint.closed], abs=1e-5)
    # The rebuilt door is held to the new range.
    door = bpy.data.objects[f"{OBJECT}.{PART}"]
    assert door.constraints["Real2Gym Joint Range"].max_z == pytest.approx(1.0, abs=1e-5)


def test_the_operator_and_the_command_line_give_the_same_joint(
    run: Path, tmp_path: Path, empty_scene
) -> None:
    by_cli = Path(shutil.copytree(run, tmp_path / "cli"))
    _open(empty_scene, run)
    empty_scene.real2gym.fixes.verify_after_fix = False
    changes = {"axis": (0.1, 0.0, -1.0), "pivot": (-0.2, 0.05, 0.1), "range_lo": 0.0, "range_hi": 1.2,
               "damping": 0.2, "frictionloss": 0.05}  # fmt: skip
    assert bpy.ops.real2gym.set_joint(object_name=OBJECT, part=PART, **changes) == {"FINISHED"}
    main = _module("real2gym_addon.cli").main
    arguments = ["fix", str(by_cli), "--object", OBJECT, "--part", PART, "--joint-axis=0.1,0,-1",
                 "--joint-pivot=-0.2,0.05,0.1", "--joint-range", "0,1.2", "--joint-damping", "0.2",
                 "--joint-frictionloss", "0.05", "--no-verify", "-q"]  # fmt: skip
    assert main(arguments) == 0
    reports = [_report(p) for p in (run, by_cli)]
    assert _without_times(reports[0]["objects"]) == _without_times(reports[1]["objects"])
    assert _without_times(reports[0]["edit_log"]) == _without_times(reports[1]["edit_log"])


def test_a_bad_joint_fix_changes_nothing(run: Path, empty_scene) -> None:
    _open(empty_scene, run)
    original = (run / "report.json").read_bytes()
    for arguments, message in (
        ({"part": "lid"}, "has no part 'lid'"),
        ({"part": PART, "axis": (0.0, 0.0, 0.0)}, "axis is zero"),
        ({"part": PART, "range_lo": 1.0, "range_hi": 0.5}, "two increasing numbers"),
    ):
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.real2gym.set_joint(object_name=OBJECT, **arguments)
        assert (run / "report.json").read_bytes() == original
    assert message in empty_scene.real2gym.fixes.status


def _yaw(frame: dict) -> float:
    """An upright body's yaw (rad) from a report frame's ``quaternion_world`` ``[w, x, y, z]``."""
    w, _, _, z = frame["quaternion_world"]
    return 2.0 * math.atan2(z, w)


def test_variants_move_the_door_with_its_microwave(run: Path) -> None:
    """A variant set of the microwave scene: the door's hinge (pivot and axis) goes where the body goes, and
    most variants verify (18 of 20 at the default ranges; 4 drawn here)."""
    main = _module("real2gym_addon.cli").main
    assert main(["vary", str(run), "--count", "4", "--no-render", "-q"]) == 0
    entries = json.loads((run / "variants" / "summary.json").read_text())
    verified = [e for e in entries if e["passed"]]
    assert len(verified) >= 3, [e["reason"] for e in entries]
    demo = _report(run)
    demo_body = next(o for o in demo["objects"] if o["name"] == OBJECT)["frames"][0]
    demo_joint = _part_entry(demo)["joint"]
    for entry in verified:
        report = json.loads((run / "variants" / entry["id"] / "report.json").read_text())
        body = next(o for o in report["objects"] if o["name"] == OBJECT)["frames"][0]
        turn = _yaw(body) - _yaw(demo_body)
        c, s = math.cos(turn), math.sin(turn)
        about_z = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        joint = _part_entry(report)["joint"]
        offset = np.subtract(demo_joint["pivot_world"], demo_body["position_world"])
        assert joint["pivot_world"] == pytest.approx(
            np.add(body["position_world"], about_z @ offset), abs=1e-4
        )
        assert joint["axis_world"] == pytest.approx(about_z @ demo_joint["axis_world"], abs=1e-5)
