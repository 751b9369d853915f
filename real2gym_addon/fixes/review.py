"""What an artist reviews before fixing: each keyframe with its checks, and silhouettes.

:func:`keyframe_checks` says which checks of the verification concern each
interaction keyframe and whether they passed; :func:`silhouette_ious` measures
how well the reconstructed object covers its mask around a frame (the
silhouette IoU the shape fit maximises, over the pixels no other object
hides), so a keyframe where the reconstruction drifts from the video stands out.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from ..demo import Camera
from ..geometry.camera import pose_at, report_camera_from_world
from ..geometry.shapes import Shape
from ..geometry.silhouette import silhouette_polygon
from ..verify import registry
from .edits import FixError, find_object


def keyframe_checks(report: dict) -> list[dict]:
    """The run's keyframes with the checks that concern them.

    Args:
        report: The run's report.json content.

    Returns:
        One ``{"event", "object", "frame", "checks", "failed", "passed"}`` per
        keyframe, in frame order: ``checks`` names the checks the verification ran
        whose ``events`` (:data:`~..verify.registry.CHECKS`) hold the keyframe's, in
        table order, ``failed`` those of them that failed, and ``passed`` is True
        or False, or None when the run is not verified (or was edited since:
        ``verification.stale``) or no concerned check ran.
    """
    verification = report.get("verification") or {}
    results = {} if verification.get("stale") else verification.get("checks", {})
    rows = []
    for keyframe in sorted(report.get("keyframes", []), key=lambda k: k["frame"]):
        checks = [
            name
            for name, check in registry.CHECKS.items()
            if keyframe["event"] in check.events and name in results
        ]
        failed = [name for name in checks if not results[name].get("passed", True)]
        rows.append({
            "event": keyframe["event"],
            "object": keyframe["object"],
            "frame": int(keyframe["frame"]),
            "checks": checks,
            "failed": failed,
            "passed": (not failed) if checks else None,
        })  # fmt: skip
    return rows


def _camera(report: dict) -> Camera:
    c = report["camera"]
    return Camera(int(c["width"]), int(c["height"]), c["fx"], c["fy"], c["cx"], c["cy"])


def _mask_folder(report: dict, out_dir: Path, name: str) -> Path:
    for entry in (report.get("segmentation") or {}).get("objects", []):
        if entry["name"] == name:
            return out_dir / entry["masks"]
    return out_dir / "masks" / name


def _world_from_object(frame: dict) -> np.ndarray:
    w, x, y, z = frame["quaternion_world"]
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
    matrix[:3, 3] = frame["position_world"]
    return matrix


def _read_mask(folder: Path, frame: int, camera: Camera) -> np.ndarray | None:
    path = folder / f"{frame:06d}.png"
    mask = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE) if path.is_file() else None
    if mask is None:
        return None
    if mask.shape != (camera.height, camera.width):
        mask = cv2.resize(mask, (camera.width, camera.height), interpolation=cv2.INTER_NEAREST)
    return mask > 127


def _visible_iou(polygon: np.ndarray, mask: np.ndarray, occluded: np.ndarray) -> float:
    """IoU of a filled polygon and a mask over the pixels no other object covers."""
    canvas = np.zeros(mask.shape, np.uint8)
    cv2.fillPoly(canvas, [np.round(polygon * 4).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=2)
    free = ~occluded
    silhouette = canvas.astype(bool) & free
    seen = mask & free
    union = np.logical_or(silhouette, seen).sum()
    return float(np.logical_and(silhouette, seen).sum() / union) if union else 0.0


def silhouette_ious(
    report: dict, out_dir: Path | str, name: str, frames: list[int]
) -> dict[int, float | None]:
    """The IoU between an object's mask and its reconstruction's silhouette, per frame.

    The silhouette is the object's shape from the report, at its world pose on
    that frame, projected through the video camera (``camera.world_from_camera``
    and the intrinsics). Pixels in another object's mask on that frame are left
    out of both: there the other object hides this one (a block inside a cup),
    and the mask cannot show it. Occluders that are not segmented (a gripper)
    still lower the IoU.

    Args:
        report: The run's report.json content.
        out_dir: The run's output folder (with ``masks/<object>/NNNNNN.png``).
        name: The object.
        frames: Video frames to measure; frames outside the video are left out.

    Returns:
        ``{frame: iou}``, IoU in [0, 1]; None where the frame has no mask file or
        an empty one (the object is hidden).

    Raises:
        FixError: No such object, or the report has no world pose for the camera.
    """
    entry = find_object(report, name)
    if report["camera"].get("world_from_camera") is None or not entry.get("frames"):
        raise FixError(
            f"object '{name}' has no reconstruction in this run; run the pipeline up to 'geometry'"
        )
    camera = _camera(report)
    camera_from_world = report_camera_from_world(report)
    shape = Shape.from_report(entry)
    out_dir = Path(out_dir)
    folder = _mask_folder(report, out_dir, name)
    others = [_mask_folder(report, out_dir, o["name"]) for o in report["objects"] if o["name"] != name]
    ious: dict[int, float | None] = {}
    for frame in frames:
        if not 0 <= frame < len(entry["frames"]):
            continue
        mask = _read_mask(folder, frame, camera)
        if mask is None or not mask.any():
            ious[frame] = None  # no mask, or the object is hidden there: nothing to compare
            continue
        occluded = np.zeros_like(mask)
        for other in others:
            other_mask = _read_mask(other, frame, camera)
            if other_mask is not None:
                occluded |= other_mask & ~mask
        pose = pose_at(camera_from_world, frame) @ _world_from_object(entry["frames"][frame])
        polygon = silhouette_polygon(shape, pose, camera)
        ious[frame] = round(_visible_iou(polygon, mask, occluded), 4)
    return ious
