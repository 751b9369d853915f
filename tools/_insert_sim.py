"""Run the insert scene's script in MuJoCo, read the keyframes from the contacts, check the outcome.

Times are video seconds (0 on the first frame); an event at time t shows first on frame ``ceil(t * fps)``
(``_demo_contacts``). Poses are in the world frame (metres, quaternions [w, x, y, z]).

The hand is force-limited in one way: while it lowers the peg and lets go, a peg *blocked* by the socket
(touching it with its lowest point still over the socket's top, as a peg too wide for the hole is on its
rim) stops the hand's descent where it is: it goes no lower until the script's lowering ends, and the rest
of the script (opening, rising clear of the peg's top, going away) is raised by as much as the hand was
stopped short (``_task_sim.StoppingHand``). A peg that goes into the hole is never blocked: it
touches the socket only below its top.

The peg is *inserted* at the end when its axis is within the fit's clearance (the hole's radius less the
peg's, plus ``AXIS_TOL``) of the hole's axis, both at its bottom and at the socket's top, its bottom face's
centre within ``DEPTH_TOL`` of ``intended_depth`` under the socket's top, it stands within ``UPRIGHT_DEG``
of upright, the hand does not touch it and it has come to rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np
from _articulated_motion import Script
from _demo_contacts import both, check_carry, record, touching
from _demo_play import play
from _demo_sim import SimResult
from _insert_scene import InsertLayout, lowest_point
from _task_sim import StoppingHand, check_hand, geom_kinds, hold_keyframes
from scipy.spatial.transform import Rotation

AXIS_TOL = 0.001  # m beyond the clearance: the wall boxes' 16-sided opening and soft contacts
DEPTH_TOL = 0.003  # the peg's bottom within this (m) of the intended depth
UPRIGHT_DEG = 5.0  # the inserted peg's axis within this of world z
REST_SPEED = 0.02  # m/s: it has come to rest once slower
SLIP_M, SLIP_DEG = 0.005, 5.0  # the peg moves at most this far and turns at most this much in the hand
STILL_M, STILL_DEG = 0.001, 1.0  # the socket moves at most this far and turns at most this much
BLOCKED_OVER = (
    0.001  # a peg touching the socket with its lowest point more than this (m) under the top goes in
)
BODIES = ("hand", "peg", "socket")
# One bit per kind of geom: a contact's two kinds or-ed say what touches what.
LEFT_PAD, RIGHT_PAD, FINGERS, PALM, PEG, TABLE, FLOOR, WALL = (1 << bit for bit in range(8))
HAND = LEFT_PAD | RIGHT_PAD | FINGERS | PALM
SOCKET = FLOOR | WALL


@dataclass
class InsertResult(SimResult):
    """What happened: ``SimResult``'s per-frame states, checks and failures, plus

    Attributes:
        events: Keyframes as truth.json writes them: ``frame``, ``event``, ``object`` (and ``target``).
        peg_bottom: Per frame, the peg's lowest point above the table (m).
        stopped_at: The video time the hand's descent was stopped by a blocked peg (s), or None.
    """

    events: list[dict] = field(default_factory=list)
    peg_bottom: list[float] = field(default_factory=list)
    stopped_at: float | None = None


def _kinds(model: mujoco.MjModel) -> np.ndarray:
    """Each geom's contact kind (0 for the floor, the wall and the camera's things)."""
    named = {"pad_left": LEFT_PAD, "pad_right": RIGHT_PAD, "finger_left": FINGERS, "finger_right": FINGERS,
             "palm": PALM, "flange": PALM, "table": TABLE, "peg": PEG, "socket_bottom": FLOOR}  # fmt: skip
    return geom_kinds(model, named, (("socket_wall", lambda _: WALL),))


def _peg_bottom(data: mujoco.MjData, layout: InsertLayout) -> float:
    """The peg's lowest point now, above the table (m)."""
    axis = data.body("peg").xmat.reshape(3, 3)[:, 2]
    return lowest_point(data.body("peg").xpos, axis, layout.peg.radius, layout.peg.length)


def simulate(
    model: mujoco.MjModel,
    layout: InsertLayout,
    script: Script,
    frames: int,
    fps: float,
    on_frame: Callable[[int, mujoco.MjData], None],
) -> InsertResult:
    """Run the script (stopping the hand's descent on a blocked peg), calling ``on_frame`` on every video
    frame; find the keyframes; check the outcome.

    Args:
        model: The scene (``_insert_model.build_model``).
        layout: Its sizes and places.
        script: The gripper's script (``_insert_motion.plan_script``).
        frames: Number of video frames.
        fps: Frame rate.
        on_frame: Called with (frame index, data) when the simulation reaches each frame.

    Returns:
        Per-frame states, keyframes, checks and failures.
    """
    data = mujoco.MjData(model)
    kind = _kinds(model)
    steps: list[tuple] = []
    result = InsertResult()
    hand = StoppingHand(script)

    def on_step(time: float) -> None:
        touch = touching(data, kind)
        on_socket = both(touch, PEG, SOCKET)
        held = both(touch, PEG, LEFT_PAD) and both(touch, PEG, RIGHT_PAD)
        steps.append((time, held, both(touch, PEG, TABLE), both(touch, HAND, SOCKET), both(touch, HAND, PEG),
                      both(touch, PEG, FINGERS | PALM), on_socket))  # fmt: skip
        top = data.body("socket").xpos[2] + layout.socket.height / 2
        if hand.watching(time) and on_socket and _peg_bottom(data, layout) > top - BLOCKED_OVER:
            hand.stop(time, float(data.body("hand").xpos[2]))

    def frame(index: int, now: mujoco.MjData) -> None:
        result.peg_bottom.append(_peg_bottom(now, layout))
        on_frame(index, now)

    result.frames = play(model, data, hand.pose_at, frames, fps, BODIES, on_step, frame)
    result.stopped_at = hand.stopped_at
    result.events = hold_keyframes(steps, fps, frames, "peg", "socket")
    result.keyframes = {e["event"]: e["frame"] for e in result.events}
    _check(data, kind, layout, steps, result, script)
    return result


def _check(
    data: mujoco.MjData, kind: np.ndarray, layout: InsertLayout, steps: list[tuple], result: InsertResult,
    script: Script,
) -> None:  # fmt: skip
    """Checks of the outcome: the events in order, the carry, the peg held without slipping and by the pads
    alone, the hand clear of the socket and (once open) of the peg, the socket still, and where the peg ends
    (``_check_end``)."""
    socket = layout.socket
    check_carry(result, steps, "peg", "socket", result.peg_bottom, socket.height, layout.carry_clearance,
                (SLIP_M, SLIP_DEG))  # fmt: skip
    check_hand(result, steps, script, "peg", "socket", "the socket", let_go_to_fall=False)
    moved, turned = _moved(result, "socket")
    record(result, "socket_still", moved <= STILL_M and turned <= STILL_DEG,
           f"the socket moved {moved * 1000:.1f} mm and turned {turned:.1f} deg (at most "
           f"{STILL_M * 1000:g} mm and {STILL_DEG:g} deg)", moved_m=moved, turned_deg=turned,
           limit_m=STILL_M, limit_deg=STILL_DEG)  # fmt: skip
    _check_end(data, kind, layout, result)


def _moved(result: InsertResult, body: str) -> tuple[float, float]:
    """How far (m) and by how much (deg) ``body`` got from where it was on the first frame, at most."""
    first, moved, turned = result.frames[0].poses[body], 0.0, 0.0
    start = Rotation.from_quat(first[1], scalar_first=True)
    for state in result.frames:
        position, quat = state.poses[body]
        moved = max(moved, float(np.linalg.norm(position - first[0])))
        turn = Rotation.from_quat(quat, scalar_first=True) * start.inv()
        turned = max(turned, float(np.rad2deg(turn.magnitude())))
    return moved, turned


def _check_end(data: mujoco.MjData, kind: np.ndarray, layout: InsertLayout, result: InsertResult) -> None:
    """The peg ends inserted to the intended depth (``peg_inserted``), or, the hole made too narrow on
    purpose, does not (``blocked_on_purpose``)."""
    socket, peg = layout.socket, layout.peg
    to_socket = data.body("socket").xmat.reshape(3, 3).T
    centre = to_socket @ (data.body("peg").xpos - data.body("socket").xpos)
    axis = to_socket @ data.body("peg").xmat.reshape(3, 3)[:, 2]
    bottom = centre - peg.length / 2 * axis * np.sign(axis[2] or 1.0)
    top = socket.height / 2
    at_top = bottom + axis / axis[2] * (top - bottom[2]) if abs(axis[2]) > 0.1 else bottom
    off_axis = float(max(np.hypot(*bottom[:2]), np.hypot(*at_top[:2])))
    clearance = socket.inner_radius - peg.radius
    depth = float(top - bottom[2])
    tilt = float(np.rad2deg(np.arccos(np.clip(abs(data.body("peg").xmat.reshape(3, 3)[2, 2]), -1.0, 1.0))))
    touch = touching(data, kind)
    speed = float(np.linalg.norm(data.joint("peg").qvel[:3]))
    in_hole = off_axis <= clearance + AXIS_TOL
    deep = abs(depth - layout.intended_depth) <= DEPTH_TOL
    inserted = bool(
        in_hole and deep and tilt <= UPRIGHT_DEG and not both(touch, PEG, HAND) and speed <= REST_SPEED
    )
    figures = {"inserted_depth_m": depth, "intended_depth_m": layout.intended_depth, "depth_tol_m": DEPTH_TOL,
               "off_axis_m": off_axis, "clearance_m": clearance, "axis_tol_m": AXIS_TOL, "tilt_deg": tilt,
               "limit_deg": UPRIGHT_DEG, "touches_hole_bottom": both(touch, PEG, FLOOR),
               "touches_hole_wall": both(touch, PEG, WALL), "touches_table": both(touch, PEG, TABLE),
               "touches_hand": both(touch, PEG, HAND), "speed_m_s": speed,
               "hand_stopped_at_s": result.stopped_at}  # fmt: skip
    if layout.narrow:
        record(result, "blocked_on_purpose", not inserted,
               f"the peg went into a hole {layout.narrow * 1000:.1f} mm narrower than its radius "
               "(raise --narrow)", narrow_m=layout.narrow, **figures)  # fmt: skip
        return
    stopped = f"; the hand stopped at {result.stopped_at:.2f} s on a blocked peg" if result.stopped_at else ""
    record(result, "peg_inserted", inserted,
           f"the peg does not end inserted: its bottom {depth * 1000:.1f} mm under the socket's top (meant "
           f"{layout.intended_depth * 1000:.1f} mm), its axis {off_axis * 1000:.1f} mm off the hole's "
           f"(clearance {clearance * 1000:.1f} mm), tilted {tilt:.1f} deg, moving at {speed * 100:.1f} cm/s"
           f"{stopped}", **figures)  # fmt: skip
