"""Many demos in parallel processes (``real2gym batch DEMO... --out ROOT --jobs N``).

Each demo runs the whole pipeline in its own process into ``ROOT/<demo name>``;
a failure in one is recorded and the others go on. ``ROOT/summary.json`` and
``ROOT/summary.md`` list each demo's outcome and its checks.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
from pathlib import Path

from .errors import Real2GymError
from .files import write_json_atomic, write_text_atomic
from .segmentation.backends import SegmentationOptions
from .targets import BATCH, check_target, write_manifest


def _run_one(demo_dir: str, out_dir: str, options: SegmentationOptions) -> dict:
    from .pipeline import run_pipeline

    started = time.perf_counter()
    try:
        run = run_pipeline(demo_dir, out_dir, segmentation=options)
    except Real2GymError as e:
        return {
            "demo": demo_dir,
            "out": out_dir,
            "status": "error",
            "error": str(e),
            "wall_s": time.perf_counter() - started,
        }
    verification = run.scene.verification or {}
    return {
        "demo": demo_dir,
        "out": out_dir,
        "status": "verified" if verification.get("passed") else "failed",
        "checks": {k: bool(v["passed"]) for k, v in verification.get("checks", {}).items()},
        "warnings": len(run.log.warnings),
        "wall_s": round(time.perf_counter() - started, 2),
    }


def run_batch(
    demo_dirs: list[str],
    root: Path | str,
    jobs: int,
    options: SegmentationOptions,
    progress=None,
    force: bool = False,
) -> list[dict]:
    """Runs every demo, ``jobs`` at a time, and writes the summary.

    Args:
        demo_dirs: Demo folders.
        root: Output root; each demo goes to ``root/<folder name>`` (numbered if names repeat).
        jobs: Parallel processes.
        options: Segmentation settings for all demos.
        progress: Called with ``(done, total, row)`` after each demo; may be None.
        force: Replace an earlier batch in ``root`` (its marker says so); refused otherwise.

    Returns:
        One summary row per demo, in the order given.
    """
    root = check_target(
        root, "--out", BATCH, [(d, f"the demo folder {Path(d).name!r}") for d in demo_dirs], force
    )
    root.mkdir(parents=True, exist_ok=True)
    write_manifest(root, BATCH)
    outs, seen = [], set()
    for demo in demo_dirs:
        name, index = Path(demo).resolve().name, 2
        candidate = name
        while candidate in seen:
            candidate, index = f"{name}_{index}", index + 1
        seen.add(candidate)
        outs.append(str(root / candidate))
    rows: list[dict | None] = [None] * len(demo_dirs)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = {
            pool.submit(_run_one, d, o, options): i
            for i, (d, o) in enumerate(zip(demo_dirs, outs, strict=True))
        }
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            index = futures[future]
            try:
                rows[index] = future.result()
            except Exception as e:  # a crash in a worker is recorded, the batch goes on
                rows[index] = {
                    "demo": demo_dirs[index],
                    "out": outs[index],
                    "status": "crashed",
                    "error": repr(e),
                }
            if progress:
                progress(done, len(demo_dirs), rows[index])
    write_json_atomic(root / "summary.json", rows)
    write_text_atomic(root / "summary.md", _markdown(rows))
    return rows


def _markdown(rows: list[dict]) -> str:
    names = sorted({k for r in rows for k in r.get("checks", {})})
    lines = [
        "| demo | status | " + " | ".join(names) + " | wall s |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for row in rows:
        marks = [
            "yes" if row.get("checks", {}).get(n) else ("no" if n in row.get("checks", {}) else "")
            for n in names
        ]
        lines.append(
            f"| {Path(row['demo']).name} | {row['status']} | "
            + " | ".join(marks)
            + f" | {row.get('wall_s', '')} |"
        )
    errors = [r for r in rows if r.get("error")]
    if errors:
        lines += ["", *(f"- {Path(r['demo']).name}: {r['error']}" for r in errors)]
    return "\n".join(lines) + "\n"
