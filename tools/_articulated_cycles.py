"""An articulated demo filmed with Blender's Cycles: the second renderer of ``make_articulated_demo.py``.

The simulation is the same MuJoCo one (``_articulated_sim``); only the filming differs. Every
geom MuJoCo would draw becomes a Blender mesh of the same shape (boxes, cylinders, capsules,
spheres, planes and the cup's mesh), set to the geom's simulated pose on each frame. The looks
are drawn from the seed and are not MuJoCo's: a procedural table top (wood, checker, plain white
or marble, as in the varied set), a body in white, black, steel or wood with its door in the same
or a darker finish, glass-dark windows, a moving area light with a brightness change, an ambient
world, and phone-like noise and JPEG compression on every frame.

Masks and depth come from the same Blender scene (``_varied_blender``'s ID renders: one sample at
each pixel's centre): the visible ID image gives each pixel's object and z-depth, the full ID image
where the body, its part and the cup would be seen with nothing in front of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy
import cv2
import mujoco
import numpy as np
from _articulated_scene import GROUP_BODY, GROUP_CUP, GROUP_PART, ArticulatedLayout
from _demo_render import FrameImages
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER
from _varied_blender import (
    DEPTH_RANGE,
    HAND_ID,
    _id_material,
    _lathe,
    _link,
    _mesh,
    _principled,
    _table_material,
    _world,
    cycles_settings,
    pinhole_camera,
)
from _varied_scene import linear
from mathutils import Matrix

FINISHES = {
    # body finish: (body sRGB, roughness, door darker by)
    "white": ((0.9, 0.9, 0.88), 0.35, 0.0),
    "black": ((0.07, 0.07, 0.08), 0.25, 0.0),
    "steel": ((0.62, 0.63, 0.64), 0.3, 0.15),
    "wood": ((0.55, 0.37, 0.22), 0.6, 0.1),
    "cream": ((0.85, 0.8, 0.66), 0.45, 0.05),
}
CUP_SRGB = ((0.8, 0.15, 0.12), (0.15, 0.45, 0.8), (0.95, 0.75, 0.15), (0.2, 0.6, 0.3), (0.93, 0.93, 0.9))
IDS = {GROUP_BODY: 1, GROUP_PART: 2, GROUP_CUP: 3, GROUP_GRIPPER: HAND_ID}
"""Geom group -> its ID in the visible ID image (the gripper counts as the hand)."""
_SPHERE_RINGS = 8


@dataclass
class Looks:
    """Everything the seed decides about how a Cycles articulated demo looks (colours linear RGB).

    Attributes:
        table: The table top as ``_varied_blender`` draws it (``kind``, ``colours``, ``scale``,
            ``roughness``).
        wall: Wall colour.
        finish: Key of :data:`FINISHES`.
        cup: Cup colour.
        light: ``start``/``end`` (world, m), ``size`` (m), ``energy`` (W per frame), ``ambient``
            (world strength per frame).
        noise_sigma: Read noise, 8-bit levels.
        jpeg_quality: Per frame, 35-80.
    """

    table: dict
    wall: tuple
    finish: str
    cup: tuple
    light: dict
    noise_sigma: float
    jpeg_quality: np.ndarray


def draw_looks(rng: np.random.Generator, layout: ArticulatedLayout, frames: int) -> Looks:
    """The looks of one demo, drawn from ``rng``; the light circles above the body's middle."""
    kind = str(rng.choice(["wood", "checker", "white", "marble"], p=[0.35, 0.25, 0.15, 0.25]))
    table_colours = {
        "wood": [linear((0.55, 0.36, 0.2)), linear((0.36, 0.21, 0.11))],
        "checker": [linear((0.85, 0.85, 0.82)), linear((0.25, 0.35, 0.6))],
        "white": [linear((0.92, 0.92, 0.9)), linear((0.88, 0.88, 0.86))],
        "marble": [linear((0.9, 0.9, 0.88)), linear((0.45, 0.45, 0.48))],
    }[kind]
    table = {"kind": kind, "colours": table_colours, "scale": float(rng.uniform(6, 14)),
             "roughness": float(rng.uniform(0.3, 0.6))}  # fmt: skip
    start_angle = rng.uniform(0, 2 * np.pi)
    swing = rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0])
    height, radius = rng.uniform(0.9, 1.4), rng.uniform(0.4, 0.8)
    energy = np.full(frames, rng.uniform(30, 50) * height**2)
    ambient = np.full(frames, rng.uniform(0.1, 0.25))
    if rng.random() < 0.6:  # a cloud, a lamp switched, an auto-exposure jump
        factor = rng.uniform(0.45, 0.7) if rng.random() < 0.5 else rng.uniform(1.4, 2.0)
        at, ramp = rng.uniform(0.25, 0.75) * frames, max(1.0, rng.uniform(0.05, 0.2) * frames)
        curve = 1 + (factor - 1) * np.clip((np.arange(frames) - at) / ramp, 0, 1)
        energy, ambient = energy * curve / max(factor, 1.0), ambient * curve / max(factor, 1.0)
    middle = layout.origin + [0.0, 0.0, layout.size[2] / 2]
    light = {
        "start": middle + [radius * np.cos(start_angle), radius * np.sin(start_angle), height],
        "end": middle + [radius * np.cos(start_angle + swing), radius * np.sin(start_angle + swing), height],
        "target": middle,
        "size": float(rng.uniform(0.3, 1.0)),
        "energy": energy,
        "ambient": ambient,
    }
    return Looks(
        table=table,
        wall=linear(rng.uniform(0.45, 0.85, 3)),
        finish=str(rng.choice(list(FINISHES))),
        cup=linear(CUP_SRGB[rng.integers(len(CUP_SRGB))]),
        light=light,
        noise_sigma=float(rng.uniform(2, 5)),
        jpeg_quality=rng.integers(35, 81, frames),
    )


def geom_shape(model: mujoco.MjModel, geom: int) -> tuple[np.ndarray, list[tuple[int, ...]], bool]:
    """Vertices (geom frame, m), faces and whether to shade smoothly, of one of the model's geoms."""
    kind, size = mujoco.mjtGeom(int(model.geom_type[geom])), model.geom_size[geom]
    if kind in (mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_PLANE):
        half = (
            size.copy()
            if kind == mujoco.mjtGeom.mjGEOM_BOX
            else np.r_[size[:2] if size[0] > 0 else [5, 5], 0]
        )
        if kind == mujoco.mjtGeom.mjGEOM_PLANE:
            corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]) * half
            return corners, [(0, 1, 2, 3)], False
        signs = np.array([[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], float)
        quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
        corners = signs * half
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
    matrix[:3, :3], matrix[:3, 3] = rotation.reshape(3, 3), position
    return Matrix([list(row) for row in matrix])


class CyclesFilm:
    """The articulated scene as Blender data, and its colour and ID renders.

    Args:
        model: The compiled scene (``_articulated_model.build_model``).
        layout: The scene's layout (camera, body placement).
        looks: Colours, table, light and noise (:func:`draw_looks`).
        samples: Cycles samples per pixel of the colour render (denoised).
    """

    def __init__(self, model: mujoco.MjModel, layout: ArticulatedLayout, looks: Looks, samples: int) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.bl = bpy.context.scene
        self.layout, self.looks, self.samples = layout, looks, samples
        shown = (GROUP_ENVIRONMENT, GROUP_GRIPPER, *IDS)
        self.geoms = [
            g for g in range(model.ngeom) if model.geom_group[g] in shown and model.geom_rgba[g, 3] > 0
        ]
        self.moving = [g for g in self.geoms if model.geom_bodyid[g] != 0]
        self.objects: dict[int, bpy.types.Object] = {}
        materials = self._materials(model)
        for geom in self.geoms:
            vertices, faces, smooth = geom_shape(model, geom)
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or f"geom{geom}"
            obj = _link(name, _mesh(name, vertices, faces, smooth))
            obj.data.materials.append(materials(geom, name))
            obj.matrix_world = _matrix(model.geom_pos[geom], np.eye(3))  # placed per frame by set_state
            obj["group"] = int(model.geom_group[geom])
            self.objects[geom] = obj
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        for geom in self.geoms:
            self.objects[geom].matrix_world = _matrix(data.geom_xpos[geom], data.geom_xmat[geom])
        self._light()
        self._camera()
        self._settings()

    def _materials(self, model: mujoco.MjModel):
        """A function (geom, name) -> its material, the seed's looks by what the geom is."""
        looks = self.looks
        colour, roughness, darker = FINISHES[looks.finish]
        body = _principled("body", linear(colour), roughness)[0]
        door = _principled("door", linear(np.asarray(colour) * (1 - darker)), roughness)[0]
        made = {
            "table": _table_material(looks.table),
            "floor": _principled("floor", linear((0.3, 0.3, 0.32)), 0.8)[0],
            "wall": _principled("wall", looks.wall, 0.8)[0],
            "glass": _principled("glass", linear((0.05, 0.06, 0.07)), 0.08)[0],
            "panel": _principled("panel", linear((0.12, 0.12, 0.13)), 0.3)[0],
            "metal": _principled("metal", linear((0.75, 0.75, 0.77)), 0.2)[0],
            "cup": _principled("cup", looks.cup, 0.4)[0],
        }
        grey: dict[tuple, bpy.types.Material] = {}

        def material(geom: int, name: str) -> bpy.types.Material:
            group = model.geom_group[geom]
            for key in ("table", "floor", "wall", "window", "panel", "handle"):
                if name == key or name.endswith(f"_{key}") or f"_{key}_" in name:
                    return made[{"window": "glass", "handle": "metal"}.get(key, key)]
            if group == GROUP_CUP:
                return made["cup"]
            if group == GROUP_PART:
                return door
            if group == GROUP_BODY:
                return body
            rgba = tuple(np.round(model.geom_rgba[geom, :3], 2))  # the gripper keeps its own greys
            if rgba not in grey:
                grey[rgba] = _principled(f"grey{len(grey)}", rgba, 0.4)[0]
            return grey[rgba]

        return material

    def _light(self) -> None:
        light = self.looks.light
        data = bpy.data.lights.new("key", "AREA")
        data.size = light["size"]
        self.key = _link("key", data)
        aim = self.key.constraints.new("TRACK_TO")
        target = _link("light_target")
        target.location = tuple(light["target"])
        aim.target = target
        aim.track_axis, aim.up_axis = "TRACK_NEGATIVE_Z", "UP_Y"
        self.world = _world("room", (0.85, 0.82, 0.78), 0.2)
        self.black = _world("black", (0.0, 0.0, 0.0), 0.0)

    def _camera(self) -> None:
        layout = self.layout
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = layout.camera_rot, layout.camera_pos
        camera = pinhole_camera(layout.fovy, pose)
        self.bl.camera = camera
        self.id_visible = _id_material("id_visible", full=False)
        self.id_full = _id_material("id_full", full=True)

    def _settings(self) -> None:
        cycles_settings(self.bl, self.layout.width, self.layout.height)

    def _set_frame(self, frame: int, state: tuple[np.ndarray, np.ndarray]) -> None:
        """Puts every moving geom where the simulation had it; the light and ambience of ``frame``."""
        xpos, xmat = state
        for geom in self.moving:
            self.objects[geom].matrix_world = _matrix(xpos[geom], xmat[geom])
        light, share = self.looks.light, frame / max(len(self.looks.jpeg_quality) - 1, 1)
        self.key.location = tuple((1 - share) * light["start"] + share * light["end"])
        self.key.data.energy = float(light["energy"][frame])
        self.world.node_tree.nodes["Background"].inputs[1].default_value = float(light["ambient"][frame])

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
        self, states: list[tuple[np.ndarray, np.ndarray]], work: Path, names: dict[int, str]
    ) -> list[FrameImages]:
        """Renders every frame: colour, then the visible ID images, then the full ones.

        Args:
            states: Per frame, the simulation's ``geom_xpos`` (ngeom x 3, world, m) and ``geom_xmat``
                (ngeom x 9).
            work: A folder for the renders.
            names: Geom group (``GROUP_BODY``, ``GROUP_PART``, ``GROUP_CUP``) -> its object's name.

        Returns:
            Per frame the clean colour render (RGB), z-depth (m, 0 where nothing), each object's
            visible mask and its pixel count with nothing in front of it.
        """
        self._mode(None, self.world, self.samples, 1.5, "AgX", "8")
        for obj in self.objects.values():
            obj.hide_render = False
        colours = []
        for frame, state in enumerate(states):
            self._set_frame(frame, state)
            colours.append(cv2.cvtColor(self._render(work / "colour.png"), cv2.COLOR_BGR2RGB))
        self._mode(self.id_visible, self.black, 1, 0.01, "Raw", "16")
        for obj in self.objects.values():
            obj.color = (IDS.get(obj["group"], 0) / 8, 0.0, 0.0, 1.0)
        seen = []
        for frame, state in enumerate(states):
            self._set_frame(frame, state)
            image = self._render(work / "visible.png").astype(np.float64) / 65535.0
            seen.append(
                (
                    np.rint(image[..., 2] * 8).astype(np.uint8),
                    (image[..., 1] * DEPTH_RANGE).astype(np.float32),
                )
            )
        self._mode(self.id_full, self.black, 1, 0.01, "Raw", "16")
        channels = {GROUP_BODY: (1.0, 0, 0, 1), GROUP_PART: (0, 1.0, 0, 1), GROUP_CUP: (0, 0, 1.0, 1)}
        for obj in self.objects.values():
            obj.hide_render = obj["group"] not in channels
            obj.color = channels.get(obj["group"], (0.0, 0.0, 0.0, 1.0))
        frames = []
        for frame, state in enumerate(states):
            self._set_frame(frame, state)
            full = self._render(work / "full.png")
            ids, depth = seen[frame]
            masks = {name: ids == IDS[group] for group, name in names.items()}
            slot = {GROUP_BODY: 2, GROUP_PART: 1, GROUP_CUP: 0}  # BGR
            alone = {name: int((full[..., slot[group]] > 32768).sum()) for group, name in names.items()}
            frames.append(FrameImages(colours[frame], depth, masks, alone))
        return frames
