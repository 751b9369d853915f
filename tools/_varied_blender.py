"""A varied demo's scene in Blender, and its three kinds of Cycles render.

:func:`build` turns a :class:`_varied_scene.Scene` into Blender data: meshes made from
numpy arrays (boxes; cans, cups and plates turned on a lathe; the hand as capsules),
procedural table materials, an area key light that moves and changes strength, the
camera, and keyframes on every frame. :class:`Renderer` then renders

- the colour image (Cycles on the CPU, few samples and OpenImageDenoise, optional
  motion blur and depth of field);
- the *visible* ID image: one sample at the pixel centre (filter width 0.01), no blur,
  every surface an emission of its object's ID (red = ID / 8) and its z-depth (green =
  metres / :data:`DEPTH_RANGE`), written as a 16-bit PNG with the Raw view transform;
- the *full* ID image of up to three objects at once: every surface transparent and
  emitting its object's channel colour, so each channel holds where that object would be
  seen if nothing were in front of it.

Both ID images sample each pixel at its centre, where the colour render's pixel filter
is centred, so the masks align with the colour image pixel for pixel.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from pathlib import Path

import bpy
import cv2
import numpy as np
from _varied_hand import Capsule, hand_parts
from _varied_scene import Item, Scene
from mathutils import Matrix

from real2gym.bridge.animation import write_keyframes

HAND_ID = 7
"""ID of the hand and arm in the visible ID image; objects are 1 to 6, the rest 0."""
DEPTH_RANGE = 4.0
"""Metres that the visible ID image's green channel spans."""
_SEGMENTS = 48


def _lathe(sections: list[list[tuple[float, float]]], segments: int = _SEGMENTS):
    """Vertices and faces of a surface turned about z from (radius, z) polylines.

    Each section gets its own vertices, so shading is smooth within a section and
    sharp between sections. Faces face the right of each section's direction.
    """
    angles = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    vertices, faces = [], []
    for section in sections:
        base = sum(len(v) for v in vertices)
        rows = []
        for radius, z in section:
            if radius < 1e-9:
                rows.append([base + sum(len(r) for r in rows)])
                vertices.append(np.array([[0.0, 0.0, z]]))
            else:
                start = base + sum(len(r) for r in rows)
                rows.append(list(range(start, start + segments)))
                vertices.append(np.c_[radius * ring, np.full(segments, z)])
        for low, high in zip(rows[:-1], rows[1:], strict=True):
            for j in range(segments):
                k = (j + 1) % segments
                if len(low) == 1:
                    faces.append((low[0], high[k], high[j]))
                elif len(high) == 1:
                    faces.append((low[j], low[k], high[0]))
                else:
                    faces.append((low[j], low[k], high[k], high[j]))
    return np.concatenate(vertices), faces


def item_geometry(item: Item):
    """Vertices (m, object frame centred on its bounding box, z up) and faces of an object."""
    sx, sy, h = item.size
    z0, z1 = -h / 2, h / 2
    if item.shape == "box":
        corners = np.array(
            [[x, y, z] for z in (z0, z1) for y in (-sy / 2, sy / 2) for x in (-sx / 2, sx / 2)]
        )
        quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
        vertices = np.concatenate([corners[list(q)] for q in quads])
        return vertices, [tuple(range(4 * i, 4 * i + 4)) for i in range(6)]
    if item.shape == "cup":
        r, inner, bottom = (
            item.params["outer_radius"],
            item.params["inner_radius"],
            item.params["bottom_thickness"],
        )
        sections = [
            [(0, z0), (r, z0)],
            [(r, z0), (r, z1)],
            [(r, z1), (inner, z1)],
            [(inner, z1), (inner, z0 + bottom)],
            [(inner, z0 + bottom), (0, z0 + bottom)],
        ]
        return _lathe(sections)
    r = sx / 2
    bevel = min(0.002, h / 4)
    sections = [
        [(0, z0), (r - bevel, z0)],
        [(r - bevel, z0), (r, z0 + bevel), (r, z1 - bevel), (r - bevel, z1)],
        [(r - bevel, z1), (0, z1)],
    ]
    return _lathe(sections)


def capsule_geometry(part: Capsule, rings: int = 6, segments: int = 20):
    """Vertices (m, hand frame) and faces of one capsule of the hand."""
    axis = part.b - part.a
    length = float(np.linalg.norm(axis))
    angles = np.linspace(-np.pi / 2, np.pi / 2, 2 * rings + 1)
    profile = [
        (part.radius * np.cos(a), part.radius * np.sin(a) + (length if a > 0 else 0.0)) for a in angles
    ]
    profile[rings : rings + 1] = [(part.radius, 0.0), (part.radius, length)]
    vertices, faces = _lathe([profile], segments)
    z = axis / max(length, 1e-9)
    x = np.cross(z, [0.0, 0.0, 1.0] if abs(z[2]) < 0.9 else [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    rotation = np.stack([x, np.cross(z, x), z], axis=1)
    vertices = vertices @ rotation.T + part.a
    if part.squash is not None:
        centre = (part.a + part.b) / 2
        along = (vertices - centre) @ part.squash
        vertices -= (1 - part.squash_factor) * along[:, None] * part.squash
    return vertices, faces


def _mesh(name: str, vertices: np.ndarray, faces, smooth: bool = True) -> bpy.types.Mesh:
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in vertices], [], [tuple(f) for f in faces])
    mesh.validate()
    if smooth:
        mesh.shade_smooth()
    return mesh


def _nodes(material: bpy.types.Material):
    material.use_nodes = True
    tree = material.node_tree
    tree.nodes.clear()
    return tree.nodes, tree.links


def _principled(name: str, colour, roughness: float) -> tuple[bpy.types.Material, object]:
    material = bpy.data.materials.new(name)
    nodes, links = _nodes(material)
    shader = nodes.new("ShaderNodeBsdfPrincipled")
    shader.inputs["Base Color"].default_value = (*colour, 1.0)
    shader.inputs["Roughness"].default_value = roughness
    links.new(shader.outputs[0], nodes.new("ShaderNodeOutputMaterial").inputs[0])
    return material, shader


def _table_material(table: dict) -> bpy.types.Material:
    """Procedural wood, checker, plain white or marble-like table top."""
    material, shader = _principled("table", table["colours"][0], table["roughness"])
    nodes, links = material.node_tree.nodes, material.node_tree.links
    coords = nodes.new("ShaderNodeTexCoord").outputs["Object"]
    ramp = nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].color = (*table["colours"][1], 1.0)
    ramp.color_ramp.elements[1].color = (*table["colours"][0], 1.0)
    kind, scale = table["kind"], table["scale"]
    if kind == "checker":
        texture = nodes.new("ShaderNodeTexChecker")
        texture.inputs["Scale"].default_value = scale
        texture.inputs["Color1"].default_value = (*table["colours"][0], 1.0)
        texture.inputs["Color2"].default_value = (*table["colours"][1], 1.0)
        links.new(coords, texture.inputs["Vector"])
        links.new(texture.outputs["Color"], shader.inputs["Base Color"])
        return material
    if kind == "marble":
        texture = nodes.new("ShaderNodeTexWave")
        texture.inputs["Scale"].default_value = scale / 3
        texture.inputs["Distortion"].default_value = 14.0
        texture.inputs["Detail"].default_value = 5.0
        texture.inputs["Detail Scale"].default_value = 1.5
        ramp.color_ramp.elements[0].position = 0.0
        ramp.color_ramp.elements[1].position = 0.12
    else:  # wood: noise stretched along the grain; white: faint blotches
        texture = nodes.new("ShaderNodeTexNoise")
        texture.inputs["Detail"].default_value = 4.0
        if kind == "wood":
            texture.inputs["Distortion"].default_value = 1.5
            mapping = nodes.new("ShaderNodeMapping")
            mapping.inputs["Scale"].default_value = (scale * 5, scale * 0.25, scale)
            links.new(coords, mapping.inputs["Vector"])
            coords = mapping.outputs["Vector"]
        else:
            texture.inputs["Scale"].default_value = scale
    links.new(coords, texture.inputs["Vector"])
    links.new(texture.outputs["Fac"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], shader.inputs["Base Color"])
    return material


def _id_material(name: str, full: bool) -> bpy.types.Material:
    """The ID override: emission of the object's colour (and, when not ``full``, z-depth in green)."""
    material = bpy.data.materials.new(name)
    nodes, links = _nodes(material)
    info = nodes.new("ShaderNodeObjectInfo")
    emission = nodes.new("ShaderNodeEmission")
    output = nodes.new("ShaderNodeOutputMaterial")
    if full:
        links.new(info.outputs["Color"], emission.inputs["Color"])
        add = nodes.new("ShaderNodeAddShader")
        links.new(nodes.new("ShaderNodeBsdfTransparent").outputs[0], add.inputs[0])
        links.new(emission.outputs[0], add.inputs[1])
        links.new(add.outputs[0], output.inputs[0])
        return material
    split = nodes.new("ShaderNodeSeparateColor")
    links.new(info.outputs["Color"], split.inputs[0])
    depth = nodes.new("ShaderNodeMath")
    depth.operation = "DIVIDE"
    links.new(nodes.new("ShaderNodeCameraData").outputs["View Z Depth"], depth.inputs[0])
    depth.inputs[1].default_value = DEPTH_RANGE
    combine = nodes.new("ShaderNodeCombineColor")
    links.new(split.outputs[0], combine.inputs[0])
    links.new(depth.outputs[0], combine.inputs[1])
    links.new(combine.outputs[0], emission.inputs["Color"])
    links.new(emission.outputs[0], output.inputs[0])
    return material


def _world(name: str, colour, strength: float) -> bpy.types.World:
    world = bpy.data.worlds.new(name)
    world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = (*colour, 1.0)
    background.inputs["Strength"].default_value = strength
    return world


def _link(name: str, data=None) -> bpy.types.Object:
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def pinhole_camera(fovy: float, world_from_camera: np.ndarray) -> bpy.types.Object:
    """A linked camera with a vertical field of view of ``fovy`` degrees (principal point at the image centre)
    at ``world_from_camera`` (4x4, OpenCV axes: x right, y down, z forward)."""
    data = bpy.data.cameras.new("camera")
    data.sensor_fit = "VERTICAL"
    data.sensor_height = 24.0
    data.lens = 12.0 / math.tan(math.radians(fovy) / 2)
    data.clip_start, data.clip_end = 0.02, 20.0
    camera = _link("camera", data)
    matrix = np.array(world_from_camera, float)
    matrix[:3, :3] = matrix[:3, :3] @ np.diag([1.0, -1.0, -1.0])  # OpenCV axes to Blender's
    camera.matrix_world = Matrix([list(row) for row in matrix])
    return camera


def cycles_settings(bl: bpy.types.Scene, width: int, height: int) -> None:
    """Cycles on the CPU at ``width`` x ``height``: few bounces, no caustics, OpenImageDenoise, PNG output."""
    bl.render.engine = "CYCLES"
    bl.cycles.device = "CPU"
    bl.render.resolution_x, bl.render.resolution_y = width, height
    bl.render.resolution_percentage = 100
    bl.render.use_persistent_data = True
    cycles = bl.cycles
    cycles.use_adaptive_sampling = False
    cycles.use_light_tree = False
    cycles.max_bounces, cycles.diffuse_bounces, cycles.glossy_bounces = 2, 1, 1
    cycles.transmission_bounces, cycles.volume_bounces = 0, 0
    cycles.caustics_reflective = cycles.caustics_refractive = False
    cycles.denoiser = "OPENIMAGEDENOISE"
    cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    cycles.denoising_prefilter = "FAST"
    bl.render.image_settings.file_format = "PNG"
    bl.render.image_settings.color_mode = "RGB"


@contextlib.contextmanager
def quiet_stdout(verbose: bool):
    """Sends what Blender prints while rendering (file descriptor 1) to /dev/null."""
    if verbose:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


class Renderer:
    """The Blender scene of one varied demo and its renders.

    Args:
        scene: The scene to build.
        samples: Cycles samples per pixel of the colour render.
    """

    def __init__(self, scene: Scene, samples: int) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.scene = scene
        self.samples = samples
        self.bl = bpy.context.scene
        self.items: list[bpy.types.Object] = []
        self._build()
        self._settings()

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        scene, bl = self.scene, self.bl
        frames = np.arange(scene.frames, dtype=float)
        table = _link(
            "table",
            _mesh(
                "table",
                np.array([[-3, -3, 0], [3, -3, 0], [3, 3, 0], [-3, 3, 0.0]]),
                [(0, 1, 2, 3)],
                smooth=False,
            ),
        )
        table.data.materials.append(_table_material(scene.table))
        back = -np.r_[scene.towards_camera, 0.0] * 1.2
        side = np.r_[-scene.towards_camera[1], scene.towards_camera[0], 0.0] * 3
        wall_corners = np.array([back - side, back + side, back + side + [0, 0, 2], back - side + [0, 0, 2]])
        wall = _link("wall", _mesh("wall", wall_corners, [(0, 1, 2, 3)], smooth=False))
        wall.data.materials.append(_principled("wall", scene.wall_colour, 0.8)[0])
        self.background = [table, wall]

        poses = scene.item_poses()
        for index, item in enumerate(scene.items):
            vertices, faces = item_geometry(item)
            obj = _link(item.name, _mesh(item.name, vertices, faces, smooth=item.shape != "box"))
            obj.data.materials.append(_principled(item.name, item.colour, item.roughness)[0])
            obj.rotation_mode = "XYZ"
            yaw = np.unwrap(np.arctan2(poses[:, index, 1, 0], poses[:, index, 0, 0]))
            write_keyframes(obj, "location", frames, poses[:, index, :3, 3])
            write_keyframes(obj, "rotation_euler", frames, np.c_[np.zeros((len(frames), 2)), yaw])
            self.items.append(obj)

        self.hand = _link("hand")
        hands = scene.hand_poses()
        yaw = np.unwrap(np.arctan2(hands[:, 1, 0], hands[:, 0, 0]))
        write_keyframes(self.hand, "location", frames, hands[:, :3, 3])
        write_keyframes(self.hand, "rotation_euler", frames, np.c_[np.zeros((len(frames), 2)), yaw])
        self.skin = _principled("skin", scene.skin, 0.55)[0]
        self.sleeve = _principled("sleeve", scene.sleeve, 0.85)[0]
        self.hand_parts: list[bpy.types.Object] = []
        self.set_finger_reach(scene.finger_reach)

        light_data = bpy.data.lights.new("key", "AREA")
        light_data.size = scene.light["size"]
        light = _link("key", light_data)
        share = frames[:, None] / max(scene.frames - 1, 1)
        write_keyframes(
            light, "location", frames, (1 - share) * scene.light["start"] + share * scene.light["end"]
        )
        write_keyframes(light_data, "energy", frames, scene.light["energy"])
        aim = light.constraints.new("TRACK_TO")
        aim.target = _link("light_target")
        aim.track_axis, aim.up_axis = "TRACK_NEGATIVE_Z", "UP_Y"

        self.world = _world("room", (0.85, 0.82, 0.78), 0.25)
        write_keyframes(
            self.world.node_tree,
            'nodes["Background"].inputs[1].default_value',
            frames,
            scene.light["ambient"],
        )
        self.black = _world("black", (0.0, 0.0, 0.0), 0.0)
        bl.world = self.world

        cam = scene.camera
        camera = pinhole_camera(cam.fovy, cam.world_from_camera)
        if scene.fstop is not None:
            camera.data.dof.focus_distance = cam.focus_distance
            camera.data.dof.aperture_fstop = scene.fstop
        bl.camera = camera
        self.camera = camera
        self.id_visible = _id_material("id_visible", full=False)
        self.id_full = _id_material("id_full", full=True)

    def set_finger_reach(self, reach: float) -> None:
        """Rebuilds the hand's meshes with the fingers reaching ``reach`` metres down the object."""
        for obj in self.hand_parts:
            mesh = obj.data
            bpy.data.objects.remove(obj)
            bpy.data.meshes.remove(mesh)
        self.hand_parts = []
        parts = hand_parts(self.scene, reach)
        for material in ("skin", "sleeve"):
            pieces = [capsule_geometry(p) for p in parts if p.material == material]
            offsets = np.cumsum([0] + [len(v) for v, _ in pieces])
            vertices = np.concatenate([v for v, _ in pieces])
            faces = [
                tuple(i + offset for i in face)
                for (_, fs), offset in zip(pieces, offsets, strict=False)
                for face in fs
            ]
            obj = _link(f"hand_{material}", _mesh(f"hand_{material}", vertices, faces))
            obj.data.materials.append(self.skin if material == "skin" else self.sleeve)
            obj.parent = self.hand
            self.hand_parts.append(obj)

    def _settings(self) -> None:
        cycles_settings(self.bl, self.scene.camera.width, self.scene.camera.height)
        self.bl.frame_start, self.bl.frame_end = 0, self.scene.frames - 1

    # -- rendering ----------------------------------------------------------------------------

    def _render(self, frame: int, path: Path) -> None:
        self.bl.frame_set(frame)
        self.bl.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)

    def colour_mode(self) -> None:
        """Photographic settings: lit materials, samples, denoiser, blur and depth of field."""
        bl, scene = self.bl, self.scene
        bl.view_layers[0].material_override = None
        bl.world = self.world
        for obj in [*self.background, *self.hand_parts, *self.items]:
            obj.hide_render = False
        bl.cycles.samples = self.samples
        bl.cycles.use_denoising = True
        bl.cycles.filter_width = 1.5
        bl.cycles.transparent_max_bounces = 4
        bl.render.use_motion_blur = scene.motion_blur > 0
        bl.render.motion_blur_shutter = max(scene.motion_blur, 0.01)
        self.camera.data.dof.use_dof = scene.fstop is not None
        bl.view_settings.view_transform = "AgX"
        bl.view_settings.look = "AgX - Medium High Contrast"
        bl.render.image_settings.color_depth = "8"

    def _id_mode(self, full: bool) -> None:
        bl = self.bl
        bl.view_layers[0].material_override = self.id_full if full else self.id_visible
        bl.world = self.black
        bl.cycles.samples = 1
        bl.cycles.use_denoising = False
        bl.cycles.filter_width = 0.01
        bl.cycles.transparent_max_bounces = 32
        bl.render.use_motion_blur = False
        self.camera.data.dof.use_dof = False
        bl.view_settings.view_transform = "Raw"
        bl.view_settings.look = "None"
        bl.render.image_settings.color_depth = "16"
        for obj in [*self.background, *self.hand_parts]:
            obj.hide_render = full

    def render_colour(self, frame: int, path: Path) -> None:
        """Writes the colour image of ``frame`` (8-bit sRGB PNG); call :meth:`colour_mode` first."""
        self._render(frame, path)

    def visible_mode(self) -> None:
        """Settings for :meth:`render_visible`."""
        self._id_mode(full=False)
        for index, obj in enumerate(self.items):
            obj.color = ((index + 1) / 8, 0.0, 0.0, 1.0)
        for obj in self.hand_parts:
            obj.color = (HAND_ID / 8, 0.0, 0.0, 1.0)
        for obj in self.background:
            obj.color = (0.0, 0.0, 0.0, 1.0)

    def render_visible(self, frame: int, path: Path) -> tuple[np.ndarray, np.ndarray]:
        """Renders the visible ID image of ``frame``; call :meth:`visible_mode` first.

        Returns:
            Per pixel the ID seen there (``HxW`` uint8: 0 table, wall or nothing; 1 + the
            object's index; :data:`HAND_ID`), and its z-depth (``HxW`` float32 metres, 0
            where nothing is seen).
        """
        self._render(frame, path)
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED).astype(np.float64) / 65535.0
        ids = np.rint(image[..., 2] * 8).astype(np.uint8)
        return ids, (image[..., 1] * DEPTH_RANGE).astype(np.float32)

    def full_mode(self, group: list[int]) -> None:
        """Settings for :meth:`render_full` of the objects ``group`` (at most three indices)."""
        self._id_mode(full=True)
        channels = [(1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)]
        for index, obj in enumerate(self.items):
            obj.color = channels[group.index(index)] if index in group else (0.0, 0.0, 0.0, 1.0)

    def render_full(self, frame: int, path: Path, group: list[int]) -> dict[int, np.ndarray]:
        """Where each object of ``group`` would be seen with nothing in front of it; ``HxW`` bool each."""
        self._render(frame, path)
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        return {index: image[..., 2 - slot] > 32768 for slot, index in enumerate(group)}
