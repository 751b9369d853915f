"""``summary.html``: one self-contained page that says what a run found, for people.

Every ``run``, ``verify`` and ``fix`` writes it beside report.json (``compare``
adds the comparison video). It opens offline in any browser: its images are
inlined, its only outside reference is ``compare/comparison.mp4`` when that
exists. In order:

- the verdict, the task and the objects (shape, size, mass source, friction);
- each check: passed or not, its figures, and what it needs (its ``needs`` in
  ``verify/registry.py``, with the limits of ``verify/checks.py``);
- the keyframe contact sheet: real frame | reconstruction | simulation at each
  interaction keyframe, from the video camera;
- the error over time: simulated vs video-derived position of every object;
- the frames the segmentation flags for review, with the mask drawn on them;
- the warnings and the edit log.

Nothing here reads Blender; the pictures come from MuJoCo's renderer (the
same ones the comparison video uses).
"""

from __future__ import annotations

import base64
import datetime
import html
from pathlib import Path

import cv2
import numpy as np

from .demo import camera_from_report
from .errors import Real2GymError
from .render import Pictures
from .report import Report, video_source
from .verify.registry import CHECKS

SUMMARY_NAME = "summary.html"
MAX_REVIEW_THUMBNAILS = 12
"""At most this many flagged frames are shown with their mask (the rest are listed)."""
THUMBNAIL_WIDTH = 320


def _needs(check_name: str) -> str:
    """What a check needs to pass, in a line (its entry in :data:`~.verify.registry.CHECKS`)."""
    check = CHECKS.get(check_name)
    return check.needs if check is not None else "see docs/checks.md"


def _png(image: np.ndarray, width: int | None = None) -> str:
    if width is not None and image.shape[1] > width:
        image = cv2.resize(
            image, (width, round(image.shape[0] * width / image.shape[1])), interpolation=cv2.INTER_AREA
        )
    ok, data = cv2.imencode(".png", image)
    return "data:image/png;base64," + base64.b64encode(data.tobytes()).decode() if ok else ""


def _esc(value) -> str:
    return html.escape(str(value))


def keyframe_sheet(report: Report, geometry, model, record) -> list[tuple[str, np.ndarray]]:
    """``(caption, image)`` per interaction keyframe: real | reconstruction | simulation, from the video camera.

    Args:
        report: The run's report (video, camera, verification).
        geometry: The run's geometry.
        model: The compiled MuJoCo model the record comes from.
        record: The simulation's record.
    """
    from .render import checks_line, compose, offscreen_renderer, reconstruction_qpos, render_state
    from .video import open_video

    keyframes = [k for k in report.keyframes if k["frame"] < record.frames]
    if not keyframes or record.diverged_frame is not None and record.diverged_frame <= keyframes[0]["frame"]:
        return []
    camera = camera_from_report(report)
    video = open_video(video_source(report))
    verification = report.verification
    name_map = (verification.name_map if verification is not None else None) or {
        o.name: o.name for o in geometry.objects
    }
    reconstruction = reconstruction_qpos(model, name_map, geometry, record)
    checks = checks_line(verification)
    renderer = offscreen_renderer(model, camera.width, camera.height)
    rows = []
    try:
        for keyframe in keyframes:
            frame = keyframe["frame"]
            if record.diverged_frame is not None and frame >= record.diverged_frame:
                break
            view = None if geometry.camera_frames is None else geometry.camera_frames[frame]
            panels = [video.read_frame(frame), render_state(renderer, model, reconstruction[frame], view),
                      render_state(renderer, model, record.qpos[frame], view)]  # fmt: skip
            image = compose(panels, ["real", "reconstruction (MuJoCo render)", "MuJoCo simulation"], frame,
                             keyframe["event"], checks)  # fmt: skip
            rows.append((f"{keyframe['event']} of {keyframe.get('object', '?')}, frame {frame}", image))
    finally:
        renderer.close()
    return rows


def error_plot(report: Report, geometry, record, folder: Path) -> Path | None:
    """Writes the error-over-time plot into ``folder`` (as compare's ``errors.png``) and returns its path."""
    from .render import error_plot as draw_error_plot
    from .render import per_frame_errors

    errors = per_frame_errors(geometry, record)
    if not errors:
        return None
    path = folder / "errors.png"
    draw_error_plot(path, errors, report.keyframes, report.video.fps)
    return path


def _review_thumbnails(report: Report, masks_roots: list[Path]) -> list[tuple[str, np.ndarray | None]]:
    """The flagged frames: ``(caption, frame with the mask drawn, or None)``, the first few with pictures."""
    from .segmentation.quality import flagged_ranges
    from .video import open_video

    shown = []
    video = None
    for entry in (report.segmentation or {}).get("objects", []):
        for first, last, why in flagged_ranges(entry["frames"]):
            span = f"frames {first}-{last}" if last > first else f"frame {first}"
            caption = f"{entry['name']}: {span} ({why})"
            image = None
            if len(shown) < MAX_REVIEW_THUMBNAILS:
                mask_file = next(
                    (p for root in masks_roots if (p := root / entry["name"] / f"{first:06d}.png").is_file()),
                    None,
                )
                try:
                    video = video or open_video(video_source(report))
                    image = video.read_frame(first).copy()
                except (Real2GymError, OSError, cv2.error):  # a moved video: the caption still says where
                    image = None
                if image is not None and mask_file is not None:
                    mask = cv2.imread(str(mask_file), cv2.IMREAD_GRAYSCALE) > 0
                    tint = image.copy()
                    tint[mask] = (0.5 * tint[mask] + np.array([0, 0, 127])).astype(np.uint8)
                    contours, _ = cv2.findContours(
                        mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
                    )
                    cv2.drawContours(tint, contours, -1, (0, 0, 255), 2)
                    image = tint
            shown.append((caption, image))
    return shown


def check_figures(check: dict) -> str:
    """A check's figures in one line: every number, flag and name it reports, nested ones as
    ``outer.inner``, lists in brackets (``problems=[]`` says that none were found)."""

    def shown(value) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(shown(v) for v in value[:6]) + (", ..." if len(value) > 6 else "") + "]"
        return str(value)

    parts = []
    for key, value in check.items():
        if key == "passed":
            continue
        if isinstance(value, dict):
            parts += [f"{key}.{k}={shown(v)}" for k, v in value.items() if not isinstance(v, dict)]
        else:
            parts.append(f"{key}={shown(value)}")
    return ", ".join(parts) or "-"


_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.verdict{display:inline-block;padding:4px 12px;border-radius:6px;font-weight:700;color:#fff}
.ok{background:#1f8a4c}.fail{background:#c0392b}.none{background:#6b7280}
.meta{color:#566074;font-size:13px}
table{border-collapse:collapse;width:100%;background:#fff;border-radius:6px;overflow:hidden}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#eef0f4;font-weight:600} td.fig{font-family:ui-monospace,Menlo,monospace;font-size:12.5px}
.pass{color:#1f8a4c;font-weight:700}.failed{color:#c0392b;font-weight:700}
figure{margin:0 0 14px;background:#fff;padding:8px;border-radius:6px}
figure img,video{max-width:100%;display:block} figcaption{font-size:13px;color:#566074;margin-top:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:10px}
ul{margin:0;padding-left:20px} li{margin:2px 0}
"""


def render_summary(
    report: Report,
    pictures: Pictures,
    masks_roots: list[Path] | None = None,
    video: str | None = None,
) -> str:
    """The page's HTML.

    Args:
        report: The run's report.
        pictures: The keyframe sheet and error plot (:func:`make_pictures`).
        masks_roots: Folders holding ``<object>/<frame>.png`` masks for the review thumbnails.
        video: The comparison video's path relative to the page, when there is one.
    """
    from .about import version_text

    verification = report.verification
    if verification is None:
        verdict, css = "NOT SIMULATED", "none"
    elif verification.passed:
        verdict, css = "VERIFIED", "ok"
    else:
        verdict, css = "NOT VERIFIED", "fail"
    task = report.task
    name = Path(str(report.demo or report.video.source or "demo")).name
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    parts = [
        f"<!doctype html><html lang=en><meta charset=utf-8><title>Real2Gym: {_esc(name)} ({verdict.lower()})</title>"
        f"<style>{_STYLE}</style><main>",
        f"<h1>Real2Gym run: {_esc(name)} <span class='verdict {css}'>{verdict}</span></h1>",
        f"<div class=meta>task {_esc(task.get('type', '?'))}: {_esc(task.get('object', '?'))}"
        + (f" into {_esc(task['target'])}" if task.get("target") else "")
        + f" &middot; {report.video.frames} frames at {report.video.fps} fps"
        f" &middot; written {now} by {_esc(version_text())}</div>",
    ]
    if verification is not None and verification.stale:
        parts.append(
            "<p class=failed>A fix was written without verifying: this verdict is of the scene before it.</p>"
        )
    failed = [
        n for n, c in (verification.checks if verification is not None else {}).items() if not c.get("passed")
    ]
    if failed:
        parts.append(
            f"<p>Failed: <b>{_esc(', '.join(failed))}</b>. Suggested fixes are listed below the checks.</p>"
        )

    parts.append("<h2>Objects</h2><table><tr><th>object</th><th>role</th><th>shape</th><th>size (cm)</th>"
                 "<th>friction</th><th>edits</th></tr>")  # fmt: skip
    for entry in report.objects:
        size = " x ".join(f"{100 * s:.1f}" for s in entry.get("size", []))
        parts.append(
            f"<tr><td>{_esc(entry.get('name'))}</td><td>{_esc(entry.get('role', ''))}</td>"
            f"<td>{_esc(entry.get('shape'))} ({_esc(entry.get('collision_mode', 'primitives'))})</td><td>{size}</td>"
            f"<td>{_esc(entry.get('friction', 1.0))}</td><td>{len(entry.get('edits') or [])}</td></tr>"
        )
    parts.append("</table>")

    if verification is not None:
        margin = verification.margin
        parts += margin_section(margin)
        shares = (margin or {}).get("checks", {})
        parts.append(
            "<h2>Checks</h2><table><tr><th>check</th><th>result</th>"
            + ("<th>perturbed runs</th>" if margin else "")
            + "<th>figures</th><th>needs</th></tr>"
        )
        for check_name, check in verification.checks.items():
            result = (
                "<span class=pass>passed</span>"
                if check.get("passed")
                else "<span class=failed>FAILED</span>"
            )
            share = shares.get(check_name)
            runs = (
                f"<td>{share['passed']} of {margin['runs']}</td>"
                if share
                else ("<td></td>" if margin else "")
            )
            parts.append(
                f"<tr><td>{_esc(check_name)}</td><td>{result}</td>{runs}"
                f"<td class=fig>{_esc(check_figures(check))}</td><td>{_esc(_needs(check_name))}</td></tr>"
            )
        parts.append("</table>")
        suggestions = verification.suggestions or []
        if suggestions:
            parts.append("<h2>Suggested fixes</h2><ul>")
            parts += [
                f"<li>[{_esc(s.get('check'))}, frame {_esc(s.get('frame'))}] {_esc(s.get('text'))}</li>"
                for s in suggestions
            ]
            parts.append("</ul>")

    if video:
        parts.append(f"<h2>Comparison video</h2><video controls preload=metadata src='{_esc(video)}'></video>"
                     f"<div class=meta>{_esc(video)}: real | reconstruction | simulation</div>")  # fmt: skip
    if pictures.sheet:
        parts.append("<h2>Keyframes: real | reconstruction | simulation</h2>")
        parts += [f"<figure><img alt='{_esc(c)}' src='{_png(i)}'><figcaption>{_esc(c)}</figcaption></figure>"
                  for c, i in pictures.sheet]  # fmt: skip
    if pictures.missing:
        parts.append(
            f"<p class=meta>{_esc(pictures.missing)}; <code>real2gym compare</code> renders them.</p>"
        )
    if pictures.plot is not None:
        parts.append("<h2>Error over time</h2><figure><img alt='error over time' "
                     f"src='{_png(pictures.plot)}'><figcaption>distance between the simulated and the video-derived "
                     "position of each object; keyframes marked</figcaption></figure>")  # fmt: skip

    review = _review_thumbnails(report, masks_roots or [])
    parts.append(f"<h2>Segmentation: frames to review ({len(review)})</h2>")
    if not review:
        parts.append("<p>No frame is flagged: every mask's confidence stayed high.</p>")
    else:
        pictured = [(c, i) for c, i in review if i is not None]
        if pictured:
            parts.append("<div class=grid>")
            parts += [f"<figure><img alt='{_esc(c)}' src='{_png(i, THUMBNAIL_WIDTH)}'><figcaption>{_esc(c)}"
                      "</figcaption></figure>" for c, i in pictured]  # fmt: skip
            parts.append("</div>")
        rest = [c for c, i in review if i is None]
        if rest:
            parts.append("<ul>" + "".join(f"<li>{_esc(c)}</li>" for c in rest) + "</ul>")

    warnings = report.warnings
    parts.append(f"<h2>Warnings ({len(warnings)})</h2>")
    parts.append(
        "<ul>" + "".join(f"<li><b>{_esc(w.get('stage', ''))}</b>: {_esc(w.get('message', w))}</li>"
                         if isinstance(w, dict) else f"<li>{_esc(w)}</li>" for w in warnings) + "</ul>"
        if warnings else "<p>None.</p>"
    )  # fmt: skip
    log = report.edit_log
    parts.append(f"<h2>Edit log ({len(log)})</h2>")
    if log:
        parts.append("<table><tr><th>#</th><th>fix</th><th>object</th><th>arguments</th><th>when</th></tr>")
        parts += [
            f"<tr><td>{i}</td><td>{_esc(e.get('kind'))}</td><td>{_esc(e.get('object'))}</td>"
            f"<td class=fig>{_esc(e.get('args'))}</td><td>{_esc(e.get('time', ''))}</td></tr>"
            for i, e in enumerate(log, start=1)
        ]
        parts.append("</table>")
    else:
        parts.append("<p>No fixes.</p>")
    parts.append("</main></html>\n")
    return "\n".join(parts)


def margin_section(margin: dict | None) -> list[str]:
    """summary.html's lines on the margin: the verdict with the perturbed runs, and what broke it."""
    if not margin:
        return []
    css = "pass" if margin.get("robust") else "failed"
    lines = [f"<h2>Margin</h2><p class={css}>{_esc(margin.get('verdict'))}</p>"]
    breaking = margin.get("breaking")
    if breaking:
        lines.append(
            f"<p>Smallest perturbation found to break it ({breaking.get('size', 0):.0%} of the ranges): "
            f"{_esc(breaking.get('perturbation'))}; failed: {_esc(', '.join(breaking.get('failed', [])))}.</p>"
        )
    ranges = ", ".join(
        f"{k} &plusmn;{v['limit']:g} {v['unit']}" for k, v in (margin.get("ranges") or {}).items()
    )
    lines.append(f"<div class=meta>{margin['runs']} runs, each drawn within: {ranges} (docs/checks.md)</div>")
    return lines


def make_pictures(report: Report, geometry, model, record) -> Pictures:
    """Renders the keyframe sheet and the error plot; a machine that cannot render gets a note instead.

    Call where MuJoCo may open its own OpenGL context: in Blender, not on the main thread, whose context
    is Blender's (EGL_BAD_ACCESS).
    """
    import tempfile

    pictures = Pictures()
    try:
        pictures.sheet = keyframe_sheet(report, geometry, model, record)
    except Real2GymError as e:
        pictures.missing = f"the keyframe pictures could not be rendered: {str(e).splitlines()[0][:200]}"
    with tempfile.TemporaryDirectory() as scratch:
        path = error_plot(report, geometry, record, Path(scratch))
        pictures.plot = cv2.imread(str(path)) if path is not None else None
    return pictures


def write_summary(
    folder: Path,
    report: Report,
    pictures: Pictures | None = None,
    masks_roots: list[Path] | None = None,
    video: str | None = None,
) -> Path:
    """Writes ``folder/summary.html`` for a report and names it in the report's ``artifacts``.

    Args:
        folder: Where to write (a run's staging folder).
        report: The report the page describes.
        pictures: Its verification's pictures (:func:`make_pictures`); None for a run without one.
        masks_roots: Folders with the masks (see :func:`render_summary`).
        video: The comparison video's path relative to the page.

    Returns:
        The page's path.
    """
    report.add_artifacts({"summary": SUMMARY_NAME})
    page = render_summary(report, pictures or Pictures(), masks_roots, video)
    path = folder / SUMMARY_NAME
    path.write_text(page, encoding="utf-8")
    return path
