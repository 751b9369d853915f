"""Many variants of one verified scene (``real2gym vary OUT --count N``).

The variants are written beside the run: ``OUT/variants/<id>/`` for each verified
one, ``OUT/variants/summary.json`` (one entry per variant, dropped ones with their
reason), ``summary.html`` (a grid of renders from the video camera) and the plan
(``plan.json``). They are staged and swapped in at the end, so a cancelled or
failed batch leaves the previous set as it was.
"""

from __future__ import annotations

import html
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import Cancelled, Real2GymError
from ..files import (
    lock_folder,
    make_staging,
    remove_stale_staging,
    swap_in,
    write_json_atomic,
    write_text_atomic,
)
from ..json_files import read_json_file
from .adapt import AdaptError
from .executors import run_jobs
from .plan import MAX_SHRINKS, PlanError, VariationPlan, check_seed_reuse, shrink
from .run import BaseScene, VariantJob, VariantRejected, run_variant, vary_geometry

VARIANTS_NAME = "variants"
SUMMARY_NAME = "summary.json"
FEASIBLE_DRAWS = 20
"""Draws tried for placement before a batch starts: none placeable means the ranges are wrong."""


def vary(
    out_dir: Path | str,
    count: int,
    plan: VariationPlan | None = None,
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
    progress: Callable[[int, int, dict], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    render: bool = True,
) -> list[dict]:
    """Draws, adapts, verifies and writes ``count`` variants of a finished, verified run.

    Args:
        out_dir: The run's output folder.
        count: Variants to draw.
        plan: Ranges and seed; the defaults with seed 0 when None.
        jobs: Parallel processes (or Ray tasks).
        executor: ``local`` (a process pool; this process when ``jobs`` is 1) or ``ray``.
        address: A Ray cluster's address for ``ray``.
        progress: Called with ``(done, count, entry)`` after each variant.
        cancelled: Polled between variants; True stops and keeps the previous set.
        render: Render each variant's first frame for summary.html.

    Returns:
        summary.json's entries, by id.

    Raises:
        Real2GymError: The run cannot be varied (not verified, no gripper path), the plan
            is bad or leaves no valid placement, or the seed was used with another plan.
        Cancelled: ``cancelled`` said so.
    """
    out = Path(out_dir)
    if not isinstance(count, int) or count < 1:
        raise Real2GymError(f"--count must be a whole number >= 1, got {count!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise Real2GymError(f"--jobs must be a whole number >= 1, got {jobs!r}")
    plan = plan or VariationPlan()
    plan.check()
    base = BaseScene.load(out)
    verification = base.report.verification
    if verification is None or not verification.passed:
        failing = (
            [] if verification is None else [n for n, c in verification.checks.items() if not c.get("passed")]
        )
        raise Real2GymError(
            f"the demo's scene in {out} is not verified ({', '.join(failing) or 'never verified'}); "
            "fix it and verify it before varying it"
        )
    folder = out / VARIANTS_NAME
    check_seed_reuse(plan, folder / "plan.json")
    _check_feasible(base, plan, count)
    lock = lock_folder(out)  # no other real2gym command writes into the run meanwhile
    try:
        remove_stale_staging(out)
        staging = make_staging(out)
        try:
            entries = _run_variants(
                out, count, plan, jobs, executor, address, progress, cancelled, render, staging
            )
            write_json_atomic(staging / "plan.json", plan.to_json())
            write_json_atomic(staging / SUMMARY_NAME, entries)
            write_text_atomic(staging / "summary.html", summary_page(entries, plan, out))
            swap_in(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        if lock is not None:
            os.close(lock)
    return entries


def _run_variants(out: Path, count: int, plan: VariationPlan, jobs: int, executor: str, address: str | None,
                  progress, cancelled, render: bool, staging: Path) -> list[dict]:  # fmt: skip
    """Runs every variant into ``staging`` and returns summary.json's entries, by id, duplicates dropped."""
    tasks = [VariantJob(str(out), plan.to_json(), i, str(staging), render) for i in range(count)]
    entries = []
    for done, (job, result) in enumerate(run_jobs(run_variant, tasks, jobs, executor, address, cancelled), 1):
        if isinstance(result, BaseException):
            result = {"id": f"v{job.index:04d}", "index": job.index, "passed": False, "params": None,
                      "reason": f"the task died: {type(result).__name__}: {str(result)[:200]}",
                      "seconds": 0.0, "signature": "", "attempts": 0, "checks": {}, "render": None}  # fmt: skip
        entries.append(result)
        if progress is not None:
            progress(done, count, result)
    if cancelled is not None and cancelled():
        raise Cancelled(f"cancelled after {len(entries)} of {count} variants; the previous set is kept")
    entries.sort(key=lambda e: e["index"])
    _drop_duplicates(entries, staging)
    return entries


def _check_feasible(base: BaseScene, plan: VariationPlan, count: int) -> None:
    """Refuses ranges under which no early draw places its objects, even shrunk toward the demo.

    Raises:
        PlanError: Quotes the last draw's reason.
    """
    settle = int(round(plan.settle_s * base.fps))
    reason = ""
    for index in range(min(count, FEASIBLE_DRAWS)):
        params = plan.draw(index, base.objects)
        if params["kind"] == "appearance":
            return
        for _ in range(MAX_SHRINKS + 1):
            try:
                vary_geometry(base, params, settle)
                return
            except (VariantRejected, AdaptError) as e:
                reason = str(e)
            params = shrink(params)
    raise PlanError(
        f"the ranges leave no valid placement: none of the first {min(count, FEASIBLE_DRAWS)} draws could be "
        f"placed, even shrunk toward the demo (last: {reason}); narrow the ranges"
    )


def _drop_duplicates(entries: list[dict], staging: Path) -> None:
    """A verified variant whose parameters repeat an earlier one's is dropped (its folder removed)."""
    seen: dict[str, str] = {}
    for entry in entries:
        if not entry["passed"] or not entry["signature"]:
            continue
        if entry["signature"] in seen:
            entry.update(passed=False, reason=f"duplicate of {seen[entry['signature']]} (same parameters)")
            shutil.rmtree(staging / entry["id"], ignore_errors=True)
            entry["render"] = None
        else:
            seen[entry["signature"]] = entry["id"]


def read_summary(out_dir: Path | str) -> list[dict]:
    """``OUT/variants/summary.json``.

    Raises:
        Real2GymError: There is none, or it is unreadable.
    """
    path = Path(out_dir) / VARIANTS_NAME / SUMMARY_NAME
    try:
        return read_json_file(path)
    except FileNotFoundError as e:
        raise Real2GymError(f"{path} does not exist; run 'real2gym vary {out_dir}' first") from e
    except OSError as e:
        raise Real2GymError(f"cannot read {path}: {e}") from e


def summary_page(entries: list[dict], plan: VariationPlan, out: Path) -> str:
    """summary.html: the counts, then a grid with each variant's render, verdict and main parameters."""
    passed = sum(e["passed"] for e in entries)
    seconds = sum(e["seconds"] for e in entries)
    cards = []
    for e in entries:
        params = e.get("params") or {}
        lines = []
        for name, change in (params.get("objects") or {}).items():
            moved = [f"{change['dx'] * 100:+.1f}, {change['dy'] * 100:+.1f} cm" if change["dx"] or change["dy"] else "",
                     f"{change['dyaw_deg']:+.0f}°" if change["dyaw_deg"] else "",
                     f"×{change['scale']:.2f}" if change["scale"] != 1 else "",
                     f"rim ×{change['rim_scale']:.2f}" if change["rim_scale"] != 1 else ""]  # fmt: skip
            if any(moved):
                lines.append(f"{html.escape(name)}: {' '.join(m for m in moved if m)}")
        if params.get("distractors"):
            lines.append(f"{len(params['distractors'])} distractor(s)")
        picture = (f'<img src="{e["id"]}/{e["render"]}" alt="{e["id"]}">' if e.get("render")
                   else '<div class="none">no render</div>')  # fmt: skip
        verdict = "verified" if e["passed"] else html.escape(e["reason"] or "dropped")
        cards.append(
            f'<div class="card {"ok" if e["passed"] else "bad"}">{picture}<b>{e["id"]}</b> '
            f"<span>{params.get('kind', '')}</span><br>{verdict}<br><small>{'<br>'.join(lines)}</small></div>"
        )
    return f"""<!doctype html><meta charset="utf-8"><title>Variants of {html.escape(out.name)}</title>
<style>body{{font-family:sans-serif;margin:1em}}.grid{{display:flex;flex-wrap:wrap;gap:8px}}
.card{{width:330px;border:2px solid #ccc;padding:4px;font-size:13px}}.ok{{border-color:#3a3}}.bad{{border-color:#c44}}
.card img{{width:320px;display:block}}.none{{width:320px;height:240px;background:#eee}}</style>
<h1>Variants of {html.escape(str(out))}</h1>
<p>{passed} of {len(entries)} verified, {seconds:.1f} s of work; seed {plan.seed}, plan {plan.signature()}.
Renders show each variant's first frame from the video camera.</p>
<div class="grid">{"".join(cards)}</div>
"""
