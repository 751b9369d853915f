"""Verified variants per minute, one process against two, and the exported environment's replay.

The bundled demo is run once (``real2gym run``, into ``.cache/bench_variants/``), then
``vary`` draws the same 40 variants at the default ranges with ``--jobs 1`` and with
``--jobs 2`` (a process pool; its start is counted). Printed: verified variants per
minute for each, the scaling ratio (jobs 2 against jobs 1, same run), the share
verified (goal >= 80 %), and why the others were dropped. Then the scene is exported
as a Gymnasium environment and the adapted demo is replayed from 20 seeds: the share
that ends in success, and the steps per second of the environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from run import Figure

NAME = "variants"
REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_variants"
COUNT = 40
SEEDS = 20


def _verified_run(demo: Path) -> Path:
    out = CACHE / "run"
    if not (out / "report.json").is_file():
        print("running the demo once ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "real2gym.real2gym_addon", "run", str(demo), "--out", str(out), "-q"],
                       check=True, cwd=REPO.parent)  # fmt: skip
    return out


def run(args) -> list[Figure]:
    sys.path.insert(0, str(REPO.parent))
    os.environ.setdefault("MUJOCO_GL", "egl")
    from real2gym.real2gym_addon.variants.batch import vary
    from real2gym.real2gym_addon.variants.plan import VariationPlan

    out = _verified_run(Path(args.demo))
    figures, rates = [], {}
    for jobs in (1, 2):
        copy = CACHE / f"jobs{jobs}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(out, copy, ignore=shutil.ignore_patterns("variants", "masks*", "*.blend"))
        started = time.perf_counter()
        entries = vary(copy, COUNT, VariationPlan(seed=11), jobs=jobs)
        seconds = time.perf_counter() - started
        passed = sum(e["passed"] for e in entries)
        rates[jobs] = passed / seconds * 60
        baseline = {"baseline": rates[1], "baseline_name": "jobs 1"} if jobs == 2 else {}
        figures += [
            Figure(
                NAME,
                f"--jobs {jobs}: verified variants per minute",
                rates[jobs],
                "/min",
                target=">= 60",
                passed=rates[jobs] >= 60,
                **baseline,
            ),  # fmt: skip
            Figure(
                NAME,
                f"--jobs {jobs}: share verified (default ranges)",
                100 * passed / COUNT,
                "%",
                target=">= 80",
                passed=passed >= 0.8 * COUNT,
            ),  # fmt: skip
            Figure(NAME, f"--jobs {jobs}: wall time for {COUNT}", seconds, "s"),
        ]
        reasons = Counter(e["reason"].split(" (after")[0].split(":")[0] for e in entries if not e["passed"])
        for reason, n in reasons.most_common(4):
            figures.append(Figure(NAME, f"--jobs {jobs}: dropped: {reason[:60]}", n, "variants"))
    figures.append(Figure(NAME, "scaling, jobs 2 against jobs 1", rates[2] / rates[1], "x", target="> 1.3",
                          passed=rates[2] / rates[1] > 1.3))  # fmt: skip
    figures += _environment(out)
    return figures


def _environment(out: Path) -> list[Figure]:
    from real2gym.real2gym_addon.gym import make_env
    from real2gym.real2gym_addon.gym.export import export_gym

    folder = export_gym(out, CACHE / "env", force=True).parent  # the benchmark's own earlier environment
    env = make_env(folder)
    successes, steps, started = 0, 0, time.perf_counter()
    for seed in range(SEEDS):
        env.reset(seed=seed)
        info = {}
        for action in env.demo_actions():
            _, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                break
        successes += bool(info.get("is_success"))
    seconds = time.perf_counter() - started
    return [
        Figure(
            NAME,
            f"environment: adapted demo succeeds from {SEEDS} seeds",
            100 * successes / SEEDS,
            "%",
            target=">= 80",
            passed=successes >= 0.8 * SEEDS,
        ),  # fmt: skip
        Figure(NAME, "environment: steps per second (10 ms of physics each)", steps / seconds, "/s"),
    ]
