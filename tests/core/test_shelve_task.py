"""The shelf shape (boards between sides, open on its front), the shelve task's predicate, and the boards
measured from depth points inside a fitted box (geometry/shelf_fit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from shape_points import points_seen

from real2gym.real2gym_addon.geometry.camera import yaw_rotation
from real2gym.real2gym_addon.geometry.fit_base import FittedObject
from real2gym.real2gym_addon.geometry.kinds import shelf
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.geometry.shelf_fit import _layers, measure_boards
from real2gym.real2gym_addon.tasks import TASKS, TaskState, task_type

BOOKCASE = {"side_thickness": 0.015, "back_thickness": 0.006, "board_thickness": 0.016, "board_count": 3,
            "board0_height": 0.016, "board1_height": 0.14, "board2_height": 0.36}  # fmt: skip
SIZE = (0.22, 0.34, 0.36)
BOOK = Shape("box", (0.14, 0.06, 0.04))


def _shelf(**changes) -> Shape:
    return Shape(shelf.SHELF.name, SIZE, {**BOOKCASE, **changes})


def test_a_shelf_is_its_sides_back_and_boards_inside_its_box() -> None:
    shape = _shelf()
    mesh = shape.mesh()
    assert mesh.is_watertight
    half = np.asarray(SIZE) / 2
    assert np.allclose(mesh.bounds, [-half, half])
    assert len(shape.collision_pieces()) == 2 + 1 + 3
    # The middle board's top at 0.14 above the bottom: on its face, inside it 8 mm down, free 2 cm above.
    top = np.array([0.0, 0.0, 0.14 - half[2]])
    assert shape.surface_distance(top[None])[0] == pytest.approx(0.0, abs=1e-9)
    assert shape.surface_distance((top - [0, 0, 0.008])[None])[0] == pytest.approx(-0.008, abs=1e-9)
    assert shape.surface_distance((top + [0, 0, 0.02])[None])[0] == pytest.approx(0.02, abs=1e-9)
    # The front is open: a point just inside the front face between the boards is free.
    assert shape.surface_distance(np.array([[half[0] - 0.001, 0.0, 0.0]]))[0] == pytest.approx(0.04)
    spaces = shelf.spaces(shape)
    assert len(spaces) == 2  # the top board caps the shelf: nothing stands on it inside
    (centre, extent) = spaces[1]
    assert centre[2] - extent[2] == pytest.approx(0.14 - half[2])
    assert centre[2] + extent[2] == pytest.approx(0.36 - 0.016 - half[2])
    assert extent[1] == pytest.approx(half[1] - 0.015)


def test_a_scaled_shelf_keeps_its_bottom_board_on_the_floor() -> None:
    scaled = _shelf().scaled((1.0, 1.0, 0.9))
    assert scaled.params["board0_height"] == pytest.approx(0.016)
    assert scaled.params["board1_height"] == pytest.approx(0.126)
    assert scaled.params["board2_height"] == pytest.approx(scaled.size[2])
    assert scaled.params["board_thickness"] == 0.016
    scaled.collision_pieces()  # still valid


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"board_count": 0}, "board_count"),
        ({"board_count": 4}, "lacks board3_height"),
        ({"board1_height": 0.02}, "overlap"),
        ({"side_thickness": 0.2}, "too thick"),
    ],
)
def test_a_shelf_with_impossible_boards_is_refused_by_name(changes, says) -> None:
    with pytest.raises(ValueError, match=says):
        _shelf(**changes).collision_pieces()


def _state(local_centre, tilt_deg=0.0, share=0.98, yaw=0.4, expected_up=(0.0, 0.0, 1.0)) -> TaskState:
    """The book at ``local_centre`` in the shelf's frame (z from the shelf's bottom), the shelf turned by
    ``yaw`` and standing at (0.5, 0.2) on the table."""
    turn = yaw_rotation(yaw)
    shelf_centre = np.array([0.5, 0.2, SIZE[2] / 2])
    local = np.asarray(local_centre, float) - [0, 0, SIZE[2] / 2]
    own = turn @ Rotation.from_euler("x", tilt_deg, degrees=True).as_matrix()
    return TaskState(
        shelf_centre + turn @ local, BOOK, 0.15, shelf_centre, _shelf(), target_rotation=turn,
        support_share=share, moved_rotation=own, expected_up=np.asarray(expected_up),
    )  # fmt: skip


def test_shelved_on_the_middle_board_carried_and_flat_passes() -> None:
    result = task_type("shelve").success(_state([0.01, 0.03, 0.14 + 0.02 + 0.001]))
    assert result["passed"] and result["board"] == 1
    assert result["up_error_deg"] == pytest.approx(0.0, abs=1e-6)
    assert result["in_shelf_m"][0] == pytest.approx(0.01, abs=1e-6)


@pytest.mark.parametrize(
    ("state", "why"),
    [
        (dict(local_centre=[0.13, 0.0, 0.161]), "in front of the front face"),
        (dict(local_centre=[0.0, 0.16, 0.161]), "in a side"),
        (dict(local_centre=[0.0, 0.0, 0.19]), "held 3 cm above the board"),
        (dict(local_centre=[0.0, 0.0, 0.161], share=0.5), "half carried by something else"),
        (dict(local_centre=[0.0, 0.0, 0.14 + 0.03], tilt_deg=90.0), "fell on its side"),
    ],
)
def test_a_book_not_shelved_fails(state, why) -> None:
    assert not task_type("shelve").success(_state(**state))["passed"], why


def test_a_book_shelved_standing_as_the_video_ends_passes_on_its_side() -> None:
    # The video ends with the book on its long edge: its own y is the world's up. So it ends in the simulation.
    standing = _state([0.0, 0.0, 0.14 + 0.03], tilt_deg=90.0, expected_up=(0.0, 1.0, 0.0))
    result = task_type("shelve").success(standing)
    assert result["passed"], result
    # The measure does not depend on how the shelf is turned about the vertical.
    turned = _state([0.0, 0.0, 0.14 + 0.03], tilt_deg=90.0, expected_up=(0.0, 1.0, 0.0), yaw=2.0)
    assert task_type("shelve").success(turned)["up_error_deg"] == pytest.approx(result["up_error_deg"])


def test_shelve_needs_a_target_and_is_in_the_steps_table() -> None:
    kind = TASKS["shelve"]
    assert kind.needs_target and kind.releases and kind.reads_support
    assert "needs a 'target'" in kind.check_fields({"type": "shelve", "object": "book"}, ["book", "shelf"])
    assert kind.task_json({"name": "shelf", "size": list(SIZE)})["support_share"] == 0.9


def test_layers_are_where_the_points_pile_up_not_the_back_walls_spread() -> None:
    rng = np.random.default_rng(0)
    back = rng.uniform(0.0, 0.36, 600)
    boards = np.concatenate([0.016 + rng.normal(0, 0.001, 300), 0.14 + rng.normal(0, 0.001, 250)])
    found = _layers(np.concatenate([back, boards]), 0.36)
    assert found == pytest.approx([0.016, 0.14], abs=0.002)
    assert _layers(back, 0.36) == []


def test_boards_are_measured_from_the_points_seen_through_the_front() -> None:
    shape = _shelf()
    fitted = FittedObject(
        Shape(shelf.SHELF.name, SIZE, shelf.default_params(SIZE)), np.array([0.5, 0.2, 0.18]), 0.3
    )
    camera = fitted.position + yaw_rotation(0.3) @ np.array([0.6, 0.25, 0.05])  # in front, between the boards

    class View:  # what measure_boards reads of a rest view
        from_depth = True
        points_world = points_seen(shape, fitted, camera)
        camera_from_world = np.linalg.inv(np.r_[np.c_[np.eye(3), camera], [[0, 0, 0, 1]]])

    boards = measure_boards(fitted, [View()])
    assert boards.heights == pytest.approx([0.016, 0.14, 0.36], abs=0.003)
    assert boards.board_thickness == pytest.approx(0.016, abs=0.003)
    assert boards.side_thickness == pytest.approx(0.015, abs=0.003)
    assert math.isfinite(boards.heights[-1])


def test_footprints_apart_by_their_outlines_not_their_circles() -> None:
    from real2gym.real2gym_addon.variants.run import footprint_gap

    shelf_outline = np.array([[-0.11, -0.18], [0.11, -0.18], [0.11, 0.18], [-0.11, 0.18]])
    book = np.array([[0.14, -0.07], [0.20, -0.07], [0.20, 0.07], [0.14, 0.07]])  # 3 cm in front of its front
    assert footprint_gap(shelf_outline, book) == pytest.approx(0.03)
    assert footprint_gap(shelf_outline, book - [0.05, 0.0]) == pytest.approx(-0.02)  # 2 cm into it
    assert np.hypot(0.17, 0.0) - np.hypot(0.11, 0.18) - np.hypot(0.03, 0.07) < 0  # their circles overlap
