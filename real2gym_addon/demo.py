"""Reading and checking a demo folder (``docs/data-contract.md``).

:func:`load_demo` reads ``camera.json``, ``prompts.json`` and the video, checks
them against each other (frame sizes, prompt frames and boxes) and returns a
:class:`Demo`. Every problem is a :class:`~real2gym_addon.errors.DemoFolderError`
naming the file, the object and the frame. ``truth.json`` is never read here.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from .depth import check_depth_images
from .errors import DemoFolderError, WarningLog
from .json_files import read_json_file
from .mesh_file import read_obj
from .prompts import HAND, ObjectPrompt, Task, parse_prompts
from .report import Report
from .trajectory import MAX_POSITION, TrajectorySamples, read_trajectory
from .video import Video, find_video, open_video

MIN_IMAGE_SIDE = 16
MAX_IMAGE_SIDE = 8192
"""Pixels per image side the pipeline handles."""
MIN_FRAMES = 2
MAX_VIDEO_PIXELS = 1_500_000_000
"""Frames x width x height: the segmenter keeps the frames in memory (3 bytes a pixel)."""


@dataclasses.dataclass(frozen=True)
class Camera:
    """Pinhole intrinsics in pixels (OpenCV convention) and the optional pose.

    Attributes:
        width: Image width in pixels.
        height: Image height in pixels.
        fx: Focal length along x, pixels.
        fy: Focal length along y, pixels.
        cx: Principal point x, pixels from the left edge.
        cy: Principal point y, pixels from the top edge.
        world_from_camera: 4x4 row-major pose of the OpenCV camera frame in the
            world frame (z up, z = 0 on the table), or None when not given. With
            per-frame poses, the pose on frame 0.
        depth_scale: Metres per depth-image unit.
        world_from_camera_frames: One 4x4 pose per video frame for a camera that
            moves (camera.json's ``world_from_camera_frames``), or None.
    """

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    world_from_camera: tuple[tuple[float, ...], ...] | None = None
    depth_scale: float = 0.001
    world_from_camera_frames: tuple[tuple[tuple[float, ...], ...], ...] | None = None


def camera_from_report(report: Report) -> Camera:
    """The intrinsics a report records (``camera``), without the pose."""
    c = report.camera
    return Camera(int(c.width), int(c.height), c.fx, c.fy, c.cx, c.cy)


@dataclasses.dataclass(frozen=True)
class Demo:
    """A checked demo folder.

    Attributes:
        path: The demo folder.
        video: The checked video.
        camera: The camera intrinsics (and pose, when given).
        objects: One prompt per object, in the order of prompts.json (hands not included).
        task: The demonstrated task.
        depth_dir: The ``depth`` folder, or None when the demo has no depth.
        trajectory_path: ``trajectory.json``, or None when absent.
        trajectory: Its checked samples, or None when absent.
        hands: The prompts with role ``hand`` (the demonstrator's hand or gripper in the video).
    """

    path: Path
    video: Video
    camera: Camera
    objects: tuple[ObjectPrompt, ...]
    task: Task
    depth_dir: Path | None = None
    trajectory_path: Path | None = None
    trajectory: TrajectorySamples | None = None
    hands: tuple[ObjectPrompt, ...] = ()

    def part_prompts(self) -> tuple[ObjectPrompt, ...]:
        """The objects' moving parts as prompts to segment, named ``<object>.<part>``, in object order."""
        return tuple(part.as_object(obj.name) for obj in self.objects for part in obj.parts)


def read_json(path: Path) -> Any:
    """Reads a demo-folder JSON file; a missing or malformed file is a DemoFolderError naming it."""
    if not path.is_file():
        raise DemoFolderError(f"{path.name} is missing from the demo folder {path.parent}")
    return read_json_file(path, DemoFolderError, path.name)


def _number(data: dict, key: str, where: str, positive: bool = False) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DemoFolderError(f"{where}: '{key}' must be a number, got {value!r}")
    if positive and value <= 0:
        raise DemoFolderError(f"{where}: '{key}' must be positive, got {value}")
    return float(value)


def load_camera(path: Path) -> Camera:
    """Reads and checks ``camera.json``.

    Args:
        path: The camera.json file.

    Returns:
        The camera.

    Raises:
        DemoFolderError: The file is missing, not JSON, or a field is missing or
            not a valid number.
    """
    return parse_camera(read_json(path))


def parse_camera(data: Any, where: str = "camera.json") -> Camera:
    """Checks the content of camera.json; see :func:`load_camera`."""
    if not isinstance(data, dict):
        raise DemoFolderError(f"{where} must hold a JSON object with width, height, fx, fy, cx, cy")
    width = _number(data, "width", where, positive=True)
    height = _number(data, "height", where, positive=True)
    if width != int(width) or height != int(height):
        raise DemoFolderError(f"{where}: width and height must be whole pixels")
    pose = data.get("world_from_camera")
    if pose is not None:
        pose = _pose(pose, f"{where}: 'world_from_camera'")
    poses = data.get("world_from_camera_frames")
    if poses is not None:
        if not isinstance(poses, list) or not poses:
            raise DemoFolderError(
                f"{where}: 'world_from_camera_frames' must be a list with one 4x4 pose per video frame"
            )
        poses = tuple(_pose(p, f"{where}: 'world_from_camera_frames' entry {i}") for i, p in enumerate(poses))
        if pose is None:
            pose = poses[0]
        elif np.abs(np.subtract(pose, poses[0])).max() > 1e-4:
            raise DemoFolderError(
                f"{where}: 'world_from_camera' differs from the first of 'world_from_camera_frames'; give "
                "one or make them agree (world_from_camera is the pose on frame 0)"
            )
    if not (MIN_IMAGE_SIDE <= width <= MAX_IMAGE_SIDE and MIN_IMAGE_SIDE <= height <= MAX_IMAGE_SIDE):
        raise DemoFolderError(
            f"{where}: the image is {int(width)}x{int(height)}; each side must be {MIN_IMAGE_SIDE} to "
            f"{MAX_IMAGE_SIDE} pixels"
        )
    depth_scale = _number(data, "depth_scale", where, positive=True) if "depth_scale" in data else 0.001
    if depth_scale > 1.0:
        raise DemoFolderError(
            f"{where}: 'depth_scale' is {depth_scale:g} metres per depth unit; expected at most 1 "
            "(0.001 for millimetre depth PNGs)"
        )
    fx, fy = _number(data, "fx", where, positive=True), _number(data, "fy", where, positive=True)
    cx, cy = _number(data, "cx", where), _number(data, "cy", where)
    longest = max(width, height)
    if not (0.05 * longest <= min(fx, fy) and max(fx, fy) <= 100 * longest):
        raise DemoFolderError(
            f"{where}: focal lengths fx={fx:g}, fy={fy:g} pixels are implausible for a {int(width)}x"
            f"{int(height)} image (expected {0.05 * longest:g} to {100 * longest:g}); are they in pixels?"
        )
    if not (-width <= cx <= 2 * width and -height <= cy <= 2 * height):
        raise DemoFolderError(
            f"{where}: the principal point ({cx:g}, {cy:g}) lies far off the {int(width)}x{int(height)} "
            "image; cx, cy are in pixels from the top-left corner"
        )
    return Camera(
        width=int(width),
        height=int(height),
        fx=fx,
        fy=fy,
        cx=cx,
        cy=cy,
        world_from_camera=pose,
        depth_scale=depth_scale,
        world_from_camera_frames=poses,
    )


def _pose(value: Any, where: str) -> tuple[tuple[float, ...], ...]:
    """A checked 4x4 rigid transform from JSON (rows of numbers)."""
    try:
        rows = tuple(tuple(float(v) for v in row) for row in value)
    except (TypeError, ValueError) as e:
        raise DemoFolderError(f"{where} must be a 4x4 list of numbers") from e
    if len(rows) != 4 or any(len(r) != 4 for r in rows) or not all(map(math.isfinite, sum(rows, ()))):
        raise DemoFolderError(f"{where} must be a 4x4 list of finite numbers")
    check_rigid_transform(rows, where)
    return rows


def check_rigid_transform(matrix, where: str, tolerance: float = 1e-3) -> None:
    """Checks that a 4x4 matrix is a proper rigid transform (a rotation and a translation).

    The rotation must be orthonormal with determinant +1 and the last row
    ``0 0 0 1``, within ``tolerance`` (ordinary float noise of a pose written
    with 6 digits passes). Translations beyond :data:`MAX_POSITION` are refused.

    Args:
        matrix: 4x4 numbers, row-major.
        where: Where it was read, for the message.
        tolerance: Largest accepted deviation of each entry.

    Raises:
        DemoFolderError: Naming ``where`` and what is wrong.
    """
    m = np.asarray(matrix, dtype=float)
    if m.shape != (4, 4) or not np.isfinite(m).all():
        raise DemoFolderError(f"{where} must be a 4x4 matrix of finite numbers")
    if np.abs(m[3] - (0.0, 0.0, 0.0, 1.0)).max() > tolerance:
        raise DemoFolderError(f"{where}: the last row is {m[3].tolist()}, it must be [0, 0, 0, 1]")
    rotation = m[:3, :3]
    error = np.abs(rotation.T @ rotation - np.eye(3)).max()
    if error > tolerance:
        raise DemoFolderError(
            f"{where}: the upper-left 3x3 is not a rotation (its columns are not orthonormal; off by "
            f"{error:.3g}); give the camera's pose as a rotation and a translation in metres"
        )
    if np.linalg.det(rotation) < 0:
        raise DemoFolderError(
            f"{where}: the rotation is a reflection (determinant -1); flip one axis to make it right-handed"
        )
    if np.linalg.norm(m[:3, 3]) > MAX_POSITION:
        raise DemoFolderError(
            f"{where}: the camera is {np.linalg.norm(m[:3, 3]):.3g} m from the world origin; "
            f"expected under {MAX_POSITION:g} m (translations are in metres)"
        )


def load_demo(path: Path | str, log: WarningLog | None = None) -> Demo:
    """Reads and checks a whole demo folder.

    Args:
        path: The demo folder.
        log: Receives warnings; a new one is used when None.

    Returns:
        The checked demo.

    Raises:
        DemoFolderError: Anything missing or malformed, named by file, object and frame.
    """
    log = log if log is not None else WarningLog()
    folder = Path(path).expanduser()
    if not folder.exists():
        raise DemoFolderError(f"demo folder not found: {folder}")
    if not folder.is_dir():
        raise DemoFolderError(f"{folder} is not a folder; give the demo folder that holds video.mp4")
    folder = folder.resolve()
    camera_data = read_json(folder / "camera.json")
    camera = parse_camera(camera_data)
    prompts_data = read_json(folder / "prompts.json")
    source = find_video(folder)
    if source is None:
        raise DemoFolderError(
            f"no video in {folder}: expected video.mp4 (or video.<ext>) or frames/000000.png ..."
        )
    fps = _number(camera_data, "fps", "camera.json", positive=True) if "fps" in camera_data else None
    video = open_video(source, fps=fps)
    if video.is_sequence and fps is None:
        log.warn("video", f"frames/ has no frame rate; using {video.fps:g} fps (set 'fps' in camera.json)")
    if (video.width, video.height) != (camera.width, camera.height):
        raise DemoFolderError(
            f"camera.json says {camera.width}x{camera.height} but {source.name} is "
            f"{video.width}x{video.height}; the intrinsics must be for the video's size"
        )
    poses = camera.world_from_camera_frames
    if poses is not None and len(poses) != video.frames:
        raise DemoFolderError(
            f"camera.json: 'world_from_camera_frames' holds {len(poses)} poses but {source.name} has "
            f"{video.frames} frames; give one pose per frame"
        )
    if video.frames < MIN_FRAMES:
        raise DemoFolderError(
            f"{source.name} has {video.frames} frame(s); a demonstration needs at least {MIN_FRAMES}"
        )
    if video.frames * video.width * video.height > MAX_VIDEO_PIXELS:
        raise DemoFolderError(
            f"{source.name} has {video.frames} frames of {video.width}x{video.height}; one run handles at "
            f"most {MAX_VIDEO_PIXELS / 1e9:g} gigapixels (e.g. {MAX_VIDEO_PIXELS // (640 * 480)} frames at "
            "640x480): trim the video to the demonstration"
        )
    objects, task = parse_prompts(prompts_data, video.frames, video.width, video.height, log)
    if any(prompt.mesh for prompt in objects):
        for prompt in objects:
            if prompt.mesh:  # a bad mesh file stops the run here, before the long segmentation
                read_obj(folder, prompt.mesh, prompt.name)
    depth_dir = folder / "depth"
    if depth_dir.exists() and not depth_dir.is_dir():
        raise DemoFolderError(f"{depth_dir} is not a folder; depth images go in depth/000000.png ...")
    if depth_dir.is_dir():
        check_depth_images(depth_dir, video.frames, video.width, video.height)
    trajectory_path = folder / "trajectory.json"
    trajectory = None
    if trajectory_path.exists():
        trajectory = read_trajectory(trajectory_path, video.frames, video.fps, log)
    return Demo(
        path=folder,
        video=video,
        camera=camera,
        objects=tuple(o for o in objects if o.role != HAND),
        task=task,
        depth_dir=depth_dir if depth_dir.is_dir() else None,
        trajectory_path=trajectory_path if trajectory is not None else None,
        trajectory=trajectory,
        hands=tuple(o for o in objects if o.role == HAND),
    )
