"""The side-by-side comparison: the real video | the reconstruction | the simulation.

``real2gym compare OUT_DIR`` re-simulates the finished run (from report.json),
renders MuJoCo from the video camera, and writes into ``OUT_DIR/compare/``:

- ``comparison.mp4``: per video frame, three tiles with the frame number,
  the interaction events around it and the check results;
- ``contact_sheet.png``: one row per interaction keyframe;
- ``errors.png``: per-frame distance between the simulated and the
  video-derived position of every object, with the keyframes marked.

The middle tile is a Blender render when the caller supplies one (the add-on
and the CLI with the bpy module pass the bridge's renderer); otherwise it is
the reconstructed scene, posed as the video says, rendered by MuJoCo, and
labelled so.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from .errors import Real2GymError
from .files import OutputFolder, write_json_atomic
from .pipeline import MASKS_NAME
from .progress import Progress
from .report_check import REPORT_NAME, camera_from_report, read_report, video_source
from .reverify import simulate_report
from .summary import Pictures, write_summary
from .video import open_video
from .video_out import VideoWriter

COMPARE_NAME = "compare"
TileRenderer = Callable[[int], np.ndarray]
"""Returns the middle tile for a video frame: ``HxWx3`` uint8 BGR at the video's size."""


def _renderer(model, width: int, height: int):
    os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    try:
        return mujoco.Renderer(model, height, width)
    except Exception as e:  # no OpenGL: EGL/OSMesa missing
        raise Real2GymError(
            f"MuJoCo cannot render here ({e}); install EGL (Debian: libegl1 libgl1-mesa-dri) or set MUJOCO_GL"
        ) from e


def _render(renderer, model, qpos: np.ndarray, world_from_camera: np.ndarray | None = None) -> np.ndarray:
    """Renders a state from the video camera; ``world_from_camera`` moves it there first (a camera that moves)."""
    import mujoco

    from .mjcf.export import mujoco_camera_quat

    if world_from_camera is not None:
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "video")
        model.cam_pos[index] = world_from_camera[:3, 3]
        model.cam_quat[index] = mujoco_camera_quat(world_from_camera)
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    renderer.update_scene(data, camera="video")
    return cv2.cvtColor(renderer.render(), cv2.COLOR_RGB2BGR)


def _label(image: np.ndarray, text: str, row: int = 0, colour=(255, 255, 255)) -> None:
    y = 18 + 18 * row
    cv2.putText(image, text, (6, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(image, text, (6, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)


def _events_near(keyframes: list[dict], frame: int, window: int = 3) -> str:
    return ", ".join(f"{k['event']} {k['object']}" for k in keyframes if abs(k["frame"] - frame) <= window)


def _checks_line(verification: dict | None) -> tuple[str, tuple[int, int, int]]:
    if not verification:
        return "not verified", (200, 200, 200)
    failed = [k for k, v in verification["checks"].items() if not v["passed"]]
    if not failed:
        return "verified: all checks passed", (120, 230, 120)
    return "FAILED: " + ", ".join(failed), (90, 90, 255)


def _compose(tiles: list[np.ndarray], titles: list[str], frame: int, events: str, checks) -> np.ndarray:
    scaled = []
    for tile, title in zip(tiles, titles, strict=True):
        small = cv2.resize(tile, (tile.shape[1] // 2, tile.shape[0] // 2), interpolation=cv2.INTER_AREA)
        _label(small, title)
        _label(small, f"frame {frame}", 1)
        if events:
            _label(small, events, 2, (80, 220, 255))
        scaled.append(small)
    row = np.concatenate(scaled, axis=1)
    band = np.zeros((26, row.shape[1], 3), np.uint8)
    cv2.putText(band, checks[0], (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5, checks[1], 1, cv2.LINE_AA)
    return np.concatenate([row, band], axis=0)


def _error_plot(path: Path, errors: dict[str, np.ndarray], keyframes: list[dict], fps: float) -> None:
    try:
        import matplotlib
    except ImportError:  # Blender's own Python has no matplotlib: draw the same plot with OpenCV
        _error_plot_opencv(path, errors, keyframes, fps)
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 3.2), dpi=100)
    for name, values in errors.items():
        axes.plot(np.arange(len(values)), values * 100, label=name)
    for keyframe in keyframes:
        axes.axvline(keyframe["frame"], color="grey", linestyle=":", linewidth=1)
        axes.text(
            keyframe["frame"], axes.get_ylim()[1] * 0.95, keyframe["event"], rotation=90, fontsize=7, va="top"
        )
    axes.set_xlabel(f"video frame ({fps:g} fps)")
    axes.set_ylabel("sim vs video (cm)")
    axes.set_title("Distance between simulated and video-derived object positions")
    axes.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


_PLOT_COLOURS = [(180, 119, 31), (14, 127, 255), (44, 160, 44), (40, 39, 214)]


def _error_plot_opencv(path: Path, errors: dict[str, np.ndarray], keyframes: list[dict], fps: float) -> None:
    """The error plot drawn with OpenCV: per-object lines, keyframes, axes in frames and centimetres."""
    width, height, left, bottom, top, right = 800, 320, 60, 40, 30, 20
    canvas = np.full((height, width, 3), 255, np.uint8)
    frames = max((len(v) for v in errors.values()), default=1)
    peak = max((float(v.max()) * 100 for v in errors.values() if len(v)), default=1.0) or 1.0
    scale_x = (width - left - right) / max(frames - 1, 1)
    scale_y = (height - top - bottom) / (peak * 1.1)

    def point(frame: float, cm: float) -> tuple[int, int]:
        return int(left + frame * scale_x), int(height - bottom - cm * scale_y)

    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.rectangle(canvas, point(0, 0), point(frames - 1, peak * 1.1), (0, 0, 0), 1)
    for keyframe in keyframes:
        x = point(keyframe["frame"], 0)[0]
        cv2.line(canvas, (x, top), (x, height - bottom), (160, 160, 160), 1)
        cv2.putText(canvas, keyframe["event"], (x + 2, top + 12), font, 0.4, (90, 90, 90), 1, cv2.LINE_AA)
    for index, (name, values) in enumerate(errors.items()):
        colour = _PLOT_COLOURS[index % len(_PLOT_COLOURS)]
        points = np.array([point(f, v * 100) for f, v in enumerate(values)], np.int32)
        cv2.polylines(canvas, [points], False, colour, 2, cv2.LINE_AA)
        cv2.putText(canvas, name, (left + 8, top + 30 + 16 * index), font, 0.45, colour, 1, cv2.LINE_AA)
    cv2.putText(canvas, "Distance between simulated and video-derived object positions", (left, 20), font,
                0.5, (0, 0, 0), 1, cv2.LINE_AA)  # fmt: skip
    cv2.putText(
        canvas, f"video frame ({fps:g} fps)", (width // 2 - 60, height - 10), font, 0.45, (0, 0, 0), 1
    )
    cv2.putText(canvas, f"{peak:.1f} cm", (4, top + 10), font, 0.4, (0, 0, 0), 1)
    cv2.putText(canvas, "0", (left - 14, height - bottom), font, 0.4, (0, 0, 0), 1)
    cv2.imwrite(str(path), canvas)


def per_frame_errors(geometry, record) -> dict[str, np.ndarray]:
    """Object name -> per video frame distance (m) between simulated and video-derived positions."""
    return {
        o.name: np.linalg.norm(
            record.positions[o.name][: record.frames] - o.motion.positions[: record.frames], axis=1
        )
        for o in geometry.objects
    }


def render_comparison(
    out_dir: Path | str, middle: TileRenderer | None = None, progress: Progress | None = None
) -> dict[str, str]:
    """Renders the comparison of a finished run into ``OUT_DIR/compare`` and records it in report.json.

    Args:
        out_dir: The run's output folder.
        middle: Renders the middle tile (a Blender render of the reconstruction) per frame;
            None renders the reconstruction with MuJoCo instead.
        progress: Per-frame progress; carries cancellation.

    Returns:
        The new artifacts (relative paths).
    """
    progress = progress or Progress()
    report = read_report(out_dir)
    camera = camera_from_report(report)
    video = open_video(video_source(report))
    fps, frames = report["video"]["fps"], report["video"]["frames"]
    geometry, scene, record = simulate_report(report)
    model = scene.model
    renderer = _renderer(model, camera.width, camera.height)
    reconstruction = _reconstruction_qpos(model, scene.name_map, geometry, record) if middle is None else None
    checks = _checks_line(report.get("verification"))
    title = "Blender (reconstruction)" if middle else "reconstruction (MuJoCo render)"
    output = OutputFolder(out_dir)
    try:
        folder = output.staging / COMPARE_NAME
        folder.mkdir()
        size = (camera.width // 2 * 3, camera.height // 2 + 26)
        keyed = {k["frame"]: k for k in geometry.keyframes}
        sheet_rows = []
        with VideoWriter(folder / "comparison.mp4", fps, size) as writer:
            for frame, real in enumerate(video.iter_frames()):
                if frame >= frames or (record.diverged_frame is not None and frame >= record.diverged_frame):
                    break
                progress.step(f"rendering the comparison, frame {frame}", frame / frames)
                view = None if geometry.camera_frames is None else geometry.camera_frames[frame]
                simulated = _render(renderer, model, record.qpos[frame], view)
                recon = middle(frame) if middle else _render(renderer, model, reconstruction[frame], view)
                composed = _compose([real, recon, simulated], ["real", title, "MuJoCo simulation"], frame,
                                    _events_near(geometry.keyframes, frame), checks)  # fmt: skip
                writer.write(composed)
                if frame in keyed:
                    event = keyed[frame]
                    sheet_rows.append(
                        (f"{event['event']} of {event.get('object', '?')}, frame {frame}", composed)
                    )
        if sheet_rows:
            cv2.imwrite(
                str(folder / "contact_sheet.png"), np.concatenate([row for _, row in sheet_rows], axis=0)
            )
        _error_plot(folder / "errors.png", per_frame_errors(geometry, record), geometry.keyframes, fps)
        artifacts = {
            "comparison_video": f"{COMPARE_NAME}/comparison.mp4",
            "contact_sheet": f"{COMPARE_NAME}/contact_sheet.png",
            "error_plot": f"{COMPARE_NAME}/errors.png",
        }
        report.setdefault("artifacts", {}).update(artifacts)
        pictures = Pictures(sheet_rows, cv2.imread(str(folder / "errors.png")))
        write_summary(
            output.staging, report, pictures, [output.path / MASKS_NAME], artifacts["comparison_video"]
        )
        write_json_atomic(output.staging / REPORT_NAME, report)
        output.commit()
    except BaseException:
        output.discard()
        raise
    finally:
        renderer.close()
    progress.step("comparison written", 1.0)
    return artifacts


def _reconstruction_qpos(model, name_map: dict[str, str], geometry, record) -> np.ndarray:
    """The simulation's states with every object put where the video says it is."""
    import mujoco

    qpos = copy.deepcopy(record.qpos)
    for obj in geometry.objects:
        body = model.body(name_map[obj.name])
        if body.jntnum[0] == 0:
            continue
        address = model.jnt_qposadr[body.jntadr[0]]
        if model.jnt_type[body.jntadr[0]] != mujoco.mjtJoint.mjJNT_FREE:
            continue
        for frame in range(min(len(qpos), len(obj.motion.positions))):
            qpos[frame, address : address + 3] = obj.motion.positions[frame]
            quaternion = Rotation.from_matrix(obj.motion.rotation(frame)).as_quat()
            qpos[frame, address + 3 : address + 7] = quaternion[[3, 0, 1, 2]]
    return qpos
