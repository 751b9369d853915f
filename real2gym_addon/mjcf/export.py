"""MJCF export: the scene as a MuJoCo model built with ``mujoco.MjSpec``.

The table is a static box whose top is z = 0; each object is a free body (a
``static`` or ``support`` object is fixed) with its visual mesh (no collision,
group 1) and its collision pieces (group 3; primitives, never one convex hull
over a container); mass comes from a density (or the user's mass) and the
collision volume; the video camera is placed from world_from_camera with the
video's field of view; the gripper is added by :mod:`.gripper`. Solver settings
follow MuJoCo's advice for holding objects by friction: elliptic cones,
impratio 10, condim 4 on the fingers.

Names are sanitised for XML (``name_map`` keeps original -> MJCF name).
Written as ``mjcf/scene.xml`` with meshes in ``mjcf/assets/*.obj``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import Real2GymError
from ..geometry.camera import pose_matrix, yaw_rotation
from ..geometry.contents import Contents, fill_points
from ..geometry.parts import PART_ARMATURE, part_key
from ..geometry.pieces import DEFAULT_DENSITY, GEOM_BOX
from ..geometry.priors import support_height
from ..geometry.shape_kinds import kind_entry
from ..geometry.shapes import Shape
from .gripper import CONTACT_SOLIMP, CONTACT_SOLREF, GripperSpec, add_gripper

DEFAULT_FRICTION = 1.0
"""Sliding friction of an object whose friction is not set (wood, plastic or ceramic on wood: 0.3-0.7
dry; 1 errs towards holding, as the gripper's pads do)."""
FRICTION_RANGE = (0.01, 5.0)
"""Sliding friction accepted from a report, Blender or the command line."""
OBJECT_PRIORITY = 1
"""An object's geoms outrank the table's (0), so its friction is that of its contacts with the table;
the gripper's (2) outrank both, so its pads keep the friction that holds objects. Between two objects
MuJoCo takes the higher friction."""
TIMESTEP = 0.002
START_CLEARANCE = 0.0005
"""Objects start this far (m) above their support, so nothing starts interpenetrating."""
_COLOURS = [(0.85, 0.25, 0.2, 1), (0.2, 0.4, 0.85, 1), (0.9, 0.75, 0.2, 1), (0.3, 0.7, 0.35, 1)]


class ExportError(Real2GymError):
    """The scene cannot be exported or compiled."""


@dataclasses.dataclass
class SceneObject:
    """One object to export.

    Attributes:
        name: The object's name (any characters).
        role: ``manipulated | container | support | static``.
        shape: Its shape (local frame z up, origin at the bounding-box centre).
        position: Initial centre, world frame (m).
        yaw: Initial rotation about world z (radians).
        mass: kg, or None to use ``density``.
        density: kg/m3 when ``mass`` is None.
        friction: Sliding friction of its contacts with the table and (the higher of the two)
            other objects; the gripper's pads use their own.
        parts: Its moving parts (:class:`..geometry.parts.PartGeometry`), each a child body on its joint.
        part_q: Each part's joint value at the exported frame, by part name (the joint's ``ref``).
        contents: What it holds (spheres a pour pours out), packed in its cavity; None for nothing.
    """

    name: str
    role: str
    shape: Shape
    position: np.ndarray
    yaw: float
    mass: float | None = None
    density: float = DEFAULT_DENSITY
    friction: float = DEFAULT_FRICTION
    parts: list = dataclasses.field(default_factory=list)
    part_q: dict[str, float] = dataclasses.field(default_factory=dict)
    contents: Contents | None = None


@dataclasses.dataclass
class SceneModel:
    """What was exported.

    Attributes:
        spec: The MjSpec.
        model: The compiled model.
        name_map: Object name -> MJCF body name.
        meshes: MJCF mesh name -> trimesh mesh (written as OBJ).
    """

    spec: mujoco.MjSpec
    model: mujoco.MjModel
    name_map: dict[str, str]
    meshes: dict[str, object]


def mjcf_name(name: str, taken: set[str]) -> str:
    """An XML- and MJCF-safe unique name for ``name``."""
    base = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_.-]", "_", name)).strip("_") or "object"
    if base[0].isdigit() or base.startswith("-") or base.startswith("."):
        base = f"obj_{base}"
    candidate, index = base, 2
    while candidate in taken:
        candidate, index = f"{base}_{index}", index + 1
    taken.add(candidate)
    return candidate


def _quat(yaw: float) -> list[float]:
    return [float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))]


def _piece_quat(piece) -> list[float]:
    return Rotation.from_matrix(piece.rotation()).as_quat()[[3, 0, 1, 2]].tolist()


def _add_object(
    spec: mujoco.MjSpec, obj: SceneObject, body_name: str, colour, meshes: dict, part_names: dict[str, str]
) -> None:
    shape = obj.shape
    body = spec.worldbody.add_body(
        name=body_name, pos=obj.position + [0, 0, START_CLEARANCE], quat=_quat(obj.yaw)
    )
    if obj.role in ("manipulated", "container", "distractor"):
        body.add_freejoint(name=f"{body_name}_free")
    _add_shape_geoms(spec, body, obj.name, shape, body_name, colour, meshes, obj.mass, obj.density, obj.friction,
                     condim=4 if obj.role == "manipulated" else 3)  # fmt: skip
    for part in obj.parts:
        _add_part(spec, body, obj, part, part_names[part.name], colour, meshes)
    if obj.contents is not None:
        _add_contents(spec, obj, body_name)


CONTENTS_FRICTION = 0.3
"""Sliding friction of the spheres of a container's contents (glass beads, grains: 0.2-0.4)."""
CONTENTS_COLOUR = (0.35, 0.65, 0.95, 1.0)


def contents_body(body_name: str, index: int) -> str:
    """The MJCF body of sphere ``index`` of the contents of the object whose body is ``body_name``."""
    return f"{body_name}_contents_{index:03d}"


def _add_contents(spec: mujoco.MjSpec, obj: SceneObject, body_name: str) -> None:
    """The object's contents: one free sphere body each, packed in its cavity at its exported pose (upright,
    turned by its yaw), a little above its start clearance."""
    contents = obj.contents
    local = fill_points(obj.shape, contents, obj.name)
    world = obj.position + [0, 0, START_CLEARANCE] + local @ yaw_rotation(obj.yaw).T
    for index, centre in enumerate(world):
        sphere = spec.worldbody.add_body(name=contents_body(body_name, index), pos=centre.tolist())
        sphere.add_freejoint()
        sphere.add_geom(name=f"{contents_body(body_name, index)}_geom", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                        size=[contents.radius, 0, 0], density=contents.density,
                        friction=[CONTENTS_FRICTION, 0.005, 0.0001], priority=OBJECT_PRIORITY, condim=3, group=1,
                        solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP, rgba=list(CONTENTS_COLOUR))  # fmt: skip


def _add_shape_geoms(spec, body, name: str, shape: Shape, body_name: str, colour, meshes: dict, mass, density,
                     friction: float, condim: int, visual: bool = True) -> None:  # fmt: skip
    """A body's visual mesh (unless not ``visual``: then ``meshes`` is not written, and a ``hull`` collision
    cannot be made) and collision geoms, its density from ``mass`` (kg, or None) or ``density``."""
    mesh_name = f"{body_name}_visual"
    if visual:
        meshes[mesh_name] = shape.mesh()
        spec.add_mesh(name=mesh_name, file=f"{mesh_name}.obj")
        body.add_geom(name=mesh_name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mesh_name, contype=0,
                      conaffinity=0, group=1, density=0.0, rgba=colour)  # fmt: skip
    pieces = shape.collision_pieces()
    volume = collision_volume(shape)
    if not np.isfinite(volume) or volume <= 1e-9 or min(shape.size) <= 1e-5:
        raise ExportError(
            f"object '{name}' has zero volume (size {list(shape.size)}); fix its shape or collision"
        )
    density = mass / volume if mass else density
    for index, hull in enumerate(shape.hulls or [] if shape.collision == "coacd" else []):
        hull_name = f"{body_name}_collision_hull_{index}"
        spec.add_mesh(name=hull_name, uservert=np.asarray(hull, float).ravel().tolist())
        body.add_geom(name=hull_name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=hull_name, density=density,
                      friction=[friction, 0.005, 0.0001], priority=OBJECT_PRIORITY, group=3, solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP,
                      rgba=[colour[0], colour[1], colour[2], 0.3])  # fmt: skip
    if shape.collision == "hull":
        body.add_geom(name=f"{body_name}_collision_hull", type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mesh_name,
                      density=density, friction=[friction, 0.005, 0.0001], priority=OBJECT_PRIORITY, group=3, solref=CONTACT_SOLREF,
                      solimp=CONTACT_SOLIMP, rgba=[colour[0], colour[1], colour[2], 0.3])  # fmt: skip
    rolling = kind_entry(shape.kind).rolling_friction
    if rolling:
        condim = 6  # a contact's dimension is the larger of its geoms': rolling friction needs 6
    for index, piece in enumerate(pieces):
        kind = mujoco.mjtGeom.mjGEOM_BOX if piece.kind == GEOM_BOX else mujoco.mjtGeom.mjGEOM_CYLINDER
        body.add_geom(name=f"{body_name}_collision_{index}", type=kind, size=list(piece.size), pos=list(piece.position),
                      quat=_piece_quat(piece), density=density, friction=[friction, 0.005, rolling or 0.0001],
                      priority=OBJECT_PRIORITY,
                      condim=condim, group=3, solref=CONTACT_SOLREF,
                      solimp=CONTACT_SOLIMP, rgba=[colour[0], colour[1], colour[2], 0.3])  # fmt: skip


def _add_part(spec, body, obj: SceneObject, part, name: str, colour, meshes: dict) -> None:
    """A moving part as a child body of ``body``, on its hinge or slide joint, posed at the exported frame."""
    joint = part.joint
    q = float(obj.part_q.get(part.name, part.q_shape))
    world_from_body = pose_matrix(obj.position, yaw_rotation(obj.yaw))
    world_from_part = part.pose_at(q)
    body_from_part = np.linalg.inv(world_from_body) @ world_from_part
    rotation = world_from_part[:3, :3]
    child = body.add_body(name=name, pos=body_from_part[:3, 3].tolist(),
                          quat=Rotation.from_matrix(body_from_part[:3, :3]).as_quat()[[3, 0, 1, 2]].tolist())  # fmt: skip
    kind = mujoco.mjtJoint.mjJNT_HINGE if joint.type == "hinge" else mujoco.mjtJoint.mjJNT_SLIDE
    child.add_joint(name=f"{name}_joint", type=kind, axis=(rotation.T @ joint.axis).tolist(),
                    pos=(rotation.T @ (joint.pivot - world_from_part[:3, 3])).tolist(), range=list(joint.range),
                    limited=mujoco.mjtLimited.mjLIMITED_TRUE, ref=q, damping=joint.damping,
                    frictionloss=joint.frictionloss, armature=PART_ARMATURE)  # fmt: skip
    _add_shape_geoms(spec, child, part_key(obj.name, part.name), part.shape, name, colour, meshes, None,
                     obj.density, obj.friction, condim=3)  # fmt: skip


def collision_volume(shape: Shape) -> float:
    """The volume (m3) of an object's collision geometry, which its density fills."""
    if shape.collision == "hull":
        return float(shape.mesh().convex_hull.volume)
    if shape.collision == "coacd":
        return float(sum(_hull_volume(h) for h in shape.hulls or []))
    return float(sum(_piece_volume(p) for p in shape.collision_pieces()))


def _hull_volume(vertices) -> float:
    import trimesh

    return float(trimesh.convex.convex_hull(np.asarray(vertices)).volume)


def _piece_volume(piece) -> float:
    if piece.kind == GEOM_BOX:
        return 8.0 * piece.size[0] * piece.size[1] * piece.size[2]
    return np.pi * piece.size[0] ** 2 * 2.0 * piece.size[1]


def mujoco_camera_quat(world_from_camera: np.ndarray) -> np.ndarray:
    """The ``[w, x, y, z]`` orientation of a MuJoCo camera posed as the OpenCV camera ``world_from_camera``.

    MuJoCo cameras look along -z with y up; OpenCV cameras along +z with y down.
    """
    rotation = world_from_camera[:3, :3] @ np.diag([1.0, -1.0, -1.0])
    return Rotation.from_matrix(rotation).as_quat()[[3, 0, 1, 2]]


def _add_camera(spec: mujoco.MjSpec, world_from_camera: np.ndarray, camera) -> None:
    quat = mujoco_camera_quat(world_from_camera)
    video = spec.worldbody.add_camera(name="video", pos=world_from_camera[:3, 3], quat=quat)
    # The pinhole intrinsics in pixels. MuJoCo puts the image centre at ((W-1)/2, (H-1)/2)
    # and shifts it against principal_pixel (checked by rendering points of known projection).
    video.resolution = [camera.width, camera.height]
    video.sensor_size = [camera.width, camera.height]
    video.focal_pixel = [camera.fx, camera.fy]
    video.principal_pixel = [(camera.width - 1) / 2 - camera.cx, (camera.height - 1) / 2 - camera.cy]


def build_scene(
    objects: list[SceneObject],
    table_extent: list[float],
    world_from_camera: np.ndarray,
    camera,
    gripper_pose: tuple[np.ndarray, np.ndarray] | None,
    folder: Path,
    gripper: GripperSpec | None = None,
    appearance: dict | None = None,
) -> SceneModel:
    """Builds and compiles the scene; its meshes are written to ``folder/assets``.

    Args:
        objects: The objects at their initial poses.
        table_extent: ``[xmin, ymin, xmax, ymax]`` of the table top (m), world frame.
        world_from_camera: 4x4.
        camera: The demo's intrinsics (for the video camera's field of view).
        gripper_pose: Initial ``(position, quaternion [w, x, y, z])`` of the gripper, or None for none.
        folder: The MJCF folder (scene.xml goes there with :func:`write_mjcf`).
        gripper: Gripper dimensions; Franka Hand when None.
        appearance: Colours, the table's texture, the light and the background (see
            :func:`apply_appearance`); the default look when None.

    Raises:
        ExportError: An object's geometry is unusable, or MuJoCo refuses the model.
    """
    spec = mujoco.MjSpec()
    spec.modelname = "real2gym_scene"
    spec.meshdir = "assets"
    spec.compiler.degree = False  # a hinge's range and ref are radians, as the report writes them
    spec.option.timestep = TIMESTEP
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 10.0
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.visual.global_.offwidth = max(640, camera.width)
    spec.visual.global_.offheight = max(480, camera.height)
    spec.worldbody.add_light(name="sun", pos=[0, 0, 2.0], dir=[0, 0, -1], diffuse=[0.8, 0.8, 0.8])
    x0, y0, x1, y1 = table_extent
    spec.worldbody.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_BOX,
                            size=[(x1 - x0) / 2 + 0.3, (y1 - y0) / 2 + 0.3, 0.02],
                            pos=[(x0 + x1) / 2, (y0 + y1) / 2, -0.02], rgba=[0.75, 0.6, 0.45, 1], friction=[1.0, 0.005, 0.0001],
                            solref=CONTACT_SOLREF, solimp=CONTACT_SOLIMP)  # fmt: skip
    taken = {"table", "video", "sun", "gripper", "gripper_target"}
    name_map, meshes = {}, {}
    for index, obj in enumerate(objects):
        name_map[obj.name] = mjcf_name(obj.name, taken)
        part_names = {p.name: mjcf_name(f"{name_map[obj.name]}_{p.name}", taken) for p in obj.parts}
        name_map.update({part_key(obj.name, p): body for p, body in part_names.items()})
        _add_object(spec, obj, name_map[obj.name], _COLOURS[index % len(_COLOURS)], meshes, part_names)
    _add_camera(spec, world_from_camera, camera)
    if gripper_pose is not None:
        add_gripper(spec, gripper_pose[0], gripper_pose[1], gripper)
    if appearance:
        apply_appearance(spec, appearance, name_map)
    folder = Path(folder)
    (folder / "assets").mkdir(parents=True, exist_ok=True)
    for name, mesh in meshes.items():
        (folder / "assets" / f"{name}.obj").write_text(mesh.export(file_type="obj"))
    spec.modelfiledir = str(folder.resolve())
    try:
        model = spec.compile()
    except Exception as e:  # MuJoCo raises plain ValueError with its own message
        raise ExportError(f"MuJoCo refused the scene: {str(e)[:300]}") from e
    return SceneModel(spec, model, name_map, meshes)


def apply_appearance(spec: mujoco.MjSpec, appearance: dict, name_map: dict[str, str]) -> None:
    """Sets what a camera sees, nothing the physics uses (a variant's appearance edits).

    Args:
        spec: The scene's spec, before compiling.
        appearance: ``colours`` (object name -> ``[r, g, b]`` in 0-1), ``table``
            (``{"colour", "texture": "plain" | "checker"}``), ``light`` (``{"intensity"`` in 0-1,
            ``"direction"`` (3,)}) and ``background`` (``[r, g, b]``); each optional.
        name_map: Object name -> MJCF body name.
    """
    for name, colour in (appearance.get("colours") or {}).items():
        if name in name_map:
            spec.geom(f"{name_map[name]}_visual").rgba = [*colour[:3], 1.0]
    table = appearance.get("table")
    if table:
        geom = spec.geom("table")
        geom.rgba = [*table["colour"][:3], 1.0]
        if table.get("texture") == "checker":
            dark = [0.6 * c for c in table["colour"][:3]]
            spec.add_texture(name="table_checker", type=mujoco.mjtTexture.mjTEXTURE_2D,
                             builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=table["colour"][:3], rgb2=dark,
                             width=256, height=256)  # fmt: skip
            material = spec.add_material(name="table_checker", texrepeat=[8, 8], texuniform=True)
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "table_checker"
            geom.material, geom.rgba = "table_checker", [1.0, 1.0, 1.0, 1.0]
    light = appearance.get("light")
    if light:
        sun = spec.light("sun")
        sun.diffuse = [float(light["intensity"])] * 3
        direction = np.asarray(light["direction"], float)
        sun.dir = direction / np.linalg.norm(direction)
        sun.pos = -2.0 * sun.dir
    if appearance.get("background"):
        colour = appearance["background"][:3]
        spec.add_texture(name="background", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=colour,
                         rgb2=[0.5 * c for c in colour], width=64, height=64)  # fmt: skip


def write_mjcf(scene: SceneModel, folder: Path) -> Path:
    """Writes ``folder/scene.xml`` (the meshes are already in ``folder/assets``).

    Returns:
        The path of scene.xml.
    """
    folder = Path(folder)
    xml = scene.spec.to_xml()
    path = folder / "scene.xml"
    path.write_text(xml)
    return path


RESTING_SNAP = 0.015
"""An object whose bottom is within this distance (m) of the table at the start is put exactly on it."""


def objects_at_frame(
    geometry,
    frame: int = 0,
    masses: dict[str, float] | None = None,
    frictions: dict[str, float] | None = None,
) -> list[SceneObject]:
    """The geometry stage's objects at a video frame, ready to export.

    Objects resting on the table (bottom within :data:`RESTING_SNAP` of it) are
    put exactly on it: the video-derived height has millimetres of noise, and
    an object that starts inside the table would be thrown out of it. One standing on another object's
    support under it (a plate in its stand, on the slot's floor) is left there.
    """
    masses, frictions = masses or {}, frictions or {}
    objects = []
    for o in geometry.objects:
        position = o.motion.positions[frame].copy()
        half = o.fitted.shape.size[2] / 2
        others = [other for other in geometry.objects if other is not o]
        if (
            abs(position[2] - half) < RESTING_SNAP
            and support_height(position[:2], others, below=position[2]) == 0.0
        ):
            position[2] = half
        objects.append(SceneObject(o.name, o.role, o.fitted.shape, position, float(o.motion.yaws[frame]),
                                   mass=masses.get(o.name), friction=frictions.get(o.name, DEFAULT_FRICTION),
                                   parts=list(o.parts),
                                   part_q={p.name: float(p.filled_q()[frame]) for p in o.parts},
                                   contents=o.contents))  # fmt: skip
    return objects


def yaw_of(rotation: np.ndarray) -> float:
    """Yaw (radians) of a rotation matrix about world z."""
    return float(np.arctan2(rotation[1, 0], rotation[0, 0]))


__all__ = [
    "ExportError",
    "SceneModel",
    "SceneObject",
    "build_scene",
    "objects_at_frame",
    "write_mjcf",
    "yaw_rotation",
]
