"""What touches what in a task generator's simulation, and how its checks are recorded.

Each geom has a *kind*: one bit per kind of thing (a finger, the palm, the table, an object...), set by the
scene's simulation module. The kinds of a contact's two geoms or-ed together say what touches what; the
set of those over the current contacts is a step's ``touching``. Times are video seconds; an event at time
t shows first on frame ``ceil(t * fps)``. Poses are in the world frame (m, quaternions [w, x, y, z]).
Used by tools/_pour_sim.py, _hang_sim.py, _shelve_sim.py and _insert_sim.py.
"""

from __future__ import annotations

import mujoco
import numpy as np
from _demo_sim import FrameState, SimResult
from scipy.spatial.transform import Rotation


def touching(data: mujoco.MjData, kind: np.ndarray) -> set[int]:
    """The or-ed kinds of the two geoms of each current contact.

    Args:
        data: The simulation state.
        kind: Each geom's kind bits, (ngeom,) int.
    """
    pairs = data.contact.geom[: data.ncon]
    return set((kind[pairs[:, 0]] | kind[pairs[:, 1]]).tolist())


def both(touch: set[int], a: int, b: int) -> bool:
    """Whether a contact in ``touch`` joins a geom of kind ``a`` and one of kind ``b`` (bits, or-ed)."""
    return any(m & a and m & b for m in touch)


def frame_of(time: float, fps: float, frames: int) -> int:
    """The first video frame that shows an event at ``time`` (s), at most the last frame."""
    return min(int(np.ceil(time * fps - 1e-6)), frames - 1)


def hold_events(steps: list[tuple]) -> dict[str, int]:
    """The steps of grasp (both fingers first touch the object), lift (its last touch of the table while
    held, plus one) and release (its last step held, plus one), those that happened.

    Args:
        steps: Per simulation step, a tuple whose items 1 and 2 say whether both fingers touch the object
            and whether it touches the table.
    """
    held, on_table = np.array([s[1] for s in steps]), np.array([s[2] for s in steps])
    if not held.any():
        return {}
    found = {"grasp": int(np.argmax(held)), "release": int(np.flatnonzero(held)[-1]) + 1}
    table = np.flatnonzero(on_table[found["grasp"] : found["release"]])
    if table.size and found["grasp"] + table[-1] + 1 < found["release"]:
        found["lift"] = found["grasp"] + int(table[-1]) + 1
    return {event: step for event, step in found.items() if step < len(steps)}


def record(result: SimResult, name: str, passed: bool, sentence: str, **figures) -> None:
    """A check with its figures; a failed one adds ``sentence`` to ``result.failures``."""
    result.checks[name] = {"passed": bool(passed), **figures}
    if not passed:
        result.failures.append(sentence)


def slip_in_hand(frames: list[FrameState], body: str, first: int, last: int) -> tuple[float, float]:
    """How far (m) and by how much (deg) ``body`` moved in the hand's frame between frames ``first`` and
    ``last`` (inclusive), at most, from where it was on ``first``.

    Args:
        frames: The per-frame states, with the poses of ``hand`` and ``body``.
        body: The held body's name.
        first: The first frame it is held on.
        last: The last frame it is held on.
    """

    def in_hand(state: FrameState) -> tuple[np.ndarray, Rotation]:
        (hp, hq), (bp, bq) = state.poses["hand"], state.poses[body]
        hand = Rotation.from_quat(hq, scalar_first=True)
        return hand.inv().apply(bp - hp), hand.inv() * Rotation.from_quat(bq, scalar_first=True)

    p0, r0 = in_hand(frames[first])
    moved, turned = 0.0, 0.0
    for state in frames[first : last + 1]:
        p, r = in_hand(state)
        moved = max(moved, float(np.linalg.norm(p - p0)))
        turned = max(turned, float(np.rad2deg((r * r0.inv()).magnitude())))
    return moved, turned


def check_carry(
    result: SimResult,
    steps: list[tuple],
    thing: str,
    target: str,
    bottoms: list[float],
    floor: float,
    clearance: float,
    slip: tuple[float, float],
) -> None:
    """Checks of a pick and place's carry: the held object's events in order (``events``: grasp <= lift <
    release), carried over its target (``carried``: both fingers on it for 98 % of the steps from the lift
    to the release, its lowest point more than half ``clearance`` over ``floor`` on a frame between them) and
    held without slipping (``held_without_slip``: ``slip_in_hand`` within ``slip``).

    Args:
        result: What happened, with its ``keyframes`` and per-frame states; the checks are added to it.
        steps: Per simulation step, the tuple of ``hold_events``.
        thing: The held object's name, also its body's.
        target: What it is carried over, in the messages and in the figure ``highest_over_<target>_m``.
        bottoms: Per frame, the object's lowest point above the table (m).
        floor: The target's top above the table (m).
        clearance: How far over ``floor`` the script carries the object's lowest point (m).
        slip: The most it may move (m) and turn (deg) in the hand.
    """
    keyframes = result.keyframes
    order = [keyframes.get(e) for e in ("grasp", "lift", "release")]
    ordered = None not in order and order[0] <= order[1] < order[2]
    record(result, "events", ordered, f"the {thing}'s events are not grasp <= lift < release ({keyframes})",
           frames=keyframes)  # fmt: skip
    if not ordered:
        return
    at = hold_events(steps)
    held = float(np.mean([s[1] for s in steps[at["lift"] : at["release"]]] or [0.0]))
    rise = max(bottoms[order[1] : order[2] + 1]) - floor
    record(result, "carried", held > 0.98 and rise > clearance / 2,
           f"the fingers did not carry the {thing} over the {target} (held {held:.0%} of the carry, its "
           f"bottom at most {rise * 100:.1f} cm over the {target}'s top)", held_fraction=held,
           **{f"highest_over_{target}_m": rise})  # fmt: skip
    moved, turned = slip_in_hand(result.frames, thing, order[1], order[2] - 1)
    slip_m, slip_deg = slip
    record(result, "held_without_slip", moved <= slip_m and turned <= slip_deg,
           f"the {thing} slipped {moved * 1000:.1f} mm and turned {turned:.1f} deg in the hand while it was "
           f"held (at most {slip_m * 1000:g} mm and {slip_deg:g} deg)", slip_m=moved, slip_deg=turned,
           limit_m=slip_m, limit_deg=slip_deg)  # fmt: skip
