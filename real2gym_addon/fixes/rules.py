"""The suggestion rules: what to change after a failed check, computed from its figures.

Nothing here knows a particular scene: each rule reads the failed check's
figures and the objects' sizes and says what to change, by how much, and at
which keyframe, with the fix ready to apply (:func:`..edits.apply_fix`). A rule
is the ``suggest`` of its check's entry in :data:`~..verify.registry.CHECKS`;
its docstring's first sentence is what docs/checks.md says it suggests.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from ..geometry.peg_prior import handle_opening
from ..geometry.shape_kinds import DISH_RACK, RACK, SHELF
from ..geometry.shapes import Shape
from ..mjcf.gripper import FINGERTIP_BELOW, MAX_OPENING, GripperSpec
from .edits import (
    PEG_RADIUS_RANGE,
    SET_DOWN_PRESS,
    descent_below,
    find_object,
    hold_frames,
    keyframe_frame,
    max_grasp_rise,
    pressed_after_landing,
)

CLEARANCE = 0.004
"""Room (m) left around an object that must pass through an opening."""
RELEASE_ROOM = 0.01
"""Metres past the simulated grip a widened release opens the fingers to (5 mm each side)."""
PALM_MARGIN = 0.005
"""m the palm and finger roots clear what the held object goes into on a grasp moved up it."""
LANDED_TOLERANCE = 0.004
"""m: an object within this of its final height stands where it was set down (``set_down``)."""
LATE_RELEASE_S = 0.3
"""Fingers letting go this little before the release keyframe: the keyframe is late, not the grasp weak."""


def _release_opening(release_check: dict, release: int | None) -> tuple[float, int | None]:
    """The finger gap a changed release opens to (the simulated grip plus :data:`RELEASE_ROOM`, within
    the gripper's reach) and the frame it starts at."""
    width = round(min(MAX_OPENING, release_check["held_gap_m"] + RELEASE_ROOM), 4)
    return width, release_check.get("release_frame", release)


def _half_diagonal(shape: Shape) -> float:
    return float(np.hypot(shape.size[0], shape.size[1]) / 2)


@dataclasses.dataclass(frozen=True)
class SuggestionContext:
    """What the suggestion rules read: the report, its verdicts, and the task's objects and keyframes.

    Attributes:
        report: The run's report.json content.
        checks: Check name -> its result (``verification.checks``).
        failing: The names of the failed checks.
        moved_name: The task's moved object.
        target_name: The task's target, or None.
        moved: The moved object's shape.
        target_entry: The target's report entry, or None.
        target: The target's shape, or None.
        release: The moved object's release keyframe's frame, or None.
        contact: Its contact keyframe's frame, or None.
    """

    report: dict
    checks: dict[str, dict]
    failing: set[str]
    moved_name: str
    target_name: str | None
    moved: Shape
    target_entry: dict | None
    target: Shape | None
    release: int | None
    contact: int | None


def _hand_reach(
    report: dict, hand: dict, moved_name: str, release: int | None
) -> tuple[float, float, str, float]:
    """What the hand carrying the moved object must clear: ``(top, reach, part, lowest)``: the top (m, world)
    of what it knocked, how far above the grasp centre the part that knocks it is (negative: below), that
    part (``"palm"``: the palm and finger roots; ``"fingers"``: fingertips that do not fit in a container's
    opening), and the grasp centre's lowest height from the knock to the release."""
    samples = report["gripper"]["frames"]
    knocked, moved = find_object(report, hand["object"]), find_object(report, moved_name)
    frame = int(hand["frame"])
    top = float(knocked["frames"][frame]["position_world"][2]) + float(knocked["size"][2]) / 2
    last = len(samples) - 1 if release is None else min(release, len(samples) - 1)
    lowest = min(
        float(s["position_world"][2]) for s in samples[frame : last + 1] or samples[frame : frame + 1]
    )
    spec = GripperSpec()
    reach, part = spec.finger_size[2] - FINGERTIP_BELOW, "palm"  # grasp centre to the finger roots and palm
    shape = Shape.from_report(knocked)
    inner = shape.params.get("inner_radius") if shape.is_container else None
    if inner is not None:
        # Fingers around the held object that do not fit in the container's opening must stay above its rim,
        # and so must fingers that could not open there to let go of it (its width plus RELEASE_ROOM): a
        # block let go in a narrow cup stays pinched between them and leaves with the hand (seed 16, Cycles:
        # 12 mm fingers in a cup 69 mm across open to 38 mm at most, around a 30 mm block). The fingers
        # close on the held object (a commanded closure records 0, not the object's width).
        held = float(min(moved["size"][:2]))
        gaps = [float(s["gripper"]) * MAX_OPENING for s in samples[frame : last + 1]] or [MAX_OPENING]
        letting_go = max(min(gaps), held + RELEASE_ROOM)
        fingers = float(np.hypot(letting_go / 2 + spec.finger_size[1], spec.finger_size[0] / 2))
        if fingers > inner - PALM_MARGIN:
            reach, part = -FINGERTIP_BELOW, "fingers"
    return top, reach, part, lowest


def _grasp_rise(report: dict, hand: dict, moved_name: str, release: int | None) -> tuple[float, str] | None:
    """How far up the moved object the grasp must go for the palm to clear the top of what the hand knocked
    while carrying it (or the fingertips, where the fingers do not fit in a container's opening), at most
    what the object's height allows, and which of the two; None where that is no help."""
    top, reach, part, lowest = _hand_reach(report, hand, moved_name, release)
    needed = top + PALM_MARGIN - (lowest + reach)
    limit = max_grasp_rise(float(find_object(report, moved_name)["size"][2]))
    if needed <= 0 or limit < 0.002:
        return None
    return float(np.floor(min(needed, limit) * 1e4) / 1e4), part  # never past the limit by rounding


def _release_above(context: SuggestionContext, hand: dict) -> tuple[float, int, str] | None:
    """Where the hand carrying the moved object into a container must stop and let go so that its palm (or
    fingers) stay above the rim: ``(height of the grasp centre, frame to let go on, part)``; the frame is the
    first at that height where the object is over the opening (else where it is nearest to being). None
    where the hand never goes that low."""
    report, target = context.report, context.target
    top, reach, part, _ = _hand_reach(report, hand, context.moved_name, context.release)
    height = float(np.ceil((top + PALM_MARGIN - reach) * 1e4) / 1e4)
    samples = report["gripper"]["frames"]
    grasp = keyframe_frame(report, "grasp", context.moved_name)
    release = context.release if context.release is not None else len(samples) - 1
    if grasp is None or release <= grasp:
        return None
    heights = np.array([s["position_world"][2] for s in samples], float)
    first = descent_below(heights, grasp, release, height)
    if first is None:
        return None
    pose = context.target_entry["frames"]
    room = float(target.params["inner_radius"]) - _half_diagonal(context.moved) - CLEARANCE

    def off_axis(f: int) -> float:
        quaternion = pose[f]["quaternion_world"]
        yaw = 2.0 * np.arctan2(quaternion[3], quaternion[0])  # containers stand upright: a turn about z
        offset = target.axis_offset()
        axis = np.asarray(pose[f]["position_world"][:2]) + [
            np.cos(yaw) * offset[0] - np.sin(yaw) * offset[1],
            np.sin(yaw) * offset[0] + np.cos(yaw) * offset[1],
        ]
        return float(np.linalg.norm(np.asarray(samples[f]["position_world"][:2]) - axis))

    frames = range(first, min(release, len(samples) - 1) + 1)
    over = [f for f in frames if off_axis(f) <= room]
    return height, over[0] if over else min(frames, key=off_axis), part


def clear_hand_path(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Bring the hand in from above, or take it straight up and away (`approach`); grasp the object higher
    where the palm knocks what it goes into (`grasp_height`), or let go above a container's rim where the
    hand cannot follow into it (`release_above`); fingers that catch a container's walls open less
    (`release_opening`)."""
    report, checks, failing = context.report, context.checks, context.failing
    moved_name, target_name, target = context.moved_name, context.target_name, context.target
    suggestions = []
    hand = checks.get("hand_clearance", {})
    release_check = checks.get("release_clearance", {})
    # The first knock may be the held object itself, caught between a finger and the wall it is pressed into.
    knocks = hand.get("knocks") or [hand]
    inside_target = (
        any(k.get("phase") == "retreat" and k.get("object") == target_name for k in knocks)
        and target is not None and target.is_container and "held_gap_m" in release_check
    )  # fmt: skip
    if "hand_clearance" in failing and report.get("gripper") and inside_target:
        # Opening wide inside a narrow container presses the pads into its walls: it leaves with the hand.
        width, frame = _release_opening(release_check, context.release)
        wall = next(k for k in knocks if k.get("phase") == "retreat" and k.get("object") == target_name)
        suggestions.append({
            "text": f"the fingers open inside the {target_name} and catch its walls, which leave with the hand "
                    f"(frame {wall['frame']}, moved {wall['moved_m'] * 1000:.0f} mm): open them only to "
                    f"{width * 1000:.0f} mm from frame {frame}?",
            "check": "hand_clearance", "frame": frame,
            "fix": {"kind": "release_opening", "object": moved_name, "width_m": width, "frame": frame,
                    "limit": True},
        })  # fmt: skip
    if "hand_clearance" in failing and report.get("gripper") and hand.get("phase") in ("approach", "retreat"):
        # The hand knocking an object explains the failures downstream of it: this comes first.
        coming = hand["phase"] == "approach"
        phase = "grasp" if coming else "release"
        anchor = hold_frames(report, moved_name)[phase]
        how = (
            f"bring the hand in above the {moved_name} and straight down onto the grasp"
            if coming
            else "let the fingers open, then take the hand straight up and away"
        )
        suggestions.append({
            "text": f"the gripper knocks the {hand['object']} on its way {'in' if coming else 'out'} (frame "
                    f"{hand['frame']}): it moves {hand['moved_m'] * 1000:.0f} mm more than the video shows; {how}?",
            "check": "hand_clearance", "frame": hand["frame"],
            "fix": {"kind": "approach", "object": moved_name, "phase": phase,
                    **({} if anchor is None else {"frame": anchor})},
        })  # fmt: skip
    carrying_into = hand.get("phase") == "carry" and hand.get("object") not in (None, moved_name)
    if "hand_clearance" in failing and report.get("gripper") and carrying_into:
        found = _grasp_rise(report, hand, moved_name, context.release)
        into_target = hand.get("object") == target_name and target is not None and target.is_container
        above = _release_above(context, hand) if into_target else None
        if found is not None:
            rise, part = found
            onto = (
                "its palm comes down onto it" if part == "palm" else "its fingers do not fit in its opening"
            )
            suggestions.append({
                "text": f"the hand knocks the {hand['object']} while it carries the {moved_name} (frame "
                        f"{hand['frame']}, moved {hand['moved_m'] * 1000:.0f} mm): {onto}; "
                        f"grasp the {moved_name} {rise * 1000:.0f} mm higher?",
                "check": "hand_clearance", "frame": hand["frame"],
                "fix": {"kind": "grasp_height", "object": moved_name, "rise_m": rise},
            })  # fmt: skip
        if above is not None:
            height, frame, part = above
            why = (
                "palm cannot follow into the opening"
                if part == "palm"
                else "fingers cannot go into the opening and open there"
            )
            letting_go = {
                "text": f"the hand knocks the {hand['object']} while it lowers the {moved_name} into it (frame "
                        f"{hand['frame']}, moved {hand['moved_m'] * 1000:.0f} mm): its {why}; let go of the "
                        f"{moved_name} above the rim on frame {frame} and let it drop in?",
                "check": "hand_clearance", "frame": frame,
                "fix": {"kind": "release_above", "object": moved_name, "height_m": height, "frame": frame},
            }  # fmt: skip
            # Before a grasp moved up the object where the object's height cut that move short.
            short = (
                found is not None and found[0] >= np.floor(max_grasp_rise(context.moved.size[2]) * 1e4) / 1e4
            )
            suggestions.insert(len(suggestions) - short, letting_go)
    return suggestions


def container_opening(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Replace a container's closing hull with wall pieces (`collision`), or widen a rim narrower than the
    object (`radius_scale`)."""
    checks, failing = context.checks, context.failing
    moved_name, target_name, target = context.moved_name, context.target_name, context.target
    contact, release = context.contact, context.release
    if target is None or not target.is_container or not failing & {"task_success", "penetration"}:
        return []
    if target.collision == "hull" or (context.target_entry.get("opening_probe") or {}).get("passed") is False:
        return [{
            "text": f"the {target_name}'s collision is one convex hull, which closes its opening: "
                    f"replace it with wall pieces that keep the cavity open",
            "check": "task_success", "frame": contact or release,
            "fix": {"kind": "collision", "object": target_name, "mode": "walls"},
        }]  # fmt: skip
    inner = target.params.get("inner_radius", target.size[0] / 2)
    needed = _half_diagonal(context.moved) + CLEARANCE
    if needed <= inner:
        return []
    factor = round(needed / inner, 3)
    where = checks.get("penetration", {})
    frame = where.get("frame", contact or release) if "penetration" in failing else contact or release
    symptom = (
        f"penetration {where.get('max_m', 0.0) * 1000:.0f} mm between {moved_name} and {target_name} at frame {frame}"
        if "penetration" in failing
        else f"the {moved_name} does not get into the {target_name} (release at frame {release})"
    )
    return [{
        "text": f"{symptom}: the {target_name}'s inner radius is {(needed - CLEARANCE - inner) * 1000:.0f} mm "
                f"smaller than the {moved_name}'s half-diagonal; scale its rim by {factor}?",
        "check": "task_success" if "task_success" in failing else "penetration", "frame": frame,
        "fix": {"kind": "radius_scale", "object": target_name, "factor": factor},
    }]  # fmt: skip


AIM_TOLERANCE = 0.005
"""m: a spill whose middle lands this near the target's axis is aimed right; what fails it is elsewhere."""


def pour_aim(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Move the hand's path over the target while it pours (`pour_offset`), by how far from the target's axis
    the pour's stream came down through the target's rim height."""
    check = context.checks.get("task_success", {})
    if "task_success" not in context.failing or check.get("stream_centre_m") is None:
        return []
    miss = np.subtract(check["target_centre_m"], check["stream_centre_m"])
    start = keyframe_frame(context.report, "pour_start", context.moved_name)
    if np.linalg.norm(miss) < AIM_TOLERANCE or start is None or not context.report.get("gripper"):
        return []
    return [{
        "text": f"{check['landed']} of {check['count']} landed in the {context.target_name}: the pour came down "
                f"{np.linalg.norm(miss) * 100:.1f} cm from its axis; move the pour by that much over it?",
        "check": "task_success", "frame": start,
        "fix": {"kind": "pour_offset", "object": context.moved_name,
                "delta": [round(float(miss[0]), 4), round(float(miss[1]), 4), 0.0]},
    }]  # fmt: skip


SHELF_MARGIN = 0.015
"""m: how far inside a shelf's front and sides a moved placing puts the object's footprint."""


def _world_turn(frame: dict) -> np.ndarray:
    """3x3: a report frame's ``quaternion_world`` (w, x, y, z) as a rotation."""
    w, x, y, z = frame["quaternion_world"]
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def shelf_reach(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Move where the hand lets the object go (`place_offset`) to where its footprint is on the shelf's board,
    behind the front and between the sides with 1.5 cm to spare, as the video's release places it."""
    check = context.checks.get("task_success", {})
    if "task_success" not in context.failing or context.target is None or context.target.kind != SHELF.name:
        return []
    if context.release is None or check.get("board") is not None or not context.report.get("gripper"):
        return []
    moved, target = find_object(context.report, context.moved_name), context.target_entry
    at = moved["frames"][min(context.release, len(moved["frames"]) - 1)]
    shelf_turn = _world_turn(target["frames"][0])
    # The object's footprint in the shelf's frame at the release: its box's extents along the shelf's axes.
    own = shelf_turn.T @ _world_turn(at)
    reach = np.abs(own) @ (np.asarray(context.moved.size, float) / 2)
    centre = shelf_turn.T @ (
        np.asarray(at["position_world"]) - np.asarray(target["frames"][0]["position_world"])
    )
    half, params = np.asarray(context.target.size, float) / 2, context.target.params
    inner = np.array([half[0], half[1] - params["side_thickness"]]) - reach[:2] - SHELF_MARGIN
    wanted = np.clip(centre[:2], [-half[0] + params["back_thickness"] + reach[0], -inner[1]], inner)
    move = wanted - centre[:2]
    if np.linalg.norm(move) < AIM_TOLERANCE:
        return []
    delta = shelf_turn @ np.array([move[0], move[1], 0.0])
    return [{
        "text": f"the {context.moved_name} was let go {np.linalg.norm(move) * 100:.1f} cm short of its place on the "
                f"{context.target_name}'s board; let it go that much further in?",
        "check": "task_success", "frame": context.release,
        "fix": {"kind": "place_offset", "object": context.moved_name,
                "delta": [round(float(delta[0]), 4), round(float(delta[1]), 4), 0.0]},
    }]  # fmt: skip


SLOT_CLEARANCE = 0.003
"""m: what a widened slot leaves each side of the object standing in it."""


def dish_rack_slots(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Widen a dish rack's slots (`slot_width`) that are narrower than the object let go into them is thick
    (across the row, as the hand holds it at the release), to that and 3 mm each side."""
    check = context.checks.get("task_success", {})
    target = context.target
    if "task_success" not in context.failing or target is None or target.kind != DISH_RACK.name:
        return []
    if context.release is None or check.get("slot") is not None:
        return []
    moved, rack = find_object(context.report, context.moved_name), context.target_entry
    at = moved["frames"][min(context.release, len(moved["frames"]) - 1)]
    own = _world_turn(rack["frames"][0]).T @ _world_turn(at)
    thick = float(2 * (np.abs(own) @ (np.asarray(context.moved.size, float) / 2))[1])  # across the row
    wanted = round(thick + 2 * SLOT_CLEARANCE, 4)
    if wanted <= target.params["slot_width"]:
        return []
    return [{
        "text": f"the {context.moved_name} ({thick * 1000:.0f} mm thick as it is let go) does not go into the "
                f"{context.target_name}'s slots, {target.params['slot_width'] * 1000:.0f} mm wide: widen them to "
                f"{wanted * 1000:.0f} mm?",
        "check": "task_success", "frame": context.release,
        "fix": {"kind": "slot_width", "object": context.target_name, "width_m": wanted},
    }]  # fmt: skip


PEG_ROOM = 0.002
"""m: a peg with less than this each side of it in the handle's loop does not go through it."""


def rack_pegs(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Thin a rack's pegs (`peg_radius`) that leave less than 2 mm each side in the hung object's handle, where
    the hang fails (its task, or the hold: a handle pushed onto a peg it cannot take slides in the hand), to
    half the loop's width: the handle's path is measured a few millimetres unsure, and a peg that fills the
    loop but for 2 mm still lifted it off its path in the hand (10.2 mm of slip, limit 10)."""
    target, failing = context.target, context.failing & {"task_success", "grasp_held"}
    if target is None or target.kind != RACK.name or not context.moved.has_handle or not failing:
        return []
    room = min(handle_opening(context.moved))
    wanted = round(room / 4, 4)
    radius = target.params["peg_radius"]
    if 2 * (radius + PEG_ROOM) <= room or wanted < PEG_RADIUS_RANGE[0]:
        return []  # the pegs go through, or no peg could
    return [{
        "text": f"the {context.moved_name}'s handle leaves {room * 1000:.0f} mm for the {context.target_name}'s "
                f"pegs, {2 * radius * 1000:.0f} mm thick: thin them to {2 * wanted * 1000:.0f} mm?",
        "check": "task_success" if "task_success" in failing else "grasp_held", "frame": context.release,
        "fix": {"kind": "peg_radius", "object": context.target_name, "radius_m": wanted},
    }]  # fmt: skip


def task_fixes(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Move the hand's path over the target while a pour spills (`pour_offset`), or where it lets the object go
    onto a shelf's board (`place_offset`), or widen a dish rack's slots narrower than the object (`slot_width`);
    for the other tasks, replace a container's closing hull with wall
    pieces (`collision`), or widen a rim narrower than the object (`radius_scale`)."""
    if "landed_share" in context.checks.get("task_success", {}):
        return pour_aim(context, made)
    if "turned_as_video_ends" in context.checks.get("task_success", {}):
        return shelf_reach(context, made) or dish_rack_slots(context, made)
    if context.target is not None and context.target.kind == RACK.name:
        return rack_pegs(context, made)
    return container_opening(context, made)


def start_above_support(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Move an object that starts inside its support up by its depth (`offset`), where nothing suggested
    before explains the penetration."""
    penetration = context.checks.get("penetration", {})
    if "penetration" not in context.failing or penetration.get("frame") != 0 or made:
        return []
    name = penetration.get("object", context.moved_name)
    depth = penetration.get("max_m", 0.0)
    return [{
        "text": f"'{name}' starts {depth * 1000:.1f} mm inside its support: move it up by that much",
        "check": "penetration", "frame": 0,
        "fix": {"kind": "offset", "object": name, "delta": [0.0, 0.0, round(depth + 0.0005, 4)], "frame": None},
    }]  # fmt: skip


def grasp_timing(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Move the object's resting pose to where the gripper closes (`offset`), or the grasp or release
    keyframe to where the fingers hold (`keyframe`); where the video shows the object standing on its
    support as the fingers lose it and the recorded hand pushes on down, hold the hand where it sets the
    object down (`set_down`)."""
    if context.target is not None and context.target.kind == RACK.name:
        # A handle held onto a peg it cannot take: the peg explains the slip, not the hold's timing (offered
        # once: task_success's rule is asked first).
        if any(s["fix"]["kind"] == "peg_radius" for s in made):
            return []
        pegs = rack_pegs(context, made)
        if pegs:
            return pegs
    report, moved_name, release = context.report, context.moved_name, context.release
    grasp = context.checks.get("grasp_held", {})
    grasp_frame = keyframe_frame(report, "grasp", moved_name)
    gripper = report.get("gripper")
    if "grasp_held" not in context.failing or grasp_frame is None or not gripper:
        return []
    entry = find_object(report, moved_name)
    # The simulation starts the object where it rests on frame 0 and the hand closes where the
    # recording (or the synthesised path) puts it: the resting pose is what must meet the hand.
    object_at = np.array(entry["frames"][0]["position_world"])
    gripper_at = np.array(gripper["frames"][grasp_frame]["position_world"])
    miss = gripper_at[:2] - object_at[:2]
    lost = grasp.get("first_frame_without_contact")
    if np.linalg.norm(miss) > 0.005:
        return [{
            "text": f"the {moved_name} rests {np.linalg.norm(miss) * 100:.1f} cm from where the gripper closes "
                    f"(frame {grasp_frame}); move its resting pose there, up to the grasp?",
            "check": "grasp_held", "frame": grasp_frame,
            "fix": {"kind": "offset", "object": moved_name, "delta": [round(float(miss[0]), 4),
                    round(float(miss[1]), 4), 0.0], "frame": grasp_frame, "until": True},
        }]  # fmt: skip
    late = (
        lost is not None
        and release is not None
        and lost >= release - round(LATE_RELEASE_S * report["video"]["fps"])
    )
    landed = _landed(entry, grasp_frame, release) if late else None
    if landed is not None and landed <= lost + 1:  # the smoothed path reaches its rest a frame late
        landed = min(landed, lost)
    pressed = 0.0 if landed is None or landed > lost else pressed_after_landing(report, landed, release)
    if pressed > SET_DOWN_PRESS:
        # The video shows it standing on its support as the fingers lose it; the hand pushes on down after.
        return [{
            "text": f"the hand pushes the {moved_name} {pressed * 1000:.0f} mm on down after it lands (frame "
                    f"{landed}) and loses it on frame {lost}; hold the hand where it sets it down until it lets go?",
            "check": "grasp_held", "frame": landed,
            "fix": {"kind": "set_down", "object": moved_name, "frame": landed},
        }]  # fmt: skip
    if late:
        # Held all the way, but let go a few frames before the release keyframe: the keyframe is late.
        earlier = max(grasp_frame + 1, lost - 1)
        return [{
            "text": f"the fingers hold the {moved_name} until frame {lost}, "
                    f"just before the release keyframe (frame {release}); move the release to frame {earlier}?",
            "check": "grasp_held", "frame": release,
            "fix": {"kind": "keyframe", "object": moved_name, "event": "release", "frame": earlier},
        }]  # fmt: skip
    if lost is not None and lost <= grasp_frame + 3:
        later = grasp_frame + 3
        return [{
            "text": f"the fingers touch the {moved_name} only after the grasp keyframe (frame {grasp_frame}); "
                    f"move the grasp to frame {later}?",
            "check": "grasp_held", "frame": grasp_frame,
            "fix": {"kind": "keyframe", "object": moved_name, "event": "grasp", "frame": later},
        }]  # fmt: skip
    return []


def _landed(entry: dict, grasp: int, release: int) -> int | None:
    """The first frame after the grasp from which the video shows the object at its final height (within
    :data:`LANDED_TOLERANCE`) up to the release, or None (it is still carried at the release)."""
    heights = np.array([f["position_world"][2] for f in entry["frames"]], float)
    if not grasp < release < len(heights):
        return None
    final = float(np.median(heights[-max(3, len(heights) // 10) :]))
    resting = np.abs(heights[grasp : release + 1] - final) <= LANDED_TOLERANCE
    if not resting[-1]:
        return None
    moving = np.nonzero(~resting)[0]
    first = grasp + (int(moving[-1]) + 1 if len(moving) else 0)
    return first if first < release else None


def wider_release(context: SuggestionContext, made: list[dict]) -> list[dict]:
    """Open the fingers at the release to the held gap plus 1 cm (`release_opening`)."""
    release_check = context.checks.get("release_clearance", {})
    if "release_clearance" not in context.failing or "held_gap_m" not in release_check:
        return []
    width, frame = _release_opening(release_check, context.release)
    return [{
        "text": f"the recorded release opens the fingers to {release_check['recorded_gap_m'] * 1000:.1f} mm, "
                f"but the simulated {context.moved_name} sits {release_check['held_gap_m'] * 1000:.1f} mm wide "
                f"between the pads and stays held; widen the release to {width * 1000:.0f} mm from frame {frame}?",
        "check": "release_clearance", "frame": frame,
        "fix": {"kind": "release_opening", "object": context.moved_name, "width_m": width, "frame": frame},
    }]  # fmt: skip
