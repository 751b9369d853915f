"""Variants of a verified scene: a seeded plan, adapted demos, re-verified in parallel.

:func:`~.batch.vary` is the entry point (``real2gym vary``); :mod:`.plan` draws the
parameters, :mod:`.adapt` moves the demo's gripper path with the objects, :mod:`.run`
verifies one variant, :mod:`.executors` runs them here, in a process pool or on Ray.
"""
