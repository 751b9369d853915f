"""An articulated demo filmed with Blender's Cycles: the second renderer of ``make_articulated_demo.py``.

The simulation is the same MuJoCo one (``_articulated_sim``); only the filming differs: every geom MuJoCo
would draw, as a Blender mesh set to its simulated pose on each frame, with masks and depth from the same
Blender scene (``_cycles_film.GeomFilm``). The looks are drawn from the seed and are not MuJoCo's: a
procedural table top (wood, checker, plain white or marble, as in the varied set), a body in white, black,
steel or wood with its door in the same or a darker finish, glass-dark windows, a moving area light with a
brightness change, an ambient world, and phone-like noise and JPEG compression on every frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy
import mujoco
import numpy as np
from _articulated_scene import GROUP_BODY, GROUP_CUP, GROUP_PART, ArticulatedLayout
from _cycles_film import GeomFilm, Light, draw_light, draw_table
from _demo_render import FrameImages
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER
from _varied_blender import (
    HAND_ID,
    _principled,
    _table_material,
)
from _varied_scene import linear

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


@dataclass
class Looks:
    """Everything the seed decides about how a Cycles articulated demo looks (colours linear RGB).

    Attributes:
        table: The table top as ``_varied_blender`` draws it (``kind``, ``colours``, ``scale``,
            ``roughness``).
        wall: Wall colour.
        finish: Key of :data:`FINISHES`.
        cup: Cup colour.
        light: The key light and ambience (``_cycles_film.draw_light``).
        noise_sigma: Read noise, 8-bit levels.
        jpeg_quality: Per frame, 35-80.
    """

    table: dict
    wall: tuple
    finish: str
    cup: tuple
    light: Light
    noise_sigma: float
    jpeg_quality: np.ndarray


def draw_looks(rng: np.random.Generator, layout: ArticulatedLayout, frames: int) -> Looks:
    """The looks of one demo, drawn from ``rng``; the light circles above the body's middle."""
    table = draw_table(rng)
    light = draw_light(rng, layout.origin + [0.0, 0.0, layout.size[2] / 2], frames)
    return Looks(
        table=table,
        wall=linear(rng.uniform(0.45, 0.85, 3)),
        finish=str(rng.choice(list(FINISHES))),
        cup=linear(CUP_SRGB[rng.integers(len(CUP_SRGB))]),
        light=light,
        noise_sigma=float(rng.uniform(2, 5)),
        jpeg_quality=rng.integers(35, 81, frames),
    )


class CyclesFilm:
    """The articulated scene as Blender data, and its colour and ID renders.

    Args:
        model: The compiled scene (``_articulated_model.build_model``).
        layout: The scene's layout (camera, body placement).
        looks: Colours, table, light and noise (:func:`draw_looks`).
        samples: Cycles samples per pixel of the colour render (denoised).
    """

    def __init__(self, model: mujoco.MjModel, layout: ArticulatedLayout, looks: Looks, samples: int) -> None:
        self.looks = looks
        shown = (GROUP_ENVIRONMENT, GROUP_GRIPPER, *IDS)
        geoms = [g for g in range(model.ngeom) if model.geom_group[g] in shown and model.geom_rgba[g, 3] > 0]
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = layout.camera_rot, layout.camera_pos
        self.film_ = GeomFilm(
            model,
            geoms,
            {g: IDS.get(int(model.geom_group[g]), 0) for g in geoms},
            lambda: self._materials(model),
            pose,
            layout.fovy,
            (layout.width, layout.height),
            looks.light,
            samples,
        )

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

    def film(
        self, states: list[tuple[np.ndarray, np.ndarray]], work: Path, names: dict[int, str]
    ) -> list[FrameImages]:
        """Renders every frame (``_cycles_film.GeomFilm.film``).

        Args:
            states: Per frame, the simulation's ``geom_xpos`` (ngeom x 3, world, m) and ``geom_xmat``
                (ngeom x 9).
            work: A folder for the renders.
            names: Geom group (``GROUP_BODY``, ``GROUP_PART``, ``GROUP_CUP``) -> its object's name.

        Returns:
            Per frame the clean colour render (RGB), z-depth (m, 0 where nothing), each object's
            visible mask and its pixel count with nothing in front of it.
        """
        ordered = sorted(names, key=IDS.__getitem__)
        if [IDS[g] for g in ordered] != list(range(1, len(ordered) + 1)):
            raise ValueError(f"objects' groups {sorted(names)} leave a gap in the ID image's numbers")
        return self.film_.film(states, work, [names[g] for g in ordered])
