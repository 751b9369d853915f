"""The task generators' ``--renderer cycles``: the same simulation filmed by Blender's Cycles.

tools/_task_cycles.py rebuilds MuJoCo's shown geoms (the mug's mesh, the tree's cylinders, the gripper's boxes)
as Blender meshes and films them in the seed's own looks, through the task generators' shared
``_demo_film.DemoFilm``; a mistake in the geoms, the camera or which geom is whose mask moves the Cycles film's
masks and depth off the MuJoCo film's of the same frames, which is what is measured here (a mug on a mug tree).
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
OPTIONS = ["--seed", "0", "--frames", "24", "--fps", "3", "--size", "320x240", "--with-world-from-camera"]
"""The whole script (8 s) at 3 frames a second: the mug taken, carried, hung and let go."""


@pytest.fixture(scope="module")
def films(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Hang seed 0 filmed by each renderer: 24 frames, 320x240, Cycles at 1 sample."""
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"),
               BLENDER_USER_RESOURCES=str(tmp_path_factory.mktemp("blender_user")))  # fmt: skip
    made = {}
    for renderer in ("mujoco", "cycles"):
        out = tmp_path_factory.mktemp(renderer) / "demo"
        command = [sys.executable, str(REPO / "tools" / "make_hang_demo.py"), *OPTIONS, "--out", str(out),
                   "--renderer", renderer, "--samples", "1"]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        made[renderer] = out
    return made


def _truth(demo: Path) -> dict:
    return json.loads((demo / "truth.json").read_text())


def test_the_same_simulation_is_filmed(films: dict[str, Path]) -> None:
    truths = [_truth(films[r]) for r in ("mujoco", "cycles")]
    assert truths[0]["keyframes"] == truths[1]["keyframes"]
    for ours, theirs in zip(truths[0]["objects"], truths[1]["objects"], strict=True):
        assert [f["position_world"] for f in ours["frames"]] == [
            f["position_world"] for f in theirs["frames"]
        ]


def test_the_cycles_films_masks_are_mujocos_on_every_frame(films: dict[str, Path]) -> None:
    mujoco_masks, cycles_masks = film_masks(films["mujoco"]), film_masks(films["cycles"])
    assert set(mujoco_masks) == set(cycles_masks) == {"mug", "rack"}
    for name, masks in mujoco_masks.items():
        ious = mask_ious(cycles_masks[name], masks)
        assert len(ious) == 24, name
        # The tree's pegs are 2-4 pixels thick here: a pixel's shift would take its IoU below 0.6.
        assert np.median(ious) > 0.85 and min(ious) > 0.7, (name, np.round(ious, 3))


def test_the_cycles_films_depth_is_mujocos(films: dict[str, Path]) -> None:
    assert_same_depth(films, (0, 12, 23))


def test_the_cycles_film_looks_other_and_says_how_it_was_made(films: dict[str, Path]) -> None:
    generator = _truth(films["cycles"])["generator"]
    assert generator["renderer"] == "Blender Cycles (CPU)" and generator["samples"] == 1
    assert len(generator["jpeg_quality"]) == 24 and generator["table"] in (
        "wood",
        "checker",
        "white",
        "marble",
    )
    assert _truth(films["mujoco"])["generator"]["renderer"] == "MuJoCo (OpenGL)"
    frames = first_frames(films)
    masks = film_masks(films["cycles"])
    table = ~(masks["rack"][0] | masks["mug"][0])
    assert np.abs(frames[0][table] - frames[1][table]).mean() > 20
