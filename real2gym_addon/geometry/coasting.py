"""A part's damping and friction loss from the video, where it coasts after the hand lets go.

A door pushed and let go, or a drawer flung open, slows by its joint's damping and dry friction alone:
``I * q'' = -damping * q' - frictionloss * sign(q')``, with ``I`` its inertia about the joint. The video
measures ``q`` per frame; integrated twice from the frame the hand lets go (``t`` from there, ``q0`` its
value then, ``v0`` its speed, ``s`` the sign of the motion),

    q(t) - q0 = v0 * t - k * integral_0^t (q - q0) - c * s * t^2 / 2,

which is linear in ``v0``, ``k = damping / I`` and ``c = frictionloss / I`` (integrals of the measured
``q``, not its noisy second difference): least squares over the frames before it has gone 90 % of its way,
with ``k, c >= 0``, give a first guess. The motion's closed form (an exponential approach, held where
friction stops it: :func:`_travel`), its start value free, is then fitted to every frame of the coast. The
rates are what the video shows; the scene's inertia (from its shapes and density, :func:`joint_inertia`)
turns them into the MJCF's damping and friction loss, so that the simulated part slows as the filmed one
did whatever the real one weighs.

The coast runs to the video's end, or to the frame before the part meets an end of its range (a door swung
shut against its frame). Fewer than :data:`MIN_FRAMES` coasting frames, or a coast shorter than
:data:`MIN_TRAVEL`, measure nothing, and the documented defaults stay.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import least_squares, lsq_linear
from scipy.spatial.transform import Rotation

from .parts import Joint, PartGeometry
from .pieces import GEOM_BOX

MIN_FRAMES = 6
"""A coast is measured over at least this many frames after the hand lets go."""
MIN_TRAVEL = {"hinge": math.radians(8.0), "slide": 0.02}
"""A coast is measured where the part travels at least this far on its own (rad, m): noise of 1-2 degrees
per frame swamps a shorter one."""
AT_END = 0.03
"""A coast ends where the part comes within this share of its range of either end (it meets a stop)."""
MIN_RATE = 0.01
"""1/s: the least damping rate fitted (the closed form divides by it)."""
MAX_RATE = 50.0
"""1/s: a damping rate past this (a part stopped within a frame or two) is not a coast but a stop."""


@dataclasses.dataclass(frozen=True)
class Coast:
    """What a coast shows.

    Attributes:
        start: The frame the hand lets go.
        end: The last frame of the coast (rest, an end of the range, or the video's end).
        damping_rate: ``damping / I`` (1/s).
        friction_rate: ``frictionloss / I`` (rad/s^2 or m/s^2).
        speed: The part's speed as the hand lets go (rad/s or m/s).
        rms: RMS of the fit's residual (rad or m).
    """

    start: int
    end: int
    damping_rate: float
    friction_rate: float
    speed: float
    rms: float


def coasting(q: np.ndarray, fps: float, joint: Joint, let_go: int) -> Coast | None:
    """The damping and friction rates a part's coast shows, from the frame the hand lets go, or None where it
    does not coast far enough to tell (see the module's text).

    Args:
        q: The joint's value per frame (NaN where unmeasured; filled between measured frames).
        fps: Frame rate.
        joint: The joint (its type and range).
        let_go: The frame the hand lets go of the part.
    """
    known = np.isfinite(q)
    if known.sum() < 2 or let_go >= len(q) - MIN_FRAMES:
        return None
    filled = np.interp(np.arange(len(q)), np.flatnonzero(known), q[known])
    after = filled[let_go:]
    lo, hi = joint.range
    span = max(hi - lo, 1e-9)
    end = len(after) - 1
    for i in range(1, len(after)):
        if min(after[i] - lo, hi - after[i]) < AT_END * span:
            end = i - 1  # it met a stop on this frame: from here on it is not its own slowing
            break
    coast = after[: end + 1] - after[0]
    sign = math.copysign(1.0, coast[np.argmax(np.abs(coast))])
    travel = coast * sign
    t = np.arange(end + 1) / fps
    if end < MIN_FRAMES or travel.max() < MIN_TRAVEL[joint.type]:
        return None
    # A first guess from the twice-integrated equation, over the frames before it has gone 90 % of its way (it
    # holds until the part stops); then the closed form, rest included, fitted to every frame.
    moving = max(MIN_FRAMES, int(np.argmax(travel >= 0.9 * travel.max())))
    integral = np.concatenate([[0.0], np.cumsum((travel[1:] + travel[:-1]) / 2.0) / fps])[: moving + 1]
    design = np.column_stack([t[: moving + 1], -integral, -(t[: moving + 1] ** 2) / 2.0])
    guess = lsq_linear(design, travel[: moving + 1], bounds=([0.0, 0.0, 0.0], [np.inf, MAX_RATE, np.inf])).x
    # The frame it lets go on is as noisy as any: where it stood then is fitted too.
    start = np.r_[np.clip(guess, [1e-3, MIN_RATE, 0.0], [np.inf, MAX_RATE, np.inf]), 0.0]
    fit = least_squares(lambda p: _travel(t, *p[:3]) + p[3] - travel, start,
                        bounds=([0.0, MIN_RATE, 0.0, -np.inf], [np.inf, MAX_RATE, np.inf, np.inf]))  # fmt: skip
    speed, rate, friction = (float(v) for v in fit.x[:3])
    if speed <= 0.0 or rate >= MAX_RATE * 0.999:
        return None
    rms = float(np.sqrt(np.mean(fit.fun**2)))
    return Coast(let_go, let_go + end, rate, friction, speed, rms)


def _travel(t: np.ndarray, speed: float, rate: float, friction: float) -> np.ndarray:
    """How far a part let go at ``speed`` has travelled after ``t`` seconds, slowed by ``rate * v`` and by
    ``friction`` until it stops (where friction then holds it)."""
    settle = speed + friction / rate
    stop = math.log1p(rate * speed / friction) / rate if friction > 0.0 else np.inf
    held = np.minimum(t, stop)
    return settle * (1.0 - np.exp(-rate * held)) / rate - friction / rate * held


def joint_inertia(part: PartGeometry, density: float, armature: float = 0.0) -> float:
    """A part's inertia about its joint (kg*m^2 about a hinge, kg along a slide) with its collision shapes
    filled at ``density`` (kg/m^3), plus the joint's ``armature``: what the simulation moves."""
    pieces = part.shape.collision_pieces()  # a door's and a drawer's include their handle
    world_from_part = part.pose_at(part.joint.closed)
    axis, pivot = part.joint.axis, part.joint.pivot
    total = armature
    for piece in pieces:
        size = np.asarray(piece.size, float)
        if piece.kind == GEOM_BOX:
            mass = density * 8.0 * size.prod()
            own = mass / 3.0 * np.array([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2,
                                         size[0] ** 2 + size[1] ** 2])  # fmt: skip
        else:  # a cylinder along its z: radius, half height
            mass = density * math.pi * size[0] ** 2 * 2.0 * size[1]
            side = mass * (3.0 * size[0] ** 2 + (2.0 * size[1]) ** 2) / 12.0
            own = np.array([side, side, mass * size[0] ** 2 / 2.0])
        if part.joint.type == "slide":
            total += mass
            continue
        turn = Rotation.from_euler("ZY", [piece.yaw, piece.tilt]).as_matrix()
        rotation = world_from_part[:3, :3] @ turn
        centre = world_from_part[:3, :3] @ np.asarray(piece.position, float) + world_from_part[:3, 3]
        arm = centre - pivot
        arm -= axis * (arm @ axis)
        total += float(axis @ rotation @ np.diag(own) @ rotation.T @ axis) + mass * float(arm @ arm)
    return total


__all__ = ["Coast", "coasting", "joint_inertia"]
