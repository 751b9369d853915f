"""Computed self-repair: apply the suggested fixes in turn until the scene verifies.

:func:`repair_run` is what ``real2gym run --repair``, ``real2gym fix OUT --repair`` and
the Blender *Repair* button do. Each round takes the first suggestion of the
current verification (``suggest.suggest_fixes``: a widened release, an offset at
the grasp, a keyframe moved to where the fingers touch, a rim scale, wall pieces
for a closed hull) that has not been tried, applies it through the edit log
(``edits.apply_fix``), and verifies again. A step after which more checks fail,
the same checks fail (unless the hand knocks things in fewer phases of its path), or
the task starts failing is undone at once (and logged as reverted). The loop stops when the
scene verifies, when no untried suggestion is left, or after ``rounds`` rounds.
Every kept step is an ordinary entry of the edit log, so the artist can see and
undo each one (``real2gym fix OUT --undo``, *Undo Fix* in Blender).

Real2Gym's agent runs this review-and-repair loop with an LLM; this one is
computed from the check figures and reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import OutputFolder
from ..report import Report, read_report, write_report
from .edits import FixError, apply_fix, undo_last

if TYPE_CHECKING:  # imported there at run time: the verifier imports this package
    from ..verify.run import Verification

MAX_ROUNDS = 5
"""Rounds ``--repair`` tries by default."""


def _failed(report: Report) -> list[str]:
    return [] if report.verification is None else report.verification.failed()


def _knocked_phases(report: Report) -> set[str]:
    """The phases of the hand's path in which ``hand_clearance`` found a knock: one check, several problems.
    Phases, not objects: what the hand knocks late in the path depends on what it did earlier (a block
    no longer knocked aside on the way in is in the cup on the way out, and a hand sweeping out of it
    knocks the cup too)."""
    if report.verification is None:
        return set()
    check = report.verification.checks.get("hand_clearance")
    return {k["phase"] for k in check.get("knocks", [])} if isinstance(check, dict) else set()


def _signature(fix: dict) -> str:
    return json.dumps(fix, sort_keys=True)


def repair_run(
    out_dir: Path | str,
    rounds: int = MAX_ROUNDS,
    progress: Callable[[str, float], None] | None = None,
    masses: dict[str, float] | None = None,
    frictions: dict[str, float] | None = None,
) -> tuple[Report, Verification | None]:
    """Applies the computed suggestions of a finished run in turn, re-verifying after each.

    Args:
        out_dir: The run's output folder (report.json, mjcf/).
        rounds: At most this many fixes are tried.
        progress: Called with a message and a fraction in [0, 1] before each round.
        masses: Object name -> kg overrides for every verification (as ``reverify``'s).
        frictions: Object name -> friction overrides.

    Returns:
        The updated report and the verification of its final scene (None when none ran). The
        report's ``repair`` entry holds ``passed_before``, ``passed_after``, ``stopped`` (why it
        ended) and ``rounds``: per step the fix, the suggestion's text and check, whether it was
        kept, and the checks failing after it.
    """
    from ..reverify import reverify

    def verify_after(edit=None) -> tuple[Report, Verification]:
        return reverify(out_dir, masses, edit, frictions=frictions)

    report, verification = read_report(out_dir), None
    if report.verification is None or report.verification.stale or masses or frictions:
        report, verification = verify_after()
    passed_before = bool(report.verification.passed)
    steps: list[dict] = []
    tried: set[str] = set()
    stopped = f"{rounds} rounds tried"
    for round_ in range(rounds):
        if report.verification.passed:
            break
        suggestions = report.verification.suggestions or []
        suggestion = next((s for s in suggestions if _signature(s["fix"]) not in tried), None)
        if suggestion is None:
            stopped = "no untried suggestion left"
            break
        fix = suggestion["fix"]
        tried.add(_signature(fix))
        if progress is not None:
            progress(f"repair {round_ + 1}: {suggestion['text']}", round_ / rounds)
        failed_before = _failed(report)
        try:
            updated, verified = verify_after(lambda current, fix=fix: apply_fix(current, fix))
        except FixError as e:
            steps.append({"fix": fix, "text": suggestion["text"], "check": suggestion["check"],
                          "kept": False, "error": str(e)})  # fmt: skip
            continue
        failed_after = _failed(updated)
        step = {"fix": fix, "text": suggestion["text"], "check": suggestion["check"], "kept": True,
                "failed_after": failed_after}  # fmt: skip
        # Kept only if it changes what fails without making more fail or breaking the task: a step after
        # which the same checks fail changed nothing that matters (five such steps once moved a block 6 cm
        # and its grasp 12 frames in a scene that failed as before), and one that breaks the task trades
        # the purpose for a figure. A step that swaps one failure for another is kept: repairs take
        # several steps (the hand brought in from above, then the grasp moved up the object).
        before, after = set(failed_before), set(failed_after)
        newly = after - before
        helps = len(after) <= len(before) and after != before and "task_success" not in newly
        # The same checks failing can still be progress where one check counts several problems: the
        # hand brought in from above no longer knocks anything on its way in, and still does on its
        # way out (the next step's suggestion).
        fewer_knocks = _knocked_phases(updated) < _knocked_phases(report)
        helps = helps or (after == before and suggestion["check"] == "hand_clearance" and fewer_knocks)
        if not helps:
            updated, verified = verify_after(undo_last)
            why = (
                "the task failed after it" if "task_success" in newly
                else "the same checks failed after it" if after == before
                else f"{len(failed_after)} checks failed after it, {len(failed_before)} before"
            )  # fmt: skip
            step.update(kept=False, reverted=why)
        steps.append(step)
        report, verification = updated, verified
    if report.verification.passed:
        stopped = "verified"
    report.repair = {
        "passed_before": passed_before,
        "passed_after": bool(report.verification.passed),
        "stopped": stopped,
        "rounds": steps,
    }
    output = OutputFolder(out_dir)
    with output:
        write_report(output.staging, report)
    if progress is not None:
        progress("repair done", 1.0)
    return report, verification
