"""The reconstruction in Blender: the posed camera, the table, the objects and their motion.

:func:`build_reconstruction` reads a finished run's report.json (through the
core: :func:`~real2gym_addon.report.read_report` and
:func:`~real2gym_addon.geometry.report_io.geometry_from_report`) and builds, in
the "Real2Gym" collection, in the report's world frame (z up, z = 0 on the table):

- the "Real2Gym Camera" posed by the report's ``world_from_camera``, so the
  objects line up with the video behind it;
- "Real2Gym Table": a plane at z = 0 over the table's seen extent plus a margin;
- one mesh object per object, named as in prompts.json, animated per video
  frame (``location`` and ``rotation_euler`` = (0, 0, yaw); video frame i is
  scene frame i), with its physics settings on ``object.real2gym``; a part of
  its shape an artist edits apart (a mug's handle) is a child mesh object
  ``<object>.<part>`` (``real2gym.kind`` = ``PART``); a moving part (a door, a drawer) is
  ``<object>.<part>`` under its joint's Empty, turned or slid by one keyed channel and held
  to its joint's axis and range (:mod:`.joints`);
- its collision pieces as wireframe children in "Real2Gym Collision", hidden
  until shown (:func:`set_collision_visible`);
- timeline markers "<event> <object>" at the interaction keyframes (only the
  markers Real2Gym made are replaced, never the user's).

Re-running never silently discards an edit: every built object carries a
fingerprint of its mesh, transform and keyframes. An object that still matches
it is updated in place (keeping its physics settings); one that does not (the
user edited it) is kept, and the new one goes into "Real2Gym (new)" with a
warning. All changes go through a :class:`~.scene_guard.SceneGuard`, so a
failure leaves the scene as it was.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix
from scipy.spatial.transform import Rotation

from ..real2gym_addon.demo import camera_from_report
from ..real2gym_addon.errors import WarningLog
from ..real2gym_addon.geometry.camera import pose_matrix
from ..real2gym_addon.geometry.pieces import GEOM_BOX
from ..real2gym_addon.geometry.report_io import geometry_from_report
from ..real2gym_addon.geometry.shapes import Shape
from ..real2gym_addon.geometry.stage import Geometry
from ..real2gym_addon.report import Report, read_report
from ..real2gym_addon.segmentation.overlay import default_color
from .animation import write_keyframes
from .joints import build_part
from .meshes import material, mesh_from_arrays, mesh_from_trimesh
from .scene_guard import SceneGuard
from .video_scene import CAMERA_NAME, COLLECTION_NAME, blender_camera_matrix

COLLISION_COLLECTION = "Real2Gym Collision"
NEW_COLLECTION = "Real2Gym (new)"
TABLE_NAME = "Real2Gym Table"
TABLE_MARGIN = 0.1
"""Metres added around the table's seen extent."""
TABLE_CELL = 0.05
"""Metres between the table grid's lines."""
OBJECT_ALPHA = 0.35
"""Opacity of each surface of the reconstructed objects in the viewport: the video shows through."""
_TOLERANCE = 1e-5
_TRANSFORMS = ("location", "rotation_euler", "rotation_quaternion", "scale")
_PHYSICS = ("mass", "density", "friction")
_BUILT_CHILDREN = ("COLLISION", "PART", "JOINT", "JOINT_RANGE")
"""What Real2Gym builds under an object: replaced with it, never kept as the user's."""


@dataclasses.dataclass
class Reconstruction:
    """What :func:`build_reconstruction` did.

    Attributes:
        objects: Blender names of the objects built or updated, in report order.
        kept: Blender names of edited objects that were kept (their new versions are in ``objects``).
        markers: Names of the keyframe markers made.
        warnings: What the user should know (kept edits, a missing camera).
    """

    objects: list[str] = dataclasses.field(default_factory=list)
    kept: list[str] = dataclasses.field(default_factory=list)
    markers: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)


def object_fcurves(obj: bpy.types.Object) -> list:
    """The F-curves animating ``obj`` (read only), on legacy and slotted actions alike."""
    animation = obj.animation_data
    action = animation.action if animation is not None else None
    if action is None:
        return []
    if hasattr(animation, "action_slot"):
        from bpy_extras.anim_utils import action_get_channelbag_for_slot

        bag = action_get_channelbag_for_slot(action, animation.action_slot)
        return list(bag.fcurves) if bag is not None else []
    return list(action.fcurves)


def fingerprint(obj: bpy.types.Object) -> str:
    """A hash of what a user edits: the mesh's vertices (its parts' too), the transform, the keyframes.

    Animated channels count by their keyframes, the others by their values.
    """
    digest = hashlib.sha1()
    if obj.type == "MESH":
        co = np.empty(len(obj.data.vertices) * 3, np.float32)
        obj.data.vertices.foreach_get("co", co)
        digest.update(np.round(co, 6).tobytes())
        digest.update(len(obj.data.polygons).to_bytes(8, "little"))
    # An edited handle or door is an edited object (parts on their way out, unlinked, do not count). A
    # joint's Empty does not count: the report holds the joint, and Set Joint from Viewport applies a moved one.
    parts = [c for c in obj.children_recursive if c.real2gym.kind == "PART" and c.users_collection]
    for part in sorted(parts, key=lambda c: c.name):
        digest.update(fingerprint(part).encode())
    curves = sorted(object_fcurves(obj), key=lambda c: (c.data_path, c.array_index))
    animated = {c.data_path for c in curves}
    channels = [obj.scale, obj.delta_location, obj.delta_rotation_euler, obj.delta_scale]
    channels += [getattr(obj, p) for p in ("location", "rotation_euler") if p not in animated]
    digest.update(np.round(np.array([tuple(c) for c in channels], np.float64), 6).tobytes())
    digest.update(f"{obj.rotation_mode}|{obj.parent.name if obj.parent else ''}".encode())
    for curve in curves:
        co = np.empty(2 * len(curve.keyframe_points), np.float32)
        curve.keyframe_points.foreach_get("co", co)
        digest.update(f"{curve.data_path}[{curve.array_index}]".encode())
        digest.update(np.round(co, 6).tobytes())
    return digest.hexdigest()


def is_edited(obj: bpy.types.Object, frame: int) -> bool:
    """True when the user changed ``obj`` since Real2Gym built it.

    Args:
        obj: A Real2Gym object.
        frame: The scene's current frame: an animated object moved off its
            keyframes there (not keyed yet) counts as edited.
    """
    if not obj.real2gym.fingerprint or fingerprint(obj) != obj.real2gym.fingerprint:
        return True
    for curve in object_fcurves(obj):
        if curve.data_path not in _TRANSFORMS:
            continue
        value = getattr(obj, curve.data_path)[curve.array_index]
        if abs(value - curve.evaluate(frame)) > _TOLERANCE:
            return True
    return False


def real2gym_objects(scene: bpy.types.Scene, kind: str, source_name: str | None = None) -> list:
    """The scene's objects of a Real2Gym ``kind`` (``OBJECT``, ``TABLE``...), optionally by report name."""
    return [
        o
        for o in scene.objects
        if o.real2gym.kind == kind and (source_name is None or o.real2gym.source_name == source_name)
    ]


def _child_collection(parent: bpy.types.Collection, name: str) -> bpy.types.Collection:
    collection = bpy.data.collections.get(name)
    if collection is None:
        collection = bpy.data.collections.new(name)
    if parent.children.get(collection.name) is None:
        parent.children.link(collection)
    return collection


def _layer_collections(layer, name: str):
    if layer.collection.name == name:
        yield layer
    for child in layer.children:
        yield from _layer_collections(child, name)


def set_collision_visible(scene: bpy.types.Scene, visible: bool) -> None:
    """Shows or hides the collision pieces (the "Real2Gym Collision" collection) in every view layer."""
    for view_layer in scene.view_layers:
        for layer in _layer_collections(view_layer.layer_collection, COLLISION_COLLECTION):
            layer.hide_viewport = not visible


def toggle_collision(scene: bpy.types.Scene) -> bool:
    """Shows the collision pieces when hidden, hides them when shown; returns whether they are shown now."""
    state = scene.real2gym
    state.show_collision = not state.show_collision  # its update calls set_collision_visible
    return state.show_collision


def _srgb_to_linear(colour) -> tuple[float, float, float]:
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in colour)


def _table_mesh(extent: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """A grid over ``[xmin, ymin, xmax, ymax]`` plus the margin, at z = 0 (vertices, quads)."""
    x0, y0, x1, y1 = extent
    xs = np.linspace(
        x0 - TABLE_MARGIN, x1 + TABLE_MARGIN, max(2, round((x1 - x0 + 2 * TABLE_MARGIN) / TABLE_CELL))
    )
    ys = np.linspace(
        y0 - TABLE_MARGIN, y1 + TABLE_MARGIN, max(2, round((y1 - y0 + 2 * TABLE_MARGIN) / TABLE_CELL))
    )
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    vertices = np.stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)], axis=1)
    index = np.arange(gx.size).reshape(gx.shape)
    quads = np.stack([index[:-1, :-1], index[1:, :-1], index[1:, 1:], index[:-1, 1:]], axis=-1)
    return vertices, quads.reshape(-1, 4)


def _collision_meshes(
    shape: Shape,
) -> list[tuple[object, tuple[float, float, float], tuple[float, float, float]]]:
    """The collision pieces as ``(trimesh, position, rotation_euler)`` in the object's local frame, as MuJoCo
    gets them (Euler XYZ: a wall box's tilt about its y, then its yaw about z)."""
    import trimesh

    if shape.collision == "coacd":
        return [
            (trimesh.convex.convex_hull(np.asarray(h)), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            for h in shape.hulls or []
        ]
    if shape.collision == "hull":
        return [(shape.mesh().convex_hull, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))]
    pieces = []
    for piece in shape.collision_pieces():
        if piece.kind == GEOM_BOX:
            mesh = trimesh.creation.box(extents=[2 * s for s in piece.size])
        else:
            mesh = trimesh.creation.cylinder(radius=piece.size[0], height=2 * piece.size[1], sections=24)
        pieces.append((mesh, tuple(piece.position), (0.0, piece.tilt, piece.yaw)))
    return pieces


class _Builder:
    """Builds one reconstruction into a scene through a guard."""

    def __init__(self, scene: bpy.types.Scene, guard: SceneGuard, result: Reconstruction) -> None:
        self.scene, self.guard, self.result = scene, guard, result
        self.frame = scene.frame_current
        self.main = bpy.data.collections.get(COLLECTION_NAME) or bpy.data.collections.new(COLLECTION_NAME)
        if scene.collection.children.get(self.main.name) is None:
            scene.collection.children.link(self.main)
        self.collision = _child_collection(self.main, COLLISION_COLLECTION)
        self.collision.hide_render = True
        set_collision_visible(scene, scene.real2gym.show_collision)
        self.selected: dict[tuple[str, str, str], bool] = {}
        """A moving part's objects selected when replaced, by (object, kind, part): whether active."""

    def place(self, name: str, kind: str, source_name: str, mesh: bpy.types.Mesh) -> bpy.types.Object:
        """The object to build ``source_name`` into: the unedited one updated in place, or a new one."""
        candidates = [o for o in real2gym_objects(self.scene, kind, source_name) if o.type == "MESH"]
        candidates.sort(key=lambda o: (o.name != name, o.name))
        edited = [o for o in candidates if is_edited(o, self.frame)]
        obj = next((o for o in candidates if o not in edited), None)
        if obj is not None:
            self.guard.replace_data(obj, mesh)
            self._drop_children(obj)
            self.guard.detach_action(obj)
        else:
            obj = bpy.data.objects.new(name, mesh)
            obj.real2gym.kind, obj.real2gym.source_name = kind, source_name
            home = _child_collection(self.scene.collection, NEW_COLLECTION) if edited else self.main
            home.objects.link(obj)
            for key in _PHYSICS if edited else ():  # the new version keeps the user's physics settings
                setattr(obj.real2gym, key, getattr(edited[0].real2gym, key))
        if edited:
            self.result.kept.extend(o.name for o in edited)
            self.result.warnings.append(
                f"{', '.join(repr(o.name) for o in edited)} was edited since Real2Gym built it and is kept; "
                f"the new '{source_name}' is '{obj.name}' in the '{obj.users_collection[0].name}' collection"
            )
        return obj

    def _drop_children(self, obj: bpy.types.Object) -> None:
        layer = bpy.context.view_layer
        for child in [c for c in obj.children_recursive if c.real2gym.kind in _BUILT_CHILDREN]:
            if child.real2gym.part and child.select_get(view_layer=layer):
                key = (child.real2gym.source_name, child.real2gym.kind, child.real2gym.part)
                self.selected[key] = layer.objects.active == child
            self.guard.unlink(child)
            # Free the names for the new children ("cup.handle", not "cup.handle.001").
            self.guard.rename(child, f"{child.name} (replaced)")
            if child.data is not None:  # a joint's Empty has none
                self.guard.rename(child.data, f"{child.data.name} (replaced)")
            self.guard.detach_action(child)  # a moving part's keys
            self.guard.replace_later([child, child.data])

    def select_again(self, objects) -> None:
        """Selects (and makes active) the new versions of a moving part's objects that were selected."""
        layer = bpy.context.view_layer
        for obj in objects:
            active = self.selected.get((obj.real2gym.source_name, obj.real2gym.kind, obj.real2gym.part))
            if active is None:
                continue
            try:
                obj.select_set(True, view_layer=layer)
            except RuntimeError:  # built into a scene other than the context's
                continue
            if active:
                layer.objects.active = obj

    def remove(self, obj: bpy.types.Object) -> None:
        """Takes an unedited object that the report no longer has out of the scene."""
        self._drop_children(obj)
        self.guard.unlink(obj)
        self.guard.replace_later([obj, obj.data, obj.animation_data.action if obj.animation_data else None])

    def finish(self, obj: bpy.types.Object, material: bpy.types.Material) -> None:
        """Gives ``obj`` its material and stores its fingerprint, once it is fully built."""
        obj.data.materials.clear()
        obj.data.materials.append(material)
        obj.color = material.diffuse_color
        obj.real2gym.fingerprint = fingerprint(obj)


def _build_table(builder: _Builder, extent: list[float]) -> None:
    vertices, quads = _table_mesh(extent)
    table = builder.place(TABLE_NAME, "TABLE", "table", mesh_from_arrays(TABLE_NAME, vertices, quads))
    table.show_wire = True
    builder.finish(table, material("Real2Gym Table", (0.8, 0.8, 0.8), 0.12))
    builder.result.objects.append(table.name)


def _build_object(builder: _Builder, index: int, obj_geometry, frames: np.ndarray) -> None:
    name, shape = obj_geometry.name, obj_geometry.fitted.shape
    (_, body), *parts = shape.parts()  # a mug's handle is its own part, for an artist to select and edit
    obj = builder.place(name, "OBJECT", name, mesh_from_trimesh(name, body))
    settings = obj.real2gym
    settings.role = obj_geometry.role
    settings.shape = shape.kind
    obj.rotation_mode = "XYZ"
    motion = obj_geometry.motion
    count = len(frames)
    write_keyframes(obj, "location", frames, motion.positions[:count], action_name=f"Real2Gym {name}")
    # Euler XYZ (Blender's Rz @ Ry @ Rx), continuous from frame to frame: yaw, and any tilt.
    eulers = np.zeros((count, 3))
    eulers[:, 2] = motion.yaws[:count]
    if motion.tilts is not None:
        matrices = np.array([motion.rotation(i) for i in range(count)])
        eulers = np.unwrap(Rotation.from_matrix(matrices).as_euler("xyz"), axis=0)
    write_keyframes(obj, "rotation_euler", frames, eulers)
    # Posed as on the current frame now, as a frame change would pose it (other objects keep theirs).
    now = min(max(builder.frame, 0), count - 1)
    obj.location, obj.rotation_euler = motion.positions[now], eulers[now]
    for piece, (mesh, position, rotation) in enumerate(_collision_meshes(shape)):
        child_name = f"{obj.name} collision {piece}"
        child = bpy.data.objects.new(child_name, mesh_from_trimesh(child_name, mesh))
        child.parent = obj
        child.location, child.rotation_euler = position, rotation
        child.display_type = "WIRE"
        child.hide_render = True
        child.real2gym.kind, child.real2gym.source_name = "COLLISION", name
        builder.collision.objects.link(child)
    colour = _srgb_to_linear(default_color(index))
    for part, mesh in parts:
        child_name = f"{obj.name}.{part}"
        child = bpy.data.objects.new(child_name, mesh_from_trimesh(child_name, mesh))
        child.parent = obj
        child.real2gym.kind, child.real2gym.source_name = "PART", name
        child.data.materials.append(material(f"Real2Gym {name}", colour, OBJECT_ALPHA))
        for collection in obj.users_collection:
            collection.objects.link(child)
    look = material(f"Real2Gym {name}", colour, OBJECT_ALPHA)
    # Its joints are in the world frame; under the body as it stands on frame 0 (where MJCF exports it).
    body_pose = pose_matrix(motion.positions[0], motion.rotation(0))
    for part in obj_geometry.parts:  # a selected door stays selected through a fix's rebuild
        made = build_part(obj, body_pose, part, frames, now, look)
        builder.select_again((made.joint, made.part, made.drawing))
    builder.finish(obj, look)
    builder.result.objects.append(obj.name)


def _pose_camera(builder: _Builder, report: Report) -> None:
    camera = bpy.data.objects.get(CAMERA_NAME)
    if camera is None or camera.type != "CAMERA":
        builder.result.warnings.append("no Real2Gym Camera in the scene: run the pipeline to load the video")
        return
    pose = tuple(tuple(float(v) for v in row) for row in report.camera.world_from_camera)
    matrix = blender_camera_matrix(dataclasses.replace(camera_from_report(report), world_from_camera=pose))
    builder.guard.detach_action(camera)  # an earlier run's camera path
    poses = report.camera.world_from_camera_frames
    if poses is not None:
        # A camera that moves: keyed on every frame, so the video stays registered.
        matrices = np.asarray(poses, float) @ np.diag([1.0, -1.0, -1.0, 1.0])  # OpenCV to Blender camera axes
        builder.guard.assign(camera, "rotation_mode", "QUATERNION")
        frames = np.arange(len(matrices))
        quaternions = Rotation.from_matrix(matrices[:, :3, :3]).as_quat()[:, [3, 0, 1, 2]]
        quaternions = _continuous(quaternions)
        write_keyframes(camera, "location", frames, matrices[:, :3, 3], action_name="Real2Gym Camera")
        write_keyframes(camera, "rotation_quaternion", frames, quaternions)
        matrix = Matrix(matrices[min(max(builder.frame, 0), len(matrices) - 1)].tolist())
    builder.guard.assign(camera, "matrix_world", matrix)


def _continuous(quaternions: np.ndarray) -> np.ndarray:
    """Flips signs so that each quaternion lies on the same side as the one before (no spins between keys)."""
    result = quaternions.copy()
    for i in range(1, len(result)):
        if result[i] @ result[i - 1] < 0:
            result[i] = -result[i]
    return result


def _set_markers(builder: _Builder, keyframes: list[dict]) -> None:
    """Replaces the keyframe markers Real2Gym made before; the user's markers stay."""
    scene, state = builder.scene, builder.scene.real2gym
    markers = scene.timeline_markers
    before = [(m.name, m.frame, m.select, m.camera) for m in markers]
    recorded = [(m.name, m.frame) for m in state.keyframe_markers]

    def undo() -> None:
        markers.clear()
        for name, frame, select, camera in before:
            marker = markers.new(name, frame=frame)
            marker.select, marker.camera = select, camera
        state.keyframe_markers.clear()
        for name, frame in recorded:
            item = state.keyframe_markers.add()
            item.name, item.frame = name, frame

    builder.guard.on_restore(undo)
    ours = set(recorded)
    for marker in [m for m in markers if (m.name, m.frame) in ours]:
        markers.remove(marker)
    state.keyframe_markers.clear()
    for keyframe in keyframes:
        name, frame = f"{keyframe['event']} {keyframe['object']}", int(keyframe["frame"])
        markers.new(name, frame=frame)
        item = state.keyframe_markers.add()
        item.name, item.frame = name, frame
        builder.result.markers.append(name)


def build_from_report(
    scene: bpy.types.Scene,
    report: Report,
    guard: SceneGuard,
    log: WarningLog | None = None,
    geometry: Geometry | None = None,
) -> Reconstruction:
    """Builds the reconstruction of a report's content into ``scene`` (see the module's description).

    Args:
        scene: The scene to build into (its Real2Gym camera gets the world pose).
        report: The run's report, with the geometry stage's fields.
        guard: Records every change, to undo them if the caller's work fails.
        log: Receives the warnings (stage ``"blender"``) too; may be None.
        geometry: The report's typed geometry where the caller has it in hand (a run, a fix);
            read from the report when None.

    Returns:
        What was built, kept and warned about.

    Raises:
        Real2GymError: The report has no geometry or is malformed; nothing was changed.
    """
    if geometry is None:
        geometry = geometry_from_report(report)
    frames = np.arange(int(report.video.frames))
    result = Reconstruction()
    builder = _Builder(scene, guard, result)
    _pose_camera(builder, report)
    _build_table(builder, geometry.table.extent_world)
    names = set()
    for index, obj_geometry in enumerate(geometry.objects):
        _build_object(builder, index, obj_geometry, frames[: len(obj_geometry.motion.positions)])
        names.add(obj_geometry.name)
    for stale in real2gym_objects(scene, "OBJECT"):
        if stale.real2gym.source_name in names or stale.name in result.objects:
            continue
        if is_edited(stale, builder.frame):
            result.warnings.append(f"'{stale.name}' is not in this run any more; it was edited and is kept")
        else:
            builder.remove(stale)
    _set_markers(builder, geometry.keyframes)
    for warning in result.warnings:
        if log is not None:
            log.warn("blender", warning)
    return result


def build_reconstruction(
    scene: bpy.types.Scene, out_dir: str | Path, log: WarningLog | None = None
) -> Reconstruction:
    """Builds (or updates) the reconstruction of a finished run from its report.json.

    For scripts and the operators; the pipeline builds it itself after a run
    that reached the geometry stage.

    Args:
        scene: The scene to build into.
        out_dir: The run's output folder (with report.json).
        log: Receives the warnings too; may be None.

    Returns:
        What was built, kept and warned about.

    Raises:
        Real2GymError: report.json is missing, malformed or has no geometry;
            the scene is as it was.
    """
    report = read_report(out_dir)
    with SceneGuard(scene) as guard:
        return build_from_report(scene, report, guard, log)
