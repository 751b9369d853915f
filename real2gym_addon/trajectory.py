"""Reading and checking ``trajectory.json``: the recorded gripper, sample by sample.

:func:`read_trajectory` is the door: it checks the whole file before any stage
runs (structure, frames inside the video and in order, finite positions within
reach, unit quaternions, the gripper's state in range) and says how much of the
video the recording covers. The geometry stage turns the checked samples into a
per-frame world-frame path (``geometry.keyframes.load_trajectory``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DemoFolderError, WarningLog

FRAMES_OF = ("camera", "world")
"""What a recorded position is relative to."""
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


@dataclasses.dataclass(frozen=True)
class TrajectorySamples:
    """The checked samples of trajectory.json, in frame order.

    Attributes:
        frame_of: ``"camera"`` or ``"world"``: the frame positions and rotations are in.
        frames: ``N`` video frames (0-based, increasing) that have a sample.
        positions: ``Nx3`` grasp centre, metres.
        quaternions: ``Nx4`` unit ``[w, x, y, z]``.
        opening: ``N`` gripper opening in [0, 1], 1 = fully open.
    """

    frame_of: str
    frames: np.ndarray
    positions: np.ndarray
    quaternions: np.ndarray
    opening: np.ndarray


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


def _opening(sample: dict, where: str) -> float | None:
    """The gripper opening in [0, 1] from whichever of the contract's forms the sample uses."""
    if "gripper" in sample:
        return _number(sample, "gripper", where, 0.0, 1.0, "fraction open, 1 = fully open")
    if "gripper_closure" in sample:
        return 1.0 - _number(sample, "gripper_closure", where, 0.0, 1.0, "0 open, 1 closed")
    if "gripper_width_m" in sample:
        width = _number(sample, "gripper_width_m", where, 0.0, MAX_GRIPPER_WIDTH, "finger gap in metres")
        return min(width / FULL_OPENING, 1.0)
    return None


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
    frame_of = data.get("frame_of", "camera")
    if frame_of not in FRAMES_OF:
        raise DemoFolderError(
            f"trajectory.json: 'frame_of' must be 'camera' or 'world', got {frame_of!r:.60}"
        )
    samples = data.get("samples")
    if not isinstance(samples, list) or not samples:
        raise DemoFolderError("trajectory.json needs a non-empty 'samples' list")
    index, positions, quaternions, opening = [], [], [], []
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise DemoFolderError(f"trajectory.json: samples[{i}] must be a JSON object")
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
        opening.append(_opening(sample, where))
    order = np.argsort(index, kind="stable")
    index_array = np.asarray(index)[order]
    repeated = index_array[1:][np.diff(index_array) == 0]
    if len(repeated):
        raise DemoFolderError(f"trajectory.json: frame {int(repeated[0])} has more than one sample")
    states = [opening[i] for i in order]
    if all(s is None for s in states):
        log.warn("video", "trajectory.json gives no gripper state ('gripper'); the gripper is taken as open")
        states = [1.0] * len(states)
    elif any(s is None for s in states):
        missing = int(index_array[[s is None for s in states]][0])
        raise DemoFolderError(
            f"trajectory.json, sample for frame {missing}: no gripper state ('gripper', "
            "'gripper_closure' or 'gripper_width_m') while other samples have one"
        )
    _say_coverage(index_array, frames, fps, log)
    return TrajectorySamples(
        frame_of=frame_of,
        frames=index_array,
        positions=np.asarray(positions, float)[order],
        quaternions=np.asarray(quaternions, float)[order],
        opening=np.asarray(states, float),
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
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DemoFolderError(
            f"trajectory.json is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"
        ) from e
    except (OSError, UnicodeDecodeError) as e:
        raise DemoFolderError(f"trajectory.json cannot be read: {e}") from e
    return parse_trajectory(data, frames, fps, log)
