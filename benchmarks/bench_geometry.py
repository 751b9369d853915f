"""Geometry accuracy and speed against truth.json, per scene.

Runs the pipeline's own stages (load, default segmentation, geometry) on the
bundled demo and on generated variants (other camera poses and FOVs, object
sizes, a distractor, no recorded trajectory, no depth), and scores the table,
object sizes, positions and keyframe timing against the truth. The baseline
for the geometry time is the segmentation time of the same run.
"""

from __future__ import annotations

import time

import numpy as np
from run import Figure
from scenes import scene_folders

NAME = "geometry"


def _size_error(fitted: list[float], truth: np.ndarray) -> float:
    """Largest relative error per axis; the two horizontal axes compared sorted."""
    f = np.r_[np.sort(fitted[:2]), fitted[2]]
    t = np.r_[np.sort(truth[:2]), truth[2]]
    return float(np.max(np.abs(f - t) / t))


def _tilt_error(geometry, obj, true_obj, visible: np.ndarray) -> float | None:
    """RMS angle (degrees) between the true and found up axes, over visible frames where
    the object truly leans more than 5 degrees; None if it never does."""
    from scipy.spatial.transform import Rotation

    camera_from_world = np.linalg.inv(geometry.world_from_camera)
    normal = geometry.table.normal_cam
    errors = []
    for frame, truth_frame in enumerate(true_obj.frames):
        true_up = Rotation.from_quat(truth_frame.quaternion_cam[[1, 2, 3, 0]]).as_matrix()[:, 2]
        if not visible[frame] or np.degrees(np.arccos(np.clip(true_up @ normal, -1, 1))) < 5:
            continue
        found_up = camera_from_world[:3, :3] @ obj.motion.rotation(frame)[:, 2]
        errors.append(np.degrees(np.arccos(np.clip(true_up @ found_up, -1, 1))))
    return float(np.sqrt(np.mean(np.square(errors)))) if errors else None


def score_scene(name: str, folder) -> list[Figure]:
    """Runs the stages on one demo folder and scores them."""
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.errors import Real2GymError, WarningLog
    from real2gym.real2gym_addon.geometry.stage import run_geometry
    from real2gym.real2gym_addon.segmentation.backends import SegmentationOptions, make_segmenter
    from real2gym.real2gym_addon.segmentation.run import segment_demo
    from real2gym.real2gym_addon.truth import load_truth

    demo, truth, log = load_demo(folder), load_truth(folder), WarningLog()
    started = time.perf_counter()
    segmentation = segment_demo(demo, make_segmenter(SegmentationOptions()), log=log)
    segment_time = time.perf_counter() - started
    started = time.perf_counter()
    try:
        geometry = run_geometry(demo, segmentation, log=log)
    except Real2GymError as e:
        return [Figure(NAME, f"{name}: geometry runs", 0, "", target=str(e)[:60], passed=False)]
    geometry_time = time.perf_counter() - started
    label = f"{name}" + (" (no depth)" if demo.depth_dir is None else "")
    figures = [
        Figure(
            NAME,
            f"{label}: stage time",
            geometry_time,
            "s",
            segment_time,
            "segmentation",
            "< 10 s",
            geometry_time < 10,
        )
    ]
    normal_error = np.degrees(np.arccos(np.clip(geometry.table.normal_cam @ truth.table_normal_cam, -1, 1)))
    offset_error = abs(geometry.table.offset_cam - truth.table_offset_cam) * 1000
    figures += [
        Figure(
            NAME, f"{label}: table normal error", normal_error, "deg", target="<= 2", passed=normal_error <= 2
        ),
        Figure(
            NAME, f"{label}: table offset error", offset_error, "mm", target="<= 5", passed=offset_error <= 5
        ),
    ]
    camera_from_world = np.linalg.inv(geometry.world_from_camera)
    for obj in geometry.objects:
        true_obj = truth.objects[obj.name]
        size_error = 100 * _size_error(list(obj.fitted.shape.size), true_obj.size)
        positions = obj.motion.positions @ camera_from_world[:3, :3].T + camera_from_world[:3, 3]
        true_positions = np.array([f.position_cam for f in true_obj.frames])
        visible = np.array([f.visible for f in true_obj.frames])
        errors = np.linalg.norm(positions - true_positions, axis=1) * 1000
        prompt = next(p.frame for p in demo.objects if p.name == obj.name)
        rms = float(np.sqrt(np.mean(errors[visible] ** 2)))
        figures += [
            Figure(NAME, f"{label}: {obj.name} size error", size_error, "%", target="<= 5", passed=size_error <= 5),
            Figure(NAME, f"{label}: {obj.name} position error at prompt", errors[prompt], "mm", target="<= 10",
                   passed=errors[prompt] <= 10),
            Figure(NAME, f"{label}: {obj.name} position RMS (visible)", rms, "mm", target="<= 15", passed=rms <= 15),
        ]  # fmt: skip
        tilt_error = _tilt_error(geometry, obj, true_obj, visible)
        if tilt_error is not None:  # the object leans somewhere in the video: is its tilt found?
            figures.append(Figure(NAME, f"{label}: {obj.name} tilt error (RMS, tilted frames)", tilt_error, "deg",
                                  target="<= 5", passed=tilt_error <= 5))  # fmt: skip
        if "base_radius" in true_obj.params:  # a profiled container: how well its base is found
            shape = obj.fitted.shape
            base = shape.params.get("base_radius", shape.params.get("outer_radius", shape.size[0] / 2))
            base_error = 100 * abs(base - true_obj.params["base_radius"]) / true_obj.params["base_radius"]
            figures.append(Figure(NAME, f"{label}: {obj.name} base radius error", base_error, "%", target="<= 10",
                                  passed=base_error <= 10))  # fmt: skip
    found = {(k["event"], k["object"]): k["frame"] for k in geometry.keyframes}
    for entry in truth.keyframes:
        key = (entry["event"], entry["object"])
        if key in found:
            delta = abs(found[key] - entry["frame"])
            figures.append(
                Figure(
                    NAME,
                    f"{label}: {entry['event']} timing",
                    delta,
                    "frames",
                    target="<= 3",
                    passed=delta <= 3,
                )
            )
        else:
            figures.append(Figure(NAME, f"{label}: {entry['event']} timing", float("nan"), "frames",
                                  target="found", passed=False))  # fmt: skip
    return figures


def run(args) -> list[Figure]:
    """Scores every benchmark scene."""
    figures = []
    for name, folder in scene_folders(args.demo, with_variants=not getattr(args, "quick", False)).items():
        figures += score_scene(name, folder)
    return figures
