"""The table of checks: what the verifier runs, and what shows and explains each one.

One :class:`Check` per check names the function that measures it, its label in the
panel, how its key figure reads, what it needs to pass, the keyframe events it
concerns and the suggestion it can make. The verifier (:func:`run_checks`), the
review list (:func:`~..fixes.review.keyframe_checks`), the suggestions
(:func:`~..fixes.suggest.suggest_fixes`), summary.html, the Blender panel
(:mod:`.summary`) and docs/checks.md (``tools/gen_docs.py``) all read
:data:`CHECKS`. Adding a check is a function in :mod:`.checks` that returns
``{"passed": bool, ...figures}``, and one entry here whose ``measure`` calls it
with what it reads from the :class:`CheckInputs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..fixes import joint_rules
from ..fixes import rules as suggestions
from ..geometry.stage import Geometry
from ..mjcf.export import SceneModel
from ..tasks import STEPS_FIELD
from . import checks
from .checks import IMPACT_LIMIT
from .simulate import SimulationRecord


@dataclasses.dataclass(frozen=True)
class CheckInputs:
    """What a check measures.

    Attributes:
        task: ``{"type", "object", "target"}``.
        geometry: The geometry stage's result: shapes, video-derived motion (world frame,
            metres, one row per video frame), keyframes and the gripper path.
        record: The simulation's record (per video frame, world frame, metres).
        scene: The exported model (``model``, ``name_map``).
    """

    task: dict
    geometry: Geometry
    record: SimulationRecord
    scene: SceneModel


@dataclasses.dataclass(frozen=True)
class Check:
    """One check of the verification.

    Attributes:
        name: Its key in report.json's ``verification.checks``.
        label: Its name in the panel, a word or two.
        measure: ``CheckInputs -> {"passed": bool, ...figures}``; a result of None is not
            reported (``simulation_stable`` is written only when it fails).
        figure: ``result -> str``: its key figure in a few words, for the panel.
        needs: What it needs to pass, in a line (summary.html, docs/checks.md).
        events: The keyframe events it concerns (the review list).
        suggest: ``(SuggestionContext, suggestions made so far) -> suggestions`` for its
            failure (:mod:`~..fixes.suggest`), or None.
        whole_run: It reads the simulation to its end, so it is left out when the
            simulation diverged.
    """

    name: str
    label: str
    measure: Callable[[CheckInputs], dict | None]
    figure: Callable[[dict], str]
    needs: str
    events: tuple[str, ...] = ()
    suggest: Callable[..., list[dict]] | None = None
    whole_run: bool = True


def _mm(metres) -> str:
    return f"{float(metres) * 1000:.1f} mm"


def _task_figure(check: dict) -> str:
    if STEPS_FIELD in check:
        done = sum(step["passed"] for step in check[STEPS_FIELD])
        return f"{done} of {len(check[STEPS_FIELD])} steps" + ("" if check["in_order"] else ", out of order")
    if "opening" in check:
        return f"open {check['opening']:.0%}"
    if "raised_m" in check:
        return f"raised {_mm(check['raised_m'])}"
    if "relation" in check:  # a stack
        where = (check["relation"] or "off").replace("_", " ")
        share = "" if check["support_share"] is None else f", carries {check['support_share']:.0%}"
        return f"{where}{share}, tilt {check['target_tilt_deg']:.0f} deg"
    if "landed_share" in check:  # a pour
        return f"{check['landed']} of {check['count']} landed ({check['landed_share']:.0%})"
    if "turned_as_video_ends" in check:  # a shelve
        if check["board"] is not None:
            where = f"on board {check['board']}"
        elif check.get("slot") is not None:
            where = f"in slot {check['slot']}"
        else:
            where = "on it" if check["passed"] else "off"
        share = "" if check["support_share"] is None else f", carried {check['support_share']:.0%}"
        turn = "" if check["up_error_deg"] is None else f", turned {check['up_error_deg']:.0f} deg"
        return f"{where}{share}{turn}"
    if "inside_opening" in check:  # an insert
        need = "" if check["required_depth_m"] is None else f" of {_mm(check['required_depth_m'])}"
        where = "in" if check["inside_opening"] else "out"
        tilt = "" if check["tilt_deg"] is None else f", tilt {check['tilt_deg']:.0f} deg"
        return f"{where}, {_mm(check['inserted_depth_m'])}{need} deep{tilt}"
    if "hangs_clear" in check:
        share = "" if check["support_share"] is None else f"carried {check['support_share']:.0%}, "
        return f"{share}{_mm(check['clearance_m'])} clear"
    if "inside" in check:
        inside = "inside" if check["inside"] else "outside"
        return f"{inside}, {'resting' if check['resting_on_bottom'] else 'not resting'}"
    return f"{_mm(check.get('height_above_bottom_m', 0))} above"


def _grasp_figure(check: dict) -> str:
    gap = check.get("longest_gap_s", 0.0)
    return f"slip {_mm(check['slip_m'])}, {check['held_fraction']:.0%}" + (
        f", gap {gap:.2f} s" if gap else ""
    )


def _penetration_figure(check: dict) -> str:
    # The sustained depth; a momentary one only where it is what broke the limit.
    if check.get("peak_m", 0.0) > IMPACT_LIMIT:
        return f"peak {_mm(check['peak_m'])} ({check['object']}, f {check['frame']})"
    return f"{_mm(check['max_m'])} ({check['object']}, f {check['frame']})"


def _release_figure(check: dict) -> str:
    return f"+{_mm(check['clearance_m'])}, {'freed' if check['freed'] else 'still held'}"


def _hand_figure(check: dict) -> str:
    if not check.get("object"):
        return "untouched"
    return f"{check['object']} +{_mm(check['moved_m'])} ({check['phase']}, f {check['frame']})"


CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        Check(
            "simulation_stable",
            label="Sim stable",
            measure=lambda run: checks.simulation_stable(run.record),
            figure=lambda c: f"diverged at f {c.get('frame')}",
            needs="no NaN or bad accelerations",
            whole_run=False,
        ),
        Check(
            "task_success",
            label="Task",
            measure=lambda run: checks.task_success(run.task, run.geometry, run.record),
            figure=_task_figure,
            needs="place_in: the object inside the container's inner radius, below its rim, resting within 1 cm "
            "of its inner bottom at the end (inside a cabinet's or drawer's cavity, on its floor); place_on: "
            "resting on the target's top; stack: nested in or on top of the target, which carries 90 % of its weight "
            "and stands within 10 degrees of how it started; hang: the target carries 90 % of its weight, its lowest "
            "point 1 cm clear of the table and a rack's base; shelve: on a board of the shelf or standing in a slot of "
            "the dish rack, which carries 90 % of its weight, turned within 15 degrees of how the video ends; insert: inside the target's opening, as deep as the "
            "video shows it less 2 mm (or the task's depth), within 0.2 rad of its axis; pour: at least 80 % (the task's min_share) of the contents "
            "inside the target's opening; lift: risen more than 2 cm; open / close: the part's joint ends past "
            "0.8 of its range / within 0.05 of closed; steps: each step done, in order",
            events=("contact",),
            suggest=suggestions.task_fixes,
        ),
        Check(
            "grasp_held",
            label="Grasp",
            measure=lambda run: checks.grasp_held(run.task, run.geometry, run.record),
            figure=_grasp_figure,
            needs=f"the object goes with the hand from grasp to release: slip along the fingers under "
            f"{checks.SLIP_LIMIT * 100:.0f} cm, and both pads never off it for more than "
            f"{checks.HOLD_GAP_S:g} s",
            events=("grasp", "lift", "release"),
            suggest=suggestions.grasp_timing,
        ),
        Check(
            "support",
            label="Support",
            measure=lambda run: checks.support(run.task, run.geometry, run.record),
            figure=lambda c: f"ratio {c['ratio']:.2f}",
            needs=f"the upward contact forces carry its weight within {checks.SUPPORT_TOLERANCE:.0%}",
            events=("contact",),
        ),
        Check(
            "stability",
            label="Stability",
            measure=lambda run: checks.stability(run.record),
            figure=lambda c: f"{c['max_linear_speed_m_s'] * 1000:.1f} mm/s",
            needs=f"over the last 0.5 s every object slower than {checks.LINEAR_SPEED_LIMIT * 100:.0f} cm/s and "
            f"{checks.ANGULAR_SPEED_LIMIT:g} rad/s",
        ),
        Check(
            "penetration",
            label="Penetration",
            measure=lambda run: checks.penetration(run.record),
            figure=_penetration_figure,
            needs=f"held penetration at most {checks.PENETRATION_LIMIT * 1000:.0f} mm, momentary at most "
            f"{checks.IMPACT_LIMIT * 1000:.0f} mm",
            events=("contact",),
            suggest=suggestions.start_above_support,
        ),
        Check(
            "trajectory_fidelity",
            label="Fidelity",
            measure=lambda run: checks.trajectory_fidelity(run.task, run.geometry, run.record),
            figure=lambda c: f"RMS {_mm(max(c['rms_m'].values(), default=0.0))}",
            needs=f"simulated path within {checks.FIDELITY_LIMIT * 100:.0f} cm RMS of the video's in each phase",
        ),
        Check(
            "joint_fidelity",
            label="Joints",
            measure=lambda run: checks.joint_fidelity(run.geometry, run.record),
            figure=lambda c: ", ".join(f"{k} RMS {v['rms']:g} {v['unit']}" for k, v in c["parts"].items()),
            needs=f"each moving part's simulated joint value within {checks.JOINT_FIDELITY_LIMIT['hinge']:g} rad "
            f"(hinge) or {checks.JOINT_FIDELITY_LIMIT['slide'] * 100:g} cm (slide) RMS of the video's",
            events=("push", "open", "closed"),
            suggest=joint_rules.joint_repair,
        ),
        Check(
            "release_clearance",
            label="Release",
            measure=lambda run: checks.release_clearance(run.task, run.geometry, run.record),
            figure=_release_figure,
            needs=f"the release frees the object within {checks.RELEASE_FREE_S:g} s "
            "(or the video does not show it freed either)",
            events=("release",),
            suggest=suggestions.wider_release,
        ),
        Check(
            "hand_clearance",
            label="Hand clear",
            measure=lambda run: checks.hand_clearance(run.task, run.geometry, run.record),
            figure=_hand_figure,
            needs=f"the hand moves nothing it does not hold by more than {checks.HAND_PUSH_LIMIT * 100:.0f} cm",
            suggest=suggestions.clear_hand_path,
        ),
        Check(
            "objects_at_rest_at_start",
            label="At rest",
            measure=lambda run: checks.objects_at_rest_at_start(run.geometry, run.record),
            figure=lambda c: f"{_mm(c['moved_m'])} ({c['object'] or 'none'})",
            needs=f"no object moves more than {checks.AT_REST_LIMIT * 1000:.0f} mm in the first "
            f"{checks.AT_REST_S:g} s, before the gripper touches one",
        ),
        Check(
            "no_shortcuts",
            label="No shortcuts",
            measure=lambda run: checks.no_shortcuts(run.scene.model, run.scene.name_map),
            figure=lambda c: "none" if not c["problems"] else f"{len(c['problems'])} found",
            needs="no weld, mocap body or disabled contact on any object",
            whole_run=False,
        ),
    )
}
"""Every check, in report order: ``verification.checks`` lists them in this order."""


def run_checks(inputs: CheckInputs) -> dict[str, dict]:
    """Measures every check of :data:`CHECKS`, in table order.

    Args:
        inputs: The task, geometry, simulation and model to judge.

    Returns:
        Check name -> ``{"passed", ...figures}``. When the simulation diverged only the
        checks that do not read it to its end are there (``simulation_stable``, ``no_shortcuts``).
    """
    diverged = inputs.record.diverged_frame is not None
    results = {}
    for check in CHECKS.values():
        if diverged and check.whole_run:
            continue
        result = check.measure(inputs)
        if result is not None:
            results[check.name] = result
    return results
