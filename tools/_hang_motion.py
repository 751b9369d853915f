"""The gripper's script of the hang scene: pick the mug by its handle, thread the handle on the peg, let go.

The grasp: from above, one finger inside the mug against the wall behind the handle and the other
against the handle's outer bar, the pads' tops level with the handle's top; the fingers close on the
wall, the upper arm and the bar (3-4 cm: the position actuators squeeze with about 10 N, where a pinch
of the 4-5 mm wall alone would give about 1 N). The loop below the upper arm stays free.

The script, in segments of ``_articulated_motion``'s ``Script`` (positions by minimum jerk, rotations
by slerp): over the mug, down, close, lift, carry it (turning it so that its loop opens along the peg)
to beyond the peg's tip, lower it to the peg's line, thread the handle along the peg towards its root
(the post, or a hook board's plate), seat it (the peg in the loop's top outer corner, under the upper arm
and against the bar, a millimetre or so clear), tip it about the peg until its centre of mass is under
the peg (as it will hang: the finger inside the mug would be caught by the rim were the mug let swing
there), open, draw the fingers out of the mug along its axis and back away. Poses are in the world
frame; the grip is the per-finger opening (m, 0 closed).
"""

from __future__ import annotations

import numpy as np
from _articulated_motion import Script
from _demo_gripper import FINGER_HALF, FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE, PALM_HALF
from _demo_plan import Plan
from _hang_scene import HangLayout, Mug, rotation_z
from scipy.spatial.transform import Rotation

MIN_DURATION = 7.0  # seconds; shorter leaves the hung mug too little time to settle before the last second
OPEN, CLOSED = FINGER_TRAVEL, 0.0
# Segments and their shares of the video (seconds of an 8 s video).
_SHARES = {
    "hold": 0.25, "approach": 0.65, "descend": 0.45, "close": 0.35, "lift": 0.5, "carry": 0.95,
    "lower": 0.45, "thread": 0.85, "seat": 0.35, "tip": 0.5, "release": 0.3, "settle": 0.3, "withdraw": 0.45,
    "retreat": 0.5, "rest": 1.35,
}  # fmt: skip
# The grasp's frame in the mug frame: fingers opening along the mug's x, approaching down its axis.
GRASP_ROTATION = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
FLANGE_HALF = (0.032, 0.032, 0.018)  # the box round the gripper's flange, gripper frame (m)


def seat(layout: HangLayout) -> tuple[np.ndarray, float]:
    """Where the peg's axis goes in the handle (mug frame, m, at the handle's middle plane) and by how much
    (rad) the mug is then tipped about it, its handle up, to bring its centre of mass under the peg
    (``seat_on_peg`` of the layout's mug and rack)."""
    return seat_on_peg(layout.mug, layout.rack.peg_elevation, layout.rack.peg_radius)


def seat_on_peg(mug: Mug, elevation: float, peg_radius: float) -> tuple[np.ndarray, float]:
    """Where the axis of a peg of ``peg_radius`` (m) rising at ``elevation`` (rad) goes in the handle (mug
    frame, m, at the handle's middle plane) and by how much (rad) the mug is then tipped about it, its handle
    up, to bring its centre of mass under the peg.

    The peg sits in the loop's top outer corner, clear of the upper arm and the bar by a millimetre where
    it is nearest them along the handle's width, before and after the tip (the peg rises across the
    handle's width by ``handle_width * tan(elevation)``), and no nearer the wall than the loop's middle.
    """
    e = elevation
    across = peg_radius / np.cos(e)  # the peg's half extent across it in the handle's plane, at most
    rise = mug.handle_width / 2 * np.tan(e)
    t = mug.handle_thickness
    z = mug.handle_top - t - across - rise - 0.001
    x, centre = mug.loop[0], mug.centre_of_mass()
    for _ in range(2):  # the tip sets how near the bar the rising peg comes; it hardly depends on x
        tip = float(np.arctan2(x - centre[0], z - centre[2]))
        x = max(mug.handle_reach - t - across - rise * np.sin(tip) - 0.001, mug.loop[0])
    return np.array([x, 0.0, z]), tip


def seated_outline(mug: Mug, elevation: float, peg_radius: float) -> np.ndarray:
    """The mug's outline (``Mug.outline``) and the corners of the holding hand's palm and flange, once the mug
    is seated on the peg and tipped (``seat_on_peg``), where the hand lets go: from the seat, in the axes of
    the mug frame before the tip (m), (N, 3)."""
    finger_top = FINGERTIP_BELOW_CENTRE - 2 * FINGER_HALF[2]
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    palm = np.array([0.0, 0.0, finger_top - PALM_HALF[2]]) + signs * PALM_HALF
    flange = np.array([0.0, 0.0, finger_top - 2 * PALM_HALF[2] - FLANGE_HALF[2]]) + signs * FLANGE_HALF
    hand = mug.grasp + np.concatenate([palm, flange]) @ GRASP_ROTATION.T
    point, tip = seat_on_peg(mug, elevation, peg_radius)
    return Rotation.from_rotvec([0.0, -tip, 0.0]).apply(np.concatenate([mug.outline(), hand]) - point)


def mug_on_peg(
    layout: HangLayout, along: float, point: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The mug's pose with ``point`` (mug frame; the loop's middle by default) on the hung peg's axis
    ``along`` metres from its root, upright: its bottom's middle (world, m) and its rotation (3, 3)."""
    rot = rotation_z(layout.hang_yaw)
    point = layout.mug.loop if point is None else point
    return layout.on_peg(along) - rot @ point, rot


def hand_pose(mug: Mug, position: np.ndarray, rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gripper's grasp centre (world, m) and quaternion [w, x, y, z] holding a mug posed so."""
    quat = Rotation.from_matrix(rot @ GRASP_ROTATION).as_quat(scalar_first=True)
    return position + rot @ mug.grasp, quat


def thread_span(layout: HangLayout) -> tuple[float, float]:
    """Where along the peg (m from its root) the loop's middle starts threading, with the whole mug beyond
    the tip, and where the hand lets go: at ``layout.reach`` (level distance from the peg's root), or,
    missing, with the handle ``layout.miss`` short of the tip."""
    rack, mug = layout.rack, layout.mug
    cos_e = np.cos(rack.peg_elevation)
    if layout.miss:
        tip = rack.peg_length * cos_e + rack.peg_radius * np.sin(rack.peg_elevation)
        end = (tip + layout.miss + mug.handle_width / 2) / cos_e
    else:
        end = layout.reach / cos_e
    start = max(rack.peg_length + (mug.outer_radius + 0.015) / cos_e, end)
    return float(start), float(end)


def plan_script(layout: HangLayout, duration: float) -> Script:
    """The gripper's script for the scene.

    Args:
        layout: The scene.
        duration: Video length (s); the segments' shares are scaled to it.

    Returns:
        The script, in the world frame.

    Raises:
        ValueError: If the video is too short for it.
    """
    if duration < MIN_DURATION:
        raise ValueError(
            f"the video lasts {duration:.2f} s; the hang script needs at least {MIN_DURATION:g} s "
            "(raise --frames or lower --fps)"
        )
    mug = layout.mug
    start_rot = rotation_z(mug.yaw)
    grasp, grasp_quat = hand_pose(mug, np.r_[mug.xy, 0.0], start_rot)
    first, last = thread_span(layout)
    point, tip = seat(layout)
    if layout.miss:  # nothing to tip it about: let it go upright, so that it drops off the fingers
        tip = 0.0
    entry, hang_quat = hand_pose(mug, *mug_on_peg(layout, first))
    carry_z = entry[2] + 0.04
    u, _, _ = layout.peg_axes
    builder = Plan(grasp + [0.0, 0.0, 0.14], grasp_quat, OPEN, _SHARES)
    builder.to("hold")
    builder.to("approach", grasp + [0.0, 0.0, 0.07])
    builder.to("descend", grasp)
    builder.to("close", grip=CLOSED)
    builder.to("lift", np.r_[grasp[:2], carry_z])
    builder.to("carry", np.r_[entry[:2], carry_z], hang_quat)
    builder.to("lower", entry)
    threaded, _ = hand_pose(mug, *mug_on_peg(layout, last))
    seated, _ = hand_pose(mug, *mug_on_peg(layout, last, point))
    builder.to("thread", threaded)
    builder.to("seat", seated)
    along = rotation_z(layout.hang_yaw)[:, 1]  # the mug's y: tipping by -tip about it raises its handle
    builder.turn("tip", layout.on_peg(last), along, -tip)
    builder.to("release", grip=OPEN)
    builder.to("settle")
    out_of_mug = Rotation.from_rotvec(-tip * along).apply([0.0, 0.0, 1.0])  # the tipped mug's axis
    builder.to("withdraw", builder.position + 0.075 * out_of_mug)
    builder.to("retreat", builder.position + 0.08 * u + [0.0, 0.0, 0.08])
    builder.to("rest")
    return builder.script(duration)
