"""A hung mug, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_hang_demo.py films a short hang (72 frames at 10 fps, 640x480: a mug taken by its rim, carried
to the mug tree and hung on a peg) with the robot's recording; the command line runs it on its true masks
and it verifies; Blender opens the run ten frames after the mug comes to rest on the peg and takes the
user guide's screenshot of it (task_gui.py). The same with the mug hung on a hook board on a wall (``--wall``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_gui import open_task_run

pytestmark = [pytest.mark.gui]


def test_a_hung_mug_in_the_gui(tmp_path: Path) -> None:
    result = open_task_run(tmp_path, "make_hang_demo.py", "640x480", "hang", "hang", 10)
    assert {"mug", "rack", "mug sim", "rack sim", "Real2Gym Camera"} <= set(result["objects"])
    assert {"mug", "mug sim"} <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp mug", "release mug", "hang mug"} <= set(markers)
    assert result["frame"] == markers["hang mug"] + 10


def test_a_mug_hung_on_a_wall_hook_in_the_gui(tmp_path: Path) -> None:
    result = open_task_run(
        tmp_path, "make_hang_demo.py", "640x480", "hang_wall", "hang", 10, extra=("--wall",)
    )
    assert {"mug", "rack", "mug sim", "rack sim", "Real2Gym Camera"} <= set(result["objects"])
    markers = dict(result["markers"])
    assert {"grasp mug", "release mug", "hang mug"} <= set(markers)
    assert result["review"]["verification"] == "PASSED"
