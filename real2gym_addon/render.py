"""Pictures of a run: MuJoCo renders from the video camera, labelled tiles, composed rows, plots.

The one place that draws: ``summary`` (summary.html), ``compare`` (the side-by-side video)
and ``variants`` (a variant's render and its comparison with the demo) all use these and
nothing of each other. Images are ``HxWx3`` uint8 BGR (OpenCV's order).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from pathlib import Path

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from .errors import Real2GymError
from .mjcf.export import mujoco_camera_quat
from .report import VerificationSection


def offscreen_renderer(model, width: int, height: int):
    os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    try:
        return mujoco.Renderer(model, height, width)
    except Exception as e:  # no OpenGL: EGL/OSMesa missing
        raise Real2GymError(
            f"MuJoCo cannot render here ({e}); install EGL (Debian: libegl1 libgl1-mesa-dri) or set MUJOCO_GL"
        ) from e


def render_state(
    renderer, model, qpos: np.ndarray, world_from_camera: np.ndarray | None = None
) -> np.ndarray:
    """Renders a state from the video camera; ``world_from_camera`` moves it there first (a camera that moves)."""
    import mujoco

    if world_from_camera is not None:
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "video")
        model.cam_pos[index] = world_from_camera[:3, 3]
        model.cam_quat[index] = mujoco_camera_quat(world_from_camera)
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    renderer.update_scene(data, camera="video")
    return cv2.cvtColor(renderer.render(), cv2.COLOR_RGB2BGR)


def label(image: np.ndarray, text: str, row: int = 0, colour=(255, 255, 255)) -> None:
    y = 18 + 18 * row
    cv2.putText(image, text, (6, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(image, text, (6, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)


def events_near(keyframes: list[dict], frame: int, window: int = 3) -> str:
    return ", ".join(f"{k['event']} {k['object']}" for k in keyframes if abs(k["frame"] - frame) <= window)


def checks_line(verification: VerificationSection | None) -> tuple[str, tuple[int, int, int]]:
    """The verdict's line over a tile, and its colour (BGR)."""
    if verification is None:
        return "not verified", (200, 200, 200)
    failed = [k for k, v in verification.checks.items() if not v["passed"]]
    if not failed:
        return "verified: all checks passed", (120, 230, 120)
    return "FAILED: " + ", ".join(failed), (90, 90, 255)


def compose(tiles: list[np.ndarray], titles: list[str], frame: int, events: str, checks) -> np.ndarray:
    scaled = []
    for tile, title in zip(tiles, titles, strict=True):
        small = cv2.resize(tile, (tile.shape[1] // 2, tile.shape[0] // 2), interpolation=cv2.INTER_AREA)
        label(small, title)
        label(small, f"frame {frame}", 1)
        if events:
            label(small, events, 2, (80, 220, 255))
        scaled.append(small)
    row = np.concatenate(scaled, axis=1)
    band = np.zeros((26, row.shape[1], 3), np.uint8)
    cv2.putText(band, checks[0], (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5, checks[1], 1, cv2.LINE_AA)
    return np.concatenate([row, band], axis=0)


def error_plot(path: Path, errors: dict[str, np.ndarray], keyframes: list[dict], fps: float) -> None:
    """Draws the error-over-time plot into ``path`` (PNG): a line per object (cm against video frames), the
    keyframes as dotted verticals, ticks on both axes.

    Drawn with OpenCV, the same in Blender's Python and in the command line's: importing a plotting
    library cost the command line from 0.6 s to 2.7 s (its font cache on a new machine) of every run.
    """
    width, height, left, bottom, top, right = 800, 320, 56, 44, 30, 16
    canvas = np.full((height, width, 3), 255, np.uint8)
    frames = max((len(v) for v in errors.values()), default=1)
    peak = max((float(np.nanmax(v)) * 100 for v in errors.values() if len(v)), default=0.0)
    step_cm = _tick_step(peak if peak > 0 else 1.0)
    ceiling = step_cm * max(1, math.ceil(peak / step_cm - 1e-9))
    scale_x = (width - left - right) / max(frames - 1, 1)
    scale_y = (height - top - bottom) / ceiling

    def point(frame: float, cm: float) -> tuple[int, int]:
        return int(round(left + frame * scale_x)), int(round(height - bottom - min(cm, ceiling) * scale_y))

    font, ink, grid = cv2.FONT_HERSHEY_SIMPLEX, (0, 0, 0), (225, 225, 225)
    for tick in np.arange(0, ceiling + step_cm / 2, step_cm):
        y = point(0, tick)[1]
        cv2.line(canvas, (left, y), (width - right, y), grid, 1)
        cv2.putText(
            canvas, f"{tick:g}", (left - 8 - 8 * len(f"{tick:g}"), y + 4), font, 0.4, ink, 1, cv2.LINE_AA
        )
    frame_step = _tick_step(max(frames - 1, 1), 10)
    for tick in np.arange(0, frames, frame_step):
        x = point(tick, 0)[0]
        cv2.line(canvas, (x, height - bottom), (x, height - bottom + 4), ink, 1)
        cv2.putText(canvas, f"{tick:g}", (x - 4 * len(f"{tick:g}"), height - bottom + 16), font, 0.4, ink, 1,
                    cv2.LINE_AA)  # fmt: skip
    row_ends: list[int] = []  # where each row of keyframe names ends, so that near names do not overlap
    for keyframe in sorted(keyframes, key=lambda k: k["frame"]):
        x = point(keyframe["frame"], 0)[0]
        for y in range(top, height - bottom, 6):
            cv2.line(canvas, (x, y), (x, min(y + 2, height - bottom)), (150, 150, 150), 1)
        row = next((i for i, end in enumerate(row_ends) if end < x), len(row_ends))
        (text_width, _), _ = cv2.getTextSize(keyframe["event"], font, 0.38, 1)
        row_ends[row : row + 1] = [x + 3 + text_width + 4]
        cv2.putText(canvas, keyframe["event"], (x + 3, top + 12 + 12 * row), font, 0.38, (90, 90, 90), 1,
                    cv2.LINE_AA)  # fmt: skip
    cv2.rectangle(canvas, point(0, ceiling), point(frames - 1, 0), ink, 1)
    for index, (name, values) in enumerate(errors.items()):
        colour = _PLOT_COLOURS[index % len(_PLOT_COLOURS)]
        finite = np.nan_to_num(np.asarray(values, float) * 100, nan=0.0)
        points = np.array([point(f, v) for f, v in enumerate(finite)], np.int32)
        cv2.polylines(canvas, [points], False, colour, 2, cv2.LINE_AA)
        cv2.putText(canvas, name, (left + 8, top + 30 + 16 * index), font, 0.45, colour, 1, cv2.LINE_AA)
    cv2.putText(canvas, "Distance between simulated and video-derived object positions (cm)", (left, 20),
                font, 0.5, ink, 1, cv2.LINE_AA)  # fmt: skip
    cv2.putText(canvas, f"video frame ({fps:g} fps)", (width // 2 - 60, height - 8), font, 0.45, ink, 1,
                cv2.LINE_AA)  # fmt: skip
    cv2.imwrite(str(path), canvas)


_PLOT_COLOURS = [(180, 119, 31), (14, 127, 255), (44, 160, 44), (40, 39, 214)]


def _tick_step(span: float, ticks: int = 5) -> float:
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks over ``span``."""
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def per_frame_errors(geometry, record) -> dict[str, np.ndarray]:
    """Object name -> per video frame distance (m) between simulated and video-derived positions."""
    return {
        o.name: np.linalg.norm(
            record.positions[o.name][: record.frames] - o.motion.positions[: record.frames], axis=1
        )
        for o in geometry.objects
    }


def reconstruction_qpos(model, name_map: dict[str, str], geometry, record) -> np.ndarray:
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


@dataclasses.dataclass
class Pictures:
    """The summary's rendered pictures, made where MuJoCo may render (a worker thread in Blender).

    Attributes:
        sheet: ``(caption, image)`` per keyframe (:func:`keyframe_sheet`).
        plot: The error-over-time plot, or None.
        missing: Why pictures are missing (no OpenGL here ...), or "".
    """

    sheet: list[tuple[str, np.ndarray]] = dataclasses.field(default_factory=list)
    plot: np.ndarray | None = None
    missing: str = ""
