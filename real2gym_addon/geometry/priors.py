"""Physical priors on an object's path, applied after it is measured.

- An object is never inside what supports it (:func:`support_height`: the table, another
  object's top, a container's inner bottom; :func:`out_of_supports`); one that stands raised at its
  start (a plate in its stand) stands on what is under it (:func:`onto_support`, :func:`resting_on`).
- Without a recording, the carried object stands where it was last seen whole until its own
  path rises (:func:`rest_until_lifted`).
"""

from __future__ import annotations

import dataclasses
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


RESTS_ON = 0.01
"""m: an object whose bottom is this near another object's support under it at its start rests on it."""


def resting_on(obj: ObjectGeometry, others: list[ObjectGeometry]) -> ObjectGeometry | None:
    """The object whose support ``obj`` stands on at its start (a plate in its stand's slot, a block on a
    box), or None where it stands on the table: within :data:`RESTS_ON` of that support's surface."""
    start, half = obj.motion.positions[0], obj.fitted.shape.size[2] / 2
    for other in others:
        floor = support_height(start[:2], [other], below=start[2])
        if floor > 0.0 and abs(start[2] - half - floor) <= RESTS_ON:
            return other
    return None


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


ONTO_SUPPORT = 0.015
"""m: an object standing raised at its start (a plate in its stand) is lowered onto the support under it where
it is fitted this little above it."""
STILL = 0.003
"""m: the start's frames are those before its height leaves the first frame's by more than this."""


def onto_support(obj: ObjectGeometry, others: list[ObjectGeometry]) -> None:
    """Lowers an object that stands raised at its start (a plate on its edge in a stand, its foot hidden and
    found from its rim) onto the support under it (the stand's slot floor), where it is fitted up to
    :data:`ONTO_SUPPORT` above: the frames it rests at its fitted place, before it is taken. Left up a few
    millimetres, it drops as the simulation starts, and the grip closes where it no longer is. The frames
    lowered are those before it first rises or sinks (the hand takes it)."""
    motion = obj.motion
    rest, half = motion.positions[0], obj.fitted.shape.size[2] / 2
    floor = support_height(rest[:2], others, below=rest[2]) + half
    if not 0 < rest[2] - floor <= ONTO_SUPPORT:
        return
    rose = np.abs(motion.positions[:, 2] - rest[2]) > STILL
    first_moved = int(np.argmax(rose)) if rose.any() else len(rose)
    motion.positions[:first_moved, 2] = floor
    obj.fitted.position = np.array([*obj.fitted.position[:2], floor])


SLOT_PLAY = 0.002
"""m: a plate seen standing in a slot is at least this much thinner than the slot."""


def within_slot(obj: ObjectGeometry, others: list[ObjectGeometry]) -> float | None:
    """A plate on its edge seen standing in a slot at its start (a stand's, a dish rack's) stands inside it:
    no thicker than the slot less :data:`SLOT_PLAY`, and between its dividers. Its thickness is what its
    silhouettes show worst (its flat face seen, its rim a pixel or two), and its place across the slot is
    its face's less half that thickness; one fitted thicker than the slot, or a few millimetres into a
    divider (its rest taken from partly seen frames), starts inside the dividers and is thrown out. Where it
    was, it is made that thin and moved across the slot as little as brings it inside; the frames before it
    moves keep that place.

    Returns:
        The thickness it had (m) where it was thinned, else None.
    """
    motion, shape = obj.motion, obj.fitted.shape
    start = motion.positions[0]
    for other in others:
        centre, turn = other.motion.positions[0], yaw_rotation(other.motion.yaws[0])
        local = turn.T @ (start - centre)
        for middle, half in other.fitted.shape.spaces():
            if not np.all(np.abs(local[:2] - middle[:2]) < half[:2]):  # its centre over the slot
                continue
            across = int(np.argmin(half[:2]))
            room = max(2 * float(half[across]) - SLOT_PLAY, SLOT_PLAY)
            thickness = min(float(shape.size[1]), room)
            offset = float(local[across] - middle[across])
            reach = (room - thickness) / 2
            inside = float(np.clip(offset, -reach, reach))
            if thickness == shape.size[1] and inside == offset:
                return None
            before = float(shape.size[1])
            obj.fitted.shape = dataclasses.replace(shape, size=(shape.size[0], thickness, shape.size[2]))
            shift = np.zeros(3)
            shift[across] = inside - offset
            moved = np.abs(motion.positions - start).max(axis=1) > STILL
            first_moved = int(np.argmax(moved)) if moved.any() else len(moved)
            motion.positions[:first_moved] += turn @ shift
            obj.fitted.position = obj.fitted.position + turn @ shift
            return before if thickness < before else None
    return None


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
