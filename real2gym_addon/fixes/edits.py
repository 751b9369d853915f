"""Fixes to a finished run's scene, made on its report.json and logged.

Each fix changes the scene description (an object's shape, size, collision or
motion, or a keyframe), records what it changed in ``report["edit_log"]`` (and
the object's ``edits``) with the values before, and can be undone. The Blender
panel, the command line (``real2gym fix``) and scripts all apply fixes here, so
a fix recorded on one run can be applied to another.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import Real2GymError
from ..geometry.camera import pose_at, report_camera_from_world
from ..geometry.carry import gripper_hold
from ..geometry.kinds import dish_rack, rack
from ..geometry.shapes import Shape
from ..mjcf.gripper import FINGERTIP_BELOW, MAX_OPENING
from ..trajectory import min_jerk
from . import joint_fix
from .collision import COACD_TIME_LIMIT_S, set_collision
from .probe import opening_probe

FIX_KINDS = (
    "radius_scale", "scale", "offset", "collision", "keyframe", "release_opening", "approach", "grasp_height",
    "release_above", "set_down", "joint", "pour_offset", "place_offset", "slot_width", "peg_radius",
)  # fmt: skip
SCALE_RANGE = (0.2, 5.0)
"""Factors a scale or rim-scale fix may apply: beyond them it is a new object, not a fix."""
MAX_OFFSET_M = 1.0
"""Metres an offset fix may move an object along each axis."""
COLLISION_MODES = ("primitives", "walls", "hull", "coacd")
COACD_THRESHOLD_RANGE = (0.01, 1.0)
COACD_MAX_PIECES = 64
KEYFRAME_EVENTS = ("grasp", "lift", "contact", "release")
APPROACH_PHASES = ("grasp", "release")
APPROACH_MARGIN = 0.02
"""m the fingertips clear an object's top by on a rebuilt approach: 12 mm of fingertip past the grasp centre and 8 mm."""
RELEASE_REJOIN_FRAMES = 3
"""Frames over which a hand that let go above a container (``release_above``) blends back into its recorded
path once it has risen clear."""
APPROACH_S = 0.3
"""Seconds of the hand's path before the grasp (or after the release) a rebuilt approach replaces."""
SHAPE_FIELDS = (
    "shape",
    "size",
    "params",
    "collision_mode",
    "collision",
    "vertices",
    "hulls",
    "frames",
    "parts",
)


class FixError(Real2GymError):
    """A fix cannot be applied; nothing was changed."""


def find_object(report: dict, name: str) -> dict:
    """The report's entry of object ``name``."""
    for entry in report.get("objects", []):
        if entry["name"] == name:
            return entry
    names = ", ".join(o["name"] for o in report.get("objects", [])) or "none"
    raise FixError(f"no object named '{name}' in this run (objects: {names})")


def _write_shape(entry: dict, shape: Shape) -> None:
    for key in ("vertices", "hulls"):
        entry.pop(key, None)
    entry.update(shape.to_report())


def _gripper_samples(report: dict, verb: str) -> tuple[dict, list[dict]]:
    """The report's gripper section and its per-frame samples; refused, saying what could not be done to
    it (``verb``), where the run has none."""
    gripper = report.get("gripper") or {}
    samples = gripper.get("frames") or []
    if not samples:
        raise FixError(f"this run has no gripper trajectory to {verb}")
    return gripper, samples


def _set_positions(report: dict, entry: dict, positions: np.ndarray, only: range | None = None) -> None:
    """Writes per-frame world positions (and their camera-frame copies) into ``entry["frames"]``; ``only``
    those frames where given."""
    camera_from_world = report_camera_from_world(report)
    for index, (frame, position) in enumerate(zip(entry["frames"], positions, strict=True)):
        if only is not None and index not in only:
            continue
        view = pose_at(camera_from_world, index)
        frame["position_world"] = np.round(position, 5).tolist()
        frame["position_cam"] = np.round(view[:3, :3] @ position + view[:3, 3], 5).tolist()


def _positions(entry: dict) -> np.ndarray:
    return np.array([f["position_world"] for f in entry["frames"]], float)


def radius_scale(report: dict, name: str, factor: float) -> None:
    """Scales a container's radius, keeping its bottom and its wall thickness."""
    entry = find_object(report, name)
    shape = Shape.from_report(entry)
    if not shape.is_container:
        raise FixError(f"object '{name}' is a {shape.kind}, not a container; use a scale fix instead")
    if not np.isfinite(factor) or factor <= 0:
        raise FixError(f"the radius scale must be positive, got {factor}")
    try:
        shape = shape.rim_scaled(factor)
    except ValueError as e:
        raise FixError(f"object '{name}': {e}") from e
    _write_shape(entry, shape)


def scale(report: dict, name: str, factors: tuple[float, float, float]) -> None:
    """Scales an object about its base (its bottom stays on its support)."""
    entry = find_object(report, name)
    shape = Shape.from_report(entry)
    factors = tuple(float(f) for f in factors)
    if len(factors) != 3 or not all(np.isfinite(f) and f > 0 for f in factors):
        raise FixError(f"scale factors must be three positive numbers, got {list(factors)}")
    round_ = shape.is_round
    if round_ and abs(factors[0] - factors[1]) > 1e-9:
        raise FixError(f"object '{name}' is round ({shape.kind}): scale x and y by the same factor")
    old_height = shape.size[2]
    shape = shape.scaled(factors)
    _write_shape(entry, shape)
    positions = _positions(entry)
    positions[:, 2] += (shape.size[2] - old_height) / 2
    _set_positions(report, entry, positions)


def offset(
    report: dict,
    name: str,
    delta: tuple[float, float, float],
    frame: int | None,
    blend: int = 5,
    until: bool = False,
) -> None:
    """Moves an object by ``delta`` (world, m) from ``frame`` on (blended in over the ``blend`` frames
    before it), or everywhere (``frame`` None). With ``until``, up to ``frame`` instead, blended out over
    the ``blend`` frames after it: where the object rests until a grasp, its resting pose (where the
    simulation starts it) moves and the path the video gives it once carried stays."""
    entry = find_object(report, name)
    positions = _positions(entry)
    count = len(positions)
    if frame is not None and not 0 <= frame < count:
        raise FixError(f"frame {frame} is outside the video (frames 0 to {count - 1})")
    weights = np.ones(count)
    if frame is not None:
        frames = np.arange(count)
        if blend == 0:
            weights = (frames <= frame if until else frames >= frame).astype(float)
        elif until:
            weights = np.clip(1.0 - (frames - frame) / blend, 0.0, 1.0)
        else:
            weights = np.clip((frames - (frame - blend)) / blend, 0.0, 1.0)
    positions += weights[:, None] * np.asarray(delta, float)
    _set_positions(report, entry, positions)
    if entry.get("static"):
        entry["static"] = frame is None


def collision(
    report: dict,
    name: str,
    mode: str,
    threshold: float = 0.05,
    max_pieces: int = 16,
    time_limit: float = COACD_TIME_LIMIT_S,
) -> dict | None:
    """Replaces an object's collision; for a container, runs the opening probe and returns its result."""
    entry = find_object(report, name)
    shape = set_collision(Shape.from_report(entry), mode, threshold, max_pieces, time_limit)
    _write_shape(entry, shape)
    if shape.is_container:
        result = opening_probe(shape)
        entry["opening_probe"] = result
        return result
    return None


def keyframe_frame(report: dict, event: str, name: str) -> int | None:
    """The frame of object ``name``'s ``event`` keyframe, or None."""
    return next(
        (k["frame"] for k in report.get("keyframes", []) if k["event"] == event and k["object"] == name), None
    )


def keyframe(report: dict, name: str, event: str, frame: int | None) -> None:
    """Moves (or adds) the ``event`` keyframe of an object to ``frame``; None deletes it."""
    find_object(report, name)
    count = report["video"]["frames"]
    if frame is not None and not 0 <= frame < count:
        raise FixError(f"keyframe frame {frame} is outside the video (frames 0 to {count - 1})")
    keyframes = [k for k in report.get("keyframes", []) if not (k["event"] == event and k["object"] == name)]
    if frame is not None:
        keyframes.append({"frame": int(frame), "event": event, "object": name})
    report["keyframes"] = sorted(keyframes, key=lambda k: k["frame"])


def release_opening(report: dict, name: str, width: float, frame: int | None, limit: bool = False) -> None:
    """Opens the gripper to at least ``width`` (m) from ``frame`` (default: the release keyframe) on.

    Where a careful recording opens the fingers too little to free the object in
    simulation, this widens the release; samples already wider stay as they are.
    With ``limit`` the fingers open to at most ``width`` instead: a hand that lets
    go inside a narrow container and opens fully presses its pads into the walls
    and carries the container away.
    """
    gripper, samples = _gripper_samples(report, "widen")
    if frame is None:
        frame = keyframe_frame(report, "release", name)
        if frame is None:
            raise FixError(f"object '{name}' has no release keyframe; give the frame to open from")
    full = float(gripper.get("max_opening_m", MAX_OPENING))
    bound = max if not limit else min
    for sample in samples[frame:]:
        sample["gripper"] = round(bound(float(sample["gripper"]), min(width / full, 1.0)), 4)


def _polyline(points: list[np.ndarray], count: int) -> np.ndarray:
    """``count`` points spread evenly along the path through ``points``, both ends included."""
    points = np.array(points, float)
    lengths = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))]
    if lengths[-1] <= 0:
        return np.repeat(points[:1], count, axis=0)
    at = np.linspace(0.0, lengths[-1], count)
    return np.stack([np.interp(at, lengths, points[:, a]) for a in range(3)], axis=1)


def _approach_axis(sample: dict) -> np.ndarray:
    w, x, y, z = sample["quaternion_world"]
    return Rotation.from_quat([x, y, z, w]).as_matrix()[:, 2]


def hold_frames(report: dict, name: str) -> dict[str, int | None]:
    """``{"grasp": frame, "release": frame}``: where the recorded fingers stall on the object and where they
    open again (``carry.gripper_hold``), each the object's keyframe where the recording does not show it."""
    samples = (report.get("gripper") or {}).get("frames") or []
    stall, opened = (
        gripper_hold(np.array([s["gripper"] for s in samples], float)) if samples else (None, None)
    )
    return {
        event: keyframe_frame(report, event, name) if frame is None else frame
        for event, frame in (("grasp", stall), ("release", opened))
    }


def approach(
    report: dict, name: str, phase: str, clearance: float | None, count: int | None, anchor: int | None = None
) -> None:
    """Rebuilds the hand's path into the grasp (``phase="grasp"``) or out of the release along its approach axis.

    A recorded hand that comes in low beside the object (or leaves sideways) can
    sweep a finger through it in simulation. Over the last ``count`` frames
    before the recorded grasp stall the hand now rises along its approach axis
    to ``clearance`` metres above the grasp pose, moves over it and comes
    straight down, fingers as wide as the recording opened them; after the
    release it waits until the fingers have opened, rises straight up and
    rejoins the recording ``count`` frames on. ``clearance`` defaults to the
    object's half-diagonal plus :data:`APPROACH_MARGIN`. ``anchor``: the grasp or release frame
    (:func:`hold_frames`' where None; a suggestion names it, so that once the release keyframe has
    moved, the retreat from the new one is a new suggestion).
    """
    gripper, samples = _gripper_samples(report, "change")
    if phase not in APPROACH_PHASES:
        raise FixError(f"unknown approach phase {phase!r:.40}; use one of {', '.join(APPROACH_PHASES)}")
    entry = find_object(report, name)
    if clearance is None:
        clearance = float(np.linalg.norm(entry["size"])) / 2 + APPROACH_MARGIN
    if count is None:
        count = max(3, round(APPROACH_S * report["video"]["fps"]))
    positions = np.array([s["position_world"] for s in samples], float)
    openings = np.array([s["gripper"] for s in samples], float)
    if anchor is None:
        anchor = hold_frames(report, name)[phase]
    if anchor is None:
        raise FixError(f"neither the recording nor the keyframes of '{name}' give a {phase}")
    axis = _approach_axis(samples[anchor])
    above = positions[anchor] - axis * clearance
    if phase == "grasp":
        start = max(0, anchor - count)
        if anchor - start < 2:
            raise FixError(f"the grasp at frame {anchor} leaves no frames before it to approach in")
        level = positions[start] - axis * max(0.0, float(np.dot(positions[start] - above, axis)))
        changed = range(start + 1, anchor)
        positions[start + 1 : anchor] = _polyline([positions[start], level, above, positions[anchor]],
                                                  anchor - start + 1)[1:-1]  # fmt: skip
        widest = float(openings[start:anchor].max())
        for frame in range(start, anchor):
            samples[frame]["gripper"] = round(widest, 4)
    else:
        last = len(samples) - 1
        window = openings[anchor : min(last, anchor + count) + 1]
        open_at = anchor + int(np.argmax(window >= window.max() - 1e-3))
        end = min(last, open_at + count)
        if end - open_at < 2:
            raise FixError(f"the release at frame {anchor} leaves no frames after it to retreat in")
        level = positions[end] - axis * max(0.0, float(np.dot(positions[end] - above, axis)))
        path = _polyline([positions[anchor], above, level, positions[end]], end - open_at + 1)
        changed = range(anchor + 1, end)
        positions[anchor + 1 : open_at + 1] = positions[anchor]
        positions[open_at + 1 : end] = path[1:-1]
    _set_positions(report, gripper, positions, changed)


MIN_PAD_OVERLAP = 0.01
"""m of finger pad left on the held object when a grasp is moved up it (``grasp_height``)."""


def max_grasp_rise(size_z: float) -> float:
    """How far (m) a grasp may move up an object of this height and keep :data:`MIN_PAD_OVERLAP` of pad on it.

    The pads reach ``FINGERTIP_BELOW`` past the grasp centre, which sits at the object's centre height.
    """
    return max(0.0, size_z / 2 + FINGERTIP_BELOW - MIN_PAD_OVERLAP)


def grasp_height(report: dict, name: str, rise: float) -> None:
    """Moves the hand's whole path ``rise`` metres back along its approach axis: it grasps the object higher.

    A gripper that holds an object by its middle lowers its palm and finger roots into whatever the object
    goes into (a cup's rim, a shelf's board); held nearer its top, the object goes as deep with the hand
    higher. The object's own motion is unchanged; at most :func:`max_grasp_rise` of its height.
    """
    gripper, samples = _gripper_samples(report, "change")
    entry = find_object(report, name)
    limit = max_grasp_rise(float(entry["size"][2]))
    if rise > limit + 1e-9:
        raise FixError(
            f"'{name}' is {entry['size'][2] * 1000:.0f} mm tall: a grasp {rise * 1000:.0f} mm higher would leave "
            f"less than {MIN_PAD_OVERLAP * 1000:.0f} mm of finger pad on it (at most {limit * 1000:.0f} mm)"
        )
    positions = np.array([s["position_world"] for s in samples], float)
    axes = np.array([_approach_axis(s) for s in samples])
    _set_positions(report, gripper, positions - axes * rise)


def descent_below(heights: np.ndarray, grasp: int, release: int, height: float) -> int | None:
    """The first frame of the hand's last descent below ``height`` (m) while it carries an object: after the
    last frame from the grasp to the release where it is at or above it; None where it never rises to it or
    does not come down from it before the release."""
    above = [f for f in range(grasp, min(release, len(heights) - 1) + 1) if heights[f] >= height]
    if not above or above[-1] >= min(release, len(heights) - 1):
        return None
    return above[-1] + 1


def release_above(report: dict, name: str, height: float, frame: int | None) -> None:
    """The hand goes no lower than ``height`` (m, world, its grasp centre) once it comes down through it
    with the object for the last time before the release, and lets go there: the object drops the rest of
    the way.

    A person puts a cup or a block deep into a container, hand and all; a gripper's palm and fingers that do
    not fit in the opening cannot follow. From the first frame of that descent (:func:`descent_below`) the
    hand's path is held at that height (its sideways motion kept), and the fingers open ``frame`` on (by
    default that first frame) as the recording opened them at its release: the opening's profile is moved
    earlier, and so is the object's release keyframe. Having let go, the hand keeps its place until it has
    risen clear of the height, then rejoins its recorded path.
    """
    gripper, samples = _gripper_samples(report, "change")
    find_object(report, name)
    positions = np.array([s["position_world"] for s in samples], float)
    openings = np.array([s["gripper"] for s in samples], float)
    grasp, release = hold_frames(report, name).values()
    if grasp is None or release is None or release <= grasp:
        raise FixError(f"neither the recording nor the keyframes of '{name}' give a grasp and a release")
    first = descent_below(positions[:, 2], grasp, release, height)
    if first is None:
        raise FixError(
            f"the hand carrying '{name}' does not come down below {height * 1000:.0f} mm from above it "
            f"(frames {grasp} to {release})"
        )
    let_go = first if frame is None else int(frame)
    if not first <= let_go <= release:
        raise FixError(f"the hand can let go of '{name}' on frames {first} to {release}, not on {let_go}")
    last = len(samples) - 1
    shift = release - let_go
    changed = range(first, last + 1)
    positions[first:, 2] = np.maximum(positions[first:, 2], height)
    # Having let go, the hand rises straight up: it keeps its place until it is clear above the height
    # (fingers swept sideways at the rim would knock what it let go of, or the container), then joins the
    # recording again over a few frames.
    clear = [f for f in range(let_go, last + 1) if positions[f, 2] >= height + APPROACH_MARGIN]
    rejoin = clear[0] if clear else last + 1
    held_at = positions[let_go, :2].copy()
    positions[let_go:rejoin, :2] = held_at
    for step, f in enumerate(range(rejoin, min(rejoin + RELEASE_REJOIN_FRAMES, last + 1)), start=1):
        share = step / (RELEASE_REJOIN_FRAMES + 1)
        positions[f, :2] = (1.0 - share) * held_at + share * positions[f, :2]
    for f in range(let_go, last + 1):
        samples[f]["gripper"] = round(float(openings[min(f + shift, last)]), 4)
    _set_positions(report, gripper, positions, changed)
    keyframe(report, name, "release", let_go)


SET_DOWN_PRESS = 0.003
"""m: a hand that goes farther than this along its approach axis after the object it holds has landed presses
it into what it landed on (``set_down``)."""


def pressed_after_landing(report: dict, landed: int, release: int) -> float:
    """How far (m) the hand's recorded path goes beyond its frame-``landed`` pose along its approach axis up to
    ``release``: a hand that keeps pushing an object down once it stands on its support."""
    samples = (report.get("gripper") or {}).get("frames") or []
    if not samples or not 0 <= landed < release < len(samples):
        return 0.0
    positions = np.array([s["position_world"] for s in samples[landed : release + 1]], float)
    return float(np.max((positions - positions[0]) @ _approach_axis(samples[landed])))


def set_down(report: dict, name: str, landed: int) -> None:
    """From frame ``landed`` (the video shows the object standing on its support there) to the release, the
    hand goes no farther along its approach axis than it was on that frame: it sets the object down and lets
    go, instead of pressing it into its support.

    A recording at a low rate, interpolated, or a hand whose controller pushes on after contact goes on down
    a few millimetres once the object stands; in simulation the object cannot follow, and the pads slide
    down it and lose it (seed 39, a can set down on a plate: 9 mm). Sideways motion is kept.
    """
    gripper, samples = _gripper_samples(report, "change")
    find_object(report, name)
    release = hold_frames(report, name)["release"]
    if release is None or not 0 <= landed < release:
        raise FixError(
            f"'{name}' is let go on frame {release}: it cannot be set down on frame {landed} before it"
        )
    positions = np.array([s["position_world"] for s in samples], float)
    axis = _approach_axis(samples[landed])
    beyond = np.maximum(0.0, (positions[landed : release + 1] - positions[landed]) @ axis)
    positions[landed : release + 1] -= beyond[:, None] * axis
    _set_positions(report, gripper, positions, range(landed + 1, release + 1))


def _shift_held_path(
    report: dict, name: str, delta, rise: tuple[int, int], fall: tuple[int, int] | None
) -> None:
    """Moves the hand's path, and the object it holds, by ``delta`` (world, m): blended in (minimum jerk)
    over the frames ``rise``, fully after them, blended out over ``fall`` (or fully to the end without)."""
    gripper, samples = _gripper_samples(report, "change")
    entry = find_object(report, name)
    frames = np.arange(len(samples), dtype=float)
    weights = min_jerk((frames - rise[0]) / max(rise[1] - rise[0], 1))
    if fall is not None:
        weights = np.minimum(weights, min_jerk((fall[1] - frames) / max(fall[1] - fall[0], 1)))
    last = len(samples) - 1 if fall is None else fall[1]
    shift = weights[:, None] * np.asarray(delta, float)
    positions = np.array([s["position_world"] for s in samples], float) + shift
    _set_positions(report, gripper, positions, range(rise[0], last + 1))
    _set_positions(report, entry, _positions(entry) + shift[: len(entry["frames"])], range(rise[0], last + 1))


def pour_offset(report: dict, name: str, delta: tuple[float, float, float]) -> None:
    """Moves the hand, and the container it pours from, by ``delta`` (world, m) while it pours: fully from the
    ``pour_start`` keyframe to ``pour_end``, blended in (minimum jerk) from the lift and out by the release, so
    that it takes the container, and sets it down, where it did.

    A pour that misses its target spills beside it; where the hand tips the container is what moves the spill.
    """
    _, samples = _gripper_samples(report, "change")
    events = {event: keyframe_frame(report, event, name) for event in ("lift", "pour_start", "pour_end")}
    held = hold_frames(report, name)
    if events["pour_start"] is None or held["grasp"] is None:
        raise FixError(f"'{name}' has no pour_start keyframe (nor grasp) to move its pour from")
    last = len(samples) - 1
    lift = events["lift"] if events["lift"] is not None else held["grasp"]
    start, end = events["pour_start"], events["pour_end"] if events["pour_end"] is not None else last
    release = held["release"] if held["release"] is not None else last
    _shift_held_path(report, name, delta, (lift, start), (end, release))


def place_offset(report: dict, name: str, delta: tuple[float, float, float]) -> None:
    """Moves where the hand puts the object down by ``delta`` (world, m): blended in (minimum jerk) from the
    lift to the release, fully from the release on (the hand backs away from where it let go), so that it
    still takes the object where it did. The object then rests where it was let go.

    A book let go short of a shelf's board tips off its edge; where the hand lets go is what moves it.
    """
    held = hold_frames(report, name)
    if held["grasp"] is None or held["release"] is None:
        raise FixError(f"'{name}' has no grasp and release keyframes to move its placing between")
    lift = keyframe_frame(report, "lift", name)
    _shift_held_path(report, name, delta, (held["grasp"] if lift is None else lift, held["release"]), None)
    _rest_after(report, find_object(report, name), held["release"])


SLOT_WIDTH_RANGE = (0.002, 0.1)
"""m: the slot widths a dish rack's slot-width fix may set."""


def slot_width(report: dict, name: str, width: float) -> None:
    """Sets a dish rack's slots to ``width`` (m) apart, divider face to divider face. The slots stay where they
    are (the pitch stays), the dividers thin; where they would be thinner than
    :data:`..geometry.kinds.dish_rack.MIN_DIVIDER`, the pitch grows and the row with it.

    A plate thicker than the fitted slots stands on the dividers' tops; a slot read a few millimetres narrow
    from the depth is what keeps it out.
    """
    entry = find_object(report, name)
    shape = Shape.from_report(entry)
    if shape.kind != dish_rack.DISH_RACK.name:
        raise FixError(f"object '{name}' is a {shape.kind}, not a dish rack: it has no slots to widen")
    params = dict(shape.params, slot_width=float(width))
    params["pitch"] = max(params["pitch"], params["slot_width"] + dish_rack.MIN_DIVIDER)
    size = (shape.size[0], max(shape.size[1], dish_rack.row_width(params)), shape.size[2])
    _write_shape(entry, dataclasses.replace(shape, size=size, params=params))


PEG_RADIUS_RANGE = (0.001, 0.03)
"""m: the peg radii a rack's peg-radius fix may set."""


def peg_radius(report: dict, name: str, radius: float) -> None:
    """Sets a rack's pegs' radius (m; they share one). The post stays where it stands on every frame: the rack's
    box, which its pegs' ends bound, is moved with its new extent.

    A peg a few pixels across is fitted from them: one fitted thicker than the hung mug's handle leaves room
    for keeps the handle off it.
    """
    entry = find_object(report, name)
    shape = Shape.from_report(entry)
    if shape.kind != rack.RACK.name:
        raise FixError(f"object '{name}' is a {shape.kind}, not a rack: it has no pegs to thin")
    params = dict(shape.params, peg_radius=float(radius))
    moved = dataclasses.replace(shape, size=rack.size_of(params), params=params)
    shift = rack.post_offset(shape) - rack.post_offset(moved)  # local: where the box's centre goes
    turns = Rotation.from_quat([frame["quaternion_world"] for frame in entry["frames"]], scalar_first=True)
    _set_positions(report, entry, _positions(entry) + turns.apply(shift))
    _write_shape(entry, moved)


def _rest_after(report: dict, entry: dict, frame: int) -> None:
    """The object stays as it is on ``frame`` for the rest of the video (where a moved placing puts it, it
    rests: the video's fall from where it was let go is no longer what happens)."""
    camera_from_world = report_camera_from_world(report)
    at = entry["frames"][frame]
    w, x, y, z = at["quaternion_world"]
    turn = Rotation.from_quat([x, y, z, w])
    for index in range(frame + 1, len(entry["frames"])):
        view = pose_at(camera_from_world, index)
        seen = (Rotation.from_matrix(view[:3, :3]) * turn).as_quat()
        entry["frames"][index].update(
            position_world=list(at["position_world"]), quaternion_world=list(at["quaternion_world"]),
            position_cam=np.round(view[:3, :3] @ np.asarray(at["position_world"]) + view[:3, 3], 5).tolist(),
            quaternion_cam=np.round(seen[[3, 0, 1, 2]], 6).tolist(),
        )  # fmt: skip


def apply_fix(report: dict, fix: dict) -> dict:
    """Applies one fix to ``report`` (in place) and logs it.

    Args:
        report: The run's report.json content.
        fix: ``{"kind": one of FIX_KINDS, "object": name, ...arguments}``: ``factor``
            (radius_scale), ``factors`` (scale), ``delta``, ``frame``, ``blend``
            (offset), ``mode``, ``threshold``, ``max_pieces``, ``time_limit`` (collision), ``event``,
            ``frame`` (keyframe), ``width_m``, ``frame``, ``limit`` (release_opening), ``phase``,
            ``clearance_m``, ``frames`` (approach), ``rise_m`` (grasp_height), ``height_m``, ``frame``
            (release_above), ``frame`` (set_down: where the object has landed), ``part``, ``axis``, ``pivot``,
            ``range``, ``damping``, ``frictionloss`` (joint: a moving part's joint, world frame).

    Returns:
        The edit-log entry.

    Raises:
        FixError: The fix does not apply; ``report`` is unchanged.
    """
    kind, name = fix.get("kind"), fix.get("object")
    if kind not in FIX_KINDS:
        raise FixError(f"unknown fix {kind!r}; use one of {', '.join(FIX_KINDS)}")
    entry = find_object(report, name)
    check_fix_arguments(fix, report["video"]["frames"])
    before = {k: copy.deepcopy(entry[k]) for k in SHAPE_FIELDS if k in entry}
    before_keyframes = copy.deepcopy(report.get("keyframes", []))
    before_gripper = copy.deepcopy((report.get("gripper") or {}).get("frames", []))
    probe = None
    try:
        if kind == "radius_scale":
            radius_scale(report, name, float(fix["factor"]))
        elif kind == "scale":
            scale(report, name, tuple(fix["factors"]))
        elif kind == "offset":
            offset(report, name, tuple(fix["delta"]), fix.get("frame"), int(fix.get("blend", 5)),
                   bool(fix.get("until", False)))  # fmt: skip
        elif kind == "collision":
            probe = collision(
                report,
                name,
                fix["mode"],
                float(fix.get("threshold", 0.05)),
                int(fix.get("max_pieces", 16)),
                float(fix.get("time_limit", COACD_TIME_LIMIT_S)),
            )
        elif kind == "release_opening":
            release_opening(
                report, name, float(fix["width_m"]), fix.get("frame"), bool(fix.get("limit", False))
            )
        elif kind == "grasp_height":
            grasp_height(report, name, float(fix["rise_m"]))
        elif kind == "release_above":
            release_above(report, name, float(fix["height_m"]), fix.get("frame"))
        elif kind == "set_down":
            set_down(report, name, int(fix["frame"]))
        elif kind == "joint":
            joint_fix.joint(report, entry, fix)
        elif kind == "pour_offset":
            pour_offset(report, name, tuple(fix["delta"]))
        elif kind == "place_offset":
            place_offset(report, name, tuple(fix["delta"]))
        elif kind == "slot_width":
            slot_width(report, name, float(fix["width_m"]))
        elif kind == "peg_radius":
            peg_radius(report, name, float(fix["radius_m"]))
        elif kind == "approach":
            clearance = fix.get("clearance_m")
            approach(report, name, fix["phase"], None if clearance is None else float(clearance),
                     fix.get("frames"), fix.get("frame"))  # fmt: skip
        else:
            keyframe(report, name, fix["event"], fix.get("frame"))
    except (KeyError, TypeError, ValueError) as e:
        _restore(report, entry, before, before_keyframes, before_gripper)
        raise FixError(f"fix '{kind}' on '{name}' is missing or has a bad argument ({e})") from e
    except Real2GymError:
        _restore(report, entry, before, before_keyframes, before_gripper)
        raise
    log_entry = {
        "kind": kind,
        "object": name,
        "args": {k: v for k, v in fix.items() if k not in ("kind", "object")},
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "before": before,
        "before_keyframes": before_keyframes,
    }
    if kind == "release_opening":
        log_entry["before_gripper"] = [s["gripper"] for s in before_gripper]
    elif kind in ("approach", "grasp_height", "release_above", "set_down", "pour_offset", "place_offset"):
        log_entry["before_gripper_frames"] = before_gripper
    if probe is not None:
        log_entry["opening_probe"] = probe
    report.setdefault("edit_log", []).append(log_entry)
    entry.setdefault("edits", []).append({k: log_entry[k] for k in ("kind", "args", "time")})
    return log_entry


def _real(value, what: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise FixError(f"{what} must be a finite number, got {value!r:.40}")
    if not low <= value <= high:
        raise FixError(f"{what} is {value:g}; it must lie between {low:g} and {high:g}")
    return float(value)


def _frame(value, what: str, frames: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise FixError(f"{what} must be a whole frame number, got {value!r:.40}")
    if not 0 <= value < frames:
        raise FixError(f"{what} {value} is outside the video (frames 0 to {frames - 1})")


def _boolean(fix: dict, key: str, what: str) -> None:
    if not isinstance(fix.get(key, False), bool):
        raise FixError(f"{what} must be true or false, got {fix.get(key)!r:.40}")


def check_fix_arguments(fix: dict, frames: int) -> None:
    """Checks a fix's arguments against physically sensible ranges and the video.

    Args:
        fix: As for :func:`apply_fix`.
        frames: Number of video frames.

    Raises:
        FixError: Naming the argument, its value and the range it must lie in.
    """
    kind = fix.get("kind")
    low, high = SCALE_RANGE
    if kind == "radius_scale":
        _real(fix.get("factor"), "the rim scale", low, high)
    elif kind == "scale":
        factors = fix.get("factors")
        if not isinstance(factors, (list, tuple)) or len(factors) != 3:
            raise FixError(f"a scale fix needs three factors (x, y, z), got {factors!r:.60}")
        for axis, factor in zip("xyz", factors, strict=True):
            _real(factor, f"the scale along {axis}", low, high)
    elif kind == "offset":
        delta = fix.get("delta")
        if not isinstance(delta, (list, tuple)) or len(delta) != 3:
            raise FixError(f"an offset needs three numbers (metres along x, y, z), got {delta!r:.60}")
        for axis, value in zip("xyz", delta, strict=True):
            _real(value, f"the offset along {axis} (metres)", -MAX_OFFSET_M, MAX_OFFSET_M)
        _frame(fix.get("frame"), "the offset's frame", frames, optional=True)
        blend = fix.get("blend", 5)
        if isinstance(blend, bool) or not isinstance(blend, int) or not 0 <= blend < frames:
            raise FixError(f"the offset's blend must be 0 to {frames - 1} frames, got {blend!r:.40}")
        _boolean(fix, "until", "the offset's 'until'")
    elif kind in ("pour_offset", "place_offset"):
        what = kind.replace("_", " ").replace("place", "placing")
        delta = fix.get("delta")
        if not isinstance(delta, (list, tuple)) or len(delta) != 3:
            raise FixError(f"a {what} needs three numbers (metres along x, y, z), got {delta!r:.60}")
        for axis, value in zip("xyz", delta, strict=True):
            _real(value, f"the {what} along {axis} (metres)", -MAX_OFFSET_M, MAX_OFFSET_M)
    elif kind == "collision":
        if fix.get("mode") not in COLLISION_MODES:
            raise FixError(
                f"unknown collision {fix.get('mode')!r:.40}; use one of {', '.join(COLLISION_MODES)}"
            )
        _real(fix.get("threshold", 0.05), "the CoACD concavity threshold", *COACD_THRESHOLD_RANGE)
        pieces = fix.get("max_pieces", 16)
        if isinstance(pieces, bool) or not isinstance(pieces, int) or not 1 <= pieces <= COACD_MAX_PIECES:
            raise FixError(f"the CoACD piece limit must be 1 to {COACD_MAX_PIECES}, got {pieces!r:.40}")
        _real(fix.get("time_limit", COACD_TIME_LIMIT_S), "the CoACD time limit (s)", 0.001, 3600.0)
    elif kind == "release_opening":
        _real(fix.get("width_m"), "the release opening (metres)", 0.001, MAX_OPENING)
        _frame(fix.get("frame"), "the release opening's frame", frames, optional=True)
        _boolean(fix, "limit", "the release opening's limit")
    elif kind == "slot_width":
        _real(fix.get("width_m"), "the slot width (metres)", *SLOT_WIDTH_RANGE)
    elif kind == "peg_radius":
        _real(fix.get("radius_m"), "the pegs' radius (metres)", *PEG_RADIUS_RANGE)
    elif kind == "grasp_height":
        _real(fix.get("rise_m"), "the grasp's rise (metres)", 0.001, MAX_OFFSET_M)
    elif kind == "release_above":
        _real(fix.get("height_m"), "the height the hand lets go at (metres)", -MAX_OFFSET_M, MAX_OFFSET_M)
        _frame(fix.get("frame"), "the frame the hand lets go on", frames, optional=True)
    elif kind == "set_down":
        _frame(fix.get("frame"), "the frame the object has landed on", frames)
    elif kind == "joint":
        try:
            joint_fix.check_joint_arguments(fix)
        except Real2GymError as e:
            raise FixError(str(e)) from None
    elif kind == "approach":
        if fix.get("phase") not in APPROACH_PHASES:
            raise FixError(
                f"unknown approach phase {fix.get('phase')!r:.40}; use one of {', '.join(APPROACH_PHASES)}"
            )
        if fix.get("clearance_m") is not None:
            _real(fix["clearance_m"], "the approach clearance (metres)", 0.005, MAX_OFFSET_M)
        _frame(
            fix.get("frame"),
            f"the {fix['phase']} frame the hand's path is rebuilt from",
            frames,
            optional=True,
        )
        count = fix.get("frames")
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or not 2 <= count < frames
        ):
            raise FixError(f"the approach must span 2 to {frames - 1} frames, got {count!r:.40}")
    elif kind == "keyframe":
        if fix.get("event") not in KEYFRAME_EVENTS:
            raise FixError(
                f"unknown keyframe event {fix.get('event')!r:.40}; use one of {', '.join(KEYFRAME_EVENTS)}"
            )
        _frame(fix.get("frame"), "the keyframe's frame", frames, optional=True)


def _restore(report: dict, entry: dict, before: dict, keyframes: list, gripper: list | None = None) -> None:
    """Puts an object, the keyframes and the gripper back; ``gripper``: whole samples, or only openings."""
    for key in SHAPE_FIELDS:
        entry.pop(key, None)
    entry.update(copy.deepcopy(before))
    report["keyframes"] = copy.deepcopy(keyframes)
    if gripper:
        samples = (report.get("gripper") or {}).get("frames", [])
        if isinstance(gripper[0], dict):
            samples[:] = copy.deepcopy(gripper)
        else:
            for sample, opening in zip(samples, gripper, strict=False):
                sample["gripper"] = opening


def undo_last(report: dict) -> dict:
    """Reverts the last logged fix; returns its log entry.

    Raises:
        FixError: Nothing to undo.
    """
    log = report.get("edit_log") or []
    if not log:
        raise FixError("there is no fix to undo in this run")
    last = log.pop()
    entry = find_object(report, last["object"])
    gripper = last.get("before_gripper_frames", last.get("before_gripper"))
    _restore(report, entry, last["before"], last["before_keyframes"], gripper)
    if entry.get("edits"):
        entry["edits"].pop()
    return last


def recorded_fixes(report: dict) -> list[dict]:
    """The fixes logged in a report, ready for :func:`apply_fix` on another run."""
    return [{"kind": e["kind"], "object": e["object"], **e["args"]} for e in report.get("edit_log", [])]
