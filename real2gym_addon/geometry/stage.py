"""The geometry stage: table, world frame, shapes, motion and keyframes of a demo.

Inputs: the checked demo (camera, depth when present, prompts) and the
segmentation's masks. Output: a :class:`Geometry` that the scene description,
the Blender bridge and the verifier use, and the report's ``table``,
``objects`` and ``keyframes``.
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from ..demo import Demo
from ..depth import read_depth
from ..errors import DemoFolderError, WarningLog
from ..progress import Progress
from ..segmentation.run import Segmentation
from .camera import back_project, invert, orientation, pose_matrix, transform, yaw_rotation
from .fit import FittedObject, RestView, fit_shape
from .keyframes import GripperTrajectory, detect_events, load_trajectory, synthesise_gripper
from .motion import Motion, settle_hidden_tail, track
from .no_depth import pseudo_points, track_silhouettes
from .silhouette import silhouette_iou, silhouette_polygon
from .table import GeometryError, Table, fit_table, table_from_world_pose

REST_VIEWS = 6
ERODE = np.ones((5, 5), np.uint8)
RESTING_GAP = 0.015
"""An object whose lowest seen point stays this far above the table never rests on it."""


@dataclasses.dataclass
class ObjectGeometry:
    """One object's shape and motion.

    Attributes:
        name: From prompts.json.
        role: From prompts.json.
        fitted: The shape and its resting pose on the fit frame.
        motion: Per-frame world poses.
        visible: Per-frame visibility (from the masks).
    """

    name: str
    role: str
    fitted: FittedObject
    motion: Motion
    visible: list[bool]

    def to_report(self, camera_from_world: np.ndarray) -> dict:
        """The report's object entry (contract fields plus the shape details)."""
        entry = {
            "name": self.name,
            "role": self.role,
            **self.fitted.shape.to_report(),
            "static": self.motion.static,
        }
        frames = []
        rotation_cam = Rotation.from_matrix(camera_from_world[:3, :3])
        for i, position in enumerate(self.motion.positions):
            world = Rotation.from_matrix(self.motion.rotation(i))
            q_cam = (rotation_cam * world).as_quat()[[3, 0, 1, 2]]
            q_world = world.as_quat()[[3, 0, 1, 2]]
            frames.append(
                {
                    "frame": i,
                    "position_cam": np.round(transform(camera_from_world, position[None])[0], 5).tolist(),
                    "quaternion_cam": np.round(q_cam, 5).tolist(),
                    "position_world": np.round(position, 5).tolist(),
                    "quaternion_world": np.round(q_world, 5).tolist(),
                    "visible": bool(self.visible[i]),
                    "measured": bool(self.motion.measured[i]),
                }
            )
        entry["frames"] = frames
        return entry


@dataclasses.dataclass
class Geometry:
    """The geometry stage's result.

    Attributes:
        table: The support plane.
        world_from_camera: 4x4 (OpenCV camera frame into the z-up world).
        objects: Per object, in prompts.json order.
        keyframes: ``{"frame", "event", "object"}`` in frame order.
        gripper: The gripper trajectory for simulation, or None without a manipulated object.
    """

    table: Table
    world_from_camera: np.ndarray
    objects: list[ObjectGeometry]
    keyframes: list[dict]
    gripper: GripperTrajectory | None


class _DepthReader:
    def __init__(self, demo: Demo) -> None:
        self.demo = demo
        self._cache: dict[int, np.ndarray | None] = {}

    def __call__(self, frame: int) -> np.ndarray | None:
        if frame not in self._cache:
            try:
                image = read_depth(self.demo, frame)
            except DemoFolderError as e:
                raise GeometryError(str(e)) from e
            self._cache = {frame: image} if len(self._cache) > 8 else {**self._cache, frame: image}
        return self._cache[frame]


def _rest_frames(summary: list[dict], prompt_frame: int) -> list[int]:
    """Frames near the prompt where the object is fully seen and has not moved."""
    anchor = summary[prompt_frame]
    if not anchor["visible"]:
        return [prompt_frame]
    still = [
        entry
        for entry in summary
        if entry["visible"] and np.hypot(*np.subtract(entry["centroid"], anchor["centroid"])) < 2.0
    ]
    # Fully seen: as large as it gets while it stays there (a hand in front makes it smaller).
    largest = max(entry["area"] for entry in still)
    candidates = [entry["frame"] for entry in still if entry["area"] >= 0.85 * largest]
    candidates.sort(key=lambda f: abs(f - prompt_frame))
    chosen = sorted(candidates[: REST_VIEWS * 4 : 4]) or [prompt_frame]
    return chosen


def _object_points(mask: np.ndarray, depth: np.ndarray | None, camera) -> np.ndarray | None:
    if depth is None or not mask.any():
        return None
    eroded = cv2.erode(mask.astype(np.uint8), ERODE) > 0
    points = back_project(camera, depth, eroded)
    if len(points) < 10:
        return points
    z = points[:, 2]
    median = np.median(z)
    spread = max(0.02, 4 * np.median(np.abs(z - median)))
    return points[np.abs(z - median) < spread * 3]


def run_geometry(
    demo: Demo,
    segmentation: Segmentation,
    progress: Progress | None = None,
    log: WarningLog | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Geometry:
    """Runs the geometry stage.

    Args:
        demo: The checked demo.
        segmentation: Masks of every object on every frame (video size).
        progress: Progress inside ``span``; carries cancellation.
        log: Receives warnings.
        span: The part of the overall progress this stage covers.

    Raises:
        GeometryError: Neither depth nor world_from_camera, depth of the wrong
            size, an object with no usable view, or one that never rests on the table.
    """
    progress = progress or Progress()
    log = log if log is not None else WarningLog()
    camera, frames = demo.camera, demo.video.frames
    if demo.depth_dir is None and camera.world_from_camera is None:
        raise GeometryError(
            "the demo has no depth/ folder and camera.json has no world_from_camera: the table and the "
            "objects cannot be placed at metric scale; add depth images or the camera pose"
        )
    if demo.depth_dir is None:
        log.warn(
            "geometry",
            "no depth: shapes and motion come from the silhouettes and the camera pose (less accurate)",
        )
    depth = _DepthReader(demo)
    progress.step("fitting the table", span[0])
    sample = np.linspace(0, frames - 1, min(5, frames)).round().astype(int)
    union = [np.logical_or.reduce([t.masks[f] for t in segmentation.objects]) for f in sample]
    union = [cv2.dilate(m.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0 for m in union]
    if camera.world_from_camera is not None:
        world_from_camera = np.asarray(camera.world_from_camera, float)
        table = table_from_world_pose(world_from_camera)
    else:
        depth_frames = [depth(int(f)) for f in sample]
        if any(d is None for d in depth_frames):
            raise GeometryError(
                f"depth/ lacks images for some of frames {sample.tolist()}; one image per video frame is needed"
            )
        table, world_from_camera = fit_table(camera, depth_frames, union)
    camera_from_world = invert(world_from_camera)
    trajectory = None
    if demo.trajectory is not None:
        trajectory = load_trajectory(demo.trajectory, frames, world_from_camera)

    objects = []
    for index, (prompt, track_) in enumerate(zip(demo.objects, segmentation.objects, strict=True)):
        fraction = span[0] + (span[1] - span[0]) * (0.1 + 0.8 * index / len(demo.objects))
        progress.step(f"fitting and tracking '{prompt.name}'", fraction)
        summary = [track_.frame_summary(f) for f in range(frames)]
        views = []
        for frame in _rest_frames(summary, prompt.frame):
            mask = track_.masks[frame]
            if demo.depth_dir is None:
                views.append(
                    RestView(mask, pseudo_points(mask, camera, camera_from_world), camera_from_world, False)
                )
                continue
            points = _object_points(mask, depth(frame), camera)
            if points is None or len(points) < 10:
                continue
            views.append(RestView(mask, transform(world_from_camera, points), camera_from_world))
        views = [v for v in views if len(v.points_world)]
        if not views:
            what = (
                "no depth readings under its mask"
                if demo.depth_dir
                else "its mask is too small or does not meet the table"
            )
            raise GeometryError(
                f"object '{prompt.name}': {what} on frame {prompt.frame}; it cannot be measured "
                "(check the mask and the depth there)"
            )
        lowest = min(float(np.percentile(v.points_world[:, 2], 2)) for v in views)
        if lowest > RESTING_GAP:
            raise GeometryError(
                f"object '{prompt.name}' does not rest on the table on frame {prompt.frame} (its lowest "
                f"point is {lowest * 100:.1f} cm above it); put its prompt on a frame where it stands on the table"
            )
        fitted, warning = fit_shape(prompt.shape, views, camera)
        if warning:
            log.warn("geometry", f"object '{prompt.name}': {warning}")
        visible = [entry["visible"] for entry in summary]
        if demo.depth_dir is None:
            motion = track_silhouettes(
                fitted.shape,
                fitted.position,
                fitted.yaw,
                prompt.frame,
                track_.masks,
                visible,
                camera,
                camera_from_world,
                trajectory,
            )
        else:
            points = [
                _object_points(track_.masks[f], depth(f), camera) if visible[f] else None
                for f in range(frames)
            ]
            masks = track_.masks

            def agreement(frame, fit, shape=fitted.shape, masks=masks):
                pose = camera_from_world @ pose_matrix(fit[0], orientation(fit[1], fit[2]))
                return silhouette_iou(silhouette_polygon(shape, pose, camera), masks[frame])

            motion = track(
                fitted.shape, fitted.position, fitted.yaw, prompt.frame, points, world_from_camera,
                silhouette=agreement, gripper=trajectory,
            )  # fmt: skip
        objects.append(
            ObjectGeometry(prompt.name, prompt.role, fitted, motion, [s["visible"] for s in summary])
        )

    for obj in objects:
        xy = (
            obj.motion.positions[np.nonzero(obj.motion.measured)[0][-1], :2]
            if obj.motion.measured.any()
            else None
        )
        if xy is not None:
            support = support_height(xy, [o for o in objects if o is not obj])
            settle_hidden_tail(obj.motion, support, obj.fitted.shape.size[2] / 2, demo.video.fps)

    progress.step("finding the interaction keyframes", span[0] + 0.9 * (span[1] - span[0]))
    keyframes, gripper = [], trajectory
    moved = next((o for o in objects if o.name == demo.task.object), None)
    if moved is not None:
        keyframes = detect_events(
            moved.name, moved.motion, demo.video.fps, trajectory, log, moved.fitted.shape.size[2],
            moved.fitted.shape.size,
        )  # fmt: skip
        if gripper is None:
            gripper = synthesise_gripper(moved.fitted.shape, moved.motion, keyframes)
    return Geometry(table, world_from_camera, objects, keyframes, gripper)


def support_height(xy: np.ndarray, others: list[ObjectGeometry]) -> float:
    """Height (m, world) of the highest support surface under ``xy``: the table, or another object.

    A container supports with its inner bottom, other shapes with their top,
    where ``xy`` lies inside their footprint (at their final pose).
    """
    height = 0.0
    for other in others:
        shape, centre = other.fitted.shape, other.motion.positions[-1]
        local = yaw_rotation(other.motion.yaws[-1]).T @ np.r_[xy - centre[:2], 0.0]
        if shape.is_container or shape.kind in ("cylinder", "plate"):
            inside = np.hypot(local[0], local[1]) < shape.size[0] / 2
        else:
            inside = abs(local[0]) < shape.size[0] / 2 and abs(local[1]) < shape.size[1] / 2
        if not inside:
            continue
        bottom = centre[2] - shape.size[2] / 2
        top = bottom + (shape.params["bottom_thickness"] if shape.is_container else shape.size[2])
        height = max(height, top)
    return height


def object_pose(obj: ObjectGeometry, frame: int) -> np.ndarray:
    """4x4 world pose of an object on a frame."""
    return pose_matrix(obj.motion.positions[frame], obj.motion.rotation(frame))
