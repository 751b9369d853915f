"""What the keyframe list shows: the checks of each keyframe, and the silhouette IoU around it."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.fixes import FixError, apply_fix
from real2gym.real2gym_addon.fixes.review import keyframe_checks, silhouette_ious
from real2gym.real2gym_addon.report import read_report

DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"


@pytest.fixture(scope="module")
def verified_run(verified_demo_run: Path) -> Path:
    return verified_demo_run


def test_each_keyframe_names_its_checks_and_their_verdict(verified_run: Path) -> None:
    report = read_report(verified_run).to_json()
    rows = keyframe_checks(report)
    assert [(r["event"], r["object"]) for r in rows] == [
        ("grasp", "block"), ("lift", "block"), ("release", "block"), ("contact", "block"),
    ]  # fmt: skip
    assert [r["frame"] for r in rows] == sorted(k["frame"] for k in report["keyframes"])
    assert rows[0]["checks"] == ["grasp_held"]
    assert rows[3]["checks"] == ["task_success", "support", "penetration"]  # in report order
    assert all(r["passed"] is True and r["failed"] == [] for r in rows)

    # A failed task shows on the contact keyframe only; an unverified run has no verdicts.
    broken = copy.deepcopy(report)
    broken["verification"]["checks"]["task_success"]["passed"] = False
    verdicts = {r["event"]: (r["passed"], r["failed"]) for r in keyframe_checks(broken)}
    assert verdicts["contact"] == (False, ["task_success"]) and verdicts["grasp"] == (True, [])
    broken["verification"]["stale"] = True  # fixed since, not verified: no verdicts
    assert {r["passed"] for r in keyframe_checks(broken)} == {None}
    del broken["verification"]
    assert {r["passed"] for r in keyframe_checks(broken)} == {None}


def test_a_fix_written_without_verifying_marks_the_verdict_stale(verified_run: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(verified_run, tmp_path / "run"))
    assert main(["fix", str(out), "--object", "cup", "--rim-scale", "1.05", "--no-verify"]) == 0
    assert read_report(out).verification.stale is True
    assert main(["verify", str(out)]) == 0
    assert "stale" not in read_report(out).to_json()["verification"]


def test_silhouette_iou_follows_the_reconstruction(verified_run: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(verified_run, tmp_path / "run"))
    report = read_report(out).to_json()
    ious = silhouette_ious(report, out, "block", [-2, -1, 0, 1, 2])
    assert sorted(ious) == [0, 1, 2]  # frames outside the video are left out
    assert min(ious.values()) > 0.85, ious  # the fitted block covers its mask
    cup = silhouette_ious(report, out, "cup", [60])
    assert cup[60] > 0.9, cup

    # The block moved 3 cm sideways from frame 0 on: its silhouette leaves the mask.
    apply_fix(report, {"kind": "offset", "object": "block", "delta": [0.03, 0.0, 0.0], "frame": None})
    moved = silhouette_ious(report, out, "block", [0, 1, 2])
    assert all(moved[f] < ious[f] - 0.3 for f in moved), (ious, moved)

    # A missing or empty mask (the object hidden) has no IoU.
    (out / "masks" / "block" / "000001.png").unlink()
    import cv2

    cv2.imwrite(str(out / "masks" / "block" / "000002.png"), np.zeros((480, 640), np.uint8))
    gaps = silhouette_ious(report, out, "block", [0, 1, 2])
    assert gaps[1] is None and gaps[2] is None and gaps[0] is not None


def test_silhouette_iou_of_an_unknown_object(verified_run: Path) -> None:
    with pytest.raises(FixError, match="no object named 'mug'"):
        silhouette_ious(read_report(verified_run).to_json(), verified_run, "mug", [0])
