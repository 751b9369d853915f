"""Makes the in-memory packages a pool worker's tasks live in (see :mod:`.executors`).

Run as a script in each worker (``runpy.run_path``), not imported: the package it
would be imported from may be one of those it makes. ``PACKAGES`` (given by the
parent) lists ``(dotted name, folders)``, parents first; those already importable
are left alone.
"""

import sys
import types

for name, folders in PACKAGES:  # noqa: F821 - given by run_path's init_globals
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = list(folders)
        sys.modules[name] = package
