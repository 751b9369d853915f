"""Containers with a radius profile: tapered cups and rounded bowls.

Their meshes, collision rings, surface distances and report round trip, and the
physics test that matters: a block dropped into the exported bowl rests on its
floor (the tilted wall rings leave no gap), where a convex hull would hold it up.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.motion import surface_distance
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.mjcf.export import SceneObject, build_scene, collision_volume


def _bowl(base: float = 0.0385) -> Shape:
    params = {"outer_radius": 0.07, "base_radius": base, "inner_radius": 0.065, "wall_thickness": 0.005,
              "bottom_thickness": 0.006}  # fmt: skip
    return Shape("bowl", (0.14, 0.14, 0.06), params)


def _tapered_cup() -> Shape:
    params = {"outer_radius": 0.045, "base_radius": 0.035, "inner_radius": 0.04, "wall_thickness": 0.005,
              "bottom_thickness": 0.006}  # fmt: skip
    return Shape("cup", (0.09, 0.09, 0.09), params)


@pytest.mark.parametrize("shape", [_bowl(), _tapered_cup()], ids=["bowl", "tapered cup"])
def test_mesh_pieces_and_distances_follow_the_profile(shape: Shape) -> None:
    mesh = shape.mesh()
    assert mesh.is_watertight and mesh.volume > 0
    assert np.allclose(mesh.bounds, [np.array(shape.size) / -2, np.array(shape.size) / 2], atol=1e-6)
    heights, radii = shape.outer_profile()
    assert radii[0] == pytest.approx(shape.params["base_radius"]) and radii[-1] == pytest.approx(
        0.5 * shape.size[0]
    )
    # Points on the visual surface are on the surface the motion fit aligns to.
    samples, _ = trimesh.sample.sample_surface_even(mesh, 500, seed=1)
    assert np.abs(surface_distance(shape, np.asarray(samples))).max() < 3e-4  # the mesh has 48 sides
    # The opening stays open: the axis above the floor is outside the solid.
    axis = np.c_[np.zeros(5), np.zeros(5), np.linspace(heights[0] + 0.01, heights[-1] - 0.005, 5)]
    assert np.all(surface_distance(shape, axis) > 0)
    walls = [p for p in shape.collision_pieces() if p.kind == "box"]
    if shape.kind == "bowl":
        tilts = sorted({round(p.tilt, 6) for p in walls})
        assert len(tilts) == 4 and all(t > 0 for t in tilts) and tilts[0] < tilts[-1]
    else:
        assert len({round(p.tilt, 6) for p in walls}) == 1 and walls[0].tilt > 0
    assert Shape.from_report(shape.to_report()).params == pytest.approx(shape.params)
    assert 0.3 < collision_volume(shape) / mesh.volume < 3.0


def _drop_into(shape: Shape, tmp_path: Path) -> float:
    """Final height (m) of a 3 cm block's centre dropped from above the container's axis."""
    block = Shape("box", (0.03, 0.03, 0.03))
    objects = [
        SceneObject("bowl", "container", shape, np.array([0.0, 0.0, shape.size[2] / 2]), 0.0),
        SceneObject("block", "manipulated", block, np.array([0.004, -0.003, shape.size[2] + 0.03]), 0.3),
    ]
    camera = Camera(320, 240, 300.0, 300.0, 160.0, 120.0)
    pose = np.array([[1, 0, 0, 0], [0, -1, 0, -0.5], [0, 0, -1, 0.6], [0, 0, 0, 1]], float)
    scene = build_scene(objects, [-0.2, -0.2, 0.2, 0.2], pose, camera, None, tmp_path)
    data = mujoco.MjData(scene.model)
    for _ in range(int(1.5 / scene.model.opt.timestep)):
        mujoco.mj_step(scene.model, data)
    return float(data.body(scene.name_map["block"]).xpos[2])


def test_a_block_dropped_into_the_bowl_rests_on_its_floor(tmp_path: Path) -> None:
    bowl = _bowl()
    floor = bowl.params["bottom_thickness"]
    assert _drop_into(bowl, tmp_path / "rings") == pytest.approx(floor + 0.015, abs=0.003)
    bowl.collision = "hull"  # one convex hull closes the bowl: the block stays on its lid
    assert _drop_into(bowl, tmp_path / "hull") > bowl.size[2]
