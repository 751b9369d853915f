"""Fixing a broken scene: suggestions, fixes, the opening probe, undo, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.fixes import (
    CollisionError,
    FixError,
    apply_fix,
    opening_probe,
    set_collision,
    undo_last,
)
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.report import read_report

DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"


@pytest.fixture(scope="module")
def verified_run(verified_demo_run: Path) -> Path:
    return verified_demo_run


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "run"))


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def test_a_narrow_rim_is_found_suggested_and_fixed(verified_run: Path, tmp_path: Path, capsys) -> None:
    out = _copy(verified_run, tmp_path)
    report = _report(out)
    block = next(o for o in report["objects"] if o["name"] == "block")
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    half_diagonal = (block["size"][0] ** 2 + block["size"][1] ** 2) ** 0.5 / 2
    factor = 0.85 * half_diagonal / cup["params"]["inner_radius"]  # 15 % too narrow
    assert main(["fix", str(out), "--object", "cup", "--rim-scale", str(factor)]) == 1
    broken = _report(out)
    assert not broken["verification"]["checks"]["task_success"]["passed"]
    suggestion = broken["verification"]["suggestions"][0]
    assert suggestion["fix"]["kind"] == "radius_scale" and suggestion["fix"]["object"] == "cup"
    assert suggestion["frame"] in {k["frame"] for k in broken["keyframes"]}  # points at a keyframe
    assert main(["fix", str(out), "--apply-suggestion", "1"]) == 0
    fixed = _report(out)
    assert fixed["verification"]["passed"]
    assert [e["kind"] for e in fixed["edit_log"]] == ["radius_scale", "radius_scale"]
    assert next(o for o in fixed["objects"] if o["name"] == "cup")["edits"][-1]["args"] == {
        "factor": suggestion["fix"]["factor"]
    }
    # Undo brings back the broken rim, byte for byte in the object's shape.
    assert main(["fix", str(out), "--undo", "--no-verify"]) == 0
    undone = next(o for o in _report(out)["objects"] if o["name"] == "cup")
    assert undone["params"] == next(o for o in broken["objects"] if o["name"] == "cup")["params"]


def test_a_hull_closed_cup_gets_walls(verified_run: Path, tmp_path: Path) -> None:
    out = _copy(verified_run, tmp_path)
    assert main(["fix", str(out), "--object", "cup", "--collision", "hull"]) == 1
    report = _report(out)
    assert report["edit_log"][-1]["opening_probe"]["passed"] is False
    suggestion = report["verification"]["suggestions"][0]
    assert suggestion["fix"] == {"kind": "collision", "object": "cup", "mode": "walls"}
    assert main(["fix", str(out), "--apply-suggestion", "1"]) == 0
    assert _report(out)["verification"]["passed"]


def test_recorded_fixes_apply_to_another_run(verified_run: Path, tmp_path: Path) -> None:
    first = Path(shutil.copytree(verified_run, tmp_path / "first"))
    second = Path(shutil.copytree(verified_run, tmp_path / "second"))
    main(["fix", str(first), "--object", "cup", "--rim-scale", "1.05", "--no-verify"])
    assert main(["fix", str(second), "--from-report", str(first / "report.json"), "--no-verify"]) == 0
    cups = [next(o for o in _report(p)["objects"] if o["name"] == "cup") for p in (first, second)]
    assert cups[0]["params"] == cups[1]["params"]


def test_opening_probe_walls_and_coacd_pass_a_hull_fails(verified_run: Path) -> None:
    cup = Shape.from_report(next(o for o in read_report(verified_run).objects if o["name"] == "cup"))
    assert opening_probe(set_collision(cup, "walls"))["passed"]
    assert not opening_probe(set_collision(cup, "hull"))["passed"]
    coacd = set_collision(cup, "coacd", threshold=0.05, max_pieces=16)
    assert len(coacd.hulls) > 4 and opening_probe(coacd)["passed"]


def test_bad_fixes_change_nothing(verified_run: Path) -> None:
    report = read_report(verified_run).to_json()
    before = json.dumps(report, sort_keys=True)
    with pytest.raises(FixError, match="no object named 'mug'"):
        apply_fix(report, {"kind": "radius_scale", "object": "mug", "factor": 1.1})
    with pytest.raises(FixError, match="object 'block' is a box, not a container"):
        apply_fix(report, {"kind": "radius_scale", "object": "block", "factor": 1.1})
    with pytest.raises(FixError, match="the scale along y is 0; it must lie between 0.2 and 5"):
        apply_fix(report, {"kind": "scale", "object": "block", "factors": [1, 0, 1]})
    with pytest.raises(FixError, match="the rim scale is -2; it must lie between 0.2 and 5"):
        apply_fix(report, {"kind": "radius_scale", "object": "cup", "factor": -2})
    with pytest.raises(FixError, match="the rim scale is 1e\\+09"):
        apply_fix(report, {"kind": "radius_scale", "object": "cup", "factor": 1e9})
    with pytest.raises(FixError, match="the offset along z \\(metres\\) is 5"):
        apply_fix(report, {"kind": "offset", "object": "cup", "delta": [0, 0, 5], "frame": 3})
    with pytest.raises(FixError, match="the keyframe's frame 400 is outside the video"):
        apply_fix(report, {"kind": "keyframe", "object": "block", "event": "grasp", "frame": 400})
    with pytest.raises(CollisionError, match="walls need a container"):
        apply_fix(report, {"kind": "collision", "object": "block", "mode": "walls"})
    with pytest.raises(FixError, match="no fix to undo"):
        undo_last(report)
    assert json.dumps(report, sort_keys=True) == before


def test_an_offset_until_a_frame_moves_the_resting_pose_and_blends_out(verified_run: Path) -> None:
    report = read_report(verified_run).to_json()
    before = np.array([f["position_world"] for f in _block(report)["frames"]])
    apply_fix(report, {"kind": "offset", "object": "block", "delta": [0.02, 0, 0], "frame": 40, "blend": 4,
                       "until": True})  # fmt: skip
    moved = np.array([f["position_world"] for f in _block(report)["frames"]]) - before
    assert np.allclose(moved[:41, 0], 0.02, atol=1e-5) and np.allclose(moved[44:], 0.0, atol=1e-5)
    assert 0.0 < moved[42, 0] < 0.02 and np.allclose(moved[:, 1:], 0.0, atol=1e-5)
    with pytest.raises(FixError, match="'until' must be true or false"):
        apply_fix(
            report, {"kind": "offset", "object": "block", "delta": [0, 0, 0], "frame": 3, "until": "yes"}
        )


def _block(report: dict) -> dict:
    return next(o for o in report["objects"] if o["name"] == "block")


def test_coacd_time_limit_keeps_the_previous_collision(verified_run: Path) -> None:
    from real2gym.real2gym_addon.fixes.collision import coacd_pieces

    cup = Shape.from_report(next(o for o in read_report(verified_run).objects if o["name"] == "cup"))
    with pytest.raises(CollisionError, match="CoACD took longer than 0 s"):
        coacd_pieces(cup, time_limit=0.01)
