"""The table: a plane fitted to depth, and the world frame built on it.

The world frame of the contract has z up (the table normal), gravity -z and
z = 0 on the table top. :func:`fit_table_frames` fits the plane on each chosen
frame by itself, in that frame's camera coordinates (a camera on a head moves
between frames): depth cleaned of invalid and mixed pixels
(:func:`.depth_clean.clean_depth`), points outside the objects' masks, RANSAC
with an inlier band of a few noise sigmas at each point's depth, the noise
measured on the table itself (stereo noise grows with the square of the
distance). The first frame with a plane is the reference: its plane, refined
on the frames that agree with it, is the :class:`Table`.
:func:`world_from_table` builds the world frame: origin where the optical axis
meets the table (or the foot of the camera if it looks away), x along the
camera's x projected on the table.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import ndtri

from ..demo import Camera
from ..errors import Real2GymError
from .camera import back_project, invert, transform
from .depth_clean import clean_depth, patch_noise

INLIER_SIGMAS = 2.5
"""Points within this many depth-noise sigmas (at their depth) of the plane count as on it."""

KERNEL_SIGMAS = 0.7
"""Width of the Gaussian weights of the plane's last refining rounds, in noise sigmas: a mode-seeking fit
that a hand, a gripper or a wall a few sigmas above the table barely pulls (a fit within a band of
INLIER_SIGMAS would be pulled up: they rise above the table, never below)."""

KERNEL_WIDENING = (3.0, 2.0, 1.4, 1.0)
"""The wider kernels of the first rounds (from a rough start the narrow one can stick)."""

HALF_NORMAL_MEDIAN = float(ndtri(0.75))
"""Median of |N(0, 1)|: turns the median distance below the plane into a sigma."""

NOISE_FLOOR = 0.002
"""Lowest depth noise at 1 m (metres) assumed, whatever is measured (quantisation, synthetic depth)."""

NOISE_CEILING = 0.12
"""Depth noise at 1 m (metres) at which the measurement stops: a plane whose residuals grow to it is no
surface (a consumer stereo camera on a desk: 1-4 cm; noisier depth cannot be told from clutter)."""

MAX_BAND = 0.03
"""m: the inlier band never grows past this, however noisy the depth far away: a wall behind the table's
far edge lies within a band sized to the noise there, and would tilt the plane."""

FAR_BAND = 0.2
"""m: the window below the table never grows past this (a floor beyond the table's edge is further)."""

NOISE_ROUNDS = 30
"""At most this many rounds of measuring the noise on the plane and refitting it at the final width."""

MIN_SHARE = 0.25
"""A frame's plane must hold this share of its depth readings outside the objects to be the table."""

MIN_READINGS = 200
"""Fewer depth readings outside the objects than this on a frame: no plane is fitted there."""

FRAME_POINTS = 20000
"""At most this many depth points per frame go into the fit (a random subset)."""

AGREE_DEGREES = 1.0
"""Frames whose plane is within this angle of the reference's are pooled to refine it."""

AGREE_OFFSET = 0.01
"""... and whose offset is within this many metres."""


class GeometryError(Real2GymError):
    """The geometry stage cannot continue with this input."""


@dataclasses.dataclass
class Table:
    """The support plane ``normal_cam . p + offset_cam = 0`` in the camera frame.

    Attributes:
        normal_cam: Unit normal pointing up, out of the table (towards the camera's side).
        offset_cam: The plane offset in metres (the camera's height above the table).
        extent_world: ``[xmin, ymin, xmax, ymax]`` in metres of the seen table top, world frame.
        inlier_rms: RMS distance of the inliers to the plane, metres.
        source: ``"depth"`` or ``"world_from_camera"``.
    """

    normal_cam: np.ndarray
    offset_cam: float
    extent_world: list[float] = dataclasses.field(default_factory=lambda: [-0.5, -0.5, 0.5, 0.5])
    inlier_rms: float = 0.0
    source: str = "depth"

    def to_report(self) -> dict:
        """The report's ``table`` entry."""
        return {
            "normal_cam": [round(float(v), 6) for v in self.normal_cam],
            "offset_cam": round(float(self.offset_cam), 6),
            "extent_world": [round(float(v), 4) for v in self.extent_world],
            "inlier_rms": round(float(self.inlier_rms), 6),
            "source": self.source,
        }


@dataclasses.dataclass
class FramePlane:
    """The dominant plane of one frame's depth, in that frame's camera coordinates.

    Attributes:
        frame: The video frame.
        normal_cam: Unit normal towards the camera (None when too few readings).
        offset_cam: Metres; the camera's height above the plane.
        inlier_share: Share of the frame's readings outside the objects on the plane.
        inlier_rms: RMS distance (metres) of the inliers to the plane.
        noise_1m: Depth noise at 1 m (metres) measured on the plane; sigma(z) = noise_1m * z**2
            (:data:`NOISE_CEILING` when it did not settle below it).
        patch_noise_1m: Fine-scale noise at 1 m from small patches (a lower bound).
        readings: Depth readings left after cleaning, whole frame.
        pixels: Pixels of the frame.
    """

    frame: int
    normal_cam: np.ndarray | None
    offset_cam: float
    inlier_share: float
    inlier_rms: float
    noise_1m: float
    patch_noise_1m: float
    readings: int
    pixels: int

    @property
    def flat(self) -> bool:
        """Whether the noise measured on the plane settled below :data:`NOISE_CEILING` (a real surface)."""
        return self.noise_1m < NOISE_CEILING

    @property
    def found(self) -> bool:
        """Whether this plane is flat and holds enough of the frame's readings to be the table."""
        return self.normal_cam is not None and self.flat and self.inlier_share >= MIN_SHARE


@dataclasses.dataclass
class TableFit:
    """The table and the per-frame planes it was chosen from.

    Attributes:
        table: The table in the reference frame's camera coordinates.
        world_from_camera: 4x4 for the reference frame.
        reference_frame: The video frame the table and world_from_camera belong to.
        planes: One per sampled frame, in the order given.
        clouds: The points each plane was fitted to (camera frame, metres), in the same order.
    """

    table: Table
    world_from_camera: np.ndarray
    reference_frame: int
    planes: list[FramePlane]
    clouds: list[np.ndarray] = dataclasses.field(default_factory=list, repr=False)


def _plane_from_points(points: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    weights = np.ones(len(points)) if weights is None else weights / weights.sum() * len(points)
    centre = (points * weights[:, None]).sum(axis=0) / weights.sum()
    _, _, vt = np.linalg.svd((points - centre) * np.sqrt(weights)[:, None], full_matrices=False)
    normal = vt[-1]
    return normal, -float(normal @ centre)


def fit_plane_ransac(
    points: np.ndarray, band: np.ndarray, rng: np.random.Generator, iterations: int = 300
) -> tuple[np.ndarray, float, np.ndarray]:
    """Fits the dominant plane of camera-frame points.

    Args:
        points: ``Nx3`` metres, camera frame.
        band: ``N`` metres: a point within this distance of a plane counts as on it.
        rng: Random generator (seeded by the caller for repeatable runs).
        iterations: RANSAC hypotheses.

    Returns:
        ``(normal, offset, inlier_mask)`` with the normal pointing towards the
        camera (offset > 0).

    Raises:
        GeometryError: The points are degenerate (all on a line).
    """
    samples = points[rng.integers(0, len(points), size=(iterations, 3))]
    normals = np.cross(samples[:, 1] - samples[:, 0], samples[:, 2] - samples[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    usable = lengths > 1e-9
    if not usable.any():
        raise GeometryError("the depth points are degenerate (all on a line); the table cannot be fitted")
    normals = normals[usable] / lengths[usable, None]
    offsets = -np.einsum("ij,ij->i", normals, samples[usable, 0])
    counts = [int((np.abs(points @ n + o) < band).sum()) for n, o in zip(normals, offsets, strict=True)]
    best = int(np.argmax(counts))
    normal, offset = normals[best], float(offsets[best])
    weights = 1.0 / band**2
    for _ in range(3):  # least-squares refinement on the inliers
        inliers = np.abs(points @ normal + offset) < band
        normal, offset = _plane_from_points(points[inliers], weights[inliers])
    if offset < 0:
        normal, offset = -normal, -offset
    inliers = np.abs(points @ normal + offset) < band
    return normal, offset, inliers


def world_from_table(normal_cam: np.ndarray, offset_cam: float) -> np.ndarray:
    """Builds world_from_camera for a table plane (z up, z = 0 on the table).

    Args:
        normal_cam: Unit plane normal in the camera frame, pointing up.
        offset_cam: Plane offset (metres), positive: the camera is above the table.

    Returns:
        4x4 world_from_camera.
    """
    z_axis = normal_cam / np.linalg.norm(normal_cam)
    forward = np.array([0.0, 0.0, 1.0])
    denominator = float(z_axis @ forward)
    if denominator < -1e-3:  # the optical axis meets the table in front of the camera
        origin_cam = forward * (-offset_cam / denominator)
    else:
        origin_cam = -z_axis * offset_cam
    x_axis = np.array([1.0, 0.0, 0.0]) - z_axis * z_axis[0]
    x_axis /= np.linalg.norm(x_axis)
    y_axis = np.cross(z_axis, x_axis)
    camera_from_world = np.eye(4)
    camera_from_world[:3, 0], camera_from_world[:3, 1], camera_from_world[:3, 2] = x_axis, y_axis, z_axis
    camera_from_world[:3, 3] = origin_cam
    return invert(camera_from_world)


def table_from_world_pose(world_from_camera: np.ndarray) -> Table:
    """The table z = 0 of a given world frame, in camera coordinates."""
    camera_from_world = invert(world_from_camera)
    normal = camera_from_world[:3, 2]
    offset = -float(normal @ camera_from_world[:3, 3])
    return Table(normal_cam=normal, offset_cam=offset, source="world_from_camera")


def given_table_readings(
    camera: Camera, depth_frames: list[np.ndarray], object_masks: list[np.ndarray], poses: list[np.ndarray]
) -> tuple[float, list[float] | None]:
    """The depth noise at 1 m (metres) measured on a table whose place is given (camera.json's pose), and
    the extent of the table top the depth sees.

    A given pose leaves the table unfitted, but not its depth noise: what rises above the table
    counts only past a few sigmas of it (a stereo camera's disparity steps put whole rows of a
    table 1 m away 1 cm above it). Each frame's readings outside the objects go through
    :func:`refine_plane` from the given plane; the median over the frames with enough of them. The
    readings within the noise's band of the given plane are the table top's: their 1st to 99th
    percentiles, world x and y, are its extent (a variant's objects must start on it; the default
    1 m square put a mug filmed 0.67 m from the world's origin off the table).

    Args:
        camera: Intrinsics.
        depth_frames: ``HxW`` metres per chosen frame, 0 = no reading.
        object_masks: ``HxW`` bool per chosen frame, True on any object (excluded).
        poses: The 4x4 world-from-camera pose of each chosen frame (z-up world, table at z = 0).

    Returns:
        ``(noise, extent)``: the noise (:data:`NOISE_FLOOR` at least), or 0.0 where no frame has
        :data:`MIN_READINGS` readings on a surface there (the noise settled below :data:`NOISE_CEILING`);
        the extent ``[xmin, ymin, xmax, ymax]`` (m, world), or None where no frame measured the noise.
    """
    rng = np.random.default_rng(0)
    noises, tops = [], []
    for depth, mask, pose in zip(depth_frames, object_masks, poses, strict=True):
        fine, _, points = _table_points(camera, depth, mask, rng)
        if len(points) < MIN_READINGS:
            continue
        table = table_from_world_pose(pose)
        normal, offset, noise = refine_plane(
            points, table.normal_cam, table.offset_cam, max(fine, NOISE_FLOOR)
        )
        if noise < NOISE_CEILING:  # a frame that does not see the given table measures nothing
            noises.append(noise)
            band = np.minimum(INLIER_SIGMAS * noise * points[:, 2] ** 2, MAX_BAND)
            tops.append(transform(pose, points[np.abs(points @ normal + offset) < band])[:, :2])
    if not noises:
        return 0.0, None
    top = np.concatenate(tops)
    extent = np.concatenate([np.percentile(top, 1, axis=0), np.percentile(top, 99, axis=0)])
    return float(np.median(noises)), [float(v) for v in extent]


def _disparity_system(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each point's ray ``(x/z, y/z, 1)`` and inverse depth ``1/z``: a plane is linear there."""
    rays = points / points[:, 2:3]
    return rays, 1.0 / points[:, 2]


def _plane_from_disparity(coef: np.ndarray) -> tuple[np.ndarray, float]:
    """``1/z = coef . ray`` -> ``(normal, offset)``, the normal towards the camera (offset > 0)."""
    length = float(np.linalg.norm(coef))
    return -coef / length, 1.0 / length


def refine_plane(
    points: np.ndarray, normal: np.ndarray, offset: float, noise_1m: float, rounds: int = NOISE_ROUNDS
) -> tuple[np.ndarray, float, float]:
    """Refines a plane and the depth noise around it, in inverse depth.

    A stereo camera's error is in disparity: the same everywhere there, along
    each ray, growing with the square of the depth in metres. So the plane is a
    linear regression of inverse depth on the ray (``1/z = c . (x/z, y/z, 1)``),
    which, unlike a perpendicular fit of the 3-D points, does not tilt when the
    noise is large. It is reweighted round by round with a Gaussian of
    :data:`KERNEL_SIGMAS` noise sigmas, wide at first and then narrow (a mode
    of the residuals, not their mean): a hand, a gripper or a wall that rises
    a few sigmas above the table barely weighs. The noise is measured below
    the plane, where nothing but the table's own noise reaches.

    Args:
        points: ``Nx3`` camera-frame points (metres), z > 0.
        normal: Starting unit normal, towards the camera.
        offset: Starting offset (> 0).
        noise_1m: Starting noise at 1 m (metres; the disparity-space sigma, in 1/m).
        rounds: Rounds at the final kernel width, at most.

    Returns:
        ``(normal, offset, noise_1m)``.
    """
    rays, inverse = _disparity_system(points)
    far = FAR_BAND / points[:, 2] ** 2
    coef = -normal / offset
    widths = [*KERNEL_WIDENING, *([KERNEL_SIGMAS] * rounds)]
    for round_, width in enumerate(widths):
        residuals = inverse - rays @ coef
        below = (residuals < 0) & (residuals > -far)
        if below.sum() < 3:
            break
        noise_1m = float(
            np.clip(np.median(-residuals[below]) / HALF_NORMAL_MEDIAN, NOISE_FLOOR, NOISE_CEILING)
        )
        weights = np.exp(-0.5 * (residuals / (width * noise_1m)) ** 2) * (residuals > -far)
        root = np.sqrt(weights)
        new, *_ = np.linalg.lstsq(rays * root[:, None], inverse * root, rcond=None)
        change = float(np.max(np.abs(rays @ (new - coef))))
        coef = new
        if round_ >= len(KERNEL_WIDENING) and change < 0.01 * noise_1m:
            break
    normal, offset = _plane_from_disparity(coef)
    return normal, offset, noise_1m


def _table_points(
    camera: Camera, depth: np.ndarray, object_mask: np.ndarray, rng: np.random.Generator
) -> tuple[float, int, np.ndarray]:
    """A frame's fine noise at 1 m, its readings left after cleaning, and at most :data:`FRAME_POINTS` of
    its cleaned points outside the objects (``Nx3`` metres, camera frame; every 4th pixel)."""
    fine_noise = patch_noise(camera, depth)
    clean = clean_depth(depth, fine_noise)
    points = back_project(camera, clean, ~object_mask, step=4)
    if len(points) > FRAME_POINTS:
        points = points[rng.choice(len(points), FRAME_POINTS, replace=False)]
    return fine_noise, int((clean > 0).sum()), points


def fit_frame_plane(
    camera: Camera, depth: np.ndarray, object_mask: np.ndarray, frame: int, rng: np.random.Generator
) -> tuple[FramePlane, np.ndarray]:
    """Fits the dominant plane of one frame, in its own camera coordinates.

    RANSAC with a band at the patch noise finds the plane; :func:`refine_plane`
    then measures the noise on it and refits it in inverse depth until the
    noise settles.

    Args:
        camera: Intrinsics.
        depth: ``HxW`` metres, 0 = no reading (cleaned here).
        object_mask: ``HxW`` bool, True on any object (excluded).
        frame: The video frame (for the result).
        rng: Random generator.

    Returns:
        The plane and the points it was fitted to (``Nx3`` metres, camera
        frame; all of the frame's sampled readings outside the objects).
    """
    fine_noise, readings, points = _table_points(camera, depth, object_mask, rng)
    pixels = int(depth.size)
    if len(points) < MIN_READINGS:
        return FramePlane(frame, None, 0.0, 0.0, 0.0, fine_noise, fine_noise, readings, pixels), points[:0]
    noise = max(fine_noise, NOISE_FLOOR)
    normal, offset, _ = fit_plane_ransac(points, INLIER_SIGMAS * noise * points[:, 2] ** 2, rng)
    normal, offset, noise = refine_plane(points, normal, offset, noise)
    share, rms = _inliers(points, normal, offset, noise)
    plane = FramePlane(frame, normal, offset, share, rms, noise, fine_noise, readings, pixels)
    return plane, points


def _inliers(points: np.ndarray, normal: np.ndarray, offset: float, noise_1m: float) -> tuple[float, float]:
    """Share of the points within the symmetric band of a plane, and their RMS distance (metres)."""
    distance = points @ normal + offset
    inliers = np.abs(distance) < np.minimum(INLIER_SIGMAS * noise_1m * points[:, 2] ** 2, MAX_BAND)
    rms = float(np.sqrt(np.mean(distance[inliers] ** 2))) if inliers.any() else 0.0
    return float(inliers.mean()), rms


def _no_table_message(planes: list[FramePlane]) -> str:
    frames = ", ".join(str(p.frame) for p in planes)
    shares = ", ".join(f"{p.inlier_share:.0%}" for p in planes)
    noise = np.median([p.noise_1m for p in planes]) * 100
    fine = np.median([p.patch_noise_1m for p in planes]) * 100
    valid = np.median([p.readings / p.pixels for p in planes])
    rough = [str(p.frame) for p in planes if p.normal_cam is not None and not p.flat]
    rough_text = (
        f"; on frames {', '.join(rough)} the residuals kept growing to {NOISE_CEILING * 100:.0f} cm at 1 m "
        "(no flat surface)"
        if rough
        else ""
    )
    return (
        f"no table plane found on frames {frames}: the best plane of each frame holds {shares} of its depth "
        f"readings outside the objects (at least {MIN_SHARE:.0%} needed){rough_text}; depth noise "
        f"{noise:.1f} cm at 1 m on the planes ({fine:.2f} cm on small patches), {valid:.0%} of the pixels "
        "have a usable reading. Give the camera pose in camera.json "
        '("world_from_camera", the table at z = 0), check depth_scale in camera.json, or film with more '
        "of the table in view"
    )


def fit_table_frames(
    camera: Camera,
    depth_frames: list[np.ndarray],
    object_masks: list[np.ndarray],
    frames: list[int] | None = None,
    rng: np.random.Generator | None = None,
) -> TableFit:
    """Fits the table on each frame by itself; the first frame with a plane is the reference.

    Frames whose plane agrees with the reference's (within
    :data:`AGREE_DEGREES` and :data:`AGREE_OFFSET`: the camera did not move
    relative to the table) pool their inliers to refine it.

    Args:
        camera: Intrinsics.
        depth_frames: ``HxW`` float32 metres per chosen frame, 0 = no reading.
        object_masks: ``HxW`` bool per chosen frame, True on any object (excluded).
        frames: The video frame of each depth image (0, 1, ... when None).
        rng: Random generator; a fixed seed when None.

    Returns:
        The table of the reference frame and every frame's plane.

    Raises:
        GeometryError: No frame has a plane holding :data:`MIN_SHARE` of its
            readings, or no frame has :data:`MIN_READINGS` readings; the
            message gives the figures and what to try.
    """
    rng = rng or np.random.default_rng(0)
    frames = list(range(len(depth_frames))) if frames is None else [int(f) for f in frames]
    fits = [
        fit_frame_plane(camera, depth, mask, frame, rng)
        for depth, mask, frame in zip(depth_frames, object_masks, frames, strict=True)
    ]
    planes = [plane for plane, _ in fits]
    if all(plane.normal_cam is None for plane in planes):
        most = max((plane.readings for plane in planes), default=0)
        raise GeometryError(
            f"at most {most} depth readings on frames {frames} (outside the objects fewer than "
            f"{MIN_READINGS}); the table cannot be fitted (check depth/ and depth_scale in camera.json)"
        )
    found = [i for i, plane in enumerate(planes) if plane.found]
    if not found:
        raise GeometryError(_no_table_message(planes))
    reference = planes[found[0]]
    agreeing = [i for i in found if _agrees(planes[i], reference)]
    return _pooled_fit(planes, [cloud for _, cloud in fits], reference, agreeing)


def still_camera_table(fit: TableFit) -> TableFit:
    """The table refitted on every sampled frame with a plane, for a camera known to stay put.

    Each frame's plane wavers with the depth's noise (a stereo camera's noise is
    smooth over many pixels, so one frame holds few independent readings): with
    2 cm of noise at 0.5 m by a degree or two, more than :data:`AGREE_DEGREES`,
    so :func:`fit_table_frames` cannot tell such frames from a camera that moved.
    Once the video shows that the camera stands still
    (:func:`.camera_motion.camera_path`), they all see the same table.
    """
    reference = next(p for p in fit.planes if p.frame == fit.reference_frame)
    found = [i for i, plane in enumerate(fit.planes) if plane.found]
    return _pooled_fit(fit.planes, fit.clouds, reference, found)


def _pooled_fit(
    planes: list[FramePlane], clouds: list[np.ndarray], reference: FramePlane, pooled: list[int]
) -> TableFit:
    cloud = np.concatenate([clouds[i] for i in pooled])
    normal, offset, noise = refine_plane(
        cloud, reference.normal_cam, reference.offset_cam, reference.noise_1m
    )
    cloud = cloud[
        np.abs(cloud @ normal + offset) < np.minimum(INLIER_SIGMAS * noise * cloud[:, 2] ** 2, MAX_BAND)
    ]
    world_from_camera = world_from_table(normal, offset)
    on_table = transform(world_from_camera, cloud)
    extent = np.concatenate(
        [np.percentile(on_table[:, :2], 1, axis=0), np.percentile(on_table[:, :2], 99, axis=0)]
    )
    rms = float(np.sqrt(np.mean((cloud @ normal + offset) ** 2)))
    table = Table(normal, offset, extent.tolist(), rms, "depth")
    return TableFit(table, world_from_camera, reference.frame, planes, clouds)


def _agrees(plane: FramePlane, reference: FramePlane) -> bool:
    angle = np.degrees(np.arccos(np.clip(plane.normal_cam @ reference.normal_cam, -1.0, 1.0)))
    return angle < AGREE_DEGREES and abs(plane.offset_cam - reference.offset_cam) < AGREE_OFFSET


def fit_table(
    camera: Camera,
    depth_frames: list[np.ndarray],
    object_masks: list[np.ndarray],
    rng: np.random.Generator | None = None,
) -> tuple[Table, np.ndarray]:
    """Fits the table to depth outside the objects (see :func:`fit_table_frames`).

    Args:
        camera: Intrinsics.
        depth_frames: ``HxW`` float32 metres per chosen frame.
        object_masks: ``HxW`` bool per chosen frame, True on any object (excluded).
        rng: Random generator; a fixed seed when None.

    Returns:
        The table and world_from_camera of the first frame given with a plane.

    Raises:
        GeometryError: Too few depth readings, or no plane dominates them.
    """
    fit = fit_table_frames(camera, depth_frames, object_masks, rng=rng)
    return fit.table, fit.world_from_camera
