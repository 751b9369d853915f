"""An object carried by the recorded gripper: when it is held, and where it is then.

trajectory.json's gripper opening tells when the gripper closes and opens again;
if it closes near an object, the object is held in between and moves rigidly
with the gripper. Where the object is hidden while held (a gripper or hand in
front of it), its pose comes from the gripper's, with the grip measured where
the object is seen.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..trajectory import FULL_OPENING
from .camera import orientation, pose_matrix, split_orientation

REST_WINDOW = 30
"""Frames before the grasp whose measured poses give the resting pose the gripper takes it from."""
GRASP_REACH = 0.03
"""The gripper holds an object when it closes within this distance (m) of the object's extent."""


CLOSING_RATE = 0.0005
"""m per frame: the finger gap shrinking faster than this is the hand closing (noise in a measured
width is a tenth of a millimetre)."""
RELEASE_GAP = 0.0015
"""m: the finger gap opening this far past where the hand stalled on the object is a release,
however little it opens after that (a careful robot opens a few millimetres)."""
SETTLE_FRAMES = 6
"""Frames after the stall over which a measured gap may still widen by a millimetre as the grip settles."""
RELEASE_HOLD = 2
"""Frames the gap must stay open past :data:`RELEASE_GAP`: a one-frame blip of a measured width is noise."""


def gripper_hold(opening: np.ndarray, until: int | None = None) -> tuple[int | None, int | None]:
    """The recorded grasp and release: where the hand stalls closing, and where it opens again.

    A grasp is the hand closing until it stalls: a commanded gap reaches its
    closed value, a measured one stops at the object's width (it never reaches 0).
    A release is the gap opening past the stalled width, however little; the
    release frame is where that opening starts.

    Args:
        opening: Per-frame opening in [0, 1] (fraction of :data:`~..trajectory.FULL_OPENING`).
        until: Look for the closing up to this frame only (None: the whole recording).

    Returns:
        ``(grasp, release)``; either is None when the recording does not show it.
    """
    gap = np.asarray(opening, float) * FULL_OPENING
    end = len(gap) if until is None else min(len(gap), until + 1)
    closing = np.nonzero(np.diff(gap[:end]) < -CLOSING_RATE)[0]
    if not len(closing):
        return None, None
    frame = int(closing[0])
    while frame + 1 < len(gap) - 1 and gap[frame + 2] < gap[frame + 1] - CLOSING_RATE / 2:
        frame += 1
    grasp = frame + 1
    return grasp, release_after(gap, grasp)


def release_after(gap: np.ndarray, grasp: int) -> int | None:
    """Where a hand that stalled on an object at ``grasp`` starts to open again, or None if it never does.

    Args:
        gap: Per-frame finger gap (m).
        grasp: The frame the hand stalled on the object.
    """
    # The fingers settle for a few frames after they stall (the pads give, the object shifts): the held
    # gap is the widest of those, and a release opens past it.
    stalled = float(gap[grasp : grasp + SETTLE_FRAMES].max())
    wider = gap[grasp:] > stalled + RELEASE_GAP
    held_open = (
        np.convolve(wider, np.ones(RELEASE_HOLD), "valid") == RELEASE_HOLD
        if len(wider) >= RELEASE_HOLD
        else wider
    )
    opened = np.nonzero(held_open)[0]
    if not len(opened):
        return None
    release = grasp + int(opened[0])
    # Back to where the opening starts.
    while (
        release - 1 > grasp
        and gap[release - 1] > gap[release - 2] + CLOSING_RATE / 5
        and gap[release - 1] > stalled
    ):
        release -= 1
    return release


def held_span(gripper, position: np.ndarray, size, count: int) -> tuple[int | None, int]:
    """The frames ``[grasp, release)`` where the recorded gripper holds an object, if it does.

    Args:
        gripper: The recorded gripper (``positions``, ``quaternions``, ``opening`` per frame,
            world frame), or None.
        position: The object's centre at the grasp (m, world), (3,).
        size: Its bounding-box size (m), (3,).
        count: Video frames.

    Returns:
        ``(grasp, release)``; grasp is None when the gripper never closes on it,
        release is ``count`` when it never opens again.
    """
    if gripper is None:
        return None, count
    grasp, release = gripper_hold(gripper.opening)
    if grasp is None:
        return None, count
    reach = 0.5 * float(np.linalg.norm(size)) + GRASP_REACH
    if np.linalg.norm(gripper.positions[grasp] - position) > reach:
        return None, count  # it closes on something else
    return grasp, count if release is None else release


def gripper_pose(gripper, frame: int, invert: bool = False) -> np.ndarray:
    """4x4 world pose of the recorded gripper on a frame (or its inverse)."""
    rotation = Rotation.from_quat(gripper.quaternions[frame][[1, 2, 3, 0]]).as_matrix()
    pose = pose_matrix(gripper.positions[frame], rotation)
    return np.linalg.inv(pose) if invert else pose


def object_hold(
    gripper, size, positions: np.ndarray, measured: np.ndarray
) -> tuple[int | None, int, np.ndarray]:
    """Where the recorded gripper holds a tracked object: ``(grasp, release, resting)``.

    It rests until the grasp; the frames just before are the most hidden (the gripper closes
    in front of it), so where it rests is the median over a window of measured frames
    before the grasp (``resting``, their indices).

    Args:
        gripper: The recorded gripper, world frame, or None.
        size: The object's size (m), (3,).
        positions: ``Nx3`` its measured world centres.
        measured: ``N`` bool.

    Returns:
        As :func:`held_span`, and the resting frames; grasp is None where the gripper does not hold it.
    """
    count = len(positions)
    before = np.nonzero(measured)[0]
    if gripper is None or not len(before):
        return None, count, before
    grasp, _ = gripper_hold(gripper.opening)
    if grasp is None:
        return None, count, before
    resting = before[(before <= grasp) & (before >= grasp - REST_WINDOW)]
    if not len(resting):
        resting = before[before <= grasp][-1:] if (before <= grasp).any() else before[:1]
    grasp, release = held_span(gripper, np.median(positions[resting], axis=0), size, count)
    return grasp, release, resting


def fill_held_frames(
    gripper,
    size,
    positions: np.ndarray,
    yaws: np.ndarray,
    measured: np.ndarray,
    tilts: np.ndarray | None = None,
) -> np.ndarray:
    """Poses a held object from the gripper's: on the frames where it was not measured, and its
    centre on those where it was.

    The grip (the object's pose in the gripper's frame) is the median over the
    held frames where the object was measured, or else the gripper's pose at the
    grasp against the object's poses in the second before it (it rests there
    until the gripper lifts it). A held object moves rigidly with the gripper, so
    its centre on a measured held frame is also the gripper's pose times that grip:
    the median over the hold, not one frame's depth noise (its rotation stays as
    measured, which a symmetric object's grips cannot average).

    Args:
        gripper: The recorded gripper, world frame, or None.
        size: The object's size (m), (3,).
        positions: ``Nx3`` world centres; held rows are written.
        yaws: ``N`` yaws (radians); unmeasured held rows are written.
        measured: ``N`` bool.
        tilts: ``Nx2`` tilts (radians), or None for upright; unmeasured held rows are written.

    Returns:
        ``N`` bool: the frames written.
    """
    filled = np.zeros(len(positions), bool)
    grasp, release, resting = object_hold(gripper, size, positions, measured)
    if grasp is None:
        return filled
    held = np.arange(grasp, release)
    seen = held[measured[held]]
    # Where it was seen while held; else as it rested when the gripper closed on it.
    pairs = [(f, f) for f in seen] or [(grasp, int(f)) for f in resting]
    grips = [
        gripper_pose(gripper, g, invert=True)
        @ pose_matrix(positions[f], orientation(yaws[f], None if tilts is None else tilts[f]))
        for g, f in pairs
    ]
    grip = pose_matrix(
        np.median([g[:3, 3] for g in grips], axis=0),
        Rotation.from_matrix(np.array([g[:3, :3] for g in grips])).mean().as_matrix(),
    )
    if len(seen):
        # Held, it moves rigidly with the gripper: where it was seen, its centre is the gripper's pose
        # times the one grip measured over all those frames, which the noise of no single frame moves.
        for frame in seen:
            positions[frame] = (gripper_pose(gripper, int(frame)) @ grip)[:3, 3]
    for frame in held[~measured[held]]:
        pose = gripper_pose(gripper, int(frame)) @ grip
        positions[frame] = pose[:3, 3]
        yaws[frame], tilt = split_orientation(pose[:3, :3])
        if tilts is not None:
            tilts[frame] = tilt
        filled[frame] = True
    return filled
