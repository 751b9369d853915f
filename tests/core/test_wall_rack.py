"""A rack's wall form (a hook board on a wall: geometry/kinds/rack.py): its shape, and its fit from one
camera's mask and depth (geometry/wall_rack_fit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.geometry.kinds import rack
from real2gym.real2gym_addon.geometry.shapes import Shape

BOARD = {
    "plate_width": 0.14, "plate_thickness": 0.016, "post_height": 0.1, "peg_radius": 0.005, "peg_length": 0.075,
    "peg_elevation": math.radians(18), "peg_count": 2.0, "peg0_height": 0.055, "peg0_offset": -0.035,
    "peg0_azimuth": 0.0, "peg1_height": 0.055, "peg1_offset": 0.035, "peg1_azimuth": 0.05,
}  # fmt: skip
WALL_YAW = -math.pi / 2
"""The wall's normal (the board's local +x) points along world -y: the camera looks at it from there."""
BACK_BOTTOM = np.array([0.05, 0.3, 0.16])
"""Where the board's back face's bottom edge's middle is on the wall (world, m)."""


def _board(**changes) -> Shape:
    params = {**BOARD, **changes}
    return Shape(rack.RACK.name, rack.size_of(params), params)


def test_a_wall_rack_is_its_plate_and_pegs_inside_its_box_and_nothing_behind_its_wall() -> None:
    shape = _board()
    mesh = shape.mesh()
    half = np.asarray(shape.size) / 2
    assert np.all(mesh.bounds[0] >= -half - 1e-9) and np.all(mesh.bounds[1] <= half + 1e-9)
    assert [p.kind for p in shape.collision_pieces()] == ["box", "cylinder", "cylinder"]
    origin = rack.post_offset(shape)
    assert origin[0] == pytest.approx(-half[0])  # the back face is the box's back: nothing goes into the wall
    # Peg 1's tip: from the plate's front face, 35 mm along it, 55 mm up, tilted 18 degrees up.
    along = rack.peg_direction(BOARD["peg_elevation"], BOARD["peg1_azimuth"])
    tip = origin + [BOARD["plate_thickness"], 0.035, 0.055] + BOARD["peg_length"] * along
    assert shape.surface_distance(tip[None])[0] == pytest.approx(0.0, abs=1e-9)
    assert shape.surface_distance((origin + [0.008, 0.0, 0.05])[None])[0] < 0  # inside the plate
    assert rack.floor(shape.params) == 0.0  # a hung mug clears the table under it, there is no base
    scaled = shape.scaled((1.0, 1.5, 1.0))
    assert scaled.params["plate_width"] == pytest.approx(0.21) and scaled.params[
        "peg1_offset"
    ] == pytest.approx(0.0525)
    assert scaled.size == pytest.approx(rack.size_of(scaled.params))


def test_a_wall_rack_lacking_a_pegs_offset_is_refused_by_name() -> None:
    params = {k: v for k, v in BOARD.items() if k != "peg1_offset"}
    with pytest.raises(ValueError, match="wall rack of 2 pegs lacks peg1_offset"):
        rack.size_of(params)


def _filmed(shape: Shape, azimuth: float, noise: float):
    """The board of ``shape`` on its wall (BACK_BOTTOM, WALL_YAW), rendered by MuJoCo from ``azimuth`` degrees
    off the wall's normal, 20 degrees up and 0.7 m away (320x240): its mask and noisy depth points as three
    rest views, and the camera."""
    from rack_films import filmed_rack

    centre = BACK_BOTTOM - Rotation.from_euler("z", WALL_YAW).apply(rack.post_offset(shape))
    a, e = WALL_YAW + math.radians(azimuth), math.radians(20)
    target = BACK_BOTTOM + [0.0, -0.05, 0.03]
    eye = target + 0.7 * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    wall = (BACK_BOTTOM + [0.0, 0.01, 0.0], (1.0, 0.01, 0.6))  # behind the board
    return filmed_rack(shape, centre, WALL_YAW, target, eye, noise, wall)


@pytest.mark.parametrize(("azimuth", "noise", "changes"), [
    (-35.0, 0.003, {}),
    (25.0, 0.0, {"peg_count": 1.0, "peg0_offset": 0.01, "peg_elevation": math.radians(12)}),
    (0.0, 0.003, {}),  # head on: the pegs point at the camera
    (-45.0, 0.01, {}),
])  # fmt: skip
def test_a_wall_rack_is_fitted_from_its_depth_and_silhouette(
    azimuth: float, noise: float, changes: dict
) -> None:
    """One camera in front of the wall (up to 3 mm of depth noise; 1 cm, looser): the plate's width within
    3 mm (4.5), its height and thickness within 3 mm, the pegs' length within 6 mm (8), elevation within 2
    degrees (5), each peg's root within 4 mm (8) and its turn within 5 degrees; the board's back on the wall
    within 4 mm (8), its yaw the wall's within 2 degrees. Measured worst at 3 mm: length 5.5 mm (head on),
    roots 3.1 mm; at 1 cm: width 3.8 mm, length 5.9, elevation 4.1 degrees, roots 4.1 mm, back 6.3."""
    from real2gym.real2gym_addon.geometry.fit import fit_rack

    shape = _board(**changes)
    views, camera = _filmed(shape, azimuth, noise)
    fitted = fit_rack(views, camera)
    p, true = fitted.shape.params, shape.params
    assert rack.on_wall(p) and p["peg_count"] == true["peg_count"]
    turn, loose = Rotation.from_euler("z", fitted.yaw), 2 if noise > 0.005 else 1
    for key, tolerance in (("plate_width", 0.003 * (1.5 if loose > 1 else 1)), ("post_height", 0.003),
                           ("plate_thickness", 0.003), ("peg_length", 0.006 + 0.002 * (loose - 1)),
                           ("peg_radius", 0.0015)):  # fmt: skip
        assert p[key] == pytest.approx(true[key], abs=tolerance), key
    assert math.degrees(abs(p["peg_elevation"] - true["peg_elevation"])) < (5 if loose > 1 else 2)
    assert abs(math.degrees(math.remainder(fitted.yaw - WALL_YAW, 2 * math.pi))) < 2
    back = fitted.position + turn.apply(rack.post_offset(fitted.shape))
    assert np.linalg.norm(back - BACK_BOTTOM) < 0.004 * loose
    for i in range(int(true["peg_count"])):
        true_root = Rotation.from_euler("z", WALL_YAW).apply(rack.peg_root(true, i)) + BACK_BOTTOM
        gaps = [
            np.linalg.norm(turn.apply(rack.peg_root(p, j)) + back - true_root)
            for j in range(int(p["peg_count"]))
        ]
        j = int(np.argmin(gaps))  # the fitted peg nearest to it
        assert gaps[j] < 0.004 * loose, i
        assert abs(math.degrees(p[f"peg{j}_azimuth"] - true[f"peg{i}_azimuth"])) < 5, i
