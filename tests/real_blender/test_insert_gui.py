"""A peg put into a socket's hole, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_insert_demo.py films a short insertion (72 frames at 10 fps, 320x240: a peg taken from above,
carried over a socket and put down into its round hole, a few millimetres wider than the peg) with the
robot's recording; the command line runs it on its true masks and it verifies; Blender opens the run five
frames after the release and takes the user guide's screenshot of it (task_gui.py): the peg in the hole, the
hand rising, the Real2Gym tab's verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_gui import open_task_run

pytestmark = [pytest.mark.gui]


def test_an_inserted_peg_in_the_gui(tmp_path: Path) -> None:
    result = open_task_run(tmp_path, "make_insert_demo.py", "320x240", "insert", "release", 5, scroll=8)
    assert {"peg", "socket", "peg sim", "socket sim", "Real2Gym Camera"} <= set(result["objects"])
    assert {"peg", "peg sim"} <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp peg", "release peg"} <= set(markers)
    assert result["frame"] == markers["release peg"] + 5
