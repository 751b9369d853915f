"""A rack rendered by MuJoCo from one camera, as the rack fits see it: its mask and noisy depth points."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.fit_base import RestView
from real2gym.real2gym_addon.geometry.shapes import Shape

WIDTH, HEIGHT, FOVY = 320, 240, 50.0


def filmed_rack(
    shape: Shape, centre: np.ndarray, yaw: float, target: np.ndarray, eye: np.ndarray, noise: float,
    wall: tuple | None = None,
) -> tuple[list[RestView], Camera]:  # fmt: skip
    """The rack ``shape`` with its box's centre at ``centre`` turned by ``yaw`` about z, on a ground plane
    (and before a ``wall``: ``(centre (3,), half extents (3,))`` of a box, in no mask), seen from ``eye``
    looking at ``target`` (320x240, 50 degrees up and down): its mask and its depth points with ``noise`` (m,
    one sigma) as three rest views, and the camera."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.1])
    if wall is not None:
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(wall[1]), pos=list(wall[0]))
    turn = Rotation.from_euler("z", yaw)
    body = spec.worldbody.add_body(name="rack", pos=centre, quat=np.roll(turn.as_quat(), 1))
    for piece in shape.collision_pieces():
        quat = np.roll(Rotation.from_matrix(piece.rotation()).as_quat(), 1)
        kind = mujoco.mjtGeom.mjGEOM_BOX if piece.kind == "box" else mujoco.mjtGeom.mjGEOM_CYLINDER
        body.add_geom(type=kind, size=list(piece.size), pos=piece.position, quat=quat)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0, 0, 1])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    gl = Rotation.from_matrix(np.stack([right, up, -forward], axis=1))
    spec.worldbody.add_camera(name="cam", pos=eye, quat=np.roll(gl.as_quat(), 1), fovy=FOVY)
    spec.visual.global_.offwidth, spec.visual.global_.offheight = WIDTH, HEIGHT
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, HEIGHT, WIDTH) as renderer:
        renderer.update_scene(data, camera="cam")
        renderer.enable_depth_rendering()
        depth = renderer.render().copy()
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        ids = renderer.render()[:, :, 0].copy()
    mask = (ids >= 0) & (model.geom_bodyid[ids.clip(0)] == model.body("rack").id)
    focal = HEIGHT / 2 / math.tan(math.radians(FOVY / 2))
    camera = Camera(WIDTH, HEIGHT, focal, focal, WIDTH / 2 - 0.5, HEIGHT / 2 - 0.5)
    world_from_camera = np.eye(4)
    world_from_camera[:3, :3], world_from_camera[:3, 3] = np.stack([right, -up, forward], axis=1), eye
    v, u = np.nonzero(mask)
    z = depth[v, u] + np.random.default_rng(0).normal(0, noise, len(v))
    in_camera = np.c_[(u - camera.cx) * z / focal, (v - camera.cy) * z / focal, z]
    points = in_camera @ world_from_camera[:3, :3].T + world_from_camera[:3, 3]
    view = RestView(mask, points, np.linalg.inv(world_from_camera), True, 0)
    return [view] * 3, camera
