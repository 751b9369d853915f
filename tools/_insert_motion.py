"""The gripper's script of the insert scene: take the peg from above near its top, carry it over the socket,
lower it straight down into the hole until it rests on the hole's bottom, let go, rise away.

The grasp: from above (the approach axis straight down), the fingers opening along the line from the peg's
start to the socket (``InsertLayout.yaw``), the pads' tops just under the peg's top
(``_insert_layout.grasp_below_top``), so that the fingertips stay over the socket's top with the peg in.
The hand keeps that rotation all along: the peg is carried upright.

The script, in segments of ``_demo_plan.Plan`` (positions by minimum jerk): over the peg, down, close, lift
it straight up until its bottom is ``carry_clearance`` over the socket's top, carry it level over the hole,
hold still a moment (the peg stops swinging in the hand), lower it straight down along the hole's axis until
its bottom is ``set_gap`` over the hole's bottom (the whole ``intended_depth`` in), open, rise until the
fingertips are ``RISE_CLEAR`` over the peg's top, then up and back the way it came, and rest. Poses are in
the world frame; the grip is the per-finger opening (m, 0 closed). A peg that the hole blocks stops the
hand's descent in the simulation (``_insert_sim``), not here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from _articulated_motion import Script, Segment
from _demo_gripper import FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE
from _demo_plan import Plan, from_above
from _insert_scene import InsertLayout

MIN_DURATION = 6.0  # seconds; faster swings the peg in the hand out of line with the hole
OPEN, CLOSED = FINGER_TRAVEL, 0.0
START_ABOVE = 0.10  # the hand starts this far (m) above its grasp
APPROACH_ABOVE = 0.04  # and slows down this far (m) above it
RISE_CLEAR = 0.02  # after letting go the fingertips rise this far (m) over the peg's top
AWAY = 0.06  # then the hand goes this far (m) up and back towards where the peg stood
# Segments and their shares of the video (seconds of a 6.2 s video).
_SHARES = {
    "hold": 0.2, "approach": 0.45, "descend": 0.35, "close": 0.35, "lift": 0.5, "carry": 0.8, "steady": 0.25,
    "lower": 1.0, "release": 0.35, "rise": 0.4, "away": 0.45, "rest": 1.1,
}  # fmt: skip


def plan_script(layout: InsertLayout, duration: float) -> Script:
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
            f"the video lasts {duration:.2f} s; the insert script needs at least {MIN_DURATION:g} s "
            "(raise --frames or lower --fps)"
        )
    peg, socket = layout.peg, layout.socket
    quat = from_above(layout.yaw)
    grasp = np.r_[peg.xy, layout.grasp_height(0.0)]
    carry_z = layout.grasp_height(socket.height + layout.carry_clearance)
    set_z = layout.grasp_height(socket.bottom + layout.set_gap)
    out = np.r_[socket.xy, set_z + layout.grasp_below_top + FINGERTIP_BELOW_CENTRE + RISE_CLEAR]
    back = np.r_[(peg.xy - socket.xy) / np.linalg.norm(peg.xy - socket.xy), 1.0] * AWAY
    plan = Plan(grasp + [0.0, 0.0, START_ABOVE], quat, OPEN, _SHARES)
    plan.to("hold")
    plan.to("approach", grasp + [0.0, 0.0, APPROACH_ABOVE])
    plan.to("descend", grasp)
    plan.to("close", grip=CLOSED)
    plan.to("lift", np.r_[peg.xy, carry_z])
    plan.to("carry", np.r_[socket.xy, carry_z])
    plan.to("steady")
    plan.to("lower", np.r_[socket.xy, set_z])
    plan.to("release", grip=OPEN)
    plan.to("rise", out)
    plan.to("away", out + back)
    plan.to("rest")
    return plan.script(duration)


def stopped_short(script: Script, short: float) -> Script:
    """The script as a hand stopped ``short`` metres over where the lowering ends (on a blocked peg) goes on
    (``_insert_sim``): from the release on, raised by ``short``; the segments before it as they were."""
    release = script.segments.index(script.segment("release"))

    def raised(segment: Segment) -> Segment:
        def path(s: float, inner=segment.path) -> tuple[np.ndarray, np.ndarray]:
            position, quat = inner(s)
            return position + [0.0, 0.0, short], quat

        return replace(segment, path=path)

    return Script(script.segments[:release] + [raised(s) for s in script.segments[release:]])
