"""The articulated shape kinds: a cabinet open on its front, a door panel with a bar handle, an open-top
drawer with one.

Their meshes, collision pieces, outlines and distances describe one solid; the space inside a cabinet
or a drawer is empty and open where it should be (a cup fits into a cabinet through its front, and
stays there in MuJoCo); a box fit of one is turned so its front (local +x) faces the camera.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_shapes  # noqa: E402

from real2gym.real2gym_addon.geometry.fit import fit_shape  # noqa: E402
from real2gym.real2gym_addon.geometry.shape_kinds import (  # noqa: E402
    CONTAINER_KINDS,
    REPORT_SHAPES,
    SHAPE_KINDS,
    has_cavity,
    is_container,
)
from real2gym.real2gym_addon.geometry.shapes import Shape  # noqa: E402

CABINET_SIZE = (0.45, 0.35, 0.28)
WALL = 0.015


def _cabinet() -> Shape:
    return Shape("cabinet", CABINET_SIZE, {"wall_thickness": WALL})


def _door() -> Shape:
    params = {"handle_length": 0.2, "handle_offset_y": 0.15, "handle_depth": 0.035, "handle_thickness": 0.012}
    return Shape("door", (0.02, 0.4, 0.6), params)


def _drawer() -> Shape:
    params = {
        "wall_thickness": 0.012,
        "bottom_thickness": 0.01,
        "handle_length": 0.12,
        "handle_offset_z": 0.01,
    }
    return Shape("drawer", (0.4, 0.3, 0.12), params)


SHAPES = [_cabinet(), _door(), _drawer(), Shape("door", (0.02, 0.4, 0.6)),
          Shape("drawer", (0.4, 0.3, 0.12), {"wall_thickness": 0.012, "bottom_thickness": 0.01})]  # fmt: skip
IDS = ["cabinet", "door", "drawer", "plain door", "plain drawer"]


def _inside_piece(shape: Shape, points: np.ndarray) -> np.ndarray:
    """Whether each point is strictly inside one of the shape's (unrotated) collision boxes."""
    inside = np.zeros(len(points), bool)
    for piece in shape.collision_pieces():
        inside |= np.all(np.abs(points - piece.position) < np.asarray(piece.size) - 1e-9, axis=1)
    return inside


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_mesh_pieces_outline_and_distance_are_one_solid(shape: Shape) -> None:
    mesh = shape.mesh()
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0
    pieces = shape.collision_pieces()
    assert all(p.kind == "box" and p.yaw == 0.0 and p.tilt == 0.0 for p in pieces)
    # The boxes do not overlap, so their volumes add up to the solid's (the mass MuJoCo gives it).
    for a, b in itertools.combinations(pieces, 2):
        overlap = np.minimum(np.add(a.position, a.size), np.add(b.position, b.size)) - np.maximum(
            np.subtract(a.position, a.size), np.subtract(b.position, b.size)
        )
        assert np.any(overlap <= 1e-9), (a, b)
    assert sum(8 * np.prod(p.size) for p in pieces) == pytest.approx(mesh.volume, rel=1e-9)
    # The visual surface is the surface the distance measures to.
    samples, _ = trimesh.sample.sample_surface_even(mesh, 500, seed=1)
    assert np.abs(shape.surface_distance(np.asarray(samples))).max() < 1e-9
    # Each piece's middle is in the material; the outline spans the mesh.
    middles = np.array([p.position for p in pieces])
    assert np.all(shape.surface_distance(middles) < 0)
    outline = shape.outline_points()
    assert np.allclose([outline.min(axis=0), outline.max(axis=0)], mesh.bounds, atol=1e-9)
    # The origin is the centre of size's box: the body (without a handle) fills it exactly.
    half = np.array(shape.size) / 2
    assert np.allclose(mesh.bounds[0], -half) and np.allclose(mesh.bounds[1][1:], half[1:])
    again = Shape.from_report(shape.to_report())
    assert again.kind == shape.kind and again.params == pytest.approx(shape.params)


@pytest.mark.parametrize(("shape", "open_axis"), [(_cabinet(), 0), (_drawer(), 2)], ids=["cabinet", "drawer"])
def test_the_cavity_is_empty_and_open_on_its_side(shape: Shape, open_axis: int) -> None:
    centre, half = shape.cavity()
    assert SHAPE_KINDS[shape.kind].cavity is not None and has_cavity(shape.kind)
    # It reaches the open face and stops at the walls on every other side.
    size_half = np.array(shape.size) / 2
    assert centre[open_axis] + half[open_axis] == pytest.approx(size_half[open_axis])
    assert np.all(centre - half > -size_half + 1e-6)
    grid = np.stack(np.meshgrid(*[np.linspace(-0.999, 0.999, 7)] * 3), axis=-1).reshape(-1, 3)
    inside = centre + grid * half
    assert np.all(shape.surface_distance(inside) > 0) and not _inside_piece(shape, inside).any()
    # Just inside and just past the opening, in front of the cavity's middle: no material.
    for step in (-1e-4, 0.0, 1e-3):
        point = centre.copy()
        point[open_axis] = size_half[open_axis] + step
        assert not _inside_piece(shape, point[None]).any()
        assert shape.surface_distance(point[None])[0] > 0
    # Just past each closed side of the cavity: in a wall.
    for axis, sign in itertools.product(range(3), (-1, 1)):
        if axis == open_axis and sign == 1:
            continue
        point = centre.copy()
        point[axis] += sign * (half[axis] + 1e-3)
        assert shape.surface_distance(point[None])[0] < 0, (axis, sign)
    # The visual mesh is hollow there too: its volume is the box's less the cavity's (and the handle's).
    handle = sum(8 * np.prod(p.size) for p in shape.collision_pieces()[5:])
    assert shape.mesh().volume == pytest.approx(np.prod(shape.size) - np.prod(2 * half) + handle, rel=1e-9)


def test_the_door_handle_stands_off_its_outer_face() -> None:
    door = _door()
    pieces = door.collision_pieces()
    assert len(pieces) == 4  # the panel, the bar and its two standoffs
    bar = pieces[1]
    front = door.size[0] / 2
    assert bar.position[0] + bar.size[0] == pytest.approx(front + 0.035)  # outside size's box, in front
    assert bar.position[1] == pytest.approx(0.15) and bar.size[2] == pytest.approx(
        0.1
    )  # vertical, off-centre
    assert door.mesh().bounds[1][0] == pytest.approx(front + 0.035)
    # Fingers fit between the panel and the bar: the gap is open; the bar is material.
    gap = np.array([[front + 0.01, 0.15, 0.0]])
    assert door.surface_distance(gap)[0] > 0 and not _inside_piece(door, gap).any()
    assert door.surface_distance(np.array(bar.position)[None])[0] < 0
    assert len(Shape("door", door.size).collision_pieces()) == 1
    drawer_bar = _drawer().collision_pieces()[5]
    assert drawer_bar.size[1] == pytest.approx(0.06) and drawer_bar.position[2] == pytest.approx(
        0.01
    )  # across y


def test_a_cup_fits_in_the_cabinet() -> None:
    cabinet = _cabinet()
    centre, half = cabinet.cavity()
    assert np.allclose(2 * half, [0.435, 0.32, 0.25])
    cup = trimesh.creation.cylinder(radius=0.045, height=0.12, sections=32)
    floor = centre[2] - half[2]
    cup.apply_translation([centre[0], centre[1], floor + 0.06 + 1e-4])
    points, _ = trimesh.sample.sample_surface_even(cup, 400, seed=2)
    points = np.concatenate([np.asarray(points), cup.vertices])
    assert np.all(cabinet.surface_distance(points) > 0)
    assert np.all(np.abs(points - centre) <= half)
    # It goes in through the front: its path from outside, straight along -x, meets no wall.
    for shift in np.linspace(0.0, 0.5, 11):
        assert np.all(cabinet.surface_distance(points + [shift, 0.0, 0.0]) > 0)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_mujoco_model_of_the_pieces_compiles(shape: Shape) -> None:
    spec = mujoco.MjSpec()
    mesh = shape.mesh()
    spec.add_mesh(
        name="visual", uservert=mesh.vertices.ravel().tolist(), userface=mesh.faces.ravel().tolist()
    )
    body = spec.worldbody.add_body(name="object", pos=[0.0, 0.0, shape.size[2] / 2])
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="visual", contype=0, conaffinity=0, density=0.0)
    for piece in shape.collision_pieces():
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(piece.size), pos=list(piece.position),
                      density=1000.0)  # fmt: skip
    model = spec.compile()
    assert model.ngeom == 1 + len(shape.collision_pieces())
    assert model.body("object").mass[0] == pytest.approx(1000.0 * mesh.volume, rel=1e-6)


def test_a_cup_rests_inside_the_cabinet_in_mujoco() -> None:
    """A cup set down inside a fixed cabinet stays on its floor, between its walls."""
    cabinet = _cabinet()
    centre, half = cabinet.cavity()
    spec = mujoco.MjSpec()
    spec.option.timestep = 0.002
    body = spec.worldbody.add_body(name="cabinet", pos=[0.0, 0.0, CABINET_SIZE[2] / 2])
    for piece in cabinet.collision_pieces():
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(piece.size), pos=list(piece.position))
    floor = CABINET_SIZE[2] / 2 + centre[2] - half[2]
    cup = spec.worldbody.add_body(name="cup", pos=[centre[0] + 0.1, 0.05, floor + 0.06 + 0.005])
    cup.add_freejoint()
    cup.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.045, 0.06, 0.0], mass=0.3)
    model = spec.compile()
    data = mujoco.MjData(model)
    for _ in range(500):
        mujoco.mj_step(model, data)
    position = data.body("cup").xpos
    assert position[2] == pytest.approx(floor + 0.06, abs=0.003)
    assert abs(position[0] - centre[0] - 0.1) < 0.005 and abs(position[1] - 0.05) < 0.005
    assert all(data.contact[i].dist > -0.002 for i in range(data.ncon))


def test_the_kinds_flags() -> None:
    for name in ("cabinet", "door", "drawer"):
        entry = SHAPE_KINDS[name]
        assert entry.reported and name in REPORT_SHAPES
        assert (
            not entry.container and not is_container(name) and name not in CONTAINER_KINDS
        )  # not round cups
        assert not Shape(name, (0.1, 0.1, 0.1)).has_handle  # a bar handle is no cup handle
    assert not has_cavity("door") and not has_cavity("cup") and not has_cavity("sphere")
    with pytest.raises(ValueError, match="door has no box-shaped space"):
        _door().cavity()


def test_walls_too_thick_are_named() -> None:
    with pytest.raises(ValueError, match="cabinet of size .* walls too thick"):
        Shape("cabinet", (0.1, 0.03, 0.1), {"wall_thickness": 0.015}).collision_pieces()
    with pytest.raises(ValueError, match="drawer of size"):
        Shape("drawer", (0.1, 0.1, 0.02), {"wall_thickness": 0.01, "bottom_thickness": 0.02}).mesh()
    with pytest.raises(ValueError, match="door's handle needs"):
        Shape("door", (0.02, 0.4, 0.6), {"handle_length": 0.2, "handle_depth": 0.005}).mesh()


def _towards_camera(yaw: float, true_yaw: float) -> float:
    """Angle (rad) between the fitted front (local +x) and the true box's -y side (the camera's, at
    azimuth -90 degrees)."""
    front = np.array([math.cos(yaw), math.sin(yaw)])
    facing = np.array([math.sin(true_yaw), -math.cos(true_yaw)])
    return math.acos(float(np.clip(front @ facing, -1.0, 1.0)))


def test_a_fitted_cabinet_opens_towards_the_camera() -> None:
    case = bench_shapes.Case("cabinet", bench_shapes.block(0.3, 0.2, 0.18), (0.3, 0.2, 0.18), 35.0, yaw=0.3)
    view, camera = bench_shapes.render_view(case, seed=23)
    fitted, warning = fit_shape("cabinet", [view], camera)
    shape = fitted.shape
    assert warning is None and shape.kind == "cabinet"
    assert _towards_camera(fitted.yaw, 0.3) < 0.1
    assert bench_shapes.size_error(shape.size, (0.2, 0.3, 0.18)) < 5.0, shape.size  # turned: x is the depth
    centre, half = shape.cavity()
    assert np.all(half > 0) and 0.005 <= shape.params["wall_thickness"] <= 0.02


def test_a_fitted_door_is_thin_along_x_and_faces_the_camera() -> None:
    case = bench_shapes.Case("door", bench_shapes.block(0.3, 0.03, 0.25), (0.3, 0.03, 0.25), 35.0, yaw=0.3)
    view, camera = bench_shapes.render_view(case, seed=29)
    fitted, warning = fit_shape("door", [view], camera)
    shape = fitted.shape
    assert warning is None and shape.kind == "door"
    assert shape.size[0] < shape.size[1] and shape.size[1] == pytest.approx(0.3, rel=0.05)
    assert _towards_camera(fitted.yaw, 0.3) < 0.1
