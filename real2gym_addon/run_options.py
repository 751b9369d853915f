"""What a run does, set the same way from the command line and from Blender.

:class:`RunOptions` holds every option of ``real2gym run`` that changes what a run does;
``cli`` builds it from the arguments and the Blender side from the scene's settings
(``state/run_options.py``), and :meth:`~.pipeline.PipelineRun.from_options` starts a run
from it. :data:`COMMAND_LINE_FLAGS` names the flag of each; a test fails when the command
line or Blender lacks one.
"""

from __future__ import annotations

import dataclasses

from .segmentation.backends import SegmentationOptions
from .verify.margin import DEFAULT_RUNS

REPAIR_ROUNDS = 5
"""Repair rounds unless the user says otherwise."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Every setting of a run beyond its two folders and how far it goes.

    Attributes:
        segmentation: The segmentation backend and its settings.
        depth_model: A monocular metric depth model's folder that gives an RGB-only demo its depth;
            None for none.
        force: Replace an earlier run whose report logs fixes (refused otherwise).
        write_blend: Write scene.blend (Blender always builds and saves its scene).
        repair: When the scene does not verify, apply the suggested fixes in turn.
        repair_rounds: At most this many repair rounds.
        margin: Perturbed runs after the verification (``verify.margin``); 0 for none.
    """

    segmentation: SegmentationOptions = dataclasses.field(default_factory=SegmentationOptions)
    depth_model: str | None = None
    force: bool = False
    write_blend: bool = True
    repair: bool = False
    repair_rounds: int = REPAIR_ROUNDS
    margin: int = DEFAULT_RUNS


def option_names() -> set[str]:
    """Every option as a dotted name (``segmentation.backend``, ``force``)."""
    names = set()
    for field in dataclasses.fields(RunOptions):
        if field.name == "segmentation":
            names |= {f"segmentation.{inner.name}" for inner in dataclasses.fields(SegmentationOptions)}
        else:
            names.add(field.name)
    return names


COMMAND_LINE_FLAGS = {
    "segmentation.backend": "--backend",
    "segmentation.sam2_checkpoint": "--sam2-checkpoint",
    "segmentation.sam2_config": "--sam2-config",
    "segmentation.device": "--device",
    "depth_model": "--depth-model",
    "force": "--force",
    "write_blend": "--no-blend",
    "repair": "--repair",
    "repair_rounds": "--repair-rounds",
    "margin": "--margin",
}
"""Option -> its flag of ``real2gym run``."""
PRESENTATION_FLAGS = ("--help", "--quiet", "--json")
"""Flags of ``real2gym run`` that change how the command line shows a run, not what it does."""
