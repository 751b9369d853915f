"""Play a gripper's script in a task scene's MuJoCo model, frame by frame, as the task generators share it.

The hand (``_demo_gripper``: its mocap body is the model's only one, its fingers its only actuators) is held
at the script's first pose for ``SETTLE_S`` while the objects come to rest on the table; then video time
starts (0 on the first frame). Before every step the mocap target and the fingers are set to the pose the
caller gives for that time; after it the caller looks at the contacts (``on_step``); on every video frame
the bodies' poses are kept (``FrameState``) and the caller films (``on_frame``). Times are video seconds,
poses world frame (m, quaternions [w, x, y, z]). Used by tools/_shelve_sim.py and _insert_sim.py.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
from _demo_sim import SETTLE_S, FrameState

PoseAt = Callable[[float], tuple[np.ndarray, np.ndarray, float]]  # time -> position, quaternion, grip (m)


def play(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    pose_at: PoseAt,
    frames: int,
    fps: float,
    bodies: tuple[str, ...],
    on_step: Callable[[float], None],
    on_frame: Callable[[int, mujoco.MjData], None],
) -> list[FrameState]:
    """Settle, then run ``frames`` video frames at ``fps``.

    Args:
        model: The scene, with the gripper.
        data: Its state, fresh (``mujoco.MjData(model)``); left at the last frame.
        pose_at: Video time (s) to the grasp centre (world, m, (3,)), the gripper's rotation [w, x, y, z]
            and the per-finger opening (m, 0 closed): a script's ``pose_at``, or one that reacts to what
            ``on_step`` saw.
        frames: Number of video frames.
        fps: Frame rate.
        bodies: The bodies whose poses each frame keeps (``hand`` among them).
        on_step: Called with the video time after every simulation step.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        One state per video frame.
    """
    fingers = (model.joint("finger_left").qposadr[0], model.joint("finger_right").qposadr[0])

    def command(time: float) -> None:
        position, quat, grip = pose_at(time)
        data.mocap_pos[0], data.mocap_quat[0] = position, quat
        data.ctrl[:] = grip

    command(0.0)
    while data.time < SETTLE_S:
        mujoco.mj_step(model, data)
    start = data.time
    states = []
    for index in range(frames):
        while data.time - start < index / fps - 1e-9:
            command(data.time - start)
            mujoco.mj_step(model, data)
            on_step(data.time - start)
        poses = {b: (data.body(b).xpos.copy(), data.body(b).xquat.copy()) for b in bodies}
        q_fingers = (float(data.qpos[fingers[0]]), float(data.qpos[fingers[1]]))
        states.append(FrameState(data.time - start, poses, q_fingers))
        on_frame(index, data)
    return states
