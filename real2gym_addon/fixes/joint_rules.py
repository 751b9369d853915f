"""The suggestion rule for moving parts: what to change in a joint after a failed check, from the evidence
the report holds.

Each part of each object is read on its own. What a failed check cannot say by itself (a handle torn from
the fingers, a door that lags the video) is explained from what the report measured besides the joint: the
video's value per frame (a range that stops short of it), a recorded hand that held the handle (its arc's
centre is where the door turns; its line, where a drawer slides), a hinge that leans a few degrees off
plumb or level (a door that swings under its own weight), and a friction or damping far above what doors
and drawers have (a part the hand cannot move as the video shows).
"""

from __future__ import annotations

import math

import numpy as np

from ..geometry.hand_arc import ARC_FIT, ARC_MIN_FRAMES, ARC_MIN_TURN, circle_about
from ..geometry.parts import DEFAULT_DAMPING, DEFAULT_FRICTIONLOSS, part_key
from .rules import SuggestionContext

PART_CHECKS = frozenset({"joint_fidelity", "grasp_held", "task_success", "penetration", "stability"})
"""A part's joint is suspected where one of these fails."""
RANGE_PAD = {"hinge": 0.02, "slide": 0.005}
"""rad, m: a range widened to the video's values goes this far past them."""
RANGE_SLACK = {"hinge": math.radians(1.0), "slide": 0.003}
"""rad, m: the video's value past a range's end by more than this is past it."""
SQUARE_WITHIN = math.radians(15.0)
"""A hinge this near plumb or level (but not on it) is suggested plumb or level."""
SQUARE_ALREADY = math.radians(0.2)
"""A hinge this near plumb or level is on it."""
STIFF = 10.0
"""A friction loss or damping this many times the documented default is suspected."""
PIVOT_OFF = 0.005
"""m: a hinge line this far from the held hand's arc centre is suggested there."""
SLIDE_MIN_TRAVEL = 0.03
"""m: a held hand must travel this far along a slide for its line to give the direction."""
SLIDE_OFF = math.radians(2.0)
"""A slide this far off the held hand's line is suggested along it."""


def joint_repair(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Widen a part's range to the video's values, make a hinge that leans a few degrees plumb or level,
    move a hinge to where a recorded hand holding its handle turned (or a slide along where it pulled),
    or bring a friction loss or damping far above a door's back to the default (`joint`)."""
    failing = context.failing & PART_CHECKS
    if not failing:
        return []
    check = next(name for name in ("joint_fidelity", "task_success", "grasp_held", "penetration", "stability")
                 if name in failing)  # fmt: skip
    out = []
    for entry in context.report.get("objects", []):
        for part in entry.get("parts", []):
            key = part_key(entry["name"], part["name"])
            for rule in (_range_to_video, _squared_axis, _along_held_hand, _default_friction):
                found = rule(context.report, entry["name"], part, key)
                if found is not None:
                    text, frame, change = found
                    out.append({"text": text, "check": check, "frame": frame,
                                "fix": {"kind": "joint", "object": entry["name"], "part": part["name"], **change}})  # fmt: skip
    return out


def _values(part: dict) -> tuple[np.ndarray, np.ndarray]:
    frames = [f for f in part.get("frames", []) if f.get("q") is not None and np.isfinite(f["q"])]
    return np.array([f["frame"] for f in frames], int), np.array([f["q"] for f in frames], float)


def _range_to_video(report: dict, owner: str, part: dict, key: str):
    joint = part["joint"]
    frames, q = _values(part)
    if not len(q):
        return None
    low, high = joint["range"]
    slack, pad = RANGE_SLACK[joint["type"]], RANGE_PAD[joint["type"]]
    past = np.maximum(q - high, low - q)
    if past.max() <= slack:
        return None
    worst = int(np.argmax(past))
    unit = "rad" if joint["type"] == "hinge" else "m"
    wider = [
        round(float(q.min()) - pad, 4) if low - q.min() > slack else low,
        round(float(q.max()) + pad, 4) if q.max() - high > slack else high,
    ]
    return (
        f"the video shows {key} at {q[worst]:.3f} {unit} on frame {frames[worst]}, past its range "
        f"[{low:.3f}, {high:.3f}]: the simulation stops it there; widen the range to [{wider[0]:.3f}, {wider[1]:.3f}]",
        int(frames[worst]),
        {"range": wider},
    )


def _squared_axis(report: dict, owner: str, part: dict, key: str):
    joint = part["joint"]
    if joint["type"] != "hinge":
        return None
    axis = np.asarray(joint["axis_world"], float)
    axis /= np.linalg.norm(axis)
    off_plumb = math.acos(min(1.0, abs(axis[2])))
    off_level = math.asin(min(1.0, abs(axis[2])))
    if SQUARE_ALREADY < off_plumb <= SQUARE_WITHIN:
        square, how, off = np.array([0.0, 0.0, math.copysign(1.0, axis[2])]), "plumb", off_plumb
    elif SQUARE_ALREADY < off_level <= SQUARE_WITHIN:
        square, how, off = (
            np.array([axis[0], axis[1], 0.0]) / math.hypot(axis[0], axis[1]),
            "level",
            off_level,
        )
    else:
        return None
    return (
        f"{key}'s hinge leans {math.degrees(off):.1f} degrees off {how}: a door hung so swings under its own "
        f"weight and away from the hand; make the hinge {how}",
        0,
        {"axis": [round(float(v), 6) for v in square]},
    )


def _held_hand(report: dict, key: str) -> tuple[np.ndarray, int] | None:
    """The recorded hand's positions (world) from its grasp of the part to its release, and the grasp's frame;
    None where nothing recorded it (a synthesised hand follows the fitted joint, and says nothing of it)."""
    gripper = report.get("gripper") or {}
    if gripper.get("source") != "trajectory.json":
        return None
    events = {k["event"]: int(k["frame"]) for k in report.get("keyframes", []) if k.get("object") == key}
    if "grasp" not in events:
        return None
    release = events.get("release", len(gripper.get("frames", [])))
    held = [np.asarray(f["position_world"], float) for f in gripper.get("frames", [])
            if events["grasp"] <= f["frame"] < release and f.get("position_world") is not None]  # fmt: skip
    return (np.array(held), events["grasp"]) if len(held) >= ARC_MIN_FRAMES else None


def _along_held_hand(report: dict, owner: str, part: dict, key: str):
    found = _held_hand(report, key)
    if found is None:
        return None
    path, grasp = found
    joint = part["joint"]
    axis = np.asarray(joint["axis_world"], float)
    axis /= np.linalg.norm(axis)
    if joint["type"] == "slide":
        travel = path[-1] - path[0]
        if np.linalg.norm(travel) < SLIDE_MIN_TRAVEL:
            return None
        line = np.linalg.svd(path - path.mean(axis=0), full_matrices=False)[2][0]
        line *= math.copysign(1.0, line @ axis)
        off = math.acos(min(1.0, float(line @ axis)))
        if off <= SLIDE_OFF:
            return None
        return (
            f"the recorded hand pulled {key} along a line {math.degrees(off):.1f} degrees off its slide: slide "
            "it along the hand's line",
            grasp,
            {"axis": [round(float(v), 6) for v in line]},
        )
    pivot = np.asarray(joint["pivot_world"], float)
    moved, _, error, angles = circle_about(axis, pivot, path)
    if error > ARC_FIT or np.ptp(angles) < ARC_MIN_TURN:
        return None
    off = float(np.linalg.norm(moved - pivot))
    if off <= PIVOT_OFF:
        return None
    return (
        f"the recorded hand holding {key}'s handle turned about a line {off * 1000:.0f} mm from its hinge "
        f"(over {math.degrees(np.ptp(angles)):.0f} degrees): move the hinge there",
        grasp,
        {"pivot": [round(float(v), 5) for v in moved]},
    )


def _default_friction(report: dict, owner: str, part: dict, key: str):
    joint = part["joint"]
    defaults = {
        "frictionloss": DEFAULT_FRICTIONLOSS[joint["type"]],
        "damping": DEFAULT_DAMPING[joint["type"]],
    }
    stiff = {
        name: joint[name] for name, default in defaults.items() if joint.get(name, default) > STIFF * default
    }
    if not stiff:
        return None
    said = " and ".join(f"{name} {value:g}" for name, value in stiff.items())
    return (
        f"{key}'s {said}: more than {STIFF:g} times the default, the hand cannot move it as the video shows; "
        "set it back to the default",
        0,
        {name: defaults[name] for name in stiff},
    )
