"""Physical priors on an object's path, applied after it is measured.

- An object is never inside what supports it (:func:`support_height`: the table, another
  object's top, a container's inner bottom; :func:`out_of_supports`).
- Without a recording, the carried object stands where it was last seen whole until its own
  path rises (:func:`rest_until_lifted`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .camera import yaw_rotation
from .motion import Motion

if TYPE_CHECKING:
    from .stage import ObjectGeometry


def support_height(xy: np.ndarray, others: list[ObjectGeometry], below: float = np.inf) -> float:
    """Height (m, world) of the highest support surface under ``xy``: the table, or another object.

    A container supports with its inner bottom, a cabinet with its inside's floor
    and a shelf with its boards (the highest under ``below``) where ``xy`` lies over its inside, other shapes with their top, where ``xy`` lies
    inside their footprint (at their final pose) and that surface lies under
    ``below`` (the supported object's centre): a block set down on a plate ends over
    the plate's footprint, and the plate is not on it; a can let go into a cup ends
    inside the cup's, and the cup is not on it; a cup put in a microwave stands on
    its floor, not on the table under it.
    """
    height = 0.0
    for other in others:
        shape, centre = other.fitted.shape, other.motion.positions[-1]
        turn = yaw_rotation(other.motion.yaws[-1])
        centre = centre + turn @ shape.axis_offset()  # a mug's axis is off its box centre
        local = turn.T @ np.r_[xy - centre[:2], 0.0]
        spaces = shape.spaces()
        if spaces:
            over = [c for c, half in spaces if np.all(np.abs(local[:2] - c[:2]) < half[:2])]
            floors = [centre[2] + c[2] - half[2] for c, half in spaces if any(c is o for o in over)]
            if over:
                height = max([height] + [floor for floor in floors if floor < below])
                continue
        if shape.is_round:
            inside = np.hypot(local[0], local[1]) < shape.size[0] / 2
        else:
            inside = abs(local[0]) < shape.size[0] / 2 and abs(local[1]) < shape.size[1] / 2
        if not inside:
            continue
        bottom = centre[2] - shape.size[2] / 2
        top = bottom + (shape.params["bottom_thickness"] if shape.is_container else shape.size[2])
        if top < below:  # under the object, not on it, nor in it
            height = max(height, top)
    return height


def out_of_supports(obj: ObjectGeometry, others: list[ObjectGeometry]) -> None:
    """Raises a moving object's centre where its path dips below the support under it (the table, another
    object's top, a container's inner bottom): a mask that loses the object's lower part as it is set down
    (a hand closing over it, a plate's rim in front) can put it millimetres into what it lands on, and the
    gripper that follows that path would press it down there."""
    motion = obj.motion
    if motion.static:
        return
    half = obj.fitted.shape.size[2] / 2
    for frame, position in enumerate(motion.positions):
        floor = support_height(position[:2], others, below=position[2]) + half
        if position[2] < floor:
            motion.positions[frame, 2] = floor


def rest_until_lifted(motion: Motion, keyframes: list[dict], rise: int | None = None) -> None:
    """Without a recording, the carried object stands where it stood until its lift: the frames from the
    grasp to the lift, where the closing hand hides most of it, keep the pose of the frames before the
    grasp that were seen whole (a partly seen mask there drifts by a centimetre or more, and a gripper
    closing that far off the object's middle holds it by an edge). Where the lift came from the hand, the
    object stands until its own path ``rise`` shows it rising (the hand's lift is a frame or two earlier;
    the partly seen fits between them drift as they do before it)."""
    frame_of = {k["event"]: k["frame"] for k in keyframes}
    lift = frame_of.get("lift")
    if lift is None or motion.static:
        return
    lift = max(lift, rise or 0)
    frames = np.arange(len(motion.positions))
    seen = (frames < min(frame_of.get("grasp", lift), lift)) & motion.measured
    if motion.partly_seen is not None:
        seen &= ~motion.partly_seen
    if not seen.any():
        return
    motion.positions[:lift] = np.median(motion.positions[seen], axis=0)
    motion.yaws[:lift] = float(np.median(motion.yaws[seen]))
