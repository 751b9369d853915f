"""Where the GUI tests put the user guide's screenshots.

By default into ``test-output/gui/doc-images/`` (so a test run leaves the
repository's files alone); with ``REAL2GYM_UPDATE_DOC_IMAGES=1`` into
``docs/images/``, to refresh the user guide.
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def doc_images_dir() -> Path:
    """The folder for the user guide's screenshots (created)."""
    if os.environ.get("REAL2GYM_UPDATE_DOC_IMAGES") == "1":
        folder = REPO / "docs" / "images"
    else:
        folder = REPO / "test-output" / "gui" / "doc-images"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
