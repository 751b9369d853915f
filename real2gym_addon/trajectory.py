"""Reading and checking ``trajectory.json``: the recorded gripper, sample by sample.

:func:`read_trajectory` is the door: it checks the whole file before any stage
runs (structure, frames inside the video and in order, finite positions within
reach, unit quaternions, the gripper's state in range) and says how much of the
video the recording covers. Robots write their hand in several ways (docs/data-contract.md,
docs/data-contract.md): in the camera, world or robot-base frame; at the flange with a
``tcp_offset`` to the grasp centre; with another axis convention (``axes``); the gripper
as fraction open, finger gap in metres or closure, commanded or measured. The reader
turns every form into one: the grasp centre in the camera or world frame, z the
approach and y the opening direction, and the finger gap in metres. The geometry stage
turns the checked samples into a per-frame world-frame path
(``geometry.keyframes.load_trajectory``).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DemoFolderError, WarningLog
from .json_files import read_json_file

FRAMES_OF = ("camera", "world", "robot_base")
"""What a recorded position is relative to."""
GRIPPER_KINDS = ("commanded", "measured")
"""A gripper state is what the robot was told (closed = 0 gap) or what its fingers measured
(the object's width while it holds)."""
AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
"""Signed axes of the recorded rotation that ``axes`` may name."""
DEFAULT_AXES = {"approach": "+z", "opening": "+y"}
"""The contract's convention: z palm to fingertips, y the direction the fingers open."""
RIGID_TOLERANCE = 1e-3
"""How far a given 4x4's rotation part may be from orthonormal."""
MAX_TCP_OFFSET = 0.5
"""Metres: a longer flange-to-grasp-centre offset is a unit mistake."""
QUATERNION_TOLERANCE = 0.01
"""How far from 1 a recorded quaternion's norm may be (it is normalised)."""
MAX_GRIPPER_WIDTH = 0.2
"""Metres: the widest finger gap a ``gripper_width_m`` may give."""
MAX_POSITION = 100.0
"""Metres from the frame's origin (a gripper's, or camera.json's camera); farther is a unit mistake."""
HELD_GAP_S = 0.5
"""Seconds at the start or end of the video a recording may miss (held at its first or last sample)."""
FULL_OPENING = 0.08
"""Metres between the finger pads of the simulated gripper when fully open."""
HANDS = ("right", "left")
"""A person's hand that a hand-form recording tracks (``"hand"``)."""
FINGERTIP_PAD = 0.007
"""Metres a tracked fingertip lies beyond the pad that touches (a tracker's tip is the joint at the finger's
end, inside it): the gripper's gap is the tips' distance less this on each side (``fingertip_pad_m``)."""
MAX_FINGERTIP_PAD = 0.02
"""Metres: the largest ``fingertip_pad_m`` a recording may give."""
MIN_REACH = 0.01
"""Metres: the grasp centre is at least this far from the wrist, across the fingers' opening direction (else
the approach is not defined)."""


@dataclasses.dataclass(frozen=True)
class TrajectorySamples:
    """The checked samples of trajectory.json, in frame order.

    Whatever form the file used, the samples are the grasp centre (between the
    finger pads) in the camera or world frame, in the contract's axes (z the
    approach, y the opening direction).

    Attributes:
        frame_of: ``"camera"`` or ``"world"``: the frame positions and rotations are in
            (a ``robot_base`` recording is moved into the frame its transform names).
        frames: ``N`` video frames (0-based, increasing) that have a sample.
        positions: ``Nx3`` grasp centre, metres.
        quaternions: ``Nx4`` unit ``[w, x, y, z]``.
        opening: ``N`` gripper opening in [0, 1], 1 = fully open (:data:`FULL_OPENING`).
        kind: ``"commanded"`` or ``"measured"``.
        form: What the file used, for the report: frame, gripper field, tcp offset, axes.
    """

    frame_of: str
    frames: np.ndarray
    positions: np.ndarray
    quaternions: np.ndarray
    opening: np.ndarray
    kind: str = "commanded"
    form: dict = dataclasses.field(default_factory=dict)


def _vector(sample: dict, key: str, count: int, where: str) -> list[float]:
    value = sample.get(key)
    if (
        not isinstance(value, list)
        or len(value) != count
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value)
    ):
        raise DemoFolderError(f"{where}: '{key}' must be a list of {count} numbers, got {value!r:.80}")
    if not all(math.isfinite(v) for v in value):
        raise DemoFolderError(f"{where}: '{key}' holds NaN or infinite values ({value})")
    return [float(v) for v in value]


def _number(sample: dict, key: str, where: str, low: float, high: float, meaning: str) -> float:
    value = sample[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DemoFolderError(f"{where}: '{key}' must be a finite number, got {value!r:.40}")
    if not low <= value <= high:
        raise DemoFolderError(
            f"{where}: '{key}' is {value:g}; it must lie in [{low:g}, {high:g}] ({meaning})"
        )
    return float(value)


GRIPPER_FIELDS = ("gripper", "gripper_width_m", "gripper_closure")
"""The per-sample gripper state: fraction open, finger gap in metres, closure (0 open, 1 closed)."""


def _width(sample: dict, where: str, full: float) -> tuple[str, float] | None:
    """The finger gap (m) from whichever of the contract's forms the sample uses, and that form's name."""
    given = [key for key in GRIPPER_FIELDS if key in sample]
    if len(given) > 1:
        raise DemoFolderError(f"{where}: give one gripper state, not {' and '.join(given)}")
    if not given:
        return None
    if given[0] == "gripper":
        return "gripper", full * _number(sample, "gripper", where, 0.0, 1.0, "fraction open, 1 = fully open")
    if given[0] == "gripper_closure":
        closure = _number(sample, "gripper_closure", where, 0.0, 1.0, "0 open, 1 closed")
        return "gripper_closure", full * (1.0 - closure)
    width = _number(sample, "gripper_width_m", where, 0.0, MAX_GRIPPER_WIDTH, "finger gap in metres")
    return "gripper_width_m", width


def _rigid(data: dict, key: str) -> np.ndarray:
    """A 4x4 rigid transform from the file, checked."""
    value = data.get(key)
    try:
        matrix = np.array(value, float)
    except (TypeError, ValueError):
        matrix = np.zeros(0)
    if matrix.shape != (4, 4) or not np.isfinite(matrix).all():
        raise DemoFolderError(f"trajectory.json: '{key}' must be a 4x4 matrix of finite numbers (rows of 4)")
    rotation = matrix[:3, :3]
    if (
        np.abs(rotation @ rotation.T - np.eye(3)).max() > RIGID_TOLERANCE
        or np.linalg.det(rotation) < 0
        or np.abs(matrix[3] - [0, 0, 0, 1]).max() > 1e-9
    ):
        raise DemoFolderError(
            f"trajectory.json: '{key}' is not a rigid transform (its rotation part must be orthonormal "
            "with determinant 1 and its last row 0 0 0 1)"
        )
    if np.linalg.norm(matrix[:3, 3]) > MAX_POSITION:
        raise DemoFolderError(
            f"trajectory.json: '{key}' moves by {np.linalg.norm(matrix[:3, 3]):.3g} m; translations are in metres"
        )
    return matrix


def _axis(name: str, value: Any) -> np.ndarray:
    if value not in AXES:
        raise DemoFolderError(
            f"trajectory.json: axes '{name}' must be one of {', '.join(AXES)}, got {value!r:.40}"
        )
    vector = np.zeros(3)
    vector["xyz".index(value[1])] = 1.0 if value[0] == "+" else -1.0
    return vector


def _axes(data: dict) -> np.ndarray:
    """3x3 whose columns are the contract's x, y (opening) and z (approach) in the recorded pose's axes."""
    axes = data.get("axes", DEFAULT_AXES)
    if isinstance(axes, str):  # a description (the generators' short form writes one): the contract's axes
        axes = DEFAULT_AXES
    if not isinstance(axes, dict) or set(axes) - {"approach", "opening"}:
        raise DemoFolderError(
            'trajectory.json: \'axes\' must be an object like {"approach": "+z", "opening": "+y"}'
        )
    approach = _axis("approach", axes.get("approach", DEFAULT_AXES["approach"]))
    opening = _axis("opening", axes.get("opening", DEFAULT_AXES["opening"]))
    if abs(approach @ opening) > 0.5:
        raise DemoFolderError(
            f"trajectory.json: axes 'approach' and 'opening' must be different axes, got {axes}"
        )
    return np.c_[np.cross(opening, approach), opening, approach]


def _tcp_offset(data: dict, axes: np.ndarray) -> np.ndarray:
    """The grasp centre in the recorded pose's axes (m)."""
    value = data.get("tcp_offset", 0.0)
    if isinstance(value, bool):
        value = None
    if isinstance(value, (int, float)):
        offset = axes[:, 2] * float(value)  # along the approach axis
    elif (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        offset = np.array(value, float)
    else:
        raise DemoFolderError(
            f"trajectory.json: 'tcp_offset' must be metres along the approach axis, or [x, y, z] in the "
            f"recorded pose's axes; got {value!r:.60}"
        )
    if not np.isfinite(offset).all() or np.linalg.norm(offset) > MAX_TCP_OFFSET:
        raise DemoFolderError(
            f"trajectory.json: 'tcp_offset' {value} is over {MAX_TCP_OFFSET:g} m; it is in metres"
        )
    return offset


def _into_contract(data: dict, frame_of: str, positions: np.ndarray, quaternions: np.ndarray):
    """Recorded poses to grasp-centre poses in the contract's axes, in the camera or world frame.

    Returns:
        ``(frame_of, positions Nx3, quaternions Nx4 [w, x, y, z], form)``.
    """
    from scipy.spatial.transform import Rotation

    axes = _axes(data)
    offset = _tcp_offset(data, axes)
    recorded = Rotation.from_quat(quaternions[:, [1, 2, 3, 0]])
    positions = positions + recorded.apply(offset)
    rotation = recorded * Rotation.from_matrix(axes)
    form = {"frame_of": frame_of}
    if frame_of == "robot_base":
        given = [key for key in ("world_from_robot", "camera_from_robot") if key in data]
        if len(given) != 1:
            raise DemoFolderError(
                "trajectory.json: a 'robot_base' recording needs one of 'world_from_robot' or "
                "'camera_from_robot' (the robot base's 4x4 pose)"
            )
        base = _rigid(data, given[0])
        positions = positions @ base[:3, :3].T + base[:3, 3]
        rotation = Rotation.from_matrix(base[:3, :3]) * rotation
        frame_of = "world" if given[0] == "world_from_robot" else "camera"
        form["base"] = given[0]
    if np.any(offset):
        form["tcp_offset_m"] = [round(float(v), 5) for v in offset]
    if "axes" in data and isinstance(data["axes"], dict):
        form["axes"] = {**DEFAULT_AXES, **data["axes"]}
    return frame_of, positions, rotation.as_quat()[:, [3, 0, 1, 2]], form


def _samples(data: dict) -> list[dict]:
    """trajectory.json's ``samples``, checked to be a non-empty list of JSON objects."""
    samples = data.get("samples")
    if not isinstance(samples, list) or not samples:
        raise DemoFolderError("trajectory.json needs a non-empty 'samples' list")
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise DemoFolderError(f"trajectory.json: samples[{i}] must be a JSON object")
    return samples


def _hand_sample(
    sample: dict, where: str, last_opening: np.ndarray | None, pad: float
) -> tuple[list, list, float, np.ndarray]:
    """A tracked hand's sample as the gripper's: the grasp centre between the thumb's and the index finger's
    tips, the fingers opening along the line from the thumb's tip to the index's, the approach from the wrist
    to the grasp centre (square to the opening), and the gap as wide as the tips are apart less ``pad`` (m)
    each side.

    Returns:
        ``(position, quaternion [w, x, y, z], gap m, the opening direction)``.
    """
    from scipy.spatial.transform import Rotation

    try:
        wrist = np.array(sample.get("wrist"), float)
    except (TypeError, ValueError):
        wrist = np.zeros(0)
    if wrist.shape != (4, 4) or not np.isfinite(wrist).all():
        raise DemoFolderError(f"{where}: 'wrist' must be the wrist's 4x4 pose (rows of 4 finite numbers)")
    thumb = np.array(_vector(sample, "thumb_tip", 3, where))
    index = np.array(_vector(sample, "index_tip", 3, where))
    centre = (thumb + index) / 2
    gap = float(np.linalg.norm(index - thumb))
    if gap > 1e-4:
        opening = (index - thumb) / gap
    elif last_opening is not None:  # the tips touch: the fingers open as on the sample before
        opening = last_opening
    else:
        raise DemoFolderError(f"{where}: the thumb's and the index finger's tips are at the same place, and no "
                              "sample before says which way the fingers open")  # fmt: skip
    reach = centre - wrist[:3, 3]
    approach = reach - (reach @ opening) * opening
    if np.linalg.norm(approach) < MIN_REACH:
        raise DemoFolderError(
            f"{where}: the grasp centre between the fingertips is {np.linalg.norm(approach) * 1000:.0f} mm from "
            f"the wrist across the fingers; the wrist's position must be the wrist's, in metres"
        )
    approach /= np.linalg.norm(approach)
    rotation = np.c_[np.cross(opening, approach), opening, approach]
    quaternion = Rotation.from_matrix(rotation).as_quat()[[3, 0, 1, 2]]
    return centre.tolist(), quaternion.tolist(), max(gap - 2 * pad, 0.0), opening


def _from_hand(data: dict) -> tuple[dict, str]:
    """A hand-form recording (docs/data-contract.md, "Human hands") in the gripper's form: each sample's grasp
    centre, rotation and measured gap (:func:`_hand_sample`, less ``fingertip_pad_m`` (:data:`FINGERTIP_PAD`)
    each side, no wider than :data:`MAX_GRIPPER_WIDTH`)."""
    hand = data["hand"]
    if hand not in HANDS:
        raise DemoFolderError(f"trajectory.json: 'hand' must be 'right' or 'left', got {hand!r:.40}")
    if "gripper_kind" in data or "tcp_offset" in data or "axes" in data:
        raise DemoFolderError("trajectory.json: a hand's recording gives its joints; 'gripper_kind', "
                              "'tcp_offset' and 'axes' are a robot's")  # fmt: skip
    pad = FINGERTIP_PAD
    if "fingertip_pad_m" in data:
        pad = _number(data, "fingertip_pad_m", "trajectory.json", 0.0, MAX_FINGERTIP_PAD,
                      "metres from a tracked fingertip to the pad that touches")  # fmt: skip
    converted, last = [], None
    for sample in _samples(data):
        where = f"trajectory.json, sample for frame {sample.get('frame')!r:.20} ({hand} hand)"
        position, quaternion, gap, last = _hand_sample(sample, where, last, pad)
        converted.append({"frame": sample.get("frame"), "position": position, "quaternion": quaternion,
                          "gripper_width_m": min(gap, MAX_GRIPPER_WIDTH)})  # fmt: skip
    keep = {k: v for k, v in data.items() if k in ("frame_of", "world_from_robot", "camera_from_robot")}
    return {**keep, "gripper_kind": "measured", "samples": converted}, hand


def parse_trajectory(data: Any, frames: int, fps: float, log: WarningLog | None = None) -> TrajectorySamples:
    """Checks the content of trajectory.json against the video.

    Args:
        data: The parsed JSON.
        frames: Number of video frames.
        fps: Video frame rate (to say how long a gap is).
        log: Receives warnings: a gap in the samples, a recording that starts
            late or ends early (held), no gripper state.

    Returns:
        The samples in frame order.

    Raises:
        DemoFolderError: Naming the sample's frame and the field that is wrong.
    """
    log = log if log is not None else WarningLog()
    if not isinstance(data, dict):
        raise DemoFolderError(
            f"trajectory.json must hold a JSON object with 'samples', not a {type(data).__name__}"
        )
    hand = None
    if "hand" in data:
        data, hand = _from_hand(data)
    frame_of = data.get("frame_of", "camera")
    if frame_of not in FRAMES_OF:
        raise DemoFolderError(
            f"trajectory.json: 'frame_of' must be one of {', '.join(FRAMES_OF)}, got {frame_of!r:.60}"
        )
    kind = data.get("gripper_kind", "commanded")
    if kind not in GRIPPER_KINDS:
        raise DemoFolderError(
            f"trajectory.json: 'gripper_kind' must be 'commanded' or 'measured', got {kind!r:.40}"
        )
    full = FULL_OPENING
    if "gripper_max_width_m" in data:
        full = _number(data, "gripper_max_width_m", "trajectory.json", 0.001, MAX_GRIPPER_WIDTH,
                       "the gripper's widest finger gap in metres")  # fmt: skip
    index, positions, quaternions, widths = [], [], [], []
    for i, sample in enumerate(_samples(data)):
        frame = sample.get("frame")
        if isinstance(frame, float) and frame.is_integer():
            frame = int(frame)
        if isinstance(frame, bool) or not isinstance(frame, int):
            raise DemoFolderError(
                f"trajectory.json: samples[{i}] needs a whole 'frame' number, got {frame!r:.40}"
            )
        where = f"trajectory.json, sample for frame {frame}"
        if not 0 <= frame < frames:
            raise DemoFolderError(f"{where}: the frame is outside the video's frames 0 to {frames - 1}")
        position = _vector(sample, "position", 3, where)
        if math.dist(position, (0, 0, 0)) > MAX_POSITION:
            raise DemoFolderError(
                f"{where}: the position {position} is over {MAX_POSITION:g} m away; positions are in metres"
            )
        quaternion = _vector(sample, "quaternion", 4, where)
        norm = math.sqrt(sum(v * v for v in quaternion))
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise DemoFolderError(
                f"{where}: the quaternion {quaternion} is not a unit quaternion (norm {norm:.3g}); "
                "give the rotation as [w, x, y, z] with norm 1"
            )
        index.append(frame)
        positions.append(position)
        quaternions.append([v / norm for v in quaternion])
        widths.append(_width(sample, where, full))
    order = np.argsort(index, kind="stable")
    index_array = np.asarray(index)[order]
    repeated = index_array[1:][np.diff(index_array) == 0]
    if len(repeated):
        raise DemoFolderError(f"trajectory.json: frame {int(repeated[0])} has more than one sample")
    states = [widths[i] for i in order]
    width = None
    if all(s is None for s in states):
        log.warn("video", "trajectory.json gives no gripper state ('gripper'); the gripper is taken as open")
        opening = np.ones(len(states))
    elif any(s is None for s in states):
        missing = int(index_array[[s is None for s in states]][0])
        raise DemoFolderError(
            f"trajectory.json, sample for frame {missing}: no gripper state ('gripper', "
            "'gripper_closure' or 'gripper_width_m') while other samples have one"
        )
    else:
        fields = {s[0] for s in states}
        if len(fields) > 1:
            raise DemoFolderError(
                f"trajectory.json mixes gripper states ({', '.join(sorted(fields))}); use one for every sample"
            )
        width = np.array([s[1] for s in states], float)
        opening = np.clip(width / FULL_OPENING, 0.0, 1.0)
        if width.max() > FULL_OPENING + 1e-6:
            log.warn(
                "video",
                f"trajectory.json opens the gripper up to {width.max() * 1000:.0f} mm; the simulated gripper "
                f"opens {FULL_OPENING * 1000:.0f} mm, so wider gaps are simulated as {FULL_OPENING * 1000:.0f} mm",
            )
    _say_coverage(index_array, frames, fps, log)
    frame_of, positions_, quaternions_, form = _into_contract(
        data, frame_of, np.asarray(positions, float)[order], np.asarray(quaternions, float)[order]
    )
    form.update(
        gripper=sorted({s[0] for s in states if s})[0] if width is not None else None, gripper_kind=kind
    )
    if hand is not None:
        form.update(hand=hand, gripper="thumb_tip to index_tip")
    if len(index_array) < frames:
        form["samples"] = len(index_array)
    return TrajectorySamples(
        frame_of=frame_of,
        frames=index_array,
        positions=positions_,
        quaternions=quaternions_,
        opening=opening,
        kind=kind,
        form=form,
    )


def _say_coverage(index: np.ndarray, frames: int, fps: float, log: WarningLog) -> None:
    """Refuses a recording that misses much of the video; warns where it is held or interpolated."""
    allowed = max(1, round(HELD_GAP_S * fps))
    first, last = int(index[0]), int(index[-1])
    if first > allowed or frames - 1 - last > allowed:
        raise DemoFolderError(
            f"trajectory.json has samples for frames {first} to {last} ({len(index)} samples) but the video "
            f"has frames 0 to {frames - 1}; the recording must cover the video (up to {HELD_GAP_S:g} s "
            "may be missing at either end). Trim the video or complete the recording"
        )
    if first > 0 or last < frames - 1:
        log.warn(
            "video",
            f"trajectory.json covers frames {first} to {last} of 0 to {frames - 1}; the gripper is held at "
            "its first sample before and at its last sample after",
        )
    gaps = np.nonzero(np.diff(index) > allowed)[0]
    if len(gaps):
        start, end = int(index[gaps[0]]), int(index[gaps[0] + 1])
        log.warn(
            "video",
            f"trajectory.json has no samples between frames {start} and {end} ({(end - start) / fps:.1f} s"
            + (
                f"; {len(gaps) - 1} more gap{'s' if len(gaps) > 2 else ''} over {HELD_GAP_S:g} s"
                if len(gaps) > 1
                else ""
            )
            + "); the gripper's path there is interpolated",
        )


def read_trajectory(path: Path, frames: int, fps: float, log: WarningLog | None = None) -> TrajectorySamples:
    """Reads and checks trajectory.json; see :func:`parse_trajectory`.

    Raises:
        DemoFolderError: The file cannot be read, is not JSON, or a sample is wrong.
    """
    try:
        data = read_json_file(path, DemoFolderError, "trajectory.json")
    except FileNotFoundError as e:
        raise DemoFolderError(f"trajectory.json cannot be read: {e}") from e
    return parse_trajectory(data, frames, fps, log)


def min_jerk(s: np.ndarray) -> np.ndarray:
    """The minimum-jerk profile ``10 s^3 - 15 s^4 + 6 s^5`` on ``s`` in [0, 1] (clipped): how a path edit
    blends in (a variant's carry onto its moved target, a fix's moved pour or placing)."""
    s = np.clip(s, 0.0, 1.0)
    return s**3 * (10 - 15 * s + 6 * s**2)
