"""The pipeline on a short film of tools/make_hang_demo.py (its own MuJoCo model, not the exporter): a mug taken by
its rim, carried and hung by its handle on a mug tree's peg, 72 frames at 640x480.

It verifies with the robot's recording and without it (the synthesised hand takes the mug by its handle and
closes to the handle's span). A rack whose pegs are fitted thicker than the handle's loop fails the hang; the
suggested ``peg_radius`` fix thins them to half the loop with the post left where it stands, the hang verifies
again, and undo restores the thick pegs. A hook board on a wall (``--wall``) is fitted as the rack's wall form and
its hang verifies too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from task_generators import run_generator, small_options

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.geometry.kinds import rack
from real2gym.real2gym_addon.geometry.peg_prior import handle_opening
from real2gym.real2gym_addon.geometry.shapes import Shape

TOOL = "make_hang_demo.py"


@pytest.fixture(scope="module")
def hang_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = tmp_path_factory.mktemp("hang") / "demo"
    result = run_generator(TOOL, demo, small_options(72), "--size", "640x480", "--with-trajectory",
                           "--with-world-from-camera", "--given-masks")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return demo


def _run(demo: Path, out: Path) -> dict:
    code = main(
        ["run", str(demo), "--out", str(out), "--backend", "given", "--no-blend", "-q", "--margin", "0"]
    )
    report = json.loads((out / "report.json").read_text())
    assert code == (0 if report["verification"]["passed"] else 1)
    return report


def _entry(report: dict, name: str) -> dict:
    return next(o for o in report["objects"] if o["name"] == name)


def _post_foot(entry: dict, frame: int = 0) -> np.ndarray:
    """The rack's post's foot (its axis at the rack's bottom) in the world, on ``frame``."""
    at = entry["frames"][frame]
    turn = Rotation.from_quat(at["quaternion_world"], scalar_first=True)
    return np.asarray(at["position_world"]) + turn.apply(rack.post_offset(Shape.from_report(entry)))


def test_a_hang_verifies_with_the_recording_and_without_it(hang_demo: Path, tmp_path: Path) -> None:
    recorded = _run(hang_demo, tmp_path / "recorded")
    assert recorded["verification"]["passed"], recorded["verification"]["checks"]
    bare = tmp_path / "bare"
    shutil.copytree(hang_demo, bare)
    (bare / "trajectory.json").unlink()
    synthesised = _run(bare, tmp_path / "synthesised")
    checks = synthesised["verification"]["checks"]
    assert synthesised["gripper"]["source"] == "synthesised"
    assert synthesised["verification"]["passed"], checks
    assert checks["grasp_held"]["slip_m"] < 0.005  # closed to the handle's span, the mug stays centred


def test_pegs_thicker_than_the_handle_fail_and_the_suggested_radius_hangs_the_mug_again(
    hang_demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    report = _run(hang_demo, out)
    assert report["verification"]["passed"]
    foot = _post_foot(_entry(report, "rack"))
    loop = min(handle_opening(Shape.from_report(_entry(report, "mug"))))
    thick = round(loop / 2, 4)  # fills the loop
    main(["fix", str(out), "--object", "rack", "--peg-radius", str(thick), "--margin", "0", "-q"])
    failed = json.loads((out / "report.json").read_text())
    assert not failed["verification"]["passed"]
    assert not failed["verification"]["checks"]["task_success"]["passed"]
    entry = _entry(failed, "rack")
    assert entry["params"]["peg_radius"] == pytest.approx(thick)
    assert np.allclose(_post_foot(entry), foot, atol=1e-4)  # the post stays; the box grows round it
    assert entry["size"] == pytest.approx(rack.size_of(entry["params"]), abs=1e-4)
    suggested = [s for s in failed["verification"]["suggestions"] if s["fix"]["kind"] == "peg_radius"]
    assert len(suggested) == 1 and suggested[0]["check"] == "task_success"
    fix = suggested[0]["fix"]
    assert fix["object"] == "rack" and fix["radius_m"] == pytest.approx(loop / 4, abs=1e-4)
    assert "handle leaves" in suggested[0]["text"]
    # The offset a slipping hold would suggest is not offered: the peg explains it.
    assert not any(s["check"] == "grasp_held" for s in failed["verification"]["suggestions"])
    main(["fix", str(out), "--object", "rack", "--peg-radius", str(fix["radius_m"]), "--margin", "0", "-q"])
    fixed = json.loads((out / "report.json").read_text())
    assert fixed["verification"]["passed"], fixed["verification"]["checks"]
    assert np.allclose(_post_foot(_entry(fixed, "rack")), foot, atol=1e-4)
    main(["fix", str(out), "--undo", "--margin", "0", "-q"])
    undone = json.loads((out / "report.json").read_text())
    assert _entry(undone, "rack")["params"] == entry["params"]
    assert not undone["verification"]["passed"]


def test_a_peg_radius_for_an_object_that_is_no_rack_is_refused(
    hang_demo: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    _run(hang_demo, out)
    before = (out / "report.json").read_bytes()
    assert main(["fix", str(out), "--object", "mug", "--peg-radius", "0.004", "--margin", "0", "-q"]) != 0
    error = capsys.readouterr().err
    assert "object 'mug' is a" in error and "not a rack" in error
    assert (out / "report.json").read_bytes() == before


@pytest.fixture(scope="module")
def wall_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = tmp_path_factory.mktemp("hang_wall") / "demo"
    result = run_generator(TOOL, demo, small_options(72), "--size", "640x480", "--wall", "--with-trajectory",
                           "--with-world-from-camera", "--given-masks")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return demo


def test_a_mug_hung_on_a_wall_hook_verifies_on_the_board_fitted_from_its_video(
    wall_demo: Path, tmp_path: Path
) -> None:
    """The board is fitted in the wall form (its mask as segmented: grown in depth it would take in the wall),
    its plate within 3 mm of the truth and the hung-on peg's root within 5 mm; it is fixed in the scene."""
    report = _run(wall_demo, tmp_path / "out")
    assert report["verification"]["passed"], report["verification"]["checks"]
    entry = _entry(report, "rack")
    fitted = entry["params"]
    truth = _entry(json.loads((wall_demo / "truth.json").read_text()), "rack")
    true_params = {k: float(v) for k, v in truth.items() if k in rack.RACK.params + rack.RACK.optional_params}
    assert rack.on_wall(fitted)
    for key in ("plate_width", "post_height"):
        assert fitted[key] == pytest.approx(true_params[key], abs=0.003), key
    back = _post_foot(entry)  # the post frame's origin: the plate's back's bottom edge's middle
    at = truth["frames"][0]
    true_turn = Rotation.from_quat(at["quaternion_world"], scalar_first=True)
    true_shape = Shape(rack.RACK.name, rack.size_of(true_params), true_params)
    true_back = np.asarray(at["position_world"]) + true_turn.apply(rack.post_offset(true_shape))
    true_root = true_back + true_turn.apply(rack.peg_root(true_params, truth["hung_on_peg"]))
    turn = Rotation.from_quat(entry["frames"][0]["quaternion_world"], scalar_first=True)
    roots = [back + turn.apply(rack.peg_root(fitted, i)) for i in range(int(fitted["peg_count"]))]
    assert min(np.linalg.norm(r - true_root) for r in roots) < 0.005
    scene = (tmp_path / "out" / "mjcf" / "scene.xml").read_text()
    assert 'name="rack_free"' not in scene  # fixed where it hangs: nothing holds it up but the wall
