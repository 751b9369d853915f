"""MuJoCo model of the shelve scene (``_shelve_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. The table, the wall,
the lights, the physics and rendering options and the camera are the hang scene's (``_hang_model``). The
shelf is a body fixed to the world (``shelf``, its origin at the centre of its outer box, turned by its
yaw) made of exactly the boxes its truth parameters describe (``Shelf.boxes``: ``shelf_side_minus_y``,
``shelf_side_plus_y``, ``shelf_back``, ``shelf_board<i>``), shown and colliding, wood-like. The book
(``book``, free, its origin at its centre) is one box, shown and colliding; its density is set so that it
weighs ``book.mass``.
"""

from __future__ import annotations

import mujoco
import numpy as np
from _demo_gripper import add_gripper
from _demo_scene import GROUP_GRIPPER
from _hang_model import add_camera, add_environment, scene_spec
from _shelve_scene import GROUP_BOOK, GROUP_SHELF, Book, Shelf, ShelveLayout

SHELF_FRICTION = [0.5, 0.01, 0.0002]  # lacquered wood
BOOK_FRICTION = [0.5, 0.01, 0.0002]  # a paper cover


def _yaw_quat(yaw: float) -> list[float]:
    return [float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))]


def _add_shelf(spec: mujoco.MjSpec, shelf: Shelf, rgba: list[float]) -> None:
    """The shelf: fixed to the world, its boxes shown and colliding."""
    body = spec.worldbody.add_body(name="shelf", pos=shelf.centre.tolist(), quat=_yaw_quat(shelf.yaw))
    look = {"group": GROUP_SHELF, "rgba": rgba, "friction": SHELF_FRICTION, "condim": 4}
    for name, centre, half in shelf.boxes():
        body.add_geom(name=f"shelf_{name}", type=mujoco.mjtGeom.mjGEOM_BOX, size=half.tolist(),
                      pos=centre.tolist(), **look)  # fmt: skip


def _add_book(spec: mujoco.MjSpec, book: Book, rgba: list[float]) -> None:
    """The free book: one box."""
    body = spec.worldbody.add_body(
        name="book", pos=[*book.xy, book.height / 2 + 1e-4], quat=_yaw_quat(book.yaw)
    )
    body.add_freejoint(name="book")
    body.add_geom(name="book", type=mujoco.mjtGeom.mjGEOM_BOX, size=(book.size / 2).tolist(), rgba=rgba,
                  density=book.density(), friction=BOOK_FRICTION, condim=4, group=GROUP_BOOK)  # fmt: skip


def build_model(
    layout: ShelveLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment, shelf, book, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the camera is ``demo``.
    """
    spec = scene_spec("real2gym_shelve", layout, noslip_iterations=3)
    middle = np.r_[layout.shelf.xy, layout.board_top]
    add_environment(spec, layout.camera_rot, middle, rng)
    _add_shelf(spec, layout.shelf, layout.colours["shelf"])
    _add_book(spec, layout.book, layout.colours["book"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    add_camera(spec, layout)
    return spec.compile()
