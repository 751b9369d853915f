"""A pour, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_pour_demo.py films a short pour (72 frames at 10 fps, 320x240: a cup of 30 spheres taken from the
side, tipped over a bowl and set back) with the robot's recording; the command line runs it on its true
masks and it verifies; Blender opens the run half a second after the pour starts and takes the user guide's
screenshot of it (task_gui.py): the tipped cup, the simulated spheres falling into the bowl, the Real2Gym
tab's verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_gui import open_task_run

pytestmark = [pytest.mark.gui]


def test_a_pour_in_the_gui(tmp_path: Path) -> None:
    result = open_task_run(tmp_path, "make_pour_demo.py", "320x240", "pour", "pour_start", 5)
    spheres = {f"cup contents {i:03d} sim" for i in range(30)}
    assert {"cup", "bowl", "cup sim", "bowl sim", "Real2Gym Camera"} | spheres <= set(result["objects"])
    assert {"cup", "cup sim"} | spheres <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp cup", "pour_start cup", "pour_end cup", "release cup"} <= set(markers)
    assert result["frame"] == markers["pour_start cup"] + 5
