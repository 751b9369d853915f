"""An object's motion: its pose on every frame, from masked depth points.

On each frame where enough of the object is seen, the fitted shape is aligned
to the masked depth points (world frame) by robust least squares on the
points' distance to the shape's surface, over position and yaw, starting from
the previous frame's pose. Off the table, where the points support it, the fit
also frees the object's tilt (full 6-DoF): it is kept where it explains the
points clearly better and leans more than a few degrees. Frames where the
object is hidden are bridged by interpolation (along the recorded gripper where
it holds the object) and marked. Poses are smoothed; an object that never moves
gets one pose.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import least_squares

from .camera import orientation, pose_at, transform
from .carry import fill_held_frames, held_span, object_hold
from .distance import surface_distance
from .ray_depth import along_rays
from .shapes import Shape

MIN_POINTS = 25
"""Fewer masked depth points than this on a frame: the pose there is bridged."""
REFIT_IOU = 0.7
"""A fit whose silhouette matches the mask worse than this IoU is tried again from the points."""
REFIT_GAIN = 0.05
"""The second fit replaces the first only if its silhouette IoU is this much higher."""
TILT_GAIN = 0.75
"""A tilted fit is kept only if its RMS point distance is below this fraction of the upright fit's."""
TILT_TRY_RMS = 0.0008
"""The tilt is fitted only where the upright fit leaves more than this RMS (m): depth noise alone leaves about that."""
MAX_HANDLE_TURN = math.radians(20.0)
"""rad: the most a mug (its handle showing which way it is turned) turns from one tracked frame to the next."""
MIN_TILT = np.radians(3.0)
"""Smaller tilts are taken as upright."""
LIFTED = 0.01
"""An object whose bottom is this far (m) above the table may be tilted (resting objects stand upright)."""
MIN_TILT_POINTS = 60
"""Fewer points than this on a frame: the tilt is not fitted there."""
MIN_FACING = 0.5
"""A fit with fewer of its points on camera-facing surfaces than this is tried again from the points."""
FACING_RMS_SLACK = 0.001
"""m: the mirrored fit is taken if its points' RMS distance is at most this much worse."""
MAX_STEP = 0.03
"""How far (m) an object may move between two measured frames."""
MAX_TURN = np.radians(30.0)
"""How far (radians) an object's up direction may turn per frame. A tilt fit that turns it faster fits
what hides it, not the object (a block released into a cup, fingers and rim over it: 141 degrees in one
frame on seed 2 of the tilted carry)."""
FEW_POINTS = 3
"""Depth points under a partly seen mask that, too few to fit the shape to, still give its distance."""
PREDICTED_SPEED_SHARE = 0.5
"""Share of its last velocity a partly seen object is predicted to keep: a hand slows as it comes to a
stop, and over a long hidden stretch a prediction at full speed runs on past where the object stopped
(measured on two scenes without depth points under the hand: at full speed the carried object ran 37 cm
past the cup; with none kept a fast lift was lost)."""
RESTING_SLACK = 1.25
"""A resting object stays on the table unless lifting it lowers its points' RMS distance below
1 / RESTING_SLACK of the resting fit's, less ..."""
RESTING_RMS = 0.001
"""... this many metres."""
UNMOVED_SLACK = 0.0002
"""m: a resting object whose new points lie within RESTING_SLACK times its last resting fit's RMS distance,
plus this, of where it stood (and within UNMOVED_RMS) has not moved: it keeps that pose, unfitted. A fit
would move it by the new points' noise alone; for a container standing through the video the fits were two
thirds of the motion stage's time. A push is a fit again: the points' RMS at the old pose grows by about
the push (with 1 mm of depth noise, a push of 2 mm makes it 2.2 mm)."""
UNMOVED_RMS = 0.002
"""m: ... so that on noisy depth (a resting fit's RMS of a few mm) a push of that size is not kept still."""
BAND_RISE = 0.003
"""m: a partly seen object whose points rise more than this above where they were at rest is carried."""
LAST_SEEN_S = 0.2
"""Seconds before an object disappears for good over which its measured frames say where it fell."""
LAST_SEEN_REACH = 0.01
"""m: of those frames, the ones within this of the last say where it fell."""
STATIC_TOLERANCE = 0.005
"""An object whose measured centre stays within this many metres of its median never moves."""
STATIC_SHARE = 95
"""... on this percentage of its measured frames."""
JITTER_SIGMAS = 3.0
"""... or within this many sigmas of its positions' frame-to-frame jitter, where that is larger."""


@dataclasses.dataclass
class Motion:
    """Per-frame world poses of one object.

    Attributes:
        positions: ``Nx3`` bounding-box centres, world frame (m).
        yaws: ``N`` rotations about world z (radians).
        measured: ``N`` bool: the pose was measured there (else bridged).
        static: The object never moves (all poses equal).
        tilts: ``Nx2`` tilts after the yaw (a rotation vector with a horizontal
            axis, radians; see :func:`~.camera.orientation`), or None: upright.
        partly_seen: ``N`` bool: of the measured frames, those placed from a partly seen mask
            alone (:func:`~.no_depth.fit_partly_seen`): its image position is measured, its
            distance follows the motion before it. None where there are none.
    """

    positions: np.ndarray
    yaws: np.ndarray
    measured: np.ndarray
    static: bool = False
    tilts: np.ndarray | None = None
    partly_seen: np.ndarray | None = None

    def rotation(self, frame: int) -> np.ndarray:
        """3x3 world rotation of the object on a frame."""
        return orientation(self.yaws[frame], None if self.tilts is None else self.tilts[frame])


def facing_share(shape: Shape, fit, points_world: np.ndarray, camera_centre: np.ndarray) -> float:
    """Share of the points whose nearest surface of the posed shape faces the camera.

    A camera sees only surfaces turned towards it; a fit that explains the points
    with surfaces turned away (a box's bottom on its seen top) is the wrong one.

    Args:
        shape: The fitted shape.
        fit: ``(position, yaw, tilt, rms)`` as :func:`align` returns.
        points_world: ``Nx3`` the points it was fitted to, world frame (m).
        camera_centre: (3,) the camera's position, world frame (m).
    """
    local, normals, rotation = _surface_normals(shape, fit, points_world)
    to_camera = (camera_centre - fit[0]) @ rotation - local
    return float(np.mean(np.einsum("nd,nd->n", normals, to_camera) > 0))


def _surface_normals(shape: Shape, fit, points_world: np.ndarray):
    """Local-frame points, the outward normals of the surface nearest each (``Nx3``, unit), and the rotation."""
    rotation = orientation(fit[1], fit[2] if np.any(fit[2]) else None)
    local = (points_world - fit[0]) @ rotation
    step = 1e-4
    normals = np.stack([
        surface_distance(shape, local + step * axis) - surface_distance(shape, local - step * axis)
        for axis in np.eye(3)
    ], axis=1)  # fmt: skip
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    return local, normals, rotation


def through_surface(shape: Shape, fit, points_world: np.ndarray) -> np.ndarray:
    """The object's centre (m, world) mirrored through the surface its points sit on: moved along that
    surface's outward normal by the object's extent across it, so the points lie on the opposite face."""
    _, normals, rotation = _surface_normals(shape, fit, points_world)
    normal = normals.mean(axis=0)
    normal /= max(float(np.linalg.norm(normal)), 1e-12)
    extent = float(np.abs(normal) @ np.asarray(shape.size, float))
    return fit[0] + rotation @ normal * extent


def align(
    shape: Shape,
    points_world: np.ndarray,
    position: np.ndarray,
    yaw: float,
    tilt: np.ndarray | None = None,
    free_tilt: bool = False,
    height: float | None = None,
) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Aligns the shape to points by position and yaw (and tilt, if ``free_tilt``).

    Args:
        shape: The fitted shape.
        points_world: ``Nx3`` masked depth points, world frame (m).
        position: Starting centre (3,), world frame.
        yaw: Starting yaw (radians).
        tilt: Starting tilt ``(tx, ty)`` (radians), or None for upright.
        free_tilt: Also fit the tilt where the upright fit leaves more than
            ``TILT_TRY_RMS``; it is kept only where it explains the points
            clearly better than upright (``TILT_GAIN``) and leans by at least
            ``MIN_TILT``.
        height: The centre's height (m, world) when it is known (an object resting
            where it rests), or None to fit it too.

    Returns:
        ``(position, yaw, tilt, rms)``: the aligned pose (tilt ``(2,)``, zeros
        when upright) and the RMS point distance (m).
    """
    tilt = np.zeros(2) if tilt is None else np.asarray(tilt, float)

    def residuals(x, lean):
        local = (points_world - x[:3]) @ orientation(x[3], lean)
        return surface_distance(shape, local)

    def solve(start, lean_free, hold_yaw):
        # x: position, yaw (held where it starts for round shapes: a mug's handle keeps the side the fit found
        # it on; it was held at 0, which turned every mug's handle to world +x), then the tilt when free.
        def unpack(v):
            if height is not None:
                v = np.concatenate((v[:2], [height], v[2:]))
            yaw_ = start[3] if hold_yaw else v[3]
            lean = v[-2:] if lean_free else np.zeros(2)
            return np.array([v[0], v[1], v[2], yaw_]), lean

        def fun(v):
            pose, lean = unpack(v)
            return residuals(pose, lean)

        free = start[:2] if height is not None else start[:3]
        vector = np.r_[free, [] if hold_yaw else [start[3]], start[4:] if lean_free else []]
        # Converged at a hundredth of a millimetre: tighter only costs time.
        result = least_squares(fun, vector, loss="soft_l1", f_scale=0.004, max_nfev=100 if lean_free else 60,
                               xtol=1e-4, ftol=1e-4)  # fmt: skip
        pose, lean = unpack(result.x)
        return pose, lean, float(np.sqrt(np.mean(result.fun**2)))

    def solve_turned(start, lean_free):
        # A round shape's turn is held; a mug's handle shows it, but a handle half hidden (behind a peg, in a
        # hand) can let a fit turn it round: a turn of more than MAX_HANDLE_TURN from the frame before is
        # not taken.
        if shape.is_round and not shape.has_handle:
            return solve(start, lean_free, True)
        pose, lean, rms = solve(start, lean_free, False)
        if shape.is_round and abs(math.remainder(pose[3] - start[3], 2 * math.pi)) > MAX_HANDLE_TURN:
            return solve(start, lean_free, True)
        return pose, lean, rms

    pose, lean, rms = solve_turned(np.r_[position, yaw, 0.0, 0.0], False)
    if free_tilt and rms > TILT_TRY_RMS:
        leaned, lean2, rms2 = solve_turned(np.r_[pose, tilt if np.any(tilt) else [0.0, 0.0]], True)
        if rms2 < TILT_GAIN * rms and np.linalg.norm(lean2) >= MIN_TILT:
            pose, lean, rms = leaned, lean2, rms2
    return pose[:3], float(pose[3]), lean, rms


def behind_seen_surface(shape: Shape, cloud: np.ndarray, eye: np.ndarray) -> np.ndarray:
    """The centre of an object whose seen surface is ``cloud`` (world ``Nx3``), seen from ``eye``: the seen
    surface is the near side, so the centre lies half the object's smallest size further along the view."""
    centroid = np.median(cloud, axis=0)
    view = centroid - eye
    return centroid + view / np.linalg.norm(view) * min(shape.size) / 2


def predicted_position(history: list[tuple[int, np.ndarray]], frame: int) -> np.ndarray:
    """Where the motion so far (``(frame, position)`` pairs, latest last) puts an object on ``frame``.

    The last position moved on at :data:`PREDICTED_SPEED_SHARE` of the velocity of the last two, at
    most :data:`MAX_STEP` per frame.
    """
    last_frame, last = history[-1]
    if len(history) < 2:
        return last.copy()
    before_frame, before = history[-2]
    step = (last - before) / max(abs(last_frame - before_frame), 1) * PREDICTED_SPEED_SHARE
    speed = float(np.linalg.norm(step))
    if speed > MAX_STEP:
        step *= MAX_STEP / speed
    return last + step * abs(frame - last_frame)


class _HeldBand:
    """How high on a partly seen object the part that shows sits, while a hand holds it (``track``'s
    ``partial``). Per pass: while it rests, the height of its points' median above its resting centre; once
    those points rise (:data:`BAND_RISE`), it is carried and its centre is that far below their median, until
    a frame shows it whole or not at all (let go, or dropped out of sight) or it is back down at the height
    it rested at (set down there: the hand that leaves it uncovers more of it, and its band moves). A frame
    without any of its points between the rest and the rise breaks that."""

    def __init__(self, partial: np.ndarray | None, rest_z: float) -> None:
        self.partial, self.rest_z = partial, rest_z
        self.band: float | None = None
        self.state = "rest"  # then "carried", then "done"

    def seen(self, frame: int, world: np.ndarray, resting: bool) -> float | None:
        """On a frame measured from its depth points (world frame): the centre's height to use, or None to
        keep the fit's."""
        if self.partial is None or self.state == "done":
            return None
        if not self.partial[frame]:
            self.state, self.band = ("done", self.band) if self.state == "carried" else ("rest", None)
            return None
        seen_z = float(np.median(world[:, 2]))
        risen = self.band is not None and seen_z > self.rest_z + self.band + BAND_RISE
        if self.state == "rest" and not risen:
            if resting:
                self.band = seen_z - self.rest_z
            return None
        if self.band is None:
            return None
        if self.state == "carried" and seen_z - self.band < self.rest_z + LIFTED:
            self.state = "done"  # set down where it stood: its band moves as the hand leaves it
            return None
        self.state = "carried"
        return seen_z - self.band

    def unseen(self) -> None:
        """A frame without any of its points: a carry ends there, and a rest's band is forgotten (what rises
        after it may have been moved unseen: dropped into a cup, seen again over its rim)."""
        if self.state == "carried":
            self.state = "done"
        else:
            self.band = None


def track(
    shape: Shape,
    start_position: np.ndarray,
    start_yaw: float,
    start_frame: int,
    points_per_frame: list[np.ndarray | None],
    world_from_camera: np.ndarray,
    max_points: int = 400,
    silhouette=None,
    gripper=None,
    partly_seen=None,
    partial: np.ndarray | None = None,
) -> Motion:
    """Estimates the pose on every frame, forward and backward from a known pose.

    Args:
        shape: The fitted shape.
        start_position: Pose at ``start_frame`` (the fit), world frame.
        start_yaw: Yaw at ``start_frame``.
        start_frame: The frame the fit was made on.
        points_per_frame: Per frame ``Nx3`` camera-frame masked depth points, or
            None when the object is not seen.
        world_from_camera: 4x4, or one per frame (``Nx4x4``) for a camera that moves.
        max_points: Points used per frame (a fixed random subset).
        silhouette: ``(frame, (position, yaw, tilt, rms), hidden=False) -> IoU`` of the posed shape's
            silhouette with the frame's mask, or None to trust the points alone. With ``hidden``
            (the object is found again after it moved unseen) a partly hidden object's silhouette may
            reach beyond its mask, behind what hides it.
        gripper: The recorded gripper (world frame), or None: where it holds the
            object and the object is not measured, the object goes with it.
        partly_seen: ``(frame, predicted position, yaw) -> position or None``: where no recorded
            gripper holds the object and its depth points are too few to place it (a hand closing on
            it and carrying it hides all but a sliver), its silhouette placed over what the mask shows,
            near where its motion so far puts it (:func:`~.no_depth.fit_partly_seen`); None to bridge
            such frames.
        partial: ``N`` bool: frames whose mask shows only part of the object (a hand on it), or None.
            A hand that holds it hides the same part of it while it carries it: the part that shows
            stays as high on the object as it was on the last partly seen frame where the object
            rested (:class:`_HeldBand`; its points fit its side anywhere along it: a can's centre came
            out 2 cm low on seed 39, Cycles, carried from above).

    Returns:
        The motion, smoothed, with hidden frames bridged.
    """
    count = len(points_per_frame)
    partly = np.zeros(count, bool)
    positions = np.zeros((count, 3))
    yaws = np.zeros(count)
    tilts = np.zeros((count, 2))
    measured = np.zeros(count, bool)
    rng = np.random.default_rng(0)
    reach = 0.5 * float(np.linalg.norm(shape.size)) + MAX_STEP
    rest_z = float(start_position[2])
    grasp, release = held_span(gripper, start_position, shape.size, count)

    def record(frame, position, yaw, tilt, history):
        positions[frame], yaws[frame], tilts[frame], measured[frame] = position, yaw, tilt, True
        history.append((frame, position.copy()))

    for direction in (1, -1):
        position, yaw, tilt = start_position.copy(), start_yaw, np.zeros(2)
        frames = range(start_frame, count) if direction == 1 else range(start_frame - 1, -1, -1)
        history = [(start_frame, position.copy())]
        band = _HeldBand(partial, rest_z)
        still_rms = None  # the last frame's resting fit's RMS distance, while it rested where it was fitted
        for frame in frames:
            reference, still_rms = still_rms, None
            points = points_per_frame[frame]
            if points is None:
                band.unseen()
            held = grasp is not None and grasp <= frame < release
            # Let go and measured since: nothing lifts it (the last pose before the carry says nothing).
            released = direction == 1 and grasp is not None and history[-1][0] >= release
            if (points is None or len(points) < MIN_POINTS) and partly_seen is not None and not held:
                predicted = predicted_position(history, frame)
                if points is not None and len(points) >= FEW_POINTS:
                    # A few depth points still say how far away the part that shows is.
                    camera_pose = pose_at(world_from_camera, frame)
                    cloud = transform(camera_pose, points)
                    if np.linalg.norm(np.median(cloud, axis=0) - predicted) < reach:
                        predicted = behind_seen_surface(shape, cloud, camera_pose[:3, 3])
                found = partly_seen(frame, predicted, yaw)
                if found is not None:
                    position = found
                    record(frame, position, yaw, tilt, history)
                    partly[frame] = True
                continue
            if points is not None and len(points) >= MIN_POINTS:
                camera_pose = pose_at(world_from_camera, frame)
                camera_centre = camera_pose[:3, 3]
                world = transform(camera_pose, points)
                # Only points that can belong to the object near its last pose: mask edges
                # catch depth of what lies behind (a cup under a held block).
                near = world[np.linalg.norm(world - position, axis=1) < reach]
                lost = len(near) < MIN_POINTS
                if lost and silhouette is None:
                    continue
                if not lost:
                    world = near
                if len(world) > max_points:
                    world = world[rng.choice(len(world), max_points, replace=False)]

                def from_points(cloud=world, eye=camera_centre):
                    return behind_seen_surface(shape, cloud, eye)

                # Resting objects stand upright; a lifted one may lean, where enough of it is seen.
                lifted = position[2] - shape.size[2] / 2 > LIFTED or np.any(tilt)
                free_tilt = bool(lifted and len(world) >= MIN_TILT_POINTS)
                resting = None
                if not (lost or lifted or held) and reference is not None:
                    kept = float(
                        np.sqrt(np.mean(surface_distance(shape, (world - position) @ orientation(yaw)) ** 2))
                    )
                    if kept <= min(UNMOVED_RMS, RESTING_SLACK * reference + UNMOVED_SLACK):
                        record(frame, position, yaw, tilt, history)
                        still_rms = reference
                        band.seen(frame, world, resting=True)
                        continue
                if not (lost or lifted or held):
                    # It rested on the last frame: it still rests unless the points say clearly otherwise.
                    # A part-seen object's points pull a free fit up or down by millimetres, differently
                    # from each viewpoint, and a rim seen from above fits a cup's floor centimetres up.
                    resting = align(
                        shape, world, np.r_[position[:2], rest_z], yaw, None, False, height=rest_z
                    )
                if resting is not None and resting[3] <= RESTING_RMS:
                    fit = resting  # no free fit could beat it by the rule below
                elif lost:
                    # Nothing near its last pose: it moved while hidden. Start again from where its
                    # points are, and trust that only if its silhouette agrees with the mask.
                    # Where no recorded gripper holds it, a partly hidden mask (a hand on it) still says
                    # where it is; where one holds it, the gripper's path is the better evidence.
                    fit = align(shape, world, from_points(), yaw, None, free_tilt)
                    if silhouette(frame, fit, hidden=not held) < REFIT_IOU:
                        continue
                else:
                    # From the last pose; if its silhouette disagrees with the mask, also from the
                    # points themselves, keeping the pose whose silhouette agrees best.
                    fit = align(shape, world, position, yaw, tilt, free_tilt)
                    if facing_share(shape, fit, world, camera_centre) < MIN_FACING:
                        # The points sit on surfaces turned away from the camera (a box's bottom fitted
                        # to its seen top): start again with the object on the far side of that surface.
                        # Taken only where it explains the points about as well: a hollow or partly
                        # seen object can face away a little and still be right (its mirror fits worse).
                        other = align(shape, world, through_surface(shape, fit, world), yaw, tilt, free_tilt)
                        if (
                            facing_share(shape, other, world, camera_centre) > MIN_FACING
                            and other[3] <= fit[3] + FACING_RMS_SLACK
                        ):
                            fit = other
                    agreement = silhouette(frame, fit) if silhouette is not None else 1.0
                    if agreement < REFIT_IOU:
                        other = align(shape, world, from_points(), yaw, tilt, free_tilt)
                        if silhouette(frame, other) > agreement + REFIT_GAIN:
                            fit = other
                if released and fit[0][2] > position[2] + BAND_RISE:
                    # Let go, nothing lifts it but a bounce: a fit that rises may have put its seen top on a
                    # side (a block dropped into a cup shows its top alone over the rim). At the height it
                    # fell from it stays where that explains the points about as well (the resting rule).
                    level = align(shape, world, position, yaw, height=float(position[2]))
                    if level[3] <= RESTING_SLACK * fit[3] + RESTING_RMS:
                        fit = level
                if np.any(fit[2]) and _turn(tilt, fit[2]) > MAX_TURN * abs(frame - history[-1][0]):
                    if np.any(tilt):
                        continue  # bridged: no upright fit stands in for a leaning object
                    fit = align(shape, world, position, yaw)
                if (
                    resting is not None
                    and not np.any(fit[2])
                    and resting[3] <= RESTING_SLACK * fit[3] + RESTING_RMS
                ):
                    fit = resting
                # Depth noise lies along the rays: the fit's distance is set by the points' median along them.
                still_rms = fit[3] if fit is resting else None
                fit = along_rays(shape, fit, world, camera_centre, keep_height=fit is resting)
                height = band.seen(frame, world, resting=fit[0][2] - rest_z < LIFTED)
                if height is not None:
                    fit = (np.r_[fit[0][:2], height], *fit[1:])
                position, yaw, tilt, _ = fit
                record(frame, position, yaw, tilt, history)
    return _finish(positions, yaws, measured, start_position, start_yaw, gripper, shape.size, tilts, partly)


def _turn(tilt: np.ndarray, other: np.ndarray) -> float:
    """The angle (radians) between the up directions of two tilts."""
    up, other_up = orientation(0.0, tilt)[:, 2], orientation(0.0, other)[:, 2]
    return float(np.arccos(np.clip(up @ other_up, -1.0, 1.0)))


def standing_centre(positions: np.ndarray) -> np.ndarray | None:
    """The centre of an object that never moves, or None where its positions (``Nx3``) say it moves.

    A few outlying measurements (a part-seen frame) do not make a standing object move: it
    stands still when :data:`STATIC_SHARE` % of its positions lie within
    :data:`STATIC_TOLERANCE` of their median, or within :data:`JITTER_SIGMAS` times their
    :func:`measurement_jitter` where noisy depth makes them jitter more.
    """
    centre = np.median(positions, axis=0)
    tolerance = max(STATIC_TOLERANCE, JITTER_SIGMAS * measurement_jitter(positions))
    if np.percentile(np.linalg.norm(positions - centre, axis=1), STATIC_SHARE) < tolerance:
        return centre
    return None


def measurement_jitter(positions: np.ndarray) -> float:
    """How much (m, one sigma) a track's positions (``Nx3``, frame order) jitter from frame to frame.

    From the second differences, which smooth motion leaves near 0: for independent
    per-frame errors of sigma, their median size is about 1.65 sigma. Noisy depth makes
    a standing object's measured centre jitter; that jitter is not motion.
    """
    if len(positions) < 3:
        return 0.0
    second = np.linalg.norm(np.diff(positions, 2, axis=0), axis=1)
    return float(np.median(second)) / 1.65


def _finish(
    positions, yaws, measured, start_position, start_yaw, gripper=None, size=None, tilts=None, partly=None
) -> Motion:
    """Bridges the unmeasured frames (from the gripper where it holds the object), smooths, finds static.

    ``partly`` marks the measured frames placed from a partly seen mask alone (``Motion.partly_seen``
    of a moving object)."""
    count = len(positions)
    if not measured.any():
        return Motion(np.tile(start_position, (count, 1)), np.full(count, start_yaw), measured, static=True)
    tilts = np.zeros((count, 2)) if tilts is None else tilts
    frames = np.arange(count)
    known = measured | fill_held_frames(gripper, size, positions, yaws, measured, tilts)
    for axis in range(3):
        positions[:, axis] = np.interp(frames, frames[known], positions[known, axis])
    for axis in range(2):
        tilts[:, axis] = np.interp(frames, frames[known], tilts[known, axis])
    yaws = np.interp(frames, frames[known], np.unwrap(yaws[known]))
    grasp, _, _ = object_hold(gripper, size, positions, measured)
    rested = known & (frames < (grasp or 0))
    if rested.sum() >= 3 and (centre := standing_centre(positions[rested])) is not None:
        # Until the gripper closes on it, it stands where it stood: one pose, not each frame's noise.
        positions[:grasp] = centre
        yaws[:grasp] = float(np.median(yaws[rested]))
    centre = standing_centre(positions[known])
    if centre is not None:
        return Motion(
            np.tile(centre, (count, 1)), np.full(count, float(np.median(yaws))), measured, static=True
        )
    if count >= SMOOTHING_WINDOW:
        positions, yaws, tilts = smooth(positions), smooth(yaws), smooth(tilts)
    partly = partly if partly is not None and partly.any() else None
    return Motion(positions, yaws, measured, tilts=tilts if np.any(tilts) else None, partly_seen=partly)


SMOOTHING_WINDOW = 7
"""Frames in the Savitzky-Golay window that smooths a measured path (a quadratic fitted to each)."""


def smooth(values: np.ndarray, window: int = SMOOTHING_WINDOW, order: int = 2) -> np.ndarray:
    """Savitzky-Golay smoothing along the first axis, the ends fitted by the first and last window's
    polynomial (SciPy's ``savgol_filter(values, window, order, axis=0, mode="interp")``, without
    importing ``scipy.signal``, which costs a run half a second).

    Args:
        values: ``(N,)`` or ``(N, K)``, ``N >= window``.
        window: Samples in the window (odd).
        order: The fitted polynomial's degree.
    """
    values = np.asarray(values, float)
    half = window // 2
    offsets = np.arange(-half, half + 1, dtype=float)
    # Least squares of a polynomial over the window: row j of the pseudo-inverse gives coefficient j.
    powers = np.vander(offsets, order + 1, increasing=True)
    fit = np.linalg.pinv(powers)
    flat = values.reshape(len(values), -1)
    windows = np.lib.stride_tricks.sliding_window_view(flat, window, axis=0)  # (N - window + 1, K, window)
    out = np.empty_like(flat)
    out[half : len(flat) - half] = windows @ fit[0]
    out[:half] = (powers @ (fit @ flat[:window]))[:half]
    out[len(flat) - half :] = (powers @ (fit @ flat[-window:]))[half + 1 :]
    return out.reshape(values.shape)


STILL_PARTLY_SEEN = 0.005
"""m: partly seen frames at the end of the video within this distance of the last one (or half the object's
height, if more: a sliver above a rim places it up to that much too high) show an object at rest."""


def unmeasure_still_partly_seen_tail(motion: Motion, height: float = 0.0) -> None:
    """The partly seen frames at the end where the object has come to rest measure nothing: in place.

    An object let go into a cup shows a sliver above the rim, and the sliver places it at the
    rim's height, where nothing holds it; the fall onto what lies below
    (:func:`settle_hidden_tail`) is the better evidence. Partly seen frames where it still moves
    (a hand carrying it) stay measured.
    """
    if motion.partly_seen is None or motion.static:
        return
    fully = np.nonzero(motion.measured & ~motion.partly_seen)[0]
    first = int(fully[-1]) + 1 if len(fully) else 0
    count = len(motion.positions)
    if first >= count:
        return
    still = max(STILL_PARTLY_SEEN, height / 2)
    away = np.linalg.norm(motion.positions[first:] - motion.positions[-1], axis=1) > still
    moving = np.nonzero(away)[0]
    still_from = first + (int(moving[-1]) + 1 if len(moving) else 0)
    motion.measured[still_from:] = False
    motion.partly_seen[still_from:] = False


def settle_hidden_tail(
    motion: Motion, support_z: float, half_height: float, fps: float, carried_until: int | None = None
) -> int | None:
    """Lets an object that disappears for good fall onto its support.

    After the last measured frame, the object is hidden (dropped into a cup,
    behind a rim): it falls freely from its last measured height and rests on
    the support below it. Changes ``motion`` in place. An object the gripper
    holds is carried, not dropped, while it is held, however little of it shows
    (a hand above it, seen from above): it falls from where the gripper lets go.

    Args:
        motion: The object's motion.
        support_z: Height (m, world) of the support surface under the object's
            last measured position, or under where the gripper lets go of it (the
            table, a container's inner bottom...).
        half_height: Half the object's height (m).
        fps: Video frame rate.
        carried_until: The frame where the gripper lets go of it (its poses before are the
            gripper's), or None when it is not held.

    Returns:
        The frame it falls from, or None when the tail was already measured.
    """
    measured = np.nonzero(motion.measured)[0]
    if motion.static or not len(measured):
        return None
    last = int(measured[-1])
    carried = carried_until is not None and carried_until - 1 > last
    if carried:
        last = min(int(carried_until) - 1, len(motion.measured) - 1)
    if last == len(motion.measured) - 1:
        return None
    start = motion.positions[last].copy()
    if not carried:
        # It drifts little sideways while it falls: where it went is the median over its last measured
        # frames, so the last one (a sliver of it above a rim, say) does not place it alone; those of them
        # near where it was last seen (a hand still carrying it sideways on the frames before puts that
        # median 2 cm behind, on seed 1).
        recent = measured[measured > last - LAST_SEEN_S * fps]
        near = (
            np.linalg.norm(motion.positions[recent, :2] - motion.positions[last, :2], axis=1)
            < LAST_SEEN_REACH
        )
        start[:2] = np.median(motion.positions[recent[near], :2], axis=0)
    rest_z = support_z + half_height
    # Keep the last vertical speed (never upwards) and add gravity.
    speed = min(0.0, (motion.positions[last, 2] - motion.positions[max(last - 2, 0), 2]) * fps / 2)
    for frame in range(last + 1, len(motion.positions)):
        elapsed = (frame - last) / fps
        fallen = start[2] + speed * elapsed - 0.5 * 9.81 * elapsed**2
        motion.positions[frame] = [start[0], start[1], max(rest_z, fallen)]
        motion.yaws[frame] = motion.yaws[last]
        if motion.tilts is not None:
            motion.tilts[frame] = 0.0  # it lands upright on its support
    return last
