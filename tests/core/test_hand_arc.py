"""A hinge placed by the recorded hand that turned it (geometry/hand_arc.py): the arc's centre, the angle it
sweeps, and the paths that are no arc about a hinge."""

from __future__ import annotations

import math

import numpy as np
import pytest

from real2gym.real2gym_addon.geometry.hand_arc import hand_arc, motion_window, turned_with_hand
from real2gym.real2gym_addon.geometry.parts import Joint

HINGE = np.array([0.10, 0.20, 0.0])
"""Where the door truly turns (world)."""


def _door(axis=(0.0, 0.0, 1.0), frames: int = 60, start: int = 20, end: int = 40, angle: float = 1.5):
    """A door's values per frame (still, turned by ``angle`` from ``start`` to ``end``, still), and a hand
    holding it 0.3 m out from the true hinge, 0.15 m up."""
    axis = np.asarray(axis, float)
    q = np.zeros(frames)
    q[start : end + 1] = np.linspace(0.0, angle, end - start + 1)
    q[end + 1 :] = angle
    out = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
    out /= np.linalg.norm(out)
    side = np.cross(axis, out)
    hand = np.array([HINGE + 0.15 * axis + 0.3 * (math.cos(v) * out + math.sin(v) * side) for v in q])
    return q, hand


def _off_line(point: np.ndarray, axis: np.ndarray) -> float:
    d = point - HINGE
    return float(np.linalg.norm(d - axis * (d @ axis)))


@pytest.mark.parametrize("axis", [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)])
def test_the_arcs_centre_is_the_hinge_and_its_sweep_the_turn(axis) -> None:
    axis = np.asarray(axis, float)
    q, hand = _door(axis)
    fitted = Joint(
        "hinge", axis, HINGE + 0.025 * np.cross(axis, [0.3, 0.5, 0.8]), (0.0, 1.5), 0.0
    )  # 2-3 cm off
    arc = hand_arc(fitted, q, hand)
    assert arc is not None
    assert _off_line(arc.pivot, axis) < 1e-6
    assert (arc.pivot - fitted.pivot) @ axis == pytest.approx(0.0, abs=1e-9)  # level with the fitted pivot
    assert arc.turned[-1] == pytest.approx(1.5, abs=1e-6)
    assert arc.radius == pytest.approx(0.3, abs=1e-6)


def test_a_noisy_recording_still_places_the_hinge_within_millimetres() -> None:
    # 1 mm of noise on each coordinate of 21 frames over 86 degrees: 4.3 mm off (the points' fit left the
    # generated microwaves 16-27 mm off).
    q, hand = _door()
    hand = hand + np.random.default_rng(0).normal(0.0, 0.001, hand.shape)
    arc = hand_arc(
        Joint("hinge", np.array([0.0, 0.0, 1.0]), HINGE + [0.02, 0.0, 0.0], (0.0, 1.5), 0.0), q, hand
    )
    assert arc is not None and _off_line(arc.pivot, np.array([0.0, 0.0, 1.0])) < 0.006


def test_a_hand_that_lets_go_part_way_still_places_the_hinge() -> None:
    """Pushed through 40 % of its turn, then left to swing on as the hand backs straight off: the stretch the
    hand traced is the arc (the whole motion is none)."""
    q, hand = _door()
    let_go = 28  # of the motion's frames 20-40
    back = -(hand[let_go] - hand[let_go - 1]) / np.linalg.norm(hand[let_go] - hand[let_go - 1])
    hand[let_go + 1 :] = hand[let_go] + np.outer(np.minimum(np.arange(1, len(q) - let_go), 8), 0.01 * back)
    arc = hand_arc(
        Joint("hinge", np.array([0.0, 0.0, 1.0]), HINGE + [0.03, 0.0, 0.0], (0.0, 1.5), 0.0), q, hand
    )
    # Backing off along the arc's tangent stays near the circle for a frame or two.
    assert arc is not None and let_go <= arc.end <= let_go + 3
    assert _off_line(arc.pivot, np.array([0.0, 0.0, 1.0])) < 0.002
    hand[let_go + 1 :] = hand[let_go]  # a hand that stops while the door swings on: with it until it stopped
    arc = hand_arc(
        Joint("hinge", np.array([0.0, 0.0, 1.0]), HINGE + [0.03, 0.0, 0.0], (0.0, 1.5), 0.0), q, hand
    )
    assert (
        arc is not None and arc.end <= let_go + 3 and _off_line(arc.pivot, np.array([0.0, 0.0, 1.0])) < 1e-6
    )


def test_paths_that_are_no_arc_about_a_hinge_place_nothing() -> None:
    axis = np.array([0.0, 0.0, 1.0])
    joint = Joint("hinge", axis, HINGE, (0.0, 1.5), 0.0)
    q, hand = _door()
    sliding = hand.copy()
    sliding[20:41] = np.linspace(hand[20], hand[40], 21)  # straight across: a hand sliding over the door
    assert hand_arc(joint, q, sliding) is None
    assert hand_arc(joint, -q, hand) is None  # the hand turns the other way than the door
    assert hand_arc(joint, np.zeros(len(q)), hand) is None  # the door never moves
    short_q, short_hand = _door(angle=0.2)
    assert hand_arc(joint, short_q, short_hand) is None  # 11 degrees: too short an arc


def test_without_depth_the_sweep_is_anchored_at_the_closed_end() -> None:
    q, hand = _door(angle=1.5)
    arc = hand_arc(Joint("hinge", np.array([0.0, 0.0, 1.0]), HINGE, (0.0, 1.5), 0.0), q, hand)
    seen = q * 0.85  # silhouettes of a door seen nearly edge-on: its angle 15 % short
    turned = turned_with_hand(seen, arc, closed=0.0)
    assert turned[0] == pytest.approx(0.0, abs=1e-9) and turned[-1] == pytest.approx(1.5, abs=1e-6)
    closing = turned_with_hand(seen[::-1].copy(), hand_arc(
        Joint("hinge", np.array([0.0, 0.0, 1.0]), HINGE, (0.0, 1.5), 0.0), q[::-1].copy(), hand[::-1].copy()
    ), closed=0.0)  # fmt: skip
    assert closing[-1] == pytest.approx(0.0, abs=1e-9) and closing[0] == pytest.approx(1.5, abs=1e-6)


def test_the_motion_window() -> None:
    q, _ = _door(start=20, end=40)
    assert motion_window(q) == (20, 40)
    assert motion_window(np.zeros(10)) is None
