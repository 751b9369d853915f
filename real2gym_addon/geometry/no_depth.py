"""Geometry from silhouettes alone (no depth; camera.json gives world_from_camera).

Lower accuracy than with depth (the benchmark reports it separately): a mask
tells the object's outline, not its distance, so the fits lean on the table:
an object at rest stands on it. :func:`pseudo_points` turns a resting object's
mask into a rough box of points standing on the table (from where the mask's
bottom edge meets the table and the mask's size at that distance), which seeds
the same silhouette-refined fits as with depth. :func:`track_silhouettes`
follows the object by matching its projected silhouette to the mask on every
frame (position and yaw).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy.optimize import minimize

from ..demo import Camera
from .camera import invert, pose_at, pose_matrix, yaw_rotation
from .carry import gripper_pose, held_span
from .fit_base import FittedObject, RestView
from .keyframes import GripperTrajectory
from .motion import Motion, _finish, predicted_position
from .shapes import Shape
from .silhouette import mask_outside, silhouette_mismatch, silhouette_polygon

MIN_MASK_AREA = 30
"""Masks smaller than this (pixels) measure nothing."""
MIN_SEEN = 0.85
"""A free object seen less than this fraction of its silhouette is not measured on that frame."""
UNSEEN_WEIGHT = 0.3
"""Cost of a silhouette pixel the mask does not show (it may be hidden), against 1 for a mask pixel missed."""
PRIOR_WEIGHT = 0.02
"""Cost, in silhouette mismatch, of a held object PRIOR_SCALE away from where the gripper carries it."""
PRIOR_SCALE = 0.005
PARTLY_SEEN_SCALE = 0.02
"""m: a partly seen object is placed where its silhouette covers what the mask shows, as near as it can be
to where its motion so far puts it (a hand carrying a block hides all but a sliver, which fixes where it
is across the view but not its distance); moving it this far from there costs as much as leaving
1 / :data:`PARTLY_SEEN_WEIGHT` of the mask unexplained."""
PARTLY_SEEN_WEIGHT = 20.0
"""Cost of leaving all of a partly seen mask outside the silhouette, in units of the prior's (see above)."""
PARTLY_SEEN_EXPLAINED = 0.8
"""A partly seen pose is kept only where its silhouette covers this share of the mask's pixels."""
MIN_REST_FITS = 3
"""Frames at rest whose masks must place an object before :func:`rest_from_masks` moves it."""
GOOD_MATCH = 0.1
"""A silhouette mismatch this low on the table needs no search off it."""
STANDING_MATCH = 0.04
"""A silhouette mismatch this low, standing on the table, places an object the motion so far lost: seen
whole again after a hand hid it (measured: 0.016 for a block set down in full view; 0.08 for a block
carried, or in a cup, partly hidden, that a pose standing on the table elsewhere explains as well as that).
"""
ANCHOR_JUMP = 0.02
"""m: a partly seen stretch that ends farther than this from the whole view after it is placed between
the whole views around it (:func:`anchor_partly_seen`)."""
RESTING_MARGIN = 0.03
"""A free object is placed off the table only where that explains its mask this much better."""


def _ray_on_table(camera: Camera, world_from_camera: np.ndarray, u: float, v: float) -> np.ndarray | None:
    direction = world_from_camera[:3, :3] @ np.array(
        [(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, 1.0]
    )
    origin = world_from_camera[:3, 3]
    if direction[2] >= -1e-6:
        return None
    return origin + direction * (-origin[2] / direction[2])


def _mask_ray(
    camera: Camera, world_from_camera: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The camera's centre and the unit ray (world) through the mask's centroid."""
    ys, xs = np.nonzero(mask)
    ray = world_from_camera[:3, :3] @ np.array(
        [(xs.mean() - camera.cx) / camera.fx, (ys.mean() - camera.cy) / camera.fy, 1.0]
    )
    return world_from_camera[:3, 3], ray / np.linalg.norm(ray)


def pseudo_points(mask: np.ndarray, camera: Camera, camera_from_world: np.ndarray) -> np.ndarray:
    """A rough box of world points standing on the table where the mask's object rests.

    Args:
        mask: ``HxW`` bool silhouette of a resting object.
        camera: Intrinsics.
        camera_from_world: 4x4.

    Returns:
        ``Nx3`` world points (metres), empty if the mask does not meet the table.
    """
    ys, xs = np.nonzero(mask)
    if len(xs) < MIN_MASK_AREA:
        return np.zeros((0, 3))
    world_from_camera = invert(camera_from_world)
    bottom = _ray_on_table(camera, world_from_camera, float(np.median(xs)), float(ys.max()))
    if bottom is None:
        return np.zeros((0, 3))
    distance = float(np.linalg.norm(bottom - world_from_camera[:3, 3]))
    width = (xs.max() - xs.min()) * distance / camera.fx
    height = (ys.max() - ys.min()) * distance / camera.fy * 0.7
    away = bottom[:2] - world_from_camera[:2, 3]
    away /= max(np.linalg.norm(away), 1e-9)
    centre = bottom[:2] + away * width / 2  # the seen bottom edge is the near side
    grid = np.linspace(-0.5, 0.5, 5)
    points = [
        (centre[0] + a * width, centre[1] + b * width, z) for a in grid for b in grid for z in (0.004, height)
    ]
    return np.array(points)


def fit_partly_seen(
    shape: Shape,
    mask: np.ndarray,
    camera: Camera,
    camera_from_world: np.ndarray,
    predicted: np.ndarray,
    yaw: float,
    height: float | None = None,
) -> np.ndarray | None:
    """Where a partly seen object is: its silhouette over what the mask shows, near ``predicted``.

    Evidence, weighted, not thresholded: a mask that shows a fifth of an object (a hand closing on
    it and carrying it) still says where it is across the view. The pose minimises the share of mask
    pixels outside the silhouette (the silhouette may reach where the mask does not: the object is
    there, behind the hand) plus the squared distance from ``predicted`` in units of
    :data:`PARTLY_SEEN_SCALE`; the distance along the view comes from that prior. The yaw is kept.

    Args:
        shape: The fitted shape.
        mask: ``HxW`` bool, the seen part.
        camera: Intrinsics.
        camera_from_world: 4x4 on this frame.
        predicted: Where the motion so far puts the centre (world, m).
        yaw: Its yaw (radians).
        height: Its centre's height (world z, m) where that is known (it rests on a known support):
            only its place across the table is fitted.

    Returns:
        The centre (world, m), or None where the mask is too small or no pose near ``predicted``
        explains :data:`PARTLY_SEEN_EXPLAINED` of it.
    """
    if int(mask.sum()) < MIN_MASK_AREA:
        return None
    rotation = yaw_rotation(0.0 if shape.is_round else yaw)

    def outside(x):
        return mask_outside(
            silhouette_polygon(shape, camera_from_world @ pose_matrix(x, rotation), camera), mask
        )

    def loss(x):
        below = max(0.0, shape.size[2] / 2 - x[2])  # never sink into the table
        prior = float(np.sum((x - predicted) ** 2)) / PARTLY_SEEN_SCALE**2
        return PARTLY_SEEN_WEIGHT * outside(x) + 50.0 * below + prior

    if height is not None:
        held = np.array([predicted[0], predicted[1], height], float)

        def across(xy):
            return loss(np.r_[xy, height])

        simplex = held[:2] + np.r_[np.zeros((1, 2)), np.eye(2) * 0.01]
        result = minimize(across, held[:2], method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-4, "maxiter": 200, "initial_simplex": simplex})  # fmt: skip
        place = np.r_[result.x, height]
        return None if outside(place) > 1.0 - PARTLY_SEEN_EXPLAINED else place

    # From where the motion puts it, and from the mask's ray at that distance from the camera (a silhouette
    # clear of the mask has no slope to follow towards it).
    eye, ray = _mask_ray(camera, invert(camera_from_world), mask)
    on_ray = eye + ray * float(np.linalg.norm(np.asarray(predicted) - eye))
    best = None
    for start in (np.array(predicted, float), on_ray):
        start[2] = max(start[2], shape.size[2] / 2)
        simplex = start + np.r_[np.zeros((1, 3)), np.eye(3) * 0.01]
        result = minimize(loss, start, method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-4, "maxiter": 300, "initial_simplex": simplex})  # fmt: skip
        if best is None or result.fun < best.fun:
            best = result
    if outside(best.x) > 1.0 - PARTLY_SEEN_EXPLAINED:
        return None
    return best.x


def rest_from_masks(
    shape: Shape,
    masks: list[np.ndarray],
    camera: Camera,
    views_from_world: np.ndarray,
    frames: list[int],
    start: np.ndarray,
    yaw: float,
) -> np.ndarray | None:
    """RGB only: where an object that has come to rest, partly seen, stands across the table, its height
    ``start[2]`` held (what it rests on gives it: a can in a cup, its lower part behind the rim).

    Without depth, a partly seen mask fixes only the ray to the object; with its height known, where it
    stands is fixed too. Each frame's silhouette is placed over its mask near ``start``
    (:func:`fit_partly_seen` with the height held, which passes over masks too small to place it); the
    median of those found, or None where fewer than :data:`MIN_REST_FITS` are.
    """
    found = []
    for frame in frames:
        view = pose_at(views_from_world, frame)
        fit = fit_partly_seen(shape, masks[frame], camera, view, start, yaw, height=float(start[2]))
        if fit is not None:
            found.append(fit[:2])
    if len(found) < MIN_REST_FITS:
        return None
    return np.r_[np.median(np.array(found), axis=0), start[2]]


def track_silhouettes(
    shape: Shape,
    start_position: np.ndarray,
    start_yaw: float,
    start_frame: int,
    masks: list[np.ndarray],
    visible: list[bool],
    camera: Camera,
    camera_from_world: np.ndarray,
    gripper: GripperTrajectory | None = None,
) -> Motion:
    """Follows an object by fitting its silhouette to the mask on each frame.

    One view's silhouette fixes an object's distance only through its size, and
    a hand or gripper hiding part of it makes the object look smaller, so:

    - the fit tolerates hidden parts (a silhouette pixel the mask lacks costs
      less than a mask pixel the silhouette lacks);
    - a frame where less than ``MIN_SEEN`` of the silhouette is seen is placed by what
      shows (:func:`fit_partly_seen`: across the view from the mask, its distance from the
      motion before it) where no recorded gripper holds the object, and bridged where that
      explains too little of the mask; a held one goes with the gripper;
    - an object that has not been grasped yet stays on the table (height fixed);
      without a recorded gripper, a free object stays on the table unless a pose
      off it (from the last pose, or along the mask's ray at the distance its
      size gives) explains the mask clearly better;
    - while the recorded gripper holds it (closed near the object, until it
      opens), the object moves with the gripper, from where the grasp found it;
      where it is well seen, its silhouette corrects that by a few millimetres.

    Args:
        shape: The fitted shape.
        start_position: Its centre at ``start_frame``, world frame (m).
        start_yaw: Its yaw there (radians).
        start_frame: The fit's frame (the object rests there).
        masks: ``HxW`` bool per frame.
        visible: Per frame, whether the mask is usable.
        camera: Intrinsics.
        camera_from_world: 4x4, or one per frame (``Nx4x4``) for a camera that moves.
        gripper: The recorded gripper (trajectory.json), or None.

    Returns:
        The motion, smoothed, hidden frames bridged.
    """
    count = len(masks)
    positions, yaws = np.zeros((count, 3)), np.zeros(count)
    measured = np.zeros(count, bool)
    round_ = shape.is_round
    grasp, release = held_span(gripper, start_position, shape.size, count)
    rest_z = float(start_position[2])

    view = {"frame": start_frame}  # the frame being fitted: its camera pose projects the silhouettes

    def polygon(x):
        pose = pose_matrix(x[:3], yaw_rotation(0.0 if round_ else x[3]))
        return silhouette_polygon(shape, pose_at(camera_from_world, view["frame"]) @ pose, camera)

    def well_seen(x, area):
        return area >= MIN_MASK_AREA and area >= MIN_SEEN * cv2.contourArea(polygon(x))

    def loss(x, mask, prior):
        below = max(0.0, shape.size[2] / 2 - x[2])  # never sink into the table
        cost = silhouette_mismatch(polygon(x), mask, UNSEEN_WEIGHT) + 50.0 * below
        if prior is not None:
            cost += PRIOR_WEIGHT * float(np.sum((x[:3] - prior) ** 2)) / PRIOR_SCALE**2
        return cost

    def fit(x, mask, prior=None, resting=False):
        if resting:  # height fixed: x, y, yaw
            result = minimize(lambda y: loss(np.r_[y[:2], rest_z, y[2]], mask, prior), x[[0, 1, 3]],
                              method="Nelder-Mead", options={"xatol": 2e-4, "fatol": 1e-4, "maxiter": 200})  # fmt: skip
            return np.r_[result.x[:2], rest_z, result.x[2]]
        result = minimize(loss, x, args=(mask, prior), method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-4, "maxiter": 300})  # fmt: skip
        return result.x

    reference = (float(np.linalg.norm(start_position - invert(pose_at(camera_from_world, start_frame))[:3, 3])),
                 cv2.contourArea(polygon(np.r_[start_position, start_yaw])))  # fmt: skip

    def free_fit(x, mask, area):
        """Where nothing holds the object: on the table unless clearly not, from the last pose
        or from where the mask's size puts it along its ray, whichever explains the mask best."""
        on_table = fit(np.r_[x[:2], rest_z, x[3]], mask, resting=True)
        if loss(on_table, mask, None) < GOOD_MATCH:
            return on_table
        eye, ray = _mask_ray(camera, invert(pose_at(camera_from_world, view["frame"])), mask)
        distance = reference[0] * np.sqrt(reference[1] / area)
        seed = eye + ray * distance
        fits = [fit(x, mask), fit(np.r_[seed, x[3]], mask)]
        best = min(fits, key=lambda f: loss(f, mask, None))
        return on_table if loss(on_table, mask, None) < loss(best, mask, None) + RESTING_MARGIN else best

    def on_table_again(x, mask, area):
        """Where the pose so far no longer explains a mask (a hidden stretch left it off), the object seen
        whole, standing on the table: its silhouette there matches the mask (:data:`STANDING_MATCH`). Found
        from where the mask's ray meets its resting height; None where it does not stand there."""
        eye, ray = _mask_ray(camera, invert(pose_at(camera_from_world, view["frame"])), mask)
        if ray[2] > -1e-3:
            return None
        seed = eye + ray * (rest_z - eye[2]) / ray[2]
        standing = fit(np.r_[seed[:2], rest_z, x[3]], mask, resting=True)
        if loss(standing, mask, None) < STANDING_MATCH and well_seen(standing, area):
            return standing
        return None

    partly = np.zeros(count, bool)
    for direction in (1, -1):
        state = np.r_[start_position, start_yaw]
        history = [(start_frame, start_position.copy())]
        anchor = None  # gripper-from-object at the grasp
        frames = range(start_frame, count) if direction == 1 else range(start_frame - 1, -1, -1)
        for frame in frames:
            view["frame"] = frame
            mask = masks[frame]
            area = int(mask.sum()) if visible[frame] else 0
            held = grasp is not None and grasp <= frame < release
            if held:
                if anchor is None:
                    anchor = gripper_pose(gripper, frame, invert=True) @ pose_matrix(
                        state[:3], yaw_rotation(state[3])
                    )
                predicted = gripper_pose(gripper, frame) @ anchor
                yaw = float(np.arctan2(predicted[1, 0], predicted[0, 0]))
                state = np.r_[predicted[:3, 3], yaw]
                if well_seen(state, area):
                    state = fit(state, mask, prior=predicted[:3, 3])
            else:
                anchor = None
                whole = well_seen(state, area)
                standing = None if whole or area < MIN_MASK_AREA else on_table_again(state, mask, area)
                if standing is not None:
                    state = standing
                elif not whole:
                    # Partly seen where no recorded gripper holds it: what shows still places it.
                    found = None
                    if area and gripper is None:  # a recorded hand is the better evidence
                        predicted = predicted_position(history, frame)
                        found = fit_partly_seen(shape, mask, camera, pose_at(camera_from_world, frame),
                                                predicted, state[3])  # fmt: skip
                    if found is None:
                        continue
                    state = np.r_[found, state[3]]
                    partly[frame] = True
                elif grasp is not None and frame < grasp:
                    state = fit(state, mask, resting=True)
                else:
                    state = free_fit(state, mask, area)
            positions[frame], yaws[frame], measured[frame] = state[:3], state[3], True
            history.append((frame, state[:3].copy()))
    eyes = np.array([invert(pose_at(camera_from_world, f))[:3, 3] for f in range(count)])
    anchor_partly_seen(positions, measured, partly, eyes)
    return _finish(positions, yaws, measured, start_position, start_yaw, partly=partly)


def anchor_partly_seen(
    positions: np.ndarray, measured: np.ndarray, partly: np.ndarray, eyes: np.ndarray
) -> None:
    """Places each stretch of partly seen frames between the whole views on either side of it (in place).

    A partly seen frame fixes its object's place across the view (the ray through it); its distance
    along that ray came from the motion before it, which drifts over a long stretch under a hand. Where
    the object is seen whole again after the stretch, the distance along each frame's ray is taken from
    the path between the last whole view before the stretch and the first one after it (the point of the
    ray nearest that path), so that the object does not jump where it is seen again. A stretch that
    ends within :data:`ANCHOR_JUMP` of the view after it is left as it is.

    Args:
        positions: ``Nx3`` world centres; partly seen frames are moved along their rays.
        measured: ``N`` bool, measured frames.
        partly: ``N`` bool, measured frames placed from a partly seen mask.
        eyes: ``Nx3`` the camera's centre (world) per frame.
    """
    whole = np.nonzero(measured & ~partly)[0]
    for before, after in zip(whole[:-1], whole[1:], strict=True):
        stretch = [f for f in range(before + 1, after) if partly[f]]
        if not stretch or np.linalg.norm(positions[stretch[-1]] - positions[after]) <= ANCHOR_JUMP:
            continue
        for frame in stretch:
            share = (frame - before) / (after - before)
            path = (1 - share) * positions[before] + share * positions[after]
            ray = positions[frame] - eyes[frame]
            ray /= np.linalg.norm(ray)
            positions[frame] = eyes[frame] + ray * float(np.dot(path - eyes[frame], ray))


def place_known_box(
    fitted: FittedObject,
    size: tuple[float, float, float],
    views: list[RestView],
    hidden: list[np.ndarray | None],
    camera: Camera,
) -> FittedObject:
    """A box-like body of known size (the prompt's ``size``) placed on the table where its silhouettes match
    its masks: its position and yaw (from the silhouette fit's, and a quarter turn from it, the size's
    footprint read either way round), the size kept; its front is the side the silhouette fit faced.

    A silhouette fit free in size made an RGB-only cabinet 10 cm too deep and put it 14 cm off: its door
    stands in front of its front, and the door's pixels are not the body's. Here pixels in ``hidden`` (its
    parts' masks on each view) cost nothing whether the box covers them or not.

    Args:
        fitted: The silhouette fit (its kind and parameters are kept).
        size: Known full extents ``(sx, sy, sz)``, metres.
        views: Frames on which it rests.
        hidden: Per view, the pixels where something known stands in front of it, or None.
        camera: Intrinsics.
    """
    extents = tuple(float(v) for v in size)
    z = extents[2] / 2
    shape = Shape(fitted.shape.kind, extents, dict(fitted.shape.params))

    def cost(x):
        pose = pose_matrix(np.array([x[0], x[1], z]), yaw_rotation(x[2]))
        return float(np.mean([
            silhouette_mismatch(silhouette_polygon(shape, view.camera_from_world @ pose, camera), view.mask,
                                UNSEEN_WEIGHT, hidden=cover)
            for view, cover in zip(views, hidden, strict=True)
        ]))  # fmt: skip

    best = None
    for turn in (0.0, np.pi / 2):
        start = np.array([fitted.position[0], fitted.position[1], fitted.yaw + turn])
        result = minimize(cost, start, method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-5, "maxiter": 400, "initial_simplex": start + np.array(
                              [[0, 0, 0], [0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.3]])})  # fmt: skip
        if best is None or result.fun < best.fun:
            best = result
    # The silhouette tells the box's yaw up to a half turn, not which of its sides is the front (local +x):
    # that stays the side the silhouette fit faced (a cabinet's open side, towards the camera).
    turns = round(math.remainder(fitted.yaw - float(best.x[2]), 2 * math.pi) / (math.pi / 2))
    if turns % 2:
        extents = (extents[1], extents[0], extents[2])
    yaw = math.remainder(float(best.x[2]) + turns * math.pi / 2, 2 * math.pi)
    placed = Shape(shape.kind, extents, shape.params, fit_error=float(best.fun))
    return FittedObject(placed, np.array([best.x[0], best.x[1], z]), yaw)
