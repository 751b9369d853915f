"""Suggested fixes for a moving part's joint: each broken joint of the session's cabinet (``cabinet_run``) fails
verification, the suggestion read from the report's evidence (the video's values, the recorded hand's arc, a
hinge off plumb, a stiff joint) names the fix, and applying it verifies the scene again."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.fixes.joint_rules import joint_repair
from real2gym.real2gym_addon.fixes.rules import SuggestionContext
from real2gym.real2gym_addon.fixes.suggest import suggest_fixes


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "out", ignore=shutil.ignore_patterns("variants", "try_*")))


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _joint(out: Path) -> dict:
    cabinet = next(o for o in _report(out)["objects"] if o["name"] == "cabinet")
    return cabinet["parts"][0]["joint"]


def _broken_then_repaired(out: Path, *edit: str) -> dict:
    """Breaks the door's joint with ``edit`` (fix options), checks it fails, applies the joint suggestion and
    returns it once the scene verifies again."""
    main(["fix", str(out), "--object", "cabinet", "--part", "door", *edit, "-q"])
    report = _report(out)
    assert not report["verification"]["passed"]
    suggestions = suggest_fixes(report)
    joint = [i for i, s in enumerate(suggestions) if s["fix"]["kind"] == "joint"]
    assert joint, [s["text"] for s in suggestions]
    main(["fix", str(out), "--apply-suggestion", str(joint[0] + 1), "-q"])
    assert _report(out)["verification"]["passed"], _report(out)["verification"]["checks"]
    return suggestions[joint[0]]


def test_a_verified_door_gets_no_joint_suggestion(cabinet_run: Path) -> None:
    report = _report(cabinet_run)
    assert report["verification"]["passed"]
    assert not [s for s in suggest_fixes(report) if s["fix"]["kind"] == "joint"]


def test_a_range_short_of_the_video_is_widened_to_it(cabinet_run: Path, tmp_path: Path) -> None:
    out = _copy(cabinet_run, tmp_path)
    suggestion = _broken_then_repaired(out, "--joint-range", "0,0.9")
    low, high = suggestion["fix"]["range"]
    seen = max(f["q"] for f in _report(out)["objects"][0]["parts"][0]["frames"] if f.get("q") is not None)
    assert low == 0.0 and seen < high < seen + 0.05  # only the end the video passes moves
    assert "past its range" in suggestion["text"]


def test_a_hinge_off_plumb_is_made_plumb(cabinet_run: Path, tmp_path: Path) -> None:
    out = _copy(cabinet_run, tmp_path)
    suggestion = _broken_then_repaired(out, "--joint-axis", "0.14,0,-0.99")
    assert np.allclose(np.abs(suggestion["fix"]["axis"]), [0, 0, 1])
    assert "8.0 degrees off plumb" in suggestion["text"]


def test_a_hinge_off_the_held_hands_arc_is_moved_onto_it(cabinet_run: Path, tmp_path: Path) -> None:
    out = _copy(cabinet_run, tmp_path)
    joint = _joint(out)
    pivot, axis = np.array(joint["pivot_world"]), np.array(joint["axis_world"])
    body = np.array(
        next(o for o in _report(out)["objects"] if o["name"] == "cabinet")["frames"][0]["position_world"]
    )
    inward = (body - pivot) - axis * ((body - pivot) @ axis)
    moved = pivot + 0.015 * inward / np.linalg.norm(inward)  # 1.5 cm into the body: the handle is torn away
    suggestion = _broken_then_repaired(out, "--joint-pivot", ",".join(f"{v:.5f}" for v in moved))
    back = np.array(suggestion["fix"]["pivot"]) - pivot
    assert np.linalg.norm(back - axis * (back @ axis)) < 0.004  # back on the line the estimate had
    assert suggestion["check"] in ("grasp_held", "joint_fidelity")  # the handle torn away, the door lagging


def test_a_stiff_hinge_is_set_back_to_the_default(cabinet_run: Path, tmp_path: Path) -> None:
    out = _copy(cabinet_run, tmp_path)
    suggestion = _broken_then_repaired(out, "--joint-frictionloss", "5")
    assert suggestion["fix"] == {"kind": "joint", "object": "cabinet", "part": "door", "frictionloss": 0.02}


def _slide_report(axis: list[float], hand_line: np.ndarray, source: str = "trajectory.json") -> dict:
    """A report of a drawer on a slide along ``axis``, pulled by a hand that moved along ``hand_line``."""
    frames = [{"frame": f, "position_world": (np.array([0.0, 0.2, 0.2]) + 0.01 * f * hand_line).tolist()}
              for f in range(20)]  # fmt: skip
    joint = {"type": "slide", "axis_world": axis, "pivot_world": [0, 0.2, 0.2], "range": [0.0, 0.2],
             "closed": 0.0, "damping": 2.0, "frictionloss": 0.3}  # fmt: skip
    part = {"name": "drawer", "joint": joint, "frames": [{"frame": f, "q": 0.01 * f} for f in range(20)]}
    return {
        "objects": [{"name": "chest", "parts": [part]}],
        "gripper": {"source": source, "frames": frames},
        "keyframes": [
            {"frame": 2, "event": "grasp", "object": "chest.drawer"},
            {"frame": 18, "event": "release", "object": "chest.drawer"},
        ],  # fmt: skip
    }


def _asked(report: dict, failing: set[str]) -> list[dict]:
    context = SuggestionContext(report=report, checks={}, failing=failing, moved_name="chest", target_name=None,
                                moved=None, target_entry=None, target=None, release=None, contact=None)  # fmt: skip
    return joint_repair(context, [])


def test_a_slide_off_the_held_hands_line_is_turned_onto_it() -> None:
    turn = math.radians(6.0)
    line = np.array([math.sin(turn), math.cos(turn), 0.0])
    report = _slide_report([0.0, 1.0, 0.0], line)
    (suggestion,) = _asked(report, {"grasp_held"})
    assert np.allclose(suggestion["fix"]["axis"], line, atol=1e-4)
    assert "6.0 degrees off its slide" in suggestion["text"]
    # Nothing fails, nothing is suggested; a hand on the slide's line, or one the stage synthesised from the
    # joint itself, says nothing of it.
    assert _asked(report, set()) == []
    assert _asked(_slide_report([0.0, 1.0, 0.0], np.array([0.0, 1.0, 0.0])), {"grasp_held"}) == []
    assert _asked(_slide_report([0.0, 1.0, 0.0], line, "synthesised"), {"grasp_held"}) == []


@pytest.mark.parametrize("axis", [[0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
def test_a_hinge_square_or_far_from_it_is_left_as_it_is(axis: list[float]) -> None:
    report = _slide_report([0.0, 1.0, 0.0], np.array([0.0, 1.0, 0.0]))
    part = report["objects"][0]["parts"][0]
    part["joint"].update(type="hinge", axis_world=axis, range=[0.0, 1.0], damping=0.05, frictionloss=0.02)
    part["frames"] = [{"frame": f, "q": 0.04 * f} for f in range(20)]
    assert _asked(report, {"joint_fidelity"}) == []
