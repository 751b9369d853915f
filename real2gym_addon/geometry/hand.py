"""The demonstrator's hand in the video as evidence of the grasp and the release.

A prompt with ``"role": "hand"`` is segmented with the objects (any backend, the
``given`` one included) but is not fitted or simulated. Without a recorded
gripper, its masks say when the carried object is held:

- The hand *touches* the object on a frame where its mask comes within a few
  pixels of the object's (or of the object's projected place where a hand or a
  cup's rim hides it). Depth is not used: beside a mask that shows a sliver of
  the object, the object's readings mix with the table's and the hand's, and a
  test of the hand's depth against the object's rejected true touches on two of
  the eight benchmark scenes.
- The hand is *still* between two frames where the part of it around the object
  moves less than :data:`STILL_SHARE` of the object's size in the image.
- **Grasp**: a hand comes to the object, stops and closes, then lifts it. In the
  unbroken stretch of frames before the lift on which the hand touches the
  object, the grasp is the first frame it stands still; its moving on from that
  still run is where the object starts to move with it (the lift, where the
  object's own rise shows later).
- **Release**: a hand sets the object down, stops, lets go and leaves. The
  hand *parts* on the frame from which it never touches the object again; the
  release is the last frame of the still run before that (or, where the hand
  never stops, the frame before it parts).

Where the hand is not seen near the object, nothing is concluded: the keyframes
come from the object's motion as before (``keyframes.detect_events``).
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from ..demo import Camera
from .camera import pose_at, project, transform

STILL_SHARE = 0.04
"""The hand is still where the part of it near the object moves less than this share of the object's
size in the image from one frame to the next (at least :data:`STILL_PIXELS`)."""
STILL_PIXELS = 1.0
TOUCH_SHARE = 0.25
"""The hand touches the object where its mask comes within this share of the object's radius in the
image (at least :data:`TOUCH_PIXELS`) of the object's mask or projected place."""
TOUCH_PIXELS = 3
NEAR_SHARE = 1.5
"""Around the object, out to this many of its radii: the part of the hand whose motion is judged."""
MIN_HAND_PIXELS = 20
"""Fewer hand pixels near the object than this: the hand is not seen there."""
CARRY_TOUCH = 0.8
"""Share of the frames the object spends in the air on which the hand's mask must touch it for its masks
to be taken as evidence: an object in the air is held, so a hand mask that misses that has lost the hand
(a colour tracker that keeps the sleeve and loses pale fingers)."""
MAX_GRASP_LEAD_S = 1.5
"""A still run before the lift longer than this is the hand waiting, not closing: the grasp is put this
long before the lift at the earliest."""


@dataclasses.dataclass
class HandEvidence:
    """Per frame, what the hand's masks say about one object.

    Attributes:
        name: The hand's name in prompts.json.
        touch: ``N`` bool, the hand touches the object.
        still: ``N`` bool, the hand near the object does not move from this frame to the next
            (False on the last frame and where the hand is not seen near the object).
        shift: ``N`` pixels the hand near the object moves to the next frame (NaN where unknown).
    """

    name: str
    touch: np.ndarray
    still: np.ndarray
    shift: np.ndarray

    def follows(self, in_air: np.ndarray) -> bool:
        """Whether the hand's masks touch the object on :data:`CARRY_TOUCH` of the frames ``in_air`` (``N``
        bool, where the object is off what it stood on and what it ends on: held)."""
        return bool(in_air.any()) and float(self.touch[in_air].mean()) >= CARRY_TOUCH

    def grasp(self, lift: int, fps: float) -> tuple[int, int] | None:
        """``(grasp, start)``: in the stretch of frames before ``lift`` on which the hand touches the object
        without a break, the first frame the hand stands still (it has come to the object and closes), and
        the frame after that still run, where it starts to move with the object (the lift's start as the
        hand shows it: a partly hidden object's own height can show its rise frames later). None where the
        hand is not seen so."""
        if lift <= 0 or lift > len(self.touch) or not self.touch[lift - 1]:
            return None
        earliest = max(0, lift - round(MAX_GRASP_LEAD_S * fps))
        first = lift - 1
        while first > earliest and self.touch[first - 1]:
            first -= 1
        still = np.nonzero(self.still[first:lift])[0]
        if not len(still):
            return None
        grasp = start = first + int(still[0])
        while start < lift and self.still[start]:
            start += 1
        return grasp, start

    def release(self, lift: int) -> tuple[int, int] | None:
        """``(release, parted)``: where the hand lets go after ``lift`` and the first frame from which it
        never touches the object again; None where it does not part from it in the video."""
        touching = np.nonzero(self.touch[lift:])[0]
        if not len(touching):
            return None
        parted = lift + int(touching[-1]) + 1
        if parted >= len(self.touch):
            return None  # it still holds the object as the video ends
        frame = parted - 1
        while frame > lift and not self.still[frame - 1]:
            frame -= 1
        if frame == lift:  # never still: it let go on the way
            return parted - 1, parted
        return frame, parted


def hand_evidence(
    name: str,
    hand_masks: list[np.ndarray],
    object_masks: list[np.ndarray],
    positions_world: np.ndarray,
    size: np.ndarray,
    camera: Camera,
    views_from_world: np.ndarray,
) -> HandEvidence:
    """What the hand's masks say about one object on every frame.

    Args:
        name: The hand's name.
        hand_masks: The hand's mask per frame (video size, bool).
        object_masks: The object's mask per frame (video size, bool; empty where it is not seen).
        positions_world: The object's centre per frame (``Nx3``, world frame): its place where it is hidden.
        size: The object's bounding-box size (m).
        camera: The intrinsics.
        views_from_world: camera_from_world, one 4x4 or one per frame.
    """
    count = len(hand_masks)
    height, width = hand_masks[0].shape
    touch = np.zeros(count, bool)
    shift = np.full(count, np.nan)
    radii = np.zeros(count)  # the object's radius in the image (pixels)
    radius_m = 0.5 * float(np.linalg.norm(size))
    for frame in range(count):
        centre_cam = transform(pose_at(views_from_world, frame), positions_world[frame][None])[0]
        if centre_cam[2] <= 0:
            continue
        u, v = project(camera, centre_cam[None])[0]
        radius = radii[frame] = max(radius_m * camera.fx / centre_cam[2], 2.0)
        reach = int(np.ceil(max(TOUCH_PIXELS, TOUCH_SHARE * radius)))
        near = int(np.ceil(NEAR_SHARE * radius)) + reach
        x0, x1 = max(int(u) - near, 0), min(int(u) + near + 1, width)
        y0, y1 = max(int(v) - near, 0), min(int(v) + near + 1, height)
        if x1 <= x0 or y1 <= y0:
            continue
        hand = hand_masks[frame][y0:y1, x0:x1]
        if np.count_nonzero(hand) < MIN_HAND_PIXELS:
            continue
        region = object_masks[frame][y0:y1, x0:x1].astype(np.uint8)
        cv2.circle(region, (int(round(u)) - x0, int(round(v)) - y0), int(round(radius)), 1, -1)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
        close = hand & (cv2.dilate(region, kernel) > 0)
        touch[frame] = close.any()
        if frame + 1 < count:
            following = hand_masks[frame + 1][y0:y1, x0:x1]
            if np.count_nonzero(following) >= MIN_HAND_PIXELS:
                shift[frame] = float(np.linalg.norm(_centroid(following) - _centroid(hand)))
    limit = np.maximum(STILL_PIXELS, STILL_SHARE * 2 * radii)
    still = np.nan_to_num(shift, nan=np.inf) <= limit
    return HandEvidence(name, touch, still, shift)


def _centroid(mask: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(mask)
    return np.array([cols.mean(), rows.mean()])
