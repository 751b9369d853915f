"""Write a generated demo folder without losing what was there if generation fails.

Both generators (tools/make_demo.py, tools/make_varied_demo.py) write into a staging
folder next to the output and move the files they generate into place only when the
whole demo was written; files in the output folder that a generator does not write
(notes, a user's own edits) are left alone.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path


def install_generated(staging: Path, out: Path, names: Iterable[str]) -> None:
    """Moves the generated files into ``out``, replacing earlier generated ones only.

    Args:
        staging: The folder the generator wrote into.
        out: The demo folder; created if missing.
        names: The file and folder names a generator writes. Each one is removed from
            ``out`` first, so that a file the new run does not write (``trajectory.json``
            without ``--with-trajectory``) does not stay from an earlier run.
    """
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        old = out / name
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()
        if (staging / name).exists():
            (staging / name).rename(old)


@contextlib.contextmanager
def staged_output(out: Path, names: Iterable[str]) -> Iterator[Path]:
    """Yields a fresh staging folder beside ``out``; installs its files there on success.

    The staging folder is removed in every case; on an exception nothing in ``out`` changes.

    Args:
        out: The demo folder (resolved path); its parent is created if missing.
        names: The file and folder names the generator writes (see `install_generated`).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        yield staging
        install_generated(staging, out, names)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
