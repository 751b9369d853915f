"""tools/make_shelve_demo.py: a small shelve demo has its files, prompts a box-shaped book and a shelf with the
``shelve`` task, and ends with the book resting flat on the shelf's middle board after the events in order;
the book let go short ends off the board; options it cannot film are refused, and a folder it did not make
is left alone. The generator only: the pipeline does not read a shelf yet."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from task_generators import (
    assert_contract_files,
    assert_foreign_folder_left_alone,
    assert_refused,
    run_generator,
    small_options,
)

from real2gym.real2gym_addon.truth import load_truth

FRAMES = 64
SMALL = small_options(FRAMES)  # 6.4 s
TOOL = "make_shelve_demo.py"


def _generate(out: Path, *args: str) -> subprocess.CompletedProcess:
    return run_generator(TOOL, out, SMALL, *args)


@pytest.fixture(scope="module")
def shelved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 64-frame shelve demo (6.4 s at 10 fps) with its recording, the camera's pose and the true masks."""
    out = tmp_path_factory.mktemp("shelve") / "demo"
    result = _generate(out, "--with-trajectory", "--with-world-from-camera", "--given-masks")
    assert result.returncode == 0, result.stderr
    return out


def _in_shelf(truth, name: str, frame: int) -> tuple[np.ndarray, Rotation]:
    """Object ``name``'s box centre (m) and rotation on ``frame`` in the shelf's local frame."""
    shelf = truth.objects["shelf"].frames[frame]
    turn = Rotation.from_quat(shelf.quaternion_world, scalar_first=True)
    thing = truth.objects[name].frames[frame]
    centre = turn.inv().apply(np.subtract(thing.position_world, shelf.position_world))
    return centre, turn.inv() * Rotation.from_quat(thing.quaternion_world, scalar_first=True)


def test_the_folder_has_the_contract_files(shelved: Path) -> None:
    assert_contract_files(shelved, FRAMES, ("book", "shelf"))


def test_the_prompts_name_the_book_the_shelf_and_the_shelve_task(shelved: Path) -> None:
    prompts = json.loads((shelved / "prompts.json").read_text())
    book, shelf = prompts["objects"]
    assert (book["name"], book["shape"], book["role"]) == ("book", "box", "manipulated")
    assert (shelf["name"], shelf["shape"], shelf["role"]) == ("shelf", "shelf", "support")
    assert prompts["task"] == {"type": "shelve", "object": "book", "target": "shelf"}


def test_the_shelfs_parameters_describe_its_boards(shelved: Path) -> None:
    truth = load_truth(shelved)
    assert truth.raw["scene"] == "shelve"
    shelf = truth.objects["shelf"]
    depth, width, height = shelf.size
    params = shelf.params
    count = params["board_count"]
    assert isinstance(count, int) and count in (2, 3)
    tops = [params[f"board{i}_height"] for i in range(count)]
    board = params["board_thickness"]
    assert tops[0] == pytest.approx(board, abs=1e-6)  # the bottom board stands on the table
    assert all(b - a > board for a, b in zip(tops, tops[1:], strict=False))
    assert 0.10 <= tops[1] <= 0.16 and (count == 2 or tops[2] == pytest.approx(height, abs=1e-6))
    assert 0.30 <= width <= 0.40 and 0.20 <= depth <= 0.26 and 0.32 <= height <= 0.42
    # The shelf stands on the table: its box's centre half its height up.
    assert shelf.frames[0].position_world[2] == pytest.approx(height / 2, abs=1e-6)
    length, across, _ = truth.objects["book"].size
    assert across < 0.08 and across < length  # the fingers (8 cm apart at most) close across its width


def test_the_book_ends_resting_flat_on_the_middle_board(shelved: Path) -> None:
    truth = load_truth(shelved)
    frames = {k["event"]: k["frame"] for k in truth.keyframes}
    assert frames["grasp"] <= frames["lift"] < frames["release"] < FRAMES - 10
    assert all(check["passed"] for check in truth.raw["checks"].values()), truth.raw["checks"]
    shelf = truth.objects["shelf"]
    depth, width, height = shelf.size
    params = shelf.params
    length, across, tall = truth.objects["book"].size
    centre, turn = _in_shelf(truth, "book", FRAMES - 1)
    # Lying flat on the middle board's top, its length along the shelf's width, wholly between the sides,
    # in front of the back and behind the front edge.
    assert np.degrees(np.arccos(turn.apply([0.0, 0.0, 1.0])[2])) < 10
    assert centre[2] + height / 2 == pytest.approx(params["board1_height"] + tall / 2, abs=0.003)
    assert abs(turn.apply([1.0, 0.0, 0.0])[1]) > 0.99
    assert abs(centre[1]) + length / 2 < width / 2 - params["side_thickness"]
    assert -depth / 2 + params["back_thickness"] < centre[0] - across / 2 < centre[0] + across / 2 < depth / 2
    # While carried, the book was lifted over the board.
    lifted = truth.objects["book"].frames[(frames["lift"] + frames["release"]) // 2]
    assert lifted.position_world[2] > params["board1_height"] + tall / 2


def test_let_go_short_the_book_ends_off_the_board_and_a_folder_it_wrote_keeps_the_users_files(
    shelved: Path, tmp_path: Path
) -> None:
    out = tmp_path / "short"
    out.mkdir()
    shutil.copy(shelved / "truth.json", out / "truth.json")  # a folder the generator wrote before
    (out / "notes.txt").write_text("mine")
    result = _generate(out, "--short", "0.08")
    assert result.returncode == 0, result.stderr
    assert (out / "notes.txt").read_text() == "mine"
    truth = load_truth(out)
    assert truth.raw["generator"]["short_m"] == 0.08
    check = truth.raw["checks"]["missed_on_purpose"]
    assert check["passed"] and not check["wholly_over_board"]
    board = truth.objects["shelf"].params["board1_height"]
    assert truth.objects["book"].frames[-1].position_world[2] < board  # fallen below the board
    assert [k["event"] for k in truth.keyframes] == ["grasp", "lift", "release"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--short", "0.5"], "--short"), (["--frames", "40"], "at least"), (["--short", "-0.01"], "--short")],
)
def test_options_it_cannot_film_are_refused(args: list[str], message: str, tmp_path: Path) -> None:
    assert_refused(_generate(tmp_path / "refused", *args), message, tmp_path / "refused")


def test_a_folder_it_did_not_make_is_left_alone(shelved: Path, tmp_path: Path) -> None:
    assert_foreign_folder_left_alone(TOOL, shelved, "make_pour_demo.py", SMALL, tmp_path)
