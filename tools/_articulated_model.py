"""MuJoCo model of an articulated scene (``_articulated_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. Frames as in
``_articulated_scene``: world z up, z = 0 on the table; the body frame (x across, y out of the
opening, z up) and the part frame (the hinge's bottom end or the drawer front's middle). The body,
its part and the cup each have their own geom group (``GROUP_BODY``, ``GROUP_PART``, ``GROUP_CUP``)
so that each can be rendered alone; the cup's collision pieces are hidden (``GROUP_HIDDEN``).
"""

from __future__ import annotations

import cv2
import mujoco
import numpy as np
from _articulated_scene import GROUP_BODY, GROUP_CUP, GROUP_PART, TABLE_HALF, WALL, ArticulatedLayout, Cup
from _demo_gripper import add_gripper
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER, GROUP_HIDDEN
from scipy.spatial.transform import Rotation


def _quat(rot: np.ndarray) -> list[float]:
    return Rotation.from_matrix(rot).as_quat(scalar_first=True).tolist()


def _box(body: mujoco.MjsBody, name: str, centre, size, rgba, group: int, **extra) -> None:
    """A box geom from its centre and full extents (body frame, m)."""
    body.add_geom(
        name=name,
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=(np.asarray(size, float) / 2).tolist(),
        pos=np.asarray(centre, float).tolist(),
        rgba=rgba,
        group=group,
        **extra,
    )


def _add_environment(spec: mujoco.MjSpec, layout: ArticulatedLayout, rng: np.random.Generator) -> None:
    """Table (a light laminate with a faint mottle), floor, a wall behind the scene, two lights."""
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
    world.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, 0.02], pos=[0, 0.05, -0.02],
                   material="table", **env)  # fmt: skip
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[4, 4, 0.1], pos=[0, 0, -0.75],
                   rgba=[0.35, 0.35, 0.37, 1], **env)  # fmt: skip
    away = layout.camera_rot[:, 2].copy()  # level, from the camera into the scene
    away[2] = 0.0
    away /= np.linalg.norm(away)
    wall_rot = np.stack([np.cross([0, 0, 1.0], -away), [0, 0, 1.0], -away], axis=1)
    world.add_geom(name="wall", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 2, 0.02],
                   pos=(layout.origin + [0, 0, 0.3] + 2.6 * away).tolist(), quat=_quat(wall_rot),
                   rgba=[0.8, 0.79, 0.75, 1], **env)  # fmt: skip
    # Key light above the camera's left shoulder, so that shadows fall away from the camera.
    middle = layout.origin + [0, 0, 0.15]
    key = middle - 0.7 * away - 0.5 * layout.camera_rot[:, 0] + [0, 0, 1.4]
    world.add_light(name="key", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, pos=key.tolist(),
                    dir=(middle - key).tolist(), diffuse=[0.6, 0.6, 0.57], specular=[0.2, 0.2, 0.2],
                    castshadow=True)  # fmt: skip
    world.add_light(name="fill", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
                    dir=(away - [0, 0, 1.5]).tolist(), diffuse=[0.32, 0.32, 0.34], castshadow=False)  # fmt: skip


def _add_microwave(body: mujoco.MjsBody, part: mujoco.MjsBody, layout: ArticulatedLayout) -> None:
    w, d, h = layout.size
    s, c = layout.hinge_side, layout.control_width
    rgba, look = layout.colours["body"], {"group": GROUP_BODY, "density": 300}  # sheet metal round air
    _box(body, "microwave_bottom", [0, 0, WALL / 2], [w, d, WALL], rgba, **look)
    _box(body, "microwave_top", [0, 0, h - WALL / 2], [w, d, WALL], rgba, **look)
    _box(body, "microwave_back", [0, -d / 2 + WALL / 2, h / 2], [w, WALL, h - 2 * WALL], rgba, **look)
    _box(body, "microwave_side", [s * (w / 2 - WALL / 2), 0, h / 2], [WALL, d, h - 2 * WALL], rgba, **look)
    _box(body, "microwave_control", [-s * (w / 2 - c / 2), 0, h / 2], [c, d, h - 2 * WALL], rgba, **look)
    no_contact = {"contype": 0, "conaffinity": 0, "mass": 0, "group": GROUP_BODY}
    _box(body, "microwave_panel", [-s * (w / 2 - c / 2), d / 2 + 0.001, h * 0.55], [c * 0.7, 0.002, h * 0.6],
         layout.colours["panel"], **no_contact)  # fmt: skip
    door = layout.part_size
    _box(part, "microwave_door", layout.part_centre, door, layout.colours["door"], GROUP_PART, density=550)
    inset = 0.045
    _box(part, "microwave_window", [-s * door[0] * 0.45, 0.0005, door[2] / 2],
         [door[0] * 0.9 - 2 * inset, 0.001, door[2] - 2 * inset], layout.colours["window"],
         GROUP_PART, contype=0, conaffinity=0, mass=0)  # fmt: skip


def _add_cabinet(body: mujoco.MjsBody, part: mujoco.MjsBody, layout: ArticulatedLayout) -> None:
    w, d, h = layout.size
    rgba, look = layout.colours["body"], {"group": GROUP_BODY, "density": 600}  # wood board
    name = layout.body_name
    _box(body, f"{name}_bottom", [0, 0, WALL / 2], [w, d, WALL], rgba, **look)
    _box(body, f"{name}_top", [0, 0, h - WALL / 2], [w, d, WALL], rgba, **look)
    _box(body, f"{name}_back", [0, -d / 2 + WALL / 2, h / 2], [w, WALL, h - 2 * WALL], rgba, **look)
    for side in (-1, 1):
        _box(
            body,
            f"{name}_side{side:+d}",
            [side * (w / 2 - WALL / 2), 0, h / 2],
            [WALL, d, h - 2 * WALL],
            rgba,
            **look,
        )
    if layout.scene == "cabinet":
        _box(body, "cabinet_shelf", [0, -WALL / 2, layout.shelf_z - WALL / 2], [w - 2 * WALL, d - 2 * WALL, WALL],
             rgba, **look)  # fmt: skip
        _box(
            part,
            "cabinet_door",
            layout.part_centre,
            layout.part_size,
            layout.colours["door"],
            GROUP_PART,
            density=700,
        )
    else:
        z = layout.shelf_z
        _box(body, "chest_divider", [0, WALL / 2, z], [w - 2 * WALL, d - WALL, WALL], rgba, **look)
        front = [w - 0.006, 0.018, z - 0.002 - WALL]
        _box(body, "chest_lower_front", [0, d / 2 + 0.011, WALL + front[2] / 2], front,
             [v * 1.1 for v in rgba[:3]] + [1], **look)  # fmt: skip
        _add_drawer(part, layout)
    _add_handle(part, layout)


def _add_drawer(part: mujoco.MjsBody, layout: ArticulatedLayout) -> None:
    """The drawer: its front panel and a tray of 1 cm boards behind it, inside the chest's opening."""
    w, d, h = layout.size
    rgba, look = layout.colours["door"], {"group": GROUP_PART, "density": 600}
    front_h = layout.part_size[2]
    thick = layout.part_size[1] - (d - WALL - 0.03)
    _box(part, "chest_drawer_front", [0, -thick / 2, 0], [layout.part_size[0], thick, front_h], rgba, **look)
    depth = d - WALL - 0.03
    inner_w = w - 2 * WALL - 0.008
    low = layout.shelf_z + WALL / 2 + 0.002 - layout.pivot[2]  # the tray's bottom, part frame
    tray_h = (h - WALL) - (layout.shelf_z + WALL / 2) - 0.012
    y0, board = -thick, 0.01
    _box(
        part,
        "chest_drawer_bottom",
        [0, y0 - depth / 2, low + board / 2],
        [inner_w, depth, board],
        rgba,
        **look,
    )
    _box(
        part,
        "chest_drawer_back",
        [0, y0 - depth + board / 2, low + tray_h / 2],
        [inner_w, board, tray_h],
        rgba,
        **look,
    )
    for side in (-1, 1):
        _box(part, f"chest_drawer_side{side:+d}", [side * (inner_w / 2 - board / 2), y0 - depth / 2, low + tray_h / 2],
             [board, depth, tray_h], rgba, **look)  # fmt: skip


def _add_handle(part: mujoco.MjsBody, layout: ArticulatedLayout) -> None:
    """The bar (a capsule) and its two posts, in the part's group; named ``<body>_handle*``."""
    handle = layout.handle
    name, rgba = layout.body_name, layout.colours["handle"]
    turn = np.eye(3) if handle.axis == 2 else Rotation.from_euler("y", np.pi / 2).as_matrix()
    part.add_geom(name=f"{name}_handle", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                  size=[handle.radius, handle.length / 2 - handle.radius, 0], pos=handle.centre.tolist(),
                  quat=_quat(turn), rgba=rgba, group=GROUP_PART, density=2000, friction=[1.0, 0.01, 0.0002],
                  condim=4)  # fmt: skip
    for end in (-1, 1):
        centre = handle.centre.copy()
        centre[handle.axis] += end * (handle.length / 2 - 0.012)
        centre[1] = handle.standoff / 2
        _box(
            part,
            f"{name}_handle_post{end:+d}",
            centre,
            [0.012, handle.standoff, 0.012],
            rgba,
            GROUP_PART,
            density=2000,
        )


def _cup_shell(cup: Cup, segments: int = 40) -> tuple[list[float], list[int]]:
    """The cup's closed surface (outer wall, rim, inner wall, floor, bottom), cup frame, z up."""
    outer, inner = cup.radius, cup.radius - cup.wall
    theta = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    rings = [(outer, 0.0), (outer, cup.height), (inner, cup.height), (inner, cup.bottom)]
    verts = [[r * np.cos(t), r * np.sin(t), z] for r, z in rings for t in theta] + [
        [0, 0, 0],
        [0, 0, cup.bottom],
    ]
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


def _add_cup(spec: mujoco.MjSpec, cup: Cup, rgba: list[float]) -> None:
    """A free cup: a bottom disc and 16 wall boxes (hidden) and its visual shell."""
    body = spec.worldbody.add_body(
        name="cup", pos=[*cup.xy, 1e-4], quat=[np.cos(cup.yaw / 2), 0, 0, np.sin(cup.yaw / 2)]
    )
    body.add_freejoint(name="cup")
    hidden = {"group": GROUP_HIDDEN, "density": 1100.0, "condim": 4, "friction": [1.0, 0.01, 0.0002]}
    body.add_geom(name="cup_bottom", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[cup.radius, cup.bottom / 2, 0],
                  pos=[0, 0, cup.bottom / 2], **hidden)  # fmt: skip
    count = 16
    half_len = cup.radius * np.tan(np.pi / count)
    for k in range(count):
        angle = 2 * np.pi * k / count
        middle = cup.radius - cup.wall / 2
        body.add_geom(name=f"cup_wall{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[cup.wall / 2, half_len, cup.height / 2],
                      pos=[middle * np.cos(angle), middle * np.sin(angle), cup.height / 2],
                      quat=[np.cos(angle / 2), 0, 0, np.sin(angle / 2)], **hidden)  # fmt: skip
    verts, faces = _cup_shell(cup)
    spec.add_mesh(name="cup_shell", uservert=verts, userface=faces)
    body.add_geom(name="cup_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="cup_shell", contype=0,
                  conaffinity=0, mass=0, rgba=rgba, group=GROUP_CUP)  # fmt: skip


def build_model(
    layout: ArticulatedLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment, the body and its jointed part, the cup, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the body is ``layout.body_name``, the part ``<body>_<part>`` with the joint
        ``<body>_<part>_joint``, the camera ``demo``. The body and its part do not collide (the
        joint's limits are their stops).
    """
    spec = mujoco.MjSpec()
    spec.modelname = f"real2gym_{layout.scene}"
    spec.compiler.degree = False  # joint ranges in radians
    opt = spec.option
    opt.timestep = 0.002
    opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    opt.impratio = 10.0
    opt.noslip_iterations = 3
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

    _add_environment(spec, layout, rng)
    body = spec.worldbody.add_body(
        name=layout.body_name, pos=layout.origin.tolist(), quat=_quat(layout.rotation)
    )
    part_body = f"{layout.body_name}_{layout.part_name}"
    part = body.add_body(name=part_body, pos=layout.pivot.tolist())
    kind = mujoco.mjtJoint.mjJNT_HINGE if layout.joint_type == "hinge" else mujoco.mjtJoint.mjJNT_SLIDE
    part.add_joint(name=f"{part_body}_joint", type=kind, axis=layout.axis.tolist(), range=list(layout.q_range),
                   damping=layout.damping, frictionloss=layout.frictionloss, armature=0.002)  # fmt: skip
    if layout.scene == "microwave":
        _add_microwave(body, part, layout)
    else:
        _add_cabinet(body, part, layout)
    spec.add_exclude(bodyname1=layout.body_name, bodyname2=part_body)
    if layout.cup is not None:
        _add_cup(spec, layout.cup, layout.colours["cup"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    spec.worldbody.add_camera(name="demo", pos=layout.camera_pos.tolist(),
                              quat=_quat(layout.camera_rot * np.array([1.0, -1.0, -1.0])), fovy=layout.fovy)  # fmt: skip
    return spec.compile()
