"""A partly seen object is still evidence: its silhouette placed over what the mask shows (issue 28).

A hand closing on a block and carrying it hides all but a sliver. :func:`fit_partly_seen` places the
block where its silhouette covers the sliver, as near as it can be to where its motion so far puts it;
``track`` uses it where the depth points are too few, and the report marks those frames.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.camera import invert, pose_matrix, yaw_rotation
from real2gym.real2gym_addon.geometry.motion import predicted_position, track
from real2gym.real2gym_addon.geometry.no_depth import ANCHOR_JUMP, anchor_partly_seen, fit_partly_seen
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.geometry.silhouette import mask_outside, silhouette_polygon

CAMERA = Camera(320, 240, 300.0, 300.0, 159.5, 119.5)
BLOCK = Shape("box", (0.04, 0.03, 0.06))


def _camera_from_world() -> np.ndarray:
    """A camera 0.5 m from the table's origin, 35 degrees above it, looking at it."""
    pitch = np.radians(35.0)
    forward = np.array([0.0, np.cos(pitch), -np.sin(pitch)])
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(forward, right)
    world_from_camera = np.eye(4)
    world_from_camera[:3, :3] = np.c_[right, down, forward]
    world_from_camera[:3, 3] = -0.5 * forward
    return invert(world_from_camera)


def _mask(centre: np.ndarray, camera_from_world: np.ndarray, keep: float, side: str = "top") -> np.ndarray:
    """The block's silhouette at ``centre``, of which only the ``keep`` share from ``side`` shows."""
    polygon = silhouette_polygon(BLOCK, camera_from_world @ pose_matrix(centre, yaw_rotation(0.0)), CAMERA)
    full = np.zeros((CAMERA.height, CAMERA.width), np.uint8)
    cv2.fillConvexPoly(full, np.round(polygon).astype(np.int32), 1)
    rows = np.nonzero(full.any(axis=1))[0]
    cut = rows[0] + int(keep * (rows[-1] - rows[0] + 1))
    mask = full.astype(bool)
    if side == "top":
        mask[cut:] = False
    else:
        mask[: rows[-1] + 1 - (cut - rows[0])] = False
    return mask


def test_mask_outside_is_the_share_of_the_mask_a_silhouette_leaves_out() -> None:
    view = _camera_from_world()
    centre = np.array([0.0, 0.0, 0.03])
    polygon = silhouette_polygon(BLOCK, view @ pose_matrix(centre, yaw_rotation(0.0)), CAMERA)
    sliver = _mask(centre, view, 0.2)
    # The silhouette may reach beyond a sliver; only the sliver's rim pixels, half covered, count.
    assert mask_outside(polygon, sliver) < 0.2
    moved = silhouette_polygon(BLOCK, view @ pose_matrix(centre + [0.1, 0, 0], yaw_rotation(0.0)), CAMERA)
    assert mask_outside(moved, sliver) > 0.95
    assert mask_outside(polygon, np.zeros_like(sliver)) == 1.0


@pytest.mark.parametrize("keep", [0.15, 0.3])
def test_a_sliver_places_the_block_across_the_view(keep: float) -> None:
    """The block was last placed 4 cm lower and 2 cm to the left; a sliver of its top shows where it is now.
    Across the view it is placed within millimetres; along the view the prior holds it."""
    view = _camera_from_world()
    true = np.array([0.02, 0.01, 0.07])
    last = true + [-0.02, 0.0, -0.04]
    found = fit_partly_seen(BLOCK, _mask(true, view, keep), CAMERA, view, last, 0.0)
    assert found is not None
    eye = invert(view)[:3, 3]
    along = (true - eye) / np.linalg.norm(true - eye)
    error = found - true
    across = error - along * (error @ along)
    assert np.linalg.norm(across) < 0.008, (found, true)
    # The old place explains none of the sliver; the fit is much nearer the truth.
    assert np.linalg.norm(error) < 0.5 * np.linalg.norm(last - true)


def test_a_mask_nothing_near_explains_is_not_placed() -> None:
    """A few specks, or a mask no pose near the motion can cover (the mask has jumped to something else),
    measure nothing: the frame is bridged."""
    view = _camera_from_world()
    specks = np.zeros((CAMERA.height, CAMERA.width), bool)
    specks[100, 100:110] = True
    assert fit_partly_seen(BLOCK, specks, CAMERA, view, np.array([0.0, 0.0, 0.03]), 0.0) is None
    far = _mask(np.array([0.25, 0.1, 0.03]), view, 0.5)
    assert fit_partly_seen(BLOCK, far, CAMERA, view, np.array([-0.2, 0.0, 0.03]), 0.0) is None


def test_the_prediction_keeps_half_the_last_velocity_and_at_most_a_step() -> None:
    history = [(3, np.array([0.0, 0.0, 0.03])), (4, np.array([0.0, 0.0, 0.05]))]
    np.testing.assert_allclose(predicted_position(history, 5), [0.0, 0.0, 0.06])
    fast = [(3, np.zeros(3)), (4, np.array([0.2, 0.0, 0.0]))]
    assert np.linalg.norm(predicted_position(fast, 5) - fast[-1][1]) == pytest.approx(0.03)
    assert np.array_equal(predicted_position(history[:1], 9), history[0][1])


def test_track_follows_a_lift_where_the_hand_leaves_no_depth_points() -> None:
    """No recording: frames 0-4 rest with depth points; from frame 5 a hand hides all but the top fifth and
    its depth (no points) while it lifts the block 2 cm a frame. Without the partly seen fit the block stays
    on the table ("never lifted"); with it, it rises with the sliver and the frames are marked."""
    view = _camera_from_world()
    world_from_camera = invert(view)
    count = 12
    true = np.array([[0.0, 0.0, 0.03 + 0.02 * max(0, f - 4)] for f in range(count)])
    rng = np.random.default_rng(1)

    def points(centre):  # the block's camera-facing surface points, camera frame
        local = rng.uniform(-0.5, 0.5, (300, 3)) * BLOCK.size
        local[:, 1] = -BLOCK.size[1] / 2
        world = local + centre
        return (view[:3, :3] @ world.T).T + view[:3, 3]

    per_frame = [points(true[f]) if f < 5 else None for f in range(count)]
    masks = [_mask(true[f], view, 1.0 if f < 5 else 0.2) for f in range(count)]

    def partly_seen(frame, predicted, yaw):
        return fit_partly_seen(BLOCK, masks[frame], CAMERA, view, predicted, yaw)

    bridged = track(BLOCK, true[0], 0.0, 0, per_frame, world_from_camera)
    assert bridged.positions[:, 2].max() < 0.035
    motion = track(BLOCK, true[0], 0.0, 0, per_frame, world_from_camera, partly_seen=partly_seen)
    assert (
        motion.partly_seen is not None and motion.partly_seen[5:].all() and not motion.partly_seen[:5].any()
    )
    assert motion.positions[-1, 2] > 0.15, motion.positions[:, 2]
    assert np.sqrt(np.mean(np.sum((motion.positions - true) ** 2, axis=1))) < 0.03


def test_a_partly_seen_stretch_that_drifted_is_placed_between_the_whole_views_around_it():
    """Without depth a partly seen frame fixes only the ray; where the object is seen whole again far from
    where the stretch ended, each frame's distance along its ray comes from the path between the whole
    views (the rays themselves, what the masks showed, are kept)."""
    eye = np.array([0.0, -0.5, 0.5])
    true = np.array([[0.01 * f, 0.0, 0.05] for f in range(10)])
    positions, measured, partly = true.copy(), np.ones(10, bool), np.zeros(10, bool)
    partly[2:8] = True
    for f in range(2, 8):  # drifted towards the camera along the true ray, more and more
        positions[f] = eye + (true[f] - eye) * (1 - 0.06 * (f - 1))
    positions[8] = true[8]
    rays = [(positions[f] - eye) / np.linalg.norm(positions[f] - eye) for f in range(10)]
    anchor_partly_seen(positions, measured, partly, np.tile(eye, (10, 1)))
    for f in range(2, 8):
        assert np.linalg.norm(positions[f] - true[f]) < 1e-6, f  # the true path is the straight one here
        assert np.allclose((positions[f] - eye) / np.linalg.norm(positions[f] - eye), rays[f])

    near = true.copy()
    near[2:8] += [0.0, 0.5 * ANCHOR_JUMP, 0.0]  # ends within ANCHOR_JUMP of the next whole view: kept
    kept = near.copy()
    anchor_partly_seen(kept, measured, partly, np.tile(eye, (10, 1)))
    assert np.array_equal(kept, near)


def test_a_carried_object_keeps_the_part_that_shows_where_the_hand_holds_it() -> None:
    """No recording, depth: frames 0-3 show the block whole; from frame 4 a hand covers its top half, and from
    frame 8 lifts it 1.5 cm a frame; the hand lets go on frame 16 and the block shows whole again. The band
    that shows fits the block's side anywhere along its height, so the fit lags the lift (seed 39 in Cycles:
    a can carried 2 cm low); with ``partial`` its centre stays as far below the band's points as it was
    while it rested under the hand."""
    view = _camera_from_world()
    world_from_camera = invert(view)
    count = 20
    rise = [0.015 * min(max(0, f - 7), 6) for f in range(count)]
    true = np.array([[0.0, 0.0, 0.03 + rise[f]] for f in range(count)])
    rng = np.random.default_rng(2)
    partial = np.array([4 <= f < 16 for f in range(count)])

    def points(frame):  # the camera-facing side: all of it, or its lower half under the hand
        local = rng.uniform(-0.5, 0.5, (300, 3)) * BLOCK.size
        local[:, 1] = -BLOCK.size[1] / 2
        if partial[frame]:
            local[:, 2] = rng.uniform(-0.5, 0.0, 300) * BLOCK.size[2]
        world = local + true[frame]
        return (view[:3, :3] @ world.T).T + view[:3, 3]

    per_frame = [points(f) for f in range(count)]
    carried = slice(11, 16)  # away from where the smoothed path turns into the lift
    lagging = track(BLOCK, true[0], 0.0, 0, per_frame, world_from_camera)
    held = track(BLOCK, true[0], 0.0, 0, per_frame, world_from_camera, partial=partial)
    assert np.abs(held.positions[carried, 2] - true[carried, 2]).max() < 0.005, held.positions[:, 2]
    assert np.abs(held.positions[16:, 2] - true[16:, 2]).max() < 0.004
    assert np.abs(lagging.positions[carried, 2] - true[carried, 2]).max() > 0.01  # what it mends


def test_an_object_resting_partly_seen_is_placed_by_its_masks_with_its_height_held() -> None:
    """RGB only: a block let go into a container shows its top half over the rim. Its height is its
    support's; with that held, its masks at rest fix where it stands (seed 26: a can in a cup, placed 2 cm
    off by its fall from the last carried frames)."""
    from real2gym.real2gym_addon.geometry.no_depth import rest_from_masks

    view = _camera_from_world()
    true = np.array([0.01, 0.02, 0.04])  # on a 1 cm floor
    masks = [_mask(true, view, 0.5) for _ in range(4)]
    start = true + [0.02, -0.015, 0.0]
    found = rest_from_masks(BLOCK, masks, CAMERA, view, [0, 1, 2, 3], start, 0.0)
    assert found is not None and found[2] == true[2]
    assert np.linalg.norm(found[:2] - true[:2]) < 0.004, found
    assert rest_from_masks(BLOCK, masks, CAMERA, view, [0, 1], start, 0.0) is None  # too few frames


def test_a_held_object_set_back_down_is_not_moved_by_the_hand_leaving_it() -> None:
    """The hand lifts the block (frames 8 to 10), sets it back down where it stood (12) and leaves it while
    still covering part of it, less and less (13 to 16): once it is down at its resting height, the part
    that shows no longer places it (seed 14 in Cycles: the cup stood 7 mm up until the hand had gone, and
    the hand's release read 4 frames late)."""
    view = _camera_from_world()
    world_from_camera = invert(view)
    count = 20
    up = [0.0] * 8 + [0.015, 0.03, 0.045, 0.02, 0.0] + [0.0] * 7
    true = np.array([[0.0, 0.0, 0.03 + up[f]] for f in range(count)])
    rng = np.random.default_rng(3)
    partial = np.array([4 <= f < 17 for f in range(count)])
    shown = {f: 0.5 if f < 13 else 0.5 + 0.1 * (f - 12) for f in range(count)}  # the hand leaving uncovers it

    def points(frame):
        local = rng.uniform(-0.5, 0.5, (300, 3)) * BLOCK.size
        local[:, 1] = -BLOCK.size[1] / 2
        if partial[frame]:
            local[:, 2] = rng.uniform(-0.5, shown[frame] - 0.5, 300) * BLOCK.size[2]
        world = local + true[frame]
        return (view[:3, :3] @ world.T).T + view[:3, 3]

    held = track(
        BLOCK, true[0], 0.0, 0, [points(f) for f in range(count)], world_from_camera, partial=partial
    )
    # The free fits after so fast a set-down jitter by millimetres either way; the band held on would
    # raise them all as the hand uncovers more (5.7 mm on average here).
    assert abs(held.positions[13:17, 2].mean() - 0.03) < 0.004, held.positions[:, 2]
