"""An articulated object's moving parts: a door on a hinge, a drawer on a slide (docs/geometry.md).

A part is its own shape with its own pose, joined to its body by one joint. The joint is a
hinge (an axis line: a direction and a point on it) or a slide (a direction), with a range
``[lo, hi]`` of its value ``q`` (radians or metres) and the end the part is closed at
(``closed``, one of the range's ends). A hinge's ``q`` turns the part about ``axis`` by the
right-hand rule, a slide's moves it along ``axis``; the part's shape and pose are given at
``q = q_shape`` (the value on the frame its shape was measured on), so its pose at any ``q``
is that pose moved by ``q - q_shape``.

Bodies with parts stay where they are (a cabinet, a microwave): the joint is kept in the
world frame, which is the body's frame up to a fixed pose.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from .camera import pose_matrix
from .shapes import Shape

JOINT_TYPES = ("hinge", "slide")
"""What a part's joint may be."""
DEFAULT_DAMPING = {"hinge": 0.05, "slide": 2.0}
"""A joint's damping when the video does not show it: N*m*s/rad for a hinge (a cabinet door swung by
hand coasts for about a second), N*s/m for a slide (a drawer on runners)."""
PART_ARMATURE = 0.001
"""kg*m^2 (or kg) a part's joint adds to what it moves in the simulation (steadies a light door)."""
DEFAULT_FRICTIONLOSS = {"hinge": 0.02, "slide": 0.3}
"""A joint's dry friction when the video does not show it: N*m for a hinge, N for a slide: enough that a
door or drawer stays where it is left, small beside what a hand's push gives."""


@dataclasses.dataclass(frozen=True)
class Joint:
    """A part's joint to its body, in the world frame.

    Attributes:
        type: ``hinge`` or ``slide``.
        axis: ``(3,)`` unit direction, world frame.
        pivot: ``(3,)`` a point on a hinge's axis line (world, m); for a slide, the part's centre
            at ``q = 0``.
        range: ``(lo, hi)``: radians (hinge) or metres (slide).
        closed: The value ``q`` at which the part is closed: ``range[0]`` or ``range[1]``.
        damping: N*m*s/rad or N*s/m.
        frictionloss: N*m or N.
        source: ``estimated`` (from the part's motion) or ``given`` (prompts.json).
    """

    type: str
    axis: np.ndarray
    pivot: np.ndarray
    range: tuple[float, float]
    closed: float = 0.0
    damping: float | None = None
    frictionloss: float | None = None
    source: str = "estimated"

    def __post_init__(self) -> None:
        if self.type not in JOINT_TYPES:
            raise ValueError(f"unknown joint type {self.type!r}; a joint is a {' or a '.join(JOINT_TYPES)}")
        axis = np.asarray(self.axis, float)
        object.__setattr__(self, "axis", axis / max(np.linalg.norm(axis), 1e-12))
        object.__setattr__(self, "pivot", np.asarray(self.pivot, float))
        object.__setattr__(self, "range", (float(min(self.range)), float(max(self.range))))
        if self.damping is None:
            object.__setattr__(self, "damping", DEFAULT_DAMPING[self.type])
        if self.frictionloss is None:
            object.__setattr__(self, "frictionloss", DEFAULT_FRICTIONLOSS[self.type])

    @property
    def open_end(self) -> float:
        """The end of the range away from closed."""
        return self.range[1] if self.closed == self.range[0] else self.range[0]

    def opening(self, q: float) -> float:
        """The share of the range ``q`` is open by: 0 closed, 1 at the other end."""
        span = self.open_end - self.closed
        return float((q - self.closed) / span) if abs(span) > 1e-12 else 0.0

    def motion(self, q: float) -> np.ndarray:
        """4x4 world transform that moves a part from ``q = 0`` to ``q``."""
        if self.type == "slide":
            return pose_matrix(self.axis * q, np.eye(3))
        turn = Rotation.from_rotvec(self.axis * q).as_matrix()
        return pose_matrix(self.pivot - turn @ self.pivot, turn)

    def to_report(self) -> dict:
        """The contract's ``joint`` entry."""
        return {
            "type": self.type,
            "axis_world": [round(float(v), 6) for v in self.axis],
            "pivot_world": [round(float(v), 6) for v in self.pivot],
            "range": [round(v, 6) for v in self.range],
            "closed": round(float(self.closed), 6),
            "damping": round(float(self.damping), 6),
            "frictionloss": round(float(self.frictionloss), 6),
            "source": self.source,
        }

    @classmethod
    def from_report(cls, entry: dict) -> Joint:
        """A joint from its report (or prompts.json) entry."""
        lo, hi = (float(v) for v in entry["range"])
        return cls(entry["type"], np.asarray(entry["axis_world"], float), np.asarray(entry["pivot_world"], float),
                   (lo, hi), float(entry.get("closed", min(lo, hi))), entry.get("damping"),
                   entry.get("frictionloss"), entry.get("source", "estimated"))  # fmt: skip


@dataclasses.dataclass
class PartGeometry:
    """One moving part: its shape, its pose at ``q_shape``, its joint and its value per frame.

    Attributes:
        name: From prompts.json (``door``), unique within its object.
        shape: Its shape (local frame z up, origin at its box centre).
        position: ``(3,)`` its box centre at ``q = q_shape``, world frame (m).
        rotation: ``3x3`` its orientation at ``q = q_shape``, world frame.
        q_shape: The joint's value the pose is given at.
        joint: Its joint.
        q: ``(F,)`` the joint's value per video frame (NaN where the video does not measure it; filled
            by :meth:`filled_q`).
        visible: ``(F,)`` the part is seen on the frame.
    """

    name: str
    shape: Shape
    position: np.ndarray
    rotation: np.ndarray
    q_shape: float
    joint: Joint
    q: np.ndarray
    visible: np.ndarray

    def pose_at(self, q: float) -> np.ndarray:
        """4x4 world pose of the part's box centre at joint value ``q``."""
        return self.joint.motion(q - self.q_shape) @ pose_matrix(self.position, self.rotation)

    def filled_q(self) -> np.ndarray:
        """``q`` with unmeasured frames filled from their neighbours (held at the ends)."""
        q = np.asarray(self.q, float)
        known = np.flatnonzero(np.isfinite(q))
        if not len(known):
            return np.full(len(q), self.joint.closed)
        return np.interp(np.arange(len(q)), known, q[known])

    def to_report(self, object_name: str) -> dict:
        """The contract's ``objects[].parts[]`` entry."""
        quat = Rotation.from_matrix(self.rotation).as_quat()[[3, 0, 1, 2]]
        return {
            "name": self.name,
            "of": object_name,
            **self.shape.to_report(),
            "position_world": [round(float(v), 6) for v in self.position],
            "quaternion_world": [round(float(v), 6) for v in quat],
            "q_shape": round(float(self.q_shape), 6),
            "joint": self.joint.to_report(),
            "frames": [
                {"frame": i, "q": None if not np.isfinite(v) else round(float(v), 5), "visible": bool(s)}
                for i, (v, s) in enumerate(zip(self.q, self.visible, strict=True))
            ],
        }

    @classmethod
    def from_report(cls, entry: dict) -> PartGeometry:
        """A part from its report entry (:meth:`to_report`)."""
        quat = np.asarray(entry["quaternion_world"], float)
        frames = entry.get("frames", [])
        q = np.array([np.nan if f.get("q") is None else float(f["q"]) for f in frames], float)
        return cls(entry["name"], Shape.from_report(entry), np.asarray(entry["position_world"], float),
                   Rotation.from_quat(quat[[1, 2, 3, 0]]).as_matrix(), float(entry.get("q_shape", 0.0)),
                   Joint.from_report(entry["joint"]), q,
                   np.array([bool(f.get("visible", False)) for f in frames], bool))  # fmt: skip


def part_key(object_name: str, part_name: str) -> str:
    """The name a part goes by where objects are listed flat (masks, MJCF bodies, the record): ``cabinet.door``."""
    return f"{object_name}.{part_name}"


__all__ = ["DEFAULT_DAMPING", "DEFAULT_FRICTIONLOSS", "JOINT_TYPES", "Joint", "PartGeometry", "part_key"]
