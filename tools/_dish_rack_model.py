"""MuJoCo model of the dish rack scene (``_dish_rack_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. The table, the wall,
the lights, the physics and rendering options and the camera are the hang scene's (``_hang_model``). The
stand and the dish rack are bodies fixed to the world (``stand``, ``dish_rack``, each its origin at the
centre of its outer box, turned by its yaw) made of exactly the boxes their truth parameters describe
(``DishRack.boxes``: ``<name>_base``, ``<name>_divider<k>``), shown and colliding. The plate (``plate``,
free, its origin at the disc's centre, its axis along the body's y) is one cylinder, shown and colliding,
standing on its edge in the stand's slot; its density is set so that it weighs ``plate.mass``.
"""

from __future__ import annotations

import mujoco
import numpy as np
from _demo_gripper import add_gripper
from _demo_scene import GROUP_GRIPPER
from _dish_rack_scene import GROUP_PLATE, GROUP_RACK, GROUP_STAND, DishRack, DishRackLayout, Plate
from _hang_model import add_camera, add_environment, scene_spec

RACK_FRICTION = [0.5, 0.01, 0.0002]  # lacquered wood or hard plastic
PLATE_FRICTION = [0.5, 0.01, 0.0002]  # glazed ceramic
AXIS_ALONG_Y = [np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0]  # turns a cylinder's axis (its z) onto the body's y


def _yaw_quat(yaw: float) -> list[float]:
    return [float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))]


def _add_rack(spec: mujoco.MjSpec, name: str, rack: DishRack, group: int, rgba: list[float]) -> None:
    """A rack: fixed to the world, its boxes shown and colliding."""
    body = spec.worldbody.add_body(name=name, pos=rack.centre.tolist(), quat=_yaw_quat(rack.yaw))
    look = {"group": group, "rgba": rgba, "friction": RACK_FRICTION, "condim": 4}
    for piece, centre, half in rack.boxes():
        body.add_geom(name=f"{name}_{piece}", type=mujoco.mjtGeom.mjGEOM_BOX, size=half.tolist(),
                      pos=centre.tolist(), **look)  # fmt: skip


def _add_plate(spec: mujoco.MjSpec, plate: Plate, centre: np.ndarray, yaw: float, rgba: list[float]) -> None:
    """The free plate: one cylinder on its edge, its centre at ``centre`` (world, m), turned ``yaw`` (rad)."""
    body = spec.worldbody.add_body(
        name="plate", pos=(centre + [0.0, 0.0, 1e-4]).tolist(), quat=_yaw_quat(yaw)
    )
    body.add_freejoint(name="plate")
    body.add_geom(name="plate", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[plate.radius, plate.thickness / 2, 0],
                  quat=AXIS_ALONG_Y, rgba=rgba, density=plate.density(), friction=PLATE_FRICTION, condim=4,
                  group=GROUP_PLATE)  # fmt: skip


def build_model(
    layout: DishRackLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment, stand, dish rack, plate, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the camera is ``demo``.
    """
    spec = scene_spec("real2gym_dish_rack", layout, noslip_iterations=3)
    middle = np.r_[(layout.stand.xy + layout.rack.xy) / 2, layout.plate.radius]
    add_environment(spec, layout.camera_rot, middle, rng)
    _add_rack(spec, "stand", layout.stand, GROUP_STAND, layout.colours["stand"])
    _add_rack(spec, "dish_rack", layout.rack, GROUP_RACK, layout.colours["dish_rack"])
    _add_plate(spec, layout.plate, layout.start, layout.stand.yaw, layout.colours["plate"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    add_camera(spec, layout)
    return spec.compile()
