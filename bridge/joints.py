"""Moving parts in Blender: a door on its hinge, a drawer on its slide, each moved by one channel.

For a part of an object (the core's :class:`~real2gym_addon.geometry.parts.PartGeometry`),
:func:`build_part` makes, in the body's collections:

- "<object>.<part> joint": an Empty, child of the body, whose local Z is the joint's axis
  (``real2gym.kind`` ``JOINT``), drawn as a single arrow. A hinge's sits on the axis line and
  runs along the part's hinged edge, a little past both its ends; a slide's sits at the part's
  centre, closed, and points along the slide.
- "<object>.<part>": the part's mesh (``PART``), child of the Empty, placed so that its own
  rotation about Z (hinge) or location along Z (slide) *is* ``q - closed``: zero where the
  part is closed. The other channels are locked, and a Limit Rotation (or Limit Location)
  constraint in local space holds Z to the joint's range, with *Affect Transform* on, so an
  artist turning it in the viewport is held to its axis and range. Its Z is keyed on every
  video frame from the video's ``q`` (unmeasured frames filled from their neighbours).
- "<object>.<part> range": the range drawn in wire (``JOINT_RANGE``): for a hinge the arc the
  part's far edge sweeps, at its mid-height, with the two ends' radii; for a slide the segment
  its centre travels, with ticks at the ends. Not rendered, not selectable.

:func:`viewport_joint` reads them back: the Empty's world location and Z as the pivot and
axis, the constraint's limits as the range (the *Set Joint* fix from the viewport).
:func:`key_simulated_part` keys the simulation's copy of a part the same way, from the
simulation's joint values. The frames and matrices are plain numpy: :func:`joint_frame`,
:func:`part_from_shape`.
"""

from __future__ import annotations

import dataclasses

import bpy
import numpy as np
from mathutils import Matrix
from scipy.spatial.transform import Rotation

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.geometry.camera import pose_matrix
from ..real2gym_addon.geometry.parts import PartGeometry
from .animation import write_keyframes
from .meshes import mesh_from_arrays, wire_mesh

LIMIT_NAME = "Real2Gym Joint Range"
"""The name of the part's limit constraint."""
ARC_SEGMENTS = 32
"""Segments of a hinge's drawn range."""
ARROW_MARGIN = 0.25
"""Share of a hinged part's length its arrow reaches past each end (it would hide behind the part's edge)."""
_LIMITS = {"hinge": "LIMIT_ROTATION", "slide": "LIMIT_LOCATION"}
_CHANNELS = {"hinge": "rotation_euler", "slide": "location"}


@dataclasses.dataclass(frozen=True)
class PartObjects:
    """The Blender objects of one moving part (:func:`build_part`).

    Attributes:
        joint: The joint's Empty.
        part: The part's mesh object.
        drawing: The range's wire drawing.
    """

    joint: bpy.types.Object
    part: bpy.types.Object
    drawing: bpy.types.Object


def axis_frame(origin: np.ndarray, axis: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """4x4 pose whose Z is ``axis`` and whose X points as near ``toward`` as lies square to it.

    Args:
        origin: ``(3,)`` the frame's origin (metres, in the frame the vectors are given in).
        axis: ``(3,)`` the Z direction.
        toward: ``(3,)`` a direction for X; any direction square to ``axis`` when it is parallel.
    """
    z = np.asarray(axis, float) / max(np.linalg.norm(axis), 1e-12)
    x = np.asarray(toward, float) - z * (np.asarray(toward, float) @ z)
    if np.linalg.norm(x) < 1e-6:
        other = np.eye(3)[int(np.argmin(np.abs(z)))]
        x = other - z * (other @ z)
    x /= np.linalg.norm(x)
    return pose_matrix(np.asarray(origin, float), np.column_stack([x, np.cross(z, x), z]))


def joint_motion(joint_type: str, value: float) -> np.ndarray:
    """4x4 motion of a joint's own frame: a turn of ``value`` rad about Z, or a shift of ``value`` m along Z."""
    motion = np.eye(4)
    if joint_type == "slide":
        motion[2, 3] = value
        return motion
    c, s = np.cos(value), np.sin(value)
    motion[:2, :2] = [[c, -s], [s, c]]
    return motion


def _transform(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def joint_frame(part: PartGeometry, vertices: np.ndarray | None = None) -> np.ndarray:
    """4x4 world pose of a part's joint Empty (see the module's description).

    Args:
        part: The part.
        vertices: ``(V, 3)`` its mesh in its shape's frame (metres); made from its shape when None.
    """
    joint = part.joint
    closed = part.pose_at(joint.closed)
    centre = closed[:3, 3]
    if joint.type == "slide":
        rotation = closed[:3, :3]
        return axis_frame(centre, joint.axis, rotation[:, int(np.argmin(np.abs(rotation.T @ joint.axis)))])
    if vertices is None:
        vertices = np.asarray(part.shape.mesh().vertices)
    origin = _hinge_origin(joint.pivot, joint.axis, _transform(closed, vertices))
    return axis_frame(origin, joint.axis, centre - origin)


def _hinge_origin(pivot: np.ndarray, axis: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """The point of a hinge's axis line a margin short of the part's end against the axis direction."""
    along = (vertices - pivot) @ axis
    return pivot + axis * (along.min() - ARROW_MARGIN * np.ptp(along))


def part_from_shape(part: PartGeometry, frame: np.ndarray) -> np.ndarray:
    """4x4 from the part's shape frame into its Blender object's frame, closed, under the joint ``frame``."""
    return (
        joint_motion(part.joint.type, part.joint.closed - part.q_shape)
        @ np.linalg.inv(frame)
        @ pose_matrix(part.position, part.rotation)
    )


def _range_drawing(joint_type: str, limits: tuple[float, float], vertices: np.ndarray, centre: np.ndarray):
    """The range's wire drawing in the joint's frame: ``(vertices, edges)``.

    Args:
        joint_type: ``hinge`` or ``slide``.
        limits: The range of the part's Z channel (``range - closed``).
        vertices: ``(V, 3)`` the part's mesh in its object's frame, closed.
        centre: ``(3,)`` the part's centre there.
    """
    if joint_type == "slide":
        tick = 0.15 * float(np.ptp(vertices, axis=0).max())
        ends = [np.array([0.0, 0.0, v]) for v in limits]
        points = [ends[0], ends[1]]
        for end in ends:
            points += [end + [tick, 0, 0], end - [tick, 0, 0]]
        return np.array(points), np.array([[0, 1], [2, 3], [4, 5]])
    radius = float(np.hypot(vertices[:, 0], vertices[:, 1]).max())
    start = float(np.arctan2(centre[1], centre[0]))
    angles = start + np.linspace(limits[0], limits[1], ARC_SEGMENTS + 1)
    arc = np.column_stack([radius * np.cos(angles), radius * np.sin(angles), np.full(len(angles), centre[2])])
    points = np.vstack([[0.0, 0.0, centre[2]], arc])
    edges = [[0, 1], [0, len(points) - 1]] + [[i, i + 1] for i in range(1, len(points) - 1)]
    return points, np.array(edges)


def _arrow_size(joint_type: str, vertices: np.ndarray) -> float:
    """The joint arrow's length (m): a hinge's spans the part along its axis and a margin past each end,
    a slide's is the part's largest side."""
    if joint_type == "hinge":
        return float((1 + 2 * ARROW_MARGIN) * np.ptp(vertices[:, 2]))
    return float(np.ptp(vertices, axis=0).max())


def _hold_to_joint(obj: bpy.types.Object, joint_type: str, limits: tuple[float, float]) -> None:
    """Locks every channel but Z's and limits Z to ``limits`` (in local space, affecting transforms)."""
    obj.rotation_mode = "XYZ"
    obj.lock_location = (True, True, joint_type == "hinge")
    obj.lock_rotation = (True, True, joint_type == "slide")
    obj.lock_scale = (True, True, True)
    for old in [c for c in obj.constraints if c.name == LIMIT_NAME]:
        obj.constraints.remove(old)
    limit = obj.constraints.new(_LIMITS[joint_type])
    limit.name = LIMIT_NAME
    limit.owner_space = "LOCAL"
    limit.use_transform_limit = True
    if joint_type == "hinge":
        limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
        limit.min_x = limit.max_x = limit.min_y = limit.max_y = 0.0
        limit.min_z, limit.max_z = limits
        return
    for axis in "xyz":
        setattr(limit, f"use_min_{axis}", True)
        setattr(limit, f"use_max_{axis}", True)
    limit.min_z, limit.max_z = limits


def part_limits(part: PartGeometry) -> tuple[float, float]:
    """The range of the part object's Z channel: the joint's range less its closed value."""
    lo, hi = part.joint.range
    return lo - part.joint.closed, hi - part.joint.closed


def build_part(
    body: bpy.types.Object,
    body_pose: np.ndarray,
    part: PartGeometry,
    frames: np.ndarray,
    now: int,
    material: bpy.types.Material,
) -> PartObjects:
    """Builds a moving part's joint Empty, mesh and range drawing under ``body`` (see the module's description).

    Args:
        body: The object the part belongs to (its collections get the new objects).
        body_pose: 4x4 world pose of ``body`` on the frame its MJCF body is exported at (frame 0).
        part: The part.
        frames: The scene frames keyed, one per video frame.
        now: The index into ``frames`` the part is posed at now.
        material: The part's viewport material.

    Returns:
        The three objects, named ``<body>.<part>``, ``... joint`` and ``... range``.
    """
    name, kind = f"{body.name}.{part.name}", part.joint.type
    shape_mesh = part.shape.mesh()
    shape_vertices = np.asarray(shape_mesh.vertices, float)
    frame = joint_frame(part, shape_vertices)
    from_shape = part_from_shape(part, frame)
    vertices = _transform(from_shape, shape_vertices)
    homes = list(body.users_collection)

    joint = bpy.data.objects.new(f"{name} joint", None)
    joint.empty_display_type = "SINGLE_ARROW"
    joint.empty_display_size = _arrow_size(kind, vertices)
    joint.show_in_front = True
    joint.parent = body
    joint.matrix_basis = Matrix((np.linalg.inv(body_pose) @ frame).tolist())

    obj = bpy.data.objects.new(name, mesh_from_arrays(name, vertices, np.asarray(shape_mesh.faces)))
    obj.data.materials.append(material)
    obj.color = material.diffuse_color
    obj.parent = joint
    limits = part_limits(part)
    _hold_to_joint(obj, kind, limits)
    values = part.filled_q()[: len(frames)] - part.joint.closed
    channel = _CHANNELS[kind]
    write_keyframes(obj, channel, frames, values, action_name=f"Real2Gym {name}", first_index=2)
    getattr(obj, channel)[2] = float(values[min(max(now, 0), len(values) - 1)])

    points, edges = _range_drawing(kind, limits, vertices, from_shape[:3, 3])
    drawing = bpy.data.objects.new(f"{name} range", wire_mesh(f"{name} range", points, edges))
    drawing.parent = joint
    drawing.hide_render = drawing.hide_select = True
    drawing.show_in_front = True
    drawing.color = material.diffuse_color

    for made, made_kind in ((joint, "JOINT"), (obj, "PART"), (drawing, "JOINT_RANGE")):
        made.real2gym.kind, made.real2gym.source_name, made.real2gym.part = (
            made_kind,
            body.real2gym.source_name,
            part.name,
        )
        for home in homes:
            home.objects.link(made)
    return PartObjects(joint, obj, drawing)


def part_objects(
    scene: bpy.types.Scene, object_name: str, part_name: str
) -> tuple[bpy.types.Object, bpy.types.Object]:
    """The joint Empty and mesh object of a part in ``scene``: those under the body named as in the report first.

    Raises:
        Real2GymError: The scene has no such part (the reconstruction was not built, or was removed).
    """
    joints = [
        o for o in scene.objects
        if o.type == "EMPTY" and o.real2gym.kind == "JOINT" and o.real2gym.source_name == object_name
        and o.real2gym.part == part_name
    ]  # fmt: skip
    joints.sort(key=lambda o: (o.parent is None or o.parent.name != object_name, o.name))
    for joint in joints:
        parts = [c for c in joint.children if c.real2gym.kind == "PART"]
        if parts:
            return joint, parts[0]
    raise Real2GymError(
        f"the scene has no joint of '{object_name}.{part_name}': open the run (or build its reconstruction) first"
    )


def viewport_joint(
    scene: bpy.types.Scene, object_name: str, part_name: str, joint_type: str, closed: float
) -> dict:
    """The joint as the viewport shows it: the Empty's world location and Z, the part's limits.

    Args:
        scene: The scene (evaluated through the context's depsgraph).
        object_name: The object, as in the report.
        part_name: Its part.
        joint_type: ``hinge`` or ``slide`` (the report's).
        closed: The joint's closed value (the report's): the part's Z channel is ``q - closed``.

    Returns:
        ``{"axis", "pivot", "range"}`` as a ``joint`` fix takes them (world frame, metres; radians or metres):
        the pivot is a hinge's Empty's location; a slide's pivot does not move its part (the fix keeps
        the part where it is), so a slide gives none.

    Raises:
        Real2GymError: No such part in the scene, or its limit constraint was removed.
    """
    joint, obj = part_objects(scene, object_name, part_name)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    world = np.array(joint.evaluated_get(depsgraph).matrix_world, float)
    axis = world[:3, 2] / np.linalg.norm(world[:3, 2])
    limit = obj.constraints.get(LIMIT_NAME)
    if limit is None:
        raise Real2GymError(
            f"'{obj.name}' has lost its '{LIMIT_NAME}' constraint: open the run again to see the joint's range"
        )
    lo, hi = limit.min_z + closed, limit.max_z + closed
    joint_now = {
        "axis": [round(float(v), 6) for v in axis],
        "range": [round(float(lo), 6), round(float(hi), 6)],
    }
    if joint_type == "hinge":
        joint_now["pivot"] = [round(float(v), 6) for v in world[:3, 3]]
    return joint_now


def key_simulated_part(
    copies, verification, object_name: str, part: PartGeometry, body_copy: bpy.types.Object, frames: np.ndarray,
    now: int,
) -> list[str]:  # fmt: skip
    """Keys the simulation's copy of a moving part under its body's copy, from the simulated joint values.

    The copy's joint Empty sits on the compiled model's joint (in the MJCF body's frame, which the
    body's copy follows), placed along it as the reconstruction's arrow is; the part's Z channel is
    ``q - closed``, as the reconstruction's.

    Args:
        copies: The simulation's copy maker (``bridge.simulation``): ``copy(name, source_name, mesh, parent)``.
        verification: The verification whose record and compiled model are keyed.
        object_name: The body's name.
        part: The part (its shape and joint as verified).
        body_copy: The body's simulated copy.
        frames: The frames keyed.
        now: The index into ``frames`` posed now.

    Returns:
        The names of the Empty and the part's copy; empty when the simulation has no such joint.
    """
    key = f"{object_name}.{part.name}"
    record, scene = verification.record, verification.scene
    body_name = scene.name_map.get(key)
    if key not in record.joint_values or body_name is None:
        return []
    model = scene.model
    body, joint = model.body(body_name), model.joint(f"{body_name}_joint")
    in_body = pose_matrix(np.asarray(body.pos, float), _quaternion_matrix(body.quat))
    reference = float(model.qpos0[joint.qposadr[0]])
    shape_mesh = part.shape.mesh()
    shape_vertices = np.asarray(shape_mesh.vertices, float)
    # In the part body's frame at the joint's reference: placed as the reconstruction's arrow is.
    axis, pivot = np.asarray(joint.axis, float), np.asarray(joint.pos, float)
    axis = axis / np.linalg.norm(axis)
    if part.joint.type == "hinge":
        origin = _hinge_origin(pivot, axis, shape_vertices)
        frame = axis_frame(origin, axis, -origin)
    else:
        frame = axis_frame(
            axis * (part.joint.closed - reference), axis, np.eye(3)[int(np.argmin(np.abs(axis)))]
        )
    vertices = _transform(
        joint_motion(part.joint.type, part.joint.closed - reference) @ np.linalg.inv(frame), shape_vertices
    )
    name = f"{key} sim"
    empty = copies.copy(f"{name} joint", f"{key} joint", None, parent=body_copy)
    empty.empty_display_type = "SINGLE_ARROW"
    empty.empty_display_size = _arrow_size(part.joint.type, vertices)
    empty.matrix_basis = Matrix((in_body @ frame).tolist())
    copy = copies.copy(
        name, key, mesh_from_arrays(name, vertices, np.asarray(shape_mesh.faces)), parent=empty
    )
    copy.rotation_mode = "XYZ"
    values = np.asarray(record.joint_values[key][: len(frames)], float) - part.joint.closed
    channel = _CHANNELS[part.joint.type]
    write_keyframes(copy, channel, frames, values, action_name=f"{name} Sim", first_index=2)
    getattr(copy, channel)[2] = float(values[min(max(now, 0), len(values) - 1)])
    return [empty.name, copy.name]


def _quaternion_matrix(quaternion) -> np.ndarray:
    """3x3 rotation of a MuJoCo quaternion ``(w, x, y, z)``."""
    w, x, y, z = (float(v) for v in quaternion)
    return Rotation.from_quat([x, y, z, w]).as_matrix()
