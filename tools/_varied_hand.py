"""The hand and arm of a varied demo as capsules, in the hand's frame.

A grasp from above: the palm on the object's top, four fingers down its camera-facing
side (how far they reach sets how much of the object they hide), the thumb on the far
side; wrist, forearm and a sleeved upper arm lead away and up, out of the picture.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from _varied_scene import Item, Scene


@dataclasses.dataclass(frozen=True)
class Capsule:
    """One part of the hand or arm: a capsule from ``a`` to ``b``.

    Attributes:
        name: The part (``palm``, ``finger_1``...).
        a: One end, hand frame (m), (3,).
        b: The other end, hand frame (m), (3,).
        radius: Metres.
        squash: A unit axis (3,) along which the capsule is flattened, or None.
        squash_factor: The thickness along ``squash`` relative to the radius.
        material: ``skin`` or ``sleeve``.
    """

    name: str
    a: np.ndarray
    b: np.ndarray
    radius: float
    squash: np.ndarray | None = None
    squash_factor: float = 1.0
    material: str = "skin"


def _half_extent_along(item: Item, direction: np.ndarray) -> float:
    """Half the object's footprint along a horizontal unit vector, at its start yaw (m)."""
    if item.shape != "box":
        return float(item.size[0] / 2)
    c, s = np.cos(item.yaw), np.sin(item.yaw)
    along_x, along_y = abs(direction @ [c, s]), abs(direction @ [-s, c])
    return float(item.size[0] / 2 * along_x + item.size[1] / 2 * along_y)


def hand_parts(scene: Scene, finger_reach: float | None = None) -> list[Capsule]:
    """The hand and arm as capsules in the hand frame (the grasp centre, world-aligned at the grasp).

    A grasp from above: the palm lies on the object's top, the four fingers hang down
    its camera-facing side (how far is ``finger_reach``, which sets how much of the
    object they hide), the thumb on the far side; the wrist, forearm and sleeved
    upper arm lead away along ``scene.approach`` and up, out of the picture.

    Args:
        scene: The scene.
        finger_reach: Metres the fingers reach below the object's top; the scene's when None.

    Returns:
        The capsules.
    """
    reach = scene.finger_reach if finger_reach is None else finger_reach
    item, k = scene.manipulated, scene.hand_scale
    up = np.array([0.0, 0.0, 1.0])
    toward = np.r_[scene.towards_camera, 0.0]
    away = np.r_[scene.approach, 0.0]
    top, bottom = item.size[2] / 2, -item.size[2] / 2
    front = _half_extent_along(item, scene.towards_camera)
    finger = 0.0085 * k
    knuckles = toward * (front + finger + 0.003) + up * (top + 0.012 * k)
    wrist = away * (0.07 * k) + up * (top + 0.035 * k)
    axis = (wrist - knuckles) / np.linalg.norm(wrist - knuckles)
    across = np.cross(up, axis)
    across /= np.linalg.norm(across)
    normal = np.cross(axis, across)
    parts = [Capsule("palm", knuckles + 0.022 * k * axis, wrist, 0.042 * k, normal, 0.38)]
    for index, (offset, length) in enumerate(
        zip((-1.5, -0.5, 0.5, 1.5), (0.92, 1.0, 0.96, 0.8), strict=True)
    ):
        root = knuckles + across * offset * 2.15 * finger
        tip = root - up * max(reach * length, 0.0) - toward * 0.006
        tip[2] = max(tip[2], bottom + finger)
        parts.append(Capsule(f"finger_{index + 1}", root, tip, finger))
    back = _half_extent_along(item, -scene.towards_camera)
    thumb_root = -toward * (back + 1.2 * finger + 0.002) + up * (top + 0.004) + across * 0.012 * k
    thumb_tip = thumb_root - up * 0.45 * item.size[2]
    thumb_tip[2] = max(thumb_tip[2], bottom + finger)
    parts.append(Capsule("thumb", thumb_root, thumb_tip, 1.15 * finger))
    elbow = wrist + away * 0.25 * k + up * 0.11 * k
    middle = (wrist + elbow) / 2
    parts += [
        Capsule("wrist", wrist - 0.01 * axis, middle, 0.025 * k),
        Capsule("forearm", middle, elbow, 0.031 * k),
        Capsule("upper_arm", elbow, elbow + away * 0.3 * k + up * 0.3 * k, 0.043 * k, material="sleeve"),
    ]
    return parts
