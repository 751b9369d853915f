"""The one report watcher: what the panels know of the scene's run, read from report.json when it changes.

Panels call :func:`verification_summary` and :func:`report_changed` on every
redraw. Both go through :func:`watched_report`, which reads a folder's
report.json again only when its modification time changed (one ``stat`` per
call otherwise) and keeps the core's plain status
(:func:`~..real2gym_addon.verify.summary.summarise_verification`) beside it.
Jobs that write report.json show the new content themselves and mark it shown
(``bridge.review.note_report_written``), so the Keyframes panel offers no
reload for a file it already shows.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.report import REPORT_NAME, Report, read_report
from ..real2gym_addon.verify.summary import Summary, summarise_verification


@dataclasses.dataclass(frozen=True)
class WatchedReport:
    """A report.json as last read.

    Attributes:
        stamp: Its modification time in nanoseconds, as a string (``fixes.report_stamp``'s form).
        report: Its content; None when it is not readable (the panel shows nothing of it).
        summary: Its verification as the panel shows it; None when it has no report.
    """

    stamp: str
    report: Report | None
    summary: Summary | None


_watched: dict[str, WatchedReport] = {}


def watched_report(folder: str | Path) -> WatchedReport | None:
    """The report.json of an output folder, read again only when it changed; None when there is none."""
    path = Path(bpy.path.abspath(str(folder))).resolve() / REPORT_NAME
    try:
        stamp = str(os.stat(path).st_mtime_ns)
    except OSError:
        return None
    known = _watched.get(str(path))
    if known is not None and known.stamp == stamp:
        return known
    try:
        report = read_report(path.parent)
    except Real2GymError:
        report = None
    known = WatchedReport(stamp, report, None if report is None else summarise_verification(report.to_json()))
    _watched[str(path)] = known
    return known


def verification_summary(scene: bpy.types.Scene) -> Summary | None:
    """The verification of the scene's run for the panel; None without an output folder or a readable report."""
    folder = scene.real2gym.out_dir
    watched = watched_report(folder) if folder else None
    return None if watched is None else watched.summary


def report_changed(scene: bpy.types.Scene) -> bool:
    """True when the reviewed report.json was written since the Keyframes panel showed it (the command line,
    another Blender)."""
    state = scene.real2gym.fixes
    if not state.report_dir:
        return False
    watched = watched_report(state.report_dir)
    return watched is None or watched.stamp != state.report_stamp
