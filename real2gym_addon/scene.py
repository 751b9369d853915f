"""The scene description passed from stage to stage, and report.json made from it.

One serialisable record (:class:`SceneDescription`) holds what the stages know
about a demo: the video, the camera, the table, the objects and their motion,
the interaction keyframes, the checks and the files written. Each stage adds to
it; ``report.json`` is written from it (``docs/data-contract.md``), and the
Blender bridge builds the Blender scene from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .demo import Camera, Demo
from .geometry.camera import inverse_poses
from .geometry.stage import Geometry
from .report import REPORT_VERSION, Report, video_source


@dataclasses.dataclass
class VideoInfo:
    """The video as the report describes it.

    Attributes:
        path: Absolute path of the movie file or frames folder.
        frames: Number of frames.
        fps: Frames per second.
        width: Width in pixels.
        height: Height in pixels.
        is_sequence: True for a folder of frame images.
    """

    path: str
    frames: int
    fps: float
    width: int
    height: int
    is_sequence: bool = False


@dataclasses.dataclass
class SceneDescription:
    """Everything the stages know about one demo.

    Attributes:
        demo_dir: Absolute path of the demo folder.
        video: The video.
        camera: Intrinsics (pixels) and, when known, the world pose.
        task: ``{"type", "object", "target"}`` from prompts.json.
        objects: Per-object entries in the report's form (filled by later stages).
        keyframes: ``{"frame", "event", "object"}`` entries.
        segmentation: Per-object, per-frame mask figures (``Segmentation.summary``).
        verification: The verifier's result, or None before it runs.
        artifacts: Output files, relative to the output folder.
        warnings: ``{"stage", "message"}`` entries.
        stages: Wall time per stage in seconds.
    """

    demo_dir: str
    video: VideoInfo
    camera: Camera
    task: dict[str, Any]
    objects: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    table: dict[str, Any] | None = None
    keyframes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    segmentation: dict[str, Any] | None = None
    verification: dict[str, Any] | None = None
    artifacts: dict[str, str] = dataclasses.field(default_factory=dict)
    warnings: list[dict[str, str]] = dataclasses.field(default_factory=list)
    stages: dict[str, float] = dataclasses.field(default_factory=dict)
    world_from_camera: list[list[float]] | None = None
    camera_frames: list[list[list[float]]] | None = None
    camera_source: str = ""
    gripper: dict[str, Any] | None = None
    geometry: Geometry | None = dataclasses.field(default=None, repr=False, compare=False)

    @classmethod
    def from_demo(cls, demo: Demo) -> SceneDescription:
        """Starts a description from a checked demo folder."""
        video = demo.video
        return cls(
            demo_dir=str(demo.path),
            video=VideoInfo(
                path=str(video.path),
                frames=video.frames,
                fps=video.fps,
                width=video.width,
                height=video.height,
                is_sequence=video.is_sequence,
            ),
            camera=demo.camera,
            task=demo.task.to_json(),
        )

    @classmethod
    def from_report(cls, report: Report) -> SceneDescription:
        """Rebuilds a description from a finished run's report (Open Run), without its typed geometry.

        Raises:
            OutputError: The report's video is missing or not a video (``report.video_source``).
        """
        source = video_source(report)
        video, camera = report.video, report.camera
        world = camera.world_from_camera if camera.world_from_camera_source == "camera.json" else None
        return cls(
            demo_dir=str(report.demo or ""),
            video=VideoInfo(
                str(source),
                int(video.frames),
                float(video.fps),
                int(video.width),
                int(video.height),
                is_sequence=source.is_dir(),
            ),  # fmt: skip
            camera=Camera(
                int(camera.width),
                int(camera.height),
                camera.fx,
                camera.fy,
                camera.cx,
                camera.cy,
                world_from_camera=world,
            ),  # fmt: skip
            task=dict(report.task),
            objects=list(report.objects),
            table=report.table,
            keyframes=list(report.keyframes),
            segmentation=report.segmentation,
            verification=None if report.verification is None else report.verification.to_json(),
            artifacts=dict(report.artifacts),
            warnings=list(report.warnings),
            world_from_camera=camera.world_from_camera,
            camera_frames=camera.world_from_camera_frames,
            camera_source=camera.camera_motion_source or "",
            gripper=report.gripper,
        )

    def set_geometry(self, geometry: Geometry) -> None:
        """Takes the geometry stage's result: table, world frame, objects, keyframes, gripper."""
        self.geometry = geometry
        self.world_from_camera = np.round(geometry.world_from_camera, 6).tolist()
        if geometry.camera_frames is not None:
            self.camera_frames = np.round(geometry.camera_frames, 6).tolist()
            self.camera_source = geometry.camera_source
        self.table = geometry.table.to_report()
        camera_from_world = inverse_poses(geometry.camera_poses)
        self.objects = [o.to_report(camera_from_world) for o in geometry.objects]
        self.keyframes = list(geometry.keyframes)
        if geometry.gripper is not None:
            self.gripper = geometry.gripper.to_report(geometry.camera_poses)

    def report(self) -> Report:
        """The report made from this description (docs/data-contract.md)."""
        return Report.from_json(self.to_report())

    def to_report(self) -> dict[str, Any]:
        """Returns the report.json content (contract version :data:`REPORT_VERSION`)."""
        camera = self.camera
        report: dict[str, Any] = {
            "version": REPORT_VERSION,
            "demo": self.demo_dir,
            "video": {
                "frames": self.video.frames,
                "fps": self.video.fps,
                "width": self.video.width,
                "height": self.video.height,
                "source": self.video.path,
            },
            "camera": {
                "fx": camera.fx,
                "fy": camera.fy,
                "cx": camera.cx,
                "cy": camera.cy,
                "width": camera.width,
                "height": camera.height,
                "world_from_camera": self._world_from_camera(),
                "world_from_camera_source": "camera.json"
                if camera.world_from_camera
                else ("table" if self.world_from_camera else None),
                **self._camera_frames(),
            },
            "task": self.task,
            "objects": self.objects,
            "keyframes": self.keyframes,
            "artifacts": self.artifacts,
            "warnings": self.warnings,
            "timing": {"stages_s": self.stages},
        }
        if self.table is not None:
            report["table"] = self.table
        if self.segmentation is not None:
            report["segmentation"] = self.segmentation
        if self.gripper is not None:
            report["gripper"] = self.gripper
        if self.verification is not None:
            report["verification"] = self.verification
        return report

    def _camera_frames(self) -> dict[str, Any]:
        """A moving camera's per-frame poses and where they come from; nothing for one that stays put."""
        if self.camera_frames is None:
            return {}
        return {"world_from_camera_frames": self.camera_frames, "camera_motion_source": self.camera_source}

    def _world_from_camera(self) -> list[list[float]] | None:
        if self.camera.world_from_camera:
            return [list(r) for r in self.camera.world_from_camera]
        return self.world_from_camera
