"""MuJoCo model of the insert scene (``_insert_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. The table, the wall,
the lights, the physics and rendering options and the camera are the hang scene's (``_hang_model``). The
socket (``socket``, free, its origin at the centre of its bounding box) collides with exactly the pieces of
the project's ``cup`` kind for its parameters (``Socket.pieces``: ``socket_bottom``, the bottom disc, and
``socket_wall0`` ... ``socket_wall15``), hidden (``GROUP_HIDDEN``); a revolved shell
(``_hang_model.mug_shell``: outer wall, top, the hole's wall and bottom) shows it, its hole a circle of the
hole's radius (inscribed in the wall boxes' 16-sided opening). Its density is set so that it weighs
``socket.mass``: heavy enough not to move as the peg goes in. The peg (``peg``, free, its origin at its
centre) is one cylinder, shown and colliding, weighing ``peg.mass``.
"""

from __future__ import annotations

import mujoco
import numpy as np
from _demo_gripper import add_gripper
from _demo_scene import GROUP_GRIPPER, GROUP_HIDDEN
from _hang_model import add_camera, add_environment, mug_shell, scene_spec
from _insert_scene import GROUP_PEG, GROUP_SOCKET, InsertLayout, Peg, Socket
from scipy.spatial.transform import Rotation

from real2gym_addon.geometry.pieces import GEOM_BOX

SOCKET_FRICTION = [0.5, 0.01, 0.0002]  # machined steel or hard plastic
PEG_FRICTION = [0.5, 0.01, 0.0002]  # a turned wooden or plastic dowel


def _add_socket(spec: mujoco.MjSpec, socket: Socket, rgba: list[float]) -> None:
    """The free socket: its hidden cup pieces and a visible shell."""
    body = spec.worldbody.add_body(name="socket", pos=(socket.centre + [0.0, 0.0, 1e-4]).tolist())
    body.add_freejoint(name="socket")
    solid = {"density": socket.mass / socket.volume(), "friction": SOCKET_FRICTION, "condim": 4,
             "group": GROUP_HIDDEN}  # fmt: skip
    pieces = socket.pieces()
    for index, piece in enumerate(pieces):
        kind = mujoco.mjtGeom.mjGEOM_BOX if piece.kind == GEOM_BOX else mujoco.mjtGeom.mjGEOM_CYLINDER
        quat = Rotation.from_matrix(piece.rotation()).as_quat(scalar_first=True).tolist()
        body.add_geom(name="socket_bottom" if index == 0 else f"socket_wall{index - 1}", type=kind,
                      size=list(piece.size), pos=list(piece.position), quat=quat, **solid)  # fmt: skip
    verts, faces = mug_shell(socket)
    spec.add_mesh(name="socket_shell", uservert=verts, userface=faces)
    body.add_geom(name="socket_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="socket_shell",
                  pos=[0.0, 0.0, -socket.height / 2], contype=0, conaffinity=0, mass=0, rgba=rgba,
                  group=GROUP_SOCKET)  # fmt: skip


def _add_peg(spec: mujoco.MjSpec, peg: Peg, rgba: list[float]) -> None:
    """The free peg: one cylinder, standing on the table."""
    body = spec.worldbody.add_body(name="peg", pos=[*peg.xy, peg.length / 2 + 1e-4])
    body.add_freejoint(name="peg")
    body.add_geom(name="peg", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[peg.radius, peg.length / 2, 0],
                  rgba=rgba, density=peg.density(), friction=PEG_FRICTION, condim=4,
                  group=GROUP_PEG)  # fmt: skip


def build_model(
    layout: InsertLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment, socket, peg, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the camera is ``demo``.
    """
    spec = scene_spec("real2gym_insert", layout, noslip_iterations=3)
    middle = np.r_[(layout.socket.xy + layout.peg.xy) / 2, layout.socket.height]
    add_environment(spec, layout.camera_rot, middle, rng)
    _add_socket(spec, layout.socket, layout.colours["socket"])
    _add_peg(spec, layout.peg, layout.colours["peg"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    add_camera(spec, layout)
    return spec.compile()
