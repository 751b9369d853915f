"""MuJoCo model of the hang scene (``_hang_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. The rack is a body
fixed to the world (named ``rack``, origin at its post frame's origin, turned by its yaw): a mug tree's
base disc and post, or a hook board's plate (a box, ``rack_plate``), and one cylinder per peg
(``rack_peg<i>``), wood-like. A hook board's wall (``hook_wall``, a box standing on the table behind the
plate) is scenery: in the environment's geom group, in no object's mask, but it collides, so that the
simulation sees a mug or a hand that touches it. The mug (``mug``, free, origin at its bottom's
middle) collides with a bottom disc and a ring of wall boxes (hidden, ``GROUP_HIDDEN``) and its handle's
three boxes; a revolved shell shows its wall. Its density is set so that it weighs ``mug.mass``.

The other task scenes (pour, shelve, insert) take their table, wall and lights (``add_environment``),
their physics and rendering options (``scene_spec``) and their camera (``add_camera``) from here; the pour
scene's cup and the insert scene's socket are shown by ``mug_shell`` too.
"""

from __future__ import annotations

from typing import Any

import cv2
import mujoco
import numpy as np
from _demo_gripper import add_gripper
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER, GROUP_HIDDEN
from _hang_scene import GROUP_MUG, GROUP_RACK, TABLE_HALF, HangLayout, Mug, Rack, WallRack
from scipy.spatial.transform import Rotation

MUG_FRICTION = [0.6, 0.01, 0.0002]  # glazed ceramic
RACK_FRICTION = [0.7, 0.01, 0.0002]  # wood
# A peg resists the mug rolling round it (2 mm of rolling friction): a mug rocking in its handle's corner on
# the peg loses little to sliding, and without it rocks on for seconds in MuJoCo's soft contacts.
PEG_CONTACT = {"friction": [0.7, 0.01, 0.002], "condim": 6}


def _quat(rot: np.ndarray) -> list[float]:
    return Rotation.from_matrix(rot).as_quat(scalar_first=True).tolist()


def scene_spec(name: str, layout: Any, noslip_iterations: int) -> mujoco.MjSpec:
    """A new scene with the task generators' physics (2 ms steps, elliptic friction cones, implicit-fast
    integration) and rendering (an offscreen buffer at least the image's size, 4 samples, shadows).

    Args:
        name: The model's name.
        layout: The scene's layout: its ``width`` and ``height`` (px).
        noslip_iterations: MuJoCo's no-slip solver iterations (0 for none).
    """
    spec = mujoco.MjSpec()
    spec.modelname = name
    opt = spec.option
    opt.timestep = 0.002
    opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    opt.impratio = 10.0
    opt.noslip_iterations = noslip_iterations
    opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.stat.extent = 1.0
    spec.stat.center = [0.0, 0.0, 0.0]
    spec.visual.map.znear = 0.02
    spec.visual.map.zfar = 10.0
    spec.visual.global_.offwidth = max(layout.width, 640)
    spec.visual.global_.offheight = max(layout.height, 480)
    spec.visual.quality.shadowsize = 2048
    spec.visual.quality.offsamples = 4
    spec.visual.headlight.ambient = [0.28, 0.28, 0.28]
    spec.visual.headlight.diffuse = [0.25, 0.25, 0.25]
    return spec


def add_camera(spec: mujoco.MjSpec, layout: Any) -> None:
    """The fixed camera ``demo`` at the layout's ``camera_pos`` (world, m) turned by its ``camera_rot``
    (world from camera, OpenCV axes, (3, 3)), with its ``fovy`` (deg)."""
    spec.worldbody.add_camera(name="demo", pos=layout.camera_pos.tolist(),
                              quat=_quat(layout.camera_rot * np.array([1.0, -1.0, -1.0])), fovy=layout.fovy)  # fmt: skip


def add_environment(
    spec: mujoco.MjSpec, camera_rot: np.ndarray, middle: np.ndarray, rng: np.random.Generator
) -> None:
    """Table (a light laminate with a faint mottle), floor, a wall behind the scene, two lights.

    Args:
        spec: The scene being built.
        camera_rot: World-from-camera rotation, OpenCV axes, (3, 3): the wall stands 2.6 m beyond
            ``middle`` along the camera's level view direction, the key light above its left shoulder.
        middle: The scene's middle, world frame (m), (3,): where the lights point.
        rng: Random generator for the table's tone and mottle.
    """
    size = 256
    mottle = cv2.resize(rng.normal(0, 1, (16, 16)), (size, size), interpolation=cv2.INTER_CUBIC)
    mottle += 0.4 * cv2.resize(rng.normal(0, 1, (64, 64)), (size, size), interpolation=cv2.INTER_CUBIC)
    tone = rng.uniform(0.62, 0.82)
    base = np.array([tone, tone * rng.uniform(0.9, 0.97), tone * rng.uniform(0.8, 0.9)]) * 255
    texture = spec.add_texture(
        name="table", type=mujoco.mjtTexture.mjTEXTURE_2D, width=size, height=size, nchannel=3
    )
    texture.data = np.clip(base * (1 + 0.03 * mottle[..., None]), 0, 255).astype(np.uint8).tobytes()
    material = spec.add_material(name="table", texrepeat=[3, 3], specular=0.15, shininess=0.2)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "table"
    world = spec.worldbody
    env = {"group": GROUP_ENVIRONMENT}
    hx, hy = TABLE_HALF
    world.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, 0.02], pos=[0, 0, -0.02],
                   material="table", **env)  # fmt: skip
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[4, 4, 0.1], pos=[0, 0, -0.75],
                   rgba=[0.35, 0.35, 0.37, 1], **env)  # fmt: skip
    away = camera_rot[:, 2].copy()  # level, from the camera into the scene
    away[2] = 0.0
    away /= np.linalg.norm(away)
    wall_rot = np.stack([np.cross([0, 0, 1.0], -away), [0, 0, 1.0], -away], axis=1)
    world.add_geom(name="wall", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 2, 0.02],
                   pos=(middle + 2.6 * away).tolist(), quat=_quat(wall_rot), rgba=[0.8, 0.79, 0.75, 1],
                   **env)  # fmt: skip
    # Key light above the camera's left shoulder, so that shadows fall away from the camera.
    key = middle - 0.7 * away - 0.5 * camera_rot[:, 0] + [0, 0, 1.4]
    world.add_light(name="key", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, pos=key.tolist(),
                    dir=(middle - key).tolist(), diffuse=[0.6, 0.6, 0.57], specular=[0.2, 0.2, 0.2],
                    castshadow=True)  # fmt: skip
    world.add_light(name="fill", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
                    dir=(away - [0, 0, 1.5]).tolist(), diffuse=[0.32, 0.32, 0.34], castshadow=False)  # fmt: skip


def _add_rack(spec: mujoco.MjSpec, rack: Rack | WallRack, rgba: list[float]) -> None:
    """The rack: fixed to the world, its geoms visible and colliding."""
    body = spec.worldbody.add_body(name="rack", pos=rack.foot.tolist(), quat=_quat(rack.rotation))
    look = {"group": GROUP_RACK, "rgba": rgba, "friction": RACK_FRICTION, "condim": 4}
    cylinder = mujoco.mjtGeom.mjGEOM_CYLINDER
    if rack.on_wall:
        half = [rack.plate_thickness / 2, rack.plate_width / 2, rack.post_height / 2]
        body.add_geom(name="rack_plate", type=mujoco.mjtGeom.mjGEOM_BOX, size=half, pos=[half[0], 0, half[2]],
                      **look)  # fmt: skip
    else:
        body.add_geom(name="rack_base", type=cylinder, size=[rack.base_radius, rack.base_thickness / 2, 0],
                      pos=[0, 0, rack.base_thickness / 2], **look)  # fmt: skip
        body.add_geom(name="rack_post", type=cylinder, size=[rack.post_radius, rack.post_height / 2, 0],
                      pos=[0, 0, rack.post_height / 2], **look)  # fmt: skip
    for index in range(len(rack.peg_heights)):
        root, tip = rack.peg_ends(index)
        body.add_geom(name=f"rack_peg{index}", type=cylinder, size=[rack.peg_radius, 0, 0], fromto=[*root, *tip],
                      **(look | PEG_CONTACT))  # fmt: skip


def _add_hook_wall(spec: mujoco.MjSpec, rack: WallRack, rgba: list[float]) -> None:
    """The wall a hook board is screwed to (``WallRack.wall_box``): scenery that collides."""
    centre, half = rack.wall_box()
    spec.worldbody.add_geom(name="hook_wall", type=mujoco.mjtGeom.mjGEOM_BOX, size=half.tolist(),
                            pos=rack.to_world(centre).tolist(), quat=_quat(rack.rotation), rgba=rgba,
                            group=GROUP_ENVIRONMENT)  # fmt: skip


def mug_shell(mug: Mug, segments: int = 48) -> tuple[list[float], list[int]]:
    """The mug's closed wall surface (outer wall, rim, inner wall, floor, bottom), mug frame: flat vertex
    coordinates (m) and triangles, counter-clockwise seen from outside."""
    outer, inner = mug.outer_radius, mug.inner_radius
    theta = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    rings = [(outer, 0.0), (outer, mug.height), (inner, mug.height), (inner, mug.bottom)]
    verts = [[r * np.cos(t), r * np.sin(t), z] for r, z in rings for t in theta]
    verts += [[0.0, 0.0, 0.0], [0.0, 0.0, mug.bottom]]
    n, faces = segments, []
    for k in range(n):
        k1 = (k + 1) % n
        for ring in range(3):
            faces += [
                [ring * n + k, ring * n + k1, (ring + 1) * n + k1],
                [ring * n + k, (ring + 1) * n + k1, (ring + 1) * n + k],
            ]
        faces += [[4 * n + 1, 3 * n + k, 3 * n + k1], [4 * n, k1, k]]
    return np.ravel(verts).tolist(), np.ravel(faces).tolist()


def _add_mug(spec: mujoco.MjSpec, mug: Mug, rgba: list[float]) -> None:
    """The free mug: hidden bottom disc and wall boxes, visible handle boxes and shell."""
    body = spec.worldbody.add_body(
        name="mug", pos=[*mug.xy, 1e-4], quat=_quat(Rotation.from_euler("z", mug.yaw).as_matrix())
    )
    body.add_freejoint(name="mug")
    solid = {"density": mug.density(), "friction": MUG_FRICTION, "condim": 4}
    body.add_geom(name="mug_bottom", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[mug.outer_radius, mug.bottom / 2, 0],
                  pos=[0, 0, mug.bottom / 2], group=GROUP_HIDDEN, **solid)  # fmt: skip
    for k, (centre, size, angle) in enumerate(mug.wall_boxes()):
        body.add_geom(name=f"mug_wall{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=(size / 2).tolist(), pos=centre.tolist(),
                      quat=[np.cos(angle / 2), 0, 0, np.sin(angle / 2)], group=GROUP_HIDDEN, **solid)  # fmt: skip
    for name, (centre, size) in zip(("lower_arm", "upper_arm", "bar"), mug.handle_boxes(), strict=True):
        body.add_geom(name=f"mug_handle_{name}", type=mujoco.mjtGeom.mjGEOM_BOX, size=(size / 2).tolist(),
                      pos=centre.tolist(), rgba=rgba, group=GROUP_MUG, **solid)  # fmt: skip
    verts, faces = mug_shell(mug)
    spec.add_mesh(name="mug_shell", uservert=verts, userface=faces)
    body.add_geom(name="mug_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="mug_shell", contype=0,
                  conaffinity=0, mass=0, rgba=rgba, group=GROUP_MUG)  # fmt: skip


def build_model(
    layout: HangLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment (and a hook board's wall), rack, mug, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the camera is ``demo``.
    """
    spec = scene_spec("real2gym_hang", layout, noslip_iterations=3)
    add_environment(spec, layout.camera_rot, np.r_[layout.rack.foot[:2], 0.15], rng)
    if layout.rack.on_wall:
        _add_hook_wall(spec, layout.rack, layout.colours["wall"])
    _add_rack(spec, layout.rack, layout.colours["rack"])
    _add_mug(spec, layout.mug, layout.colours["mug"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    add_camera(spec, layout)
    return spec.compile()
