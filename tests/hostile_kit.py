"""What the hostile-input tests share: a snapshot of a folder tree, and the one-line error check."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path


def file_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (links not followed) with a digest of its content."""
    state = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            state[key] = "link:" + os.readlink(path)
        elif path.is_file():
            state[key] = hashlib.sha1(path.read_bytes()).hexdigest()
        else:
            state[key] = "dir"
    return state


def assert_one_line(stderr: str, pattern: str, prefix: str = "real2gym: error: ") -> None:
    """One line on stderr, starting with ``prefix``, matching ``pattern``, and no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(prefix), stderr
    assert "Traceback" not in stderr
    assert re.search(pattern, lines[0]), f"{pattern!r} not in {lines[0]!r}"
