"""One run-options object for the command line and Blender (issue 27): every option of ``real2gym run``
is a field of ``RunOptions`` with its flag, and the command line builds it from its arguments."""

from __future__ import annotations

import argparse

from real2gym.real2gym_addon import cli
from real2gym.real2gym_addon.run_options import (
    COMMAND_LINE_FLAGS,
    PRESENTATION_FLAGS,
    RunOptions,
    option_names,
)


def _flags(command: str) -> set[str]:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = commands.choices[command]
    return {max(action.option_strings, key=len) for action in sub._actions if action.option_strings}


def test_every_flag_of_run_is_an_option_or_presentation() -> None:
    flags = _flags("run")
    assert flags == set(COMMAND_LINE_FLAGS.values()) | set(PRESENTATION_FLAGS) | {"--out"}, flags ^ (
        set(COMMAND_LINE_FLAGS.values()) | set(PRESENTATION_FLAGS) | {"--out"}
    )
    assert set(COMMAND_LINE_FLAGS) == option_names()


def test_segment_takes_the_same_options_less_those_after_segmenting() -> None:
    assert _flags("segment") - {"--object"} <= _flags("run")


def test_the_command_line_builds_the_options_from_its_arguments() -> None:
    args = cli.build_parser().parse_args(
        ["run", "demo", "--out", "out", "--backend", "flow_warp", "--depth-model", "m", "--force", "--no-blend",
         "--repair", "--repair-rounds", "3", "--device", "cpu"]
    )  # fmt: skip
    options = cli._run_options(args)
    assert options == RunOptions(
        segmentation=cli._segmentation_options(args), depth_model="m", force=True, write_blend=False,
        repair=True, repair_rounds=3,
    )  # fmt: skip
    assert options.segmentation.backend == "flow_warp" and options.segmentation.device == "cpu"
    defaults = cli._run_options(cli.build_parser().parse_args(["run", "demo", "--out", "out"]))
    assert defaults == RunOptions()
