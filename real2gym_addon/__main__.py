"""``python -m real2gym_addon``: the core's command line alone, without Blender.

It writes no scene.blend; the installed ``real2gym`` command (``bridge/command.py``)
does, where the bpy module is installed.
"""

import sys

from .cli import main

sys.exit(main())
