"""The gripper's scripts of the articulated scenes: straight moves and moves that follow the joint.

A script is a list of segments, each a path of the grasp centre and the gripper's rotation (the
contract's gripper frame: z the approach direction, y the direction the fingers open) over a
minimum-jerk phase, and a per-finger opening (m, 0 closed) blended over it. A *straight* segment
goes from the pose where the last one ended to a new one (the position on a line, the rotation
by slerp); a *following* segment keeps the hand fixed in the part's frame while the joint goes
from one value to another, so that the hand moves along the door's arc or the drawer's line.
Poses are built in the body frame (``_articulated_scene``) and given in the world frame.

Segment durations are shares of the video's length (``plan_script`` scales them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from _articulated_scene import ArticulatedLayout
from _demo_gripper import FINGER_HALF, FINGER_TRAVEL, PAD_HALF
from _demo_motion import minimum_jerk
from scipy.spatial.transform import Rotation

MIN_DURATION = {"microwave": 6.0, "cabinet": 4.0, "drawer": 3.5}  # seconds; faster throws the cup or slips
FINGER_OUTER = 2 * PAD_HALF[1] + 2 * FINGER_HALF[1]  # closed finger's outer face from the grasp centre (m)
HAND_ABOVE_CENTRE = 0.135  # flange top above the grasp centre, along -z of the gripper (m)
PALM_HALF_WIDTH = 0.102  # palm's half extent along the gripper's y (m)
OPEN, CLOSED = FINGER_TRAVEL, 0.0

Path = Callable[[float], tuple[np.ndarray, np.ndarray]]  # phase -> (position (3,), quaternion [w, x, y, z])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions [w, x, y, z] (the rotation b, then a)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])  # fmt: skip


def quat_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """The quaternion [w, x, y, z] of a turn by ``angle`` (rad) about the unit ``axis``."""
    return np.r_[np.cos(angle / 2), np.sin(angle / 2) * np.asarray(axis, float)]


def quat_slerp(q0: np.ndarray, q1: np.ndarray, s: float) -> np.ndarray:
    """Spherical interpolation from ``q0`` (s = 0) to ``q1`` (s = 1) the short way round."""
    dot = float(q0 @ q1)
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + s * (q1 - q0)
        return q / np.linalg.norm(q)
    angle = np.arccos(dot)
    return (np.sin((1 - s) * angle) * q0 + np.sin(s * angle) * q1) / np.sin(angle)


def _quat(rotation: Rotation) -> np.ndarray:
    return rotation.as_quat(scalar_first=True)


@dataclass(frozen=True)
class Segment:
    """One segment of a script.

    Attributes:
        name: What the hand does (``approach``, ``push``...).
        start: Video time where it starts (s).
        end: Video time where it ends (s).
        grip: Per-finger opening at its start and at its end (m).
        path: Blended phase in [0, 1] to the grasp centre (world frame, m) and the gripper's rotation.
        joint: For a following segment, the joint's values at its start and end; else None.
    """

    start: float
    end: float
    name: str
    grip: tuple[float, float]
    path: Path
    joint: tuple[float, float] | None = None


@dataclass(frozen=True)
class Script:
    """The gripper's whole script (segments in time order, the first starting at 0)."""

    segments: list[Segment]

    def pose_at(self, time: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Grasp centre (world, m), rotation [w, x, y, z] (world) and per-finger opening (m) at ``time`` (s)."""
        segment = self.segments[-1]
        for candidate in self.segments:
            if time <= candidate.end:
                segment = candidate
                break
        phase = (time - segment.start) / max(segment.end - segment.start, 1e-9)
        s = min(max(float(minimum_jerk(phase)), 0.0), 1.0)
        position, quat = segment.path(s)
        grip = segment.grip[0] + s * (segment.grip[1] - segment.grip[0])
        return position, quat, grip

    def segment(self, name: str) -> Segment:
        """The first segment called ``name``."""
        return next(s for s in self.segments if s.name == name)

    def sample_points(self, step: float = 0.05) -> np.ndarray:
        """Grasp centres and flange tops every ``step`` seconds (world, m), (N, 3): what the camera must see."""
        points = []
        for time in np.arange(0.0, self.segments[-1].end + 1e-9, step):
            position, quat, _ = self.pose_at(time)
            up = Rotation.from_quat(quat, scalar_first=True).apply([0.0, 0.0, -HAND_ABOVE_CENTRE])
            points += [position, position + up]
        return np.array(points)


class _Builder:
    """Appends segments in the body frame, each from where the last one ended."""

    def __init__(
        self, layout: ArticulatedLayout, position: np.ndarray, rotation: Rotation, grip: float
    ) -> None:
        self.layout = layout
        self.position, self.quat, self.grip = np.asarray(position, float), _quat(rotation), grip
        self.items: list[tuple[str, float, tuple[float, float], Path, tuple[float, float] | None]] = []
        self._yaw = quat_about(np.array([0.0, 0.0, 1.0]), layout.yaw)

    def _world(self, path: Path) -> Path:
        rot, origin, yaw = self.layout.rotation, self.layout.origin, self._yaw

        def world(s: float) -> tuple[np.ndarray, np.ndarray]:
            position, quat = path(s)
            return origin + rot @ position, quat_mul(yaw, quat)

        return world

    def _part(self, q: float) -> tuple[np.ndarray, np.ndarray]:
        """Origin (body frame) and rotation quaternion of the part frame with the joint at ``q``."""
        layout = self.layout
        if layout.joint_type == "hinge":
            return layout.pivot, quat_about(layout.axis, q)
        return layout.pivot + layout.axis * q, np.array([1.0, 0.0, 0.0, 0.0])

    def to(self, name: str, weight: float, position=None, rotation: Rotation | np.ndarray | None = None,
           grip=None) -> None:  # fmt: skip
        """A straight segment to ``position`` and ``rotation`` (body frame; None keeps the last)."""
        p0, q0 = self.position, self.quat
        p1 = p0 if position is None else np.asarray(position, float)
        q1 = q0 if rotation is None else (_quat(rotation) if isinstance(rotation, Rotation) else rotation)

        def path(s: float) -> tuple[np.ndarray, np.ndarray]:
            return p0 + s * (p1 - p0), quat_slerp(q0, q1, s)

        self._append(name, weight, path, grip, None)
        self.position, self.quat = p1, q1

    def to_part(self, name: str, weight: float, q: float, position, rotation: Rotation, grip=None) -> None:
        """A straight segment to a pose given in the part's frame with the joint at ``q``."""
        origin, turn = self._part(q)
        rot = Rotation.from_quat(turn, scalar_first=True)
        self.to(name, weight, origin + rot.apply(position), quat_mul(turn, _quat(rotation)), grip)

    def follow(
        self, name: str, weight: float, q0: float, q1: float, position, rotation: Rotation, grip=None
    ) -> None:
        """A segment with the hand fixed in the part's frame (``position``, ``rotation``) while q goes q0 -> q1."""
        local, hand = np.asarray(position, float), _quat(rotation)
        layout = self.layout

        def path(s: float) -> tuple[np.ndarray, np.ndarray]:
            q = q0 + s * (q1 - q0)
            if layout.joint_type == "slide":
                return layout.pivot + layout.axis * q + local, hand
            rot, origin = layout.part_in_body(q)
            return origin + rot @ local, quat_mul(quat_about(layout.axis, q), hand)

        start, _ = path(0.0)
        if np.linalg.norm(start - self.position) > 1e-6:
            raise AssertionError(f"segment {name} does not start where the hand is")
        self._append(name, weight, path, grip, (q0, q1))
        self.position, self.quat = path(1.0)

    def _append(self, name, weight, path, grip, joint) -> None:
        end = self.grip if grip is None else grip
        self.items.append((name, weight, (self.grip, end), self._world(path), joint))
        self.grip = end

    def script(self, duration: float) -> Script:
        total = sum(item[1] for item in self.items)
        segments, time = [], 0.0
        for name, weight, grip, path, joint in self.items:
            end = time + duration * weight / total
            segments.append(Segment(time, end, name, grip, path, joint))
            time = end
        return Script(segments)


def _frame(x, y, z) -> Rotation:
    """The rotation whose columns are the given axes."""
    return Rotation.from_matrix(np.stack([x, y, z], axis=1).astype(float))


def _microwave(layout: ArticulatedLayout, let_go: float = 0.0) -> _Builder:
    """Pick the cup, set it in the cavity, leave; close the door with the closed fingers' outer faces (with
    ``let_go``, a quick push that lets go with that share of the swing still to go: the door coasts on)."""
    s, (_, d, h) = layout.hinge_side, layout.size
    x0, x1, y0, y1, floor, ceiling = layout.cavity
    cup = layout.cup
    cup_b = layout.rotation.T @ np.r_[cup.xy - layout.origin[:2], 0.0]
    z_grasp = cup.height - 0.015  # grasp centre above the cup's bottom: the pads on the rim's band
    z_carry, z_place = z_grasp + floor + 0.012, z_grasp + floor + 0.004
    x_in, y_in, front_y = (x0 + x1) / 2 - s * 0.015, (y0 + y1) / 2, d / 2 + 0.10
    if z_carry + HAND_ABOVE_CENTRE + 0.008 > ceiling:
        raise ValueError(
            f"a {cup.height * 100:.1f} cm cup held from above does not fit the {h * 100:.0f} cm microwave"
        )
    if (x1 - x0) / 2 - 0.015 < PALM_HALF_WIDTH + 0.01:
        raise ValueError(f"the palm does not fit the microwave's {(x1 - x0) * 100:.0f} cm wide opening")
    carry = _frame([0, 1, 0], [1, 0, 0], [0, 0, -1])  # fingers open across the opening
    door = layout.part_size
    radius = door[0] - 0.05
    z_push = door[2] - 0.023  # palm bottom 2 cm above the door's top
    z_over = door[2] + 0.011 + 0.035  # fingertips 3.5 cm above it
    q0 = layout.q_start
    push_options = [_frame(np.cross(y, [0, 0, -1]), y, [0, 0, -1]) for y in ([0, 1, 0], [0, -1, 0])]
    at_q0 = Rotation.from_matrix(layout.part_in_body(q0)[0])
    push = min(push_options, key=lambda r: ((at_q0 * r) * carry.inv()).magnitude())
    b = _Builder(layout, cup_b + [0.0, 0.07, z_grasp + 0.14], carry, OPEN)
    b.to("hold", 0.03)
    b.to("approach", 0.07, cup_b + [0, 0, z_grasp + 0.07])
    b.to("descend", 0.05, cup_b + [0, 0, z_grasp])
    b.to("close", 0.04, grip=CLOSED)
    b.to("lift", 0.04, cup_b + [0, 0, z_carry])
    b.to("carry", 0.08, [x_in, front_y, z_carry])
    b.to("insert", 0.07, [x_in, y_in, z_carry])
    b.to("lower", 0.04, [x_in, y_in, z_place])
    b.to("release", 0.03, grip=OPEN)
    b.to("settle", 0.03)
    b.to("withdraw", 0.06, [x_in, front_y, z_place])
    b.to("rise", 0.06, [x_in, front_y + 0.02, layout.pivot[2] + z_over], grip=CLOSED)
    b.to_part("over", 0.07, q0, [-s * radius, FINGER_OUTER + 0.03, z_over], push)
    b.to_part("down", 0.05, q0, [-s * radius, FINGER_OUTER + 0.03, z_push], push)
    b.to_part("touch", 0.04, q0, [-s * radius, FINGER_OUTER - 0.002, z_push], push)
    if let_go > 0.0:
        q_mid = layout.q_goal + let_go * (q0 - layout.q_goal)
        b.follow("push", 0.04, q0, q_mid, [-s * radius, FINGER_OUTER - 0.002, z_push], push)
        b.to_part("leave", 0.05, q_mid, [-s * radius, FINGER_OUTER + 0.07, z_push + 0.05], push)
        b.to("rest", 0.10)
        return b
    b.follow("push", 0.13, q0, layout.q_goal, [-s * radius, FINGER_OUTER - 0.002, z_push], push)
    b.to("press", 0.03)
    b.to_part("leave", 0.05, layout.q_goal, [-s * radius, FINGER_OUTER + 0.07, z_push + 0.05], push)
    b.to("rest", 0.03)
    return b


def _pull(layout: ArticulatedLayout) -> _Builder:
    """Grasp the handle from in front, pull the part open along its joint, let go, back off."""
    handle = layout.handle.centre
    if layout.handle.axis == 2:  # a vertical bar: the fingers close across it, level
        grasp = _frame([0, 0, -1], [1, 0, 0], [0, -1, 0])
    else:  # a level bar: the fingers close from above and below
        grasp = _frame([1, 0, 0], [0, 0, 1], [0, -1, 0])
    if layout.pivot[2] + handle[2] < PALM_HALF_WIDTH + 0.015 and layout.handle.axis == 0:
        raise ValueError("the handle is too low for the palm above the table")
    out = np.array([0.0, 1.0, 0.0])
    b = _Builder(layout, layout.pivot + handle + 0.16 * out + [0, 0, 0.05], grasp, OPEN)
    opening = "arc" if layout.joint_type == "hinge" else "pull"
    b.to("hold", 0.05)
    b.to_part("approach", 0.12, 0.0, handle + 0.07 * out, grasp)
    b.to_part("reach", 0.10, 0.0, handle, grasp)
    b.to("close", 0.08, grip=CLOSED)
    b.follow(opening, 0.35 if opening == "arc" else 0.30, 0.0, layout.q_goal, handle, grasp)
    b.to("hold_open", 0.05)
    b.to("release", 0.06, grip=OPEN)
    b.to_part("withdraw", 0.10 if opening == "arc" else 0.12, layout.q_goal, handle + 0.10 * out, grasp)
    b.to("rest", 0.09 if opening == "arc" else 0.12)
    return b


def plan_script(layout: ArticulatedLayout, duration: float, let_go: float = 0.0) -> Script:
    """The gripper's script for the scene.

    Args:
        layout: The scene.
        duration: Video length (s); the segments' shares are scaled to it.
        let_go: The microwave's door is let go with this share of its swing to go (0: pushed shut).

    Returns:
        The script, in the world frame.

    Raises:
        ValueError: If the video is too short for the script or the gripper does not fit.
    """
    shortest = MIN_DURATION[layout.scene]
    if duration < shortest:
        raise ValueError(
            f"the video lasts {duration:.2f} s; the {layout.scene} script needs at least {shortest} s "
            "(raise --frames or lower --fps)"
        )
    if let_go and layout.scene != "microwave":
        raise ValueError("only the microwave's door is pushed and let go (--let-go)")
    builder = _microwave(layout, let_go) if layout.scene == "microwave" else _pull(layout)
    return builder.script(duration)
