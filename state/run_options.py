"""A run's options from the scene's settings: the command line's ``RunOptions``, set in Blender.

:data:`BLENDER_SOURCES` says where each option of ``real2gym run``
(``real2gym_addon.run_options``) is set in Blender: a property of ``scene.real2gym``, a
property of an operator, or nothing to set (Blender always builds and saves its scene). A
test fails when an option has no entry or its property is missing.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.run_options import RunOptions
from .segmentation import segmentation_options

BLENDER_SOURCES = {
    "segmentation.backend": "scene:segmentation_backend",
    "segmentation.sam2_checkpoint": "scene:sam2_checkpoint",
    "segmentation.sam2_config": "scene:sam2_config",
    "segmentation.device": "scene:segmentation_device",
    "depth_model": "scene:depth_model",
    "force": "scene:replace_fixed_run",
    "write_blend": "always: Blender builds the scene and saves scene.blend with every run",
    "repair": "operator:real2gym.repair",
    "repair_rounds": "operator:real2gym.repair.rounds",
    "margin": "scene:margin_runs",
}
"""Option (dotted, as ``RunOptions`` names it) -> where Blender sets it."""


def run_options(scene: bpy.types.Scene) -> RunOptions:
    """The run options of the scene's settings (repair is a button of its own, after the run)."""
    state = scene.real2gym
    depth_model = bpy.path.abspath(state.depth_model).strip() if state.depth_model.strip() else None
    return RunOptions(
        segmentation=segmentation_options(scene),
        depth_model=depth_model,
        force=state.replace_fixed_run,
        margin=state.margin_runs,
    )
