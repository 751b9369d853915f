"""The ``joint`` fix: an artist's correction of a moving part's joint (axis, pivot, range, friction).

The part keeps its shape and its closed pose; what changes is how it moves from there: about
which line a door turns, along which direction a drawer slides, how far, and how stiffly. The
values the video measured (``q`` per frame) stay as they were.
"""

from __future__ import annotations

import numpy as np

from ..errors import Real2GymError

MAX_HINGE_RANGE = 2 * np.pi
"""rad: the widest range a hinge may be given."""
MAX_SLIDE_RANGE = 2.0
"""m: the longest travel a slide may be given."""
FRICTION_RANGE = (0.0, 50.0)
"""N*m or N: the friction loss or damping a fix may give a joint."""


def find_part(entry: dict, part: str) -> dict:
    """The object entry's part ``part``; FixError-like Real2GymError naming the parts there are."""
    for candidate in entry.get("parts", []):
        if candidate["name"] == part:
            return candidate
    names = ", ".join(p["name"] for p in entry.get("parts", [])) or "none"
    raise Real2GymError(f"object '{entry['name']}' has no part '{part}' (parts: {names})")


def _vector(value, what: str) -> list[float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 3
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in value)
    ):
        raise Real2GymError(f"{what} must be three finite numbers, got {value!r:.60}")
    return [float(v) for v in value]


def check_joint_arguments(fix: dict) -> None:
    """Checks a ``joint`` fix's arguments, naming the one that is wrong."""
    if not isinstance(fix.get("part"), str):
        raise Real2GymError(f"a joint fix names the 'part' it changes, got {fix.get('part')!r:.40}")
    if fix.get("axis") is not None and np.linalg.norm(_vector(fix["axis"], "the joint's axis")) < 1e-6:
        raise Real2GymError("the joint's axis is zero; give its direction")
    if fix.get("pivot") is not None:
        _vector(fix["pivot"], "the joint's pivot (metres, world)")
    limits = fix.get("range")
    if limits is not None:
        if not isinstance(limits, list | tuple) or len(limits) != 2 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in limits
        ) or limits[0] >= limits[1]:  # fmt: skip
            raise Real2GymError(
                f"the joint's range must be two increasing numbers [lo, hi], got {limits!r:.60}"
            )
    for key in ("damping", "frictionloss"):
        value = fix.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not FRICTION_RANGE[0] <= value <= FRICTION_RANGE[1]):  # fmt: skip
            raise Real2GymError(
                f"the joint's {key} must be {FRICTION_RANGE[0]:g} to {FRICTION_RANGE[1]:g}, got {value!r:.40}"
            )


def joint(report: dict, entry: dict, fix: dict) -> None:
    """Changes the named part's joint in ``entry`` (an object of ``report``) as ``fix`` says."""
    part = find_part(entry, fix["part"])
    joint_entry = part["joint"]
    if fix.get("axis") is not None:
        axis = np.asarray(fix["axis"], float)
        joint_entry["axis_world"] = [round(float(v), 6) for v in axis / np.linalg.norm(axis)]
    if fix.get("pivot") is not None:
        joint_entry["pivot_world"] = [round(float(v), 6) for v in fix["pivot"]]
    if fix.get("range") is not None:
        lo, hi = (float(v) for v in fix["range"])
        widest = MAX_HINGE_RANGE if joint_entry["type"] == "hinge" else MAX_SLIDE_RANGE
        if hi - lo > widest:
            raise Real2GymError(
                f"part '{fix['part']}': a {joint_entry['type']}'s range may span at most {widest:g}"
            )
        closed = joint_entry.get("closed", lo)
        joint_entry["range"] = [lo, hi]
        joint_entry["closed"] = lo if abs(closed - lo) <= abs(closed - hi) else hi
    for key in ("damping", "frictionloss"):
        if fix.get(key) is not None:
            joint_entry[key] = float(fix[key])
    joint_entry["source"] = "edited"
