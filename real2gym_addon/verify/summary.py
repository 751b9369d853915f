"""The verification at a glance: the verdict, one row per check with its key figure, the suggestions.

:func:`summarise_verification` turns a report's ``verification`` into a plain
:class:`Summary`, with each check's label and key figure from
:data:`~.registry.CHECKS`; the Blender panel shows it as it is. A check the table
does not know (a report from another version) shows under its own name.
"""

from __future__ import annotations

import dataclasses

from . import registry


@dataclasses.dataclass
class CheckRow:
    """One check: its label, verdict and key figure."""

    name: str
    label: str
    passed: bool
    figure: str
    perturbed: str = ""
    """How many perturbed runs it passed in (``7/8``); empty without a margin."""


@dataclasses.dataclass
class Summary:
    """The verification as the panel shows it.

    Attributes:
        verified: None when the report has no verification yet.
        checks: One row per check, in report order.
        suggestions: The suggested fixes' texts.
        margin: The margin's verdict in words (``verified, 8 of 8 perturbed runs``); empty without one.
        robust: Verified in enough of the perturbed runs (None without a margin).
    """

    verified: bool | None
    checks: list[CheckRow]
    suggestions: list[str]
    margin: str = ""
    robust: bool | None = None


def short_figure(name: str, check: dict) -> str:
    """A check's key figure, short enough for the sidebar.

    Args:
        name: The check's name.
        check: Its result, ``{"passed", ...figures}``.

    Returns:
        Its ``reason`` when it has one, else its entry's ``figure``; empty for a check
        the table does not know or whose figures are not what its formatter expects.
    """
    if "reason" in check:
        return str(check["reason"])
    entry = registry.CHECKS.get(name)
    if entry is None:
        return ""
    try:
        return entry.figure(check)
    except (KeyError, TypeError, ValueError, AttributeError):
        return ""


def summarise_verification(report: dict) -> Summary:
    """The report's verification as a :class:`Summary`.

    Args:
        report: The run's report.json content.
    """
    verification = report.get("verification")
    if not verification:
        return Summary(None, [], [])
    margin = verification.get("margin") or {}
    shares = margin.get("checks", {})
    rows = []
    for name, check in verification.get("checks", {}).items():
        entry = registry.CHECKS.get(name)
        label = entry.label if entry is not None else name
        share = shares.get(name)
        perturbed = f"{share['passed']}/{margin['runs']}" if share else ""
        rows.append(CheckRow(name, label, bool(check.get("passed")), short_figure(name, check), perturbed))
    texts = [s["text"] for s in verification.get("suggestions", [])]
    robust = bool(margin["robust"]) if "robust" in margin else None
    return Summary(bool(verification.get("passed")), rows, texts, str(margin.get("verdict", "")), robust)
