"""Shapes users have: a mug's handle as its own part, found only where the depth shows one.

The views are made without the fit's shape model (benchmarks/bench_shapes.py: an
analytic mug with a curved tube handle, sampled, splatted into a depth buffer
with noise); the floors here are looser than the benchmark's target.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_shapes  # noqa: E402

from real2gym.real2gym_addon.demo import Camera  # noqa: E402
from real2gym.real2gym_addon.errors import DemoFolderError  # noqa: E402
from real2gym.real2gym_addon.geometry.fit import fit_shape  # noqa: E402
from real2gym.real2gym_addon.geometry.motion import surface_distance  # noqa: E402
from real2gym.real2gym_addon.geometry.shapes import Shape  # noqa: E402
from real2gym.real2gym_addon.mesh_file import read_obj  # noqa: E402
from real2gym.real2gym_addon.mjcf.export import SceneObject, build_scene  # noqa: E402
from real2gym.real2gym_addon.prompts import parse_object  # noqa: E402

MUG = bench_shapes.container(0.04, 0.04, 0.095, 0.005, handle=(0.025, 0.02, 0.08, 0.005))
MUG_SIZE = (0.105, 0.08, 0.095)


def _mug_shape() -> Shape:
    params = {"outer_radius": 0.04, "inner_radius": 0.035, "wall_thickness": 0.005, "bottom_thickness": 0.006,
              "handle_reach": 0.065, "handle_bottom": 0.02, "handle_top": 0.08, "handle_thickness": 0.008,
              "handle_width": 0.012}  # fmt: skip
    return Shape("cup", MUG_SIZE, params)


def test_a_handled_cup_has_its_handle_as_a_part_and_in_its_box() -> None:
    shape = _mug_shape()
    assert shape.has_handle and shape.bounding_size() == pytest.approx(MUG_SIZE)
    mesh = shape.mesh()
    assert mesh.is_watertight
    assert np.allclose(mesh.bounds, [np.array(MUG_SIZE) / -2, np.array(MUG_SIZE) / 2], atol=1e-6)
    names = [name for name, _ in shape.parts()]
    assert names == ["body", "handle"]
    handle = dict(shape.parts())["handle"]
    assert (
        handle.is_watertight and handle.volume > 0 and handle.bounds[1][0] == pytest.approx(MUG_SIZE[0] / 2)
    )
    # The cup's axis is off the box centre, away from the handle; the distance follows it.
    assert shape.axis_offset()[0] == pytest.approx(-0.0125)
    samples, _ = trimesh.sample.sample_surface_even(shape.body().mesh(), 300, seed=1)
    distance = np.abs(surface_distance(shape, np.asarray(samples) + shape.axis_offset()))
    assert np.percentile(distance, 95) < 3e-4  # all but the wall under the handle's roots
    bar = np.array([[MUG_SIZE[0] / 2 - 0.004, 0.0, 0.0]])  # inside the handle's outer bar
    assert surface_distance(shape, bar)[0] < 0
    hole = np.array([[0.04 - 0.0125 + 0.008, 0.0, 0.0]])  # between the wall and the bar: open
    assert surface_distance(shape, hole)[0] > 0
    assert Shape.from_report(shape.to_report()).params == pytest.approx(shape.params)


def test_the_handle_collides_as_its_own_boxes_in_mujoco(tmp_path: Path) -> None:
    shape = _mug_shape()
    handle = shape.handle_pieces()
    assert len(handle) == 3 and all(p.kind == "box" for p in handle)
    assert all(p in shape.collision_pieces() for p in handle)
    camera = Camera(640, 480, 600.0, 600.0, 320.0, 240.0)
    obj = SceneObject("mug", "container", shape, np.array([0.0, 0.0, MUG_SIZE[2] / 2]), 0.0)
    scene = build_scene([obj], [-0.2, -0.2, 0.2, 0.2], np.eye(4), camera, None, tmp_path)
    model = scene.model
    boxes = [model.geom(i) for i in range(model.ngeom) if model.geom(i).name.startswith("mug_collision_")]
    outermost = max(float(g.pos[0] + g.size[0]) for g in boxes)
    assert outermost == pytest.approx(MUG_SIZE[0] / 2, abs=1e-6)  # the handle's bar reaches the box's edge
    assert model.geom_type[boxes[-1].id] == mujoco.mjtGeom.mjGEOM_BOX


@pytest.mark.parametrize("elevation", [25.0, 60.0])
@pytest.mark.parametrize("hint", ["auto", "cup"])
def test_a_mug_is_fitted_with_its_handle(elevation: float, hint: str) -> None:
    case = bench_shapes.Case("mug", MUG, MUG_SIZE, elevation, yaw=0.4, hint=hint)
    view, camera = bench_shapes.render_view(case, seed=3)
    fitted, warning = fit_shape(hint, [view], camera)
    shape = fitted.shape
    assert warning is None and shape.kind == "cup" and shape.has_handle
    error = bench_shapes.size_error(shape.size, MUG_SIZE)
    assert error < 5.0, (shape.size, MUG_SIZE)
    assert abs((fitted.yaw - 0.4 + np.pi) % (2 * np.pi) - np.pi) < 0.15  # the frame's x points at the handle
    # The box centre is where the true one is: half the handle's protrusion off the cup's axis.
    assert np.linalg.norm(fitted.position[:2] - 0.0125 * np.array([np.cos(0.4), np.sin(0.4)])) < 0.006


@pytest.mark.parametrize("elevation", [25.0, 60.0])
def test_a_plain_cup_gets_no_handle(elevation: float) -> None:
    cup = bench_shapes.container(0.04, 0.04, 0.1, 0.004)
    for hint in ("auto", "cup"):
        case = bench_shapes.Case("cup", cup, (0.08, 0.08, 0.1), elevation, hint=hint)
        view, camera = bench_shapes.render_view(case, seed=5)
        shape = fit_shape(hint, [view], camera)[0].shape
        assert not shape.has_handle, (hint, shape.params)
        assert bench_shapes.size_error(shape.size, (0.08, 0.08, 0.1)) < 5.0
    fitted, warning = fit_shape("mug", [view], camera)  # the user said mug: told that no handle shows
    assert not fitted.shape.has_handle and "no handle" in warning


def test_a_small_bump_is_no_handle() -> None:
    """A protrusion under a centimetre (a label, a seam) is not a handle."""
    bumpy = bench_shapes.container(0.04, 0.04, 0.1, 0.004, handle=(0.005, 0.03, 0.07, 0.0025))
    case = bench_shapes.Case("cup", bumpy, (0.085, 0.08, 0.1), 40.0, yaw=-0.3, hint="cup")
    view, camera = bench_shapes.render_view(case, seed=7)
    assert not fit_shape("cup", [view], camera)[0].shape.has_handle


def _write_obj(path: Path, vertices: np.ndarray, faces: np.ndarray) -> None:
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in vertices]
    lines += ["# quads and triangles alike"] + [f"f {a + 1}/1 {b + 1}//2 {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def test_a_users_mesh_is_scaled_and_posed_to_the_views(tmp_path: Path) -> None:
    """The user's mug, in centimetres and y up, fitted to a mug seen by the camera (a different surface)."""
    mesh = _mug_shape().mesh()
    y_up = np.c_[mesh.vertices[:, 0], mesh.vertices[:, 2], -mesh.vertices[:, 1]] * 100.0
    _write_obj(tmp_path / "mug.obj", y_up + [3.0, 20.0, -1.0], mesh.faces)
    vertices, faces = read_obj(tmp_path, "mug.obj", "mug")
    assert len(faces) == len(mesh.faces)
    case = bench_shapes.Case("mug", MUG, MUG_SIZE, 40.0, yaw=0.4, hint="mesh")
    view, camera = bench_shapes.render_view(case, seed=11)
    fitted, warning = fit_shape("mesh", [view], camera, mesh=(vertices, faces))
    shape = fitted.shape
    assert warning is None and shape.kind == "mesh" and shape.faces is not None
    assert bench_shapes.size_error(shape.size, MUG_SIZE) < 5.0, shape.size
    assert abs((fitted.yaw - 0.4 + np.pi) % (2 * np.pi) - np.pi) < 0.15
    assert fitted.position[2] == pytest.approx(shape.size[2] / 2)
    again = Shape.from_report(shape.to_report())
    assert np.array_equal(again.faces, shape.faces) and again.mesh().is_watertight


@pytest.mark.parametrize(
    ("relative", "content", "message"),
    [
        ("../outside.obj", "v 0 0 0\n", "outside the demo folder"),
        ("missing.obj", None, "no such file"),
        ("points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", "no faces"),
        ("flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "flat"),
        ("broken.obj", "v 0 0 zero\n", "line 1"),
        ("holes.obj", "v 0 0 0\nv 1 0 0\nf 1 2 7\n", "existing vertices"),
    ],
)
def test_a_bad_mesh_file_is_named_in_the_error(tmp_path: Path, relative: str, content, message: str) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    if content is not None:
        (folder / relative).write_text(content)
    with pytest.raises(DemoFolderError, match=message) as raised:
        read_obj(folder, relative, "vase")
    assert "object 'vase'" in str(raised.value) and relative in str(raised.value)


@pytest.mark.parametrize("elevation", [25.0, 60.0])
def test_a_tapered_cup_gets_both_radii_with_auto(elevation: float) -> None:
    cup = bench_shapes.container(0.045, 0.032, 0.11, 0.004)
    case = bench_shapes.Case("tapered", cup, (0.09, 0.09, 0.11), elevation)
    view, camera = bench_shapes.render_view(case, seed=13)
    shape = fit_shape("auto", [view], camera)[0].shape
    assert shape.kind == "cup", shape.kind
    assert abs(shape.params["outer_radius"] - 0.045) / 0.045 < 0.05
    assert abs(shape.params["base_radius"] - 0.032) / 0.032 < 0.08
    assert bench_shapes.size_error(shape.size, (0.09, 0.09, 0.11)) < 5.0


def test_a_flared_bowls_rim_radius() -> None:
    bowl = bench_shapes.container(0.075, 0.035, 0.06, 0.005, power=0.5)
    case = bench_shapes.Case("bowl", bowl, (0.15, 0.15, 0.06), 35.0, hint="bowl")
    view, camera = bench_shapes.render_view(case, seed=17)
    shape = fit_shape("bowl", [view], camera)[0].shape
    assert shape.kind == "bowl" and abs(shape.params["outer_radius"] - 0.075) / 0.075 < 0.05


@pytest.mark.parametrize("rim", [False, True], ids=["flat", "raised rim"])
def test_a_thin_plate_seen_at_35_degrees(rim: bool) -> None:
    height = 0.015 if rim else 0.012
    surface = bench_shapes.plate(0.11, height, 0.025, 0.007) if rim else bench_shapes.plate(0.11, height)
    case = bench_shapes.Case("plate", surface, (0.22, 0.22, height), 35.0)
    view, camera = bench_shapes.render_view(case, seed=19)
    shape = fit_shape("auto", [view], camera)[0].shape
    assert shape.kind == "plate", shape.kind
    assert bench_shapes.size_error(shape.size, (0.22, 0.22, height)) < 5.0, shape.size
    if rim:  # the dish is 7 mm deep inside a 25 mm rim; it collides as a floor and a ring of rim boxes
        assert shape.params["dish_depth"] == pytest.approx(0.007, abs=0.002)
        assert shape.params["rim_width"] == pytest.approx(0.025, abs=0.011)
        assert len(shape.collision_pieces()) > 10 and shape.mesh().is_watertight
    else:
        assert "dish_depth" not in shape.params


def test_the_prompts_mesh_key_needs_the_mesh_shape() -> None:
    entry = {"name": "vase", "frame": 0, "box": [10, 10, 50, 60], "shape": "mesh", "mesh": "scans/vase.obj"}
    assert parse_object(entry, 0).mesh == "scans/vase.obj"
    assert parse_object({**entry, "shape": "mug", "mesh": None}, 0).shape == "mug"
    with pytest.raises(DemoFolderError, match="object 'vase'.*'shape' is 'cup'"):
        parse_object({**entry, "shape": "cup"}, 0)
    with pytest.raises(DemoFolderError, match="object 'vase'.*'mesh' must be the path"):
        parse_object({**entry, "mesh": 3}, 0)
