"""What the geometry stage adds for a pour: the source's contents and the keyframes of its pour.

A pour's source holds ``contents`` (prompts.json, or the defaults with a warning), checked to fit its
fitted cavity as soon as it is fitted. Its ``pour_start`` and ``pour_end`` are where the video's tilt of it
passes the angle at which its contents start to leave: measured by tipping the fitted container with them
in MuJoCo (:func:`..mjcf.spill.probe_spill_angle`).
"""

from __future__ import annotations

import numpy as np

from ..errors import WarningLog
from ..mjcf.spill import probe_spill_angle
from ..tasks.base import tilt_between
from ..tasks.pouring import POUR
from .contents import Contents, fill_points, pour_events
from .motion import Motion
from .shapes import Shape


def contents_of(prompt, task, shape: Shape, log: WarningLog) -> Contents | None:
    """The object's contents: its prompt's, or for a pour's source without them the defaults (with a warning);
    checked to fit in its cavity (a clear error now, not at the export)."""
    contents = prompt.contents
    if contents is None and task.type == POUR.name and task.object == prompt.name:
        contents = Contents()
        log.warn("prompts", f"object '{prompt.name}' is poured from but has no 'contents': {contents.count} "
                 f"spheres of {contents.radius * 1000:g} mm assumed (give 'contents' in prompts.json)")  # fmt: skip
    if contents is not None:
        fill_points(shape, contents, prompt.name)
    return contents


def pour_keyframes(name: str, shape: Shape, motion: Motion, contents: Contents) -> list[dict]:
    """``pour_start`` and ``pour_end`` of the object ``name``: where its tilt in the video passes its
    contents' spill angle, going over and coming back."""
    tilts = np.array([tilt_between(np.eye(3), motion.rotation(f)) for f in range(len(motion.positions))])
    return pour_events(name, tilts, probe_spill_angle(shape, contents))
