"""A variant beside its demo: its verified scene replayed, and a picture of both from the video camera.

:func:`replay_run` simulates a run's or a variant's verified scene again from the
``mjcf/scene.xml`` its verification wrote, so the masses, frictions, distractors and
look are exactly those that were verified (the Blender side keys this simulation).
:func:`compare_variant` renders the demo's and a variant's first and last simulated
frames from the video camera into ``OUT/variants/<id>/compare.png``: the demo on top,
the variant below, with what the variant changed written over it. A MuJoCo render
shows what a policy's camera sees, colours, table texture and light included, which
the Blender reconstruction does not carry.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np

from ..errors import Real2GymError
from ..geometry.report_io import geometry_from_report
from ..progress import Progress
from ..report import REPORT_NAME, read_report
from ..verify.run import Verification
from .batch import VARIANTS_NAME

COMPARE_IMAGE = "compare.png"
TILE_WIDTH = 480
"""Pixels across one tile of compare.png (the video frame, scaled)."""


def variant_folder(out_dir: Path | str, variant_id: str) -> Path:
    """``OUT/variants/<id>``, checked to hold a verified variant.

    Raises:
        Real2GymError: No such variant, or it was dropped (only verified ones are written).
    """
    folder = Path(out_dir) / VARIANTS_NAME / variant_id
    if not (folder / REPORT_NAME).is_file():
        raise Real2GymError(
            f"variant '{variant_id}' of {out_dir} has no folder ({folder}): it was dropped or never made; "
            "pick a verified one, or vary the run again"
        )
    return folder


def replay_run(folder: Path | str) -> Verification:
    """Simulates the verified scene of a run or a variant again, from the MJCF its verification wrote.

    Safe in a worker thread (nothing is written).

    Args:
        folder: A run's output folder or a variant's folder (``OUT/variants/<id>``).

    Returns:
        A verification with the report's verdict, the compiled model (``scene.model``,
        ``scene.name_map``; no ``spec``), a fresh simulation record and the report's geometry.

    Raises:
        Real2GymError: No report, not verified since its last fix, or its MJCF cannot be loaded.
    """
    import mujoco

    from ..mjcf.export import SceneModel
    from ..verify.simulate import simulate

    folder = Path(folder)
    report = read_report(folder)
    verification = report.verification
    if verification is None or not verification.mjcf or verification.stale:
        raise Real2GymError(f"{folder} is not verified since its last change: verify it first")
    path = folder / verification.mjcf
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except (ValueError, OSError) as e:
        raise Real2GymError(f"cannot load the verified scene {path}: {str(e).splitlines()[0]}") from e
    geometry = geometry_from_report(report)
    name_map = dict(verification.name_map or {})
    frames = len(geometry.objects[0].motion.positions) if geometry.objects else 0
    record = simulate(model, name_map, geometry.gripper, float(report.video.fps), frames)
    scene = SceneModel(None, model, name_map, {})
    return Verification(bool(verification.passed), verification.checks, record, scene,
                        path, {"simulate": record.wall_s}, geometry)  # fmt: skip


def changes_text(params: dict | None) -> str:
    """What a variant's parameters change, in one line of ASCII (``block +1.2, -0.4 cm -19 deg x1.06; ...``)."""
    if not params:
        return ""
    parts = []
    for name, change in (params.get("objects") or {}).items():
        moved = [
            f"{change['dx'] * 100:+.1f}, {change['dy'] * 100:+.1f} cm"
            if change["dx"] or change["dy"]
            else "",
            f"{change['dyaw_deg']:+.0f} deg" if change["dyaw_deg"] else "",
            f"x{change['scale']:.2f}" if change["scale"] != 1 else "",
            f"rim x{change['rim_scale']:.2f}" if change["rim_scale"] != 1 else "",
        ]
        if any(moved):
            parts.append(f"{name} {' '.join(m for m in moved if m)}")
    for key, share in (params.get("parts") or {}).items():
        if share:
            parts.append(f"{key} start {share * 100:+.0f}% of its range")
    if params.get("table_dz"):
        parts.append(f"table {params['table_dz'] * 100:+.1f} cm")
    for key, label in (("friction_scale", "friction"), ("mass_scale", "mass")):
        if params.get(key, 1.0) != 1.0:
            parts.append(f"{label} x{params[key]:.2f}")
    if params.get("distractors"):
        parts.append(f"{len(params['distractors'])} distractor(s)")
    if params.get("kind") == "appearance":
        parts.insert(0, "look only")
    return "; ".join(parts) or "as the demo"


def _first_and_last(verification: Verification, width: int, height: int) -> list[tuple[int, np.ndarray]]:
    """The first and last simulated frames from the video camera, ``(frame, HxWx3 BGR)``."""
    from ..render import offscreen_renderer, render_state

    record, geometry = verification.record, verification.geometry
    last = (record.frames if record.diverged_frame is None else record.diverged_frame) - 1
    model = verification.scene.model
    renderer = offscreen_renderer(model, width, height)
    try:
        images = []
        for frame in (0, max(last, 0)):
            view = None if geometry.camera_frames is None else geometry.camera_frames[frame]
            images.append((frame, render_state(renderer, model, record.qpos[frame], view)))
        return images
    finally:
        renderer.close()


def _tile(image: np.ndarray, lines: list[str]) -> np.ndarray:
    import cv2

    from ..render import label

    scale = TILE_WIDTH / image.shape[1]
    tile = cv2.resize(image, (TILE_WIDTH, int(round(image.shape[0] * scale))), interpolation=cv2.INTER_AREA)
    for row, line in enumerate(lines):
        label(tile, line, row)
    return tile


def compare_variant(out_dir: Path | str, variant_id: str, progress: Progress | None = None) -> Path:
    """Writes ``OUT/variants/<id>/compare.png``: the demo (top) and the variant (bottom), first and last frames.

    Both are simulated again from their verified MJCF (:func:`replay_run`) and rendered by
    MuJoCo from their video camera (a variant's moves with its table height).

    Args:
        out_dir: The varied run's output folder.
        variant_id: The variant (``v0003``).
        progress: Carries cancellation.

    Returns:
        The written image.

    Raises:
        Real2GymError: No such verified variant, the demo or the variant cannot be replayed,
            or MuJoCo cannot render here.
        Cancelled: ``progress`` was cancelled; nothing was written.
    """
    import cv2

    progress = progress or Progress()
    folder = variant_folder(out_dir, variant_id)
    report = read_report(folder)
    width, height = int(report.camera.width), int(report.camera.height)
    rows = []
    for step, (name, where) in enumerate((("demo", Path(out_dir)), (variant_id, folder))):
        progress.step(f"simulating and rendering the {'demo' if step == 0 else 'variant'}", 0.1 + 0.45 * step)
        verification = replay_run(where)
        verdict = "verified" if verification.passed else "not verified"
        tiles = [
            _tile(image, [f"{name}, frame {frame} ({'start' if i == 0 else 'end'})", verdict])
            for i, (frame, image) in enumerate(_first_and_last(verification, width, height))
        ]
        rows.append(np.concatenate(tiles, axis=1))
    picture = np.concatenate(rows, axis=0)
    text = f"{variant_id}: {changes_text((report.variant or {}).get('params'))}"
    lines = textwrap.wrap(text, picture.shape[1] // 9) or [""]
    band = np.zeros((8 + 18 * len(lines), picture.shape[1], 3), np.uint8)
    for row, line in enumerate(lines):
        cv2.putText(band, line, (6, 18 + 18 * row), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1,
                    cv2.LINE_AA)  # fmt: skip
    picture = np.concatenate([band, picture], axis=0)
    progress.step("writing compare.png", 0.95)
    path = folder / COMPARE_IMAGE
    staged = folder / f".{COMPARE_IMAGE}.tmp.png"
    if not cv2.imwrite(str(staged), picture):
        raise Real2GymError(f"cannot write {path}")
    os.replace(staged, path)
    return path
