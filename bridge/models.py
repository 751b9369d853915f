"""Downloading a SAM2 checkpoint by name from Blender (the preferences' *Download*), as a job."""

from __future__ import annotations

from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.models import fetch_model
from ..state.preferences import ADDON_ID
from .jobs import ThreadJob


def _check_online() -> None:
    if not bpy.app.online_access:
        raise Real2GymError(
            "online access is off: allow it in Preferences > System > Network, "
            "or download with 'real2gym models fetch' on the command line"
        )


def _use_downloaded(name: str, path: Path) -> Path:
    """Makes a downloaded model the preferences' default checkpoint when none is set (main thread)."""
    addon = bpy.context.preferences.addons.get(ADDON_ID)
    if addon is not None and addon.preferences is not None and not addon.preferences.sam2_checkpoint:
        addon.preferences.sam2_checkpoint = name
    return path


def model_fetch_job(name: str) -> ThreadJob:
    """Downloading a SAM2 checkpoint, as a job (:mod:`.jobs`); its ``outcome`` is the file.

    Raises:
        Real2GymError: Online access is off.
    """
    _check_online()
    return ThreadJob(
        lambda progress: fetch_model(name, progress),
        lambda scene, path: _use_downloaded(name, path),
        name=f"the download of {name}",
    )
