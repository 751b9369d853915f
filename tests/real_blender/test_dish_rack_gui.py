"""A plate shelved upright in a dish rack's slot, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_dish_rack_demo.py films a short shelving (72 frames at 10 fps, 320x240: a plate standing on its
edge taken by its top rim out of a one-slot stand, carried and set upright in one of a four-slot rack's
slots) with the robot's recording; the command line runs it on its true masks and it verifies; Blender
opens the run five frames after the release and takes the user guide's screenshot of it (task_gui.py): the
plate in its slot, the hand rising, the Real2Gym tab's verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_gui import open_task_run

pytestmark = [pytest.mark.gui]


def test_a_plate_shelved_in_a_dish_rack_in_the_gui(tmp_path: Path) -> None:
    result = open_task_run(tmp_path, "make_dish_rack_demo.py", "320x240", "dish_rack", "release", 5, scroll=8)
    assert {"plate", "stand", "dish_rack", "plate sim", "dish_rack sim", "Real2Gym Camera"} <= set(
        result["objects"]
    )
    assert {"plate", "plate sim"} <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp plate", "release plate"} <= set(markers)
    assert result["frame"] == markers["release plate"] + 5
