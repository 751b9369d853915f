"""A simulated MuJoCo demo filmed again with Blender's Cycles: the generators' second renderer.

The simulation is the generator's own; only the filming differs. Every geom MuJoCo would draw becomes a
Blender mesh of the same shape (boxes, cylinders, capsules, spheres, ellipsoids, planes and meshes), set to
the geom's simulated pose on each frame. The looks are the caller's: a material per geom, an area key light
that moves and changes strength, an ambient world.

Masks and depth come from the same Blender scene (``_varied_blender``'s ID renders: one sample at each
pixel's centre): the visible ID image gives each pixel's object and z-depth, the full ID image where each
object would be seen with nothing in front of it (three objects a render, one per colour channel).
Used by tools/_articulated_cycles.py and, through ``_demo_film.DemoFilm``, by every task generator's
``--renderer cycles``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bpy
import cv2
import mujoco
import numpy as np
from _demo_render import FrameImages
from _varied_blender import (
    DEPTH_RANGE,
    _id_material,
    _lathe,
    _link,
    _mesh,
    _world,
    cycles_settings,
    pinhole_camera,
)
from _varied_scene import linear
from mathutils import Matrix

_SPHERE_RINGS = 8
_CHANNELS = ((1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0))
"""The full ID image's colour per object of a render; the PNG stores them as B, G, R."""


@dataclass
class Light:
    """The key light and the ambience, per frame.

    Attributes:
        start: Where the area light starts (world, m).
        end: Where it ends; it moves evenly between them.
        target: The point it faces (world, m).
        size: The area light's side (m).
        energy: Its power per frame (W).
        ambient: The world's strength per frame.
    """

    start: np.ndarray
    end: np.ndarray
    target: np.ndarray
    size: float
    energy: np.ndarray
    ambient: np.ndarray


def draw_table(rng: np.random.Generator) -> dict:
    """A table top as ``_varied_blender.table_material`` draws it: wood, checker, plain white or marble."""
    kind = str(rng.choice(["wood", "checker", "white", "marble"], p=[0.35, 0.25, 0.15, 0.25]))
    colours = {
        "wood": [linear((0.55, 0.36, 0.2)), linear((0.36, 0.21, 0.11))],
        "checker": [linear((0.85, 0.85, 0.82)), linear((0.25, 0.35, 0.6))],
        "white": [linear((0.92, 0.92, 0.9)), linear((0.88, 0.88, 0.86))],
        "marble": [linear((0.9, 0.9, 0.88)), linear((0.45, 0.45, 0.48))],
    }[kind]
    return {"kind": kind, "colours": colours, "scale": float(rng.uniform(6, 14)),
            "roughness": float(rng.uniform(0.3, 0.6))}  # fmt: skip


def draw_light(rng: np.random.Generator, middle: np.ndarray, frames: int) -> Light:
    """An area light circling above ``middle`` (world, m) through the video, with a brightness change on
    60 % of the draws (a cloud, a lamp switched, an auto-exposure jump)."""
    start_angle = rng.uniform(0, 2 * np.pi)
    swing = rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0])
    height, radius = rng.uniform(0.9, 1.4), rng.uniform(0.4, 0.8)
    energy = np.full(frames, rng.uniform(30, 50) * height**2)
    ambient = np.full(frames, rng.uniform(0.1, 0.25))
    if rng.random() < 0.6:
        factor = rng.uniform(0.45, 0.7) if rng.random() < 0.5 else rng.uniform(1.4, 2.0)
        at, ramp = rng.uniform(0.25, 0.75) * frames, max(1.0, rng.uniform(0.05, 0.2) * frames)
        curve = 1 + (factor - 1) * np.clip((np.arange(frames) - at) / ramp, 0, 1)
        energy, ambient = energy * curve / max(factor, 1.0), ambient * curve / max(factor, 1.0)
    middle = np.asarray(middle, float)
    return Light(
        start=middle + [radius * np.cos(start_angle), radius * np.sin(start_angle), height],
        end=middle + [radius * np.cos(start_angle + swing), radius * np.sin(start_angle + swing), height],
        target=middle,
        size=float(rng.uniform(0.3, 1.0)),
        energy=energy,
        ambient=ambient,
    )


def geom_shape(model: mujoco.MjModel, geom: int) -> tuple[np.ndarray, list[tuple[int, ...]], bool]:
    """Vertices (geom frame, m), faces and whether to shade smoothly, of one of the model's geoms."""
    kind, size = mujoco.mjtGeom(int(model.geom_type[geom])), model.geom_size[geom]
    if kind == mujoco.mjtGeom.mjGEOM_PLANE:
        half = np.r_[size[:2] if size[0] > 0 else [5, 5], 0]
        corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]) * half
        return corners, [(0, 1, 2, 3)], False
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        signs = np.array([[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], float)
        quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
        corners = signs * size
        return np.concatenate([corners[list(q)] for q in quads]), [tuple(range(4 * i, 4 * i + 4)) for i in range(6)], False  # fmt: skip
    if kind == mujoco.mjtGeom.mjGEOM_MESH:
        mesh = model.geom_dataid[geom]
        start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        first, faces = model.mesh_faceadr[mesh], model.mesh_facenum[mesh]
        vertices = model.mesh_vert[start : start + count].astype(float)
        return vertices, [tuple(f) for f in model.mesh_face[first : first + faces]], False
    r = float(size[0])
    half = float(size[1]) if kind in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE) else 0.0
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        sections = [[(0, -half), (r, -half)], [(r, -half), (r, half)], [(r, half), (0, half)]]
        return *_lathe(sections, 32), True
    # capsule, sphere and ellipsoid: a sphere split at its equator and pulled apart by the capsule's length
    angles = np.linspace(-np.pi / 2, np.pi / 2, 2 * _SPHERE_RINGS + 1)
    profile = [(r * np.cos(a), r * np.sin(a) + (half if a >= 0 else -half)) for a in angles]
    profile[_SPHERE_RINGS:_SPHERE_RINGS + 1] = [(r, -half), (r, half)]  # fmt: skip
    vertices, faces = _lathe([profile], 32)
    if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        vertices = vertices / r * size
    return vertices, faces, True


def _matrix(position: np.ndarray, rotation: np.ndarray) -> Matrix:
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = np.reshape(rotation, (3, 3)), position
    return Matrix([list(row) for row in matrix])


class GeomFilm:
    """A compiled MuJoCo scene's shown geoms as Blender data, and their colour and ID renders.

    Args:
        model: The compiled scene.
        geoms: The geoms to show (those MuJoCo's own film draws).
        ids: Each shown geom's ID in the visible ID image: 1 + its object's index, ``_varied_blender.HAND_ID``
            for the hand, 0 for the rest (the table, a wall, a poured cup's contents).
        materials: Called once Blender's scene is emptied: the function (geom, its name) -> its Blender
            material.
        world_from_camera: The camera's pose (4x4, OpenCV axes).
        fovy: Vertical field of view (deg).
        size: Image (width, height) in pixels.
        light: The key light and ambience.
        samples: Cycles samples per pixel of the colour render (denoised).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        geoms: list[int],
        ids: dict[int, int],
        materials: Callable[[], Callable[[int, str], bpy.types.Material]],
        world_from_camera: np.ndarray,
        fovy: float,
        size: tuple[int, int],
        light: Light,
        samples: int,
    ) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.bl = bpy.context.scene
        material = materials()
        self.geoms, self.ids, self.light, self.samples = geoms, ids, light, samples
        self.moving = [g for g in geoms if model.geom_bodyid[g] != 0]
        self.objects: dict[int, bpy.types.Object] = {}
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        for geom in geoms:
            vertices, faces, smooth = geom_shape(model, geom)
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or f"geom{geom}"
            obj = _link(name, _mesh(name, vertices, faces, smooth))
            obj.data.materials.append(material(geom, name))
            obj.matrix_world = _matrix(data.geom_xpos[geom], data.geom_xmat[geom])  # moving ones: per frame
            self.objects[geom] = obj
        key = bpy.data.lights.new("key", "AREA")
        key.size = light.size
        self.key = _link("key", key)
        aim = self.key.constraints.new("TRACK_TO")
        target = _link("light_target")
        target.location = tuple(light.target)
        aim.target = target
        aim.track_axis, aim.up_axis = "TRACK_NEGATIVE_Z", "UP_Y"
        self.world = _world("room", (0.85, 0.82, 0.78), 0.2)
        self.black = _world("black", (0.0, 0.0, 0.0), 0.0)
        self.bl.camera = pinhole_camera(fovy, world_from_camera)
        self.id_visible = _id_material("id_visible", full=False)
        self.id_full = _id_material("id_full", full=True)
        cycles_settings(self.bl, *size)

    def _set_frame(self, frame: int, state: tuple[np.ndarray, np.ndarray]) -> None:
        """Puts every moving geom where the simulation had it; the light and ambience of ``frame``."""
        xpos, xmat = state
        for geom in self.moving:
            self.objects[geom].matrix_world = _matrix(xpos[geom], xmat[geom])
        light, share = self.light, frame / max(len(self.light.energy) - 1, 1)
        self.key.location = tuple((1 - share) * light.start + share * light.end)
        self.key.data.energy = float(light.energy[frame])
        self.world.node_tree.nodes["Background"].inputs[1].default_value = float(light.ambient[frame])

    def _render(self, path: Path) -> np.ndarray:
        self.bl.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)
        return cv2.imread(str(path), cv2.IMREAD_UNCHANGED)

    def _mode(self, override, world, samples: int, filter_width: float, transform: str, depth: str) -> None:
        bl = self.bl
        bl.view_layers[0].material_override = override
        bl.world = world
        bl.cycles.samples = samples
        bl.cycles.use_denoising = override is None
        bl.cycles.filter_width = filter_width
        bl.cycles.transparent_max_bounces = 4 if override is None else 32
        bl.view_settings.view_transform = transform
        bl.view_settings.look = "AgX - Medium High Contrast" if transform == "AgX" else "None"
        bl.render.image_settings.color_depth = depth

    def film(
        self, states: list[tuple[np.ndarray, np.ndarray]], work: Path, names: list[str]
    ) -> list[FrameImages]:
        """Renders every frame: colour, then the visible ID images, then the full ones.

        Args:
            states: Per frame, the simulation's ``geom_xpos`` (ngeom x 3, world, m) and ``geom_xmat``
                (ngeom x 9).
            work: A folder for the renders.
            names: The objects' names, in the order of their IDs (ID 1 first).

        Returns:
            Per frame the clean colour render (RGB), z-depth (m, 0 where nothing), each object's visible mask
            and its pixel count with nothing in front of it.
        """
        self._mode(None, self.world, self.samples, 1.5, "AgX", "8")
        for obj in self.objects.values():
            obj.hide_render = False
        colours = []
        for frame, state in enumerate(states):
            self._set_frame(frame, state)
            colours.append(cv2.cvtColor(self._render(work / "colour.png"), cv2.COLOR_BGR2RGB))
        self._mode(self.id_visible, self.black, 1, 0.01, "Raw", "16")
        for geom, obj in self.objects.items():
            obj.color = (self.ids[geom] / 8, 0.0, 0.0, 1.0)
        seen = []
        for frame, state in enumerate(states):
            self._set_frame(frame, state)
            image = self._render(work / "visible.png").astype(np.float64) / 65535.0
            seen.append((np.rint(image[..., 2] * 8).astype(np.uint8), (image[..., 1] * DEPTH_RANGE).astype(np.float32)))  # fmt: skip
        self._mode(self.id_full, self.black, 1, 0.01, "Raw", "16")
        alone: list[dict[str, int]] = [{} for _ in states]
        for first in range(0, len(names), 3):
            group = list(range(first + 1, min(first + 3, len(names)) + 1))  # IDs filmed in this pass
            for geom, obj in self.objects.items():
                obj.hide_render = self.ids[geom] not in group
                obj.color = (
                    _CHANNELS[group.index(self.ids[geom])] if self.ids[geom] in group else (0, 0, 0, 1.0)
                )
            for frame, state in enumerate(states):
                self._set_frame(frame, state)
                full = self._render(work / "full.png")
                for slot, object_id in enumerate(group):
                    alone[frame][names[object_id - 1]] = int((full[..., 2 - slot] > 32768).sum())
        frames = []
        for frame, (ids, depth) in enumerate(seen):
            masks = {name: ids == index + 1 for index, name in enumerate(names)}
            frames.append(FrameImages(colours[frame], depth, masks, alone[frame]))
        return frames
