"""Fixing a finished run in Blender: the keyframe list, fix operators, suggestions, undo.

Every test works on a copy of one pipeline run on the bundled demo (made once,
through the installed extension's own core). Fixes go through the operators
(``execute``: synchronous, like a script) and must give what the command line
gives; bad input must leave report.json byte for byte as it was.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import bpy
import numpy as np
import pytest

MODULE = "bl_ext.user_default.real2gym"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"

pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")


def _module(name: str):
    return importlib.import_module(f"{MODULE}.{name}")


@pytest.fixture(scope="module", autouse=True)
def fixes(extension):
    """The bridge's fixes module; the extension registers the fix UI."""
    assert hasattr(bpy.types, "REAL2GYM_OT_rim_scale") and hasattr(bpy.types, "REAL2GYM_PT_fixes")
    return _module("bridge.fixes")


@pytest.fixture(scope="module")
def verified_run(verified_demo_run: Path) -> Path:
    return verified_demo_run


@pytest.fixture
def run(verified_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(verified_run, tmp_path / "run"))


def _cli(*args: str) -> int:
    return _module("real2gym_addon.cli").main([str(a) for a in args])


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _open(scene, out: Path):
    scene.real2gym.out_dir = str(out)
    assert bpy.ops.real2gym.load_review() == {"FINISHED"}
    return scene.real2gym.fixes


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "time"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _shapes(report: dict) -> dict:
    """Each object's report entry without its edit log."""
    return {o["name"]: {k: v for k, v in o.items() if k != "edits"} for o in report["objects"]}


def _narrow_rim_factor(report: dict) -> float:
    """A rim scale that leaves the cup's inner radius 15 % short of the block's half-diagonal."""
    block = next(o for o in report["objects"] if o["name"] == "block")
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    half_diagonal = (block["size"][0] ** 2 + block["size"][1] ** 2) ** 0.5 / 2
    return 0.85 * half_diagonal / cup["params"]["inner_radius"]


def test_keyframe_list_shows_the_checks_and_jumps_to_the_frame(fixes, run: Path, empty_scene) -> None:
    state = _open(empty_scene, run)
    report = _report(run)
    assert [(k.event, k.object_name, k.frame) for k in state.keyframes] == [
        (k["event"], k["object"], k["frame"]) for k in sorted(report["keyframes"], key=lambda k: k["frame"])
    ]
    assert [k.event for k in state.keyframes] == ["grasp", "lift", "release", "contact"]
    assert state.keyframes[0].checks == "grasp_held"
    assert state.keyframes[3].checks == "task_success, support, penetration"
    assert {k.verdict for k in state.keyframes} == {"PASSED"} and state.verification == "PASSED"
    assert [c.name for c in state.checks] == list(report["verification"]["checks"])
    assert len(state.suggestions) == 0 and state.fix_object == "cup"

    state.active_keyframe_index = 2  # the release: the list's selection jumps there
    release = state.keyframes[2].frame
    assert empty_scene.frame_current == release
    core = _module("real2gym_addon.fixes.review").silhouette_ious(
        report, run, "block", range(release - 2, release + 3)
    )
    assert [(i.frame, i.measured, round(i.iou, 4)) for i in state.ious] == [
        (f, v is not None, round(v or 0.0, 4)) for f, v in core.items()
    ]
    assert state.iou_object == "block" and state.ious[2].iou > 0.6


def test_operator_and_cli_give_the_same_report(run: Path, tmp_path: Path, empty_scene) -> None:
    by_cli = Path(shutil.copytree(run, tmp_path / "cli"))
    _open(empty_scene, run)
    assert bpy.ops.real2gym.rim_scale(object_name="cup", factor=1.07) == {"FINISHED"}
    assert bpy.ops.real2gym.set_collision(object_name="cup", mode="walls") == {"FINISHED"}
    assert bpy.ops.real2gym.add_keyframe(object_name="block", event="grasp", frame=53) == {"FINISHED"}
    assert _cli("fix", by_cli, "--object", "cup", "--rim-scale", "1.07") == 0
    assert _cli("fix", by_cli, "--object", "cup", "--collision", "walls") == 0
    assert _cli("fix", by_cli, "--object", "block", "--keyframe", "grasp=53") == 0
    reports = [_report(p) for p in (run, by_cli)]
    for key in ("objects", "keyframes", "edit_log"):
        assert _without_times(reports[0][key]) == _without_times(reports[1][key]), key
    assert reports[0]["verification"]["checks"] == reports[1]["verification"]["checks"]
    assert [e["kind"] for e in reports[0]["edit_log"]] == ["radius_scale", "collision", "keyframe"]


def test_a_narrow_rim_is_suggested_applied_and_undone(fixes, run: Path, empty_scene) -> None:
    assert _cli("fix", run, "--object", "cup", "--rim-scale", _narrow_rim_factor(_report(run))) == 1
    broken = _report(run)
    state = _open(empty_scene, run)
    assert state.verification == "FAILED" and state.edit_count == 1
    contact = next(k for k in state.keyframes if k.event == "contact")
    assert contact.verdict == "FAILED" and "task_success" in contact.failed
    assert next(k for k in state.keyframes if k.event == "grasp").verdict == "PASSED"
    suggestion = state.suggestions[0]
    assert suggestion.kind == "radius_scale" and "scale its rim by" in suggestion.name
    assert bpy.ops.real2gym.go_to_frame(frame=suggestion.frame) == {"FINISHED"}
    assert empty_scene.frame_current == suggestion.frame
    assert state.keyframes[state.active_keyframe_index].frame == suggestion.frame

    assert bpy.ops.real2gym.apply_suggestion(index=0) == {"FINISHED"}
    fixed = _report(run)
    assert fixed["verification"]["passed"] and state.verification == "PASSED"
    assert [e["kind"] for e in fixed["edit_log"]] == ["radius_scale", "radius_scale"]
    assert fixed["edit_log"][-1]["args"] == {
        "factor": broken["verification"]["suggestions"][0]["fix"]["factor"]
    }
    assert {k.verdict for k in state.keyframes} == {"PASSED"} and len(state.suggestions) == 0
    assert [e["kind"] for e in _module("bridge.review").edits_of(empty_scene, "cup")] == [
        "radius_scale",
        "radius_scale",
    ]
    assert "all checks passed" in state.status

    assert bpy.ops.real2gym.undo_fix() == {"FINISHED"}
    undone = _report(run)
    cup = next(o for o in undone["objects"] if o["name"] == "cup")
    assert cup["params"] == next(o for o in broken["objects"] if o["name"] == "cup")["params"]
    assert not undone["verification"]["passed"] and state.verification == "FAILED"
    assert state.edit_count == 1 and len(state.suggestions) == 1


def test_repair_applies_the_suggestions_and_each_step_is_undoable(fixes, run: Path, empty_scene) -> None:
    assert _cli("fix", run, "--object", "cup", "--rim-scale", _narrow_rim_factor(_report(run))) == 1
    state = _open(empty_scene, run)
    assert state.verification == "FAILED"
    assert bpy.ops.real2gym.repair() == {"FINISHED"}
    repaired = _report(run)
    assert repaired["repair"]["passed_before"] is False and repaired["repair"]["passed_after"] is True
    assert repaired["repair"]["rounds"][0]["fix"]["kind"] == "radius_scale"
    assert [e["kind"] for e in repaired["edit_log"]] == ["radius_scale", "radius_scale"]
    assert state.verification == "PASSED" and "Repaired in 1 kept step" in state.status
    assert bpy.ops.real2gym.undo_fix() == {"FINISHED"}
    assert state.verification == "FAILED" and state.edit_count == 1


def test_blender_undo_keeps_report_json_in_step(fixes, run: Path, empty_scene) -> None:
    """Blender's undo restores the scene's fix count; the handler brings report.json along, and back on redo."""
    state = _open(empty_scene, run)
    state.verify_after_fix = False
    before = _report(run)
    assert bpy.ops.real2gym.rim_scale(object_name="cup", factor=1.05) == {"FINISHED"}
    after = _report(run)
    state.edit_count = 0  # what an undo step from before the fix brings back
    fixes.sync_with_undo()
    assert _report(run).get("edit_log") == [] and state.edit_count == 0
    assert _shapes(_report(run)) == _shapes(before)
    state.edit_count = 1  # and a redo
    fixes.sync_with_undo()
    redone = _report(run)
    assert _without_times(redone["objects"]) == _without_times(after["objects"])
    assert state.edit_count == 1


def test_keyframes_are_added_moved_and_deleted_by_hand(run: Path, empty_scene) -> None:
    state = _open(empty_scene, run)
    state.verify_after_fix = False
    original = _report(run)["keyframes"]
    state.active_keyframe_index = 0  # grasp
    empty_scene.frame_set(55)
    assert bpy.ops.real2gym.move_keyframe() == {"FINISHED"}
    assert {(k["event"], k["frame"]) for k in _report(run)["keyframes"]} >= {("grasp", 55)}
    # Not verified after it: the verdict shown is marked out of date, not passed.
    assert state.verification == "STALE" and {k.verdict for k in state.keyframes} == {"UNKNOWN"}
    lift = next(i for i, k in enumerate(state.keyframes) if k.event == "lift")
    assert bpy.ops.real2gym.delete_keyframe(index=lift) == {"FINISHED"}
    assert "lift" not in {k["event"] for k in _report(run)["keyframes"]}
    empty_scene.frame_set(61)
    assert bpy.ops.real2gym.add_keyframe(object_name="block", event="lift") == {"FINISHED"}
    assert ("lift", 61) in {(k.event, k.frame) for k in state.keyframes}
    for _ in range(3):
        assert bpy.ops.real2gym.undo_fix() == {"FINISHED"}
    assert _report(run)["keyframes"] == original
    assert bpy.ops.real2gym.verify(out_dir=str(run)) == {"FINISHED"}
    assert state.verification == "PASSED" and {k.verdict for k in state.keyframes} == {"PASSED"}
    assert "stale" not in _report(run)["verification"]


def test_offset_and_scale_go_through_the_core(run: Path, empty_scene) -> None:
    core = _module("real2gym_addon.fixes")
    original, expected = _report(run), _report(run)
    core.apply_fix(
        expected, {"kind": "offset", "object": "block", "delta": [0.0, 0.01, 0.0], "frame": 80, "blend": 0}
    )
    core.apply_fix(expected, {"kind": "scale", "object": "cup", "factors": [1.0, 1.0, 1.1]})
    state = _open(empty_scene, run)
    state.verify_after_fix = False
    result = bpy.ops.real2gym.offset_object(object_name="block", delta=(0.0, 0.01, 0.0), frame=80, blend=0)
    assert result == {"FINISHED"}
    assert bpy.ops.real2gym.scale_object(object_name="cup", factors=(1.0, 1.0, 1.1)) == {"FINISHED"}
    assert _without_times(_report(run)["objects"]) == _without_times(expected["objects"])
    before, after = (
        next(o for o in r["objects"] if o["name"] == "block")["frames"] for r in (original, _report(run))
    )
    assert after[79]["position_world"] == before[79]["position_world"]
    assert after[80]["position_world"][1] == pytest.approx(before[80]["position_world"][1] + 0.01, abs=1e-5)


@pytest.mark.parametrize(
    ("operator", "arguments", "message"),
    [
        ("rim_scale", {"object_name": "block", "factor": 1.1}, "object 'block' is a box, not a container"),
        ("rim_scale", {"object_name": "mug", "factor": 1.1}, "no object named 'mug'"),
        ("rim_scale", {"object_name": "cup", "factor": -2.0}, "the rim scale is -2; it must lie between 0.2 and 5"),
        ("rim_scale", {"object_name": "cup", "factor": 1e9}, "the rim scale is 1e\\+09"),
        ("scale_object", {"object_name": "block", "factors": (1, 0, 1)}, "the scale along y is 0"),
        ("offset_object", {"object_name": "block", "delta": (5, 0, 0), "frame": 3}, "offset along x .* is 5"),
        ("add_keyframe", {"object_name": "block", "event": "grasp", "frame": 400}, "frame 400 is outside the video"),
        ("set_collision", {"object_name": "block", "mode": "walls"}, "walls need a container"),
        ("set_collision", {"object_name": "cup", "mode": "coacd", "time_limit": 0.01}, "CoACD took longer than 0 s"),
        ("opening_probe", {"object_name": "block"}, "not a container"),
        ("apply_suggestion", {"index": 0}, "there is no suggestion 1"),
        ("undo_fix", {}, "there is no fix to undo"),
    ],
)  # fmt: skip
def test_bad_fixes_report_the_core_message_and_change_nothing(
    run: Path, empty_scene, operator: str, arguments: dict, message: str
) -> None:
    state = _open(empty_scene, run)
    files = {p: p.read_bytes() for p in [run / "report.json", *(run / "mjcf").rglob("*")] if p.is_file()}
    shown = [(k.event, k.frame, k.verdict) for k in state.keyframes], state.verification, state.edit_count
    with pytest.raises(RuntimeError, match=message):
        getattr(bpy.ops.real2gym, operator)(**arguments)
    assert {p: p.read_bytes() for p in files} == files
    assert shown == (
        [(k.event, k.frame, k.verdict) for k in state.keyframes],
        state.verification,
        state.edit_count,
    )


def test_moving_a_keyframe_past_the_video_is_refused(run: Path, empty_scene) -> None:
    state = _open(empty_scene, run)
    before = (run / "report.json").read_bytes()
    state.active_keyframe_index = 0
    empty_scene.frame_set(400)
    with pytest.raises(RuntimeError, match="keyframe's frame 400 is outside the video"):
        bpy.ops.real2gym.move_keyframe()
    assert (run / "report.json").read_bytes() == before


def test_coacd_collision_runs_from_blender(run: Path, empty_scene) -> None:
    """CoACD in its own process works inside Blender too (not a multiprocessing child of Blender)."""
    state = _open(empty_scene, run)
    result = bpy.ops.real2gym.set_collision(object_name="cup", mode="coacd", threshold=0.05, max_pieces=16)
    assert result == {"FINISHED"}
    report = _report(run)
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    assert cup["collision_mode"] == "coacd" and len(cup["hulls"]) > 4
    assert report["edit_log"][-1]["opening_probe"]["passed"] and report["verification"]["passed"]
    assert "reaches the bottom" in state.probe_result and "opening probe: reaches" in state.status


def _knocking_approach(out: Path) -> dict:
    """Rewrites the run's hand path so that it comes in sideways at the grasp height, along the fingers'
    opening axis, over the 8 frames before the grasp: a pad sweeps through the block. Verifies it again."""
    report = _report(out)
    samples = report["gripper"]["frames"]
    grasp = next(k["frame"] for k in report["keyframes"] if k["event"] == "grasp")
    w, x, y, z = samples[grasp]["quaternion_world"]
    opening_axis = np.array([2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)])
    camera_from_world = np.linalg.inv(np.array(report["camera"]["world_from_camera"]))
    anchor = np.array(samples[grasp]["position_world"])
    for frame in range(grasp - 8, grasp):
        position = anchor + opening_axis * 0.07 * (grasp - frame) / 8
        samples[frame]["position_world"] = position.tolist()
        samples[frame]["position_cam"] = (
            camera_from_world[:3, :3] @ position + camera_from_world[:3, 3]
        ).tolist()
    (out / "report.json").write_text(json.dumps(report))
    assert _cli("verify", out) == 1
    return _report(out)


def test_a_rebuilt_approach_is_repaired_and_undone_in_blender(fixes, run: Path, empty_scene) -> None:
    broken = _knocking_approach(run)
    assert broken["verification"]["checks"]["hand_clearance"]["phase"] == "approach"
    state = _open(empty_scene, run)
    assert state.verification == "FAILED" and state.suggestions[0].kind == "approach"
    assert "knocks the block" in state.suggestions[0].name
    assert bpy.ops.real2gym.repair() == {"FINISHED"}
    repaired = _report(run)
    assert repaired["repair"]["passed_after"] and [e["kind"] for e in repaired["edit_log"]] == ["approach"]
    assert state.verification == "PASSED"
    assert bpy.ops.real2gym.undo_fix() == {"FINISHED"}
    assert _report(run)["gripper"]["frames"] == broken["gripper"]["frames"]
    assert state.verification == "FAILED" and state.edit_count == 0
