"""The reconstruction and the simulation in Blender, after a full run on the bundled demo.

One full run per module (about 15 s); each test then opens the scene.blend it
saved, or builds from its report.json, so the tests stay fast and independent.
The run counts what it does (simulations, report serialisations, .blend saves).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import shutil
from collections import Counter
from pathlib import Path

import bpy
import pytest
from mathutils import Matrix, Quaternion, Vector

MODULE = "bl_ext.user_default.real2gym"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"

pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")


def _bridge(name: str):
    return importlib.import_module(f"{MODULE}.bridge.{name}")


RUN_COUNTS: Counter = Counter()
"""What the full run did: ``simulate`` (MuJoCo runs of the demo), ``to_report`` (report serialisations),
``save`` (scene.blend saves)."""


def _counting(counts: Counter, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts, into ``counts``, every simulation of the demo, report serialisation and .blend save."""
    targets = [
        ("simulate", f"{MODULE}.real2gym_addon.verify.run", "simulate"),
        ("simulate", f"{MODULE}.real2gym_addon.verify.simulate", "simulate"),
        ("save", f"{MODULE}.bridge.pipeline", "save_blend_copy"),
    ]
    for key, module_name, name in targets:
        module = importlib.import_module(module_name)
        monkeypatch.setattr(module, name, _counted(counts, key, getattr(module, name)))
    scene_module = importlib.import_module(f"{MODULE}.real2gym_addon.scene")
    to_report = scene_module.SceneDescription.to_report
    monkeypatch.setattr(scene_module.SceneDescription, "to_report", _counted(counts, "to_report", to_report))


def _counted(counts: Counter, key: str, function):
    def wrapper(*args, **kwargs):
        counts[key] += 1
        return function(*args, **kwargs)

    return wrapper


@pytest.fixture(scope="module")
def full_run(extension, tmp_path_factory) -> Path:
    """The output folder of one full run (every stage) of the bundled demo; :data:`RUN_COUNTS` counts it."""
    out = tmp_path_factory.mktemp("full") / "out"
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _counting(RUN_COUNTS, monkeypatch)
        assert bpy.ops.real2gym.run_pipeline(demo_dir=str(DEMO), out_dir=str(out)) == {"FINISHED"}
    return out


def test_a_run_simulates_once_serialises_its_report_once_and_saves_once(full_run: Path) -> None:
    """The run's own verification is what Blender keys: no second simulation on the main thread."""
    # One simulation of the scene, and the margin's perturbed copies (each its own model; never keyed).
    runs = importlib.import_module(f"{MODULE}.real2gym_addon.verify.margin").DEFAULT_RUNS
    assert dict(RUN_COUNTS) == {"simulate": 1 + runs, "to_report": 1, "save": 1}
    scene = _open(full_run)
    copy = bpy.data.objects["block sim"]
    assert copy.animation_data.action.frame_range[1] == 149 and scene.real2gym.out_dir == str(
        full_run.resolve()
    )


def test_a_fix_and_a_verify_simulate_once_each(run_copy: Path, monkeypatch) -> None:
    """A fix keys the simulation its re-verification made, and so does Verify; neither simulates again."""
    assert bpy.ops.real2gym.open_run(out_dir=str(run_copy)) == {"FINISHED"}  # it simulates: not counted
    scene = bpy.context.scene
    counts: Counter = Counter()
    _counting(counts, monkeypatch)
    assert bpy.ops.real2gym.offset_object(
        object_name="block", delta=(0.0, 0.002, 0.0), whole_motion=True
    ) == {"FINISHED"}
    assert counts["simulate"] == 1 + scene.real2gym.margin_runs and counts["save"] == 0, counts
    assert _report(run_copy)["edit_log"][-1]["kind"] == "offset"
    assert "block sim" in bpy.data.objects and scene.real2gym.fixes.verification in ("PASSED", "FAILED")
    counts.clear()
    assert bpy.ops.real2gym.verify() == {"FINISHED"}
    assert counts["simulate"] == 1 + scene.real2gym.margin_runs, counts


@pytest.fixture
def run_copy(full_run: Path, tmp_path: Path) -> Path:
    """A copy of the full run's output folder that a test may change."""
    return Path(shutil.copytree(full_run, tmp_path / "out"))


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _open(out: Path):
    bpy.ops.wm.open_mainfile(filepath=str(out / "scene.blend"))
    return bpy.context.scene


def _action(obj):
    return obj.animation_data.action if obj.animation_data else None


def _state(scene) -> dict:
    """What a user would see change: objects, their data and actions, markers, the camera."""
    return {
        "objects": sorted(
            (o.name, o.data.name if o.data else None, _action(o).name if _action(o) else None)
            for o in bpy.data.objects
        ),
        "meshes": sorted(m.name for m in bpy.data.meshes),
        "actions": sorted(a.name for a in bpy.data.actions),
        "collections": sorted(c.name for c in bpy.data.collections),
        "markers": sorted((m.name, m.frame) for m in scene.timeline_markers),
        "camera": [[round(v, 5) for v in row] for row in scene.camera.matrix_world] if scene.camera else None,
        "frame": scene.frame_current,
    }


def test_open_run_builds_the_scene_the_run_saved(full_run: Path) -> None:
    """Open Run rebuilds, from report.json alone, the scene the run itself built and saved: the same objects,
    meshes, actions, markers and camera; and the Keyframes panel holds the report without *Load Report*."""
    saved = _state(_open(full_run))
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    assert bpy.ops.real2gym.open_run(out_dir=str(full_run)) == {"FINISHED"}
    opened = _state(scene)
    for key in ("objects", "meshes", "actions", "collections", "markers", "camera"):
        assert opened[key] == saved[key], key
    fixes = scene.real2gym.fixes
    assert Path(fixes.report_dir) == full_run.resolve() and len(fixes.keyframes) == len(
        _report(full_run)["keyframes"]
    )
    assert fixes.verification == "PASSED" and Path(scene.real2gym.out_dir) == full_run.resolve()
    # A folder without a report: refused with its reason, the scene as it was.
    before = _state(scene)
    with pytest.raises(RuntimeError, match="report.json"):
        bpy.ops.real2gym.open_run(out_dir=str(full_run.parent / "nowhere"))
    assert _state(scene) == before


def test_a_run_loads_its_report_into_the_keyframes_panel(full_run: Path) -> None:
    scene = _open(full_run)
    fixes = scene.real2gym.fixes
    assert Path(fixes.report_dir) == full_run.resolve() and len(fixes.keyframes) >= 3


def test_run_builds_the_reconstruction(full_run: Path) -> None:
    report = _report(full_run)
    assert report["verification"]["passed"], report["verification"]["checks"]
    scene = _open(full_run)
    main = bpy.data.collections["Real2Gym"]
    # The camera sits where the report's world frame puts it.
    pose = Matrix(report["camera"]["world_from_camera"]) @ Matrix.Diagonal((1, -1, -1, 1))
    camera = scene.camera
    assert camera.name == "Real2Gym Camera"
    for row, expected in zip(camera.matrix_world, pose, strict=True):
        assert tuple(row) == pytest.approx(tuple(expected), abs=1e-5)
    # The table: a plane at z = 0 covering the seen extent.
    table = bpy.data.objects["Real2Gym Table"]
    assert table.real2gym.kind == "TABLE" and table.name in main.objects
    corners = [table.matrix_world @ Vector(c) for c in table.bound_box]
    assert max(abs(c.z) for c in corners) < 1e-6
    x0, y0, x1, y1 = report["table"]["extent_world"]
    assert min(c.x for c in corners) < x0 and max(c.x for c in corners) > x1
    assert min(c.y for c in corners) < y0 and max(c.y for c in corners) > y1
    for entry in report["objects"]:
        obj = bpy.data.objects[entry["name"]]
        assert obj.name in main.objects and obj.type == "MESH"
        settings = obj.real2gym
        assert (settings.kind, settings.source_name, settings.role, settings.shape) == (
            "OBJECT", entry["name"], entry["role"], entry["shape"],
        )  # fmt: skip
        assert (settings.mass, settings.density, settings.friction) == (0.0, 600.0, 1.0)
        assert tuple(obj.dimensions) == pytest.approx(entry["size"], abs=1e-3)
        # Collision pieces: wireframe children in the hidden collision collection.
        children = sorted(obj.children, key=lambda c: int(c.name.rsplit(" ", 1)[1]))
        assert [c.name for c in children] == [
            f"{obj.name} collision {i}" for i in range(len(entry["collision"]))
        ]
        for child in children:
            assert child.real2gym.kind == "COLLISION" and child.display_type == "WIRE"
            assert [c.name for c in child.users_collection] == ["Real2Gym Collision"]
            assert not child.visible_get() and child.hide_render
    # Timeline markers at the keyframes, named by event and object.
    markers = sorted((m.frame, m.name) for m in scene.timeline_markers)
    assert markers == sorted((k["frame"], f"{k['event']} {k['object']}") for k in report["keyframes"])
    assert [m.name for m in scene.real2gym.keyframe_markers] == [
        f"{k['event']} {k['object']}" for k in report["keyframes"]
    ]


def test_motion_plays_back_the_report(full_run: Path) -> None:
    report = _report(full_run)
    scene = _open(full_run)
    for frame in (0, 52, 80, 113, 149):
        scene.frame_set(frame)
        for entry in report["objects"]:
            obj = bpy.data.objects[entry["name"]]
            sample = entry["frames"][frame]
            assert tuple(obj.location) == pytest.approx(sample["position_world"], abs=1e-4)
            w, _, _, z = sample["quaternion_world"]
            turn = obj.rotation_euler.z - 2 * math.atan2(z, w)
            assert math.remainder(turn, 2 * math.pi) == pytest.approx(0.0, abs=1e-3)
            assert tuple(obj.rotation_euler[:2]) == (0.0, 0.0)


def test_a_tilted_object_is_keyed_with_its_tilt(run_copy: Path, extension) -> None:
    report = _report(run_copy)
    block = next(o for o in report["objects"] if o["name"] == "block")
    lean = Quaternion(Vector((0.35, -0.2, 0.0)).normalized(), Vector((0.35, -0.2, 0.0)).length)  # 23 degrees
    for sample in block["frames"][60:100]:
        sample["quaternion_world"] = list(lean @ Quaternion(sample["quaternion_world"]))
    (run_copy / "report.json").write_text(json.dumps(report))
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    _bridge("reconstruction").build_reconstruction(scene, run_copy)
    obj = bpy.data.objects["block"]
    for frame in (50, 60, 80, 99, 120):
        scene.frame_set(frame)
        expected = Quaternion(block["frames"][frame]["quaternion_world"]).to_matrix()
        found = obj.matrix_world.to_3x3()
        assert [v for r in found for v in r] == pytest.approx([v for r in expected for v in r], abs=1e-3), (
            frame
        )


def test_a_moving_camera_is_keyed_on_every_frame(full_run: Path, run_copy: Path, extension) -> None:
    """world_from_camera_frames in the report: the camera follows them, so the video stays registered;
    a later run with a camera that stays put takes the path off again."""
    report = _report(run_copy)
    still = Matrix(report["camera"]["world_from_camera"])
    frames = report["video"]["frames"]
    poses = []
    for frame in range(frames):
        turn = Matrix.Rotation(math.radians(5.0) * math.sin(frame / 10), 4, "Z")
        pose = turn @ still
        pose.translation += Vector((0.0, 0.01 * math.sin(frame / 7), 0.0))
        poses.append([list(row) for row in pose])
    report["camera"]["world_from_camera_frames"] = poses
    report["camera"]["camera_motion_source"] = "camera.json"
    (run_copy / "report.json").write_text(json.dumps(report))
    scene = _open(full_run)
    reconstruction = _bridge("reconstruction")
    reconstruction.build_reconstruction(scene, run_copy)
    camera = scene.camera
    for frame in (0, 17, 44, frames - 1):
        scene.frame_set(frame)
        expected = Matrix(poses[frame]) @ Matrix.Diagonal((1, -1, -1, 1))
        found = [v for row in camera.matrix_world for v in row]
        assert found == pytest.approx([v for row in expected for v in row], abs=1e-4), frame

    reconstruction.build_reconstruction(scene, full_run)
    assert camera.animation_data is None or camera.animation_data.action is None
    scene.frame_set(30)
    expected = still @ Matrix.Diagonal((1, -1, -1, 1))
    assert [v for row in camera.matrix_world for v in row] == pytest.approx(
        [v for row in expected for v in row], abs=1e-5
    )


def test_a_mugs_handle_is_its_own_part(full_run: Path, run_copy: Path, extension) -> None:
    """A cup with a handle: the handle is a child mesh an artist can select; a rebuild keeps its name."""
    report = _report(run_copy)
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    radius = cup["params"]["outer_radius"]
    handle = {"handle_reach": radius + 0.025, "handle_bottom": 0.02, "handle_top": 0.07,
              "handle_thickness": 0.008, "handle_width": 0.012}  # fmt: skip
    cup["params"].update(handle)
    cup["size"] = [2 * radius + 0.025, 2 * radius, cup["size"][2]]
    (run_copy / "report.json").write_text(json.dumps(report))
    scene = _open(full_run)
    reconstruction = _bridge("reconstruction")
    for _ in range(2):
        reconstruction.build_reconstruction(scene, run_copy)
        part = bpy.data.objects["cup.handle"]
        assert part.parent == bpy.data.objects["cup"] and part.real2gym.kind == "PART"
        assert part.type == "MESH" and len(part.data.vertices) > 8
        assert [o.name for o in bpy.data.objects if o.name.startswith("cup.handle")] == ["cup.handle"]
    # The handle sticks out on the cup's +x side, past the cup's own wall.
    scene.frame_set(0)
    corners = [part.matrix_world @ Vector(c) for c in part.bound_box]
    body = bpy.data.objects["cup"]
    local = [body.matrix_world.inverted() @ c for c in corners]
    assert max(c.x for c in local) > radius


def test_simulation_plays_on_its_own_copies(full_run: Path) -> None:
    report = _report(full_run)
    scene = _open(full_run)
    sim = bpy.data.collections["Real2Gym Sim"]
    names = sorted(o.name for o in sim.objects)
    assert names == sorted(
        [f"{e['name']} sim" for e in report["objects"]]
        + ["Real2Gym Sim Gripper", "Real2Gym Sim Gripper left finger", "Real2Gym Sim Gripper right finger"]
    )
    material = bpy.data.materials["Real2Gym Sim"]
    for entry in report["objects"]:
        original, copy = bpy.data.objects[entry["name"]], bpy.data.objects[f"{entry['name']} sim"]
        assert copy.real2gym.kind == "SIMULATION" and copy.rotation_mode == "QUATERNION"
        assert _action(copy) is not None and _action(copy) != _action(original)
        assert copy.data != original.data and copy.data.materials[0] == material
        assert tuple(copy.dimensions) == pytest.approx(entry["size"], abs=1e-3)
    block, block_sim = bpy.data.objects["block"], bpy.data.objects["block sim"]
    errors = []
    for frame in (0, 40, 80, 120, 149):
        scene.frame_set(frame)
        distance = (block_sim.matrix_world.translation - block.matrix_world.translation).length
        assert block_sim["real2gym_error_m"] == pytest.approx(distance, abs=2e-4)
        errors.append(block_sim["real2gym_error_m"])
    assert len(set(errors)) > 2, "the error property is not animated"
    # The block is carried: on frame 80 the simulated block is near the video's and in the gripper.
    scene.frame_set(80)
    assert errors[2] < 0.03
    gripper = bpy.data.objects["Real2Gym Sim Gripper"]
    assert (gripper.matrix_world.translation - block_sim.matrix_world.translation).length < 0.05
    left = bpy.data.objects["Real2Gym Sim Gripper left finger"]
    right = bpy.data.objects["Real2Gym Sim Gripper right finger"]
    gap = (left.matrix_world.translation - right.matrix_world.translation).length - left.dimensions.y
    assert gap == pytest.approx(report["objects"][0]["size"][1], abs=0.006)


def test_reimport_replaces_only_the_simulation_actions(full_run: Path) -> None:
    scene = _open(full_run)
    reconstruction = {
        n: (_action(bpy.data.objects[n]).name, _action(bpy.data.objects[n]).as_pointer())
        for n in ("block", "cup")
    }
    before_sim = {o.name: _action(o).name for o in bpy.data.collections["Real2Gym Sim"].objects}
    objects_before = sorted(o.name for o in bpy.data.objects)
    assert bpy.ops.real2gym.import_simulation(out_dir=str(full_run)) == {"FINISHED"}
    for name, (action_name, pointer) in reconstruction.items():
        action = _action(bpy.data.objects[name])
        assert (action.name, action.as_pointer()) == (action_name, pointer)
    assert sorted(o.name for o in bpy.data.objects) == objects_before
    after_sim = {o.name: _action(o).name for o in bpy.data.collections["Real2Gym Sim"].objects}
    assert after_sim.keys() == before_sim.keys()
    assert all(bpy.data.actions.get(a) is None for a in before_sim.values() if a not in after_sim.values())
    assert len(bpy.data.actions) == len(reconstruction) + len(after_sim)
    scene.frame_set(80)
    assert bpy.data.objects["block sim"]["real2gym_error_m"] < 0.03


def test_rerun_updates_unedited_objects_in_place(full_run: Path) -> None:
    scene = _open(full_run)
    scene.timeline_markers.new("my note", frame=30)
    scene.timeline_markers.new("grasp block", frame=7)  # the user's, though named like ours
    block = bpy.data.objects["block"]
    block.real2gym.mass = 0.2
    pointer = block.as_pointer()
    result = _bridge("reconstruction").build_reconstruction(scene, full_run)
    assert result.kept == [] and result.warnings == []
    assert bpy.data.objects["block"].as_pointer() == pointer and bpy.data.objects[
        "block"
    ].real2gym.mass == pytest.approx(0.2)
    assert bpy.data.collections.get("Real2Gym (new)") is None
    assert sorted(o.name for o in bpy.data.objects if o.real2gym.kind == "OBJECT") == ["block", "cup"]
    assert len([o for o in bpy.data.objects if o.real2gym.kind == "COLLISION"]) == 1 + 17
    assert len(bpy.data.meshes) == len(bpy.data.objects) - 1  # the camera has none; no leftovers
    markers = sorted((m.name, m.frame) for m in scene.timeline_markers)
    assert ("my note", 30) in markers and ("grasp block", 7) in markers
    assert len(markers) == 2 + len(_report(full_run)["keyframes"])


def test_edited_objects_are_kept_on_rerun(full_run: Path, extension) -> None:
    scene = _open(full_run)
    scene.frame_set(80)
    bpy.data.objects["block"].scale = (1.5, 1.5, 1.5)
    bpy.data.objects["block"].real2gym.mass = 0.07
    bpy.data.objects["cup"].location.x += 0.05  # moved, not keyed
    reconstruction = _bridge("reconstruction")
    log = extension.real2gym_addon.errors.WarningLog()  # the pipeline passes its run's log
    result = reconstruction.build_reconstruction(scene, full_run, log)
    assert sorted(result.kept) == ["block", "cup"] and len(result.warnings) == 2
    assert [(w.stage, w.message) for w in log.warnings] == [("blender", m) for m in result.warnings]
    assert "'block' was edited" in " ".join(result.warnings)
    assert tuple(bpy.data.objects["block"].scale) == (1.5, 1.5, 1.5)
    new = bpy.data.collections["Real2Gym (new)"]
    assert sorted((o.name, o.real2gym.source_name) for o in new.objects) == [
        ("block.001", "block"),
        ("cup.001", "cup"),
    ]
    assert bpy.data.objects["block.001"].real2gym.mass == pytest.approx(0.07)
    assert tuple(bpy.data.objects["block.001"].scale) == (1.0, 1.0, 1.0)
    # Again: the kept edits stay, the new versions are updated in place, nothing piles up.
    again = reconstruction.build_reconstruction(scene, full_run)
    assert sorted(again.kept) == ["block", "cup"]
    assert sorted(o.name for o in new.objects) == ["block.001", "cup.001"]
    assert len([o for o in bpy.data.objects if o.real2gym.kind == "OBJECT"]) == 4


def test_failures_leave_the_scene_unchanged(full_run: Path, run_copy: Path, extension) -> None:
    scene = _open(full_run)
    scene.frame_set(80)
    before = _state(scene)
    reconstruction, simulation = _bridge("reconstruction"), _bridge("simulation")
    # A failure half-way through building: everything is put back.
    original = reconstruction._set_markers

    def failing(*args):
        raise extension.real2gym_addon.errors.Real2GymError("interrupted")

    reconstruction._set_markers = failing
    try:
        with pytest.raises(extension.real2gym_addon.errors.Real2GymError, match="interrupted"):
            reconstruction.build_reconstruction(scene, full_run)
    finally:
        reconstruction._set_markers = original
    assert _state(scene) == before
    # A corrupt report: every entry point refuses and changes nothing.
    (run_copy / "report.json").write_text("{")
    with pytest.raises(extension.real2gym_addon.errors.Real2GymError, match="not valid JSON"):
        reconstruction.build_reconstruction(scene, run_copy)
    with pytest.raises(extension.real2gym_addon.errors.Real2GymError, match="not valid JSON"):
        simulation.import_simulation(scene, run_copy)
    for operator in (bpy.ops.real2gym.verify, bpy.ops.real2gym.import_simulation, bpy.ops.real2gym.compare):
        with pytest.raises(RuntimeError, match="not valid JSON"):
            operator(out_dir=str(run_copy))
    assert _state(scene) == before
    # A tampered report (a NaN pose, a path for a name, a file outside the run): refused the same way.
    good = json.loads((full_run / "report.json").read_text())
    tamperings = [
        (
            lambda r: r["objects"][0]["frames"][5].update(position_cam=[float("nan"), 0, 0]),
            "is NaN or infinite",
        ),
        (lambda r: r["objects"][0].update(name="../../x"), "the object name '../../x' contains '/'"),
        (lambda r: r["artifacts"].update(mjcf="/etc/passwd"), "is an absolute path"),
    ]
    for tamper, message in tamperings:
        report = json.loads(json.dumps(good))
        tamper(report)
        (run_copy / "report.json").write_text(json.dumps(report))
        with pytest.raises(extension.real2gym_addon.errors.Real2GymError, match=message):
            reconstruction.build_reconstruction(scene, run_copy)
        for operator in (bpy.ops.real2gym.verify, bpy.ops.real2gym.import_simulation):
            with pytest.raises(RuntimeError, match=message):
                operator(out_dir=str(run_copy))
    assert _state(scene) == before


def test_toggle_collision_shows_and_hides_the_pieces(full_run: Path) -> None:
    _open(full_run)
    piece = bpy.data.objects["cup collision 3"]
    assert not piece.visible_get()
    assert bpy.ops.real2gym.toggle_collision() == {"FINISHED"}
    assert piece.visible_get() and bpy.context.scene.real2gym.show_collision
    bpy.ops.real2gym.toggle_collision()
    assert not piece.visible_get()


def test_verify_uses_the_masses_set_in_blender(full_run: Path, run_copy: Path) -> None:
    scene = _open(full_run)
    scene.real2gym.out_dir = str(run_copy)
    bpy.data.objects["block"].real2gym.mass = 0.05
    cup = bpy.data.objects["cup"]
    cup.real2gym.density = 1200.0
    assert bpy.ops.real2gym.verify() == {"FINISHED"}
    report = _report(run_copy)
    assert report["verification"]["checks"]["support"]["weight_n"] == pytest.approx(0.05 * 9.81, rel=0.01)
    assert scene.real2gym.verification_status == "Verified"
    summary = importlib.import_module(f"{MODULE}.state.watch").verification_summary(scene)
    assert summary.verified and [r.label for r in summary.checks][:2] == ["Task", "Grasp"]
    assert all(r.passed and r.figure for r in summary.checks)
    # The cup's mass is its density times its collision volume.
    shapes = importlib.import_module(f"{MODULE}.real2gym_addon.geometry.shapes")
    entry = next(e for e in report["objects"] if e["name"] == "cup")
    volume = _bridge("verification").collision_volume(shapes.Shape.from_report(entry))
    typed = importlib.import_module(f"{MODULE}.real2gym_addon.report").Report.from_json(report)
    masses, frictions, _ = _bridge("verification").physics_overrides(scene, typed)
    assert masses == {"block": pytest.approx(0.05), "cup": pytest.approx(1200.0 * volume)} and frictions == {}


def _shorten(out: Path, frames: int) -> None:
    """Cuts a run down to its first frames (a quick comparison)."""
    report = _report(out)
    report["video"]["frames"] = frames
    for entry in report["objects"]:
        entry["frames"] = entry["frames"][:frames]
    report["gripper"]["frames"] = report["gripper"]["frames"][:frames]
    report["keyframes"] = [k for k in report["keyframes"] if k["frame"] < frames]
    (out / "report.json").write_text(json.dumps(report))


def test_compare_renders_the_reconstruction_in_blender(full_run: Path, run_copy: Path, extension) -> None:
    import numpy as np

    _shorten(run_copy, 12)
    scene = _open(full_run)
    scene.frame_set(5)
    engine, resolution = scene.render.engine, scene.render.resolution_percentage
    comparison = _bridge("comparison")
    compared = comparison.compare_in_scene(scene, run_copy)
    assert (run_copy / "compare" / "errors.png").is_file()
    assert compared.blender_tile, compared.warnings
    assert (run_copy / compared.artifacts["comparison_video"]).is_file()
    assert _report(run_copy)["artifacts"]["comparison_video"] == "compare/comparison.mp4"
    assert (scene.render.engine, scene.render.resolution_percentage, scene.frame_current) == (
        engine,
        resolution,
        5,
    )
    # Where Blender cannot render, MuJoCo's render of the reconstruction stands in, and it says so.
    original = comparison.BlenderTileRenderer.render

    def no_opengl(self, frame):
        raise RuntimeError("no OpenGL context")

    comparison.BlenderTileRenderer.render = no_opengl
    try:
        fallback = comparison.compare_in_scene(scene, run_copy)
    finally:
        comparison.BlenderTileRenderer.render = original
    assert not fallback.blender_tile and "no OpenGL context" in fallback.warnings[0]
    cv2 = importlib.import_module("cv2")
    video = cv2.VideoCapture(str(run_copy / "compare" / "comparison.mp4"))
    ok, frame = video.read()
    assert ok and frame.shape[1] == 3 * 320 and np.asarray(frame).std() > 5


def test_blender_tile_shows_the_objects_where_the_video_does(full_run: Path, tmp_path: Path) -> None:
    report = _report(full_run)
    scene = _open(full_run)
    scene.frame_set(3)
    engine = scene.render.engine
    camera = report["camera"]
    comparison = _bridge("comparison")
    with comparison.BlenderTileRenderer(scene, tmp_path, 640, 480) as renderer:
        image = renderer(80)
    assert (scene.render.engine, scene.frame_current) == (engine, 3)
    assert image.shape == (480, 640, 3)
    background = image[5, 5].astype(int)
    for entry in report["objects"]:
        x, y, z = entry["frames"][80]["position_cam"]
        u, v = camera["fx"] * x / z + camera["cx"], camera["fy"] * y / z + camera["cy"]
        pixel = image[int(round(v)), int(round(u))].astype(int)
        assert abs(pixel - background).sum() > 60, (entry["name"], pixel, background)


def _poll(job, scene, limit_s: float = 120.0):
    """Drives a job as the modal operator's timer does; returns its outcome."""
    import time

    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        if job.done and job.advance(scene):
            return job.outcome
        time.sleep(0.02)
    raise AssertionError("the job did not finish")


def test_background_jobs_give_what_the_scripts_give(full_run: Path, run_copy: Path, extension) -> None:
    scene = _open(full_run)
    verification = _bridge("verification")
    imported = _poll(verification.import_job(scene, full_run).start(), scene)
    assert imported.objects == ["block sim", "cup sim"] and imported.frames == 150
    assert imported.max_error_m["block"] < 0.03
    verified = _poll(verification.verify_job(scene, run_copy).start(), scene)
    assert verified.passed and verified.failed == [] and scene.real2gym.verification_status == "Verified"
    # The comparison's job: Blender renders on the main thread, then composing in a thread.
    _shorten(run_copy, 6)
    job = _bridge("comparison").CompareJob(scene, run_copy).start()
    compared = _poll(job, scene)
    assert compared.blender_tile and (run_copy / "compare" / "comparison.mp4").is_file()
    assert scene.render.engine != "BLENDER_WORKBENCH"
    # Cancelling while rendering restores the scene's settings at once.
    job = _bridge("comparison").CompareJob(scene, run_copy).start()
    assert scene.render.engine == "BLENDER_WORKBENCH"
    job.cancel()
    assert scene.render.engine != "BLENDER_WORKBENCH"
    with pytest.raises(extension.real2gym_addon.errors.Cancelled):
        _poll(job, scene)
