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


def _filmed(params: dict, yaw: float, at: tuple[float, float], azimuth: float, noise: float):
    """A rack of ``params`` standing with its post's foot at ``at``, turned by ``yaw``, rendered by MuJoCo from
    ``azimuth`` degrees 25 degrees up and 0.8 m away (320x240): its mask and noisy depth points as three
    rest views, and the camera."""
    import mujoco

    from real2gym.real2gym_addon.demo import Camera
    from real2gym.real2gym_addon.geometry.fit_base import RestView

    shape = _tree(**params)
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.1])
    turn = Rotation.from_euler("z", yaw)
    centre = np.array([*at, 0.0]) - turn.apply(rack.post_offset(shape))
    body = spec.worldbody.add_body(name="rack", pos=centre, quat=np.roll(turn.as_quat(), 1))
    for piece in shape.collision_pieces():
        quat = np.roll(Rotation.from_matrix(piece.rotation()).as_quat(), 1)
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[piece.size[0], piece.size[1], 0],
                      pos=piece.position, quat=quat)  # fmt: skip
    a, e = math.radians(azimuth), math.radians(25)
    target = np.array([*at, 0.15])
    eye = target + 0.8 * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0, 0, 1])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    gl = Rotation.from_matrix(np.stack([right, up, -forward], axis=1))
    spec.worldbody.add_camera(name="cam", pos=eye, quat=np.roll(gl.as_quat(), 1), fovy=50.0)
    width, height = 320, 240
    spec.visual.global_.offwidth, spec.visual.global_.offheight = width, height
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, height, width) as renderer:
        renderer.update_scene(data, camera="cam")
        renderer.enable_depth_rendering()
        depth = renderer.render().copy()
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        ids = renderer.render()[:, :, 0].copy()
    mask = (ids >= 0) & (model.geom_bodyid[ids.clip(0)] == model.body("rack").id)
    focal = height / 2 / math.tan(math.radians(25))
    camera = Camera(width, height, focal, focal, width / 2 - 0.5, height / 2 - 0.5)
    world_from_camera = np.eye(4)
    world_from_camera[:3, :3], world_from_camera[:3, 3] = np.stack([right, -up, forward], axis=1), eye
    v, u = np.nonzero(mask)
    z = depth[v, u] + np.random.default_rng(0).normal(0, noise, len(v))
    in_camera = np.c_[(u - camera.cx) * z / focal, (v - camera.cy) * z / focal, z]
    points = in_camera @ world_from_camera[:3, :3].T + world_from_camera[:3, 3]
    view = RestView(mask, points, np.linalg.inv(world_from_camera), True, 0)
    return [view] * 3, camera


@pytest.mark.parametrize(("azimuth", "noise"), [(-60.0, 0.003), (-120.0, 0.0), (-90.0, 0.01)])
def test_a_rack_is_fitted_from_its_depth_and_silhouette(azimuth: float, noise: float) -> None:
    """Its post, base and pegs from one camera (3 mm and 1 cm of depth noise too): the pegs' shared length
    within 5 mm, elevation within 2 degrees, radius within 2 mm, each peg's height within 6 mm (12 mm with 1 cm
    of noise) and direction within 5 degrees."""
    from real2gym.real2gym_addon.geometry.rack_fit import fit_rack

    changes = {
        "peg_elevation": math.radians(22),
        "peg0_azimuth": 0.3,
        "peg1_azimuth": 2.3,
        "peg2_azimuth": -1.9,
    }
    yaw, at = 0.4, (0.05, 0.02)
    views, camera = _filmed(changes, yaw, at, azimuth, noise)
    fitted = fit_rack(views, camera)
    p, true = fitted.shape.params, {**TREE, **changes}
    assert p["peg_count"] == 3
    assert p["peg_length"] == pytest.approx(true["peg_length"], abs=0.005)
    assert math.degrees(abs(p["peg_elevation"] - true["peg_elevation"])) < 2
    assert p["peg_radius"] == pytest.approx(true["peg_radius"], abs=0.002)
    assert p["post_radius"] == pytest.approx(true["post_radius"], abs=0.002)
    for i in range(3):
        assert p[f"peg{i}_height"] == pytest.approx(
            true[f"peg{i}_height"], abs=0.006 if noise < 0.005 else 0.012
        )
        turned = math.remainder(
            p[f"peg{i}_azimuth"] + fitted.yaw - true[f"peg{i}_azimuth"] - yaw, 2 * math.pi
        )
        assert abs(math.degrees(turned)) < 5
    # The post stands where it stood: its foot is the fitted frame's post origin.
    foot = fitted.position + Rotation.from_euler("z", fitted.yaw).apply(rack.post_offset(fitted.shape))
    assert np.hypot(*(foot[:2] - at)) < 0.005 and abs(foot[2]) < 1e-9


def test_a_mug_tracked_through_the_video_keeps_its_handle_where_the_fit_found_it() -> None:
    """A round shape's yaw is held where it starts when it is tracked (its points cannot turn it): a mug's
    handle stays on its side (it was held at 0, which turned every mug's handle to world +x, and the hand's
    grasp on the handle closed on nothing)."""
    from real2gym.real2gym_addon.geometry.motion import align

    yaw = 1.2
    turn = Rotation.from_euler("z", yaw).as_matrix()
    centre = np.array([0.2, 0.1, MUG.size[2] / 2])
    points = MUG.outline_points() @ turn.T + centre
    position, fitted_yaw, _, rms = align(MUG, points, centre + [0.003, -0.002, 0.0], yaw)
    assert fitted_yaw == yaw
    assert np.linalg.norm(position - centre) < 5e-4
