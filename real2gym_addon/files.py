"""Writing output without ever leaving half a result behind.

A run writes everything into a staging folder inside the output folder and moves
it into place only when the whole run succeeded (:class:`OutputFolder`). Single
files are written to a temporary name and renamed (:func:`write_json_atomic`),
so a reader never sees a truncated file, and an earlier run's output stays as it
was when a later run fails.

One writer at a time: an :class:`OutputFolder` holds an exclusive lock on the
output folder (``flock`` on the folder itself, so no lock file is left behind;
the system drops it when the process ends, however it ends). A second run into
the same folder is refused with a message. Holding the lock, a run removes the
staging folders that killed runs left behind: only folders that carry the
staging marker file a command wrote into them the moment it created them, so a
user's folder that merely looks like one is never touched. A run that fails in a
folder it created removes that folder again, so no empty output folder is left.

Where a command may write at all (never into the demo folder, a run's parts or a
folder it did not make) is decided in :mod:`.targets`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from .errors import OutputError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent runs are not detected there
    fcntl = None

_STAGING_PREFIX = ".real2gym-staging-"
STAGING_MARKER = ".real2gym-staging"
"""The file a command writes into each staging folder it creates; only such folders are ever cleaned up."""
DISK_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
MIN_FREE_BYTES = 8 * 1024 * 1024
"""Below this much free space a failed write is reported as a full disk."""


def _free_bytes(path: Path) -> int | None:
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def write_error(what: str, path: Path, reason: str) -> OutputError:
    """The error for a failed write: ``no space left on device: ...`` when the disk is full.

    Args:
        what: What could not be written ("cannot save scene.blend").
        path: Where.
        reason: The system's or library's reason, used when the disk is not full.
    """
    free = _free_bytes(path)
    if free is not None and free < MIN_FREE_BYTES:
        return OutputError(f"no space left on device: {what} to {path} ({free // 1024} KiB free)")
    return OutputError(f"{what} to {path}: {reason}")


def write_json_atomic(path: Path, data: Any) -> None:
    """Writes ``data`` as indented JSON to ``path`` through a temporary file.

    Args:
        path: The destination file; its folder must exist.
        data: Anything ``json.dump`` accepts.
    """
    write_text_atomic(path, json.dumps(data, indent=1, allow_nan=False) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Writes ``text`` (UTF-8) to ``path`` through a temporary file renamed into place.

    Args:
        path: The destination file; its folder must exist.
        text: The whole content.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_writable(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"the output path {folder} is a file, not a folder; choose another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(
            f"cannot create the output folder {folder}: {e.strerror}; choose another --out"
        ) from e
    probe = folder / f".real2gym-write-test-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise write_error(
            "cannot write into the output folder", folder, f"{e.strerror}; choose another --out"
        ) from e


class OutputFolder:
    """An output folder that receives a run's files all at once, or not at all.

    Files are written into :attr:`staging` (a hidden folder inside the output
    folder, so the final moves are renames on one file system). :meth:`commit`
    moves every entry into the output folder, replacing what an earlier run
    left there under the same name; :meth:`discard` removes the staging folder
    and leaves the output folder as it was (removing it if this run created it
    and it is empty). The folder is locked from creation to commit or discard.

    Args:
        path: The output folder; created if missing.

    Raises:
        OutputError: The folder cannot be created or written, or another run
            is writing into it.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).resolve()
        self._created = missing_parents(self.path)
        self._lock_fd: int | None = None
        try:
            _check_writable(self.path)
            self._lock()
            if self._lock_fd is not None:  # only a lock holder knows the others are dead
                remove_stale_staging(self.path)
            self.staging = make_staging(self.path)
        except OSError as e:
            self._release()
            raise write_error("cannot write into the output folder", self.path, str(e.strerror)) from e
        except BaseException:
            self._release()
            raise

    def _lock(self) -> None:
        self._lock_fd = lock_folder(self.path)

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the lock
            self._lock_fd = None
        remove_empty(self._created)  # a failed run leaves no empty output folder

    def commit(self, stale: tuple[str, ...] = ()) -> None:
        """Moves the staged files into the output folder, report.json last.

        Args:
            stale: Names an earlier run may have left in the output folder; those this
                commit does not bring are removed (nothing else of the folder is touched).
        """
        staged = {entry.name for entry in self.staging.iterdir()}
        for name in stale:
            old = self.path / name
            if name in staged or not (old.exists() or old.is_symlink()):
                continue
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
        entries = sorted(self.staging.iterdir(), key=lambda p: p.name == "report.json")
        for entry in entries:
            if entry.name == STAGING_MARKER:
                continue
            target = self.path / entry.name
            if target.is_dir() and not target.is_symlink():
                swap_in(entry, target)
            else:
                os.replace(entry, target)
        self._created = []  # the folder now holds a result: keep it
        self.discard()

    def discard(self) -> None:
        """Removes the staging folder; the output folder keeps its earlier content."""
        shutil.rmtree(self.staging, ignore_errors=True)
        self._release()

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def lock_folder(path: Path) -> int | None:
    """Takes the exclusive lock on ``path`` that every real2gym writer holds; close the result to drop it.

    Returns:
        The open descriptor holding the lock, or None where there are no advisory locks.

    Raises:
        OutputError: Another real2gym command holds it.
    """
    if fcntl is None:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutputError(
            f"another real2gym run is writing into {path}; wait for it to finish or choose another --out"
        ) from None
    return fd


def missing_parents(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Removes the folders a command created (deepest first, as :func:`missing_parents` lists them)
    while they are empty; stops at the first that is not."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            break


def make_staging(parent: Path, prefix: str = _STAGING_PREFIX) -> Path:
    """Creates a staging folder of a unique name in ``parent`` and marks it as the command's own.

    Args:
        parent: An existing folder (the output folder, or the folder beside the target).
        prefix: The start of the folder's name; a random part follows.

    Returns:
        The new, empty (but for its marker file) staging folder.
    """
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    (staging / STAGING_MARKER).write_bytes(b"")
    return staging


def swap_in(staging: Path, target: Path) -> None:
    """Puts the folder ``staging`` in the place of ``target`` by renames, never deleting first.

    An existing ``target`` is first renamed aside (to a unique name the command created),
    then ``staging`` takes its name, then the set-aside folder is removed. If the second
    rename fails, the old ``target`` is put back.

    Args:
        staging: A folder this command made and filled; its marker file is removed.
        target: The folder to replace or create; its parent exists, on the same file system.
    """
    (staging / STAGING_MARKER).unlink(missing_ok=True)
    os.chmod(staging, 0o755)  # made private by mkdtemp; the result is an ordinary folder
    if not (target.exists() or target.is_symlink()):
        staging.rename(target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}old-", dir=target.parent))
    os.replace(target, aside)  # onto the empty folder just made: a rename, atomic
    (aside / STAGING_MARKER).write_bytes(b"")  # if killed now, the next command removes it as debris
    try:
        staging.rename(target)
    except BaseException:
        (aside / STAGING_MARKER).unlink(missing_ok=True)
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def remove_stale_staging(folder: Path, prefix: str = _STAGING_PREFIX) -> None:
    """Removes staging folders left by commands that were killed (call holding the folder's lock).

    Only folders whose name starts with ``prefix`` and that hold the marker file
    :data:`STAGING_MARKER` are removed: a user's folder named alike is left alone.
    """
    for entry in folder.glob(f"{prefix}*"):
        if entry.is_dir() and not entry.is_symlink() and (entry / STAGING_MARKER).is_file():
            shutil.rmtree(entry, ignore_errors=True)
