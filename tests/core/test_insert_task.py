"""The insert task's predicate: a peg in a socket's hole, as deep as the video shows it (less 2 mm) or the task's
own depth, inside the opening and aligned with it; its figures and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.tasks import TASKS, TaskState, task_type
from real2gym.real2gym_addon.tasks.inserting import inserted_depth

SOCKET = Shape("cup", (0.08, 0.08, 0.06), {"outer_radius": 0.04, "inner_radius": 0.018, "wall_thickness": 0.022,
                                          "bottom_thickness": 0.02})  # fmt: skip
PEG = Shape("cylinder", (0.03, 0.03, 0.1))
SOCKET_CENTRE = np.array([0.3, -0.1, 0.03])


def _state(sunk: float, offset: float = 0.0, tilt_deg: float = 0.0, **extra) -> TaskState:
    """The peg with its bottom ``sunk`` below the socket's top, ``offset`` off its axis along x, tilted."""
    turn = Rotation.from_euler("y", tilt_deg, degrees=True).as_matrix()
    bottom = SOCKET_CENTRE + [offset, 0.0, 0.03 - sunk]
    centre = bottom + turn @ [0.0, 0.0, 0.05]
    return TaskState(centre, PEG, 0.1, SOCKET_CENTRE, SOCKET, target_rotation=np.eye(3), moved_rotation=turn,
                     **extra)  # fmt: skip


def test_a_peg_seated_as_deep_as_the_video_shows_passes() -> None:
    result = task_type("insert").success(_state(0.04, expected_depth=0.04))
    assert result["passed"] and result["inside_opening"] and result["aligned"]
    assert result["inserted_depth_m"] == pytest.approx(0.04) and result["required_depth_m"] == pytest.approx(
        0.038
    )
    assert inserted_depth(_state(0.015)) == pytest.approx(0.015)


@pytest.mark.parametrize(
    ("state", "why"),
    [
        (dict(sunk=0.035, expected_depth=0.04), "5 mm short of the video's depth"),
        (dict(sunk=-0.002, offset=0.0, expected_depth=0.04), "standing on the rim"),
        (dict(sunk=0.04, offset=0.025, expected_depth=0.04), "beside the hole"),
        (dict(sunk=0.03, tilt_deg=30.0, expected_depth=0.03), "leaning 30 degrees"),
        (dict(sunk=0.02, depth=0.03, expected_depth=0.02), "short of the task's own depth"),
    ],
)
def test_a_peg_not_inserted_fails(state, why) -> None:
    assert not task_type("insert").success(_state(**state))["passed"], why


def test_the_tasks_depth_overrides_the_videos() -> None:
    result = task_type("insert").success(_state(0.025, depth=0.02, expected_depth=0.04))
    assert result["passed"] and result["required_depth_m"] == 0.02
    tilted = task_type("insert").success(_state(0.04, tilt_deg=8.0, expected_depth=0.04))
    assert tilted["passed"] and tilted["tilt_deg"] == pytest.approx(8.0)
    assert math.isclose(
        TASKS["insert"].task_json({"name": "socket", "size": [0.08, 0.08, 0.06]})["align_limit_rad"], 0.2
    )


@pytest.mark.parametrize("depth", [0, -0.01, 2.0, "deep", True])
def test_a_bad_depth_is_refused_naming_the_field(depth) -> None:
    task = {"type": "insert", "object": "peg", "target": "socket", "depth": depth}
    assert "'depth' is metres" in TASKS["insert"].check_fields(task, ["peg", "socket"])
