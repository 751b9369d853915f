"""Interaction keyframes and the gripper's trajectory.

Events per manipulated object, from its motion (world frame, z up) and, when
the demo has one, the recorded gripper opening:

- ``lift``: the object's centre rises 8 mm above its resting height and stays
  up; the event is the first frame of that rise (2 mm above rest).
- ``grasp``: the recorded gripper stops closing before the lift; without a
  recording, where the hand seen in the video (a prompt with role ``hand``)
  stops at the object before lifting it (``hand.HandEvidence``); without either,
  0.2 s before the lift (estimated, with a warning).
- ``release``: the recorded gripper opens after the grasp, however little;
  without one, where the hand seen in the video stops before it parts from the
  object for good; without either, the frame before the object starts to fall,
  or the first frame from which it rests at its final pose after being carried
  (placed).
- ``contact``: after the release, the object reaches its final resting height
  (within 5 mm): it touches the target it was placed in or on.

The gripper trajectory used in simulation comes from trajectory.json (camera
or world frame) or is synthesised: a top-down grasp at the object's centre
with the fingers across its shorter side, approach from 10 cm above, close at
the grasp, follow the object, open at the release, retreat upwards.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..errors import WarningLog
from ..tasks.base import tilt_between
from ..trajectory import FULL_OPENING, TrajectorySamples
from .camera import inverse_poses
from .carry import GRASP_REACH, gripper_hold
from .hand import CARRY_TOUCH, HandEvidence
from .motion import Motion
from .shapes import Shape

LIFT_HEIGHT = 0.008
LIFT_START = 0.002
LANDING_TOLERANCE = 0.005
JITTER_MARGIN = 3.0
"""Where an object has come to rest, it is still within this many times the robust spread of its last
measured poses there of their median, if that is wider than LANDING_TOLERANCE."""
JITTER_REACH = 0.03
"""m: the measured poses that give that spread lie this near the final pose."""
GRASP_LEAD_S = 0.2
FALL_SPEED = 0.3
"""m/s downwards: an object reaching its rest faster has been dropped (a hand slows down to set one down)."""
GLITCH_S = 0.2
"""s: the longest a resting object's measured pose may stray from where it ends and come back there as a
glitch of the measurement (:func:`_without_glitches`), not a move."""
DROP_DRIFT = 0.015
"""m: a dropped object falls where it is let go; its fall starts no farther sideways from where it lands."""
COVERED = 0.6
"""Share of an object's mask seen whole (or, after it is set down, at the video's end) under which a hand
covers it: closed on it at the grasp, on it as it sets it down."""
COVER_MATCH = 0.15
"""Relative margin within which a mask before the lift is as covered as on the lift's frame."""
RETREAT_RISE_FRAMES = 5
"""Frames a synthesised hand that let go of an object takes to rise clear of its top, before it backs away."""
FINGERTIP_CLEARANCE = 0.022
"""m: how far a synthesised hand rises above its grasp centre after the release before it backs away: its
fingertips reach 12 mm below the centre, and 1 cm to spare."""
APPROACH_HEIGHT = 0.10
HANDLE_GRASP_DEPTH = 0.02
"""m: how far below a mug's handle's top a synthesised hand's pads reach (its grasp centre half that)."""
OPEN_FRAMES = 3
"""Frames a synthesised hand that let go of a mug waits, its fingers opening, before it leaves."""
CLOSE_FRAMES = 3
"""Frames a synthesised hand's fingers take to close before the grasp."""
MAX_OPENING = FULL_OPENING


@dataclasses.dataclass
class GripperTrajectory:
    """The gripper's path, per video frame, in the world frame.

    Attributes:
        positions: ``Nx3`` grasp centre (between the finger pads), metres.
        quaternions: ``Nx4`` orientation ``[w, x, y, z]``: z the approach direction
            (palm to fingertips), y the finger opening direction.
        opening: ``N`` opening in [0, 1], 1 = fully open.
        source: ``"trajectory.json"`` or ``"synthesised"``.
        form: How trajectory.json wrote it (``TrajectorySamples.form``); empty when synthesised.
    """

    positions: np.ndarray
    quaternions: np.ndarray
    opening: np.ndarray
    source: str
    form: dict = dataclasses.field(default_factory=dict)

    def to_report(self, world_from_camera: np.ndarray) -> dict:
        """The report's ``gripper`` entry: per-frame samples in camera and world frames.

        Args:
            world_from_camera: 4x4, or one per frame (``Nx4x4``) for a camera that moves.
        """
        positions_cam, quaternions_cam = in_camera(
            inverse_poses(world_from_camera), self.positions, self.quaternions
        )
        return {
            "source": self.source,
            **({"form": self.form} if self.form else {}),
            "max_opening_m": MAX_OPENING,
            "frames": [
                {
                    "frame": i,
                    "position_cam": np.round(positions_cam[i], 5).tolist(),
                    "quaternion_cam": np.round(quaternions_cam[i], 5).tolist(),
                    "position_world": np.round(self.positions[i], 5).tolist(),
                    "quaternion_world": np.round(self.quaternions[i], 5).tolist(),
                    "gripper": round(float(self.opening[i]), 4),
                }
                for i in range(len(self.positions))
            ],
        }


def in_camera(
    camera_from_world: np.ndarray, positions: np.ndarray, quaternions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame world poses (``Nx3`` positions, ``Nx4`` ``[w, x, y, z]``) in camera coordinates.

    ``camera_from_world`` is one 4x4 transform or one per pose (``Nx4x4``); the
    same maps camera-frame poses into the world given ``world_from_camera``.
    """
    if camera_from_world.ndim == 2:
        camera_from_world = np.broadcast_to(camera_from_world, (len(positions), 4, 4))
    moved = np.einsum("nij,nj->ni", camera_from_world[:, :3, :3], positions) + camera_from_world[:, :3, 3]
    rotation = Rotation.from_matrix(camera_from_world[:, :3, :3]) * Rotation.from_quat(
        quaternions[:, [1, 2, 3, 0]]
    )
    return moved, rotation.as_quat()[:, [3, 0, 1, 2]]


def load_trajectory(
    samples: TrajectorySamples, frames: int, world_from_camera: np.ndarray
) -> GripperTrajectory:
    """Turns trajectory.json's checked samples into one world-frame sample per video frame.

    Between samples positions and the opening are interpolated linearly and
    rotations by slerp; before the first and after the last sample they are held
    (``trajectory.read_trajectory`` refuses a recording that misses much of the video).

    Args:
        samples: The checked samples (``Demo.trajectory``).
        frames: Number of video frames.
        world_from_camera: 4x4 pose of the camera in the world frame, or one per
            video frame (``Nx4x4``) for a camera that moves: a camera-frame sample is
            then in the camera's frame on its own video frame.
    """
    positions, quaternions = samples.positions, samples.quaternions
    if samples.frame_of == "camera":
        if world_from_camera.ndim == 3:
            world_from_camera = world_from_camera[
                np.clip(np.round(samples.frames).astype(int), 0, frames - 1)
            ]
        positions, quaternions = in_camera(world_from_camera, positions, quaternions)
    index = samples.frames
    every = np.arange(frames)
    positions = np.stack([np.interp(every, index, positions[:, a]) for a in range(3)], axis=1)
    if len(index) > 1:
        held = np.clip(every, index[0], index[-1])
        rotations = Slerp(index, Rotation.from_quat(quaternions[:, [1, 2, 3, 0]]))(held)
        quaternions = rotations.as_quat()[:, [3, 0, 1, 2]]
    else:
        quaternions = np.repeat(quaternions[:1], frames, axis=0)
    opening = np.clip(np.interp(every, index, samples.opening), 0, 1)
    return GripperTrajectory(positions, quaternions, opening, "trajectory.json", dict(samples.form))


def _rise(z: np.ndarray, base: float, threshold: float, start: int = 0) -> int | None:
    """The first frame from ``start`` of a rise of ``z`` past ``base + threshold`` held for 3 frames,
    traced back to where the steady rise begins (``LIFT_START`` above ``base``)."""
    up = z > base + threshold
    steady = up & np.r_[up[1:], True] & np.r_[up[2:], True, True]
    risen = np.nonzero(steady[start:])[0]
    if not len(risen):
        return None
    frame = start + int(risen[0])
    while frame > start and z[frame - 1] > base + LIFT_START and z[frame - 1] < z[frame] - 0.0005:
        frame -= 1
    return frame


def _seen_whole(areas: np.ndarray, lift: int) -> float:
    """The object's mask seen whole (pixels): the 90th percentile of its areas before the lift (0 for none)."""
    return float(np.percentile(areas[:lift], 90)) if lift > 0 else 0.0


def _uncovered_after(areas: np.ndarray, lift: int, settled: int, rest: int) -> int | None:
    """Where a hand that carried an object and set it down leaves it: the last frame of the unbroken run whose
    mask is under :data:`COVERED` of its mask at the end (the median of the video's last tenth) that starts
    between ``settled`` (where it was last seen coming down, or its rest) and ``rest``, where the run ends
    before the video does. None where the hand did not cover it on the frames it came down on (under
    :data:`COVERED` of it seen whole before the lift: a gripper that holds a block by its sides and drops it
    into a cup hides little of it) or does not cover it there."""
    whole, final = _seen_whole(areas, lift), float(np.median(areas[-max(3, len(areas) // 10) :]))
    coming_down = areas[max(lift, settled - 3) : settled]
    if whole <= 0 or final <= 0 or not len(coming_down) or coming_down.max() >= COVERED * whole:
        return None
    covered = areas < COVERED * final
    starts = np.nonzero(covered[settled : rest + 1])[0]
    if not len(starts):
        return None
    frame = settled + int(starts[0])
    while frame + 1 < len(areas) and covered[frame + 1]:
        frame += 1
    return frame if frame + 1 < len(areas) else None


def _put_down(motion: Motion, lift: int, fps: float, areas: np.ndarray | None = None) -> int | None:
    """Without a recording, where the carried object is let go.

    It comes to rest at its final pose, lower than it was carried. Where the
    hand still covers it there, or where it was last seen before it dropped out
    of sight (``areas``, its mask per frame), it set it down and lets go where it
    stops covering it (:func:`_uncovered_after`): a hand that sets an object
    down fast moves it as a fall would. Otherwise, if it hits
    that rest fast (:data:`FALL_SPEED`; a hand slows down as it sets an object
    down), it was dropped: the release is the frame before it started to fall,
    over where it lands (:data:`DROP_DRIFT`; a hand that lowers it fast while still
    carrying it sideways has not let go yet). Otherwise it was placed, and let go
    where it came to rest.
    """
    z = motion.positions[:, 2]
    # Where it ends: the last tenth of the video, not its last frame alone (the smoothed path's end
    # follows that frame's noise by millimetres, and the whole rest then looks "away" from it).
    final = np.median(motion.positions[-max(3, len(z) // 10) :], axis=0)
    if z[lift:].max() - final[2] <= LIFT_HEIGHT:  # still held up at the end
        return None
    # Resting, it may still seem to move by its measurement's noise (a small cup's thin depth: 5 mm, and its
    # last frames, partly hidden, held where they put it): where the last frames that measure it lie near
    # where it ends, it rests where they do, within their spread.
    seen = np.flatnonzero(motion.measured[lift:]) + lift
    near = seen[np.linalg.norm(motion.positions[seen] - final, axis=1) < JITTER_REACH][
        -max(5, len(z) // 10) :
    ]
    tolerance = LANDING_TOLERANCE
    if len(near) >= 5:
        final = np.median(motion.positions[near], axis=0)
        spread = 1.4826 * float(np.median(np.linalg.norm(motion.positions[near] - final, axis=1)))
        tolerance = max(tolerance, JITTER_MARGIN * spread)
    away = np.linalg.norm(motion.positions[lift:] - final, axis=1) > tolerance
    moving = np.nonzero(_without_glitches(away, max(2, round(GLITCH_S * fps))))[0]
    if not len(moving):
        return None
    rest = lift + int(moving[-1]) + 1
    if rest >= len(z) - 1:
        return None  # it is still moving at the end
    # Where it drops out of sight before it comes to rest (into a cup, under the hand), its path from there
    # is a fall the motion stage made up: the covering is read from where it was last seen.
    unseen = np.nonzero(~motion.measured[lift:rest])[0]
    settled = lift + int(unseen[0]) if len(unseen) else rest
    left = None if areas is None else _uncovered_after(areas, lift, settled, rest)
    if left is not None:
        return left
    speed = np.r_[0.0, np.diff(z)] * fps
    # Dropped: it hits its rest fast, or it was still speeding up on the frame before (a fall sampled
    # by the frames often ends with a short last step; a hand slows down before it sets one down).
    falling = rest - 2 >= lift and -speed[rest - 1] >= FALL_SPEED and speed[rest - 1] < speed[rest - 2]
    if -speed[rest] < FALL_SPEED and not falling:
        return rest
    slow = np.nonzero(speed[lift:rest] > -FALL_SPEED)[0]
    frame = lift + int(slow[-1]) if len(slow) else rest
    drift = np.linalg.norm(motion.positions[:, :2] - final[:2], axis=1)
    while frame > lift and z[frame - 1] > z[frame] + 0.0005 and drift[frame - 1] < DROP_DRIFT:
        frame -= 1  # back to where the fall starts
    return frame


def _without_glitches(away: np.ndarray, longest: int) -> np.ndarray:
    """``away`` less its glitches: a short run of frames away from where the object ends, after it had come
    there and before it is back there again.

    A resting object does not leave its place for a few frames and come back to it to the millimetre: its
    measurement did (a cup inside a microwave, seen through the opening as a door swings past it or a hand
    reaches over it, measured 1-2 cm off for 1 to 4 frames at a time, and the release was put 60 frames late,
    after the last of them; a plate in a dish rack's slot, its mask cut by the dividers, measured 1 cm off
    on the video's last frame, and no release was found). A run that starts the video's stretch (the carry),
    or lasts longer than ``longest`` frames, is motion; so is one that reaches the end after fewer frames at
    rest than ``longest`` (it may have been coming to rest still).
    """
    kept = away.copy()
    edges = np.flatnonzero(np.diff(np.r_[0, away.astype(np.int8), 0]))
    rested = np.r_[edges[0], np.diff(edges)][::2] if len(edges) else []  # frames at rest before each run
    for start, end, before in zip(edges[::2], edges[1::2], rested, strict=True):
        if start > 0 and end - start <= longest and (end < len(away) or before > longest):
            kept[start:end] = False
    return kept


def _covered_from(areas: np.ndarray, lift: int) -> int | None:
    """Where a hand that closes on a resting object stops covering more of it: the first frame of the unbroken
    run before the lift whose mask is as small as on the lift's frame (within :data:`COVER_MATCH`), where
    that is under :data:`COVERED` of the object seen whole (its largest mask before the lift, the 90th
    percentile). None where the lift's mask is not that covered (a gripper from above hides little): a
    closing hand's covering of the object is the grasp's evidence where nothing shows the hand itself."""
    if lift < 2:
        return None
    whole, at_lift = _seen_whole(areas, lift), float(areas[lift])
    if whole <= 0 or at_lift >= COVERED * whole:
        return None
    frame = lift
    while (
        frame > 0 and areas[frame - 1] <= at_lift * (1 + COVER_MATCH) and areas[frame - 1] < COVERED * whole
    ):
        frame -= 1
    return frame if frame < lift else None


def _resting(motion: Motion, height: float) -> tuple[float, float]:
    """The object's resting height (m, the median of the video's first tenth) and how far above it a lift
    must rise: :data:`LIFT_HEIGHT`, or a quarter of the object's ``height`` (a gripper hiding its lower
    half biases its measured height by millimetres, which is not a lift)."""
    z = motion.positions[:, 2]
    return float(np.median(z[: max(3, len(z) // 10)])), max(LIFT_HEIGHT, 0.25 * height)


def seen_rise(motion: Motion, height: float, start: int = 0) -> int | None:
    """Where the object's own path shows it rising (``detect_events``' lift from the motion alone), or None."""
    return None if motion.static else _rise(motion.positions[:, 2], *_resting(motion, height), start)


def detect_events(
    name: str,
    motion: Motion,
    fps: float,
    gripper: GripperTrajectory | None,
    log: WarningLog,
    height: float = 0.0,
    size=None,
    hand: HandEvidence | None = None,
    areas: np.ndarray | None = None,
) -> list[dict]:
    """Finds grasp, lift, release and contact of a manipulated object.

    The motion and the recording are read independently: neither waits on the
    other. With a recording, its grasp (the hand stalling) and release (the hand
    opening again) are the keyframes wherever the hand closes on this object,
    even if the video never shows the lift; the lift then comes from the motion,
    or, where the motion does not show one, from the recorded hand rising.

    Args:
        name: The object's name.
        motion: Its world-frame motion.
        fps: Video frame rate.
        gripper: The recorded gripper, or None.
        log: Receives warnings for estimated or missing events.
        height: The object's height (m). A lift must rise at least a quarter of
            it: a gripper hiding the object's lower half biases its measured
            height by millimetres, which is not a lift.
        size: The object's bounding-box size (m), (3,): the recorded hand must close
            within reach of it (``carry.GRASP_REACH``); None to not check.
        hand: What the hand seen in the video says about the object, or None. Used where
            the recording does not give the grasp or the release.
        areas: The object's mask area (pixels) per frame, or None. Where neither the recording nor
            the hand gives the grasp, the hand's covering of the object does (:func:`_covered_from`).

    Returns:
        ``{"frame", "event", "object"}`` entries in frame order (events that do not happen are left out);
        an event read from the hand in the video also carries ``"source": "hand"``.
    """
    z = motion.positions[:, 2]
    rest, threshold = _resting(motion, height)
    grasp = release = None
    if gripper is not None and gripper.source == "trajectory.json":
        grasp, release = gripper_hold(gripper.opening)
        if grasp is not None and size is not None:
            reach = 0.5 * float(np.linalg.norm(size)) + GRASP_REACH
            if np.linalg.norm(gripper.positions[grasp] - motion.positions[grasp]) > reach:
                grasp = release = None  # it closes on something else
    # Nothing rises before the hand holds it: with a recorded grasp, the lift is looked for after it
    # (a hand hiding the object's lower half before the grasp biases its height upwards).
    lift = None if motion.static else _rise(z, rest, threshold, grasp or 0)
    if lift is None and grasp is not None:
        lift = _rise(gripper.positions[:, 2], float(gripper.positions[grasp, 2]), threshold, grasp)
        if lift is not None:
            log.warn("geometry", f"object '{name}': its lift (frame {lift}) comes from the recorded gripper rising: "
                                 "the video's masks do not show it")  # fmt: skip
    if lift is None:
        log.warn("geometry", f"object '{name}' is never lifted: no grasp, lift or release found")
        return []
    events = {"lift": lift}
    if grasp is not None and grasp <= lift:
        events["grasp"] = grasp
    if release is not None and release >= lift:
        events["release"] = release
    from_hand = set()
    if hand is not None and ("grasp" not in events or "release" not in events):
        final = float(np.median(z[-max(3, len(z) // 20) :]))
        in_air = (np.arange(len(z)) >= lift) & (z > max(rest, final) + threshold)
        if not hand.follows(in_air):
            log.warn("geometry", f"object '{name}': the hand '{hand.name}' is seen touching it on under "
                                 f"{CARRY_TOUCH:.0%} of the {int(in_air.sum())} frames it is in the air; its masks "
                                 "are not used for the grasp and the release (check the hand's masks)")  # fmt: skip
            hand = None
    if "grasp" not in events and hand is not None:
        seen = hand.grasp(lift, fps)
        if seen is not None:
            events["grasp"] = seen[0]
            from_hand.add("grasp")
            if seen[1] < lift:  # the hand moves off with it before its own rise shows
                events["lift"] = lift = seen[1]
                from_hand.add("lift")
    if "release" not in events and hand is not None:
        parting = hand.release(lift)
        if parting is not None:
            events["release"] = parting[0]
            from_hand.add("release")
    areas = None if areas is None else np.asarray(areas, float)
    covered = None if "grasp" in events or areas is None else _covered_from(areas, lift)
    if covered is not None:
        events["grasp"] = covered
        log.warn("geometry", f"object '{name}': grasp frame {covered} estimated from where the hand stops covering "
                             "more of it before the lift (no gripper recording, no hand prompted)")  # fmt: skip
    if "grasp" not in events:
        events["grasp"] = max(0, lift - round(GRASP_LEAD_S * fps))
        why = (
            "no gripper recording"
            if gripper is None or gripper.source != "trajectory.json"
            else "the recorded gripper does not close on it before the lift"
        )
        if hand is not None:
            why += f", and the hand '{hand.name}' is not seen still at it before the lift"
        log.warn(
            "geometry", f"object '{name}': grasp frame {events['grasp']} estimated from the lift ({why})"
        )
    if "release" not in events:
        put_down = _put_down(motion, lift, fps, areas)
        if put_down is not None:
            events["release"] = put_down
    if "release" in events:
        final = float(np.median(z[-max(3, len(z) // 20) :]))
        landed = np.nonzero(z[events["release"] :] < final + LANDING_TOLERANCE)[0]
        if len(landed):
            events["contact"] = events["release"] + int(landed[0])
    return sorted(
        (
            {"frame": f, "event": e, "object": name, **({"source": "hand"} if e in from_hand else {})}
            for e, f in events.items()
        ),
        key=lambda k: k["frame"],
    )


def synthesise_gripper(
    shape: Shape, motion: Motion, events: list[dict], pour: bool = False
) -> GripperTrajectory:
    """A top-down grasp trajectory that follows the object between grasp and release.

    A container poured from (``pour``) that the video shows tilting is taken from the side
    (:func:`_side_grasp`); a mug (a cup with a handle) by its handle and the wall behind it
    (:func:`_handle_grasp`); everything else across its shorter horizontal side, at its box's centre."""
    count = len(motion.positions)
    frame_of = {e["event"]: e["frame"] for e in events}
    grasp, release = frame_of.get("grasp", 0), frame_of.get("release", count - 1)
    approach = max(0, grasp - 15)
    if pour and shape.is_container:
        axis = tilt_axis(motion, grasp, release)
        if axis is not None:
            return _side_grasp(shape, motion, grasp, release, approach, axis)
    if shape.has_handle:
        return _handle_grasp(shape, motion, grasp, release, approach)
    # Fingers across the shorter horizontal side; z (approach) points down.
    across = 0.0 if shape.size[1] <= shape.size[0] else np.pi / 2
    width = min(shape.size[0], shape.size[1])
    grasp_height = min(shape.size[2] / 2, 0.02)
    clear = grasp_height + FINGERTIP_CLEARANCE
    positions = np.zeros((count, 3))
    quaternions = np.zeros((count, 4))
    opening = np.ones(count)
    for frame in range(count):
        held = min(max(frame, grasp), release)
        offset = 0.0
        if frame < approach:
            offset = APPROACH_HEIGHT
        elif frame < grasp:
            # In place before the fingers close (closing on the way down, they caught a thin book's top).
            arrived = max(approach + 1, grasp - CLOSE_FRAMES - 1)
            offset = APPROACH_HEIGHT * max(0, arrived - frame) / max(arrived - approach, 1)
        elif frame > release:
            # Up until the fingertips clear the object's top, then back the way it came (out of a shelf by its
            # front, up out of a cup), then up.
            back = frame - release - RETREAT_RISE_FRAMES
            offset = clear * min(1.0, (frame - release) / RETREAT_RISE_FRAMES)
            if back > 0:
                held = max(grasp, release - back)
                offset += min(APPROACH_HEIGHT, 0.01 * max(0, back - (release - grasp)))
        centre = motion.positions[held] + [0.0, 0.0, shape.size[2] / 2 - grasp_height]
        yaw = motion.yaws[min(max(frame, grasp), release)] + across
        positions[frame] = centre + [0.0, 0.0, offset]
        # z down; y, the fingers' line, along the object's shorter side (turned by the object's yaw, not against
        # it: turned against it, the fingers closed 50 degrees across a book yawed by 25).
        down = Rotation.from_euler("xz", [np.pi, yaw])
        quaternions[frame] = down.as_quat()[[3, 0, 1, 2]]
        opening[frame] = (
            1.0 if frame < grasp - CLOSE_FRAMES or frame > release else min(1.0, width / MAX_OPENING * 0.8)
        )
    return GripperTrajectory(positions, quaternions, opening, "synthesised")


POUR_TILT = np.radians(30.0)
"""rad: a container poured from tilts at least this far for its side grasp to follow the tilt's axis."""


def tilt_axis(motion: Motion, start: int, stop: int) -> np.ndarray | None:
    """The horizontal axis (unit, in the object's own frame as it stands) about which it tilts furthest
    between frames ``start`` and ``stop``, or None where it tilts less than :data:`POUR_TILT`."""
    frames = range(start, min(stop, len(motion.positions) - 1) + 1)
    turns = [motion.rotation(f) for f in frames]
    if not turns:
        return None
    tilts = [tilt_between(np.eye(3), t) for t in turns]
    peak = int(np.argmax(tilts))
    if tilts[peak] < POUR_TILT:
        return None
    up = turns[peak][:, 2]  # where its axis points at the peak, world frame
    axis = np.cross([0.0, 0.0, 1.0], up)  # the level axis it turned about
    own = Rotation.from_euler("z", motion.yaws[frames[peak]]).as_matrix().T @ axis
    own[2] = 0.0
    return own / np.linalg.norm(own)


def _side_grasp(shape: Shape, motion: Motion, grasp: int, release: int, approach: int,
                axis: np.ndarray) -> GripperTrajectory:  # fmt: skip
    """A container poured from, taken from the side: the hand comes in level along the axis the video
    tilts it about (``axis``, in its own frame), the grasp centre on its axis at mid-height, the fingers
    closing across its body. The pour then turns the pads about a line in their own plane, so they turn
    the container with them (a hand from above would turn it about the pads' normal, by their torsional
    friction alone, or close a finger over the rim the contents leave by). Held on its pose (yaw and tilt)
    from grasp to release; in and out along the approach."""
    count = len(motion.positions)
    across = np.cross([0.0, 0.0, 1.0], axis)
    # The hand frame on the container: z (the approach) along the axis, y (the opening) across, x up or down.
    hand_on = Rotation.from_matrix(np.column_stack((np.cross(across, axis), across, axis)))
    on_container = shape.axis_offset()
    positions, quaternions, opening = np.zeros((count, 3)), np.zeros((count, 4)), np.ones(count)
    arrived = max(approach, grasp - CLOSE_FRAMES - 1)
    # Closed to the body's width, as a recording has it: the fingers then squeeze by the actuators' stiffness,
    # short of their force limit, which holds the container centred when the pour turns the closing
    # direction upright (closed to nothing, both saturate and its weight slid it 1 cm along the fingers).
    held_width = min(1.0, 2 * shape.params.get("outer_radius", shape.size[0] / 2) / MAX_OPENING)
    for frame in range(count):
        held = min(max(frame, grasp), release)
        turn = motion.rotation(held)
        positions[frame] = motion.positions[held] + turn @ on_container
        back = turn @ axis
        if frame < arrived:  # in place before the fingers close: closing on the way grips its near side
            positions[frame] -= (
                back * APPROACH_HEIGHT * min(1.0, (arrived - frame) / max(arrived - approach, 1))
            )
        elif frame > release:
            positions[frame] -= back * min(APPROACH_HEIGHT, 0.01 * max(0, frame - release - OPEN_FRAMES))
        quaternions[frame] = (Rotation.from_matrix(turn) * hand_on).as_quat()[[3, 0, 1, 2]]
        opening[frame] = 1.0 if frame < grasp - CLOSE_FRAMES or frame > release else held_width
    return GripperTrajectory(positions, quaternions, opening, "synthesised")


def _handle_grasp(shape: Shape, motion: Motion, grasp: int, release: int, approach: int) -> GripperTrajectory:
    """A mug taken from above by its handle: one finger inside it against the wall behind the handle, the
    other on the handle's outer bar, the pads' tops at the handle's top, so the loop under the upper arm
    stays free for a peg; held as it turns. A mug's box is wider than the hand opens (a 4 cm rim is 8 cm
    across); a pinch of its 4 mm wall alone gets a few newtons from the fingers' position actuators and
    let a 300 g mug turn in the hand, where the 3-4 cm from the wall's inside to the bar gets their 10 N.

    The hand keeps its pose on the mug from the grasp to the release (the mug's yaw and tilt on each
    frame), comes down onto it along its axis over the 15 frames before, and leaves along it 1 cm a frame
    once its fingers have opened."""
    count = len(motion.positions)
    p = shape.params
    top = -shape.size[2] / 2 + p["handle_top"]
    inside, bar = p["inner_radius"], p["handle_reach"]  # from the axis, along local +x (the handle's side)
    on_mug = shape.axis_offset() + [(inside + bar) / 2, 0.0, top - HANDLE_GRASP_DEPTH / 2]
    # Fingers open along the mug's local x (from the wall's inside to the bar), z (the approach) down.
    hand_on_mug = Rotation.from_euler("xz", [np.pi, -np.pi / 2])
    # Closed to the width from the wall's inside to the bar's outside, as a recording has it: the fingers
    # then squeeze by the actuators' stiffness and hold the mug centred. Closed to nothing, both saturate,
    # nothing centres it, and on the lift it slid 6 mm along the fingers (as a poured container did).
    held_width = min(1.0, (bar - inside) / MAX_OPENING)
    positions, quaternions, opening = np.zeros((count, 3)), np.zeros((count, 4)), np.ones(count)
    for frame in range(count):
        held = min(max(frame, grasp), release)
        turn = motion.rotation(held)
        positions[frame] = motion.positions[held] + turn @ on_mug
        # In and out along the mug's axis (the hand's approach): a finger inside a mug tipped on its peg
        # that rose straight up dragged its wall.
        if frame < grasp:
            positions[frame] += (
                turn[:, 2] * APPROACH_HEIGHT * min(1.0, (grasp - frame) / max(grasp - approach, 1))
            )
        elif frame > release:  # the fingers open first, then it leaves: pads still closing drag the mug
            positions[frame] += turn[:, 2] * min(
                APPROACH_HEIGHT, 0.01 * max(0, frame - release - OPEN_FRAMES)
            )
        quaternions[frame] = (Rotation.from_matrix(turn) * hand_on_mug).as_quat()[[3, 0, 1, 2]]
        opening[frame] = 1.0 if frame < grasp - 3 or frame > release else held_width
    return GripperTrajectory(positions, quaternions, opening, "synthesised")
