"""Real cameras: noisy stereo depth, a camera that moves, a top-down view, RGB-only with a known size.

Scenes are made by tools/make_demo.py (MuJoCo's renderer) with the options real
footage needs, once, into ``.cache/bench_cameras/`` (git ignored):

- ``stereo_noise``: a consumer stereo camera's depth (1 cm at 0.5 m, so 2 cm on the desk
  0.7 m away, growing with the square of the distance, 15-30 % of the readings missing in
  patches; about three times what the real ZED clip c4_pour01 shows);
- ``stereo_noise_2cm``: twice that (2 cm at 0.5 m, 4 cm on the desk);
- ``moving_given``: a camera that swings 6 degrees, bobs and rolls, its pose per frame in
  camera.json (``world_from_camera_frames``);
- ``moving_estimated``: the same video with no pose: the camera's motion is estimated;
- ``top_down``: a camera 70 degrees above the table;
- ``rgb_known_size``: no depth and no pose, the cup's true height in its prompt.

Each runs through the pipeline's own stages (load, classical segmentation, geometry) and
is scored against truth.json: the table's normal and offset on frame 0, every object's
size and its position RMS over the frames it is visible (in each frame's own camera, so
an estimated camera path is judged by what the video shows), and, where the camera
moves, how far an object nothing carries wanders in the world. Then the real clip
``../shared/real_footage/c4_pour01`` (no truth): its table, camera motion and sizes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from run import Figure

NAME = "cameras"
REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_cameras"
REAL_CLIP = REPO.parent / "shared" / "real_footage" / "c4_pour01"

SCENES = {
    "stereo_noise": ["--seed", "5", "--stereo-noise", "0.01", "--with-trajectory"],
    "stereo_noise_2cm": ["--seed", "5", "--stereo-noise", "0.02", "--with-trajectory"],
    "moving_given": ["--seed", "3", "--camera-sway", "6", "--with-world-from-camera", "--with-trajectory"],
    "moving_estimated": ["--seed", "3", "--camera-sway", "6", "--with-trajectory"],
    "top_down": ["--seed", "6", "--camera-elevation", "70", "--camera-distance", "0.75", "--with-trajectory"],
    "rgb_known_size": ["--seed", "3", "--camera-azimuth", "-25", "--no-depth", "--with-trajectory"],
}  # fmt: skip
KNOWN_SIZE = {"rgb_known_size": "cup"}
"""Scene -> the object whose true height goes into its prompt (the only metric scale there)."""


def _scene(name: str) -> Path:
    folder = CACHE / name
    if (folder / "truth.json").is_file():
        return folder
    print(f"generating benchmark scene {name} (once) ...", file=sys.stderr, flush=True)
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    staging = CACHE / f".{name}"
    shutil.rmtree(staging, ignore_errors=True)
    subprocess.run([sys.executable, str(REPO / "tools" / "make_demo.py"), "--out", str(staging), *SCENES[name]],
                   check=True, env=env, capture_output=True)  # fmt: skip
    if name in KNOWN_SIZE:
        truth = json.loads((staging / "truth.json").read_text())
        height = next(o for o in truth["objects"] if o["name"] == KNOWN_SIZE[name])["size"][2]
        prompts = json.loads((staging / "prompts.json").read_text())
        next(o for o in prompts["objects"] if o["name"] == KNOWN_SIZE[name])["height"] = round(height, 4)
        (staging / "prompts.json").write_text(json.dumps(prompts, indent=2))
    staging.rename(folder)
    return folder


def _size_error(fitted, truth) -> float:
    """Largest relative error per axis (%); the two horizontal axes compared sorted."""
    f = np.r_[np.sort(fitted[:2]), fitted[2]]
    t = np.r_[np.sort(truth[:2]), truth[2]]
    return float(100 * np.max(np.abs(f - t) / t))


def _geometry(folder: Path):
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.errors import WarningLog
    from real2gym.real2gym_addon.geometry.stage import run_geometry
    from real2gym.real2gym_addon.segmentation.backends import SegmentationOptions, make_segmenter
    from real2gym.real2gym_addon.segmentation.run import segment_demo

    demo, log = load_demo(folder), WarningLog()
    segmentation = segment_demo(demo, make_segmenter(SegmentationOptions()), log=log)
    started = time.perf_counter()
    geometry = run_geometry(demo, segmentation, log=log)
    return demo, geometry, time.perf_counter() - started


def score_scene(name: str, folder: Path) -> list[Figure]:
    """Runs the stages on one generated scene and scores them against its truth."""
    from real2gym.real2gym_addon.errors import Real2GymError
    from real2gym.real2gym_addon.geometry.camera import inverse_poses, pose_at
    from real2gym.real2gym_addon.truth import load_truth

    truth = load_truth(folder)
    try:
        demo, geometry, seconds = _geometry(folder)
    except Real2GymError as e:
        return [Figure(NAME, f"{name}: geometry runs", 0, "", target=str(e)[:70], passed=False)]
    figures = [Figure(NAME, f"{name}: geometry stage", seconds, "s", target="< 30", passed=seconds < 30)]
    normal = np.degrees(np.arccos(np.clip(geometry.table.normal_cam @ truth.table_normal_cam, -1, 1)))
    offset = 1000 * abs(geometry.table.offset_cam - truth.table_offset_cam)
    rgb_only = demo.depth_dir is None
    figures += [
        Figure(NAME, f"{name}: table normal error", normal, "deg", target="<= 2", passed=normal <= 2),
        Figure(NAME, f"{name}: table offset error", offset, "mm", target="<= 5", passed=offset <= 5),
    ]
    size_limit, rms_limit = (10, 20) if rgb_only else (5, 10)
    views = inverse_poses(geometry.camera_poses)
    for obj in geometry.objects:
        true_obj = truth.objects[obj.name]
        size = _size_error(obj.fitted.shape.size, true_obj.size)
        seen = np.array([pose_at(views, i) @ np.r_[p, 1.0] for i, p in enumerate(obj.motion.positions)])[
            :, :3
        ]
        true_seen = np.array([f.position_cam for f in true_obj.frames])
        visible = np.array([f.visible for f in true_obj.frames])
        rms = 1000 * float(np.sqrt(np.mean(np.sum((seen - true_seen)[visible] ** 2, axis=1))))
        figures += [
            Figure(NAME, f"{name}: {obj.name} size error", size, "%", target=f"<= {size_limit}",
                   passed=size <= size_limit),
            Figure(NAME, f"{name}: {obj.name} position RMS (visible)", rms, "mm", target=f"<= {rms_limit}",
                   passed=rms <= rms_limit),
        ]  # fmt: skip
        if "moving" in name and obj.name != demo.task.object:
            world = obj.motion.positions
            wander = 1000 * float(np.linalg.norm(world - np.median(world, axis=0), axis=1).max())
            figures.append(Figure(NAME, f"{name}: {obj.name} (static) wanders in the world", wander, "mm",
                                  target="<= 5", passed=wander <= 5))  # fmt: skip
    if "moving" in name:
        figures.append(Figure(NAME, f"{name}: camera motion from", 0, geometry.camera_source or "none"))
        if geometry.camera_frames is not None:
            from scipy.spatial.transform import Rotation

            found = np.linalg.inv(geometry.camera_frames[0]) @ geometry.camera_frames
            true = np.asarray(truth.raw["world_from_camera_frames"], float)
            true = np.linalg.inv(true[0]) @ true
            turn = [np.degrees(Rotation.from_matrix(f[:3, :3].T @ t[:3, :3]).magnitude()) for f, t in
                    zip(found, true, strict=True)]  # fmt: skip
            figures.append(Figure(NAME, f"{name}: camera rotation error from frame 0 (median)",
                                  float(np.median(turn)), "deg", target="<= 2", passed=np.median(turn) <= 2))  # fmt: skip
    return figures


def score_real_clip(folder: Path) -> list[Figure]:
    """The real RGB-D clip: does the table fit, how the camera moves, the sizes (no truth: judged by eye)."""
    from real2gym.real2gym_addon.errors import Real2GymError

    try:
        _, geometry, seconds = _geometry(folder)
    except Real2GymError as e:
        return [Figure(NAME, "c4_pour01: geometry runs", 0, "", target=str(e)[:70], passed=False)]
    table = geometry.table
    figures = [
        Figure(NAME, "c4_pour01: geometry stage", seconds, "s"),
        Figure(NAME, "c4_pour01: camera height above the table (frame 0)", 100 * table.offset_cam, "cm"),
        Figure(NAME, "c4_pour01: table inlier RMS", 1000 * table.inlier_rms, "mm"),
        Figure(NAME, "c4_pour01: camera motion from", 0, geometry.camera_source or "none (still)"),
    ]
    if geometry.camera_frames is not None:
        from scipy.spatial.transform import Rotation

        relative = np.linalg.inv(geometry.camera_frames[0]) @ geometry.camera_frames
        turns = [np.degrees(Rotation.from_matrix(r[:3, :3]).magnitude()) for r in relative]
        figures.append(Figure(NAME, "c4_pour01: camera turn from frame 0 (max)", max(turns), "deg"))
    for obj in geometry.objects:
        size = obj.fitted.shape.size
        figures.append(
            Figure(NAME, f"c4_pour01: {obj.name} ({obj.fitted.shape.kind}) size, cm",
                   100 * float(size[2]), f"cm tall, {100 * size[0]:.1f} x {100 * size[1]:.1f} cm across")
        )  # fmt: skip
    return figures


def run(args) -> list[Figure]:
    """Scores every scene, then the real clip; prints the worst figures over the set."""
    figures = []
    for name in SCENES:
        figures += score_scene(name, _scene(name))
    for kind in ("size error", "position RMS", "table normal error", "table offset error"):
        values = [f.value for f in figures if f.name.endswith(kind) or kind + " " in f.name]
        if values:
            unit = next(f.unit for f in figures if kind in f.name)
            figures.append(Figure(NAME, f"over the set: worst {kind}", max(values), unit))
    if REAL_CLIP.is_dir():
        figures += score_real_clip(REAL_CLIP)
    return figures
