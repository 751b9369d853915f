"""Writing output without ever leaving half a result behind.

A run writes everything into a staging folder inside the output folder and moves
it into place only when the whole run succeeded (:class:`OutputFolder`). Single
files are written to a temporary name and renamed (:func:`write_json_atomic`),
so a reader never sees a truncated file, and an earlier run's output stays as it
was when a later run fails.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from .errors import OutputError

_STAGING_PREFIX = ".real2gym-staging-"


def write_json_atomic(path: Path, data: Any) -> None:
    """Writes ``data`` as indented JSON to ``path`` through a temporary file.

    Args:
        path: The destination file; its folder must exist.
        data: Anything ``json.dump`` accepts.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(
            f"cannot create the output folder {folder}: {e.strerror}; choose another --out"
        ) from e
    if not folder.is_dir():
        raise OutputError(f"the output path {folder} is a file, not a folder; choose another --out")
    probe = folder / f".real2gym-write-test-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise OutputError(
            f"the output folder {folder} is not writable ({e.strerror}); choose another --out"
        ) from e


class OutputFolder:
    """An output folder that receives a run's files all at once, or not at all.

    Files are written into :attr:`staging` (a hidden folder inside the output
    folder, so the final moves are renames on one file system). :meth:`commit`
    moves every entry into the output folder, replacing what an earlier run
    left there under the same name; :meth:`discard` removes the staging folder
    and leaves the output folder as it was.

    Args:
        path: The output folder; created if missing.

    Raises:
        OutputError: The folder cannot be created or written.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).resolve()
        _check_writable(self.path)
        self.staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=self.path))

    def commit(self) -> None:
        """Moves the staged files into the output folder, report.json last."""
        entries = sorted(self.staging.iterdir(), key=lambda p: p.name == "report.json")
        for entry in entries:
            target = self.path / entry.name
            if target.is_dir() and not target.is_symlink():
                trash = self.path / f"{_STAGING_PREFIX}old-{uuid.uuid4().hex}"
                target.rename(trash)
                entry.rename(target)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.replace(entry, target)
        self.discard()

    def discard(self) -> None:
        """Removes the staging folder; the output folder keeps its earlier content."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
