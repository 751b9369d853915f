"""What the command line's parsers share: exit codes and the argument types that check a value
where it is typed (docs/cli.md, "Argument ranges").

``cli`` and ``cli_variants`` both build their subcommands from these; neither imports the other's
internals.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

EXIT_VERIFIED = 0
EXIT_NOT_VERIFIED = 1
EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 3
EXIT_CANCELLED = 130
MAX_JOBS = 64


def number_in(low: float, high: float, what: str = "a number") -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"wants {what}, got {text!r}") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must lie between {low:g} and {high:g}, got {text}")
        return value

    return parse


def folder_path(text: str) -> str:
    """An argparse type: a folder's path, never empty or blank (an empty path would mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; name a folder")
    return text


def file_path(text: str) -> str:
    """An argparse type: a file's path, never empty or blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; name a file")
    return text


def whole_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in ``[low, high]``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"wants a whole number, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"must be {low} or more, got {value}"
                if high is None
                else f"must be {low} to {high}, got {value}"
            )
        return value

    return parse


def triple(low: float, high: float, what: str) -> Callable[[str], list[float]]:
    """An argparse type: three comma-separated finite numbers in ``[low, high]``."""
    number = number_in(low, high)

    def parse(text: str) -> list[float]:
        parts = text.split(",")
        if len(parts) != 3:
            raise argparse.ArgumentTypeError(f"wants {what} as three comma-separated numbers, got {text!r}")
        return [number(part) for part in parts]

    return parse
