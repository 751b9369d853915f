"""A moving part's joint (hinge or slide) from its depth points or its masks (geometry/joint.py).

Synthetic truth made here: a door turning on a vertical hinge, an oven door on a horizontal one, a
drawer sliding out, each a box in front of its body's box, seen by a depth camera 0.7 m away whose
pixels are cast onto the boxes (the nearest box hides the others). The depth has 2 mm noise and 1 mm
steps, 3 % of the part's pixels at the mask's edge mix the part's depth with what lies behind, a band
of the part is hidden on some frames (a hand), and some frames show nothing.
"""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.errors import Real2GymError
from real2gym.real2gym_addon.geometry.camera import project, transform
from real2gym.real2gym_addon.geometry.joint import (
    JointFit,
    fit_joint,
    fit_joint_without_depth,
    hinge_axis_error,
    slide_axis_error,
)

CAMERA = Camera(width=160, height=120, fx=150.0, fy=150.0, cx=79.5, cy=59.5)
FRAMES = 150


def _look_at(eye, target) -> np.ndarray:
    """world_from_camera (OpenCV: x right, y down, z forward) of a camera at ``eye`` looking at ``target``."""
    forward = np.subtract(target, eye) / np.linalg.norm(np.subtract(target, eye))
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, np.cross(forward, right), forward], 1)
    pose[:3, 3] = eye
    return pose


def _rotation(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _cast(world_from_camera, boxes) -> tuple[np.ndarray, np.ndarray]:
    """Depth (HxW, metres, 0 = nothing) and the index of the box each pixel sees (-1 = none), cast only
    around the first box's outline (the part: what the tests look at).

    ``boxes``: ``(world_from_box 4x4, half size (3,))`` each.
    """
    pose, half = boxes[0]
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * half
    camera_from_world = np.linalg.inv(world_from_camera)
    pixels = project(CAMERA, transform(camera_from_world @ pose, corners))
    u0, v0 = np.clip(np.floor(pixels.min(0)) - 2, 0, [CAMERA.width, CAMERA.height]).astype(int)
    u1, v1 = np.clip(np.ceil(pixels.max(0)) + 3, 0, [CAMERA.width, CAMERA.height]).astype(int)
    v, u = np.mgrid[v0:v1, u0:u1]
    rays = np.stack([(u - CAMERA.cx) / CAMERA.fx, (v - CAMERA.cy) / CAMERA.fy, np.ones_like(u, float)], -1)
    rays = rays.reshape(-1, 3) @ world_from_camera[:3, :3].T  # depth t along these is the z-depth
    depth = np.full(len(rays), np.inf)
    which = np.full(len(rays), -1)
    for number, (pose, half) in enumerate(boxes):
        origin = pose[:3, :3].T @ (world_from_camera[:3, 3] - pose[:3, 3])
        direction = rays @ pose[:3, :3]
        with np.errstate(divide="ignore", invalid="ignore"):
            low, high = (-half - origin) / direction, (half - origin) / direction
        near = np.nanmax(np.minimum(low, high), 1)
        far = np.nanmin(np.maximum(low, high), 1)
        hit = (far >= near) & (near > 0) & (near < depth)
        depth[hit], which[hit] = near[hit], number
    depth[~np.isfinite(depth)] = 0.0
    full_depth = np.zeros((CAMERA.height, CAMERA.width))
    full_which = np.full((CAMERA.height, CAMERA.width), -1)
    full_depth[v0:v1, u0:u1] = depth.reshape(v1 - v0, u1 - u0)
    full_which[v0:v1, u0:u1] = which.reshape(v1 - v0, u1 - u0)
    return full_depth, full_which


def _part_points(world_from_camera, boxes, rng, hidden_columns=None) -> np.ndarray:
    """The part's (box 0) back-projected depth points, world frame, with noise, steps, mixed edge pixels."""
    depth, which = _cast(world_from_camera, boxes)
    mask = which == 0
    if hidden_columns is not None:
        mask[:, hidden_columns[0] : hidden_columns[1]] = False
    edge = mask & ~cv2.erode(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    v, u = np.nonzero(mask)
    z = depth[v, u] + rng.normal(0.0, 0.002, len(v))
    z = np.round(z / 0.001) * 0.001
    on_edge = np.flatnonzero(edge[v, u])
    mixed = rng.choice(on_edge, min(len(on_edge), int(0.03 * len(v))), replace=False)
    z[mixed] += rng.uniform(0.02, 0.3, len(mixed))
    camera_points = np.stack([(u - CAMERA.cx) * z / CAMERA.fx, (v - CAMERA.cy) * z / CAMERA.fy, z], 1)
    return transform(world_from_camera, camera_points)


def _profile(top: float, frames: int = FRAMES) -> np.ndarray:
    """Joint values over the video: from 0 out to ``top`` and back, smoothly."""
    return top * 0.5 * (1.0 - np.cos(2.0 * np.pi * np.arange(frames) / (frames - 1)))


def _box_pose(rotation, centre) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, centre
    return pose


def _hinged_scene(seed, axis, pivot, panel_centre, panel_half, body, eye, target, top, frames):
    """Per-frame points of a panel turning by ``_profile(top)`` about ``axis`` through ``pivot``."""
    rng = np.random.default_rng(seed)
    world_from_camera = _look_at(eye, target)
    truth = _profile(top, frames)
    points = []
    for f, angle in enumerate(truth):
        rotation = _rotation(axis, angle)
        panel = (_box_pose(rotation, rotation @ (panel_centre - pivot) + pivot), panel_half)
        hidden = (60, 85) if frames // 5 <= f < frames * 2 // 5 else None  # a hand across the door
        points.append(_part_points(world_from_camera, [panel, body], rng, hidden))
    for f in (5, frames // 2, frames // 2 + 1, frames * 4 // 5):  # frames where the part was not segmented
        points[f] = None
    points[frames * 2 // 3] = points[frames * 2 // 3][:10]
    return points, truth


def _door():
    """A 0.30 x 0.02 x 0.25 m door on a vertical hinge at its back corner, opening 100 degrees outwards."""
    axis, pivot = np.array([0.0, 0.0, -1.0]), np.array([0.0, 0.0, 0.2])
    body = (_box_pose(np.eye(3), [0.15, 0.15, 0.225]), np.array([0.15, 0.15, 0.125]))
    points, truth = _hinged_scene(
        1, axis, pivot, np.array([0.15, -0.01, 0.225]), np.array([0.15, 0.01, 0.125]), body,
        eye=[0.15, -0.70, 0.45], target=[0.15, 0.0, 0.225], top=np.radians(100.0), frames=FRAMES,
    )  # fmt: skip
    return points, truth, axis, pivot


def _oven_door():
    """A 0.40 x 0.02 x 0.30 m door on a horizontal hinge at its bottom front edge, opening 85 degrees down."""
    axis, pivot = np.array([1.0, 0.0, 0.0]), np.array([0.0, -0.02, 0.1])
    body = (_box_pose(np.eye(3), [0.0, 0.2, 0.25]), np.array([0.2, 0.2, 0.15]))
    points, truth = _hinged_scene(
        2, axis, pivot, np.array([0.0, -0.01, 0.25]), np.array([0.2, 0.01, 0.15]), body,
        eye=[0.05, -0.75, 0.65], target=[0.0, 0.0, 0.25], top=np.radians(85.0), frames=90,
    )  # fmt: skip
    return points, truth, axis, pivot


def _drawer():
    """A 0.35 x 0.30 x 0.12 m drawer sliding 0.2 m out of its cabinet."""
    rng = np.random.default_rng(3)
    world_from_camera = _look_at([0.1, -0.75, 0.55], [0.0, 0.0, 0.18])
    body = (_box_pose(np.eye(3), [0.0, 0.2, 0.15]), np.array([0.2, 0.2, 0.15]))
    truth = _profile(0.2, 90)
    points = []
    for f, out in enumerate(truth):
        drawer = (_box_pose(np.eye(3), [0.0, 0.13 - out, 0.18]), np.array([0.175, 0.15, 0.06]))
        points.append(
            _part_points(world_from_camera, [drawer, body], rng, (70, 90) if 50 <= f < 65 else None)
        )
    for f in (10, 11, 80):
        points[f] = None
    return points, truth, np.array([0.0, -1.0, 0.0])


def _timed_fit(points, **kwargs) -> tuple[JointFit, float]:
    start = time.process_time()
    fit = fit_joint(points, **kwargs)
    return fit, time.process_time() - start


def _check_hinge(fit, truth, axis, pivot, seconds):
    angle, distance = hinge_axis_error(fit, axis, pivot)
    q_error = np.abs(fit.q[fit.visible] - truth[fit.visible])
    print(
        f"hinge: axis {angle:.2f} deg, line {1000 * distance:.1f} mm, q error median "
        f"{np.degrees(np.median(q_error)):.2f} max {np.degrees(q_error.max()):.2f} deg, "
        f"range {np.degrees(fit.range).round(1)}, residual {1000 * fit.residual_m:.1f} mm "
        f"(slide {1000 * fit.other_residual_m:.1f}), {fit.visible.sum()} frames seen, {seconds:.2f} s"
    )
    assert fit.type == "hinge"
    assert angle < 2.0
    assert distance < 0.01
    assert abs(fit.range[0] - truth.min()) < np.radians(5.0)
    assert abs(fit.range[1] - truth.max()) < np.radians(5.0)
    assert np.median(q_error) < np.radians(1.0)
    assert q_error.max() < np.radians(4.0)
    frames = len(truth)
    assert fit.visible.sum() >= frames - 10
    assert not fit.visible[[5, frames // 2, frames * 2 // 3]].any() and np.isnan(fit.q[5])


@pytest.fixture(scope="module")
def door():
    """The door's points, truth, and its fit with the time it took (CPU seconds of this process)."""
    points, truth, axis, pivot = _door()
    start = time.process_time()
    fit = fit_joint(points)
    return points, truth, axis, pivot, fit, time.process_time() - start


def test_door_on_a_vertical_hinge(door):
    points, truth, axis, pivot, fit, seconds = door
    _check_hinge(fit, truth, axis, pivot, seconds)
    assert fit.other_residual_m > fit.residual_m / 0.75


def test_oven_door_on_a_horizontal_hinge():
    points, truth, axis, pivot = _oven_door()
    fit, seconds = _timed_fit(points)
    _check_hinge(fit, truth, axis, pivot, seconds)


def test_drawer_on_a_slide():
    points, truth, axis = _drawer()
    fit, seconds = _timed_fit(points)
    q_error = np.abs(fit.q[fit.visible] - truth[fit.visible])
    angle = slide_axis_error(fit, axis)
    print(
        f"slide: axis {angle:.2f} deg, q error median {1000 * np.median(q_error):.1f} max "
        f"{1000 * q_error.max():.1f} mm, range {np.round(fit.range, 3)}, residual "
        f"{1000 * fit.residual_m:.1f} mm (hinge {1000 * fit.other_residual_m:.1f}), {seconds:.2f} s"
    )
    assert fit.type == "slide"
    assert angle < 2.0
    assert abs(fit.range[0]) < 0.01 and abs(fit.range[1] - 0.2) < 0.01
    assert np.median(q_error) < 0.003 and q_error.max() < 0.01
    assert fit.visible.sum() >= len(truth) - 6
    assert np.allclose(fit.pivot, points[0].mean(0), atol=1e-9)


def test_fit_is_fast_and_reports(door):
    points, _, _, _, fit, seconds = door
    assert len(points) == 150 and np.mean([len(p) for p in points if p is not None]) > 2000
    assert seconds < 0.5 * 3  # about 0.5 s on a quiet core; slack for a busy test machine
    report = fit.to_report()
    assert set(report) == {"type", "axis_world", "pivot_world", "range", "source", "residual_m"}
    assert report["source"] == "estimated" and len(report["axis_world"]) == 3
    seen = np.flatnonzero(fit.visible)
    assert fit.q_at(seen[3]) == pytest.approx(fit.q[seen[3]])
    assert fit.q_at(5) == pytest.approx((fit.q[4] + fit.q[6]) / 2.0)


def test_moving_body(door):
    """The body (and the door with it) carried along: the joint comes back in the world as the body stands
    on the first frame (here where it stood in the other tests)."""
    points, truth, axis, pivot, _, _ = door
    carried, body_from_world = [], []
    for f, cloud in enumerate(points):
        world_from_body = _box_pose(_rotation([0.2, 0.1, 1.0], 0.004 * f), [0.002 * f, -0.001 * f, 0.0])
        body_from_world.append(np.linalg.inv(world_from_body))
        carried.append(None if cloud is None else transform(world_from_body, cloud))
    fit = fit_joint(carried, body_from_world=np.array(body_from_world))
    _check_hinge(fit, truth, axis, pivot, 0.0)


def test_forced_kind_and_what_cannot_be_fitted(door):
    points = door[0]
    fit = fit_joint(points, kind="slide")
    assert fit.type == "slide" and np.isnan(fit.other_residual_m)
    with pytest.raises(Real2GymError, match="three"):
        fit_joint([points[0], None, points[2][:5]])
    rng = np.random.default_rng(5)
    still = [points[0] + rng.normal(0.0, 0.002, points[0].shape) for _ in range(20)]
    with pytest.raises(Real2GymError, match="may not move"):
        fit_joint(still)


# Without depth: masks drawn from the panel's projected box.

BODY_CENTRE, BODY_YAW, BODY_SIZE = np.array([0.1, 0.3, 0.2]), np.radians(-80.0), np.array([0.3, 0.36, 0.3])
PANEL = np.array([0.02, 0.34, 0.28])  # the door on the box's local +x face


def _panel_masks(world_from_camera, motion, truth, rng):
    """Masks of the +x panel on each frame, and its joint's world axis and a point on it.

    ``motion``: ``"hinge-"`` or ``"hinge+"`` (turning outwards about its local-z edge at ``y = -0.17``
    or ``+0.17``), or ``"slide"`` (a drawer out along local +x: its front and the tray behind it show).
    """
    rotation = _rotation([0.0, 0.0, 1.0], BODY_YAW)
    world_from_body = _box_pose(rotation, BODY_CENTRE)
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * PANEL / 2.0
    corners += [BODY_SIZE[0] / 2.0 - PANEL[0] / 2.0, 0.0, 0.0]
    end = -1.0 if motion == "hinge-" else 1.0
    point = np.array([BODY_SIZE[0] / 2.0, end * PANEL[1] / 2.0, 0.0])
    axis = np.array([0.0, 0.0, end]) if motion != "slide" else np.array([1.0, 0.0, 0.0])  # opening: q > 0
    camera_from_body = np.linalg.inv(world_from_camera) @ world_from_body
    masks = []
    for f, value in enumerate(truth):
        if motion == "slide":
            moved = corners + np.outer(corners[:, 0] > BODY_SIZE[0] / 2.0 - PANEL[0] / 2.0, axis) * value
        else:
            moved = (corners - point) @ _rotation(axis, value).T + point
        pixels = project(CAMERA, transform(camera_from_body, moved))
        mask = np.zeros((CAMERA.height, CAMERA.width), np.uint8)
        cv2.fillConvexPoly(mask, cv2.convexHull(np.round(pixels).astype(np.int32)), 1)
        if 15 <= f < 25:  # a hand over part of it
            mask[50:70, 60:80] = 0
        if rng.random() < 0.3:
            mask = cv2.erode(mask, np.ones((2, 2), np.uint8))
        masks.append(mask.astype(bool) if f not in (7, 8) else None)
    return masks, rotation @ axis, transform(world_from_body, point[None])[0]


@pytest.mark.parametrize("motion", ["hinge-", "hinge+", "slide"])
def test_joint_from_masks_alone(motion):
    """The body's box a little off (5 mm, 0.6 degrees), eroded masks, a hand over the panel: the right edge
    (or the slide) still wins."""
    rng = np.random.default_rng(4)
    rotation = _rotation([0.0, 0.0, 1.0], BODY_YAW)
    face = BODY_CENTRE + rotation @ [BODY_SIZE[0] / 2.0, 0.0, 0.0]
    world_from_camera = _look_at(face + rotation @ [0.75, 0.15, 0.35], face)
    truth = _profile(np.radians(90.0) if motion != "slide" else 0.2, 50)
    masks, axis, pivot = _panel_masks(world_from_camera, motion, truth, rng)
    start = time.process_time()
    fit = fit_joint_without_depth(
        BODY_CENTRE + [0.005, -0.005, 0.0], BODY_YAW + 0.01, BODY_SIZE, "+x", PANEL, CAMERA,
        world_from_camera, masks,
    )  # fmt: skip
    seconds = time.process_time() - start
    q_error = np.abs(fit.q[fit.visible] - truth[fit.visible])
    assert not fit.visible[7] and np.isnan(fit.q[8])
    assert seconds < 5.0
    if motion == "slide":
        print(
            f"masks, slide: axis {slide_axis_error(fit, axis):.2f} deg, q error median "
            f"{1000 * np.median(q_error):.1f} mm, IoU {1 - fit.residual_m:.3f} (hinge "
            f"{1 - fit.other_residual_m:.3f}), {seconds:.2f} s"
        )
        assert fit.type == "slide"
        assert slide_axis_error(fit, axis) < 5.0
        assert np.median(q_error) < 0.01
        return
    angle, distance = hinge_axis_error(fit, axis, pivot)
    print(
        f"masks, {motion}: axis {angle:.2f} deg, line {1000 * distance:.1f} mm, q error median "
        f"{np.degrees(np.median(q_error)):.1f} deg, IoU {1 - fit.residual_m:.3f} "
        f"(slide {1 - fit.other_residual_m:.3f}), {seconds:.2f} s"
    )
    assert fit.type == "hinge"
    assert angle < 5.0 and distance < 0.03  # the right edge: the others are 0.34 m away or across
    assert np.median(q_error) < np.radians(5.0)


def test_a_drawer_in_the_upper_half_of_its_chest_from_masks_alone():
    """A drawer 12 cm tall in the top of a 30 cm chest: the panel given as far as its mask covers the front."""
    rotation = _rotation([0.0, 0.0, 1.0], BODY_YAW)
    world_from_body = _box_pose(rotation, BODY_CENTRE)
    face = BODY_CENTRE + rotation @ [BODY_SIZE[0] / 2.0, 0.0, 0.0]
    world_from_camera = _look_at(face + rotation @ [0.75, 0.15, 0.35], face)
    panel, offset = np.array([0.02, 0.32, 0.12]), np.array([0.0, 0.0, 0.08])
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * panel / 2.0
    corners += [BODY_SIZE[0] / 2.0 - panel[0] / 2.0, 0.0, 0.0] + offset
    truth = _profile(0.18, 40)
    camera_from_body = np.linalg.inv(world_from_camera) @ world_from_body
    masks = []
    for value in truth:
        moved = corners + np.outer(corners[:, 0] > BODY_SIZE[0] / 2.0 - panel[0], [1.0, 0.0, 0.0]) * value
        pixels = project(CAMERA, transform(camera_from_body, moved))
        mask = np.zeros((CAMERA.height, CAMERA.width), np.uint8)
        cv2.fillConvexPoly(mask, cv2.convexHull(np.round(pixels).astype(np.int32)), 1)
        masks.append(mask.astype(bool))
    fit = fit_joint_without_depth(BODY_CENTRE, BODY_YAW, BODY_SIZE, "+x", panel, CAMERA, world_from_camera, masks,
                                  panel_offset=offset)  # fmt: skip
    assert fit.type == "slide"
    assert np.median(np.abs(fit.q[fit.visible] - truth[fit.visible])) < 0.01
    assert abs(np.nanmax(fit.q) - truth.max()) < 0.01


def test_a_registration_that_falls_behind_a_quick_turn_does_not_flip_the_door_a_half_turn() -> None:
    """A plane's normal cannot tell a turn from a turn plus 180 degrees; the frame-to-frame registration
    chooses. On a microwave pushed shut quickly behind the gripper it fell 80-90 degrees behind, and
    chosen frame by frame the shut door came out 178 degrees round. One choice per run of flat frames,
    by its median, follows the normals instead."""
    from real2gym.real2gym_addon.geometry.joint import _Hinge, _Problem

    points, truth, axis, pivot = _door()
    frames = [f for f, p in enumerate(points) if p is not None and len(p) >= 50]
    problem = _Problem(
        [p[np.linspace(0, len(p) - 1, min(len(p), 400)).astype(int)] for p in [points[f] for f in frames]]
    )
    seen_truth = -truth[frames]  # about +z: the door turns about -z
    lagging = seen_truth.copy()
    quick = (np.arange(len(frames)) >= 40) & (np.arange(len(frames)) < 46)
    lagging[quick] -= np.radians(95.0)  # six frames the registration lost, 95 degrees behind
    fitted = problem.hinge_from_planes(_Hinge(np.array([0.0, 0.0, 1.0]), pivot.copy(), lagging))
    assert np.degrees(np.abs(fitted.q - seen_truth)).max() < 5.0
