"""Reading the geometry back from report.json, to re-verify or fix a finished run.

report.json is the scene description every stage writes into; the verifier and
the fixes can start again from it without the video (``real2gym verify OUT``).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import Real2GymError
from ..report import Report
from .camera import split_orientation
from .contents import Contents
from .fit import FittedObject
from .keyframes import GripperTrajectory
from .motion import Motion
from .parts import PartGeometry
from .shapes import Shape
from .stage import Geometry, ObjectGeometry
from .table import Table


def _yaw_and_tilt(quaternion_wxyz) -> tuple[float, np.ndarray]:
    return split_orientation(Rotation.from_quat(np.asarray(quaternion_wxyz, float)[[1, 2, 3, 0]]).as_matrix())


def geometry_from_report(report: Report) -> Geometry:
    """Rebuilds the geometry stage's result from a report.

    Raises:
        Real2GymError: The report has no geometry (its run stopped earlier) or is malformed.
    """
    camera = report.camera
    if report.table is None or not report.objects or camera.world_from_camera is None:
        raise Real2GymError(
            "report.json has no geometry (table, objects, world frame); run the pipeline up to 'geometry' first"
        )
    try:
        world_from_camera = np.asarray(camera.world_from_camera, float)
        table_entry = report.table
        table = Table(
            normal_cam=np.asarray(table_entry["normal_cam"], float),
            offset_cam=float(table_entry["offset_cam"]),
            extent_world=list(table_entry.get("extent_world", [-0.5, -0.5, 0.5, 0.5])),
            inlier_rms=float(table_entry.get("inlier_rms", 0.0)),
            source=table_entry.get("source", "depth"),
        )
        objects = []
        for entry in report.objects:
            frames = entry["frames"]
            positions = np.array([f["position_world"] for f in frames], float)
            orientations = [_yaw_and_tilt(f["quaternion_world"]) for f in frames]
            yaws = np.array([yaw for yaw, _ in orientations])
            tilts = np.array([tilt for _, tilt in orientations]).reshape(-1, 2)
            measured = np.array([f.get("measured", f["visible"]) for f in frames], bool)
            partly = np.array([bool(f.get("partly_seen", False)) for f in frames])
            motion = Motion(positions, np.unwrap(yaws), measured, static=bool(entry.get("static", False)),
                            tilts=tilts if np.abs(tilts).max(initial=0.0) > 1e-6 else None,
                            partly_seen=partly if partly.any() else None)  # fmt: skip
            fitted = FittedObject(Shape.from_report(entry), positions[0].copy(), float(yaws[0]))
            visible = [bool(f["visible"]) for f in frames]
            parts = [PartGeometry.from_report(part) for part in entry.get("parts", [])]
            contents = entry.get("contents")
            if contents is not None:
                contents = Contents.from_json(contents, f"report.json, object '{entry['name']}'")
            objects.append(
                ObjectGeometry(
                    entry["name"], entry.get("role", "manipulated"), fitted, motion, visible, parts, contents
                )
            )
        gripper = None
        if report.gripper:
            samples = report.gripper["frames"]
            gripper = GripperTrajectory(
                np.array([s["position_world"] for s in samples], float),
                np.array([s["quaternion_world"] for s in samples], float),
                np.array([s["gripper"] for s in samples], float),
                report.gripper.get("source", "report.json"),
            )
        camera_frames = camera.world_from_camera_frames
        if camera_frames is not None:
            camera_frames = np.asarray(camera_frames, float).reshape(-1, 4, 4)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise Real2GymError(f"report.json is malformed ({type(e).__name__}: {e}); re-run the pipeline") from e
    keyframes = list(report.keyframes)
    source = (camera.camera_motion_source or "") if camera_frames is not None else ""
    return Geometry(table, world_from_camera, objects, keyframes, gripper, camera_frames, source)
