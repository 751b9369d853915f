"""A carried block that leans: its tilt is found from the depth (6-DoF) and kept through the report.

The demo is generated with the gripper turning the block by 25 degrees while it
carries it (tools/make_demo.py --carry-tilt). Floors are looser than the
benchmark's (benchmarks/bench_geometry.py, scene "tilted_carry").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from generated_demos import generate, true_masks
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import load_demo
from real2gym.real2gym_addon.geometry.report_io import geometry_from_report
from real2gym.real2gym_addon.geometry.stage import run_geometry
from real2gym.real2gym_addon.scene import SceneDescription
from real2gym.real2gym_addon.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
TILTED = ["--seed", "2", "--camera-azimuth", "-40", "--carry-tilt", "25", "--with-trajectory"]


@pytest.fixture(scope="module")
def tilted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tilt") / "demo"
    made = generate(folder, *TILTED)
    assert made.returncode == 0, made.stderr[-2000:]
    demo = load_demo(folder)
    return demo, load_truth(folder), run_geometry(demo, true_masks(folder))


def _lean(up: np.ndarray, normal: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(up @ normal, -1.0, 1.0))))


def test_the_tilt_is_found_and_upright_stays_upright(tilted) -> None:
    _, truth, geometry = tilted
    block = next(o for o in geometry.objects if o.name == "block")
    camera_from_world = np.linalg.inv(geometry.world_from_camera)
    normal = geometry.table.normal_cam
    errors, upright = [], []
    for frame, truth_frame in enumerate(truth.objects["block"].frames):
        true_up = Rotation.from_quat(truth_frame.quaternion_cam[[1, 2, 3, 0]]).as_matrix()[:, 2]
        found_up = camera_from_world[:3, :3] @ block.motion.rotation(frame)[:, 2]
        if _lean(true_up, normal) > 20:
            errors.append(_lean(true_up, found_up))
        elif _lean(true_up, normal) < 1:
            upright.append(_lean(found_up, normal))
    assert len(errors) > 10
    assert np.sqrt(np.mean(np.square(errors))) < 5.0, errors
    assert np.percentile(upright, 95) < 3.0  # no tilt made up where there is none
    cup = next(o for o in geometry.objects if o.name == "cup")
    assert cup.motion.tilts is None


def test_the_tilt_survives_the_report(tilted) -> None:
    demo, _, geometry = tilted
    description = SceneDescription.from_demo(demo)
    description.set_geometry(geometry)
    again = next(o for o in geometry_from_report(description.report()).objects if o.name == "block")
    block = next(o for o in geometry.objects if o.name == "block")
    for frame in range(0, demo.video.frames, 7):
        assert np.allclose(again.motion.rotation(frame), block.motion.rotation(frame), atol=1e-3)
