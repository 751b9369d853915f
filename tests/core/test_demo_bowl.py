"""tools/make_demo.py --target bowl: the block is dropped into a bowl and rests on its floor."""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from generated_demos import SMALL, generate

from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT, FRAMES, FPS = 160, 120, 40, 12
RIM, HEIGHT_M, WALL, BOTTOM = 0.07, 0.06, 0.005, 0.006  # the generator's bowl defaults
BASE = 0.55 * RIM


def _outer_radius(z: float) -> float:
    """The bowl's outer profile r(z) for the default sizes."""
    return BASE + (RIM - BASE) * math.sqrt(1.0 - (1.0 - z / HEIGHT_M) ** 2)


@pytest.fixture(scope="module")
def bowl_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40-frame 160x120 demo dropping the block into a bowl of the default size."""
    out = tmp_path_factory.mktemp("bowl") / "demo"
    result = generate(out, *SMALL, "--target", "bowl")
    assert result.returncode == 0, result.stderr
    assert "block in bowl" in result.stdout
    return out


def test_truth_describes_the_bowl(bowl_demo: Path) -> None:
    truth = load_truth(bowl_demo)
    assert set(truth.objects) == {"block", "bowl"}
    bowl = truth.objects["bowl"]
    assert bowl.shape == "bowl" and bowl.params["role"] == "container"
    assert bowl.size == pytest.approx([2 * RIM, 2 * RIM, HEIGHT_M])
    expected = {
        "outer_radius": RIM,
        "base_radius": BASE,
        "inner_radius": RIM - WALL,
        "wall_thickness": WALL,
        "bottom_thickness": BOTTOM,
        "height": HEIGHT_M,
    }
    assert set(bowl.params) == {*expected, "role"}
    assert {k: bowl.params[k] for k in expected} == pytest.approx(expected)
    assert bowl.mass > 0


def test_prompts_name_the_bowl(bowl_demo: Path) -> None:
    prompts = json.loads((bowl_demo / "prompts.json").read_text())
    roles = {o["name"]: (o["role"], o["shape"]) for o in prompts["objects"]}
    assert roles == {"block": ("manipulated", "auto"), "bowl": ("container", "bowl")}
    assert prompts["task"] == {"type": "place_in", "object": "block", "target": "bowl"}


def test_block_ends_resting_on_the_bowl_floor(bowl_demo: Path) -> None:
    truth = load_truth(bowl_demo)
    events = {k["event"]: k["frame"] for k in truth.keyframes}
    assert set(events) == {"grasp", "lift", "release", "contact"}
    assert events["grasp"] < events["lift"] < events["release"] <= events["contact"] < FRAMES

    block, bowl = truth.objects["block"], truth.objects["bowl"]
    size = block.size[2]
    block_end = block.frames[-1].position_world
    bowl_end = bowl.frames[-1].position_world  # the bounding-box centre, H / 2 above the bottom
    floor_z = bowl_end[2] - HEIGHT_M / 2 + BOTTOM
    floor_radius = _outer_radius(BOTTOM) - WALL
    assert np.linalg.norm(block_end[:2] - bowl_end[:2]) + size / 2 < floor_radius
    assert block_end[2] == pytest.approx(floor_z + size / 2, abs=0.004)
    assert np.linalg.norm(bowl_end[:2] - bowl.frames[0].position_world[:2]) < 0.005  # not pushed

    assert truth.raw["checks"]["in_bowl"]["passed"]
    # While carried, the block cleared the rim.
    carried = block.frames[(events["lift"] + events["release"]) // 2]
    assert carried.position_world[2] - size / 2 > HEIGHT_M


def test_bowl_mesh_follows_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """The visual mesh is closed, its outer surface on r(z); the collision has 4 rings of 16."""
    trimesh = pytest.importorskip("trimesh")
    monkeypatch.syspath_prepend(str(REPO / "tools"))
    make_demo = importlib.import_module("make_demo")
    scene = importlib.import_module("_demo_scene")

    args = make_demo.parse_args(["--out", "unused", "--target", "bowl"])
    layout = make_demo.sample_layout(args, np.random.default_rng(0))
    verts, faces = scene._bowl_mesh(layout)
    mesh = trimesh.Trimesh(np.reshape(verts, (-1, 3)), np.reshape(faces, (-1, 3)), process=False)
    assert mesh.is_watertight and mesh.volume > 0  # closed, normals outward
    assert mesh.bounds == pytest.approx(np.array([[-RIM, -RIM, 0], [RIM, RIM, HEIGHT_M]]))
    points = np.asarray(mesh.vertices)
    radii, heights = np.hypot(points[:, 0], points[:, 1]), points[:, 2]
    expected = np.array([_outer_radius(z) for z in heights])
    on_outer = np.isclose(radii, expected, atol=1e-9)
    on_inner = np.isclose(radii, expected - WALL, atol=1e-9) & (heights >= BOTTOM - 1e-9)
    on_axis = radii < 1e-9
    assert (on_outer | on_inner | on_axis).all()
    assert on_inner.any() and np.unique(heights[on_outer]).size >= 12

    model = scene.build_model(layout, np.r_[0.0, 0.0, 0.5], np.r_[1.0, 0, 0, 0], np.random.default_rng(0))
    names = [model.geom(i).name for i in range(model.ngeom)]
    assert sum(n.startswith("bowl_wall") for n in names) == 4 * 16
    assert {"bowl_bottom", "bowl_floor", "bowl_visual"} <= set(names) and "cup_visual" not in names


def test_a_block_too_big_for_the_bowl_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "small_bowl"
    result = generate(out, *SMALL, "--target", "bowl", "--bowl-radius", "0.04")
    assert result.returncode == 2
    assert "bowl" in result.stderr and "--bowl-radius" in result.stderr
    assert not out.exists()
