"""The pieces of a task scene's simulation that the task generators share: geom kinds, a force-limited hand,
the hold keyframes and the hand's checks.

Each task's ``_<task>_sim.simulate`` plays its gripper's script (``_demo_play.play``), looks at the contacts
after every step, then reads its keyframes and checks its outcome. What is the same for all of them is here:

- ``geom_kinds``: each geom's contact kind (a bit; a contact's two kinds or-ed say what touches what), from
  the geoms' names.
- ``StoppingHand``: the script with the hand's descent stopped where the held object was seen blocked (the
  insert and dish rack scenes: a peg on a hole's rim, a plate on a rack's dividers), the rest of the script
  raised by as much as the hand was stopped short.
- ``hold_keyframes``: grasp, lift and release from the fingers' contacts, and where the object first touches
  its target.
- ``check_hand``: the held object touched by the finger pads alone, the hand clear of what stands beside and
  (once open) of the object.

Times are video seconds (0 on the first frame); an event at time t shows first on frame ``ceil(t * fps)``
(``_demo_contacts``). Poses are in the world frame (metres, quaternions [w, x, y, z]). The per-step contact
tuples are the tasks' (``_demo_contacts.hold_events``): item 0 the time, 1 both pads on the object, 2 the
object on the table, 3 the hand on what stands beside, 4 the hand on the object, 5 the object on the fingers
or the palm, 6 (where there is one) the object on its target.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
from _articulated_motion import Script
from _demo_contacts import frame_of, hold_events, record
from _demo_sim import SimResult
from _insert_motion import stopped_short

STOP_BACK = 0.0005  # a blocked hand stops this far (m) over where it was when the block was seen


def geom_kinds(
    model: mujoco.MjModel, named: dict[str, int], prefixed: tuple[tuple[str, Callable[[str], int]], ...] = ()
) -> np.ndarray:
    """Each geom's contact kind (0 for a geom named nowhere: the floor, the wall, the camera's things).

    Args:
        model: The scene.
        named: A geom's whole name to its kind.
        prefixed: (prefix, the name to its kind), tried in order for a geom ``named`` does not name.

    Returns:
        One kind per geom, (ngeom,) int64.
    """
    kind = np.zeros(model.ngeom, dtype=np.int64)
    for index in range(model.ngeom):
        name = model.geom(index).name or ""
        if name in named:
            kind[index] = named[name]
            continue
        for prefix, kind_of in prefixed:
            if name.startswith(prefix):
                kind[index] = kind_of(name)
                break
    return kind


class StoppingHand:
    """A gripper's script whose descent stops on a blocked object (the hand is force-limited).

    While the script lowers the object and lets go (its ``lower`` segment's start to its ``release``
    segment's end), a caller that sees the object blocked calls ``stop``: the hand goes no lower than where
    it was then (plus ``STOP_BACK``) until the lowering ends, and the script from there on (opening, rising
    clear, going away) is raised by as much as the hand was stopped short (``_insert_motion.stopped_short``).

    Args:
        script: The gripper's script, with ``lower`` and ``release`` segments.

    Attributes:
        stopped_at: The video time the descent was stopped (s), or None.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.lowering = (script.segment("lower").start, script.segment("release").end)
        self.lowered = script.segment("lower").end
        self.set_z = float(script.pose_at(self.lowered)[0][2])
        self.lowest: float | None = None  # once stopped: the grasp centre's lowest height (m)
        self.going_on: Script | None = None  # once stopped: the script from the lowering's end on, raised
        self.stopped_at: float | None = None

    def watching(self, time: float) -> bool:
        """Whether a block seen at video time ``time`` (s) stops the hand: not yet stopped, and lowering."""
        return self.lowest is None and self.lowering[0] <= time <= self.lowering[1]

    def stop(self, time: float, hand_z: float) -> None:
        """Stop the descent at video time ``time`` (s), the hand's body at height ``hand_z`` (world, m)."""
        self.lowest = hand_z + STOP_BACK
        self.going_on = stopped_short(self.script, max(self.lowest - self.set_z, 0.0))
        self.stopped_at = time

    def pose_at(self, time: float) -> tuple[np.ndarray, np.ndarray, float]:
        """The grasp centre (world, m), the rotation [w, x, y, z] and the per-finger opening (m) at ``time``."""
        if self.going_on is not None and time >= self.lowered:
            return self.going_on.pose_at(time)
        position, quat, grip = self.script.pose_at(time)
        if self.lowest is not None and position[2] < self.lowest:
            position = np.r_[position[:2], self.lowest]
        return position, quat, grip


def hold_keyframes(
    steps: list[tuple], fps: float, frames: int, thing: str, target: str | None = None
) -> list[dict]:
    """grasp, lift and release of ``thing`` from the fingers' contacts and, with a ``target``, contact where
    it first touches the target (item 6 of a step), as truth.json writes keyframes, in order."""
    events = [{"frame": frame_of(steps[step][0], fps, frames), "event": event, "object": thing}
              for event, step in hold_events(steps).items()]  # fmt: skip
    touched = [s[0] for s in steps if s[6]] if target is not None else []
    if touched:
        events.append({"frame": frame_of(touched[0], fps, frames), "event": "contact", "object": thing,
                       "target": target})  # fmt: skip
    return sorted(events, key=lambda e: (e["frame"], e["event"]))


def check_hand(
    result: SimResult, steps: list[tuple], script: Script, thing: str, beside: str, beside_text: str,
    let_go_to_fall: bool,
) -> int:  # fmt: skip
    """Record ``only_pads_touch_<thing>``, ``hand_clear_of_<beside>`` and, unless ``let_go_to_fall``,
    ``hand_clear_of_<thing>_after_release``.

    Args:
        result: The simulation's result the checks go into.
        steps: The per-step contacts.
        script: The gripper's script, with a ``release`` segment (the fingers open by its end).
        thing: The held object's name.
        beside: What the hand must not touch, as the check's name ends.
        beside_text: The same in the failure's sentence (``the shelf``).
        let_go_to_fall: The object is let go where it tips or falls on purpose: it may touch the opening
            fingers, so that the fingers and the palm are checked until the fingers open, and the hand's
            touches after that are a figure of the demo's end, not a check.

    Returns:
        On how many steps the hand touched the object after the fingers opened.
    """
    opened = script.segment("release").end
    checked = [s for s in steps if not let_go_to_fall or s[0] <= opened]
    others = sum(s[5] for s in checked)
    record(result, f"only_pads_touch_{thing}", others == 0,
           f"the gripper's fingers or palm (not its pads) touched the {thing} on {others} steps",
           steps_touching=others)  # fmt: skip
    knocks = sum(s[3] for s in steps)
    record(result, f"hand_clear_of_{beside}", knocks == 0, f"the gripper touched {beside_text} on {knocks} steps",
           steps_touching=knocks)  # fmt: skip
    touches = sum(s[4] for s in steps if s[0] > opened)
    if not let_go_to_fall:
        record(result, f"hand_clear_of_{thing}_after_release", touches == 0,
               f"the gripper touched the {thing} on {touches} steps after opening", steps_touching=touches)  # fmt: skip
    return touches
