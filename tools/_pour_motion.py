"""The gripper's script of the pour scene: pick the cup from the side, pour its spheres into the bowl, put it
back.

The grasp: the hand comes at the cup level from the side (its approach axis along ``-side * n``, square to
the cup-bowl line ``u``), its fingers closing along ``u`` across the cup's body at ``grasp_height``, the
pads on the two wall boxes that face along ``u``. Tipping the hand about its approach axis turns the pads
in their own plane: they hold the cup by their pressure across the pad and its friction, not by their
torsional friction, and the cup's opening turns towards the bowl (about ``n`` by ``+tilt``).

The script, in segments of ``_articulated_motion``'s ``Script`` (positions by minimum jerk, rotations by
slerp, which between two poses differing by a turn about a fixed axis is that turn): from away and above,
approach the cup, reach it, close, lift, carry it to where its mouth is over the bowl's middle when tipped
(``miss`` short of it for a failing demo), high enough that the palm's end, which swings down as the hand
turns, clears the bowl's rim (``pour_height``), tip it about the grasp centre, hold while the spheres pour,
tip it back, carry it back, set it down where it started (farther back from a missed pour's spill), open,
back away and rest. Poses are in the world frame; the grip is the per-finger opening (m, 0 closed).
"""

from __future__ import annotations

import numpy as np
from _articulated_motion import Script
from _demo_gripper import FINGER_HALF, FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE, PAD_HALF, PALM_HALF
from _demo_plan import Plan
from _pour_scene import PourLayout
from scipy.spatial.transform import Rotation

MIN_DURATION = 7.0  # seconds; faster throws the spheres about and leaves them too little time to settle
OPEN, CLOSED = FINGER_TRAVEL, 0.0
HAND_CLEARANCE = 0.015  # the tipping hand's lowest point at least this far (m) above the bowl's rim
RIM_CLEARANCE = 0.02  # the tipped cup's lowest point at least this far (m) above the bowl's rim
SPILL_CLEARANCE = 0.10  # a missed pour's spill (m, along u) this far from where the cup is set down
START_AWAY, START_ABOVE = 0.17, 0.06  # the hand starts this far out from the cup's axis and up (m)
THROW = 0.02  # the spheres land about this far (m, along u) beyond the tipped mouth's middle
APPROACH_GAP = 0.05  # the pre-grasp: the grasp centre this far (m) beyond the cup's wall
RETREAT = 0.09  # the hand backs away this far (m) along its approach axis after letting go
# Segments and their shares of the video (seconds of an 8 s video).
_SHARES = {
    "hold": 0.2, "approach": 0.6, "reach": 0.45, "close": 0.35, "lift": 0.5, "carry": 0.7, "tilt": 0.9,
    "pour": 1.0, "untilt": 0.7, "return": 0.7, "lower": 0.45, "release": 0.3, "retreat": 0.5, "rest": 0.65,
}  # fmt: skip


def grasp_rotation(layout: PourLayout) -> Rotation:
    """The gripper's rotation holding the upright cup: z (approach) along ``-side * n``, y (opening) along
    ``u``, x down or up."""
    z, y = -layout.side * layout.n, layout.u
    return Rotation.from_matrix(np.stack([np.cross(y, z), y, z], axis=1))


def tilt_rotation(layout: PourLayout, angle: float | None = None) -> Rotation:
    """The turn about ``n`` by ``angle`` (rad; the layout's tilt by default) that tips the cup's opening
    towards the bowl."""
    return Rotation.from_rotvec((layout.tilt if angle is None else angle) * layout.n)


def hand_corners(layout: PourLayout) -> np.ndarray:
    """The palm's and the closed fingers' corners, gripper frame (m), (24, 3)."""
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    finger_top = FINGERTIP_BELOW_CENTRE - 2 * FINGER_HALF[2]
    palm = np.array([0.0, 0.0, finger_top - PALM_HALF[2]]) + signs * PALM_HALF
    reach = layout.cup.outer_radius + 2 * PAD_HALF[1] + 2 * FINGER_HALF[1]  # the closed finger's outer face
    fingers = [0.0, 0.0, finger_top + FINGER_HALF[2]] + signs * np.array(
        [FINGER_HALF[0], reach, FINGER_HALF[2]]
    )
    return np.concatenate([palm, fingers])


def cup_outline(layout: PourLayout, samples: int = 24) -> np.ndarray:
    """Rings round the cup's bottom and rim, relative to the grasp centre, cup frame (m), (2 * samples, 3)."""
    cup = layout.cup
    angle = np.linspace(0, 2 * np.pi, samples, endpoint=False)
    ring = np.c_[cup.outer_radius * np.cos(angle), cup.outer_radius * np.sin(angle), np.zeros(samples)]
    return np.concatenate([ring, ring + [0, 0, cup.height]]) - [0, 0, layout.grasp_height]


def pour_lead(layout: PourLayout) -> float:
    """How far (m, along ``u``) the spheres poured from the tipped cup land ahead of the grasp centre: the
    tipped mouth's middle, and ``THROW`` beyond it."""
    return float((layout.cup.height - layout.grasp_height) * np.sin(layout.tilt)) + THROW


def pour_height(layout: PourLayout) -> float:
    """The grasp centre's height (m) while the cup is carried and tipped: the lift, or higher where the
    tipped cup's lowest point would come within ``RIM_CLEARANCE`` of the bowl's rim, or the hand's, at any
    angle while it tips, within ``HAND_CLEARANCE`` of it (the palm, 20 cm wide along ``u``, sweeps its end
    down over the bowl as it turns)."""
    tilt, upright = tilt_rotation(layout), Rotation.from_euler("z", layout.cup.yaw)
    cup_low = (tilt * upright).apply(cup_outline(layout))[:, 2].min()
    corners, grasp = hand_corners(layout), grasp_rotation(layout)
    hand_low = min((tilt_rotation(layout, a) * grasp).apply(corners)[:, 2].min()
                   for a in np.linspace(0.0, layout.tilt, 25))  # fmt: skip
    return float(max(layout.grasp_height + layout.lift, layout.bowl.height + RIM_CLEARANCE - cup_low,
                     layout.bowl.height + HAND_CLEARANCE - hand_low))  # fmt: skip


def set_down_xy(layout: PourLayout) -> np.ndarray:
    """Where the cup is set down (its axis, world xy, m): where it started, moved back along ``-u`` as far as
    needed to keep ``SPILL_CLEARANCE`` from a missed pour's spill."""
    back = min(0.0, layout.distance - layout.miss - SPILL_CLEARANCE)
    return layout.cup.xy + back * layout.u[:2]


def plan_script(layout: PourLayout, duration: float) -> Script:
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
            f"the video lasts {duration:.2f} s; the pour script needs at least {MIN_DURATION:g} s "
            "(raise --frames or lower --fps)"
        )
    cup, u = layout.cup, layout.u
    out = layout.side * layout.n
    grasp = np.r_[cup.xy, layout.grasp_height]
    upright = grasp_rotation(layout)
    held = upright.as_quat(scalar_first=True)
    tipped = (tilt_rotation(layout) * upright).as_quat(scalar_first=True)
    high = pour_height(layout)
    pour = np.r_[layout.bowl.xy - (pour_lead(layout) + layout.miss) * u[:2], high]
    put = np.r_[set_down_xy(layout), layout.grasp_height + 0.001]
    plan = Plan(grasp + START_AWAY * out + [0.0, 0.0, START_ABOVE], held, OPEN, _SHARES)
    plan.to("hold")
    plan.to("approach", grasp + (cup.outer_radius + APPROACH_GAP) * out)
    plan.to("reach", grasp)
    plan.to("close", grip=CLOSED)
    plan.to("lift", grasp + [0.0, 0.0, layout.lift])
    plan.to("carry", pour)
    plan.to("tilt", quat=tipped)
    plan.to("pour")
    plan.to("untilt", quat=held)
    plan.to("return", np.r_[put[:2], high])
    plan.to("lower", put)
    plan.to("release", grip=OPEN)
    plan.to("retreat", put + RETREAT * out + [0.0, 0.0, 0.02])
    plan.to("rest")
    return plan.script(duration)
