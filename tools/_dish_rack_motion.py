"""The gripper's script of the dish rack scene: take the plate out of the stand by its top rim, set it upright
into a slot of the dish rack, let go, rise and back away.

The grasp: from above (the approach axis straight down), the fingers closing along the plate's axis (the
racks' y: the hand's yaw is the stand's), one pad on each face, the pads' tops just under the plate's top
(``DishRackLayout.grasp_below_top``). Closing centres a plate leaning in its slot between the pads. The
fingertips stay well over the dividers with the plate standing on either rack's base
(``_dish_rack_layout``), and the palm is higher still, so the hand never reaches between the dividers.

The script, in segments of ``_demo_plan.Plan`` (positions by minimum jerk, rotations by slerp): over the
plate, down, close, lift it straight up until its bottom is ``clearance`` over the higher rack's top,
carry it level over the chosen slot, turning it about world z from the stand's yaw to the dish rack's,
hold still a moment (the plate stops swinging in the hand), lower it straight down into the slot until its
bottom is ``set_gap`` over the base, open, rise until the fingertips are ``RISE_CLEAR`` over the plate's
top, then up and back towards the stand, and rest. Poses are in the world frame; the grip is the
per-finger opening (m, 0 closed). A plate that the slot blocks (a failing demo's) stops the hand's descent
in the simulation (``_dish_rack_sim``), not here.
"""

from __future__ import annotations

import numpy as np
from _articulated_motion import Script
from _demo_gripper import FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE
from _demo_plan import Plan, from_above
from _dish_rack_scene import DishRackLayout

MIN_DURATION = 6.0  # seconds; faster swings the plate in the hand out of line with the slot
OPEN, CLOSED = FINGER_TRAVEL, 0.0
START_ABOVE = 0.10  # the hand starts this far (m) above its grasp
APPROACH_ABOVE = 0.04  # and slows down this far (m) above it
RISE_CLEAR = 0.02  # after letting go the fingertips rise this far (m) over the plate's top
AWAY = 0.06  # then the hand goes this far (m) up and back towards the stand
# Segments and their shares of the video (seconds of a 6.4 s video).
_SHARES = {
    "hold": 0.2, "approach": 0.45, "descend": 0.35, "close": 0.35, "lift": 0.55, "carry": 0.9, "steady": 0.25,
    "lower": 0.8, "release": 0.35, "rise": 0.35, "away": 0.45, "rest": 1.2,
}  # fmt: skip


def plan_script(layout: DishRackLayout, duration: float) -> Script:
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
            f"the video lasts {duration:.2f} s; the dish rack script needs at least {MIN_DURATION:g} s "
            "(raise --frames or lower --fps)"
        )
    start, place = layout.start, layout.place
    grasp = np.r_[start[:2], layout.grasp_height(layout.stand.base_top)]
    carry_z = layout.grasp_height(layout.carry_floor + layout.clearance)
    set_z = layout.grasp_height(layout.rack.base_top + layout.set_gap)
    out = np.r_[place[:2], set_z + layout.grasp_below_top + FINGERTIP_BELOW_CENTRE + RISE_CLEAR]
    back = np.r_[(start[:2] - place[:2]) / np.linalg.norm(start[:2] - place[:2]), 1.0] * AWAY
    plan = Plan(grasp + [0.0, 0.0, START_ABOVE], from_above(layout.stand.yaw), OPEN, _SHARES)
    plan.to("hold")
    plan.to("approach", grasp + [0.0, 0.0, APPROACH_ABOVE])
    plan.to("descend", grasp)
    plan.to("close", grip=CLOSED)
    plan.to("lift", np.r_[grasp[:2], carry_z])
    plan.to("carry", np.r_[place[:2], carry_z], from_above(layout.place_yaw))
    plan.to("steady")
    plan.to("lower", np.r_[place[:2], set_z])
    plan.to("release", grip=OPEN)
    plan.to("rise", out)
    plan.to("away", out + back)
    plan.to("rest")
    return plan.script(duration)
