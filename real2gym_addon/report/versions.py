"""report.json's versions, and the table that brings an older report up to the current one.

A report carries ``version`` (docs/data-contract.md: fields are added freely, renamed or
dropped only with a version bump). :data:`MIGRATIONS` maps a version to the function that
turns a report of that version into one of the next; :func:`migrate` applies them in a
chain, so that the readers only ever see a report of :data:`~.model.REPORT_VERSION`.

Every report real2gym has written is of version 1 (the field was there from the first
commit), so the table is empty today. A change that bumps the version adds one entry:
``{1: _from_1}``, where ``_from_1`` returns the report with the renamed or moved fields and
``"version": 2``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import OutputError
from .model import REPORT_VERSION

Migration = Callable[[dict[str, Any]], dict[str, Any]]
"""Takes a report of version n (a JSON object) and returns it as version n + 1."""

MIGRATIONS: dict[int, Migration] = {}
"""Version -> the function that upgrades a report of that version to the next one."""


def migrate(
    report: dict[str, Any],
    migrations: Mapping[int, Migration] | None = None,
    current: int = REPORT_VERSION,
) -> dict[str, Any]:
    """Brings a report up to ``current``, one version at a time.

    Args:
        report: The parsed report.json (a JSON object).
        migrations: The table; :data:`MIGRATIONS` when None.
        current: The version the readers read.

    Returns:
        The report as version ``current`` (``report`` itself when it is of that version).

    Raises:
        OutputError: The version is not a whole number, newer than ``current``, or older
            with no way up; the message names the version this real2gym reads.
    """
    table = MIGRATIONS if migrations is None else migrations
    version = report.get("version")
    while _whole(version) and version != current and version in table:
        report = table[version](report)
        if report.get("version") != version + 1:
            raise ValueError(f"the migration from report version {version} must give version {version + 1}")
        version = report["version"]
    if version != current:
        hint = (
            "; it was written by a newer real2gym: update real2gym to read it"
            if _whole(version) and version > current
            else ""
        )
        raise OutputError(
            f"report.json has version {version!r:.20}; this real2gym reads version {current}{hint}"
        )
    return report


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
