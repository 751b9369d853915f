"""A parallel-jaw gripper with Franka Hand dimensions, driven through a mocap weld.

Frame: the origin is the grasp centre between the finger pads, z the approach
direction (palm to fingertips), y the direction the fingers open. The hand is a
free body welded to a mocap body (``gripper_target``) that follows the demo's
trajectory; each finger slides along y under a position actuator with a force
limit, and holds objects by friction alone (pads with high friction, condim 4
for torsional friction) on the fingers' inner faces; the fingers' shells and the
palm are smooth. MjSpec's default weld data would put the anchor 1 m
off: the weld here sets anchor 0, relative pose identity and torque scale 1,
as an XML ``<weld body1 body2/>`` compiles.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

MAX_OPENING = 0.08
"""Franka Hand: 80 mm between the fingers when fully open."""
FINGERTIP_BELOW = 0.012
"""How far the fingertips reach past the grasp centre along the approach axis (m)."""
SQUEEZE = 0.005
"""How far past the recorded width (m) a closed finger is driven: the grip force is gain x squeeze."""
CONTACT_SOLREF = [0.004, 1.0]
CONTACT_SOLIMP = [0.95, 0.99, 0.001, 0.5, 2.0]
"""Stiff contacts (time constant 2 timesteps): hard objects penetrate millimetres, not centimetres. Every geom
of the scene and of the hand has them (the hand's outrank the others', so theirs rule its contacts: shells
and a palm left at MuJoCo's default, 5 times softer, let a finger pushing a microwave's door shut sink
2.3 mm into it)."""
WELD_TIME_CONSTANT = 0.01
"""Seconds: the time constant of the weld pulling the hand to its target. Soft enough that a hand pressed
onto a support gives a little, as a robot's compliant control does (a 4 ms weld drove a held can 1 cm into
a plate, and it slid in the fingers); the verifier leads the target by the lag it causes
(``verify.simulate.HAND_LEAD_S``)."""


@dataclasses.dataclass(frozen=True)
class GripperSpec:
    """Dimensions (metres), mass (kg) and strengths of the gripper.

    Attributes:
        palm_size: Full extents of the palm box (x, y, z).
        finger_size: Full extents of a finger (x, y thickness, z length).
        pad_friction: Sliding friction of the finger pads.
        pad_thickness: The rubber pad on each finger's inner face (m); the rest of the
            finger's thickness is its shell.
        shell_friction: Sliding friction of the fingers' shells and the palm: bare metal
            and plastic, so that a finger brushing a cup's wall slides along it rather
            than carrying the cup off.
        grip_force: Force limit of each finger's actuator (N).
        finger_gain: Position gain of the finger actuators (N/m).
        mass: Total mass of the hand.
    """

    palm_size: tuple[float, float, float] = (0.06, 0.2, 0.066)
    finger_size: tuple[float, float, float] = (0.02, 0.012, 0.054)
    pad_friction: float = 1.5
    pad_thickness: float = 0.003
    shell_friction: float = 0.3
    grip_force: float = 10.0
    finger_gain: float = 1000.0
    mass: float = 0.73


GRIPPER_PRIORITY = 2
"""The gripper's geoms outrank the objects' (1) and the table's (0): their own friction (rubber pads,
bare metal shells) rules every contact they make."""

NAMES = {
    "target": "gripper_target",
    "hand": "gripper",
    "left": "finger_left",
    "right": "finger_right",
    "left_joint": "finger_left_slide",
    "right_joint": "finger_right_slide",
    "left_actuator": "finger_left_position",
    "right_actuator": "finger_right_position",
    "left_pad": "finger_left_pad",
    "right_pad": "finger_right_pad",
}


def add_gripper(
    spec: mujoco.MjSpec, position: np.ndarray, quaternion: np.ndarray, gripper: GripperSpec | None = None
) -> None:
    """Adds the mocap target, the welded hand, its fingers and actuators to ``spec``.

    Args:
        spec: The model being built.
        position: Initial grasp-centre position (3,), world frame (m).
        quaternion: Initial orientation ``[w, x, y, z]``.
        gripper: Dimensions and strengths; Franka Hand defaults when None.
    """
    g = gripper or GripperSpec()
    target = spec.worldbody.add_body(name=NAMES["target"], mocap=True, pos=position, quat=quaternion)
    target.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.005, 0, 0], contype=0, conaffinity=0,
                    group=5, rgba=[1, 0, 0, 0.3])  # fmt: skip
    hand = spec.worldbody.add_body(name=NAMES["hand"], pos=position, quat=quaternion, gravcomp=1.0)
    hand.add_freejoint(name="gripper_free")
    finger_length = g.finger_size[2]
    palm_z = -(finger_length - FINGERTIP_BELOW + g.palm_size[2] / 2)
    hand.add_geom(name="gripper_palm", type=mujoco.mjtGeom.mjGEOM_BOX, size=np.array(g.palm_size) / 2,
                  pos=[0, 0, palm_z], mass=g.mass * 0.8, rgba=[0.85, 0.85, 0.88, 1], group=1,
                  friction=[g.shell_friction, 0.005, 0.0001], priority=GRIPPER_PRIORITY,
                  solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP)  # fmt: skip
    for side, sign in (("left", 1.0), ("right", -1.0)):
        finger = hand.add_body(name=NAMES[side], pos=[0, 0, 0], gravcomp=1.0)
        finger.add_joint(name=NAMES[f"{side}_joint"], type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, sign, 0],
                         range=[0.0, MAX_OPENING / 2], damping=20.0, armature=0.01)  # fmt: skip
        # The pad's inner face lies on the joint origin plane (opening = 2 x joint position);
        # the fingertip reaches FINGERTIP_BELOW past the grasp centre, the rest is towards the palm.
        # Only the pad grips: the shell behind it slides on what it brushes.
        width, thickness, length = g.finger_size
        pad, shell = g.pad_thickness, thickness - g.pad_thickness
        centre_z = FINGERTIP_BELOW - length / 2
        finger.add_geom(name=NAMES[f"{side}_pad"], type=mujoco.mjtGeom.mjGEOM_BOX,
                        size=[width / 2, pad / 2, length / 2], pos=[0, sign * pad / 2, centre_z],
                        mass=g.mass * 0.1 * pad / thickness, friction=[g.pad_friction, 0.02, 0.001], condim=4,
                        rgba=[0.2, 0.2, 0.22, 1], group=1, priority=GRIPPER_PRIORITY,
                        solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP)  # fmt: skip
        finger.add_geom(name=f"finger_{side}_shell", type=mujoco.mjtGeom.mjGEOM_BOX,
                        size=[width / 2, shell / 2, length / 2], pos=[0, sign * (pad + shell / 2), centre_z],
                        mass=g.mass * 0.1 * shell / thickness, friction=[g.shell_friction, 0.005, 0.0001],
                        rgba=[0.55, 0.55, 0.58, 1], group=1, priority=GRIPPER_PRIORITY,
                        solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP)  # fmt: skip
        actuator = spec.add_actuator(name=NAMES[f"{side}_actuator"], target=NAMES[f"{side}_joint"],
                                     trntype=mujoco.mjtTrn.mjTRN_JOINT)  # fmt: skip
        actuator.set_to_position(kp=g.finger_gain, kv=0.0)
        actuator.forcelimited = True
        actuator.forcerange = [-g.grip_force, g.grip_force]
        actuator.ctrlrange = [0.0, MAX_OPENING / 2]
        actuator.ctrllimited = True
    weld = spec.add_equality(name="gripper_weld", type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                             name1=NAMES["target"], name2=NAMES["hand"])  # fmt: skip
    # anchor (3) = 0, relative pose (3 + 4) = identity, torque scale = 1, as an XML <weld> compiles.
    weld.data = np.array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1], float)
    weld.solref = [WELD_TIME_CONSTANT, 1.0]


def finger_command(opening: float, closing: bool) -> float:
    """The finger joint target (m) for a recorded opening in [0, 1].

    While the gripper is closed on an object the target goes :data:`SQUEEZE` past the
    recorded width, so the fingers squeeze with a force set by the actuator's
    gain and limit, as a real gripper's force-controlled grasp does.
    """
    half = opening * MAX_OPENING / 2
    return max(0.0, half - SQUEEZE) if closing else half
