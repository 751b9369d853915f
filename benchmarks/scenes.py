"""Demo scenes for benchmarks: the bundled demo plus generated variants, cached.

Variants are made once by tools/make_demo.py into ``.cache/bench_scenes/`` (git
ignored) and reused; delete that folder to make them anew.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_scenes"

VARIANTS = {
    "wide_distractor": ["--seed", "1", "--camera-azimuth", "35", "--camera-elevation", "50", "--fovy", "55",
                        "--block-size", "0.05", "--distractor", "--with-trajectory"],
    "far_low_no_trajectory": ["--seed", "2", "--camera-distance", "0.9", "--camera-elevation", "32",
                              "--fovy", "40", "--cup-radius", "0.05"],
    "no_depth_with_pose": ["--seed", "3", "--camera-azimuth", "-25", "--no-depth", "--with-world-from-camera",
                           "--with-trajectory"],
    # The weakest input: a person's video with a known camera pose, no depth, no robot recording.
    "bowl": ["--seed", "4", "--camera-azimuth", "-50", "--target", "bowl", "--with-trajectory"],
    "tilted_carry": ["--seed", "2", "--camera-azimuth", "-40", "--carry-tilt", "25", "--with-trajectory"],
    "no_depth_no_trajectory": ["--seed", "3", "--camera-azimuth", "-25", "--no-depth", "--with-world-from-camera"],
}  # fmt: skip


def scene_folders(bundled: Path, with_variants: bool = True) -> dict[str, Path]:
    """Returns name -> demo folder, generating missing variants."""
    scenes = {"block_in_cup": Path(bundled)}
    if not with_variants:
        return scenes
    for name, args in VARIANTS.items():
        folder = CACHE / name
        if not (folder / "truth.json").is_file():
            print(f"generating benchmark scene {name} (once) ...", file=sys.stderr, flush=True)
            env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
            subprocess.run(
                [sys.executable, str(REPO / "tools" / "make_demo.py"), "--out", str(folder), *args],
                check=True, env=env, capture_output=True,
            )  # fmt: skip
        scenes[name] = folder
    return scenes
