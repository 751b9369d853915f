"""Adapting the demo to a variant's objects: object-centric segments, joined, with settle phases.

The demo is split at its keyframes into segments, each tied to the object it
concerns (MimicGen's rule): the approach, the grasp and the lift follow the
manipulated object's new start pose; the end of the carry, the placing, the
release and the retreat follow the target's new pose. A segment moves with its
object: ``new = new_object_pose x inverse(old_object_pose) x old`` (for a scaled
object, its local coordinates scaled too). The carry between the two is joined
by a minimum-jerk blend of positions and a slerp of orientations. What the manipulated object starts in or
on (a plate's stand) moves with it.

Before the fingers close, and before they open, the hand holds still for
``settle_s``: fingers that close on a moving hand push the object away. Every
per-frame array (the gripper, the objects' motion, a moving camera) gets the
inserted frames; the keyframes move with them.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import Real2GymError
from ..geometry.articulation import AT_END
from ..geometry.camera import yaw_rotation
from ..geometry.fit import FittedObject
from ..geometry.keyframes import GripperTrajectory
from ..geometry.motion import Motion
from ..geometry.parts import PartGeometry, part_key
from ..geometry.priors import resting_on
from ..geometry.stage import Geometry, ObjectGeometry
from ..trajectory import min_jerk
from ..verify.checks import held_name

BLEND_SHARE = 0.6
"""The carry's first this share blends from the object's segment to the target's; the rest follows the target."""


class AdaptError(Real2GymError):
    """The demo cannot be adapted to a variant."""


@dataclasses.dataclass
class Segments:
    """The demo's phases for the manipulated object (video frames).

    Attributes:
        closing: Where the fingers start closing on it.
        grasp: The grasp keyframe.
        lift: The lift keyframe (the grasp when there is none).
        release: Where the fingers start opening (the video's end when they never do).
        frames: The video's frames.
        arrive: Where the hand must be at the target: the release, or a pour's ``pour_start`` (the pour
            and the setting down after it follow the target); None for the release.
    """

    closing: int
    grasp: int
    lift: int
    release: int
    frames: int
    arrive: int | None = None


def find_segments(geometry: Geometry, task: dict) -> Segments:
    """The phases of what the hand works on: the manipulated object, or for a task on a part (``open``,
    ``close``) that part, from the keyframes and the gripper's opening. A part pushed, not grasped, is
    touched at its ``push`` and never let go.

    Raises:
        AdaptError: No gripper path, or no grasp (nor push of a part) of the task's object.
    """
    if geometry.gripper is None:
        raise AdaptError(
            "the demo has no gripper path to adapt (run the geometry stage, which synthesises one)"
        )
    held = held_name(task)
    events = {k["event"]: int(k["frame"]) for k in geometry.keyframes if k["object"] == held}
    if "grasp" not in events and not (held != task["object"] and "push" in events):
        raise AdaptError(f"the demo has no grasp keyframe of '{held}' to adapt from")
    frames = len(geometry.gripper.positions)
    grasp = events.get("grasp", events.get("push"))
    opening = geometry.gripper.opening
    closing = grasp
    while "grasp" in events and closing > 0 and opening[closing - 1] > opening[closing] + 1e-6:
        closing -= 1
    release = min(events.get("release", frames), frames)
    lift = min(max(events.get("lift", grasp), grasp), release)
    arrive = min(max(events["pour_start"], lift), release) if "pour_start" in events else None
    return Segments(closing, grasp, lift, release, frames, arrive)


def blend_weights(segments: Segments) -> np.ndarray:
    """Per frame, how much the target's segment counts (0 before the lift, 1 from the blend's end)."""
    frames = np.arange(segments.frames, dtype=float)
    start = segments.lift
    end = start + BLEND_SHARE * max(
        (segments.release if segments.arrive is None else segments.arrive) - start, 1
    )
    return min_jerk((frames - start) / max(end - start, 1e-9))


def _placed(position, yaw: float, scale: float = 1.0) -> np.ndarray:
    """4x4 affine map from an object's local frame (scaled by ``scale``) to the world."""
    matrix = np.eye(4)
    matrix[:3, :3] = yaw_rotation(yaw) * scale
    matrix[:3, 3] = position
    return matrix


def object_map(obj: ObjectGeometry, change: dict) -> tuple[np.ndarray, float, np.ndarray]:
    """Where a variant puts an object at the start: ``(world map, yaw change, new start centre)``.

    The map takes world points near the demo's object to the variant's: into the object's
    frame, scaled by ``change["scale"]``, out at its new pose. A scaled object still stands on
    its support: its centre's height scales with it.
    """
    start, yaw = obj.motion.positions[0], float(obj.motion.yaws[0])
    scale = float(change.get("scale", 1.0))
    turn = math.radians(float(change.get("dyaw_deg", 0.0)))
    half = obj.fitted.shape.size[2] / 2
    centre = start + [change.get("dx", 0.0), change.get("dy", 0.0), (scale - 1.0) * half]
    world = _placed(centre, yaw + turn, scale) @ np.linalg.inv(_placed(start, yaw))
    return world, turn, centre


def _apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def _turned(turns: np.ndarray, quaternions: np.ndarray) -> np.ndarray:
    """``[w, x, y, z]`` quaternions turned about world z by ``turns`` (radians, per row)."""
    rotations = Rotation.from_rotvec(np.c_[np.zeros((len(turns), 2)), turns])
    return (rotations * Rotation.from_quat(quaternions[:, [1, 2, 3, 0]])).as_quat()[:, [3, 0, 1, 2]]


def settle_index(segments: Segments, settle_frames: int) -> np.ndarray:
    """For each frame of the adapted demo, the demo frame it shows (holds repeat a frame)."""
    hold_close = [segments.closing] * settle_frames
    release_at = max(segments.release - 1, segments.closing)
    hold_open = [release_at] * settle_frames if segments.release < segments.frames else []
    frames = list(range(segments.frames))
    return np.array(
        frames[: segments.closing + 1] + hold_close + frames[segments.closing + 1 : release_at + 1] + hold_open
        + frames[release_at + 1 :]
    )  # fmt: skip


def adapt(
    geometry: Geometry,
    task: dict,
    changes: dict[str, dict],
    table_dz: float = 0.0,
    settle_frames: int = 0,
    part_starts: dict[str, float] | None = None,
) -> Geometry:
    """The demo's geometry with its objects changed and its gripper path adapted to them.

    Args:
        geometry: The demo's geometry (world frame, table at z = 0).
        task: ``{"type", "object", "target"}`` (and ``"part"`` for a task on a part: the hand's path
            goes with the part's body).
        changes: Object name -> ``{"dx", "dy"`` (m), ``"dyaw_deg"``, ``"scale"``, ``"rim_scale"}``;
            objects not named stay. A body with moving parts keeps its size.
        table_dz: The table's height change under the camera (m): the camera moves by its opposite.
        settle_frames: Frames the hand holds still before the fingers close and before they open.
        part_starts: Part key -> its start's change, a share of its joint's range (see
            :func:`_part_started`); parts not named start as in the demo.

    Returns:
        The variant's geometry; its gripper's ``source`` is ``"adapted"``.

    Raises:
        AdaptError: The demo cannot be adapted (no gripper path or grasp), a rim cannot scale, or a
            body with parts is scaled.
    """
    segments = find_segments(geometry, task)
    by_name = {o.name: o for o in geometry.objects}
    manipulated = by_name[task["object"]]
    carried = held_name(task) == task["object"]  # a task on a part moves the part, its body stays
    for obj in geometry.objects:
        if obj.parts and abs(float(changes.get(obj.name, {}).get("scale", 1.0)) - 1.0) > 1e-9:
            raise AdaptError(f"object '{obj.name}' has moving parts: it keeps its size")
    target = by_name.get(task.get("target") or "")
    grasp_map, grasp_turn, _ = object_map(manipulated, changes.get(manipulated.name, {}))
    # What the carried object starts in (a plate in its stand) moves with it: the object left where it stood
    # would stand in it.
    cradle = (
        resting_on(manipulated, [o for o in geometry.objects if o is not manipulated]) if carried else None
    )
    cradle = None if cradle is target else cradle
    place_map, place_turn = grasp_map, grasp_turn
    if target is not None:
        place_map, place_turn, _ = object_map(target, {**changes.get(target.name, {}), "scale": 1.0})
    weights = blend_weights(segments)
    if target is None:
        weights[:] = 0.0

    gripper = geometry.gripper
    hand, hand_quats, new_q, part_starts = gripper.positions, gripper.quaternions, {}, part_starts or {}
    for obj in geometry.objects:
        for part in obj.parts:
            key = part_key(obj.name, part.name)
            if part_starts.get(key):
                new_q[key] = _part_started(part, float(part_starts[key]))
                hand, hand_quats = _hand_with_part(
                    hand, hand_quats, part, new_q[key], key, geometry.keyframes
                )
    grasp_path, place_path = _apply(grasp_map, hand), _apply(place_map, hand)
    positions = (1 - weights)[:, None] * grasp_path + weights[:, None] * place_path
    turns = (1 - weights) * grasp_turn + weights * place_turn
    quaternions = _turned(turns, hand_quats)
    scale = float(changes.get(manipulated.name, {}).get("scale", 1.0))
    opening = gripper.opening.copy()
    if carried:  # the fingers follow the held object's size
        held = slice(segments.closing, segments.release)
        opening[held] = np.minimum(opening[held] * scale, max(opening[segments.closing], 0.0))

    objects = []
    for obj in geometry.objects:
        change = changes.get(obj.name, {})
        if obj is manipulated and carried:
            motion = _carried_motion(obj, segments, grasp_map, grasp_turn, place_map, place_turn,
                                     gripper.positions, positions, turns, scale)  # fmt: skip
        else:
            world, turn, _ = object_map(obj, {**change, "scale": 1.0})
            if obj is target:
                world, turn = place_map, place_turn
            elif obj is cradle:
                world, turn, _ = object_map(manipulated, {**changes.get(manipulated.name, {}), "scale": 1.0})
            motion = dataclasses.replace(
                obj.motion, positions=_apply(world, obj.motion.positions), yaws=obj.motion.yaws + turn
            )
            parts = [_moved_part(part, world, new_q.get(part_key(obj.name, part.name))) for part in obj.parts]
            obj = dataclasses.replace(obj, parts=parts)
        shape = obj.fitted.shape
        if obj is manipulated and abs(scale - 1.0) > 1e-9:
            shape = shape.scaled((scale, scale, scale))
        rim = float(change.get("rim_scale", 1.0))
        if abs(rim - 1.0) > 1e-9 and shape.is_container:
            try:
                shape = shape.rim_scaled(rim)
            except ValueError as e:
                raise AdaptError(f"object '{obj.name}': {e}") from e
        fitted = FittedObject(shape, motion.positions[0].copy(), float(motion.yaws[0]))
        objects.append(dataclasses.replace(obj, fitted=fitted, motion=motion))

    index = settle_index(segments, settle_frames)
    adapted = GripperTrajectory(positions[index], quaternions[index], opening[index], "adapted")
    objects = [_reindexed(o, index) for o in objects]
    world_from_camera = geometry.world_from_camera.copy()
    world_from_camera[2, 3] -= table_dz
    camera_frames = None
    if geometry.camera_frames is not None:
        camera_frames = geometry.camera_frames[index].copy()
        camera_frames[:, 2, 3] -= table_dz
    first = {f: int(np.argmax(index == f)) for f in np.unique(index)}
    # An event on a held frame happens at the hold's end (the fingers close or open after it).
    last = {f: int(len(index) - 1 - np.argmax(index[::-1] == f)) for f in np.unique(index)}
    keyframes = [
        {
            **k,
            "frame": (last if k["frame"] in (segments.closing, segments.release - 1) else first)[k["frame"]],
        }
        for k in geometry.keyframes
        if k["frame"] in first
    ]
    return Geometry(geometry.table, world_from_camera, objects, keyframes, adapted, camera_frames,
                    geometry.camera_source)  # fmt: skip


def _carried_motion(
    obj: ObjectGeometry,
    segments: Segments,
    grasp_map: np.ndarray,
    grasp_turn: float,
    place_map: np.ndarray,
    place_turn: float,
    old_grip: np.ndarray,
    new_grip: np.ndarray,
    turns: np.ndarray,
    scale: float,
) -> Motion:
    """The manipulated object's motion: with its start until the grasp, with the hand while held, then with the target.

    While held it keeps its pose in the hand (scaled with it); after the release it follows the
    target's segment, standing as much higher as its scaled half height.
    """
    motion = obj.motion
    positions = motion.positions.copy()
    yaws = motion.yaws.copy()
    grasp, release = segments.grasp, segments.release
    positions[:grasp] = _apply(grasp_map, motion.positions[:grasp])
    yaws[:grasp] += grasp_turn
    held = np.arange(grasp, release)
    if len(held):
        offsets = motion.positions[held] - old_grip[held]
        turned = np.einsum("nij,nj->ni", np.array([yaw_rotation(t) for t in turns[held]]), offsets * scale)
        positions[held] = new_grip[held] + turned
        yaws[held] += turns[held]
    after = np.arange(release, len(positions))
    if len(after):
        half = obj.fitted.shape.size[2] / 2
        positions[after] = _apply(place_map, motion.positions[after]) + [0.0, 0.0, (scale - 1.0) * half]
        yaws[after] += place_turn
    return dataclasses.replace(motion, positions=positions, yaws=yaws, static=False)


def _moved_part(part: PartGeometry, world: np.ndarray, q: np.ndarray | None = None) -> PartGeometry:
    """A part moved with its body by the rigid map ``world`` (4x4): its pose, its joint's axis and pivot;
    its value per frame ``q`` where given."""
    turn = world[:3, :3]
    joint = dataclasses.replace(
        part.joint, axis=turn @ part.joint.axis, pivot=_apply(world, part.joint.pivot)
    )
    return dataclasses.replace(
        part,
        position=_apply(world, part.position),
        rotation=turn @ part.rotation,
        joint=joint,
        q=part.q if q is None else q,
    )


def _part_started(part: PartGeometry, share: float) -> np.ndarray:
    """The part's value per frame started ``share`` of its joint's range further (within the range).

    A part the demo starts at an end of its range (a door shut, or opened as far as it goes) starts
    ``abs(share)`` in from it. Until it moves it stands at its new start; as it moves toward where the
    demo's ends, the change fades in proportion to how far it has come, so it ends where the demo's
    does (a door shut as shut, a drawer opened as far).
    """
    q = part.filled_q()
    low, high = part.joint.range
    span = high - low
    if q[0] - low <= AT_END * span:  # at an end it can only start further in
        share = abs(share)
    elif high - q[0] <= AT_END * span:
        share = -abs(share)
    start = float(np.clip(q[0] + share * span, low, high))
    travel = q[-1] - q[0]
    come = np.clip((q - q[0]) / travel, 0.0, 1.0) if abs(travel) > 1e-9 else np.zeros(len(q))
    return np.clip(q + (start - q[0]) * (1.0 - come), low, high)


def _hand_with_part(
    positions: np.ndarray,
    quaternions: np.ndarray,
    part: PartGeometry,
    new_q: np.ndarray,
    key: str,
    keyframes: list[dict],
) -> tuple[np.ndarray, np.ndarray]:
    """The hand's path (world; ``[w, x, y, z]``) moved with a part started elsewhere: from its grasp or
    push on, by the part's own change of value on each frame (turned about its hinge, slid along its
    slide), so that it grips the handle where it now is and follows it; over its way in (from the hand's
    last keyframe with something else, or the video's start) the change grows from none by a
    minimum-jerk profile. A part the hand never touches leaves the path as it was."""
    touched = [int(k["frame"]) for k in keyframes if k["object"] == key and k["event"] in ("grasp", "push")]
    if not touched:
        return positions, quaternions
    touch = touched[0]
    before = [int(k["frame"]) for k in keyframes if k["object"] != key and int(k["frame"]) < touch]
    way_in = max(before, default=0)
    frames = np.arange(len(positions), dtype=float)
    weight = min_jerk((frames - way_in) / max(touch - way_in, 1))
    change = (new_q - part.filled_q()) * weight
    moved_positions, moved_quats = positions.copy(), quaternions.copy()
    for f in np.flatnonzero(np.abs(change) > 1e-9):
        move = part.joint.motion(float(change[f]))
        moved_positions[f] = move[:3, :3] @ positions[f] + move[:3, 3]
        turned = Rotation.from_matrix(move[:3, :3]) * Rotation.from_quat(quaternions[f, [1, 2, 3, 0]])
        moved_quats[f] = turned.as_quat()[[3, 0, 1, 2]]
    return moved_positions, moved_quats


def _reindexed(obj: ObjectGeometry, index: np.ndarray) -> ObjectGeometry:
    motion = obj.motion
    reindexed = dataclasses.replace(
        motion,
        positions=motion.positions[index],
        yaws=motion.yaws[index],
        measured=motion.measured[index],
        tilts=None if motion.tilts is None else motion.tilts[index],
    )
    visible = [obj.visible[i] for i in index] if len(obj.visible) == len(motion.positions) else obj.visible
    # A part's value holds while the hand settles, as the objects do.
    parts = [
        dataclasses.replace(p, q=np.asarray(p.q)[index], visible=np.asarray(p.visible)[index])
        for p in obj.parts
    ]
    return dataclasses.replace(obj, motion=reindexed, visible=visible, parts=parts)
