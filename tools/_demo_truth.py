"""The demo folder's JSON files: camera, prompts, trajectory and truth (docs/data-contract.md).

Camera frame: OpenCV (x right, y down, z forward, metres). ``world_from_camera`` maps
camera coordinates to the world frame (z up, z = 0 on the table). Quaternions are
[w, x, y, z].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _demo_gripper import FINGER_TRAVEL
from _demo_render import Intrinsics
from _demo_scene import Layout
from _demo_sensor import DEPTH_SCALE
from _demo_sim import SimResult
from scipy.spatial.transform import Rotation

from real2gym_addon.truth import encode_rle

TRUTH_VERSION = 1
_DIGITS = 6


@dataclass
class ObjectSpec:
    """An object as the prompts and the truth describe it.

    Attributes:
        name: Name in prompts.json and truth.json.
        body: MuJoCo body name.
        role: ``manipulated``, ``container`` or ``static``.
        prompt_shape: Shape hint given to the pipeline.
        shape: True shape.
        size: Full bounding-box extents, object frame, z up (m), (3,).
        centre: Bounding-box centre in the body frame (m), (3,).
        params: Shape parameters (m).
        mass: Kilograms.
        frames: Per-frame truth entries, filled while rendering.
    """

    name: str
    body: str
    role: str
    prompt_shape: str
    shape: str
    size: list[float]
    centre: np.ndarray
    params: dict[str, float]
    mass: float = 0.0
    frames: list[dict[str, Any]] = field(default_factory=list)


def _cup_spec(layout: Layout) -> ObjectSpec:
    """The cup of a cup layout: a straight wall, named, shaped and hinted ``cup``."""
    radius, height = layout.cup_radius, layout.cup_height
    return ObjectSpec(
        "cup",
        "cup",
        "container",
        "cup",
        "cup",
        [2 * radius, 2 * radius, height],
        np.array([0.0, 0.0, height / 2]),
        {
            "outer_radius": radius,
            "inner_radius": radius - layout.cup_wall,
            "wall_thickness": layout.cup_wall,
            "bottom_thickness": layout.cup_bottom,
            "height": height,
        },
    )


def _base_spec(layout: Layout) -> ObjectSpec:
    """The base block of a stack layout: a box, named ``base``; a free object, so it takes the ``container``
    role (a free body that keeps its place)."""
    edge, height = 2 * layout.cup_radius, layout.cup_height
    return ObjectSpec("base", "base", "container", "auto", "box", [edge, edge, height],
                      np.array([0.0, 0.0, height / 2]), {})  # fmt: skip


def _bowl_spec(layout: Layout) -> ObjectSpec:
    """The bowl of a bowl layout, named, shaped and hinted ``bowl``.

    ``outer_radius`` is the rim's, ``base_radius`` the foot's (the outer profile of
    ``_demo_scene.bowl_radius_at`` joins them), ``inner_radius`` the rim's minus the
    horizontal ``wall_thickness``.
    """
    radius, height = layout.cup_radius, layout.cup_height
    return ObjectSpec(
        "bowl",
        "bowl",
        "container",
        "bowl",
        "bowl",
        [2 * radius, 2 * radius, height],
        np.array([0.0, 0.0, height / 2]),
        {
            "outer_radius": radius,
            "base_radius": layout.bowl_base,
            "inner_radius": radius - layout.cup_wall,
            "wall_thickness": layout.cup_wall,
            "bottom_thickness": layout.cup_bottom,
            "height": height,
        },
    )


def describe_objects(layout: Layout) -> list[ObjectSpec]:
    """The block, the container (cup or bowl) and (if any) the distractor of a layout."""
    size = layout.block_size
    container = {"bowl": _bowl_spec, "base": _base_spec}.get(layout.container, _cup_spec)(layout)
    objects = [
        ObjectSpec("block", "block", "manipulated", "auto", "box", [size] * 3, np.zeros(3), {}),
        container,
    ]
    if layout.distractor_xy is not None:
        r, h = layout.distractor_radius, layout.distractor_height
        objects.append(
            ObjectSpec(
                "can",
                "distractor",
                "static",
                "auto",
                "cylinder",
                [2 * r, 2 * r, h],
                np.zeros(3),
                {"radius": r, "height": h},
            )
        )
    return objects


def world_from_camera(layout: Layout) -> np.ndarray:
    """4x4 transform from OpenCV camera coordinates to world coordinates."""
    transform = np.eye(4)
    transform[:3, :3] = layout.camera_rot
    transform[:3, 3] = layout.camera_pos
    return transform


def _r(values: Any) -> list[float]:
    return [round(float(v), _DIGITS) + 0.0 for v in np.ravel(values)]  # no -0.0


def _quat(rot: np.ndarray) -> list[float]:
    quat = Rotation.from_matrix(rot).as_quat(scalar_first=True)
    return _r(quat if quat[0] >= 0 else -quat)


def pose_entries(
    w_from_c: np.ndarray, pos_world: np.ndarray, quat_world: np.ndarray, centre: np.ndarray
) -> dict[str, list[float]]:
    """Camera- and world-frame pose of a box centre given a body pose.

    Args:
        w_from_c: 4x4 world-from-camera transform.
        pos_world: Body origin, world frame (m), (3,).
        quat_world: Body orientation [w, x, y, z], world frame.
        centre: Box centre in the body frame (m), (3,).

    Returns:
        ``position_cam``, ``quaternion_cam``, ``position_world``, ``quaternion_world``.
    """
    rot_world = Rotation.from_quat(quat_world, scalar_first=True).as_matrix()
    centre_world = pos_world + rot_world @ centre
    rot_cam = w_from_c[:3, :3].T
    return {
        "position_cam": _r(rot_cam @ (centre_world - w_from_c[:3, 3])),
        "quaternion_cam": _quat(rot_cam @ rot_world),
        "position_world": _r(centre_world),
        "quaternion_world": _quat(rot_world),
    }


def prompt_entry(spec: ObjectSpec, mask: np.ndarray, pad: int = 3) -> dict[str, Any]:
    """prompts.json entry for an object from its visible mask on frame 0.

    Args:
        spec: The object.
        mask: Its visible mask on frame 0, (H, W) bool.
        pad: Pixels added around the mask's bounding box.

    Returns:
        ``name``, ``frame``, ``box`` [x0, y0, x1, y1], one positive point at the mask
        pixel nearest its centroid, ``shape`` and ``role``.
    """
    rows, cols = np.nonzero(mask)
    if rows.size == 0:
        raise ValueError(f"the {spec.name} is not visible on frame 0; move the camera")
    h, w = mask.shape
    box = [
        max(int(cols.min()) - pad, 0),
        max(int(rows.min()) - pad, 0),
        min(int(cols.max()) + pad, w - 1),
        min(int(rows.max()) + pad, h - 1),
    ]
    nearest = np.argmin((cols - cols.mean()) ** 2 + (rows - rows.mean()) ** 2)
    return {
        "name": spec.name,
        "frame": 0,
        "box": box,
        "points": [[int(cols[nearest]), int(rows[nearest]), 1]],
        "shape": spec.prompt_shape,
        "role": spec.role,
    }


def task_prompts(
    objects: list[ObjectSpec], first_masks: dict[str, np.ndarray], task: dict[str, Any]
) -> dict[str, Any]:
    """prompts.json: a box and a point on each object's visible mask on frame 0 (``prompt_entry``), and the
    ``task``."""
    return {"objects": [prompt_entry(spec, first_masks[spec.name]) for spec in objects], "task": task}


def camera_json(
    intr: Intrinsics, layout: Layout, with_pose: bool, path: list[np.ndarray] | None = None
) -> dict[str, Any]:
    """camera.json: intrinsics, depth scale and optionally ``world_from_camera`` (and, for a
    camera that moves along ``path``, ``world_from_camera_frames``)."""
    camera: dict[str, Any] = {
        "width": intr.width,
        "height": intr.height,
        "fx": round(intr.fx, _DIGITS),
        "fy": round(intr.fy, _DIGITS),
        "cx": intr.cx,
        "cy": intr.cy,
        "depth_scale": DEPTH_SCALE,
    }
    if with_pose:
        camera["world_from_camera"] = [_r(row) for row in world_from_camera(layout)]
        if path is not None:
            camera["world_from_camera_frames"] = [[_r(row) for row in pose] for pose in path]
    return camera


def gripper_entries(
    result: SimResult, w_from_c: np.ndarray, path: list[np.ndarray] | None = None
) -> list[dict[str, Any]]:
    """Per-frame grasp-centre pose (camera and world frame) and opening of the gripper; camera
    coordinates of each frame's camera where ``path`` gives one per frame."""
    entries = []
    for index, state in enumerate(result.frames):
        pos, quat = state.poses["hand"]
        opening = sum(state.finger_q)
        view = w_from_c if path is None else path[index]
        entry = {"frame": index, **pose_entries(view, pos, quat, np.zeros(3))}
        entry["opening_m"] = round(opening, _DIGITS)
        entry["gripper"] = round(float(np.clip(opening / (2 * FINGER_TRAVEL), 0, 1)), 4)
        entries.append(entry)
    return entries


def trajectory_json(gripper: list[dict[str, Any]]) -> dict[str, Any]:
    """trajectory.json in the camera frame from the gripper's per-frame entries."""
    return {
        "frame_of": "camera",
        "point": "grasp centre, midway between the finger pads",
        "axes": "z: approach (palm to fingertips), y: finger opening direction",
        "samples": [
            {
                "frame": g["frame"],
                "position": g["position_cam"],
                "quaternion": g["quaternion_cam"],
                "gripper": g["gripper"],
            }
            for g in gripper
        ],
    }


def truth_json(
    layout: Layout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: SimResult,
    generator: dict[str, Any],
    path: list[np.ndarray] | None = None,
) -> dict[str, Any]:
    """truth.json: camera, table, objects with per-frame poses and masks, keyframes (and the
    camera's pose per frame where it moves along ``path``)."""
    w_from_c = world_from_camera(layout)
    up_cam = w_from_c[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    keyframes = sorted(
        ({"frame": f, "event": e, "object": "block"} for e, f in result.keyframes.items()),
        key=lambda k: (k["frame"], k["event"]),
    )
    return {
        "version": TRUTH_VERSION,
        "generator": generator,
        "video": {
            "frames": len(result.frames),
            "fps": fps,
            "width": intr.width,
            "height": intr.height,
        },
        "camera": {"fx": intr.fx, "fy": intr.fy, "cx": intr.cx, "cy": intr.cy},
        "world_from_camera": [_r(row) for row in w_from_c],
        **({"world_from_camera_frames": [[_r(row) for row in p] for p in path]} if path else {}),
        "table": {"normal_cam": _r(up_cam), "offset_cam": round(float(w_from_c[2, 3]), 6)},
        "objects": [
            {
                "name": o.name,
                "shape": o.shape,
                "role": o.role,
                "size": _r(o.size),
                **{k: round(v, _DIGITS) for k, v in o.params.items()},
                "mass": round(o.mass, _DIGITS),
                "frames": o.frames,
            }
            for o in objects
        ],
        "keyframes": keyframes,
        "gripper": {
            "frame_of": "camera",
            "max_opening_m": 2 * FINGER_TRAVEL,
            "frames": gripper_entries(result, w_from_c, path),
        },
        "checks": result.checks,
    }


def truth_frame(
    index: int,
    spec: ObjectSpec,
    pose: dict[str, list[float]],
    mask: np.ndarray,
    alone_pixels: int,
) -> dict[str, Any]:
    """One per-frame truth entry of an object (pose, visibility, RLE mask)."""
    visible = int(mask.sum())
    return {
        "frame": index,
        **pose,
        "visible": visible > 0,
        "visible_fraction": round(visible / alone_pixels, 4) if alone_pixels else 0.0,
        "mask": encode_rle(mask),
    }
