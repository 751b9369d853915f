"""Run every benchmark and print its figures, as a table and as JSON.

    .venv/bin/python benchmarks/run.py [--only NAME] [--demo DIR] [--json FILE]

Each ``bench_*.py`` module here has ``run(args) -> list[Figure]``. A figure
carries its baseline, measured in the same run (these machines are noisy, so
absolute times mean little on their own), the ratio to it, and the target.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))


@dataclasses.dataclass
class Figure:
    """One measured figure.

    Attributes:
        benchmark: The benchmark that measured it.
        name: What was measured.
        value: The measurement.
        unit: Its unit (``s``, ``MB``, ``x``...).
        baseline: The same-run baseline in the same unit, if any.
        baseline_name: What the baseline is.
        target: The goal, as text (``"< 60 s"``).
        passed: Whether the target is met (None when there is no target).
    """

    benchmark: str
    name: str
    value: float
    unit: str
    baseline: float | None = None
    baseline_name: str = ""
    target: str = ""
    passed: bool | None = None

    @property
    def ratio(self) -> float | None:
        """value / baseline, when there is a baseline."""
        if self.baseline in (None, 0):
            return None
        return self.value / self.baseline


def _table(figures: list[Figure]) -> str:
    rows = [("benchmark", "figure", "value", "baseline", "ratio", "target", "ok")]
    for f in figures:
        rows.append(
            (
                f.benchmark,
                f.name,
                f"{f.value:.4g} {f.unit}",
                f"{f.baseline:.4g} {f.unit} ({f.baseline_name})" if f.baseline is not None else "",
                f"{f.ratio:.2f}x" if f.ratio is not None else "",
                f.target,
                {True: "yes", False: "NO", None: ""}[f.passed],
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the benchmark with this name (e.g. end_to_end)")
    parser.add_argument("--demo", default=str(REPO / "examples" / "block_in_cup"), help="demo folder")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--quick", action="store_true", help="only the bundled demo, no generated scenes")
    args = parser.parse_args()
    names = sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    if args.only:
        names = [n for n in names if n == args.only]
    figures: list[Figure] = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        figures.extend(importlib.import_module(f"bench_{name}").run(args))
    print(_table(figures))
    data = [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
        for row in (dict(dataclasses.asdict(f), ratio=f.ratio) for f in figures)
    ]  # strict JSON: a figure with nothing to measure (NaN) is null
    text = json.dumps(data, indent=1, default=float)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0 if all(f.passed is not False for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
