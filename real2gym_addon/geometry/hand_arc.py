"""A hinge placed by the recorded hand that turned it.

A hand that holds a door's handle, or pushes on one place of its face, moves with the door: its
recorded path while the door turns is an arc about the hinge. The robot's recording places that arc
to a millimetre; the door's own points place the hinge line well only where the door turns slowly in
view (a microwave's door swung shut in 15 frames left it 16-27 mm off), and its silhouettes alone
place it no better than the body's box (22-32 mm). Where the hand's path while the part moves is an
arc (within :data:`ARC_FIT` of a circle, over at least :data:`ARC_MIN_TURN`), its centre is the hinge
line; without depth, the angle it sweeps is also how far the door turned, which a panel seen nearly
edge-on does not show.

A hand that slides along the door as it pushes traces no circle about the hinge: its path fails the
fit, and the hinge stays where the video put it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .parts import Joint

ARC_FIT = 0.003
"""m: the hand's positions while the part moves lie within this (RMS) of their circle."""
ARC_MIN_TURN = math.radians(20.0)
"""The hand's arc spans at least this for its centre to place the hinge."""
ARC_MIN_FRAMES = 6
"""Frames the part must move on with the hand recorded."""
ARC_MAX_RADIUS = 1.5
"""m: an arc wider than this is a hand moving in a near-straight line, not turning a door."""
MOVING = math.radians(3.0)
"""rad: how far from its rest before and after its motion a door has turned while the hand moves it."""
ARC_BOW = 3.0
"""A hand's path that leaves its arc before the part stops must bow off its chord this many times
:data:`ARC_FIT` (a 40-degree arc of 30 cm radius bows 18 mm)."""
ARC_FOLLOWS = math.radians(5.0)
"""A stretch of the hand's path shorter than the part's motion must turn with the part frame by frame within
this (RMS): the whole motion is only held to :data:`SWEEP_AGREES` at its end."""
SWEEP_AGREES = math.radians(25.0)
"""The hand's sweep and the video's measured turn agree within this (else the hand was not turning it)."""


@dataclasses.dataclass
class HandArc:
    """The arc a recorded hand traced while a hinged part moved.

    Attributes:
        pivot: A point of the hinge line (world, m), level with the fitted pivot along the axis.
        start: The first frame of the part's motion.
        end: The last frame of its motion the hand traced (it may let go before the part stops).
        turned: Per frame from ``start`` to ``end``, the hand's angle about the hinge (rad, about the
            joint's axis), from its angle on ``start``.
        error: RMS distance of the hand's positions from the circle (m).
        radius: The circle's radius (m).
    """

    pivot: np.ndarray
    start: int
    end: int
    turned: np.ndarray
    error: float
    radius: float


def motion_window(q: np.ndarray) -> tuple[int, int] | None:
    """The frames a part moves over: from where it leaves its first value to where it reaches its last
    (``q`` filled, no NaN), or None where it does not move."""
    away = np.flatnonzero(np.abs(q - q[0]) > MOVING)
    if not len(away):
        return None
    before_end = np.flatnonzero(np.abs(q - q[-1]) > MOVING)
    start = max(int(away[0]) - 1, 0)
    end = min(int(before_end[-1]) + 1, len(q) - 1) if len(before_end) else len(q) - 1
    return (start, end) if end > start else None


def hand_arc(joint: Joint, q: np.ndarray, hand: np.ndarray) -> HandArc | None:
    """The arc the recorded hand traced about ``joint``'s axis while the part moved, or None where its path
    then is no arc about a hinge (too short, too few frames, off a circle, or sweeping another angle than
    the video measured the part turn).

    Args:
        joint: The fitted hinge (its axis is kept; its pivot only sets the level of the returned one).
        q: Per frame, the part's value as the video measured it (filled: no NaN).
        hand: ``(F, 3)`` the recorded hand's grasp centre per frame (world).
    """
    window = motion_window(q)
    if window is None or window[1] - window[0] + 1 < ARC_MIN_FRAMES or len(hand) <= window[1]:
        return None
    start = window[0]
    # A hand that pushes a door and lets it swing on leaves the arc part-way: the longest stretch from the
    # motion's start that is an arc is taken (the whole motion first). A part of it must bow off its chord
    # well past the fit's tolerance: a few frames of a hand sliding straight fit some circle too.
    for end in range(window[1], start + ARC_MIN_FRAMES - 2, -1):
        path = hand[start : end + 1]
        centre, radius, error, angles = circle_about(joint.axis, joint.pivot, path)
        turned = angles - angles[0]
        if radius > ARC_MAX_RADIUS or error > ARC_FIT or np.ptp(turned) < ARC_MIN_TURN:
            continue
        if end < window[1]:
            if _bow(path, joint.axis) < ARC_BOW * ARC_FIT:
                continue
            follows = turned - (q[start : end + 1] - q[start])
            if float(np.sqrt(np.mean(follows**2))) > ARC_FOLLOWS:
                continue  # a hand that stopped while the door swung on: not with the door frame by frame
        if abs(turned[-1] - (q[end] - q[start])) > SWEEP_AGREES:
            continue
        return HandArc(centre, start, end, turned, error, radius)
    return None


def _bow(path: np.ndarray, axis: np.ndarray) -> float:
    """How far (m) a path, seen along ``axis``, strays from the chord between its ends at most."""
    flat = path - np.outer(path @ axis, axis)
    chord = flat[-1] - flat[0]
    length = np.linalg.norm(chord)
    if length < 1e-9:
        return 0.0
    offset = flat - flat[0]
    return float(np.abs(offset @ np.cross(axis, chord / length)).max())


def circle_about(
    axis: np.ndarray, level: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, float, float, np.ndarray]:
    """The circle about ``axis`` that ``points`` (world) lie nearest, seen along the axis (an algebraic fit:
    ``x^2 + y^2 = 2 a x + 2 b y + c``).

    Returns:
        Its centre (world, level with ``level`` along the axis), radius (m), the points' RMS distance from it
        (m), and each point's angle about it (rad, counted about ``+axis``, unwrapped).
    """
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    across = np.linalg.svd(np.eye(3) - np.outer(axis, axis))[0][:, :2]  # two directions across the axis
    flat = (np.asarray(points, float) - level) @ across
    design = np.c_[2 * flat, np.ones(len(flat))]
    (a, b, c), *_ = np.linalg.lstsq(design, (flat**2).sum(axis=1), rcond=None)
    centre = np.array([a, b])
    radius = math.sqrt(max(c + a * a + b * b, 0.0))
    error = float(np.sqrt(np.mean((np.linalg.norm(flat - centre, axis=1) - radius) ** 2)))
    # Angles about +axis: `across` and the axis make a right-handed frame, or the turn's sign flips.
    handed = 1.0 if np.linalg.det(np.c_[across, axis]) > 0 else -1.0
    angles = handed * np.unwrap(np.arctan2(*(flat - centre).T[::-1]))
    return level + across @ centre, radius, error, angles


def turned_with_hand(q: np.ndarray, arc: HandArc, closed: float) -> np.ndarray:
    """``q`` (filled) with the frames the hand turned the part taken from the hand's arc, anchored at
    whichever end of the motion lies at the part's closed end (a shut door's silhouette is its body's front;
    an open one seen nearly edge-on is not measured well); the frames before and after move with their
    neighbours, keeping what the video measured of them."""
    start, end = arc.start, arc.end
    anchor = start if abs(q[start] - closed) <= abs(q[end] - closed) else end
    out = np.array(q, float)
    out[start : end + 1] = q[anchor] + arc.turned - arc.turned[anchor - start]
    out[:start] += out[start] - q[start]
    out[end + 1 :] += out[end] - q[end]
    return out


__all__ = [
    "ARC_FIT",
    "ARC_MIN_FRAMES",
    "ARC_MIN_TURN",
    "HandArc",
    "circle_about",
    "hand_arc",
    "motion_window",
    "turned_with_hand",
]
