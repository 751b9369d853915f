"""Camera motion from RGB-D: where each frame's camera is relative to the reference frame's.

A head-mounted or hand-held camera moves between frames. :func:`camera_path` first asks
whether it moves at all (:func:`apparent_motion` of the background between frames half
a second apart), so a still camera keeps one pose; where it moves,
:func:`estimate_camera_motion` places every frame straight against the reference
frame: corners spread over the reference (:func:`_spread_corners`, so that the strong
edges of something that moves, a gripper or its shadow, do not outnumber the still
background) are lifted with the cleaned depth, projected into the frame by the last
placed frame's pose and followed by optical flow from there. No drift builds up, not
even in the turn about the table's normal, which the table's plane cannot tell. Where
that fails (the view has changed too much), the pose comes from a chain: corners on
the table (which no hand or gripper is) followed by optical flow from the last placed
frame, else corners anywhere, else SIFT features matched straight to the reference
(also every :data:`ANCHOR_EVERY` frames); and from there the reference's corners are
followed again. The rigid transform is found from the matches lifted to 3D with RANSAC
and Kabsch (the inlier band from the depth noise, which grows with the square of the
distance) and refined by the reprojection error. Each placed frame is then levelled by
the table seen in it, which fixes its tilt and height without drift. A frame that cannot be
placed is flagged, never given an invented pose. Where the table plane of a frame is
known from the table fit, the angle between it and the transform's prediction is
kept (a check, in degrees).
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..demo import Camera
from ..errors import WarningLog
from .camera import back_project, intrinsics_matrix, invert, pose_matrix
from .depth_clean import clean_depth
from .table import FramePlane, refine_plane

FEATURES = 4000
"""SIFT features detected per frame."""

CONTRAST = 0.01
"""SIFT's contrast threshold: a quarter of OpenCV's default, so that plain tables and walls still give features."""

RATIO_TEST = 0.8
"""Lowe's ratio: a match is kept when its distance is below this share of the second best's."""

FLOW_CORNERS = 1500
"""Corners tracked by optical flow from one frame into the next placed one."""

TABLE_BAND = 0.01
"""Depth within this many metres of the table plane (or the noise band, if wider) lies on the table."""

CORNER_TILES = (8, 6)
"""Columns and rows of the grid over which tracked corners are spread (:func:`_spread_corners`)."""

CORNER_RESPONSE = 1e-5
"""Smallest eigenvalue of a corner's gradient matrix (OpenCV's, grey levels scaled to 0-1) for it to be tracked."""

GUIDED_LEVELS = 2
"""Pyramid levels of the flow that starts from a guessed pose (:func:`_guided_flow_motion`): it corrects
a guess, so a few tens of pixels are enough."""

MIN_TABLE_POINTS = 500
"""Fewer depth points on the table than this: a frame's pose is not levelled by it."""

MIN_INLIERS = 25
"""Fewer RANSAC inliers than this: the frame's pose is not estimated from that pair."""

ANCHOR_EVERY = 10
"""Every this many frames, a frame followed by optical flow is also matched straight to the reference (drift)."""

SURE_INLIERS = 100
"""A direct match with the reference with fewer inliers is compared with one through the last placed frame."""

RANSAC_ITERATIONS = 1000
"""Rigid-transform hypotheses per frame pair."""

INLIER_SIGMAS = 3.0
"""A match is an inlier when its 3D residual is within this many depth-noise sigmas."""

DEFAULT_NOISE_1M = 0.01
"""Depth noise at 1 m (metres) assumed when the table fit has not measured it."""

MIN_INLIER_DISTANCE = 0.003
"""The 3D inlier band is never narrower than this many metres."""

MOVING_DEGREES = 0.5
"""The camera moves when the median rotation from the reference exceeds this angle ..."""

MOVING_METRES = 0.005
"""... or the median translation exceeds this distance."""

MAX_ESTIMATES = 50
"""Frames of a moving camera placed at most (every third of a 5 s clip at 30 fps); the frames between are interpolated."""

MOVING_PIXELS = 1.0
"""The background of a pair of probe frames seems to move more than this many pixels: the camera moves."""

TEXTURE_LEVEL = 4.0
"""Grey levels per pixel of gradient (after a slight blur) for a pixel to tell a shift."""

MIN_TEXTURED = 500
"""Fewer textured still pixels than this: a pair of frames tells nothing."""

PROBE_PAIRS = 5
"""Pairs of nearby frames whose motion decides whether the camera moves ..."""

PROBE_SPAN_S = 0.5
"""... this many seconds apart."""


@dataclasses.dataclass
class FrameMotion:
    """One frame's camera relative to the reference frame's camera.

    Attributes:
        frame: The video frame.
        reference_from_camera: 4x4 (this frame's camera coordinates into the
            reference's), or None when it cannot be estimated.
        matches: Feature matches with depth on both frames.
        inliers: Matches the transform explains.
        residual_m: RMS 3D distance (metres) of the inliers after the fit.
        reprojection_px: RMS reprojection error (pixels) of the inliers in this frame.
        table_disagreement_deg: Angle between the reference table normal and this
            frame's table normal carried into the reference by the transform (None
            without planes).
        chained: True when placed through the previous frame rather than directly.
    """

    frame: int
    reference_from_camera: np.ndarray | None
    matches: int = 0
    inliers: int = 0
    residual_m: float = 0.0
    reprojection_px: float = 0.0
    table_disagreement_deg: float | None = None
    chained: bool = False

    @property
    def estimated(self) -> bool:
        """Whether the frame has a pose."""
        return self.reference_from_camera is not None

    @property
    def rotation_deg(self) -> float:
        """Rotation from the reference camera, degrees (nan when not estimated)."""
        return rotation_degrees(self.reference_from_camera) if self.estimated else float("nan")

    @property
    def translation_m(self) -> float:
        """Distance from the reference camera, metres (nan when not estimated)."""
        return float(np.linalg.norm(self.reference_from_camera[:3, 3])) if self.estimated else float("nan")


@dataclasses.dataclass
class _Features:
    pixels: np.ndarray  # Nx2 float
    points: np.ndarray  # Nx3 metres, camera frame
    descriptors: np.ndarray
    grey: np.ndarray | None = None  # HxW uint8, for tracking corners into the next frame
    depth: np.ndarray | None = None  # HxW cleaned metres
    allowed: np.ndarray | None = None  # HxW bool: a reading, and nothing that moves


def rotation_degrees(transform: np.ndarray) -> float:
    """The rotation angle of a 4x4 rigid transform, degrees."""
    cosine = (np.trace(transform[:3, :3]) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def _frame(rgb: np.ndarray, depth: np.ndarray, moving: np.ndarray | None) -> _Features:
    """A frame's grey image, cleaned depth and where features may be taken; no descriptors yet."""
    clean = clean_depth(depth)
    allowed = clean > 0
    if moving is not None:
        allowed &= ~moving
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if rgb.ndim == 3 else rgb
    return _Features(np.zeros((0, 2)), np.zeros((0, 3)), np.zeros((0, 128), np.float32), grey, clean, allowed)


def _describe(camera: Camera, frame: _Features) -> _Features:
    """The frame with its SIFT features (pixels, camera-frame points, descriptors) where it has depth."""
    keypoints, descriptors = cv2.SIFT_create(nfeatures=FEATURES, contrastThreshold=CONTRAST).detectAndCompute(
        frame.grey, frame.allowed.astype(np.uint8) * 255
    )
    if descriptors is None:
        return frame
    pixels = np.array([k.pt for k in keypoints], np.float64)
    points, seen = _lift(camera, frame.depth, pixels)
    return dataclasses.replace(frame, pixels=pixels[seen], points=points[seen], descriptors=descriptors[seen])


def _features(camera: Camera, rgb: np.ndarray, depth: np.ndarray, moving: np.ndarray | None) -> _Features:
    """:func:`_frame` and :func:`_describe` at once."""
    return _describe(camera, _frame(rgb, depth, moving))


def _lift(camera: Camera, depth: np.ndarray, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Camera-frame points under sub-pixel positions (nearest pixel's depth), and which have a reading."""
    rows = np.clip(np.round(pixels[:, 1]).astype(int), 0, depth.shape[0] - 1)
    cols = np.clip(np.round(pixels[:, 0]).astype(int), 0, depth.shape[1] - 1)
    z = depth[rows, cols].astype(np.float64)
    points = np.stack(
        [(pixels[:, 0] - camera.cx) * z / camera.fx, (pixels[:, 1] - camera.cy) * z / camera.fy, z], axis=1
    )
    return points, z > 0


def _flow_motion(
    camera: Camera, first: _Features, second: _Features, noise_1m: float, rng: np.random.Generator
) -> tuple[np.ndarray, int, int, float, float] | None:
    """``first_from_second`` from corners tracked by optical flow (as :func:`_pair_motion` returns it).

    For frames close in time: where the view changes little, pyramidal Lucas-Kanade
    follows many more corners than descriptors match (repeated wood grain, plain
    walls). A corner is kept only where tracking it back lands within a pixel of where it started.
    """
    corners = cv2.goodFeaturesToTrack(first.grey, FLOW_CORNERS, 0.005, 6, mask=first.allowed.astype(np.uint8))
    if corners is None or len(corners) < MIN_INLIERS:
        return None
    ahead, status, _ = cv2.calcOpticalFlowPyrLK(
        first.grey, second.grey, corners, None, winSize=(21, 21), maxLevel=4
    )
    back, status_back, _ = cv2.calcOpticalFlowPyrLK(
        second.grey, first.grey, ahead, None, winSize=(21, 21), maxLevel=4
    )
    start, end = corners.reshape(-1, 2).astype(np.float64), ahead.reshape(-1, 2).astype(np.float64)
    good = (status.ravel() == 1) & (status_back.ravel() == 1)
    good &= np.linalg.norm(back.reshape(-1, 2) - start, axis=1) < 1.0
    height, width = second.grey.shape
    good &= (end[:, 0] >= 0) & (end[:, 0] < width - 0.5) & (end[:, 1] >= 0) & (end[:, 1] < height - 0.5)
    start, end = start[good], end[good]
    target, seen_first = _lift(camera, first.depth, start)
    source, seen_second = _lift(camera, second.depth, end)
    rows, cols = np.round(end[:, 1]).astype(int), np.round(end[:, 0]).astype(int)
    keep = seen_first & seen_second & second.allowed[rows, cols]
    return _rigid_motion(camera, source[keep], target[keep], end[keep], noise_1m, rng)


def _spread_corners(grey: np.ndarray, allowed: np.ndarray, count: int) -> np.ndarray:
    """``Nx2`` corners (pixels) spread over the image: each tile of a grid picks its own best.

    Corners picked over the whole image cluster on its strongest edges, which are often
    something that moves (a gripper's outline, its shadow), and a cluster of them moving
    together outvotes the still background. Each tile takes its own share, ranked against
    its own strongest corner; tiles without texture (a corner response below
    :data:`CORNER_RESPONSE`) give none.
    """
    height, width = grey.shape
    response = cv2.cornerMinEigenVal(grey, 7)
    found = []
    share = max(1, count // (CORNER_TILES[0] * CORNER_TILES[1]))
    rows = np.linspace(0, height, CORNER_TILES[1] + 1).astype(int)
    cols = np.linspace(0, width, CORNER_TILES[0] + 1).astype(int)
    for top, bottom in zip(rows[:-1], rows[1:], strict=True):
        for left, right in zip(cols[:-1], cols[1:], strict=True):
            tile = allowed[top:bottom, left:right] & (response[top:bottom, left:right] > CORNER_RESPONSE)
            if tile.sum() < 10:
                continue
            corners = cv2.goodFeaturesToTrack(
                grey[top:bottom, left:right], share, 0.01, 6, mask=tile.astype(np.uint8), blockSize=7
            )
            if corners is not None:
                found.append(corners.reshape(-1, 2) + (left, top))
    return np.concatenate(found).astype(np.float64) if found else np.zeros((0, 2))


def _guided_flow_motion(
    camera: Camera,
    reference: _Features,
    corners: np.ndarray,
    view: _Features,
    reference_from_camera: np.ndarray,
    noise_1m: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, int, int, float, float] | None:
    """``reference_from_camera`` found by tracking the reference's corners straight into ``view``.

    Each corner of the reference is lifted with its depth and projected into the view by
    a guessed pose (the last placed frame's, or a chain through it); optical flow starts
    there, so it only has to take out the guess's error, however far the camera has
    turned since the reference. Registering every frame against the same reference
    leaves no drift to build up along a chain, in particular in the turn about the
    table's normal, which the table's plane cannot tell. As in :func:`_flow_motion`, a
    corner is kept only where tracking it back lands within a pixel of where it started.

    Args:
        camera: Intrinsics (pixels).
        reference: The reference frame.
        corners: ``Nx2`` pixels of the reference to track (:func:`_spread_corners`).
        view: The frame to place.
        reference_from_camera: 4x4 guess of the view's pose (its camera into the reference's).
        noise_1m: Depth noise at 1 m, metres (sets the 3D inlier band).
        rng: Random generator for RANSAC.

    Returns:
        As :func:`_pair_motion` (the pose is ``reference_from_camera``), or None.
    """
    points, seen = _lift(camera, reference.depth, corners)
    start, points = corners[seen], points[seen]
    camera_from_reference = invert(reference_from_camera)
    moved = points @ camera_from_reference[:3, :3].T + camera_from_reference[:3, 3]
    depth = np.maximum(moved[:, 2], 1e-6)
    ahead = np.stack(
        [camera.fx * moved[:, 0] / depth + camera.cx, camera.fy * moved[:, 1] / depth + camera.cy], 1
    )
    height, width = view.grey.shape
    inside = (moved[:, 2] > 0) & _in_image(ahead, width, height)
    start, points, ahead = start[inside].astype(np.float32), points[inside], ahead[inside].astype(np.float32)
    if len(start) < MIN_INLIERS:
        return None
    track = {"winSize": (21, 21), "maxLevel": GUIDED_LEVELS, "flags": cv2.OPTFLOW_USE_INITIAL_FLOW}
    end, status, _ = cv2.calcOpticalFlowPyrLK(reference.grey, view.grey, start, ahead, **track)
    back, status_back, _ = cv2.calcOpticalFlowPyrLK(view.grey, reference.grey, end, start.copy(), **track)
    end = end.reshape(-1, 2).astype(np.float64)
    good = (status.ravel() == 1) & (status_back.ravel() == 1) & _in_image(end, width, height)
    good &= np.linalg.norm(back.reshape(-1, 2) - start, axis=1) < 1.0
    end, points = end[good], points[good]
    source, seen = _lift(camera, view.depth, end)
    keep = seen & view.allowed[np.round(end[:, 1]).astype(int), np.round(end[:, 0]).astype(int)]
    return _rigid_motion(camera, source[keep], points[keep], end[keep], noise_1m, rng)


def _in_image(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    """Which of ``Nx2`` pixel positions lie on the image (so that rounding them stays on it)."""
    return (
        (pixels[:, 0] >= 0)
        & (pixels[:, 0] < width - 0.5)
        & (pixels[:, 1] >= 0)
        & (pixels[:, 1] < height - 0.5)
    )


def _match(first: _Features, second: _Features) -> tuple[np.ndarray, np.ndarray]:
    if len(first.descriptors) < 2 or len(second.descriptors) < 2:
        return np.zeros(0, int), np.zeros(0, int)
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(first.descriptors, second.descriptors, k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < RATIO_TEST * p[1].distance]
    return np.array([m.queryIdx for m in good], int), np.array([m.trainIdx for m in good], int)


def kabsch(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The rigid transform (4x4) taking ``source`` points onto ``target`` (both ``Nx3``) in least squares."""
    source_centre, target_centre = source.mean(axis=0), target.mean(axis=0)
    u, _, vt = np.linalg.svd((source - source_centre).T @ (target - target_centre))
    sign = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    rotation = vt.T @ np.diag([1.0, 1.0, sign]) @ u.T
    return pose_matrix(target_centre - rotation @ source_centre, rotation)


def _rigid_ransac(
    source: np.ndarray, target: np.ndarray, band: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray] | None:
    """RANSAC + Kabsch: ``target ~ T @ source``; None when fewer than MIN_INLIERS agree."""
    if len(source) < MIN_INLIERS:
        return None
    best = np.zeros(len(source), bool)
    needed = RANSAC_ITERATIONS
    iteration = 0
    while iteration < needed:
        iteration += 1
        sample = rng.choice(len(source), 3, replace=False)
        guess = kabsch(source[sample], target[sample])
        inliers = np.linalg.norm(source @ guess[:3, :3].T + guess[:3, 3] - target, axis=1) < band
        if inliers.sum() > best.sum():
            best = inliers
            # Enough hypotheses to draw an all-inlier sample with 99.9 % odds at this inlier share.
            share = min(float(best.mean()), 0.999)
            needed = min(RANSAC_ITERATIONS, int(np.ceil(np.log(1e-3) / np.log(1.0 - share**3))))
    if best.sum() < MIN_INLIERS:
        return None
    for _ in range(3):
        fit = kabsch(source[best], target[best])
        best = np.linalg.norm(source @ fit[:3, :3].T + fit[:3, 3] - target, axis=1) < band
        if best.sum() < MIN_INLIERS:
            return None
    return fit, best


def _refine_by_reprojection(
    camera: Camera, reference_points: np.ndarray, pixels: np.ndarray, reference_from_camera: np.ndarray
) -> tuple[np.ndarray, float]:
    """Refines the pose by the reprojection of reference points into this frame; returns it and the RMS px."""
    camera_from_reference = invert(reference_from_camera)
    rvec, _ = cv2.Rodrigues(camera_from_reference[:3, :3])
    tvec = camera_from_reference[:3, 3].copy()
    matrix = intrinsics_matrix(camera)
    ok, rvec, tvec = cv2.solvePnP(
        reference_points, pixels, matrix, None, rvec, tvec, True, cv2.SOLVEPNP_ITERATIVE
    )
    if ok:
        camera_from_reference = pose_matrix(tvec.ravel(), cv2.Rodrigues(rvec)[0])
    projected, _ = cv2.projectPoints(
        reference_points,
        cv2.Rodrigues(camera_from_reference[:3, :3])[0],
        camera_from_reference[:3, 3],
        matrix,
        None,
    )
    error = float(np.sqrt(np.mean(np.sum((projected.reshape(-1, 2) - pixels) ** 2, axis=1))))
    return invert(camera_from_reference), error


def _pair_motion(
    camera: Camera, first: _Features, second: _Features, noise_1m: float, rng: np.random.Generator
) -> tuple[np.ndarray, int, int, float, float] | None:
    """``first_from_second`` with (matches, inliers, residual m, reprojection px), or None."""
    i, j = _match(first, second)
    return _rigid_motion(camera, second.points[j], first.points[i], second.pixels[j], noise_1m, rng)


def _rigid_motion(
    camera: Camera,
    source: np.ndarray,
    target: np.ndarray,
    pixels: np.ndarray,
    noise_1m: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, int, int, float, float] | None:
    """``target_from_source`` from matched 3D points (and the source's pixels), as :func:`_pair_motion` returns it.

    RANSAC and Kabsch with a band from the depth noise at each point's distance, then
    refined by the reprojection of the target's points into the source frame.
    """
    band = np.maximum(
        INLIER_SIGMAS * noise_1m * np.hypot(source[:, 2] ** 2, target[:, 2] ** 2), MIN_INLIER_DISTANCE
    )
    result = _rigid_ransac(source, target, band, rng)
    if result is None:
        return None
    first_from_second, inliers = result
    first_from_second, reprojection = _refine_by_reprojection(
        camera, target[inliers], pixels[inliers], first_from_second
    )
    moved = source[inliers] @ first_from_second[:3, :3].T + first_from_second[:3, 3]
    residual = float(np.sqrt(np.mean(np.sum((moved - target[inliers]) ** 2, axis=1))))
    return first_from_second, len(source), int(inliers.sum()), residual, reprojection


def _table_disagreement(
    reference_from_camera: np.ndarray, plane: FramePlane | None, reference: FramePlane | None
) -> float | None:
    if plane is None or reference is None or not plane.found or not reference.found:
        return None
    predicted = reference_from_camera[:3, :3] @ plane.normal_cam
    return float(np.degrees(np.arccos(np.clip(predicted @ reference.normal_cam, -1.0, 1.0))))


def _on_table(
    camera: Camera, depth: np.ndarray, normal: np.ndarray, offset: float, noise_1m: float
) -> np.ndarray:
    """``HxW`` bool: pixels whose depth lies on the plane ``normal . p + offset = 0`` (within the noise)."""
    height, width = depth.shape
    v, u = np.mgrid[0:height, 0:width]
    distance = normal[0] * (u - camera.cx) / camera.fx + normal[1] * (v - camera.cy) / camera.fy + normal[2]
    band = np.maximum(INLIER_SIGMAS * noise_1m * depth**2, TABLE_BAND)
    return (depth > 0) & (np.abs(distance * depth + offset) < band)


def _level(
    camera: Camera, view: _Features, pose: np.ndarray, reference: tuple[np.ndarray, float], noise_1m: float
) -> tuple[np.ndarray, np.ndarray | None]:
    """Corrects a frame's pose by the table seen in it; returns the pose and its on-table pixels.

    The table's plane pins three of the camera's six degrees of freedom (its tilt and its
    height) on every frame without drift: the plane the pose predicts in this frame is refitted
    to the depth near it, and the pose is turned and shifted the least that puts that plane
    onto the reference's. Features that move (a hand, a gripper) never lie on the table.
    """
    normal_0, offset_0 = reference
    rotation, shift = pose[:3, :3], pose[:3, 3]
    normal, offset = rotation.T @ normal_0, float(normal_0 @ shift + offset_0)
    near = _on_table(camera, view.depth, normal, offset, 2 * noise_1m) & view.allowed
    points = back_project(camera, np.where(near, view.depth, 0.0).astype(np.float32), step=2)
    if len(points) < MIN_TABLE_POINTS:
        return pose, None
    normal, offset, _ = refine_plane(points, normal, offset, noise_1m)
    turned = rotation @ normal
    axis = np.cross(turned, normal_0)
    angle = float(np.arctan2(np.linalg.norm(axis), turned @ normal_0))
    correction = Rotation.from_rotvec(axis / max(np.linalg.norm(axis), 1e-12) * angle).as_matrix()
    levelled = pose_matrix(shift + normal_0 * (offset - offset_0 - normal_0 @ shift), correction @ rotation)
    return levelled, _on_table(camera, view.depth, normal, offset, noise_1m)


def _chain_or_match(
    camera: Camera,
    views: list[_Features],
    features,
    table: dict[int, np.ndarray | None],
    motions: list[FrameMotion],
    k: int,
    last: int | None,
    noise_1m: float,
    rng: np.random.Generator,
) -> tuple[tuple[np.ndarray, int, int, float, float], bool] | None:
    """Frame ``k``'s ``reference_from_camera`` (as :func:`_pair_motion` returns it) and whether it was chained.

    Corners on the table followed by optical flow from the last placed frame, else corners
    anywhere, else SIFT matched straight to the reference (also every :data:`ANCHOR_EVERY`
    frames), else SIFT matched with the last placed frame; None when none holds.
    """
    chain = None
    if last is not None and table.get(last) is not None:
        # Corners on the table first: they cannot belong to a hand or a gripper that moves.
        on_table = dataclasses.replace(views[last], allowed=table[last])
        chain = _flow_motion(camera, on_table, views[k], noise_1m, rng)
    if chain is None and last is not None:
        chain = _flow_motion(camera, views[last], views[k], noise_1m, rng)
    direct = None
    if chain is None or k % ANCHOR_EVERY == 0:
        direct = _pair_motion(camera, features(0), features(k), noise_1m, rng)
    if chain is None and direct is None and last is not None:
        chain = _pair_motion(camera, features(last), features(k), noise_1m, rng)
    if chain is not None:
        chain = (motions[last].reference_from_camera @ chain[0], *chain[1:])
    # Straight to the reference where that is sure (no drift), else whichever more points agree with.
    if direct is not None and (chain is None or direct[2] >= min(SURE_INLIERS, chain[2])):
        return direct, False
    if chain is not None:
        return chain, True
    return None


def estimate_camera_motion(
    camera: Camera,
    rgb_frames: list[np.ndarray],
    depth_frames: list[np.ndarray],
    moving_masks: list[np.ndarray | None] | None = None,
    planes: list[FramePlane | None] | None = None,
    frames: list[int] | None = None,
    noise_1m: float | None = None,
    rng: np.random.Generator | None = None,
) -> list[FrameMotion]:
    """Each frame's camera pose relative to the first frame given (the reference).

    Args:
        camera: Intrinsics (pixels).
        rgb_frames: ``HxWx3`` uint8 RGB (or ``HxW`` grey) per frame.
        depth_frames: ``HxW`` z-depth in metres per frame, 0 = no reading (cleaned here).
        moving_masks: ``HxW`` bool per frame, True on anything that moves
            (objects, hands); no features are taken there. None: none.
        planes: The table plane of each frame (from :func:`.table.fit_table_frames`)
            for the consistency check; None entries or None: no check.
        frames: The video frame of each image (0, 1, ... when None).
        noise_1m: Depth noise at 1 m in metres (the planes' median, else
            :data:`DEFAULT_NOISE_1M`, when None).
        rng: Random generator; a fixed seed when None.

    Returns:
        One :class:`FrameMotion` per frame; the first is the identity.
        ``reference_from_camera`` is None where neither the reference's corners
        followed into the frame, a direct match with the reference nor a chain
        through the previous frame has :data:`MIN_INLIERS` inliers. ``chained``
        is False where the reference's corners placed the frame.
    """
    rng = rng or np.random.default_rng(0)
    count = len(rgb_frames)
    frames = list(range(count)) if frames is None else [int(f) for f in frames]
    moving_masks = moving_masks or [None] * count
    planes = planes or [None] * count
    if noise_1m is None:
        measured = [p.noise_1m for p in planes if p is not None and p.found]
        noise_1m = float(np.median(measured)) if measured else DEFAULT_NOISE_1M
    views = [
        _frame(rgb, depth, moving)
        for rgb, depth, moving in zip(rgb_frames, depth_frames, moving_masks, strict=True)
    ]
    described: dict[int, _Features] = {}

    def features(k: int) -> _Features:
        if k not in described:
            described[k] = _describe(camera, views[k])
        return described[k]

    reference = None
    if planes[0] is not None and planes[0].found:
        reference = (np.asarray(planes[0].normal_cam, float), float(planes[0].offset_cam))
    table = (
        {0: _on_table(camera, views[0].depth, *reference, noise_1m) & views[0].allowed} if reference else {}
    )
    motions = [FrameMotion(frames[0], np.eye(4))]
    corners = _spread_corners(views[0].grey, views[0].allowed, FLOW_CORNERS)
    for k in range(1, count):
        last = next((j for j in range(k - 1, -1, -1) if motions[j].estimated), None)
        # Straight to the reference, starting from the last placed frame's pose: no drift builds up.
        best = None
        if last is not None:
            best = _guided_flow_motion(
                camera, views[0], corners, views[k], motions[last].reference_from_camera, noise_1m, rng
            )
        chained = False
        if best is None:
            placed = _chain_or_match(camera, views, features, table, motions, k, last, noise_1m, rng)
            if placed is None:
                motions.append(FrameMotion(frames[k], None))
                continue
            best, chained = placed
            # The chain's pose is a start: from there the reference's corners are tracked straight in.
            refined = _guided_flow_motion(camera, views[0], corners, views[k], best[0], noise_1m, rng)
            if refined is not None:
                best, chained = refined, False
        pose, matches, inliers, residual, reprojection = best
        if reference is not None:
            pose, table[k] = _level(camera, views[k], pose, reference, noise_1m)
        disagreement = _table_disagreement(pose, planes[k], planes[0])
        motions.append(
            FrameMotion(frames[k], pose, matches, inliers, residual, reprojection, disagreement, chained)
        )
    return motions


def relative_motion(motions: list[FrameMotion], first: int, second: int) -> np.ndarray | None:
    """``first_camera_from_second_camera`` (4x4) between two entries of ``motions``, or None if either lacks a pose."""
    a, b = motions[first], motions[second]
    if not (a.estimated and b.estimated):
        return None
    return invert(a.reference_from_camera) @ b.reference_from_camera


def camera_moves(
    motions: list[FrameMotion], degrees: float = MOVING_DEGREES, metres: float = MOVING_METRES
) -> bool:
    """Whether the camera moves: two frames (one, if only one is placed) turned or shifted past a limit
    from the reference. One frame is not enough, so that one wild estimate does not move a still camera;
    a median is too much, since a swaying camera passes its starting pose again and again.

    Args:
        motions: From :func:`estimate_camera_motion`.
        degrees: Rotation limit.
        metres: Translation limit.

    Returns:
        False when no frame besides the reference has a pose (nothing shows motion).
    """
    placed = [m for m in motions[1:] if m.estimated]
    if not placed:
        return False
    moved = sum(m.rotation_deg > degrees or m.translation_m > metres for m in placed)
    return moved >= min(2, len(placed))


def _grey(rgb: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if rgb.ndim == 3 else rgb


def apparent_motion(first: np.ndarray, second: np.ndarray, still: np.ndarray) -> float:
    """How far (pixels) the background seems to move between two grey frames: 0 for a still camera.

    Where the image has texture, a shift of ``d`` pixels changes a pixel by about its
    gradient times ``d``; so the median over textured pixels outside what moves of
    ``|second - first| / |gradient|`` estimates the shift, unmoved by a hand or gripper
    that covers less than half of them. The frames' mean brightness difference is taken
    out first (a flickering light is not a moving camera).

    Args:
        first: ``HxW`` uint8.
        second: ``HxW`` uint8, the same size.
        still: ``HxW`` bool, True where nothing is known to move.

    Returns:
        The median apparent shift in pixels (0 when there is no texture to tell).
    """
    a = cv2.GaussianBlur(first, (5, 5), 1.0).astype(np.float32)
    b = cv2.GaussianBlur(second, (5, 5), 1.0).astype(np.float32)
    gradient = np.hypot(cv2.Sobel(a, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(a, cv2.CV_32F, 0, 1, ksize=3)) / 8
    textured = still & (gradient > TEXTURE_LEVEL)
    if textured.sum() < MIN_TEXTURED:
        return 0.0
    change = b - a
    change -= np.median(change[still])
    return float(np.median(np.abs(change[textured]) / gradient[textured]))


def camera_path(
    camera: Camera,
    frames: int,
    fps: float,
    reference: int,
    world_from_reference: np.ndarray,
    read_rgb,
    read_depth,
    moving_mask,
    planes: list[FramePlane] | None = None,
    log: WarningLog | None = None,
) -> np.ndarray | None:
    """world_from_camera on every frame of a camera that moves, or None for one that stays put.

    Pairs of frames half a second apart, spread over the video, decide whether the
    camera moves at all (:func:`apparent_motion` of the background past
    :data:`MOVING_PIXELS` in two of them); a camera that stays put keeps one pose, so
    a still scene gains no jitter. Where it moves, up to :data:`MAX_ESTIMATES` frames
    spread evenly (every frame of a short clip) are placed against the reference
    frame, and the frames between are interpolated (positions linearly, rotations
    by slerp): a head or a hand moves smoothly between a few video frames.

    Args:
        camera: Intrinsics.
        frames: Video frames.
        fps: Their rate.
        reference: The frame whose camera the table was fitted in.
        world_from_reference: Its 4x4 pose.
        read_rgb: ``frame -> HxWx3`` uint8 image.
        read_depth: ``frame -> HxW`` metres (0 = none), or None where there is none.
        moving_mask: ``frame -> HxW`` bool, True on what may move (the objects).
        planes: The table fit's per-frame planes (their noise sets the inlier band; they check the poses).
        log: Receives the figures, and the frames that could not be placed.

    Returns:
        ``Nx4x4`` world_from_camera per frame, or None.
    """
    placed = {p.frame: p for p in planes or [] if p.found}
    noise = float(np.median([p.noise_1m for p in placed.values()])) if placed else None

    def estimate(first: int, chosen: list[int]) -> list[FrameMotion]:
        order = [first, *(f for f in chosen if f != first)]
        seen = [(f, d) for f in order if (d := read_depth(f)) is not None]
        keep = [f for f, _ in seen]
        return estimate_camera_motion(
            camera, [read_rgb(f) for f in keep], [d for _, d in seen], [moving_mask(f) for f in keep],
            [placed.get(f) for f in keep], keep, noise,
        )  # fmt: skip

    step = max(1, int(np.ceil(frames / MAX_ESTIMATES)))
    gap = int(np.clip(round(PROBE_SPAN_S * fps), 1, frames - 1))
    starts = sorted({int(f) for f in np.linspace(0, frames - 1 - gap, PROBE_PAIRS).round()})
    shifts = [
        apparent_motion(
            _grey(read_rgb(f)), _grey(read_rgb(f + gap)), ~(moving_mask(f) | moving_mask(f + gap))
        )
        for f in starts
    ]
    if sum(shift > MOVING_PIXELS for shift in shifts) < min(2, len(shifts)):
        return None
    motions = estimate(reference, sorted({*range(0, frames, step), frames - 1}))
    known = sorted((m.frame, m.reference_from_camera) for m in motions if m.estimated)
    missing = [m.frame for m in motions if not m.estimated]
    if len(known) < 2:
        if log is not None:
            log.warn(
                "geometry",
                "the camera seems to move but too few frames could be placed; it is taken as still",
            )
        return None
    index = np.array([f for f, _ in known], float)
    world = np.array([world_from_reference @ pose for _, pose in known])
    every = np.arange(frames)
    rotations = Slerp(index, Rotation.from_matrix(world[:, :3, :3]))(np.clip(every, index[0], index[-1]))
    path = np.tile(np.eye(4), (frames, 1, 1))
    path[:, :3, :3] = rotations.as_matrix()
    for axis in range(3):
        path[:, axis, 3] = np.interp(every, index, world[:, axis, 3])
    if log is not None:
        turns = [m.rotation_deg for m in motions if m.estimated]
        shifts = [m.translation_m for m in motions if m.estimated]
        errors = [m.reprojection_px for m in motions if m.estimated and m.frame != reference]
        log.warn(
            "geometry",
            f"the camera moves (up to {max(turns):.1f} degrees and {100 * max(shifts):.1f} cm from frame "
            f"{reference}): its pose is estimated from the background on {len(known)} frames (median "
            f"reprojection error {np.median(errors):.1f} px) and interpolated between them"
            + (
                f"; frames {_frame_list(missing)} could not be placed and are interpolated" if missing else ""
            ),
        )
    return path


def _frame_list(frames: list[int]) -> str:
    return ", ".join(str(f) for f in frames[:8]) + (f" and {len(frames) - 8} more" if len(frames) > 8 else "")
