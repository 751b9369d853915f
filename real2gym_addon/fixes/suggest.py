"""Suggested fixes after a failed verification: each failed check's rule asked in turn.

The rules themselves are in :mod:`.rules`, one per check, named by its entry in
:data:`~..verify.registry.CHECKS`; this module asks them, in the order the table and
:data:`ASKED_FIRST` give.
"""

from __future__ import annotations

from ..geometry.shapes import Shape
from ..verify import registry
from .edits import find_object, keyframe_frame
from .rules import SuggestionContext

ASKED_FIRST = ("hand_clearance", "task_success", "penetration")
"""Checks whose suggestions come first, in this order; the other checks' follow in table order.
The hand knocking an object, or a container that cannot take it, explains the failures
downstream, and an object starting inside its support is offered only when neither is."""


def suggest_fixes(report: dict) -> list[dict]:
    """Returns suggestions ``{"text", "check", "frame", "fix"}`` for the failed checks of a report.

    Each check of :data:`~..verify.registry.CHECKS` with a ``suggest`` rule is asked, those of
    :data:`ASKED_FIRST` first.
    """
    verification = report.get("verification") or {}
    checks = verification.get("checks", {})
    task = report.get("task", {})
    moved_name, target_name = task.get("object"), task.get("target")
    if not moved_name or not checks:
        return []
    target_entry = find_object(report, target_name) if target_name else None
    context = SuggestionContext(
        report=report,
        checks=checks,
        failing={name for name, check in checks.items() if not check.get("passed", True)},
        moved_name=moved_name,
        target_name=target_name,
        moved=Shape.from_report(find_object(report, moved_name)),
        target_entry=target_entry,
        target=Shape.from_report(target_entry) if target_entry else None,
        release=keyframe_frame(report, "release", moved_name),
        contact=keyframe_frame(report, "contact", moved_name),
    )
    table = registry.CHECKS
    order = [table[name] for name in ASKED_FIRST if name in table]
    order += [check for check in table.values() if check.name not in ASKED_FIRST]
    suggestions: list[dict] = []
    for check in order:
        if check.suggest is not None:
            suggestions += check.suggest(context, suggestions)
    return suggestions
