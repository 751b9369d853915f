"""Object names become file and folder names: one check, and one containment test.

An object's name from prompts.json (or from a report read back) names its mask
folder, its MJCF bodies and its Blender objects. A name is a name, never a path
(``docs/data-contract.md``): :func:`check_object_name` rejects anything that
could leave the output folder or break on another operating system, with a
message naming the object. :func:`inside` is the second line of defence: every
place that turns a name or a recorded path into a file path checks that the
result stays in its folder.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from .errors import Real2GymError

MAX_NAME_LENGTH = 64
"""Characters in an object name; mask files and MJCF names add a little to it."""
MAX_FILE_NAME_BYTES = 255
"""The longest file or folder name (in bytes) that Linux, macOS and Windows file systems all take."""
NAME_SUFFIX_BYTES = 24
"""Bytes kept spare for what the tool adds to a name in a file name (``obj_`` before an MJCF name, ``_2``
after a repeated one, ``_visual.obj``)."""
MAX_NAME_BYTES = MAX_FILE_NAME_BYTES - NAME_SUFFIX_BYTES
"""An object name's length in UTF-8 bytes, so that every file named after it fits in 255 bytes."""

_FORBIDDEN = set('/\\:*?"<>|')
"""Separators on any system, and what Windows refuses in a file name."""

_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}


def name_problem(name: object) -> str | None:
    """Says why ``name`` cannot be an object name, or None when it can.

    Args:
        name: The name as read from JSON.

    Returns:
        A short reason for the user ("contains '/'", "starts with a dot"), or None.
    """
    if not isinstance(name, str) or not name.strip():
        return "must be a non-empty string"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed"
    encoded = len(name.encode("utf-8", errors="surrogatepass"))
    if encoded > MAX_NAME_BYTES:
        return (
            f"is {encoded} bytes long in UTF-8; at most {MAX_NAME_BYTES} are allowed, so that the files named "
            f"after it fit the {MAX_FILE_NAME_BYTES}-byte limit of file systems"
        )
    for char in name:
        if char in _FORBIDDEN:
            return f"contains {char!r}; a name is a name, not a path"
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"contains the control or invisible character U+{ord(char):04X}"
    if ".." in name:
        return "contains '..'"
    if name.startswith("."):
        return "starts with a dot (a hidden file name)"
    if name != name.strip() or name.endswith("."):
        return "starts or ends with a space, or ends with a dot"
    if name.split(".")[0].lower() in _WINDOWS_RESERVED:
        return "is a reserved device name on Windows"
    return None


def check_object_name(name: object, where: str, error: type[Real2GymError]) -> str:
    """Returns ``name`` when it is a safe object name; raises otherwise.

    Args:
        name: The name as read from JSON.
        where: Where it was read, for the message (``"prompts.json, objects[2]"``).
        error: The error class to raise (the file's kind of error).

    Raises:
        Real2GymError: Of class ``error``, naming the object and what is wrong with it.
    """
    problem = name_problem(name)
    if problem is not None:
        shown = repr(name) if not isinstance(name, str) else repr(name[: MAX_NAME_LENGTH + 16])
        raise error(
            f"{where}: the object name {shown} {problem}; use letters, digits, spaces, '_', '-' or '.'"
        )
    return name


def name_key(name: str) -> str:
    """The form under which two names are the same file on some file system: case folded (macOS,
    Windows) and Unicode-normalised (macOS stores decomposed forms)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def clashing_names(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of distinct names that would name the same file on macOS or Windows (``Cup`` and
    ``cup``; ``café`` composed and decomposed), in the order given."""
    first: dict[str, str] = {}
    clashes = []
    for name in names:
        key = name_key(name)
        if key in first and first[key] != name:
            clashes.append((first[key], name))
        first.setdefault(key, name)
    return clashes


def inside(root: Path | str, relative: str | Path, what: str, error: type[Real2GymError]) -> Path:
    """``root / relative``, checked to stay inside ``root`` after resolving links and ``..``.

    Args:
        root: The folder the path must stay in.
        relative: A relative path (a name, or a path recorded in a report).
        what: What the path is, for the message (``"the masks of 'cup'"``).
        error: The error class to raise.

    Returns:
        The joined path (not resolved).

    Raises:
        Real2GymError: Of class ``error``, when the path is absolute or leaves ``root``.
    """
    relative = str(relative)
    if not relative or "\x00" in relative:
        raise error(f"{what}: {relative!r} is not a path")
    if Path(relative).is_absolute() or (len(relative) > 1 and relative[1] == ":"):
        raise error(f"{what}: {relative!r} is an absolute path; it must lie inside {root}")
    joined = Path(root) / relative
    base = Path(root).resolve()
    resolved = joined.resolve()
    if resolved != base and base not in resolved.parents:
        raise error(f"{what}: {relative!r} leads outside {root}")
    return joined
