"""Writes the generated parts of the docs from the code's tables.

docs/checks.md's table of checks comes from ``real2gym_addon/verify/registry.py``'s
``CHECKS``: it is rewritten between the ``<!-- checks table -->`` and
``<!-- end checks table -->`` comments; its table of task types from
``real2gym_addon/tasks``' ``TASKS``, between ``<!-- tasks table -->`` and
``<!-- end tasks table -->``. Everything else in the file is left as written.
tests/core/test_check_registry.py and test_task_table.py fail when the file is out of date.

    .venv/bin/python tools/gen_docs.py          # rewrite docs/checks.md
    .venv/bin/python tools/gen_docs.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from real2gym.real2gym_addon.tasks import TASKS
from real2gym.real2gym_addon.verify.registry import CHECKS

CHECKS_DOC = Path(__file__).resolve().parent.parent / "docs" / "checks.md"
BEGIN, END = "<!-- checks table -->", "<!-- end checks table -->"
TASKS_BEGIN, TASKS_END = "<!-- tasks table -->", "<!-- end tasks table -->"


def _first_paragraph(function) -> str:
    doc = (function.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def checks_table() -> str:
    """The table of checks, as Markdown: name, panel label, what it needs, keyframes, suggestion."""
    lines = [
        "| check | panel | passes when | keyframes | suggests |",
        "|---|---|---|---|---|",
    ]
    for check in CHECKS.values():
        events = ", ".join(check.events) or "-"
        suggests = _first_paragraph(check.suggest) if check.suggest is not None else "-"
        lines.append(
            f"| `{check.name}` | {_cell(check.label)} | {_cell(check.needs)} | {events} | {_cell(suggests)} |"
        )
    return "\n".join(lines)


def tasks_table() -> str:
    """The table of task types, as Markdown: name, target, whether the hand lets go, keyframes, success."""
    lines = [
        "| task | target | the hand lets go | keyframes | succeeds when |",
        "|---|---|---|---|---|",
    ]
    for task in TASKS.values():
        target = "needed" if task.needs_target else "-"
        releases = "yes" if task.releases else "no (it may hold the object to the end)"
        lines.append(f"| `{task.name}` | {target} | {releases} | {', '.join(task.keyframes)} | "
                     f"{_cell(_first_paragraph(task.success))} |")  # fmt: skip
    return "\n".join(lines)


def _replaced(text: str, begin: str, end_marker: str, table: str) -> str:
    start, end = text.find(begin), text.find(end_marker)
    if start < 0 or end < start:
        raise ValueError(f"docs/checks.md needs the markers {begin} and {end_marker} around the table")
    return text[: start + len(begin)] + "\n" + table + "\n" + text[end:]


def with_checks_table(text: str) -> str:
    """``text`` (docs/checks.md's) with its marked block replaced by :func:`checks_table`.

    Raises:
        ValueError: The markers are missing.
    """
    return _replaced(text, BEGIN, END, checks_table())


def with_tasks_table(text: str) -> str:
    """``text`` with its marked block of task types replaced by :func:`tasks_table`.

    Raises:
        ValueError: The markers are missing.
    """
    return _replaced(text, TASKS_BEGIN, TASKS_END, tasks_table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the docs are up to date")
    args = parser.parse_args(argv)
    text = CHECKS_DOC.read_text(encoding="utf-8")
    wanted = with_tasks_table(with_checks_table(text))
    if args.check:
        if wanted != text:
            print(f"{CHECKS_DOC} is out of date: run tools/gen_docs.py", file=sys.stderr)
            return 1
        return 0
    if wanted != text:
        CHECKS_DOC.write_text(wanted, encoding="utf-8")
        print(f"wrote {CHECKS_DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
