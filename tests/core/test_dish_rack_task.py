"""The dish rack shape (a row of upright slots), a plate standing on its edge, the shelve task's predicate in a
slot, and the slots measured from depth points on a fitted box (geometry/dish_rack_fit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from shape_points import points_seen

from real2gym.real2gym_addon.geometry.camera import yaw_rotation
from real2gym.real2gym_addon.geometry.dish_rack_fit import find_row, with_slots
from real2gym.real2gym_addon.geometry.fit_base import FittedObject
from real2gym.real2gym_addon.geometry.kinds import dish_rack
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.tasks import TaskState, task_type

RACK = {"base_thickness": 0.01, "slot_count": 4, "pitch": 0.032, "slot_width": 0.022}
SIZE = (0.12, 0.142, 0.09)
PLATE = Shape("plate", (0.16, 0.014, 0.16), {"radius": 0.08, "on_edge": 1.0})


def _rack(**changes) -> Shape:
    return Shape(dish_rack.DISH_RACK.name, SIZE, {**RACK, **changes})


def test_a_dish_rack_is_its_base_and_dividers_with_a_slot_between_each_two() -> None:
    shape = _rack()
    pieces = shape.collision_pieces()
    assert len(pieces) == 1 + 5  # the base and five dividers
    dividers = sorted(p.position[1] for p in pieces[1:])
    assert np.diff(dividers) == pytest.approx([0.032] * 4)
    assert [2 * p.size[1] for p in pieces[1:]] == pytest.approx([0.010] * 5)
    slots = shape.spaces()
    assert [c[1] for c, _ in slots] == pytest.approx([-0.048, -0.016, 0.016, 0.048])
    centre, half = slots[0]
    assert 2 * half[1] == pytest.approx(0.022) and centre[2] - half[2] == pytest.approx(-0.045 + 0.01)
    # Nothing of the rack inside a slot, and the dividers' faces its walls.
    assert (shape.surface_distance(np.array([c for c, _ in slots])) > 0.01).all()
    assert shape.mesh().bounds == pytest.approx(np.array([[-0.06, -0.071, -0.045], [0.06, 0.071, 0.045]]))


def test_a_scaled_rack_widens_its_slots_and_keeps_its_count() -> None:
    wider = _rack().scaled((1.0, 1.1, 1.0))
    assert wider.params["pitch"] == pytest.approx(0.0352) and wider.params["slot_width"] == pytest.approx(
        0.0242
    )
    assert wider.params["slot_count"] == 4 and wider.size[1] == pytest.approx(0.142 * 1.1)


@pytest.mark.parametrize(
    ("changes", "says"),
    [(dict(slot_count=0), "slot_count"), (dict(slot_count=2.5), "slot_count"),
     (dict(slot_width=0.0315), "no divider"), (dict(slot_count=6), "cannot hold")],
)  # fmt: skip
def test_a_dish_rack_with_impossible_slots_is_refused_by_name(changes, says) -> None:
    with pytest.raises(ValueError, match=says):
        _rack(**changes).collision_pieces()


def test_a_rack_as_wide_as_its_row_is_simulated_again_from_its_report() -> None:
    """report.json keeps 10 micrometres: a row as wide as its rack may read back a little wider than it."""
    params = {"base_thickness": 0.0115, "slot_count": 4.0, "pitch": 0.0303051, "slot_width": 0.0162849}
    width = dish_rack.row_width(params)
    entry = Shape(dish_rack.DISH_RACK.name, (0.1024, width, 0.0818), params).to_report()
    again = Shape.from_report(entry)
    assert dish_rack.row_width(again.params) > again.size[1]  # the rounding's doing
    assert len(again.collision_pieces()) == 1 + 5
    with pytest.raises(ValueError, match="cannot hold"):  # a row a millimetre wider is still refused
        Shape(dish_rack.DISH_RACK.name, (0.1024, width - 0.001, 0.0818), params).collision_pieces()


def test_a_plate_on_its_edge_has_its_axis_along_y_and_is_not_round() -> None:
    assert not PLATE.is_round and Shape("plate", (0.16, 0.16, 0.014), {"radius": 0.08}).is_round
    (piece,) = PLATE.collision_pieces()
    assert piece.rotation() @ [0, 0, 1] == pytest.approx([0, 1, 0], abs=1e-12)
    assert PLATE.mesh().bounds == pytest.approx(
        np.array([[-0.08, -0.007, -0.08], [0.08, 0.007, 0.08]]), abs=1e-3
    )
    # On its faces, on its rim (top and side), and well off it.
    local = np.array([[0.0, 0.007, 0.0], [0.0, 0.0, 0.08], [0.08, 0.0, 0.0], [0.0, 0.05, 0.0]])
    assert PLATE.surface_distance(local) == pytest.approx([0.0, 0.0, 0.0, 0.043], abs=1e-9)
    assert np.ptp(PLATE.outline_points(), axis=0) == pytest.approx([0.16, 0.014, 0.16], abs=1e-3)


def _state(
    slot_y: float, bottom: float, turn_deg: float = 0.0, share: float = 0.97, yaw: float = 0.3
) -> TaskState:
    """The plate standing with its centre over ``slot_y`` in the rack's frame, its lowest point ``bottom`` above
    the rack's bottom, tipped by ``turn_deg`` about the rack's x; the rack turned by ``yaw`` at (0.5, 0.1)."""
    turn = yaw_rotation(yaw)
    rack_centre = np.array([0.5, 0.1, SIZE[2] / 2])
    local = np.array([0.0, slot_y, bottom + 0.08 - SIZE[2] / 2])
    own = turn @ Rotation.from_euler("x", turn_deg, degrees=True).as_matrix()
    return TaskState(
        rack_centre + turn @ local, PLATE, 0.2, rack_centre, _rack(), target_rotation=turn, support_share=share,
        moved_rotation=own, expected_up=np.array([0.0, 0.0, 1.0]),
    )  # fmt: skip


def test_a_plate_standing_in_a_slot_passes_and_names_it() -> None:
    result = task_type("shelve").success(_state(0.016, 0.0105))
    assert result["passed"] and result["slot"] == 2 and result["board"] is None


@pytest.mark.parametrize(
    ("state", "why"),
    [
        (dict(slot_y=0.0, bottom=0.0105), "on a divider, between two slots"),
        (dict(slot_y=0.016, bottom=0.092), "resting on the dividers' tops"),
        (dict(slot_y=0.016, bottom=0.0105, turn_deg=40.0), "leaning over"),
        (dict(slot_y=0.016, bottom=0.0105, share=0.4), "held by something else"),
        (dict(slot_y=0.2, bottom=0.0105), "beside the rack"),
    ],
)
def test_a_plate_not_in_a_slot_fails(state, why) -> None:
    assert not task_type("shelve").success(_state(**state))["passed"], why


def test_runs_are_where_the_dividers_are_not_the_slots() -> None:
    rng = np.random.default_rng(0)
    tops = np.concatenate([c + rng.uniform(-0.005, 0.005, 80) for c in (-0.064, -0.032, 0.0, 0.032, 0.064)])
    row = find_row(tops, 0.071)
    assert row.centres == pytest.approx([-0.064, -0.032, 0.0, 0.032, 0.064], abs=0.0015)
    assert row.widths == pytest.approx([0.010] * 5, abs=0.0025) and row.regularity() < 0.1
    assert find_row(rng.uniform(-0.06, 0.06, 400), 0.071) is None  # a solid top's points: no row


@pytest.mark.parametrize("yaw", [0.3, 0.3 + math.pi / 2])
def test_slots_are_measured_from_the_points_seen_from_above_in_front(yaw) -> None:
    # The fitted box's sides either way round: the row is the side whose top points fall in runs.
    truth = _rack()
    posed = FittedObject(truth, np.array([0.5, 0.1, SIZE[2] / 2]), 0.3)
    turned = SIZE if yaw == 0.3 else (SIZE[1], SIZE[0], SIZE[2])
    box = FittedObject(Shape("box", turned), posed.position + [0.0, 0.0, 0.0], yaw)
    camera = posed.position + yaw_rotation(0.3) @ np.array([0.45, 0.2, 0.35])  # in front, above

    class View:  # what with_slots reads of a rest view
        from_depth = True
        points_world = points_seen(truth, posed, camera)
        camera_from_world = np.linalg.inv(np.r_[np.c_[np.eye(3), camera], [[0, 0, 0, 1]]])

    fitted, warning = with_slots(box, [View()])
    assert warning is None
    p = fitted.shape.params
    assert p["slot_count"] == 4
    assert p["pitch"] == pytest.approx(0.032, abs=0.001) and p["slot_width"] == pytest.approx(
        0.022, abs=0.0015
    )
    assert p["base_thickness"] == pytest.approx(0.01, abs=0.002)
    # Its slots where the truth's are, in the world.
    world = [fitted.world_from_object()[:3, :3] @ c + fitted.position for c, _ in fitted.shape.spaces()]
    truth_world = [posed.world_from_object()[:3, :3] @ c + posed.position for c, _ in truth.spaces()]
    gaps = [min(np.linalg.norm(w - t) for t in truth_world) for w in world]
    assert max(gaps) < 0.002, gaps


def test_a_box_with_no_dividers_in_its_depth_keeps_guessed_slots_and_says_so() -> None:
    box = FittedObject(Shape("box", SIZE), np.array([0.5, 0.1, SIZE[2] / 2]), 0.0)

    class View:
        from_depth = True
        points_world = np.zeros((0, 3))
        camera_from_world = np.eye(4)

    fitted, warning = with_slots(box, [View()])
    assert fitted.shape.kind == "dish_rack" and "check its slots" in warning
    assert fitted.shape.collision_pieces()
