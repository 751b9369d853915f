"""Every JSON file the tool reads comes through one door, with a size and a depth limit.

A demo's prompts.json, camera.json and trajectory.json, a run's report.json, a
variation plan, an environment's task.json: all are read by :func:`read_json_file`,
which refuses a file over :data:`MAX_JSON_BYTES` or nested deeper than
:data:`MAX_JSON_DEPTH` with the file named, before anything else looks at it. The
deepest structure the tool writes is six levels (a report's per-frame quaternions), so
the limit leaves room for users' additions and none for a file built to exhaust the
parser's stack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import Real2GymError

MAX_JSON_BYTES = 256 * 1024 * 1024
"""Larger JSON files are refused: a report of 100,000 frames and ten objects is about 150 MB."""
MAX_JSON_DEPTH = 64
"""Deeper nesting of lists and objects is refused."""


def read_json_file(
    path: Path | str, error: type[Real2GymError] = Real2GymError, what: str | None = None
) -> Any:
    """Reads a JSON file after checking its size, then its nesting depth.

    Args:
        path: The file.
        error: The error class to raise (the file's kind of error: DemoFolderError, OutputError...).
        what: How to name the file in messages; its path when None.

    Returns:
        The parsed content.

    Raises:
        FileNotFoundError: The file is missing (callers word that themselves).
        Real2GymError: Of class ``error``: too large, not UTF-8, not valid JSON, too deeply
            nested, or unreadable; the message names the file.
    """
    path = Path(path)
    name = what or str(path)
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise error(f"{name} is {size / 2**20:.0f} MB; JSON files over {MAX_JSON_BYTES >> 20} MB are refused")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{name} is not UTF-8 text (byte {e.start})") from e
    except IsADirectoryError as e:
        raise error(f"{name} is a folder, not a JSON file") from e
    except FileNotFoundError:
        raise
    except OSError as e:
        raise error(f"{name} cannot be read ({e.strerror or e})") from e
    return parse_json_text(text, name, error)


def parse_json_text(text: str, name: str, error: type[Real2GymError] = Real2GymError) -> Any:
    """Parses JSON text with the depth limit (see :func:`read_json_file`).

    Raises:
        Real2GymError: Of class ``error``, naming ``name``.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{name} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from e
    except RecursionError:
        raise error(
            f"{name} is nested more than {MAX_JSON_DEPTH} levels deep; at most that many are read"
        ) from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise error(f"{name} is nested more than {MAX_JSON_DEPTH} levels deep; at most that many are read")
    return data


def json_depth(data: Any) -> int:
    """How deeply lists and objects nest in ``data`` (a number or string is 0, ``[]`` is 1); any depth
    over :data:`MAX_JSON_DEPTH` is reported as ``MAX_JSON_DEPTH + 1``."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            return depth  # no need to walk further: refused either way
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
