#!/usr/bin/env python3
"""Make a seeded set of articulated demos (tools/make_articulated_demo.py) into a cache folder.

Each scene and seed gets its own folder ``<scene>_seed<N>`` under ``--out`` (by default
``.cache/articulated_scenes``, git-ignored); a folder whose truth.json was made with the same
options is kept, so a set is made once and reused. ``index.json`` lists every folder with its
status (``made``, ``kept`` or ``failed`` with the generator's last message) and seconds. Demos
are made in separate processes (``--jobs`` at a time); a failed one does not stop the others.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_articulated_set.py --seeds 6 --jobs 2
    MUJOCO_GL=egl .venv/bin/python tools/make_articulated_set.py --scenes drawer --seeds 3 -- --rgb-only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "articulated_scenes"
SCENES = ("microwave", "cabinet", "drawer")
DEFAULT_OPTIONS = ("--with-trajectory", "--with-world-from-camera")


def folder_is_current(folder: Path, argv: list[str]) -> bool:
    """Whether ``folder`` holds a demo made with exactly these generator options."""
    try:
        truth = json.loads((folder / "truth.json").read_text())
    except (OSError, ValueError):
        return False
    return truth.get("generator", {}).get("argv") == argv


def _make_one(folder: Path, argv: list[str], timeout: float) -> dict:
    started = time.monotonic()
    if folder_is_current(folder, argv):
        return {"folder": folder.name, "status": "kept", "seconds": 0.0}
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    command = [sys.executable, str(REPO / "tools" / "make_articulated_demo.py"), *argv]
    try:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"folder": folder.name, "status": "failed", "message": f"timed out after {timeout:g} s",
                "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    entry = {"folder": folder.name, "status": "made" if done.returncode == 0 else "failed",
             "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    if done.returncode != 0:
        entry["exit_status"] = done.returncode
        entry["message"] = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
    return entry


def articulated_set(
    out: Path = CACHE,
    seeds: list[int] | range = range(6),
    scenes: tuple[str, ...] = SCENES,
    options: tuple[str, ...] = DEFAULT_OPTIONS,
    jobs: int = 1,
    timeout: float = 900.0,
) -> dict[str, Path]:
    """Make (or keep) one demo per scene and seed; return name -> folder of those that exist now.

    Args:
        out: The cache folder; created if missing.
        seeds: Seeds to make.
        scenes: Scenes to make (``microwave``, ``cabinet``, ``drawer``).
        options: Further options of make_articulated_demo.py, the same for every demo.
        jobs: Demos made at once.
        timeout: Seconds one demo may take.

    Returns:
        ``<scene>_seed<N>`` to its folder, for every demo made now or kept (failed ones left out;
        ``index.json`` in ``out`` says why).
    """
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = []
    for scene in scenes:
        for seed in seeds:
            folder = out / f"{scene}_seed{seed}"
            work.append((folder, ["--scene", scene, "--seed", str(seed), "--out", str(folder), *options]))
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        entries = list(pool.map(lambda item: _make_one(*item, timeout), work))
    for entry in entries:
        line = f"{entry['folder']}: {entry['status']} ({entry['seconds']:g} s)"
        print(line + (f": {entry['message']}" if "message" in entry else ""), file=sys.stderr, flush=True)
    index = {"generator": "tools/make_articulated_demo.py", "options": list(options), "demos": entries}
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return {e["folder"]: out / e["folder"] for e in entries if e["status"] != "failed"}


def main(argv: list[str] | None = None) -> int:
    """Make the set; exit status 1 when any demo failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=CACHE, help="cache folder (default .cache/articulated_scenes)"
    )
    parser.add_argument("--seeds", type=int, default=6, help="seeds 0 .. N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--scenes", nargs="+", choices=SCENES, default=list(SCENES))
    parser.add_argument("--jobs", type=int, default=1, help="demos made at once (one per CPU core at most)")
    parser.add_argument("options", nargs="*", help="after --: options for every demo (default: "
                        + " ".join(DEFAULT_OPTIONS) + ")")  # fmt: skip
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    options = tuple(args.options) if args.options else DEFAULT_OPTIONS
    made = articulated_set(args.out, seeds, tuple(args.scenes), options, args.jobs)
    wanted = args.seeds * len(args.scenes)
    print(f"make_articulated_set: {len(made)} of {wanted} demos in {args.out.resolve()}")
    return 0 if len(made) == wanted else 1


if __name__ == "__main__":
    sys.exit(main())
