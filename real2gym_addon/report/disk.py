"""The one reader and the one writer of report.json (and of an environment's demo_report.json).

:func:`read_report` reads a report through the JSON door (``json_files``: size and depth
limits), brings it up to the current version and checks it (:func:`~.check.check_report`),
and returns the typed :class:`~.model.Report`. :func:`write_report` writes one atomically
(a temporary file renamed into place), with finite numbers only. Every command that reads
or writes a report goes through these two.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import OutputError
from ..files import write_text_atomic
from ..json_files import read_json_file
from .check import check_report, first_non_finite
from .model import Report

REPORT_NAME = "report.json"
"""A run's report in its output folder."""


def read_report(out_dir: Path | str, name: str = REPORT_NAME) -> Report:
    """Reads ``OUT_DIR/report.json``, brings it up to the current version and checks it.

    Args:
        out_dir: The folder holding it (a run's output folder, a variant's, an environment's).
        name: The file's name in ``out_dir`` (an environment's ``demo_report.json``).

    Returns:
        The report.

    Raises:
        OutputError: It is missing, not valid JSON, of a version this real2gym does not
            read, or fails the checks (named by field).
    """
    path = Path(out_dir) / name
    if not path.is_file():
        if name == REPORT_NAME:
            raise OutputError(f"no report.json in {out_dir}: run 'real2gym run DEMO --out {out_dir}' first")
        raise OutputError(f"{path} is missing")
    try:
        data = read_json_file(path, OutputError)
    except FileNotFoundError as e:
        raise OutputError(f"{path} cannot be read ({e.strerror})") from e
    return Report.from_json(check_report(data, out_dir))


def write_report(folder: Path | str, report: Report, name: str = REPORT_NAME) -> Path:
    """Writes ``report`` into ``folder`` atomically (indented JSON, through a temporary file).

    Args:
        folder: An existing folder (a command's staging folder, a variant's).
        report: The report.
        name: The file's name (``demo_report.json`` for an environment).

    Returns:
        The path written.

    Raises:
        OutputError: The report holds NaN or an infinite number (named by its JSON path);
            nothing is written then.
    """
    if not isinstance(report, Report):
        raise TypeError(f"write_report takes a Report, not {type(report).__name__}")
    data = report.to_json()
    try:
        text = json.dumps(data, indent=1, allow_nan=False)
    except ValueError:
        bad = first_non_finite(data, "") or "?"
        raise OutputError(
            f"{name}: '{bad}' is NaN or infinite; a report holds finite numbers only (nothing was written)"
        ) from None
    path = Path(folder) / name
    write_text_atomic(path, text + "\n")
    return path
