"""A varied demo's files: truth from the ID renders, prompts, camera, and the phone-like video.

Masks: an object's visible mask is where the visible ID image shows its ID; its full
mask is where the full ID image shows it with nothing in front; ``visible_fraction`` is
the one's area over the other's. The formats are those ``real2gym_addon.truth`` and
``real2gym_addon.demo`` read (docs/data-contract.md).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from _varied_scene import Item, Scene
from scipy.spatial.transform import Rotation

from real2gym_addon.truth import encode_rle, mask_prompt

TRUTH_VERSION = 1
PROMPT_PAD = 2
"""Pixels added around the truth mask's bounding box to make the prompt box."""
_DIGITS = 6
_DENSITY = {"box": 600.0, "cylinder": 900.0, "cup": 2000.0, "plate": 2200.0}
"""kg/m^3 of the solid part: wood, a filled can, ceramic."""


def _r(values: Any) -> list[float]:
    return [round(float(v), _DIGITS) + 0.0 for v in np.ravel(values)]


def _quat(rotation: np.ndarray) -> list[float]:
    quat = Rotation.from_matrix(rotation).as_quat(scalar_first=True)
    return _r(quat if quat[0] >= 0 else -quat)


def mass(item: Item) -> float:
    """An estimated mass (kg) from the object's solid volume."""
    sx, sy, h = item.size
    if item.shape == "box":
        volume = sx * sy * h
    elif item.shape == "cup":
        r, inner, bottom = (
            item.params["outer_radius"],
            item.params["inner_radius"],
            item.params["bottom_thickness"],
        )
        volume = np.pi * ((r**2 - inner**2) * (h - bottom) + r**2 * bottom)
    else:
        volume = np.pi * (sx / 2) ** 2 * h
    return float(volume * _DENSITY[item.shape])


def truth_frame(
    frame: int, pose: np.ndarray, w_from_c: np.ndarray, visible: np.ndarray, full: np.ndarray, by_hand: int
) -> dict[str, Any]:
    """One object's truth on one frame.

    Args:
        frame: Video frame index.
        pose: World pose (4x4) of the object's bounding-box centre.
        w_from_c: World-from-camera 4x4 (OpenCV camera axes).
        visible: Its visible mask, ``HxW`` bool.
        full: Where it would be seen with nothing in front, ``HxW`` bool.
        by_hand: Pixels of ``full`` where the hand is seen.

    Returns:
        ``frame``, poses (camera and world frame), ``visible``, ``visible_fraction``,
        ``full_area``, ``hidden_by_hand`` (share of the full area) and the RLE ``mask``.
    """
    c_from_w = np.linalg.inv(w_from_c)
    cam = c_from_w @ pose
    area, full_area = int(visible.sum()), int(full.sum())
    return {
        "frame": frame,
        "position_cam": _r(cam[:3, 3]),
        "quaternion_cam": _quat(cam[:3, :3]),
        "position_world": _r(pose[:3, 3]),
        "quaternion_world": _quat(pose[:3, :3]),
        "visible": area > 0,
        "visible_fraction": round(min(area / full_area, 1.0), 4) if full_area else 0.0,
        "full_area": full_area,
        "hidden_by_hand": round(by_hand / full_area, 4) if full_area else 0.0,
        "mask": encode_rle(visible),
    }


def prompt_entry(item: Item, mask: np.ndarray) -> dict[str, Any]:
    """prompts.json's entry of an object from its visible mask on frame 0.

    The box is the mask's bounding box (exclusive ends) padded by :data:`PROMPT_PAD`
    pixels; the point is the mask pixel farthest from its edge.

    Raises:
        RuntimeError: If the object is not seen on frame 0.
    """
    if not mask.any():
        raise RuntimeError(f"the {item.name} is not seen on frame 0")
    box, (x, y) = mask_prompt(mask, PROMPT_PAD)
    return {
        "name": item.name,
        "frame": 0,
        "box": box,
        "points": [[x, y, 1]],
        "shape": item.shape,
        "role": item.role,
    }


def camera_json(scene: Scene) -> dict[str, Any]:
    """camera.json: OpenCV intrinsics (pixels), the camera's pose, the depth scale."""
    cam = scene.camera
    data = {
        "width": cam.width,
        "height": cam.height,
        "fx": round(cam.fx, _DIGITS),
        "fy": round(cam.fy, _DIGITS),
        "cx": cam.cx,
        "cy": cam.cy,
        "world_from_camera": [_r(row) for row in cam.world_from_camera],
    }
    if scene.with_depth:
        data["depth_scale"] = 0.001
    return data


def hand_truth(
    hand_poses: np.ndarray, w_from_c: np.ndarray, visible: list[np.ndarray]
) -> list[dict[str, Any]]:
    """The hand's truth per frame: its visible mask and its grasp centre.

    Args:
        hand_poses: World pose (4x4) of the hand's frame (the grasp centre) per frame.
        w_from_c: World-from-camera 4x4.
        visible: The hand's visible mask per frame, ``HxW`` bool.
    """
    c_from_w = np.linalg.inv(w_from_c)
    return [
        {
            "frame": frame,
            "visible": bool(mask.any()),
            "position_world": _r(pose[:3, 3]),
            "position_cam": _r((c_from_w @ pose)[:3, 3]),
            "mask": encode_rle(mask),
        }
        for frame, (pose, mask) in enumerate(zip(hand_poses, visible, strict=True))
    ]


def truth_json(
    scene: Scene, frames_per_object: list[list[dict]], fps: float, generator: dict
) -> dict[str, Any]:
    """truth.json: camera, table plane, objects with per-frame poses and masks, keyframes."""
    cam = scene.camera
    w_from_c = cam.world_from_camera
    up_cam = w_from_c[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    objects = []
    for item, frames in zip(scene.items, frames_per_object, strict=True):
        objects.append(
            {
                "name": item.name,
                "shape": item.shape,
                "role": item.role,
                "size": _r(item.size),
                **{k: round(float(v), _DIGITS) for k, v in item.params.items()},
                "colour_linear": _r(item.colour),
                "twin_of": item.twin_of,
                "mass": round(mass(item), _DIGITS),
                "frames": frames,
            }
        )
    return {
        "version": TRUTH_VERSION,
        "generator": generator,
        "video": {"frames": scene.frames, "fps": fps, "width": cam.width, "height": cam.height},
        "camera": {"fx": cam.fx, "fy": cam.fy, "cx": cam.cx, "cy": cam.cy},
        "world_from_camera": [_r(row) for row in w_from_c],
        "table": {"normal_cam": _r(up_cam), "offset_cam": round(float(w_from_c[2, 3]), _DIGITS)},
        "objects": objects,
        "keyframes": scene.keyframes(),
    }


def phone_frame(bgr: np.ndarray, sigma: float, quality: int, rng: np.random.Generator) -> np.ndarray:
    """A rendered frame as a phone would store it: read noise, then JPEG at ``quality``.

    Args:
        bgr: The clean render, ``HxWx3`` uint8.
        sigma: Gaussian noise in 8-bit levels.
        quality: JPEG quality, 0 to 100.
        rng: Random generator.

    Returns:
        The degraded frame, ``HxWx3`` uint8.
    """
    noisy = np.clip(bgr.astype(np.float32) + rng.normal(0.0, sigma, bgr.shape), 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("OpenCV cannot encode JPEG here")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)
