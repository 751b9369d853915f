"""A book shelved, in the real Blender GUI (Debian's 4.3.2 under Xvfb).

tools/make_shelve_demo.py films a short shelving (72 frames at 10 fps, 320x240: a book-like box taken from
the table, carried in through the shelf's open front and set on its middle board) with the robot's
recording; the command line runs it on its true masks and it verifies; Blender opens the run five frames
after the release and takes the user guide's screenshot of it (task_gui.py): the book on the board, the
hand backing out, the Real2Gym tab's verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_gui import open_task_run

pytestmark = [pytest.mark.gui]


def test_a_shelved_book_in_the_gui(tmp_path: Path) -> None:
    # The book's frames to check (it is partly hidden in the shelf) push the verdict down: scrolled to it.
    result = open_task_run(tmp_path, "make_shelve_demo.py", "320x240", "shelve", "release", 5, scroll=8)
    assert {"book", "shelf", "book sim", "shelf sim", "Real2Gym Camera"} <= set(result["objects"])
    assert {"book", "book sim"} <= set(result["actions"])
    markers = dict(result["markers"])
    assert {"grasp book", "release book"} <= set(markers)
    assert result["frame"] == markers["release book"] + 5 and result["scrolled"] == 8
