"""Exported scenes as Gymnasium environments (needs ``gymnasium``; no Blender).

``real2gym export-gym OUT --to DIR`` writes the folder; ``make_env(DIR)`` opens it.
:func:`register` adds the id :data:`ENV_ID` (``gymnasium.make(ENV_ID, path=DIR)``).
"""

from __future__ import annotations

ENV_ID = "real2gym/Scene-v0"


def make_env(path, **kwargs):
    """The environment of an exported folder (:class:`~.env.Real2GymEnv`)."""
    from .env import make_env as _make

    return _make(path, **kwargs)


def register() -> None:
    """Registers :data:`ENV_ID` with Gymnasium (a scene on a path: ``gymnasium.make(ENV_ID, path=DIR)``)."""
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=make_env, disable_env_checker=False)


__all__ = ["ENV_ID", "make_env", "register"]
