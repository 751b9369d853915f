"""Build a gripper's script (``_articulated_motion.Script``) from straight and turning segments.

Each segment starts where the last one ended. A *straight* one moves the grasp centre on a line and turns
the hand by slerp (between two poses differing by a turn about a fixed axis, that turn); a *turning* one
turns the hand about a fixed line. The grip (per-finger opening, m, 0 closed) is blended over a segment.
Each segment's duration is its name's share of the video (the shares are scaled to its length). Poses
are in the world frame (m, quaternions [w, x, y, z]). Used by tools/_pour_motion.py, _hang_motion.py,
_shelve_motion.py and _insert_motion.py.
"""

from __future__ import annotations

import numpy as np
from _articulated_motion import Path, Script, Segment, quat_slerp
from scipy.spatial.transform import Rotation


def from_above(yaw: float) -> np.ndarray:
    """The gripper's rotation [w, x, y, z] taking a thing from above: z (approach) straight down, y (the
    fingers' opening) level, turned ``yaw`` (rad) about world z from world +y, x = y x z."""
    y = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
    z = np.array([0.0, 0.0, -1.0])
    return Rotation.from_matrix(np.stack([np.cross(y, z), y, z], axis=1)).as_quat(scalar_first=True)


class Plan:
    """Appends segments, each from where the last one ended.

    Args:
        position: The grasp centre at the start, world (m), (3,).
        quat: The gripper's rotation at the start [w, x, y, z], world.
        grip: The per-finger opening at the start (m).
        shares: Each segment name's share of the video (any unit; scaled to the video's length).
    """

    def __init__(self, position: np.ndarray, quat: np.ndarray, grip: float, shares: dict[str, float]) -> None:
        self.position, self.quat, self.grip = np.asarray(position, float), quat, grip
        self.shares = shares
        self.items: list[tuple[str, tuple[float, float], Path]] = []

    def to(self, name: str, position=None, quat=None, grip=None) -> None:
        """A straight segment to ``position`` and ``quat`` (None keeps the last) with the grip blended to
        ``grip``."""
        p0, q0 = self.position, self.quat
        p1 = p0 if position is None else np.asarray(position, float)
        q1 = q0 if quat is None else quat

        def path(s: float) -> tuple[np.ndarray, np.ndarray]:
            return p0 + s * (p1 - p0), quat_slerp(q0, q1, s)

        end = self.grip if grip is None else grip
        self.items.append((name, (self.grip, end), path))
        self.position, self.quat, self.grip = p1, q1, end

    def turn(self, name: str, pivot: np.ndarray, axis: np.ndarray, angle: float) -> None:
        """A segment turning the hand by ``angle`` (rad) about the line through ``pivot`` (world, m) along the
        unit ``axis``."""
        p0, q0 = self.position, self.quat

        def path(s: float) -> tuple[np.ndarray, np.ndarray]:
            turn = Rotation.from_rotvec(s * angle * np.asarray(axis))
            return pivot + turn.apply(p0 - pivot), (turn * Rotation.from_quat(q0, scalar_first=True)).as_quat(
                scalar_first=True
            )

        self.items.append((name, (self.grip, self.grip), path))
        self.position, self.quat = path(1.0)

    def script(self, duration: float) -> Script:
        """The script of the segments so far, their shares scaled to ``duration`` (s)."""
        total = sum(self.shares[name] for name, _, _ in self.items)
        segments, time = [], 0.0
        for name, grip, path in self.items:
            end = time + duration * self.shares[name] / total
            segments.append(Segment(time, end, name, grip, path))
            time = end
        return Script(segments)
