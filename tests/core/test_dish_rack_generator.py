"""tools/make_dish_rack_demo.py: a small dish rack demo has its files, prompts a plate and two dish racks with
the ``shelve`` task, describes the racks as the ``dish_rack`` kind's convention has them (the simulated
boxes where the parameters put them), and ends with the plate standing upright in its slot after the
events in order; with slots too narrow the plate ends out of its slot; options it cannot film are refused,
and a folder it did not make is left alone. The generator only: the pipeline does not read a dish rack
yet."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from task_generators import (
    HEIGHT,
    REPO,
    WIDTH,
    assert_contract_files,
    assert_foreign_folder_left_alone,
    assert_refused,
    run_generator,
    small_options,
)

from real2gym.real2gym_addon.truth import load_truth

FRAMES = 64
SMALL = small_options(FRAMES)  # 6.4 s
TOOL = "make_dish_rack_demo.py"
NAMES = ("plate", "stand", "dish_rack")


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return run_generator(TOOL, out, SMALL, *args)


@pytest.fixture(scope="module")
def racked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 64-frame dish rack demo (6.4 s at 10 fps) with its recording, the camera's pose and the true masks."""
    out = tmp_path_factory.mktemp("dish_rack") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera", "--given-masks")
    assert result.returncode == 0, result.stderr
    return out


def _in_rack(truth, rack: str, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """The plate's centre (m) and its axis on ``frame`` in the frame of ``rack``."""
    pose = truth.objects[rack].frames[frame]
    turn = Rotation.from_quat(pose.quaternion_world, scalar_first=True)
    plate = truth.objects["plate"].frames[frame]
    centre = turn.inv().apply(np.subtract(plate.position_world, pose.position_world))
    axis = (turn.inv() * Rotation.from_quat(plate.quaternion_world, scalar_first=True)).apply([0.0, 1.0, 0.0])
    return centre, axis


def _slot_y(params: dict, slot: int) -> float:
    return (slot + 0.5 - params["slot_count"] / 2) * params["pitch"]


def _lowest_over_base(truth, rack: str, frame: int) -> float:
    """The plate's lowest point over ``rack``'s base's top on ``frame`` (m)."""
    centre, axis = _in_rack(truth, rack, frame)
    diameter, thickness, _ = truth.objects["plate"].size
    up = abs(axis[2])
    bottom = centre[2] - diameter / 2 * np.sqrt(1 - up * up) - thickness / 2 * up
    return bottom + truth.objects[rack].size[2] / 2 - truth.objects[rack].params["base_thickness"]


def test_the_folder_has_the_contract_files(racked: Path) -> None:
    assert_contract_files(racked, FRAMES, NAMES)


def test_the_prompts_name_the_plate_the_racks_and_the_shelve_task(racked: Path) -> None:
    prompts = json.loads((racked / "prompts.json").read_text())
    plate, stand, rack = prompts["objects"]
    assert (plate["name"], plate["shape"], plate["role"]) == ("plate", "plate", "manipulated")
    assert (stand["name"], stand["shape"], stand["role"]) == ("stand", "dish_rack", "support")
    assert (rack["name"], rack["shape"], rack["role"]) == ("dish_rack", "dish_rack", "support")
    assert prompts["task"] == {"type": "shelve", "object": "plate", "target": "dish_rack"}
    for entry in (plate, stand, rack):
        x0, y0, x1, y1 = entry["box"]
        assert 0 <= x0 < x1 < WIDTH and 0 <= y0 < y1 < HEIGHT


def test_the_shapes_follow_the_dish_rack_and_plate_conventions(racked: Path) -> None:
    truth = load_truth(racked)
    assert truth.raw["scene"] == "dish_rack"
    plate = truth.objects["plate"]
    diameter, thickness, tall = plate.size
    assert plate.shape == "plate" and plate.params["on_edge"] == 1
    assert diameter == tall == pytest.approx(2 * plate.params["radius"], abs=1e-6)
    assert (
        0.07 <= plate.params["radius"] <= 0.085 and 0.012 <= thickness <= 0.016 and 0.15 <= plate.mass <= 0.25
    )
    for name, count in (("stand", 1), ("dish_rack", 4)):
        rack = truth.objects[name]
        depth, width, height = rack.size
        params = rack.params
        assert rack.shape == "dish_rack" and params["slot_count"] == count
        assert isinstance(params["slot_count"], int)
        divider = params["pitch"] - params["slot_width"]
        assert divider > 0 and width == pytest.approx(count * params["pitch"] + divider, abs=1e-6)
        assert 0.008 <= params["base_thickness"] <= 0.012 and height < diameter - 0.04
        # It stands on the table: its box's centre half its height up.
        assert rack.frames[0].position_world[2] == pytest.approx(height / 2, abs=1e-6)
    depth, _, height = truth.objects["dish_rack"].size
    assert 0.10 <= depth <= 0.14 and 0.08 <= height <= 0.10
    assert 0.008 <= truth.objects["dish_rack"].params["slot_width"] - thickness <= 0.012
    # At the start the plate stands upright in the stand's slot, its axis along the stand's y.
    centre, axis = _in_rack(truth, "stand", 0)
    assert abs(axis[1]) > np.cos(np.radians(2))
    assert abs(centre[1]) < truth.objects["stand"].params["slot_width"] / 2
    assert _lowest_over_base(truth, "stand", 0) == pytest.approx(0.0, abs=0.002)


# Builds the seed's model as the generator does and prints each geom's world position, MuJoCo size and z axis
# (run apart: the tools' modules import the add-on under its own name).
_GEOMS = """
import json, sys
import numpy as np, mujoco
sys.path.insert(0, "tools")
import make_dish_rack_demo as tool
from _dish_rack_model import build_model
layout, script = tool.make_layout(tool.parse_args(sys.argv[1:]))
position, quat, _ = script.pose_at(0.0)
model = build_model(layout, position, quat, np.random.default_rng(0))
data = mujoco.MjData(model)
mujoco.mj_forward(model, data)
geoms = {model.geom(i).name: {"xpos": data.geom_xpos[i].tolist(), "size": model.geom_size[i].tolist(),
         "z": data.geom_xmat[i].reshape(3, 3)[:, 2].tolist()} for i in range(model.ngeom) if model.geom(i).name}
print(json.dumps({"geoms": geoms, "plate_y": data.body("plate").xmat.reshape(3, 3)[:, 1].tolist()}))
"""


def test_the_simulated_boxes_are_where_the_parameters_put_them(racked: Path) -> None:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    command = [sys.executable, "-c", _GEOMS, "--out", "unused", *SMALL]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    simulated = json.loads(run.stdout)
    geoms = simulated["geoms"]
    truth = load_truth(racked)
    for name in ("stand", "dish_rack"):
        rack = truth.objects[name]
        depth, width, height = rack.size
        params = rack.params
        pose = rack.frames[0]
        turn = Rotation.from_quat(pose.quaternion_world, scalar_first=True)
        base = params["base_thickness"]
        expected = {"base": ([0.0, 0.0, (base - height) / 2], [depth / 2, width / 2, base / 2])}
        for k in range(params["slot_count"] + 1):
            y = (k - params["slot_count"] / 2) * params["pitch"]
            half = [depth / 2, (params["pitch"] - params["slot_width"]) / 2, (height - base) / 2]
            expected[f"divider{k}"] = ([0.0, y, base / 2], half)
        assert {g for g in geoms if g.startswith(f"{name}_")} == {f"{name}_{piece}" for piece in expected}
        for piece, (centre, half) in expected.items():
            geom = geoms[f"{name}_{piece}"]
            assert geom["xpos"] == pytest.approx(turn.apply(centre) + pose.position_world, abs=2e-6), piece
            assert geom["size"] == pytest.approx(half, abs=1e-6), piece
    diameter, thickness, _ = truth.objects["plate"].size
    assert geoms["plate"]["size"][:2] == pytest.approx([diameter / 2, thickness / 2], abs=1e-6)
    # The cylinder's axis (its geom's z) is the plate body's y.
    assert abs(np.dot(geoms["plate"]["z"], simulated["plate_y"])) == pytest.approx(1.0, abs=1e-9)


def test_the_plate_ends_standing_upright_in_its_slot(racked: Path) -> None:
    truth = load_truth(racked)
    frames = {k["event"]: k["frame"] for k in truth.keyframes}
    assert frames["grasp"] <= frames["lift"] < frames["release"] <= frames["contact"] + 1 < FRAMES - 10
    assert all(check["passed"] for check in truth.raw["checks"].values()), truth.raw["checks"]
    check = truth.raw["checks"]["plate_in_slot"]
    assert check["slot"] in (1, 2)
    params = truth.objects["dish_rack"].params
    depth = truth.objects["dish_rack"].size[0]
    centre, axis = _in_rack(truth, "dish_rack", FRAMES - 1)
    assert (
        abs(centre[1] - _slot_y(params, check["slot"])) < params["slot_width"] / 2
        and abs(centre[0]) < depth / 2
    )
    assert np.degrees(np.arccos(min(abs(axis[1]), 1.0))) < 15
    assert abs(_lowest_over_base(truth, "dish_rack", FRAMES - 1)) < 0.005
    # While carried, the plate's bottom was over both racks' tops.
    middle = (frames["lift"] + frames["release"]) // 2
    top = max(truth.objects[name].size[2] for name in ("stand", "dish_rack"))
    assert _lowest_over_base(truth, "dish_rack", middle) + params["base_thickness"] > top


def test_slots_too_narrow_leave_the_plate_out_and_a_folder_it_wrote_keeps_the_users_files(
    racked: Path, tmp_path: Path
) -> None:
    out = tmp_path / "narrow"
    out.mkdir()
    shutil.copy(racked / "truth.json", out / "truth.json")  # a folder the generator wrote before
    (out / "notes.txt").write_text("mine")
    result = _generate(out, "--narrow")
    assert result.returncode == 0, result.stderr
    assert (out / "notes.txt").read_text() == "mine"
    truth = load_truth(out)
    assert truth.raw["generator"]["narrow"] is True
    check = truth.raw["checks"]["missed_on_purpose"]
    assert check["passed"] and (check["on_divider_tops"] or check["tipped"])
    params = truth.objects["dish_rack"].params
    assert params["slot_width"] == pytest.approx(truth.objects["plate"].size[1] - 0.004, abs=1e-6)
    # The same scene as without --narrow but for the slots: the plate not down in its slot.
    wide = load_truth(racked).objects["dish_rack"].params
    assert params["pitch"] == wide["pitch"] and params["slot_count"] == 4
    assert _lowest_over_base(truth, "dish_rack", FRAMES - 1) > 0.03
    assert [k["event"] for k in truth.keyframes] == ["grasp", "lift", "contact", "release"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frames", "40"], "at least"),
        (["--camera-elevation", "90"], "--camera-elevation"),
        (["--fps", "0"], "--fps"),
    ],
)
def test_options_it_cannot_film_are_refused(args: list[str], message: str, tmp_path: Path) -> None:
    assert_refused(_generate(tmp_path / "refused", *args), message, tmp_path / "refused")


def test_a_folder_it_did_not_make_is_left_alone(racked: Path, tmp_path: Path) -> None:
    assert_foreign_folder_left_alone(TOOL, racked, "make_shelve_demo.py", SMALL, tmp_path)
