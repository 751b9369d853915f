"""The hand seen in the video as evidence of the grasp and the release (issue 28, part 3)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import Camera, load_demo
from real2gym.real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym.real2gym_addon.geometry.hand import hand_evidence
from real2gym.real2gym_addon.geometry.keyframes import detect_events
from real2gym.real2gym_addon.geometry.motion import Motion

FRAMES, FPS = 48, 30.0
CAMERA = Camera(width=320, height=240, fx=300.0, fy=300.0, cx=160.0, cy=120.0)
WORLD_FROM_CAMERA = np.array([[1.0, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, 0.6], [0, 0, 0, 1]])  # looking down
SIZE = np.array([0.04, 0.04, 0.05])


def _pixel(point_world: np.ndarray) -> np.ndarray:
    cam = np.linalg.inv(WORLD_FROM_CAMERA) @ np.r_[point_world, 1.0]
    return np.array([CAMERA.fx * cam[0] / cam[2] + CAMERA.cx, CAMERA.fy * cam[1] / cam[2] + CAMERA.cy])


def _carry(grasp: int, lift: int, placed: int, release: int):
    """A block carried 10 cm sideways; a hand that comes from the right, stops at it (``grasp``), carries
    it from ``lift``, sets it down (``placed``), stays until ``release`` and leaves."""
    start, end = np.array([0.0, 0.0, 0.025]), np.array([0.1, 0.0, 0.025])
    positions = np.zeros((FRAMES, 3))
    for f in range(FRAMES):
        share = np.clip((f - lift) / (placed - lift), 0.0, 1.0)
        positions[f] = start + share * (end - start) + [0, 0, 0.06 * np.sin(np.pi * share)]
    hand_offset = np.zeros((FRAMES, 2))  # pixels from the block's side
    for f in range(FRAMES):
        if f < grasp:
            hand_offset[f] = [6.0 * (grasp - f), -3.0 * (grasp - f)]
        elif f > release:
            hand_offset[f] = [8.0 * (f - release), -10.0 * (f - release)]
    objects, hands = [], []
    for f in range(FRAMES):
        centre = _pixel(positions[f])
        radius = 0.5 * np.linalg.norm(SIZE) * CAMERA.fx / 0.575
        block = np.zeros((CAMERA.height, CAMERA.width), np.uint8)
        cv2.circle(block, tuple(np.round(centre).astype(int)), int(radius * 0.7), 1, -1)
        hand = np.zeros_like(block)
        at = centre + [radius * 0.7 + 12, 0] + hand_offset[f]
        cv2.ellipse(hand, tuple(np.round(at).astype(int)), (14, 10), 0, 0, 360, 1, -1)
        objects.append(block.astype(bool) & ~hand.astype(bool))
        hands.append(hand.astype(bool))
    return positions, objects, hands


def test_grasp_and_release_are_where_the_hand_stops_at_the_object_and_where_it_leaves():
    positions, objects, hands = _carry(grasp=10, lift=15, placed=30, release=34)
    views = np.linalg.inv(WORLD_FROM_CAMERA)
    evidence = hand_evidence("hand", hands, objects, positions, SIZE, CAMERA, views)
    assert evidence.touch[10:35].all() and not evidence.touch[:5].any() and not evidence.touch[40:].any()
    motion = Motion(positions, np.zeros(FRAMES), np.ones(FRAMES, bool))
    log = WarningLog()
    events = detect_events("block", motion, FPS, None, log, SIZE[2], SIZE, evidence)
    found = {e["event"]: e["frame"] for e in events}
    assert found["grasp"] == 10 and found["release"] == 34, events
    assert all(e.get("source") == "hand" for e in events if e["event"] in ("grasp", "release"))
    assert not any("estimated" in w.message for w in log.warnings), log.warnings

    # The same motion without the hand: the grasp is the estimate 0.2 s before the lift, with a warning.
    log = WarningLog()
    events = detect_events("block", motion, FPS, None, log, SIZE[2], SIZE)
    found = {e["event"]: e["frame"] for e in events}
    assert any("estimated from the lift" in w.message for w in log.warnings)


def test_the_hand_moving_off_with_the_object_is_its_lift_where_its_own_rise_shows_late():
    positions, objects, hands = _carry(grasp=10, lift=15, placed=30, release=34)
    evidence = hand_evidence(
        "hand", hands, objects, positions, SIZE, CAMERA, np.linalg.inv(WORLD_FROM_CAMERA)
    )
    late = positions.copy()
    late[15:21] = positions[14]  # a partly hidden object's height shows its rise 6 frames late
    motion = Motion(late, np.zeros(FRAMES), np.ones(FRAMES, bool))
    events = detect_events("block", motion, FPS, None, WarningLog(), SIZE[2], SIZE, evidence)
    found = {e["event"]: e for e in events}
    assert (found["grasp"]["frame"], found["lift"]["frame"]) == (10, 15), events
    assert found["lift"]["source"] == "hand"


def test_a_hand_that_passes_by_without_stopping_is_no_evidence_of_a_grasp():
    positions, objects, hands = _carry(grasp=10, lift=15, placed=30, release=34)
    moving = [np.roll(h, 4 * f, axis=0) for f, h in enumerate(hands)]  # it sweeps down the image throughout
    evidence = hand_evidence(
        "hand", moving, objects, positions, SIZE, CAMERA, np.linalg.inv(WORLD_FROM_CAMERA)
    )
    assert evidence.grasp(15, FPS) is None


@pytest.fixture
def demo_with_hand(demo):
    folder = demo
    prompts = json.loads((folder / "prompts.json").read_text())
    prompts["objects"].append({"name": "gripper", "frame": 5, "box": [10, 10, 60, 60], "role": "hand"})
    (folder / "prompts.json").write_text(json.dumps(prompts))
    return folder, prompts


def test_a_hand_prompt_is_kept_apart_from_the_objects(demo_with_hand):
    folder, _ = demo_with_hand
    demo = load_demo(folder)
    assert [h.name for h in demo.hands] == ["gripper"]
    assert "gripper" not in [o.name for o in demo.objects]


def test_a_task_that_names_a_hand_is_refused_with_the_reason(demo_with_hand):
    folder, prompts = demo_with_hand
    prompts["task"]["object"] = "gripper"
    (folder / "prompts.json").write_text(json.dumps(prompts))
    with pytest.raises(DemoFolderError, match="'gripper' is a hand"):
        load_demo(folder)
