"""Where a command may write: the one rule every writing command follows (docs/cli.md).

A command writes only into a folder it creates, an empty folder, or a folder that
holds its own earlier output, recognised by a marker it wrote there: a run's
``report.json``, or the manifest :data:`MANIFEST_NAME` of an environment folder
(``export-gym``) or a batch root. It never writes into or over a demo folder, a run's
folder or its parts (masks, mjcf, variants), or a folder that holds either of them.
Replacing its own earlier output needs ``--force`` where the output is a deliverable of
its own (an environment, a batch); a run is replaced by a new run of the same command
unless its report logs an artist's fixes (``pipeline.refuse_to_lose_fixes``). Either
way the new output is staged in a folder of a unique name the command created and
swapped in by renames (:func:`.files.swap_in`), never by deleting first.

Commands that change a finished run (``fix``, ``verify``, ``compare``, ``vary``,
``segment --object``) write into that run's folder only, and only after reading its
report.json.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from .about import version_text
from .errors import OutputError, Real2GymError
from .files import STAGING_MARKER, write_json_atomic
from .json_files import read_json_file
from .report import REPORT_NAME

MANIFEST_NAME = ".real2gym-output.json"
"""The marker a command writes into an output folder that is not a run: what wrote it, and when."""
MASKS_NAME = "masks"
"""A run's masks folder: ``masks/<object>/000000.png ...``."""
MJCF_NAME = "mjcf"
"""A run's MJCF folder: ``mjcf/scene.xml`` and ``mjcf/assets/``."""
DEMO_FILES = ("prompts.json", "camera.json")
"""A folder with both is a demo folder (docs/data-contract.md)."""


@dataclasses.dataclass(frozen=True)
class OutputKind:
    """What a command writes, and how its earlier output is recognised.

    Attributes:
        name: In the user's words ("run", "environment", "batch").
        replace_needs_force: True when replacing an earlier output of this kind needs ``--force``.
    """

    name: str
    replace_needs_force: bool

    def holds_earlier_output(self, folder: Path) -> bool:
        """True when ``folder`` holds this kind's earlier output (its marker)."""
        if self.name == "run":
            return (folder / REPORT_NAME).is_file()
        return _manifest_kind(folder) == self.name


RUN = OutputKind("run", replace_needs_force=False)
ENVIRONMENT = OutputKind("environment", replace_needs_force=True)
BATCH = OutputKind("batch", replace_needs_force=True)


def _manifest_kind(folder: Path) -> str | None:
    try:
        data = read_json_file(folder / MANIFEST_NAME)
    except (OSError, Real2GymError):
        return None
    return data.get("kind") if isinstance(data, dict) and data.get("tool") == "real2gym" else None


def write_manifest(folder: Path, kind: OutputKind) -> None:
    """Writes the marker that makes ``folder`` recognisable as ``kind``'s own output."""
    write_json_atomic(
        folder / MANIFEST_NAME, {"tool": "real2gym", "kind": kind.name, "version": version_text()}
    )


def is_demo_folder(folder: Path) -> bool:
    """True when ``folder`` holds a demo's prompts.json and camera.json."""
    return all((folder / name).is_file() for name in DEMO_FILES)


def check_target(
    target: str | Path,
    option: str,
    kind: OutputKind,
    protected: Sequence[tuple[Path | str, str]] = (),
    force: bool = False,
) -> Path:
    """Checks that a command may write its output ``kind`` at ``target``; changes nothing.

    Args:
        target: The folder as the user gave it (``--out``, ``--to``).
        option: How the user gave it, for the message (``"--to"``).
        kind: What the command writes there.
        protected: Folders the target must neither be, lie in, nor hold, each with what it
            is for the message (``(demo_dir, "the demo folder")``).
        force: The user allowed replacing an earlier output of ``kind``.

    Returns:
        The target as a path (not resolved).

    Raises:
        OutputError: One line naming the option, the folder and what is wrong with it.
    """
    text = str(target)
    if not text.strip():
        raise OutputError(f"{option} is empty; name the folder to write")
    path = Path(text).expanduser()
    if path.is_symlink():
        raise OutputError(f"{option} {path} is a link; name a real folder (the link's target is left alone)")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{option} {path} is a file, not a folder; choose another {option}")
    resolved = path.resolve()
    for folder, what in protected:
        _refuse_overlap(resolved, Path(folder).resolve(), option, what)
    for parent in resolved.parents:
        if (parent / REPORT_NAME).is_file():
            raise OutputError(
                f"{option} {path} lies inside the run folder {parent}; a run's parts are its own"
            )
        if is_demo_folder(parent):
            raise OutputError(
                f"{option} {path} lies inside the demo folder {parent}; name a folder outside it"
            )
    if not path.is_dir() or not _holds_anything(path):
        return path
    if is_demo_folder(path):
        raise OutputError(f"{option} {path} is a demo folder; name a new or empty folder")
    if kind.holds_earlier_output(path):
        if kind.replace_needs_force and not force:
            raise OutputError(
                f"{option} {path} holds an earlier {kind.name}; pass --force to replace it, or name a new folder"
            )
        return path
    if kind is not RUN and RUN.holds_earlier_output(path):
        raise OutputError(f"{option} {path} is a run's folder; name a new or empty folder")
    raise OutputError(
        f"{option} {path} is not empty and holds no earlier {kind.name} of real2gym; "
        "name a new or empty folder (nothing in it was touched)"
    )


def _refuse_overlap(target: Path, folder: Path, option: str, what: str) -> None:
    if target == folder:
        raise OutputError(f"{option} {target} is {what}; name a new or empty folder")
    if folder in target.parents:
        raise OutputError(f"{option} {target} lies inside {what} {folder}; name a folder outside it")
    if target in folder.parents:
        raise OutputError(f"{option} {target} holds {what} {folder}; name a new or empty folder")


def _holds_anything(folder: Path) -> bool:
    """True when ``folder`` holds anything but staging debris of this tool's own."""
    for entry in folder.iterdir():
        if not (entry.is_dir() and (entry / STAGING_MARKER).is_file()):
            return True
    return False
