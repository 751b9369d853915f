"""The MuJoCo simulation back in Blender, on its own copies of the objects.

:func:`apply_simulation` keys a verification's simulation (the core's
:class:`~real2gym_addon.verify.run.Verification`: the geometry it verified, the
compiled model and the record) in the "Real2Gym Sim" collection. A run and a fix
hand it the verification they made, so nothing is simulated twice;
:func:`import_simulation` simulates a finished run again for it. It fills the
collection with a copy of every object ("<object> sim", its own object, mesh
and action) and a simple gripper (palm and two fingers, the dimensions of
:class:`~real2gym_addon.mjcf.gripper.GripperSpec`), drawn in translucent
orange, keyed per video frame with the simulated poses (``location``,
``rotation_quaternion``; finger openings from the model's finger joints); a
moving part's copy ("<object>.<part> sim") turns under its joint's Empty, child
of its body's copy, keyed from the simulation's joint values as the
reconstruction's part is from the video's (:mod:`.joints`). So the video, the
video-derived animation (the reconstruction) and the simulation play together.
Each copy has an animated custom property ``real2gym_error_m``: the distance
between the simulated and the video-derived position on that frame
(:func:`~real2gym_addon.compare.per_frame_errors`), to graph in the Graph
Editor.

Importing again replaces only these copies' meshes and actions; the
reconstruction is never touched. A simulation (:func:`simulate_run`) is plain
core work that may run in a worker thread; :func:`apply_simulation` builds the
Blender data on the main thread.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import bpy
import numpy as np

from ..real2gym_addon.demo import camera_from_report
from ..real2gym_addon.geometry.report_io import geometry_from_report
from ..real2gym_addon.mjcf.gripper import FINGERTIP_BELOW, NAMES, GripperSpec
from ..real2gym_addon.physics import physics_with
from ..real2gym_addon.render import per_frame_errors
from ..real2gym_addon.report import Report, read_report
from ..real2gym_addon.verify.run import Verification, verify_scene
from ..state.properties import ERROR_PROPERTY
from .animation import write_keyframes
from .joints import key_simulated_part
from .meshes import material, mesh_from_arrays, mesh_from_trimesh
from .scene_guard import SceneGuard

SIM_COLLECTION = "Real2Gym Sim"
GRIPPER_NAME = "Real2Gym Sim Gripper"
SIM_COLOUR = (1.0, 0.3, 0.02)
"""Linear RGB of the simulated copies: orange, apart from the reconstruction's colours."""
SIM_ALPHA = 0.3


@dataclasses.dataclass
class SimulationImport:
    """What :func:`apply_simulation` built.

    Attributes:
        objects: Blender names of the simulated copies, in report order.
        gripper: Blender names of the gripper's parts (empty without a gripper).
        frames: Video frames keyed (fewer than the video when the simulation diverged).
        max_error_m: Per object name, the largest distance between simulated and video-derived position.
    """

    objects: list[str]
    gripper: list[str]
    frames: int
    max_error_m: dict[str, float]


def simulate_run(
    report: Report, masses: dict[str, float] | None = None, frictions: dict[str, float] | None = None
) -> Verification:
    """Verifies a report's scene again in memory (its files in a scratch folder; safe in a worker thread).

    Args:
        report: The run's report, with geometry.
        masses: Object name -> kg, overriding the report's (as ``real2gym verify --mass``).
        frictions: Object name -> sliding friction, overriding the report's.

    Raises:
        Real2GymError: The report has no geometry, or the scene cannot be exported.
    """
    geometry = geometry_from_report(report)
    masses, frictions = physics_with(report, masses, frictions)
    with tempfile.TemporaryDirectory() as scratch:
        return verify_scene(geometry, camera_from_report(report), report.task, report.video.fps,
                            Path(scratch), masses, frictions=frictions)  # fmt: skip


def _collection(scene: bpy.types.Scene) -> bpy.types.Collection:
    collection = bpy.data.collections.get(SIM_COLLECTION) or bpy.data.collections.new(SIM_COLLECTION)
    if scene.collection.children.get(collection.name) is None:
        scene.collection.children.link(collection)
    return collection


def _box(name: str, size, centre=(0.0, 0.0, 0.0)) -> bpy.types.Mesh:
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    faces = np.array([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
    return mesh_from_arrays(name, corners * np.asarray(size) + np.asarray(centre), faces)


class _Copies:
    """Finds or makes the simulated copies, replacing their meshes and actions through the guard."""

    def __init__(self, scene: bpy.types.Scene, guard: SceneGuard) -> None:
        self.guard = guard
        self.collection = _collection(scene)
        self.material = material(SIM_COLLECTION, SIM_COLOUR, SIM_ALPHA)
        self.existing = {
            o.real2gym.source_name: o for o in self.collection.objects if o.real2gym.kind == "SIMULATION"
        }
        self.used: set[str] = set()

    def copy(self, name: str, source_name: str, mesh: bpy.types.Mesh | None, parent=None) -> bpy.types.Object:
        """The copy ``source_name`` with a new mesh (an Empty when ``mesh`` is None) and no keys yet."""
        if mesh is not None:
            mesh.materials.append(self.material)
        obj = self.existing.get(source_name)
        if obj is None:
            obj = bpy.data.objects.new(name, mesh)
            obj.real2gym.kind, obj.real2gym.source_name = "SIMULATION", source_name
            self.collection.objects.link(obj)
        else:
            if mesh is not None:
                self.guard.replace_data(obj, mesh)
            self.guard.detach_action(obj)
        obj.parent = parent
        obj.color = self.material.diffuse_color
        obj.show_in_front = True  # drawn over the reconstruction it coincides with, not mixed into it
        self.used.add(source_name)
        return obj

    def remove_unused(self) -> None:
        for source_name, obj in self.existing.items():
            if source_name not in self.used:
                self.guard.unlink(obj)
                self.guard.replace_later([obj, obj.data])


def _key_gripper(copies: _Copies, verification: Verification, frames: np.ndarray, now: int) -> list[str]:
    """The gripper's palm (its origin at the grasp centre, as the MJCF hand body) and fingers."""
    model, qpos = verification.scene.model, verification.record.qpos[: len(frames)]
    spec = GripperSpec()
    _, finger_y, finger_z = spec.finger_size
    palm_z = -(finger_z - FINGERTIP_BELOW + spec.palm_size[2] / 2)
    hand = copies.copy(GRIPPER_NAME, "gripper", _box(GRIPPER_NAME, spec.palm_size, (0, 0, palm_z)))
    hand.rotation_mode = "QUATERNION"
    address = model.joint("gripper_free").qposadr[0]
    write_keyframes(
        hand, "location", frames, qpos[:, address : address + 3], action_name=f"{GRIPPER_NAME} Sim"
    )
    write_keyframes(hand, "rotation_quaternion", frames, qpos[:, address + 3 : address + 7])
    hand.location, hand.rotation_quaternion = (
        qpos[now, address : address + 3],
        qpos[now, address + 3 : address + 7],
    )
    names = [hand.name]
    for side, sign in (("left", 1.0), ("right", -1.0)):
        name = f"{GRIPPER_NAME} {side} finger"
        finger = copies.copy(name, f"gripper {side}", _box(name, spec.finger_size), parent=hand)
        opening = qpos[:, model.joint(NAMES[f"{side}_joint"]).qposadr[0]]
        # The pad's centre in the hand frame: the joint slides it along +-y from the grasp centre.
        location = np.zeros((len(frames), 3))
        location[:, 1] = sign * (opening + finger_y / 2)
        location[:, 2] = FINGERTIP_BELOW - finger_z / 2
        write_keyframes(finger, "location", frames, location, action_name=f"{name} Sim")
        finger.location = location[now]
        names.append(finger.name)
    return names


def _key_contents(copies: _Copies, name: str, radius: float, paths: np.ndarray, frames: np.ndarray,
                  now: int) -> list[str]:  # fmt: skip
    """One small ball per sphere of an object's contents ("<object> contents <i> sim"), keyed per frame."""
    import trimesh

    names = []
    for index in range(paths.shape[1]):
        label = f"{name} contents {index:03d} sim"
        ball = mesh_from_trimesh(label, trimesh.creation.icosphere(subdivisions=1, radius=radius))
        sphere = copies.copy(label, f"{name}.contents.{index:03d}", ball)
        write_keyframes(sphere, "location", frames, paths[:, index], action_name=f"{label} Sim")
        sphere.location = paths[now, index]
        names.append(sphere.name)
    return names


def apply_simulation(
    scene: bpy.types.Scene, verification: Verification, guard: SceneGuard
) -> SimulationImport:
    """Keys the simulated copies and gripper in ``scene`` (see the module's description).

    Call on the main thread.

    Args:
        scene: The scene to build into.
        verification: The verification whose simulation is keyed (a run's, a fix's, :func:`simulate_run`).
        guard: Records every change, to undo them if the caller's work fails.

    Returns:
        What was built.
    """
    geometry, record = verification.geometry, verification.record
    count = max(1, record.frames if record.diverged_frame is None else record.diverged_frame)
    frames = np.arange(count)
    now = int(np.clip(scene.frame_current, 0, count - 1))
    errors = per_frame_errors(geometry, record)
    copies = _Copies(scene, guard)
    names = []
    for obj_geometry in geometry.objects:
        name = obj_geometry.name
        copy = copies.copy(
            f"{name} sim", name, mesh_from_trimesh(f"{name} sim", obj_geometry.fitted.shape.mesh())
        )
        copy.rotation_mode = "QUATERNION"
        write_keyframes(copy, "location", frames, record.positions[name][:count], action_name=f"{name} Sim")
        write_keyframes(copy, "rotation_quaternion", frames, record.quaternions[name][:count])
        write_keyframes(copy, f'["{ERROR_PROPERTY}"]', frames, errors[name][:count])
        # Posed as on the current frame now, as a frame change would pose it.
        copy.location, copy.rotation_quaternion = record.positions[name][now], record.quaternions[name][now]
        copy[ERROR_PROPERTY] = float(errors[name][now])
        names.append(copy.name)
        for part in obj_geometry.parts:  # a door or drawer: its joint keyed from the simulated values
            names += key_simulated_part(copies, verification, name, part, copy, frames, now)
        if name in record.contents:  # what a pour pours: each sphere keyed where it went
            names += _key_contents(
                copies, name, obj_geometry.contents.radius, record.contents[name][:count], frames, now
            )
    gripper = []
    if geometry.gripper is not None and record.qpos is not None:
        gripper = _key_gripper(copies, verification, frames, now)
    copies.remove_unused()
    return SimulationImport(
        names, gripper, count, {n: float(np.max(e[:count], initial=0.0)) for n, e in errors.items()}
    )


def import_simulation(
    scene: bpy.types.Scene,
    out_dir: str | Path,
    masses: dict[str, float] | None = None,
    frictions: dict[str, float] | None = None,
) -> SimulationImport:
    """Simulates a finished run again and keys its copies in ``scene``.

    Args:
        scene: The scene to build into.
        out_dir: The run's output folder (with report.json).
        masses: Object name -> kg overrides (see :func:`simulate_run`).
        frictions: Object name -> friction overrides.

    Returns:
        What was built.

    Raises:
        Real2GymError: report.json is missing, malformed or has no geometry;
            the scene is as it was.
    """
    verification = simulate_run(read_report(out_dir), masses, frictions)
    with SceneGuard(scene) as guard:
        return apply_simulation(scene, verification, guard)
