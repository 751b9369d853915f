"""A floating parallel-jaw gripper with roughly Franka Hand dimensions.

Its body ``hand`` has the *gripper frame*: origin at the grasp centre (midway between
the finger pads), z along the approach direction (palm to fingertips), y along the
finger opening direction. A mocap body ``gripper_target`` is welded to it (anchors at
both origins, torque scale 1) and drives it; gravity is compensated. Each finger is a
slide joint with a position actuator (per-finger opening in metres, 0 = closed) and a
rubber pad (high friction, torsional friction, condim 4) on its inner face.
"""

from __future__ import annotations

import mujoco
import numpy as np

# Gripper dimensions in metres (roughly a Franka Hand).
FINGER_TRAVEL = 0.04  # per finger; full opening 0.08
PAD_HALF = (0.011, 0.002, 0.011)  # pad half sizes in the gripper frame (x, y, z)
FINGER_HALF = (0.011, 0.006, 0.027)  # finger link half sizes
FINGERTIP_BELOW_CENTRE = 0.011  # how far the fingertips reach past the grasp centre
PALM_HALF = (0.032, 0.102, 0.028)


def add_gripper(spec: mujoco.MjSpec, pos: np.ndarray, quat: np.ndarray, group: int) -> None:
    """Add the gripper, its finger actuators and the mocap body that drives it.

    Args:
        spec: The scene being built.
        pos: Initial grasp centre, world frame (m), shape (3,).
        quat: Initial gripper orientation [w, x, y, z], world frame.
        group: Geom group of all gripper geoms.
    """
    world = spec.worldbody
    world.add_body(name="gripper_target", mocap=True, pos=pos.tolist(), quat=quat.tolist())
    hand = world.add_body(name="hand", pos=pos.tolist(), quat=quat.tolist(), gravcomp=1)
    hand.add_freejoint(name="hand")
    look = {"group": group}
    white = [0.92, 0.92, 0.9, 1]
    finger_top = FINGERTIP_BELOW_CENTRE - 2 * FINGER_HALF[2]
    hand.add_geom(
        name="palm",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(PALM_HALF),
        pos=[0, 0, finger_top - PALM_HALF[2]],
        mass=0.6,
        rgba=white,
        **look,
    )
    hand.add_geom(
        name="flange",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[0.032, 0.018, 0],
        pos=[0, 0, finger_top - 2 * PALM_HALF[2] - 0.018],
        mass=0.2,
        rgba=[0.25, 0.25, 0.27, 1],
        **look,
    )
    for side, sign in (("left", 1.0), ("right", -1.0)):
        finger = hand.add_body(name=f"finger_{side}", gravcomp=1)
        finger.add_joint(
            name=f"finger_{side}",
            type=mujoco.mjtJoint.mjJNT_SLIDE,
            axis=[0, sign, 0],
            range=[0, FINGER_TRAVEL],
            damping=20.0,
            armature=0.05,
        )
        pad_y = sign * PAD_HALF[1]
        finger.add_geom(
            name=f"finger_{side}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=list(FINGER_HALF),
            pos=[0, sign * (2 * PAD_HALF[1] + FINGER_HALF[1]), finger_top + FINGER_HALF[2]],
            mass=0.03,
            rgba=white,
            **look,
        )
        finger.add_geom(
            name=f"pad_{side}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=list(PAD_HALF),
            pos=[0, pad_y, 0],
            mass=0.005,
            rgba=[0.12, 0.12, 0.13, 1],
            friction=[1.5, 0.02, 0.0002],
            condim=4,
            priority=1,
            **look,
        )
        actuator = spec.add_actuator(
            name=f"finger_{side}",
            target=f"finger_{side}",
            trntype=mujoco.mjtTrn.mjTRN_JOINT,
            ctrlrange=[0, FINGER_TRAVEL],
            forcerange=[-25, 25],
        )
        actuator.set_to_position(kp=600.0)
    weld = spec.add_equality(
        name="gripper_drive",
        type=mujoco.mjtEq.mjEQ_WELD,
        objtype=mujoco.mjtObj.mjOBJ_BODY,
        name1="gripper_target",
        name2="hand",
        solref=[0.01, 1.0],
    )
    data = np.zeros(len(weld.data))
    data[10] = 1.0  # anchors at the body origins, relative pose from qpos0, torque scale 1
    weld.data = data
