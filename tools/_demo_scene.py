"""The demo scene: a table, an open container (cup or bowl), a block, a gripper, a camera.

Builds the MuJoCo model of the bundled demo with ``mujoco.MjSpec``. World frame: z up,
gravity -z, z = 0 on the table top (docs/data-contract.md). Every object sits in its own geom
group so that masks of one object alone can be rendered by switching groups off.

The gripper (``_demo_gripper``) is driven by a mocap body; the block is held by
friction only.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from _demo_gripper import add_gripper

# Geom groups: each object alone can be rendered by enabling only its group.
GROUP_ENVIRONMENT = 0
GROUP_BLOCK = 1
GROUP_CUP = 2
GROUP_GRIPPER = 3
GROUP_DISTRACTOR = 4
GROUP_HIDDEN = 5  # collision-only geoms whose look is given by a visual mesh

TABLE_HEIGHT = 0.75
# A bowl's proportions: foot radius over rim radius, horizontal wall, bottom (m).
BOWL_BASE_RATIO = 0.55
BOWL_WALL = 0.005
BOWL_BOTTOM = 0.006


@dataclass(frozen=True)
class Layout:
    """Where things are and how big they are (world frame, metres, radians).

    Attributes:
        block_size: Edge length of the cubic block.
        block_mass: Block mass in kilograms.
        block_xy: Block centre on the table, shape (2,).
        block_yaw: Block rotation about world z.
        cup_radius: Outer radius of the container (a bowl's at the rim).
        cup_height: Container height, bottom to rim.
        cup_wall: Wall thickness (horizontal, for a bowl).
        cup_bottom: Bottom thickness.
        cup_xy: Container axis on the table, shape (2,).
        distractor_xy: Centre of the static cylinder, shape (2,), or None for none.
        distractor_radius: Its radius.
        distractor_height: Its height.
        camera_pos: Camera optical centre, shape (3,).
        camera_rot: World-from-camera rotation in OpenCV axes (x right, y down,
            z forward), shape (3, 3).
        fovy: Vertical field of view in degrees.
        width: Image width in pixels.
        height: Image height in pixels.
        container: ``"cup"`` (a straight wall), ``"bowl"`` (see ``bowl_radius_at``) or ``"base"`` (a
            larger block to set the block on: ``cup_radius`` its half edge, ``cup_height`` and ``cup_bottom``
            its height, so its "floor" is its top); also the target's body name.
        bowl_base: A bowl's outer radius at the bottom (its foot); unused for a cup.
    """

    block_size: float
    block_mass: float
    block_xy: np.ndarray
    block_yaw: float
    cup_radius: float
    cup_height: float
    cup_wall: float
    cup_bottom: float
    cup_xy: np.ndarray
    distractor_xy: np.ndarray | None
    distractor_radius: float
    distractor_height: float
    camera_pos: np.ndarray
    camera_rot: np.ndarray
    fovy: float
    width: int
    height: int
    container: str = "cup"
    bowl_base: float = 0.0
    miss: float = 0.0


def bowl_radius_at(layout: Layout, z: np.ndarray | float) -> np.ndarray | float:
    """A bowl's outer radius at height ``z`` above its bottom (bowl frame, metres).

    The outer profile is a quarter ellipse from the foot up to a vertical rim:
    r(t) = B + (R - B) sqrt(1 - (1 - t)^2), t = z / H, with rim radius R, foot
    radius B and height H. The inner surface is r(z) - wall, down to the floor at
    z = bottom thickness.

    Args:
        layout: A bowl layout (``container == "bowl"``).
        z: Height(s) in [0, H].

    Returns:
        The outer radius (m), shaped like ``z``.
    """
    t = np.clip(np.asarray(z, dtype=float) / layout.cup_height, 0.0, 1.0)
    radius = layout.bowl_base + (layout.cup_radius - layout.bowl_base) * np.sqrt(1.0 - (1.0 - t) ** 2)
    return float(radius) if radius.ndim == 0 else radius


def container_floor_radius(layout: Layout) -> float:
    """Radius (m) of the container's inside floor: where a dropped block can rest."""
    if layout.container == "bowl":
        return float(bowl_radius_at(layout, layout.cup_bottom)) - layout.cup_wall
    return layout.cup_radius - layout.cup_wall


def look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World-from-camera rotation of a camera at ``eye`` looking at ``target``.

    Args:
        eye: Camera position in world coordinates (m), shape (3,).
        target: Point looked at, world coordinates (m), shape (3,).

    Returns:
        Rotation matrix, shape (3, 3), whose columns are the OpenCV camera axes
        (x right, y down, z forward) in world coordinates; the image is level.
    """
    forward = target - eye
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    return np.stack([right, down, forward], axis=1)


def _rot_to_quat(rot: np.ndarray) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rot).reshape(9))
    return quat


def _wood_texture(rng: np.random.Generator, size: int = 256) -> bytes:
    """Light wooden planks as an RGB texture, (size, size, 3) uint8 as bytes."""
    y, x = np.mgrid[0:size, 0:size] / size
    planks = 4
    plank = np.floor(y * planks).astype(int)
    tone = rng.uniform(-0.05, 0.05, planks)[plank]
    wobble = 0.01 * np.sin(2 * np.pi * (2 * x + rng.uniform(size=planks)[plank]))
    grain = np.sin(2 * np.pi * 60 * (y + wobble)) * np.sin(2 * np.pi * (3 * x + 7 * y))
    seam = np.abs(y * planks - np.round(y * planks)) < 0.012
    shade = 0.9 + tone + 0.035 * grain - 0.25 * seam
    base = np.array([200, 158, 112], dtype=float)
    rgb = np.clip(shade[..., None] * base, 0, 255).astype(np.uint8)
    return rgb.tobytes()


def _cup_mesh(layout: Layout, segments: int = 48) -> tuple[list[float], list[int]]:
    """Closed surface of an open cup: outer wall, rim, inner wall and both bottoms.

    Returns vertices (flat x, y, z list, cup frame: origin at the bottom centre, z up)
    and triangles (flat index list, counter-clockwise seen from outside).
    """
    outer, inner = layout.cup_radius, layout.cup_radius - layout.cup_wall
    height, bottom = layout.cup_height, layout.cup_bottom
    theta = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    rings = [(outer, 0.0), (outer, height), (inner, height), (inner, bottom)]
    verts = [[r * np.cos(t), r * np.sin(t), z] for r, z in rings for t in theta]
    verts += [[0.0, 0.0, 0.0], [0.0, 0.0, bottom]]
    n = segments
    faces: list[list[int]] = []
    for k in range(n):
        k1 = (k + 1) % n
        for ring in range(3):  # outer wall, rim, inner wall
            a, b = ring * n + k, ring * n + k1
            c, d = (ring + 1) * n + k1, (ring + 1) * n + k
            faces += [[a, b, c], [a, c, d]]
        faces.append([4 * n + 1, 3 * n + k, 3 * n + k1])  # inner bottom, +z
        faces.append([4 * n, k1, k])  # outer bottom, -z
    return np.ravel(verts).tolist(), np.ravel(faces).tolist()


def _bowl_mesh(layout: Layout, segments: int = 48, samples: int = 12) -> tuple[list[float], list[int]]:
    """Closed surface of a bowl: outer profile, rim, inner profile, floor and bottom.

    The profile (``bowl_radius_at``) is sampled at ``samples`` heights, evenly in the
    quarter ellipse's angle so that the steep foot gets as many as the rim.

    Returns vertices (flat x, y, z list, bowl frame: origin at the bottom centre, z up)
    and triangles (flat index list, counter-clockwise seen from outside).
    """
    height, bottom, wall = layout.cup_height, layout.cup_bottom, layout.cup_wall
    angle = np.linspace(0.0, np.pi / 2, samples)
    outer_z = height * (1.0 - np.cos(angle))
    inner_z = bottom + (height - bottom) * (1.0 - np.cos(angle))
    rings = [(bowl_radius_at(layout, z), z) for z in outer_z]
    rings += [(bowl_radius_at(layout, z) - wall, z) for z in inner_z[::-1]]
    theta = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    verts = [[r * np.cos(t), r * np.sin(t), z] for r, z in rings for t in theta]
    count, n = len(rings), segments
    verts += [[0.0, 0.0, 0.0], [0.0, 0.0, bottom]]
    faces: list[list[int]] = []
    for k in range(n):
        k1 = (k + 1) % n
        for ring in range(count - 1):  # outer wall, rim, inner wall
            a, b = ring * n + k, ring * n + k1
            c, d = (ring + 1) * n + k1, (ring + 1) * n + k
            faces += [[a, b, c], [a, c, d]]
        last = (count - 1) * n
        faces.append([count * n + 1, last + k, last + k1])  # floor, +z
        faces.append([count * n, k1, k])  # outer bottom, -z
    return np.ravel(verts).tolist(), np.ravel(faces).tolist()


def _add_bowl(spec: mujoco.MjSpec, layout: Layout, rgba: list[float]) -> None:
    """Add the bowl body: hidden collision primitives and the revolved visual mesh.

    Collision: a foot cylinder (radius B, bottom thickness b), a thin disc under the
    floor (radius r(b) - w) and four rings of 16 wall boxes. Each ring covers one of
    four equal height segments between the floor and the rim; its boxes lie on the
    mid-wall line of the segment's chord, tilted about their tangent axis so that the
    top leans outward, and overlap their neighbours a little.

    Args:
        spec: The scene being built.
        layout: A bowl layout (``container == "bowl"``).
        rgba: Colour of the visual mesh.
    """
    bowl = spec.worldbody.add_body(name="bowl", pos=[*layout.cup_xy, 1e-4])
    bowl.add_freejoint(name="bowl")
    wall, bottom, count = layout.cup_wall, layout.cup_bottom, 16
    hidden = {"group": GROUP_HIDDEN, "density": 1300.0, "condim": 4}  # thick plastic
    bowl.add_geom(
        name="bowl_bottom",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[layout.bowl_base, bottom / 2, 0],
        pos=[0, 0, bottom / 2],
        **hidden,
    )
    # The foot is narrower than the floor (radius r(b) - w): a thin disc under the floor,
    # inside the outer profile, closes the ring between the foot and the lowest boxes.
    bowl.add_geom(
        name="bowl_floor",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[container_floor_radius(layout), bottom / 4, 0],
        pos=[0, 0, 3 * bottom / 4],
        **hidden,
    )
    heights = np.linspace(bottom, layout.cup_height, 5)
    for level, (z0, z1) in enumerate(zip(heights[:-1], heights[1:], strict=True)):
        r0, r1 = bowl_radius_at(layout, z0), bowl_radius_at(layout, z1)
        tilt = np.arctan2(r1 - r0, z1 - z0)
        r_mid = (r0 + r1) / 2 - wall / 2
        half_tangent = r_mid * np.tan(np.pi / count) * 1.05 + wall / 2
        half_slope = np.hypot(r1 - r0, z1 - z0) / 2 + wall / 2
        tilted = np.array([[np.cos(tilt), 0, np.sin(tilt)], [0, 1, 0], [-np.sin(tilt), 0, np.cos(tilt)]])
        for k in range(count):
            angle = 2 * np.pi * k / count
            turn = np.array(
                [[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]]
            )
            bowl.add_geom(
                name=f"bowl_wall{level}_{k}",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[wall / 2, half_tangent, half_slope],
                pos=[r_mid * np.cos(angle), r_mid * np.sin(angle), (z0 + z1) / 2],
                quat=_rot_to_quat(turn @ tilted).tolist(),
                **hidden,
            )
    verts, faces = _bowl_mesh(layout)
    spec.add_mesh(name="bowl_shell", uservert=verts, userface=faces)
    bowl.add_geom(
        name="bowl_visual",
        type=mujoco.mjtGeom.mjGEOM_MESH,
        meshname="bowl_shell",
        contype=0,
        conaffinity=0,
        mass=0,
        rgba=rgba,
        group=GROUP_CUP,
    )


def _add_environment(spec: mujoco.MjSpec, layout: Layout, rng: np.random.Generator) -> None:
    wood = spec.add_texture(
        name="wood", type=mujoco.mjtTexture.mjTEXTURE_2D, width=256, height=256, nchannel=3
    )
    wood.data = _wood_texture(rng)
    table_mat = spec.add_material(name="table", texrepeat=[2, 2], specular=0.2, shininess=0.3)
    table_mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "wood"
    spec.add_texture(
        name="floor",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.42, 0.42, 0.44],
        rgb2=[0.36, 0.36, 0.38],
        width=64,
        height=64,
    )
    floor_mat = spec.add_material(name="floor", texrepeat=[8, 8])
    floor_mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "floor"

    world = spec.worldbody
    env = {"group": GROUP_ENVIRONMENT}
    world.add_geom(
        name="table",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[0.7, 0.5, 0.02],
        pos=[0, 0, -0.02],
        material="table",
        **env,
    )
    world.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[4, 4, 0.1],
        pos=[0, 0, -TABLE_HEIGHT],
        material="floor",
        **env,
    )
    for sx in (-1, 1):
        for sy in (-1, 1):
            world.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[0.025, 0.025, (TABLE_HEIGHT - 0.04) / 2],
                pos=[sx * 0.65, sy * 0.45, -0.04 - (TABLE_HEIGHT - 0.04) / 2],
                rgba=[0.35, 0.25, 0.17, 1],
                **env,
            )
    # A back wall behind the table, facing the camera.
    away = layout.camera_rot[:, 2].copy()
    away[2] = 0.0
    away /= np.linalg.norm(away)
    wall_rot = np.stack([np.cross([0, 0, 1.0], -away), [0, 0, 1.0], -away], axis=1)
    world.add_geom(
        name="wall",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[3, 2, 0.1],
        pos=(np.r_[0.0, 0.0, 0.3] + 1.3 * away).tolist(),
        quat=_rot_to_quat(wall_rot).tolist(),
        rgba=[0.78, 0.77, 0.72, 1],
        **env,
    )
    # Key light above the camera's left shoulder, so shadows fall away from the camera.
    middle = np.r_[(layout.block_xy + layout.cup_xy) / 2, 0.0]
    key_pos = middle + 0.6 * (-away) - 0.5 * layout.camera_rot[:, 0] + [0, 0, 1.5]
    world.add_light(
        name="key",
        type=mujoco.mjtLightType.mjLIGHT_SPOT,
        pos=key_pos.tolist(),
        dir=(middle - key_pos).tolist(),
        diffuse=[0.65, 0.64, 0.6],
        specular=[0.2, 0.2, 0.2],
        cutoff=24,
        exponent=1,
        castshadow=True,
    )
    world.add_light(
        name="fill",
        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        dir=(-layout.camera_rot[:, 2] * [1, 1, -1] - [0, 0, 1.5]).tolist(),
        diffuse=[0.3, 0.3, 0.32],
        castshadow=False,
    )


def _add_objects(spec: mujoco.MjSpec, layout: Layout, rng: np.random.Generator) -> None:
    world = spec.worldbody
    half = layout.block_size / 2
    block = world.add_body(
        name="block",
        pos=[*layout.block_xy, half + 1e-4],
        quat=[np.cos(layout.block_yaw / 2), 0, 0, np.sin(layout.block_yaw / 2)],
    )
    block.add_freejoint(name="block")
    block.add_geom(
        name="block",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[half] * 3,
        mass=layout.block_mass,
        rgba=[0.85 + 0.05 * rng.uniform(), 0.16, 0.12, 1],
        friction=[1.0, 0.01, 0.0002],
        condim=4,
        group=GROUP_BLOCK,
    )

    if layout.container == "bowl":
        _add_bowl(spec, layout, [0.14, 0.36 + 0.05 * rng.uniform(), 0.78, 1])
    elif layout.container == "base":
        _add_base(spec, layout, rng)
    else:
        _add_cup(spec, layout, rng)

    if layout.distractor_xy is not None:
        can = world.add_body(
            name="distractor", pos=[*layout.distractor_xy, layout.distractor_height / 2 + 1e-4]
        )
        can.add_freejoint(name="distractor")
        can.add_geom(
            name="distractor",
            type=mujoco.mjtGeom.mjGEOM_CYLINDER,
            size=[layout.distractor_radius, layout.distractor_height / 2, 0],
            mass=0.12,
            rgba=[0.93, 0.78, 0.15, 1],
            group=GROUP_DISTRACTOR,
        )


def _add_base(spec: mujoco.MjSpec, layout: Layout, rng: np.random.Generator) -> None:
    """The base block a block is stacked on: a free box of wood-like density, origin at its bottom centre."""
    base = spec.worldbody.add_body(name="base", pos=[*layout.cup_xy, 1e-4])
    base.add_freejoint(name="base")
    half = layout.cup_radius
    base.add_geom(
        name="base",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[half, half, layout.cup_height / 2],
        pos=[0, 0, layout.cup_height / 2],
        density=600.0,
        condim=4,
        rgba=[0.2, 0.55 + 0.1 * rng.uniform(), 0.3, 1],
        group=GROUP_CUP,
    )


def _add_cup(spec: mujoco.MjSpec, layout: Layout, rng: np.random.Generator) -> None:
    """The cup body: a bottom cylinder and 16 wall boxes, all hidden, and the visual mesh."""
    world = spec.worldbody
    cup = world.add_body(name="cup", pos=[*layout.cup_xy, 1e-4])
    cup.add_freejoint(name="cup")
    wall, count = layout.cup_wall, 16
    density = 1300.0  # thick plastic, kg/m^3
    hidden = {"group": GROUP_HIDDEN, "density": density, "condim": 4}
    cup.add_geom(
        name="cup_bottom",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[layout.cup_radius, layout.cup_bottom / 2, 0],
        pos=[0, 0, layout.cup_bottom / 2],
        **hidden,
    )
    half_len = layout.cup_radius * np.tan(np.pi / count)
    wall_mid = layout.cup_radius - wall / 2
    for k in range(count):
        angle = 2 * np.pi * k / count
        cup.add_geom(
            name=f"cup_wall{k}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[wall / 2, half_len, layout.cup_height / 2],
            pos=[wall_mid * np.cos(angle), wall_mid * np.sin(angle), layout.cup_height / 2],
            quat=[np.cos(angle / 2), 0, 0, np.sin(angle / 2)],
            **hidden,
        )
    verts, faces = _cup_mesh(layout)
    spec.add_mesh(name="cup_shell", uservert=verts, userface=faces)
    cup.add_geom(
        name="cup_visual",
        type=mujoco.mjtGeom.mjGEOM_MESH,
        meshname="cup_shell",
        contype=0,
        conaffinity=0,
        mass=0,
        rgba=[0.14, 0.36 + 0.05 * rng.uniform(), 0.78, 1],
        group=GROUP_CUP,
    )


def build_model(
    layout: Layout,
    gripper_pos: np.ndarray,
    gripper_quat: np.ndarray,
    rng: np.random.Generator,
) -> mujoco.MjModel:
    """Compile the demo scene.

    Args:
        layout: Object sizes and placements, camera pose.
        gripper_pos: Initial grasp centre of the gripper, world frame (m), shape (3,).
        gripper_quat: Initial gripper orientation [w, x, y, z] in the world frame.
        rng: Random generator for textures and colours.

    Returns:
        The compiled model, with a camera named ``"demo"``.
    """
    spec = mujoco.MjSpec()
    spec.modelname = "real2gym_demo"
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
    spec.visual.quality.shadowsize = 4096
    spec.visual.quality.offsamples = 4
    spec.visual.headlight.ambient = [0.25, 0.25, 0.25]
    spec.visual.headlight.diffuse = [0.25, 0.25, 0.25]

    _add_environment(spec, layout, rng)
    _add_objects(spec, layout, rng)
    add_gripper(spec, gripper_pos, gripper_quat, GROUP_GRIPPER)

    # MuJoCo cameras look along -z with y up: flip the OpenCV y and z axes.
    mj_rot = layout.camera_rot * np.array([1.0, -1.0, -1.0])
    spec.worldbody.add_camera(
        name="demo",
        pos=layout.camera_pos.tolist(),
        quat=_rot_to_quat(mj_rot).tolist(),
        fovy=layout.fovy,
    )
    return spec.compile()
