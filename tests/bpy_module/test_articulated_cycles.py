"""tools/make_articulated_demo.py --renderer cycles: the same simulation filmed by Blender's Cycles.

The Cycles film rebuilds MuJoCo's geoms as Blender meshes and its camera as a Blender camera; a
mistake in either (a box's half sizes, a capsule's axis, a flipped camera axis, a pixel-centre
offset) moves its masks and depth off the MuJoCo film's of the same frames, which is what is
measured here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cycles_films import assert_same_depth, film_masks, first_frames, mask_ious

REPO = Path(__file__).resolve().parents[2]
OPTIONS = ["--scene", "cabinet", "--seed", "1", "--frames", "25", "--fps", "5", "--width", "160",
           "--height", "120", "--with-world-from-camera"]  # fmt: skip


@pytest.fixture(scope="module")
def films(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The cabinet (seed 1) filmed by each renderer: 25 frames, 160x120, Cycles at 1 sample."""
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"),
               BLENDER_USER_RESOURCES=str(tmp_path_factory.mktemp("blender_user")))  # fmt: skip
    made = {}
    for renderer in ("mujoco", "cycles"):
        out = tmp_path_factory.mktemp(renderer) / "demo"
        command = [sys.executable, str(REPO / "tools" / "make_articulated_demo.py"), *OPTIONS, "--out", str(out),
                   "--renderer", renderer, "--samples", "1"]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        made[renderer] = out
    return made


def test_the_cycles_films_masks_are_mujocos_on_every_frame(films: dict[str, Path]) -> None:
    mujoco_masks, cycles_masks = film_masks(films["mujoco"]), film_masks(films["cycles"])
    assert set(mujoco_masks) == set(cycles_masks) == {"cabinet", "cabinet.door"}
    for name, masks in mujoco_masks.items():
        ious = mask_ious(cycles_masks[name], masks)
        assert len(ious) == 25, name
        # Edge pixels differ (each renderer's rasterising of the same boxes); a shift of one pixel
        # would take the door's IoU at 160x120 below 0.85.
        assert np.median(ious) > 0.93 and min(ious) > 0.85, (name, np.round(ious, 3))


def test_the_cycles_films_depth_is_mujocos(films: dict[str, Path]) -> None:
    assert_same_depth(films, (0, 12, 24))


def test_the_cycles_film_looks_other_and_says_how_it_was_made(films: dict[str, Path]) -> None:
    truth = json.loads((films["cycles"] / "truth.json").read_text())
    generator = truth["generator"]
    assert generator["renderer"] == "Blender Cycles (CPU)" and generator["samples"] == 1
    assert len(generator["jpeg_quality"]) == 25
    frames = first_frames(films)
    body = film_masks(films["cycles"])["cabinet"][0]
    # The same cabinet in other colours: its pixels differ by more than the two films' noise.
    assert np.abs(frames[0][body] - frames[1][body]).mean() > 20
