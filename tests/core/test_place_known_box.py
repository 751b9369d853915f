"""A body of known size placed from its silhouettes alone, its door's pixels neither its nor the background's."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.camera import invert, pose_matrix, yaw_rotation
from real2gym.real2gym_addon.geometry.fit_base import FittedObject, RestView
from real2gym.real2gym_addon.geometry.no_depth import place_known_box
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.geometry.silhouette import silhouette_mismatch, silhouette_polygon

CAMERA = Camera(320, 240, 290.0, 290.0, 159.5, 119.5)
SIZE = (0.30, 0.40, 0.32)  # depth (along its front normal, local x), width, height


def _view() -> np.ndarray:
    """camera_from_world of a camera 1 m out in front of the body (+x), 0.6 m up, looking at it."""
    eye, target = np.array([0.8, 0.6, 0.7]), np.array([0.0, 0.0, 0.12])
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    return invert(pose_matrix(eye, np.column_stack([right, down, forward])))


def _fill(polygon: np.ndarray) -> np.ndarray:
    mask = np.zeros((CAMERA.height, CAMERA.width), np.uint8)
    cv2.fillPoly(mask, [np.round(polygon).astype(np.int32)], 1)
    return mask > 0


def _masks(yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """The body's mask (its door's pixels taken out) and the door's, the door shut over its front."""
    view = _view()
    body = pose_matrix(np.array([0.02, -0.01, SIZE[2] / 2]), yaw_rotation(yaw))
    door = body @ pose_matrix(np.array([SIZE[0] / 2 + 0.01, 0.0, 0.0]), np.eye(3))
    box = _fill(silhouette_polygon(Shape("box", SIZE), view @ body, CAMERA))
    panel = _fill(silhouette_polygon(Shape("box", (0.02, SIZE[1], SIZE[2])), view @ door, CAMERA))
    return box & ~panel, panel


def test_a_door_in_front_is_neither_the_body_nor_background() -> None:
    body, door = _masks(0.2)
    outline = silhouette_polygon(Shape("box", SIZE), _view() @ pose_matrix(np.array([0.02, -0.01, 0.16]), yaw_rotation(0.2)), CAMERA)  # fmt: skip
    blind = silhouette_mismatch(outline, body, 1.0)
    assert blind > 0.2  # the box covers the door's pixels, which the body's mask does not hold
    assert silhouette_mismatch(outline, body, 1.0, hidden=door) < 0.05


@pytest.mark.parametrize("start_turn", [0.0, math.pi / 2])
def test_a_body_of_known_size_is_placed_under_its_masks_its_front_kept(start_turn: float) -> None:
    yaw = 0.2
    body, door = _masks(yaw)
    views = [RestView(body, np.zeros((0, 3)), _view(), False, 0)]
    # A silhouette fit free in size: too deep, 6 cm off, its front (+x) turned the way it faced.
    start_size = (SIZE[0] + 0.1, SIZE[1], SIZE[2]) if start_turn == 0.0 else (SIZE[1], SIZE[0] + 0.1, SIZE[2])
    loose = FittedObject(Shape("cabinet", start_size), np.array([0.07, 0.02, 0.16]), yaw + start_turn + 0.1)
    known = (SIZE[1], SIZE[0], SIZE[2])  # the prompt's footprint read the other way round
    placed = place_known_box(loose, known, views, [door], CAMERA)
    assert np.linalg.norm(placed.position[:2] - [0.02, -0.01]) < 0.01
    assert placed.position[2] == pytest.approx(SIZE[2] / 2)
    front = yaw_rotation(placed.yaw)[:, 0]
    assert front @ yaw_rotation(yaw + start_turn)[:, 0] > math.cos(math.radians(4.0))  # the front it faced
    # Its depth lies along its front.
    expected = SIZE if start_turn == 0.0 else (SIZE[1], SIZE[0], SIZE[2])
    assert placed.shape.size == pytest.approx(expected)
