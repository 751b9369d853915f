"""tools/make_insert_demo.py: a small insert demo has its files, prompts a cylinder peg and a cup-shaped
socket with the ``insert`` task, and ends with the peg upright in the hole at the depth meant after the
events in order; a hole made narrower than the peg leaves it on the rim; options it cannot film are
refused, and a folder it did not make is left alone. The generator only: the pipeline does not know
``insert`` yet."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from task_generators import (
    HEIGHT,
    WIDTH,
    assert_contract_files,
    assert_foreign_folder_left_alone,
    assert_refused,
    run_generator,
    small_options,
)

from real2gym.real2gym_addon.truth import load_truth

FRAMES = 72
SMALL = small_options(FRAMES)  # 7.2 s
TOOL = "make_insert_demo.py"


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return run_generator(TOOL, out, SMALL, *args)


@pytest.fixture(scope="module")
def inserted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 72-frame insert demo (7.2 s at 10 fps) with its recording, the camera's pose and the true masks."""
    out = tmp_path_factory.mktemp("insert") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera", "--given-masks")
    assert result.returncode == 0, result.stderr
    return out


def _in_socket(truth, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """The peg's centre (m) and its axis on ``frame`` in the socket's local frame."""
    socket = truth.objects["socket"].frames[frame]
    turn = Rotation.from_quat(socket.quaternion_world, scalar_first=True)
    peg = truth.objects["peg"].frames[frame]
    centre = turn.inv().apply(np.subtract(peg.position_world, socket.position_world))
    axis = (turn.inv() * Rotation.from_quat(peg.quaternion_world, scalar_first=True)).apply([0.0, 0.0, 1.0])
    return centre, axis


def test_the_folder_has_the_contract_files(inserted: Path) -> None:
    assert_contract_files(inserted, FRAMES, ("peg", "socket"))


def test_the_prompts_name_the_peg_the_socket_and_the_insert_task(inserted: Path) -> None:
    prompts = json.loads((inserted / "prompts.json").read_text())
    peg, socket = prompts["objects"]
    assert (peg["name"], peg["shape"], peg["role"]) == ("peg", "cylinder", "manipulated")
    assert (socket["name"], socket["shape"], socket["role"]) == ("socket", "cup", "container")
    assert prompts["task"] == {"type": "insert", "object": "peg", "target": "socket"}
    for entry in (peg, socket):
        x0, y0, x1, y1 = entry["box"]
        assert 0 <= x0 < x1 < WIDTH and 0 <= y0 < y1 < HEIGHT


def test_the_shapes_parameters_describe_a_tight_fit(inserted: Path) -> None:
    truth = load_truth(inserted)
    assert truth.raw["scene"] == "insert"
    socket, peg = truth.objects["socket"], truth.objects["peg"]
    width, across, height = socket.size
    params = socket.params
    assert width == across == pytest.approx(2 * params["outer_radius"], abs=1e-6)
    assert params["wall_thickness"] == pytest.approx(
        params["outer_radius"] - params["inner_radius"], abs=1e-6
    )
    assert 0.035 <= params["outer_radius"] <= 0.05 and 0.05 <= height <= 0.08
    assert 0.03 <= height - params["bottom_thickness"] <= 0.05  # the hole's depth
    diameter, other, length = peg.size
    assert diameter == other and 0.024 <= diameter <= 0.04 and 0.08 <= length <= 0.12
    assert 0.0025 <= params["inner_radius"] - diameter / 2 <= 0.004  # the clearance: a few millimetres
    assert 0.05 <= peg.mass <= 0.15
    # The socket stands on the table: its box's centre half its height up.
    assert socket.frames[0].position_world[2] == pytest.approx(height / 2, abs=1e-3)


def test_the_peg_ends_upright_in_the_hole_at_the_depth_meant(inserted: Path) -> None:
    truth = load_truth(inserted)
    frames = {k["event"]: k["frame"] for k in truth.keyframes}
    assert frames["grasp"] <= frames["lift"] < frames["contact"] <= frames["release"] + 1 < FRAMES - 10
    assert all(check["passed"] for check in truth.raw["checks"].values()), truth.raw["checks"]
    check = truth.raw["checks"]["peg_inserted"]
    assert check["inserted_depth_m"] == pytest.approx(check["intended_depth_m"], abs=0.003)
    params = truth.objects["socket"].params
    _, _, height = truth.objects["socket"].size
    diameter, _, length = truth.objects["peg"].size
    centre, axis = _in_socket(truth, FRAMES - 1)
    assert np.degrees(np.arccos(axis[2])) < 5
    assert np.hypot(*centre[:2]) <= params["inner_radius"] - diameter / 2 + 0.001
    # Resting on the hole's bottom: its bottom the hole's depth under the socket's top.
    bottom = centre[2] - length / 2
    assert height / 2 - bottom == pytest.approx(height - params["bottom_thickness"], abs=0.003)
    # While carried, the peg's bottom was over the socket's top.
    lifted = truth.objects["peg"].frames[(frames["lift"] + frames["release"]) // 2]
    assert lifted.position_world[2] - length / 2 > height


def test_a_hole_narrower_than_the_peg_leaves_it_on_the_rim_and_a_folder_it_wrote_keeps_the_users_files(
    inserted: Path, tmp_path: Path
) -> None:
    out = tmp_path / "narrow"
    out.mkdir()
    shutil.copy(inserted / "truth.json", out / "truth.json")  # a folder the generator wrote before
    (out / "notes.txt").write_text("mine")
    result = _generate(out, "--narrow", "0.004")
    assert result.returncode == 0, result.stderr
    assert (out / "notes.txt").read_text() == "mine"
    truth = load_truth(out)
    assert truth.raw["generator"]["narrow_m"] == 0.004
    check = truth.raw["checks"]["blocked_on_purpose"]
    assert check["passed"] and check["inserted_depth_m"] < 0.003 and not check["touches_hole_bottom"]
    assert check["hand_stopped_at_s"] is not None and truth.raw["checks"]["hand_clear_of_socket"]["passed"]
    params = truth.objects["socket"].params
    assert params["inner_radius"] == pytest.approx(truth.objects["peg"].size[0] / 2 - 0.004, abs=1e-6)
    # The same scene as without --narrow but for the hole: the peg stands on the rim, the socket's height up.
    _, _, height = truth.objects["socket"].size
    _, _, length = truth.objects["peg"].size
    assert truth.objects["peg"].frames[-1].position_world[2] - length / 2 == pytest.approx(height, abs=0.003)
    assert [k["event"] for k in truth.keyframes] == ["grasp", "lift", "contact", "release"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--narrow", "0.05"], "--narrow"),
        (["--frames", "40"], "at least"),
        (["--narrow", "-0.01"], "--narrow"),
    ],
)
def test_options_it_cannot_film_are_refused(args: list[str], message: str, tmp_path: Path) -> None:
    assert_refused(_generate(tmp_path / "refused", *args), message, tmp_path / "refused")


def test_a_folder_it_did_not_make_is_left_alone(inserted: Path, tmp_path: Path) -> None:
    assert_foreign_folder_left_alone(TOOL, inserted, "make_shelve_demo.py", SMALL, tmp_path)
