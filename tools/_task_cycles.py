"""A task generator's simulated demo filmed with Blender's Cycles (``--renderer cycles``).

The simulation and its truth are the generator's own; ``_cycles_film.GeomFilm`` films the geoms MuJoCo
would draw. The looks are drawn from the seed and are not MuJoCo's: a procedural table top (wood, checker,
plain white or marble), the wall painted, each object in its own colour and gloss from a palette, a poured
cup's contents in another, the gripper in its own greys, a moving area light with a brightness change on
most seeds, an ambient world, and phone-like read noise and JPEG compression (quality 35-80) on every frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy
import mujoco
import numpy as np
from _cycles_film import GeomFilm, Light, draw_light, draw_table
from _demo_render import FrameImages
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER
from _varied_blender import HAND_ID, _principled, _table_material
from _varied_scene import linear

PALETTE_SRGB = (
    (0.80, 0.12, 0.10),
    (0.15, 0.55, 0.20),
    (0.12, 0.30, 0.75),
    (0.95, 0.78, 0.12),
    (0.95, 0.45, 0.08),
    (0.50, 0.20, 0.60),
    (0.10, 0.55, 0.55),
    (0.45, 0.28, 0.15),
    (0.90, 0.90, 0.88),
    (0.08, 0.08, 0.09),
    (0.85, 0.30, 0.45),
)
"""The objects' and contents' colours (sRGB), each drawn once a demo."""


@dataclass
class TaskLooks:
    """What the seed decides about how a Cycles task demo looks (colours linear RGB).

    Attributes:
        table: The table top (``_cycles_film.draw_table``).
        wall: The wall's paint.
        objects: Per object (in the order of their IDs), its colour and roughness.
        contents: The colour of a poured cup's contents.
        light: The key light and ambience.
        noise_sigma: Read noise, 8-bit levels.
        jpeg_quality: Per frame, 35-80.
    """

    table: dict
    wall: tuple
    objects: list[tuple[tuple, float]]
    contents: tuple
    light: Light
    noise_sigma: float
    jpeg_quality: np.ndarray


def draw_task_looks(rng: np.random.Generator, count: int, middle: np.ndarray, frames: int) -> TaskLooks:
    """The looks of a demo of ``count`` objects whose light circles above ``middle`` (world, m)."""
    table = draw_table(rng)
    light = draw_light(rng, middle, frames)
    colours = rng.choice(len(PALETTE_SRGB), count + 1, replace=False)
    return TaskLooks(
        table=table,
        wall=linear(rng.uniform(0.45, 0.85, 3)),
        objects=[(linear(PALETTE_SRGB[c]), float(rng.uniform(0.25, 0.7))) for c in colours[:count]],
        contents=linear(PALETTE_SRGB[colours[count]]),
        light=light,
        noise_sigma=float(rng.uniform(2, 5)),
        jpeg_quality=rng.integers(35, 81, frames),
    )


def film_task(
    model: mujoco.MjModel,
    states: list[tuple[np.ndarray, np.ndarray]],
    looks: TaskLooks,
    object_groups: dict[str, int],
    unmasked_groups: tuple[int, ...],
    camera: tuple[np.ndarray, float, tuple[int, int]],
    samples: int,
    work: Path,
) -> list[FrameImages]:
    """Films the simulated ``states`` with Cycles.

    Args:
        model: The compiled scene.
        states: Per frame, the simulation's ``geom_xpos`` and ``geom_xmat``.
        looks: The demo's looks (:func:`draw_task_looks`).
        object_groups: Object name to the geom group of its visible geoms (their IDs follow this order).
        unmasked_groups: Further groups shown but in no object's mask (a poured cup's contents).
        camera: The camera's pose (4x4, OpenCV axes), vertical field of view (deg) and image (width, height).
        samples: Cycles samples per pixel of the colour render (denoised).
        work: A folder for the renders.

    Returns:
        Per frame the clean colour render, z-depth, each object's visible mask and its pixel count alone.
    """
    object_id = {group: index + 1 for index, group in enumerate(object_groups.values())}
    shown = (GROUP_ENVIRONMENT, GROUP_GRIPPER, *object_id, *unmasked_groups)
    geoms = [g for g in range(model.ngeom) if model.geom_group[g] in shown and model.geom_rgba[g, 3] > 0]
    ids = {g: HAND_ID if model.geom_group[g] == GROUP_GRIPPER else object_id.get(int(model.geom_group[g]), 0) for g in geoms}  # fmt: skip

    def materials():
        made = {
            "table": _table_material(looks.table),
            "floor": _principled("floor", linear((0.3, 0.3, 0.32)), 0.8)[0],
            "wall": _principled("wall", looks.wall, 0.8)[0],
            "contents": _principled("contents", looks.contents, 0.3)[0],
        }
        objects = [
            _principled(f"object{i}", colour, rough)[0] for i, (colour, rough) in enumerate(looks.objects)
        ]
        grey: dict[tuple, bpy.types.Material] = {}

        def material(geom: int, name: str) -> bpy.types.Material:
            group = int(model.geom_group[geom])
            if group in object_id:
                return objects[object_id[group] - 1]
            if group in unmasked_groups:
                return made["contents"]
            if group == GROUP_ENVIRONMENT:
                for key in ("table", "floor", "wall"):
                    if name == key or name.endswith(f"_{key}") or name.startswith(f"{key}_"):
                        return made[key]
            rgba = tuple(np.round(model.geom_rgba[geom, :3], 2))  # the gripper keeps its own greys
            if rgba not in grey:
                grey[rgba] = _principled(f"grey{len(grey)}", rgba, 0.4)[0]
            return grey[rgba]

        return material

    pose, fovy, size = camera
    film = GeomFilm(model, geoms, ids, materials, pose, fovy, size, looks.light, samples)
    return film.film(states, work, list(object_groups))
