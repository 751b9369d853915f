"""The rack shape (a mug tree) and the hang task's predicate, without a video."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.geometry.kinds import rack
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.tasks import TaskState, task_type

TREE = {
    "base_radius": 0.07, "base_thickness": 0.015, "post_radius": 0.01, "post_height": 0.3, "peg_radius": 0.005,
    "peg_length": 0.09, "peg_elevation": math.radians(20), "peg_count": 3.0, "peg0_height": 0.15,
    "peg0_azimuth": 0.0, "peg1_height": 0.2, "peg1_azimuth": 2.1, "peg2_height": 0.25, "peg2_azimuth": -2.1,
}  # fmt: skip


def _tree(**changes) -> Shape:
    params = {**TREE, **changes}
    return Shape(rack.RACK.name, rack.size_of(params), params)


def test_a_rack_is_its_base_post_and_pegs_inside_its_box() -> None:
    shape = _tree()
    mesh = shape.mesh()
    assert mesh.is_watertight
    half = np.asarray(shape.size) / 2
    assert np.all(mesh.bounds[0] >= -half - 1e-9) and np.all(mesh.bounds[1] <= half + 1e-9)
    assert np.all(np.abs(mesh.bounds).max(axis=0) > half - 0.006)  # the box is no larger than it must be
    pieces = shape.collision_pieces()
    assert [p.kind for p in pieces] == ["cylinder"] * 5
    # Peg 0's tip: on its axis peg_length out from the post, tilted up by 20 degrees.
    origin = rack.post_offset(shape)
    along = np.array([math.cos(math.radians(20)), 0, math.sin(math.radians(20))])
    tip = origin + [0, 0, 0.15] + 0.09 * along
    assert shape.surface_distance(tip[None])[0] == pytest.approx(0.0, abs=1e-9)  # on its end's face
    assert shape.surface_distance((tip - 0.01 * along)[None])[0] == pytest.approx(-0.005, abs=1e-9)
    above = tip + [0, 0, 0.02]
    assert shape.surface_distance(above[None])[0] > 0.01
    # The post's axis at mid-height is inside the post; the table beside the base is outside everything.
    assert shape.surface_distance((origin + [0, 0, 0.1])[None])[0] < 0
    assert shape.surface_distance((origin + [0.0, -0.12, 0.005])[None])[0] > 0.03


def test_a_scaled_rack_keeps_its_box_and_its_params_together() -> None:
    scaled = _tree().scaled((1.1, 1.1, 1.2))
    assert scaled.params["peg1_height"] == pytest.approx(0.24)
    assert scaled.params["peg_length"] == pytest.approx(0.099)
    assert scaled.params["peg_elevation"] == TREE["peg_elevation"]  # an angle does not scale
    assert scaled.size == pytest.approx(rack.size_of(scaled.params))
    assert scaled.bounding_size() == pytest.approx(scaled.size)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"peg_count": 0.0}, "peg_count is a whole number"),
        ({"peg_count": 4.0}, "lacks peg3_height, peg3_azimuth"),
    ],
)
def test_a_rack_with_pegs_missing_is_refused_naming_them(changes, words) -> None:
    with pytest.raises(ValueError, match=words):
        rack.size_of({**TREE, **changes})


MUG = Shape(
    "cup",
    (0.108, 0.076, 0.09),
    {"outer_radius": 0.038, "inner_radius": 0.034, "wall_thickness": 0.004, "bottom_thickness": 0.006,
     "handle_reach": 0.07, "handle_bottom": 0.015, "handle_top": 0.075, "handle_thickness": 0.007,
     "handle_width": 0.014},
)  # fmt: skip


def _state(height: float, share: float | None, tilt_deg: float = 0.0) -> TaskState:
    turn = Rotation.from_euler("y", tilt_deg, degrees=True).as_matrix()
    return TaskState(
        np.array([0.1, 0.0, height]), MUG, 0.2, np.zeros(3), _tree(), target_rotation=np.eye(3),
        support_share=share, target_tilt_rad=0.0, moved_rotation=turn,
    )  # fmt: skip


def test_hang_passes_a_mug_the_rack_carries_clear_of_the_table() -> None:
    hang = task_type("hang")
    result = hang.success(_state(0.12, 0.98, tilt_deg=25))
    assert result["passed"] and result["hangs_clear"] and result["support_share"] == 0.98
    # Its lowest point is the rim's edge as it hangs tilted, below its box's bottom had it stood upright.
    assert result["clearance_m"] < 0.12 - 0.045 - 0.015


@pytest.mark.parametrize(
    ("height", "share", "why"),
    [
        (0.045, 0.0, "on the table"),  # let go short of the peg: it stands on the table
        (0.045 + 0.015, 1.0, "on the base"),  # stood on the rack's base: carried by the rack, not hanging
        (0.12, 0.5, "half carried"),  # still half in the hand, or leaning on something else
    ],
)
def test_hang_fails_a_mug_that_does_not_hang(height, share, why) -> None:
    result = task_type("hang").success(_state(height, share))
    assert not result["passed"], why


def test_a_steps_frame_without_forces_judges_the_clearance_alone() -> None:
    assert task_type("hang").success(_state(0.12, None))["passed"]
    assert not task_type("hang").success(_state(0.05, None))["passed"]
