"""Stereo-like depth noise: an object's distance along the rays, a held object's track, a standing one."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from real2gym.real2gym_addon.geometry.carry import fill_held_frames
from real2gym.real2gym_addon.geometry.motion import align, standing_centre
from real2gym.real2gym_addon.geometry.ray_depth import along_rays, ray_residuals
from real2gym.real2gym_addon.geometry.shapes import Shape

BLOCK = Shape("box", (0.04, 0.04, 0.04))
EYE = np.array([-0.5, 0.0, 0.45])
"""A camera 0.67 m from the block, looking down at it from about 40 degrees."""


def _seen_points(shape, position, noise, rng, count=1500):
    """Points where rays from EYE meet the posed shape, moved along their rays by ``noise`` (one sigma, m)."""
    target = position + rng.uniform(-0.03, 0.03, (count * 3, 3))
    direction = target - EYE
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    far = EYE + direction * 2.0  # a point far along each ray: its residual is 2 m less the hit
    residual = ray_residuals(shape, position, np.eye(3), far, EYE)
    hit = np.isfinite(residual)
    depth = 2.0 - residual[hit]
    depth = depth + rng.normal(0.0, noise, len(depth))
    return (EYE + direction[hit] * depth[:, None])[:count]


def test_ray_residuals_are_zero_on_the_surface():
    rng = np.random.default_rng(1)
    position = np.array([0.0, 0.0, 0.02])
    points = _seen_points(BLOCK, position, 0.0, rng)
    residuals = ray_residuals(BLOCK, position, np.eye(3), points, EYE)
    assert np.isfinite(residuals).mean() > 0.95
    assert np.nanmax(np.abs(residuals)) < 0.001


def test_noisy_depth_sets_the_distance_by_the_rays_median():
    """Points' distance to the surface pulls a fit towards the camera under depth noise as large as
    the object; the median along the rays takes that out."""
    rng = np.random.default_rng(2)
    position = np.array([0.0, 0.0, 0.05])  # lifted: nothing holds its height
    view = (position - EYE) / np.linalg.norm(position - EYE)
    errors_fit, errors_rays = [], []
    for _ in range(8):
        points = _seen_points(BLOCK, position, 0.015, rng)
        fit = align(BLOCK, points, position, 0.0)
        errors_fit.append((fit[0] - position) @ view)
        moved = along_rays(BLOCK, fit, points, EYE)
        errors_rays.append((moved[0] - position) @ view)
    assert np.mean(errors_fit) < -0.003  # the bias the rays remove (towards the camera)
    assert abs(np.mean(errors_rays)) < min(0.003, abs(np.mean(errors_fit)) / 3)


def test_a_resting_object_moves_only_along_the_table():
    rng = np.random.default_rng(3)
    position = np.array([0.0, 0.0, 0.02])
    points = _seen_points(BLOCK, position, 0.0, rng)
    fit = (position + np.array([-0.006, 0.0, 0.0]), 0.0, np.zeros(2), 0.0)
    moved = along_rays(BLOCK, fit, points, EYE, keep_height=True)
    assert moved[0][2] == position[2]
    assert np.linalg.norm(moved[0] - position) < 0.0015


def _gripper(count, grasp, release):
    t = np.arange(count) / 30.0
    positions = np.c_[0.1 * t, 0.05 * np.sin(t), 0.05 + 0.1 * np.clip(t - grasp / 30.0, 0, None)]
    opening = np.where((np.arange(count) >= grasp) & (np.arange(count) < release), 0.5, 1.0)  # of full
    quaternions = np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
    return SimpleNamespace(positions=positions, quaternions=quaternions, opening=opening)


def test_a_held_object_follows_the_gripper_not_each_frames_noise():
    count, grasp, release = 90, 20, 70
    gripper = _gripper(count, grasp, release)
    grip = np.array([0.0, 0.0, -0.03])
    truth = gripper.positions + grip
    truth[:grasp] = truth[grasp]  # it rests until the gripper closes on it
    rng = np.random.default_rng(4)
    noisy = truth + rng.normal(0.0, 0.008, truth.shape)
    positions = noisy.copy()
    measured = np.ones(count, bool)
    fill_held_frames(gripper, np.full(3, 0.04), positions, np.zeros(count), measured)
    held = slice(grasp, release)
    before = np.sqrt(np.mean(np.sum((noisy[held] - truth[held]) ** 2, axis=1)))
    after = np.sqrt(np.mean(np.sum((positions[held] - truth[held]) ** 2, axis=1)))
    assert before > 0.01
    assert after < 0.004
    assert np.array_equal(positions[:grasp], noisy[:grasp])  # not held there: as measured


def test_a_standing_object_under_noisy_depth_stands_still():
    rng = np.random.default_rng(5)
    centre = np.array([0.1, 0.0, 0.045])
    jittering = centre + rng.normal(0.0, 0.006, (120, 3)) * np.array([1.0, 0.3, 0.3])
    assert standing_centre(jittering) is not None
    moving = centre + np.linspace(0.0, 0.1, 120)[:, None] * np.array([1.0, 0.0, 0.0])
    assert standing_centre(moving + rng.normal(0.0, 0.006, (120, 3)) * np.array([1.0, 0.3, 0.3])) is None
