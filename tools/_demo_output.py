"""Write a generated demo folder without losing what was there if generation fails.

Both generators (tools/make_demo.py, tools/make_varied_demo.py) write into a staging
folder next to the output and move the files they generate into place only when the
whole demo was written; files in the output folder that a generator does not write
(notes, a user's own edits) are left alone. A folder that holds things no generator of the project made
(no truth.json of one) is refused before anything is written: its ``masks/`` or ``video.mp4`` would be
replaced. ``check_owned`` refuses a folder another generator made too (tools/make_shelve_demo.py and
make_insert_demo.py use it).
"""

from __future__ import annotations

import contextlib
import json
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

    Raises:
        ValueError: ``out`` is a file, or a folder that is not empty and that no generator made.
    """
    check_owned(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        yield staging
        install_generated(staging, out, names)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def check_owned(out: Path, tool: str | None = None) -> None:
    """Refuse an output folder the generator ``tool`` (or, without one, any generator) did not make.

    Args:
        out: The demo folder asked for (resolved path).
        tool: The generator's path as its truth.json names it (``generator.tool``), or None for any.

    Raises:
        ValueError: If ``out`` is a file, or a folder that is not empty and whose truth.json was not written
            by ``tool`` (by a generator): its files would be replaced.
    """
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return
    if not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a new or empty folder")
    try:
        made_by = json.loads((out / "truth.json").read_text())["generator"]["tool"]
    except (OSError, ValueError, KeyError, TypeError):
        made_by = None
    if made_by is None or (tool is not None and made_by != tool):
        who = tool or "no generator of this project"
        raise ValueError(
            f"--out {out} holds files {who} did not make (its truth.json is not one it wrote); "
            "give a new or empty folder"
        )
