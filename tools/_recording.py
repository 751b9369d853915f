"""trajectory.json as robots write it: one gripper motion in each of the contract's forms.

The generators know the gripper's motion as the grasp centre's world pose per frame, in
the contract's axes (z the approach direction, palm to fingertips; y the direction in
which the fingers open), and the finger gap the fingers measured. :func:`recording_json`
writes that motion in one of :data:`FORMS`: in the camera, world or robot-base frame; at
the grasp centre or at the flange (``tcp_offset``); in the contract's axes or another
convention (``axes``); the gripper as fraction open, finger gap or closure, commanded or
measured; every frame or every third; or as a person's tracked hand (``hand``: the wrist's pose and the
thumb's and index finger's tips, docs/data-contract.md "Human hands"). Every form describes the same motion: a reader that
applies the conventions gets back the same grasp centre, rotation and finger gap (up to
interpolation between sparse samples), except that ``careful_release`` lets the fingers
open only :data:`CAREFUL_MARGIN` wider than the object after the release.

World frame: z up, z = 0 on the table top, metres. Camera frame: OpenCV (x right, y
down, z forward). Quaternions are [w, x, y, z] with w >= 0. Matrices are 4x4, row-major.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

FORMS = (
    "short_camera",
    "world_width_measured",
    "robot_base_closure",
    "camera_from_robot_axes_sparse",
    "careful_release",
    "hand",
)
"""The recording forms :func:`recording_json` writes."""
FULL_OPENING = 0.08
"""Metres between the finger pads when fully open (the contract's default gripper)."""
TCP_OFFSET = 0.1034
"""Metres from a Franka flange to the grasp centre along the approach axis."""
CAREFUL_MARGIN = 0.006
"""Metres the fingers open wider than the held object at a careful release."""
ROBOT_DISTANCE = 0.5
"""Metres from the middle of the gripper's path to the robot base, on the table plane."""
SPARSE_AXES = {"approach": "+x", "opening": "-z"}
"""The other axis convention of ``camera_from_robot_axes_sparse``. Its axes matrix (:func:`axes_matrix`)
is not symmetric, so a reader that maps the axes the wrong way round (transposed) gets a wrong rotation."""
HAND_REACH = 0.09
"""Metres from a tracked hand's wrist to the grasp centre between its fingertips, along the approach."""
HAND_PAD = 0.007
"""Metres a tracked fingertip lies beyond the pad that touches the object (a hand tracker gives the joint at the
finger's end, inside the finger): the tips are the fingers' gap and twice this apart."""
HAND_SIDE = 0.02
"""Metres the wrist sits to the thumb's side of the approach axis (the reader takes the approach square to the
fingers' opening, so this must not tilt it)."""
_SIGNED_AXES = {"+x": 0, "-x": 0, "+y": 1, "-y": 1, "+z": 2, "-z": 2}
_DIGITS = 7


def _r(values: Any) -> list[float]:
    return [round(float(v), _DIGITS) + 0.0 for v in np.ravel(values)]  # no -0.0


def _quat(rotation: np.ndarray) -> list[float]:
    quat = Rotation.from_matrix(rotation).as_quat(scalar_first=True)
    return _r(quat if quat[0] >= 0 else -quat)


def _matrix(transform: np.ndarray) -> list[list[float]]:
    return [_r(row) for row in transform]


def axes_matrix(axes: dict[str, str]) -> np.ndarray:
    """The contract's axes in a recorded pose's axes.

    Args:
        axes: ``{"approach": "+x", "opening": "-y"}``: which signed axis of the recorded
            rotation is the approach direction and which the opening direction.

    Returns:
        3x3 whose columns are the contract's x, y (opening) and z (approach) expressed
        in the recorded pose's axes: ``contract_rotation = recorded_rotation @ A``.
    """

    def unit(name: str) -> np.ndarray:
        vector = np.zeros(3)
        vector[_SIGNED_AXES[name]] = 1.0 if name[0] == "+" else -1.0
        return vector

    opening, approach = unit(axes["opening"]), unit(axes["approach"])
    if abs(opening @ approach) > 0.5:
        raise ValueError(f"axes {axes}: approach and opening must be different axes")
    return np.c_[np.cross(opening, approach), opening, approach]


def robot_base_pose(world_from_grasp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Where a robot that made the motion would stand: beside the table, facing the work.

    Args:
        world_from_grasp: Grasp-centre poses, world frame, (N, 4, 4).
        rng: Draws the side it stands on, its yaw and how far below the table top its base is.

    Returns:
        ``world_from_robot`` (4x4): the base :data:`ROBOT_DISTANCE` from the middle of
        the path on the table plane, its x axis turned within 25 degrees of facing the
        path, its origin 0 to 4 cm below the table top.
    """
    middle = world_from_grasp[:, :2, 3].mean(axis=0)
    side = rng.uniform(0, 2 * np.pi)
    yaw = side + np.pi + rng.uniform(-1, 1) * np.deg2rad(25)
    c, s = np.cos(yaw), np.sin(yaw)
    pose = np.eye(4)
    pose[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    pose[:2, 3] = middle + ROBOT_DISTANCE * np.array([np.cos(side), np.sin(side)])
    pose[2, 3] = -rng.uniform(0.0, 0.04)
    return pose


def commanded_widths(width_m: np.ndarray, holding: np.ndarray) -> np.ndarray:
    """The finger gap a controller commands: closed (0) while holding, the measured gap elsewhere (m)."""
    return np.where(holding, 0.0, np.clip(width_m, 0.0, FULL_OPENING))


def careful_widths(width_m: np.ndarray, holding: np.ndarray, margin: float = CAREFUL_MARGIN) -> np.ndarray:
    """Measured finger gap (m) of a hand that opens only ``margin`` wider than the object after the hold.

    From the last holding frame on, the gap is at most the gap measured there plus
    ``margin``; before it, it is ``width_m``. Without a hold, ``width_m`` unchanged.
    """
    width = np.asarray(width_m, float).copy()
    held = np.flatnonzero(holding)
    if held.size:
        last = held[-1]
        width[last:] = np.minimum(width[last:], width[last] + margin)
    return width


def sample_frames(count: int, every: int) -> np.ndarray:
    """Frames a recorder logging every ``every``-th frame keeps: 0, every, 2 every ... and the last."""
    return np.unique(np.r_[np.arange(0, count, max(every, 1)), count - 1])


def recording_json(
    form: str,
    world_from_grasp: np.ndarray,
    width_m: np.ndarray,
    world_from_camera: np.ndarray,
    holding: np.ndarray,
    *,
    commanded_width_m: np.ndarray | None = None,
    seed: int = 0,
    every: int = 3,
) -> dict[str, Any]:
    """trajectory.json's content for a gripper motion, written in one of :data:`FORMS`.

    ``short_camera``: the short form in the camera frame, ``gripper`` the commanded
    fraction open. ``world_width_measured``: world frame, ``gripper_width_m`` measured.
    ``robot_base_closure``: robot-base frame with ``world_from_robot``, flange poses with
    ``tcp_offset`` :data:`TCP_OFFSET`, ``gripper_closure`` commanded. ``camera_from_robot_axes_sparse``:
    robot-base frame with ``camera_from_robot``, the recorded rotation in the
    :data:`SPARSE_AXES` convention, ``tcp_offset`` as a vector in those axes, one sample
    every ``every`` frames plus the last, ``gripper_width_m`` measured.
    ``careful_release``: as ``world_width_measured`` with :func:`careful_widths`.
    ``hand``: a right hand in the world frame: the thumb's and the index finger's tips either side of the grasp
    centre along the opening direction, as far apart as the measured gap and twice :data:`HAND_PAD`, and the
    wrist :data:`HAND_REACH`
    behind it along the approach (:data:`HAND_SIDE` to the thumb's side), turned as the grasp.

    Args:
        form: One of :data:`FORMS`.
        world_from_grasp: Grasp-centre pose per video frame, world frame, contract axes
            (z approach, y opening), (N, 4, 4).
        width_m: Measured finger gap per frame (m), (N,): the object's width while holding.
        world_from_camera: 4x4, OpenCV camera axes.
        holding: Per frame, whether the fingers hold the object, (N,) bool.
        commanded_width_m: Commanded finger gap per frame (m), (N,); when None,
            :func:`commanded_widths` of the measured gap.
        seed: Draws the robot base's pose of the ``robot_base`` forms.
        every: Sample spacing (frames) of the sparse form.

    Returns:
        The JSON object.

    Raises:
        ValueError: For an unknown form or arrays of different lengths.
    """
    if form not in FORMS:
        raise ValueError(f"unknown recording form {form!r}; choose one of {', '.join(FORMS)}")
    world_from_grasp = np.asarray(world_from_grasp, float)
    width_m, holding = np.asarray(width_m, float), np.asarray(holding, bool)
    count = len(world_from_grasp)
    if width_m.shape != (count,) or holding.shape != (count,):
        raise ValueError(f"{count} poses but {width_m.shape} widths and {holding.shape} holding flags")
    commanded = (
        commanded_widths(width_m, holding)
        if commanded_width_m is None
        else np.clip(np.asarray(commanded_width_m, float), 0.0, FULL_OPENING)
    )
    rng = np.random.default_rng([seed, 11])
    frames = np.arange(count)
    data: dict[str, Any] = {}
    axes = {"approach": "+z", "opening": "+y"}
    offset = np.zeros(3)  # grasp centre in the recorded pose's axes (m)
    reference = np.eye(4)  # the frame poses are written in, from the world
    if form == "short_camera":
        data["frame_of"] = "camera"
        reference = np.linalg.inv(world_from_camera)
        state = {"gripper": np.clip(commanded / FULL_OPENING, 0.0, 1.0)}
    elif form in ("world_width_measured", "careful_release"):
        data["frame_of"] = "world"
        width = careful_widths(width_m, holding) if form == "careful_release" else width_m
        state = {"gripper_width_m": np.clip(width, 0.0, None)}
        data["gripper_kind"] = "measured"
    elif form == "robot_base_closure":
        world_from_robot = robot_base_pose(world_from_grasp, rng)
        reference = np.linalg.inv(world_from_robot)
        data |= {"frame_of": "robot_base", "world_from_robot": _matrix(world_from_robot)}
        data |= {"tcp_offset": TCP_OFFSET, "gripper_kind": "commanded", "gripper_max_width_m": FULL_OPENING}
        offset = np.array([0.0, 0.0, TCP_OFFSET])
        state = {"gripper_closure": np.clip(1.0 - commanded / FULL_OPENING, 0.0, 1.0)}
    elif form == "hand":
        data |= {"frame_of": "world", "hand": "right"}
        state = {}
    else:  # camera_from_robot_axes_sparse
        world_from_robot = robot_base_pose(world_from_grasp, rng)
        camera_from_robot = np.linalg.inv(world_from_camera) @ world_from_robot
        reference = np.linalg.inv(world_from_robot)
        axes = dict(SPARSE_AXES)
        offset = axes_matrix(axes)[:, 2] * TCP_OFFSET
        data |= {"frame_of": "robot_base", "camera_from_robot": _matrix(camera_from_robot), "axes": axes}
        data |= {"tcp_offset": _r(offset), "gripper_kind": "measured"}
        state = {"gripper_width_m": np.clip(width_m, 0.0, None)}
        frames = sample_frames(count, every)
    to_recorded = axes_matrix(axes).T  # recorded_rotation = contract_rotation @ A^T
    samples = []
    for frame in frames:
        pose = reference @ world_from_grasp[frame]
        if form == "hand":
            centre, opening, approach = pose[:3, 3], pose[:3, 1], pose[:3, 2]
            half = max(float(width_m[frame]), 0.0) / 2 + HAND_PAD
            wrist = pose.copy()
            wrist[:3, 3] = centre - HAND_REACH * approach - HAND_SIDE * opening
            samples.append({"frame": int(frame), "wrist": _matrix(wrist), "thumb_tip": _r(centre - half * opening),
                            "index_tip": _r(centre + half * opening)})  # fmt: skip
            continue
        rotation = pose[:3, :3] @ to_recorded
        position = pose[:3, 3] - rotation @ offset  # the recorded point (flange)
        sample = {"frame": int(frame), "position": _r(position), "quaternion": _quat(rotation)}
        sample |= {key: round(float(values[frame]), _DIGITS) + 0.0 for key, values in state.items()}
        samples.append(sample)
    return data | {"samples": samples}
