"""``python -m real2gym_addon``: the ``real2gym`` command line."""

import sys

try:
    # The installed package (``real2gym``), which can also reach the Blender bridge.
    from real2gym.real2gym_addon.cli import main
except ImportError:
    from .cli import main

sys.exit(main())
