"""The gripper's script for the demo: waypoints joined by minimum-jerk segments.

The gripper approaches from above, descends around the block, closes, lifts, carries
the block over the container (a cup or a bowl), lowers it to just above the rim,
opens, waits while the block falls and settles, and retreats. Heights follow from the
object sizes so that varied scenes still succeed. Poses are in the world frame (metres,
radians); the grip command is the per-finger opening in metres (0 = closed,
``FINGER_TRAVEL`` = fully open).

Optionally the carry tilts the block: the gripper turns about its own x axis (level,
in the plane of the finger pads, across the closing direction) by a cosine ramp after
the lift, holds, and turns back upright before lowering over the container.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from _demo_gripper import FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE
from _demo_scene import Layout, container_floor_radius

# Relative durations of the script's segments; they are scaled to the video length.
_SEGMENTS = (
    ("hold", 0.05),
    ("approach", 0.14),
    ("descend", 0.10),
    ("close", 0.08),
    ("lift", 0.10),
    ("carry", 0.16),
    ("lower", 0.07),
    ("open", 0.05),
    ("fall", 0.06),
    ("retreat", 0.10),
    ("rest", 0.09),
)
MIN_DURATION = 3.0  # seconds; shorter scripts accelerate the block out of the grip
# With a carry tilt the carry lasts longer, for two turns and a hold between them; the
# time comes from segments in which the gripper holds nothing (hold, approach, retreat,
# rest), so the grasp, the lift, the lowering and the drop keep their pace.
_TILTED_SEGMENTS = (
    ("hold", 0.04),
    ("approach", 0.09),
    ("descend", 0.10),
    ("close", 0.08),
    ("lift", 0.10),
    ("carry", 0.30),
    ("lower", 0.07),
    ("open", 0.05),
    ("fall", 0.06),
    ("retreat", 0.05),
    ("rest", 0.06),
)
TILT_RAMP = 0.36  # each turn's share of the tilted carry (0.108 of the script)
MAX_TILT_DEG = 45.0


@dataclass(frozen=True)
class Waypoint:
    """One pose of the script.

    Attributes:
        time: Seconds from the first video frame.
        position: Grasp centre in the world frame (m), shape (3,).
        yaw: Rotation of the top-down gripper about world z (rad).
        grip: Commanded per-finger opening (m).
        name: The segment that ends here.
        tilt: Turn (rad) of the gripper about its x axis held in the middle of the
            segment that ends here; it ramps up from 0 and back to 0 within it.
        tilt_ramp: Duration (s) of each of those two ramps.
    """

    time: float
    position: np.ndarray
    yaw: float
    grip: float
    name: str
    tilt: float = 0.0
    tilt_ramp: float = 0.0


def minimum_jerk(s: np.ndarray | float) -> np.ndarray | float:
    """Minimum-jerk blend 10 s^3 - 15 s^4 + 6 s^5 of a phase ``s`` clipped to [0, 1]."""
    s = np.clip(s, 0.0, 1.0)
    return s**3 * (10.0 - 15.0 * s + 6.0 * s * s)


def top_down_quat(yaw: float) -> np.ndarray:
    """Orientation [w, x, y, z] of a gripper pointing down (z = -world z), turned by yaw.

    The gripper frame is Rz(yaw) Rx(pi): x along (cos yaw, sin yaw, 0), y (the finger
    opening axis) along (sin yaw, -cos yaw, 0), z straight down.
    """
    half = yaw / 2
    # Rz(yaw) * Rx(pi) as a quaternion product of [cos h, 0, 0, sin h] and [0, 1, 0, 0].
    return np.array([0.0, np.cos(half), np.sin(half), 0.0])


def gripper_quat(yaw: float, tilt: float) -> np.ndarray:
    """Orientation [w, x, y, z] of the top-down gripper turned by ``tilt`` about its x axis.

    The gripper's x axis is level and lies in the plane of the finger pads, across the
    closing direction (y): turning about it turns the pads, and a block squeezed
    between them, by their normal forces; no torsional friction is needed.

    Args:
        yaw: Rotation of the top-down gripper about world z (rad).
        tilt: Turn about the gripper's x axis (rad); 0 gives ``top_down_quat(yaw)``.

    Returns:
        The quaternion Rz(yaw) Rx(pi) Rx(tilt).
    """
    base = top_down_quat(yaw)
    if tilt == 0.0:
        return base
    turn = np.array([np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0])
    quat = np.zeros(4)
    mujoco.mju_mulQuat(quat, base, turn)
    return quat


def grasp_yaw(block_yaw: float, preferred: float) -> float:
    """The gripper yaw closest to ``preferred`` whose fingers close on two block faces.

    Args:
        block_yaw: Block rotation about world z (rad).
        preferred: Wanted gripper yaw (rad).

    Returns:
        ``block_yaw`` plus a multiple of pi/2, the one nearest ``preferred``.
    """
    k = np.round((preferred - block_yaw) / (np.pi / 2))
    return float(block_yaw + k * np.pi / 2)


def plan_script(
    layout: Layout, duration: float, preferred_yaw: float, carry_tilt: float = 0.0
) -> list[Waypoint]:
    """Waypoints of the pick-and-place script for this layout.

    Args:
        layout: Object sizes and placements.
        duration: Video length in seconds; segment times scale with it.
        preferred_yaw: Wanted gripper yaw (rad), e.g. to put one finger between the
            camera and the block.
        carry_tilt: Turn (rad) of the gripper about its x axis held during the carry;
            0 for none (the script is then exactly the untilted one).

    Returns:
        Waypoints in time order, the first at time 0.

    Raises:
        ValueError: If the video is too short or the objects do not fit the gripper.
    """
    size = layout.block_size
    if duration < MIN_DURATION:
        raise ValueError(
            f"the video lasts {duration:.2f} s; the script needs at least {MIN_DURATION} s "
            "(raise --frames or lower --fps)"
        )
    if abs(carry_tilt) > np.deg2rad(MAX_TILT_DEG) + 1e-9:
        raise ValueError(
            f"a carry tilt of {np.rad2deg(carry_tilt):.1f} deg is more than the "
            f"{MAX_TILT_DEG:g} deg the grasp is made for (lower --carry-tilt)"
        )
    if size > 2 * FINGER_TRAVEL - 0.01:
        raise ValueError(f"a {size * 100:.1f} cm block does not fit the 8 cm gripper")
    if layout.container == "bowl":
        floor = container_floor_radius(layout)
        if size * np.sqrt(2) / 2 + 0.005 >= floor:
            raise ValueError(
                f"a {size * 100:.1f} cm block does not fit on the floor of a bowl of floor "
                f"radius {floor * 100:.1f} cm (its half-diagonal plus 0.5 cm must be less; "
                "raise --bowl-radius or lower --block-size)"
            )
    elif layout.container == "base":
        if size > 2 * layout.cup_radius:
            raise ValueError(
                f"a {size * 100:.1f} cm block is wider than the {layout.cup_radius * 200:.1f} cm base it is set on "
                "(raise --base-size or lower --block-size)"
            )
    else:
        inner = layout.cup_radius - layout.cup_wall
        if size * np.sqrt(2) / 2 > inner - 0.004:
            raise ValueError(
                f"a {size * 100:.1f} cm block does not fit a cup of inner radius "
                f"{inner * 100:.1f} cm (raise --cup-radius or lower --block-size)"
            )
    yaw = grasp_yaw(layout.block_yaw, preferred_yaw)
    # Grasp centre above the block bottom: mid-block, but keep the fingertips clear.
    grasp_z = max(size / 2, FINGERTIP_BELOW_CENTRE + 0.004)
    # Released over the container's axis with the block's bottom 1.5 cm above the rim.
    release_z = layout.cup_height + 0.015 + grasp_z
    carry_z = release_z + 0.04
    above_z = max(size + 0.10, carry_z)
    block = np.r_[layout.block_xy, 0.0]
    away = (layout.cup_xy - layout.block_xy) / np.linalg.norm(layout.cup_xy - layout.block_xy)
    cup = np.r_[layout.cup_xy + layout.miss * away, 0.0]  # let go past the target by ``miss``
    toward_cam = layout.camera_pos[:2] - layout.block_xy
    toward_cam /= np.linalg.norm(toward_cam)
    home = block + np.r_[0.06 * toward_cam, 0.0] + (block - cup) * 0.25
    home[2] = above_z + 0.02
    carry_yaw = yaw + np.deg2rad(12.0)
    opened, closed = FINGER_TRAVEL, 0.0
    poses = {
        "hold": (home, yaw, opened),
        "approach": (block + [0, 0, above_z], yaw, opened),
        "descend": (block + [0, 0, grasp_z], yaw, opened),
        "close": (block + [0, 0, grasp_z], yaw, closed),
        "lift": (block + [0, 0, carry_z], yaw, closed),
        "carry": (cup + [0, 0, carry_z], carry_yaw, closed),
        "lower": (cup + [0, 0, release_z], carry_yaw, closed),
        "open": (cup + [0, 0, release_z], carry_yaw, opened),
        "fall": (cup + [0, 0, release_z], carry_yaw, opened),
        "retreat": (cup + [0, 0, release_z + 0.08], carry_yaw, opened),
        "rest": (cup + [0, 0, release_z + 0.08], carry_yaw, opened),
    }
    segments = _TILTED_SEGMENTS if carry_tilt != 0.0 else _SEGMENTS
    total = sum(weight for _, weight in segments)
    waypoints, time = [Waypoint(0.0, home.copy(), yaw, opened, "start")], 0.0
    for name, weight in segments:
        time += duration * weight / total
        position, seg_yaw, grip = poses[name]
        waypoint = Waypoint(time, np.asarray(position, float), seg_yaw, grip, name)
        if name == "carry" and carry_tilt != 0.0:
            ramp = TILT_RAMP * duration * weight / total
            waypoint = Waypoint(waypoint.time, waypoint.position, seg_yaw, grip, name, carry_tilt, ramp)
        waypoints.append(waypoint)
    return waypoints


def pose_at(waypoints: list[Waypoint], time: float) -> tuple[np.ndarray, float, float]:
    """Commanded grasp centre, yaw and per-finger opening at ``time``.

    Args:
        waypoints: The script, from ``plan_script``.
        time: Seconds from the first video frame; clamped to the script.

    Returns:
        Position in the world frame (m, shape (3,)), yaw (rad), per-finger opening (m).
    """
    if time <= waypoints[0].time:
        first = waypoints[0]
        return first.position.copy(), first.yaw, first.grip
    for start, end in zip(waypoints[:-1], waypoints[1:], strict=True):
        if time <= end.time:
            s = minimum_jerk((time - start.time) / max(end.time - start.time, 1e-9))
            position = start.position + s * (end.position - start.position)
            return (
                position,
                start.yaw + s * (end.yaw - start.yaw),
                start.grip + s * (end.grip - start.grip),
            )
    last = waypoints[-1]
    return last.position.copy(), last.yaw, last.grip


def tilt_at(waypoints: list[Waypoint], time: float) -> float:
    """Commanded turn (rad) of the gripper about its x axis at ``time``.

    In a segment whose end waypoint has a ``tilt``, the turn rises by a cosine ramp of
    ``tilt_ramp`` seconds from the segment's start, holds, and falls back to 0 by a
    cosine ramp that ends with the segment; elsewhere it is 0.

    Args:
        waypoints: The script, from ``plan_script``.
        time: Seconds from the first video frame.

    Returns:
        The turn in radians; exactly 0.0 outside tilted segments.
    """
    for start, end in zip(waypoints[:-1], waypoints[1:], strict=True):
        if end.tilt == 0.0 or not start.time < time < end.time:
            continue
        ramp = max(end.tilt_ramp, 1e-9)
        s = min((time - start.time) / ramp, (end.time - time) / ramp, 1.0)
        return end.tilt * 0.5 * (1.0 - np.cos(np.pi * s))
    return 0.0
