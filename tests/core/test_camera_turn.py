"""The turn of a moving camera about the table's normal, which the table's plane cannot tell.

A hand-made numpy scene (not the project's generator): a faintly grained table seen by a
camera that swings about a point on it, as a head or a hand does, with a sharp dark
shadow sliding across the table (a gripper's, say: nothing masks it, since only the
objects are masked). Its edges are the strongest corners in view and they all move
together, so a path chained from frame to frame follows the shadow and its turn drifts;
every frame placed straight against the reference frame does not.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.camera import invert
from real2gym.real2gym_addon.geometry.camera_motion import estimate_camera_motion, rotation_degrees
from real2gym.real2gym_addon.geometry.table import fit_table_frames

CAMERA = Camera(width=320, height=240, fx=290.0, fy=290.0, cx=159.5, cy=119.5)
NOISE_1M = 0.004
"""Depth noise at 1 m (metres): a rendered depth map stored in millimetres."""
LOOKED_AT = np.array([0.0, 0.05, 0.0])
"""The point on the table the camera swings about (world, metres)."""


def swung_camera(turn_deg: float) -> np.ndarray:
    """world_from_camera 0.45 m up, 0.55 m back, looking at :data:`LOOKED_AT`, swung ``turn_deg`` about it."""
    down = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])  # columns: camera x, y, z
    tilt = Rotation.from_euler("x", np.degrees(np.arctan2(0.55, 0.45)), degrees=True).as_matrix()
    turn = Rotation.from_euler("z", turn_deg, degrees=True).as_matrix()
    pose = np.eye(4)
    pose[:3, :3] = turn @ tilt @ down
    pose[:3, 3] = LOOKED_AT + turn @ np.array([0.0, -0.55, 0.45])
    return pose


def render(
    pose: np.ndarray, grain: np.ndarray, shadow: np.ndarray, shadow_x: float, rng: np.random.Generator
):
    """RGB and depth (mm steps, with noise) of the grained table (1 px = 1 mm) and a ragged shadow at ``shadow_x``.

    The shadow is about 20 x 10 cm, its outline ragged by ``shadow`` (``HxW`` in -1..1, 1 px = 1 mm).
    """
    v, u = np.mgrid[0 : CAMERA.height, 0 : CAMERA.width].astype(float)
    rays = np.stack([(u - CAMERA.cx) / CAMERA.fx, (v - CAMERA.cy) / CAMERA.fy, np.ones_like(u)], axis=-1)
    world_rays = rays @ pose[:3, :3].T
    depth = -pose[2, 3] / np.minimum(world_rays[..., 2], -1e-6)
    xy = pose[:2, 3] + world_rays[..., :2] * depth[..., None]
    map_x = (xy[..., 0] * 1000 + grain.shape[1] / 2).astype(np.float32)
    map_y = (xy[..., 1] * 1000 + grain.shape[0] / 2).astype(np.float32)
    grey = cv2.remap(grain, map_x, map_y, cv2.INTER_LINEAR)
    on_table = (world_rays[..., 2] < 0) & (map_x >= 0) & (map_x < grain.shape[1] - 1)
    on_table &= (map_y >= 0) & (map_y < grain.shape[0] - 1)  # beyond it: a far wall, no reading
    across, along = xy[..., 0] - shadow_x, xy[..., 1] - 0.12
    ragged = cv2.remap(
        shadow, (across * 1000 + shadow.shape[1] / 2).astype(np.float32),
        (along * 1000 + shadow.shape[0] / 2).astype(np.float32), cv2.INTER_LINEAR, borderValue=-9.0,
    )  # fmt: skip
    shade = np.hypot(across / 0.1, along / 0.05) < 1 + 0.8 * ragged
    grey = np.where(shade, grey * 0.45, grey).astype(np.uint8)
    noise = cv2.GaussianBlur(rng.normal(size=depth.shape), (0, 0), 1.0)
    depth = np.round((depth + NOISE_1M * depth**2 * noise / noise.std()) * 1000) / 1000
    depth[~on_table] = 0.0
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB), depth.astype(np.float32)


@pytest.fixture(scope="module")
def grain() -> np.ndarray:
    """A faint wood-like grain: low-contrast streaks along x with a little fine texture."""
    rng = np.random.default_rng(7)
    streaks = cv2.resize(rng.uniform(-1, 1, (240, 8)).astype(np.float32), (1600, 1200))
    fine = cv2.GaussianBlur(rng.uniform(-1, 1, (1200, 1600)).astype(np.float32), (0, 0), 2.0)
    return np.clip(170 + 20 * streaks + 20 * fine, 0, 255).astype(np.uint8)


def test_turn_about_the_table_normal_does_not_drift_with_a_moving_shadow(grain: np.ndarray) -> None:
    """Ten frames swung 1.2 degrees apart while the shadow slides 1.5 cm a frame: every turn within a degree.

    A path chained through the frames and following the shadow's corners drifts by 3-4 degrees here.
    """
    shadow = cv2.resize(
        np.random.default_rng(9).uniform(-1, 1, (12, 24)).astype(np.float32), (240, 120),
        interpolation=cv2.INTER_CUBIC,
    )  # fmt: skip
    rng = np.random.default_rng(3)
    poses = [swung_camera(turn) for turn in 1.2 * np.arange(10)]  # degrees about the table's normal
    views = [render(pose, grain, shadow, -0.1 + 0.015 * k, rng) for k, pose in enumerate(poses)]
    no_objects = np.zeros((CAMERA.height, CAMERA.width), bool)
    fit = fit_table_frames(CAMERA, [d for _, d in views], [no_objects] * len(views))
    motions = estimate_camera_motion(CAMERA, [v[0] for v in views], [v[1] for v in views], planes=fit.planes)
    assert all(m.estimated for m in motions)
    errors = [
        rotation_degrees(invert(invert(poses[0]) @ pose) @ m.reference_from_camera)
        for pose, m in zip(poses, motions, strict=True)
    ]
    assert max(errors) < 1.0, np.round(errors, 2)
