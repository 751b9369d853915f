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

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from .demo import camera_from_report
from .files import OutputFolder
from .progress import Progress
from .render import (
    Pictures,
    checks_line,
    compose,
    error_plot,
    events_near,
    offscreen_renderer,
    per_frame_errors,
    reconstruction_qpos,
    render_state,
)
from .report import Report, read_report, video_source, write_report
from .reverify import simulate_report
from .targets import MASKS_NAME
from .video import open_video
from .video_out import VideoWriter

COMPARE_NAME = "compare"
TileRenderer = Callable[[int], np.ndarray]
"""Returns the middle tile for a video frame: ``HxWx3`` uint8 BGR at the video's size."""


PageWriter = Callable[[Path, Report, Pictures, list[Path], str], object]
"""Writes the run's page again with the comparison's pictures: ``(staging folder, report, pictures,
masks folders, comparison video)`` (``summary.write_summary``)."""


def render_comparison(
    out_dir: Path | str,
    middle: TileRenderer | None = None,
    progress: Progress | None = None,
    page: PageWriter | None = None,
) -> dict[str, str]:
    """Renders the comparison of a finished run into ``OUT_DIR/compare`` and records it in report.json.

    Args:
        out_dir: The run's output folder.
        middle: Renders the middle tile (a Blender render of the reconstruction) per frame;
            None renders the reconstruction with MuJoCo instead.
        progress: Per-frame progress; carries cancellation.
        page: Writes summary.html again with the comparison's pictures, into the same commit
            (the command line and Blender pass ``summary.write_summary``); None leaves the page.

    Returns:
        The new artifacts (relative paths).
    """
    progress = progress or Progress()
    report = read_report(out_dir)
    camera = camera_from_report(report)
    video = open_video(video_source(report))
    fps, frames = report.video.fps, report.video.frames
    geometry, scene, record = simulate_report(report)
    model = scene.model
    renderer = offscreen_renderer(model, camera.width, camera.height)
    reconstruction = reconstruction_qpos(model, scene.name_map, geometry, record) if middle is None else None
    checks = checks_line(report.verification)
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
                simulated = render_state(renderer, model, record.qpos[frame], view)
                recon = (
                    middle(frame) if middle else render_state(renderer, model, reconstruction[frame], view)
                )
                composed = compose([real, recon, simulated], ["real", title, "MuJoCo simulation"], frame,
                                    events_near(geometry.keyframes, frame), checks)  # fmt: skip
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
        error_plot(folder / "errors.png", per_frame_errors(geometry, record), geometry.keyframes, fps)
        artifacts = {
            "comparison_video": f"{COMPARE_NAME}/comparison.mp4",
            "contact_sheet": f"{COMPARE_NAME}/contact_sheet.png",
            "error_plot": f"{COMPARE_NAME}/errors.png",
        }
        report.add_artifacts(artifacts)
        if page is not None:
            pictures = Pictures(sheet_rows, cv2.imread(str(folder / "errors.png")))
            page(output.staging, report, pictures, [output.path / MASKS_NAME], artifacts["comparison_video"])
        write_report(output.staging, report)
        output.commit()
    except BaseException:
        output.discard()
        raise
    finally:
        renderer.close()
    progress.step("comparison written", 1.0)
    return artifacts
