"""The installed ``real2gym`` command: the core's command line, with scene.blend where bpy is.

The core (:mod:`real2gym_addon.cli`) never imports Blender code. This entry
point, on the Blender side, hands it the scene builder
(:func:`.pipeline.stage_headless_blend`) when the PyPI ``bpy`` module is
installed, and the reason for no scene.blend when it is not. bpy is imported
only then, so the command also runs in a plain Python.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from ..real2gym_addon import cli


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line (see :func:`real2gym_addon.cli.main`) and returns its exit code."""
    if importlib.util.find_spec("bpy") is None:
        return cli.main(
            argv, no_blend_note="the bpy module is not installed, so scene.blend was not written (see README)"
        )
    from .pipeline import stage_headless_blend

    return cli.main(argv, build_scene=stage_headless_blend)
