"""A hung mug's handle says where its peg is.

A mug tree's pegs are a few pixels across: their depth readings drop out at their edges, and one view's
silhouette leaves a peg's turn about the post along the camera's rays to that thin, noisy depth. Fitted
racks put a peg's tip 8 to 14 mm off (5 to 6 degrees of azimuth) where the video shows a mug hung on it,
and the simulated mug then struck the peg it was carried onto. Where the video ends with the object
hanging still on the rack, the peg it hangs on passes through its handle: that peg is turned about the post
to do so, within :data:`MAX_TURN`. Its height is left as fitted: the silhouettes place a peg's height within
3 mm, closer than the hung handle's pose does (it is 3 to 5 mm off, from the hand's pose at the release or
the last frame; bearing the peg on it put two hung-on pegs 5 and 6 mm off). A handle further off every peg
than :data:`MAX_TURN` and :data:`MAX_SHIFT` (a mug let go beside the peg, fallen, or stood on the base)
changes nothing, and nothing is hidden: the turn is reported as a warning, naming the peg and the frame.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import WarningLog
from .camera import yaw_rotation
from .kinds import rack
from .shape_kinds import RACK

if TYPE_CHECKING:
    from .stage import ObjectGeometry

MAX_TURN = math.radians(10.0)
"""rad: the most a peg is turned about its root to pass through the handle."""
MAX_SHIFT = 0.01
"""m: a peg this far below or above bearing on the handle's upper arm may be the one it hangs on."""
HUNG_CLEARANCE = 0.02
"""m: an object whose lowest point ends less than this above the rack's base or the table is not hung."""
STILL_FRAMES = 5
"""Frames at the video's end over which the hung object must move less than :data:`STILL_SPAN`."""
STILL_SPAN = 0.005
"""m: the most the hung object's centre moves over those frames."""
HOLE_SPARE = 0.002
"""m: room kept between the peg and the handle's wall and bar."""


def _hole(shape) -> tuple[float, float, float]:
    """A handle's opening in the local ``(x, z)`` plane: ``(x from, x to, z under the upper arm)``."""
    _, upper, outer = shape.handle_pieces()
    return (
        upper.position[0] - upper.size[0],
        outer.position[0] - outer.size[0],
        upper.position[2] - upper.size[2],
    )


def handle_opening(shape) -> tuple[float, float]:
    """``(width, height)`` (m) of a handle's loop, what a peg passes through: from the wall's outer face to
    the bar, and between the arms."""
    root, bar, under_arm = _hole(shape)
    lower = shape.handle_pieces()[0]
    width = bar - (root + shape.params["wall_thickness"] / 2)  # the arms start mid-wall
    return float(width), float(under_arm - (lower.position[2] + lower.size[2]))


def _post_frame(target: ObjectGeometry) -> tuple[np.ndarray, np.ndarray]:
    """The rack's post frame in the world: ``(origin (3,), rotation 3x3)`` (:mod:`.kinds.rack`)."""
    turn = yaw_rotation(target.fitted.yaw)
    return target.fitted.position + turn @ rack.post_offset(target.fitted.shape), turn


def _crossing(params: dict, i: int, origin, turn, position, rotation) -> np.ndarray | None:
    """Where peg ``i``'s axis crosses the handle's plane (the object's local y = 0): local ``(x, z)``, or None
    where it runs along that plane or crosses it off the peg."""
    root = rotation.T @ (origin + turn @ rack.peg_root(params, i) - position)
    direction = (
        rotation.T
        @ turn
        @ rack.peg_direction(params["peg_elevation"], params[rack.peg_key(i, "peg_azimuth")])
    )
    if abs(direction[1]) < 0.3:
        return None
    t = -root[1] / direction[1]
    if not 0.0 < t < params["peg_length"]:
        return None
    return (root + t * direction)[[0, 2]]


def _hung_pose(
    obj: ObjectGeometry, grasp: int | None, release: int, gripper
) -> tuple[np.ndarray, np.ndarray]:
    """The object's pose as it hangs: ``(position (3,), rotation 3x3)``. A recorded hand carries it from
    its grasp, where it stood measured whole, to the peg, and lets go of it there: its pose in the hand at
    the grasp, carried to the release (a mug hung askew on a peg, half behind it, was measured 13 to 23
    degrees off its true turn); the video's last frame where nothing recorded the hand."""
    motion = obj.motion
    if gripper is None or gripper.source != "trajectory.json" or grasp is None:
        return motion.positions[-1], motion.rotation(len(motion.positions) - 1)

    def hand(frame: int) -> tuple[np.ndarray, np.ndarray]:
        w, x, y, z = gripper.quaternions[frame]
        return np.asarray(gripper.positions[frame]), Rotation.from_quat([x, y, z, w]).as_matrix()

    (grip_at, grip_turn), (let_go_at, let_go_turn) = hand(grasp), hand(release)
    in_hand = grip_turn.T @ motion.rotation(grasp)
    return let_go_at + let_go_turn @ (
        grip_turn.T @ (motion.positions[grasp] - grip_at)
    ), let_go_turn @ in_hand


def peg_through_handle(
    obj: ObjectGeometry, target: ObjectGeometry, keyframes: list[dict], gripper, log: WarningLog
) -> None:
    """Turns the peg the object ends hung on so it passes through its handle (module doc).

    The peg is turned as little as that takes: its axis is brought inside the opening (a peg radius and
    :data:`HOLE_SPARE` from the wall and the outer bar); its height stays. ``target``'s fitted
    shape and pose change (the post stays where it was fitted) when the object is let go before the video
    ends, ends still and clear of the rack's base (:func:`_hung_pose`), and a peg crosses its handle's plane within
    :data:`MAX_TURN` and :data:`MAX_SHIFT` of that; nothing changes otherwise.
    """
    shape, hung = target.fitted.shape, obj.fitted.shape
    frames = len(obj.motion.positions)
    events = {k["event"]: k["frame"] for k in keyframes if k.get("object") == obj.name}
    release = events.get("release")
    if shape.kind != RACK.name or not hung.has_handle or release is None or release >= frames - STILL_FRAMES:
        return
    if np.ptp(obj.motion.positions[-STILL_FRAMES:], axis=0).max() > STILL_SPAN:
        return
    position, rotation = _hung_pose(obj, events.get("grasp"), release, gripper)
    if (
        position[2] + (hung.outline_points() @ rotation.T)[:, 2].min()
        < rack.floor(shape.params) + HUNG_CLEARANCE
    ):
        return
    origin, turn = _post_frame(target)
    params = dict(shape.params)
    radius, elevation = params["peg_radius"], params["peg_elevation"]
    x0, x1, under_arm = _hole(hung)
    low, high = x0 + radius + HOLE_SPARE, x1 - radius - HOLE_SPARE
    best = None
    for i in range(rack.peg_count(params)):
        crossing = _crossing(params, i, origin, turn, position, rotation)
        if crossing is None:
            continue
        aim = np.array([np.clip(crossing[0], low, high) if low < high else (x0 + x1) / 2, 0.0,
                        under_arm - radius / math.cos(elevation)])  # fmt: skip
        local = turn.T @ (position + rotation @ aim - origin) - rack.peg_root(params, i)
        rho = math.hypot(local[0], local[1])
        turned = math.remainder(
            math.atan2(local[1], local[0]) - params[rack.peg_key(i, "peg_azimuth")], 2 * math.pi
        )
        shifted = local[2] - math.tan(elevation) * rho
        if (
            abs(turned) <= MAX_TURN
            and abs(shifted) <= MAX_SHIFT
            and (best is None or abs(turned) < abs(best[1]))
        ):
            best = (i, turned, shifted)
    if best is None or abs(best[1]) < 1e-9:  # none hangs on, or it already passes through the handle
        return
    i, turned, _ = best
    params[rack.peg_key(i, "peg_azimuth")] += turned
    moved = dataclasses.replace(shape, params=params, size=rack.size_of(params))
    centre = origin - turn @ rack.post_offset(moved)
    target.fitted = dataclasses.replace(target.fitted, shape=moved, position=centre)
    target.motion.positions[:] = centre
    log.warn(
        "geometry",
        f"object '{target.name}': peg {i} turned {math.degrees(turned):+.1f} degrees about its root to pass "
        f"through the handle of '{obj.name}', which hangs on it from frame {release} (a peg's turn is left to "
        f"its few, noisy depth readings)",
    )
