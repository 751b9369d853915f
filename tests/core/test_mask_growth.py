"""A mask that holds part of a resting object: completed from the depth, and where it rests judged on what shows.

Synthetic depth from a pinhole camera looking down at 60 degrees: a 4 cm block on the
table, a hand's palm 10 cm above it beside it, another object touching it.
"""

from __future__ import annotations

import numpy as np

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.mask_growth import grow_in_depth
from real2gym.real2gym_addon.geometry.motion import Motion, settle_hidden_tail
from real2gym.real2gym_addon.geometry.stage import _rest_frames

CAMERA = Camera(320, 240, 300.0, 300.0, 159.5, 119.5)


def _scene(boxes):
    """Depth (m) and per-box pixel masks of axis-aligned boxes ``(x0, y0, x1, y1, height)`` on a table.

    Ray-cast per pixel: the camera 0.5 m above the table, looking down at 60 degrees.
    """
    tilt = np.radians(60)
    rotation = np.array([[1, 0, 0], [0, -np.sin(tilt), -np.cos(tilt)], [0, np.cos(tilt), -np.sin(tilt)]]).T
    world_from_camera = np.eye(4)
    world_from_camera[:3, :3] = rotation
    world_from_camera[:3, 3] = [0.0, -0.3, 0.5]
    v, u = np.mgrid[0 : CAMERA.height, 0 : CAMERA.width].astype(float)
    rays = np.stack([(u - CAMERA.cx) / CAMERA.fx, (v - CAMERA.cy) / CAMERA.fy, np.ones_like(u)], -1)
    directions = rays @ rotation.T
    origin = world_from_camera[:3, 3]
    distance = -origin[2] / directions[..., 2]  # the table (z = 0); rays have camera z = 1, so t is z-depth
    labels = np.full(distance.shape, -1)
    for index, (x0, y0, x1, y1, z0, z1) in enumerate(boxes):
        with np.errstate(divide="ignore", invalid="ignore"):
            slabs = [((low - origin[a]) / directions[..., a], (high - origin[a]) / directions[..., a])
                     for a, (low, high) in enumerate(((x0, x1), (y0, y1), (z0, z1)))]  # fmt: skip
        near = np.max([np.minimum(t0, t1) for t0, t1 in slabs], axis=0)
        far = np.min([np.maximum(t0, t1) for t0, t1 in slabs], axis=0)
        hit = (near <= far) & (near > 0) & (near < distance)
        distance = np.where(hit, near, distance)
        labels = np.where(hit, index, labels)
    depth = distance
    return depth.astype(np.float32), labels, world_from_camera


def test_a_half_mask_grows_to_the_whole_block_and_not_into_the_table_or_the_hand():
    block = (-0.02, -0.03, 0.02, 0.01, 0.0, 0.04)
    palm = (0.025, -0.06, 0.12, 0.04, 0.10, 0.16)  # above the table beside the block, higher than it
    depth, labels, world_from_camera = _scene([block, palm])
    whole = labels == 0
    rows = np.nonzero(whole.any(axis=1))[0]
    half = whole & (np.arange(depth.shape[0])[:, None] > rows.mean())  # the lower half of the block only
    assert 0.3 * whole.sum() < half.sum() < 0.7 * whole.sum() and (labels == 1).sum() > 100
    grown = grow_in_depth(half, depth, CAMERA, world_from_camera)
    assert grown.sum() > 0.95 * whole.sum(), (half.sum(), grown.sum(), whole.sum())
    assert not (grown & (labels == 1)).any(), "grew into the hand above"
    assert (grown & (labels == -1)).sum() < 0.05 * whole.sum(), "grew onto the table"


def test_growth_stops_at_another_objects_mask():
    block = (-0.02, -0.03, 0.02, 0.01, 0.0, 0.04)
    neighbour = (0.02, -0.03, 0.06, 0.01, 0.0, 0.04)  # touching it, as tall
    depth, labels, world_from_camera = _scene([block, neighbour])
    grown = grow_in_depth(labels == 0, depth, CAMERA, world_from_camera, blocked=labels == 1)
    assert not (grown & (labels == 1)).any()


def test_a_full_mask_is_left_as_it_is():
    depth, labels, world_from_camera = _scene([(-0.02, -0.03, 0.02, 0.01, 0.0, 0.04)])
    whole = labels == 0
    assert np.array_equal(grow_in_depth(whole, depth, CAMERA, world_from_camera), whole)


def _summary(masks):
    summary = []
    for frame, mask in enumerate(masks):
        rows, cols = np.nonzero(mask)
        summary.append({"frame": frame, "visible": bool(mask.any()), "area": int(mask.sum()),
                        "centroid": (float(cols.mean()), float(rows.mean())) if mask.any() else (0.0, 0.0),
                        "confidence": 0.9})  # fmt: skip
    return summary


def test_rest_views_include_fuller_views_of_the_object_where_it_stood():
    """The prompt frame shows a sliver (a hand over it); later frames show all of it, its centre moved."""
    full = np.zeros((100, 100), bool)
    full[40:60, 40:60] = True
    sliver = np.zeros_like(full)
    sliver[56:60, 40:60] = True
    elsewhere = np.zeros_like(full)
    elsewhere[40:60, 70:90] = True  # carried away later: not where it stood
    masks = [sliver] * 5 + [full] * 5 + [sliver] * 5 + [elsewhere] * 5 + [full] * 3
    chosen = _rest_frames(_summary(masks), 0, None, masks)
    assert chosen and all(5 <= f < 10 for f in chosen), chosen
    # Without the masks only the sliver's own frames count (its centre moved on the fuller views).
    assert all(masks[f] is sliver for f in _rest_frames(_summary(masks), 0))


def test_a_held_object_hidden_while_carried_falls_only_where_the_gripper_lets_go():
    frames = 30
    positions = np.zeros((frames, 3))
    positions[:, 2] = 0.02
    positions[10:20, 0] = np.linspace(0.0, 0.2, 10)  # carried (from the gripper) to x = 0.2
    positions[10:20, 2] = 0.1
    positions[20:, :] = positions[19]
    measured = np.zeros(frames, bool)
    measured[:8] = True  # seen only before the grasp
    motion = Motion(positions.copy(), np.zeros(frames), measured)
    assert settle_hidden_tail(motion, 0.0, 0.02, 30.0, carried_until=20) == 19
    assert np.allclose(motion.positions[10:20], positions[10:20]), "the carry was overwritten"
    assert np.isclose(motion.positions[-1, 0], 0.2) and np.isclose(motion.positions[-1, 2], 0.02)
    # Not held: it falls where it was last seen.
    motion = Motion(positions.copy(), np.zeros(frames), measured)
    settle_hidden_tail(motion, 0.0, 0.02, 30.0)
    assert np.isclose(motion.positions[-1, 0], 0.0)


def test_a_hidden_object_falls_where_it_was_last_seen_not_behind_it():
    """Carried sideways up to its last measured frame and hidden after (an RGB-only can lowered into a cup,
    seed 1): the median of the last 0.2 s had put its fall 2 cm behind where it was last seen; the frames
    near that last one place it (a lone last sliver still does not)."""
    frames = 30
    positions = np.zeros((frames, 3))
    positions[:, 2] = 0.1
    positions[:20, 1] = np.r_[np.zeros(14), [-0.02, -0.045, -0.062, -0.072, -0.077, -0.08]]
    measured = np.zeros(frames, bool)
    measured[:20] = True
    motion = Motion(positions.copy(), np.zeros(frames), measured)
    settle_hidden_tail(motion, 0.0, 0.03, 30.0)
    assert abs(motion.positions[-1, 1] - (-0.0785)) < 0.002, motion.positions[-1]
    assert np.isclose(motion.positions[-1, 2], 0.03)
