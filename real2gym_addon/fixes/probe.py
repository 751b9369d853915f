"""The opening probe: does something dropped into a container reach its bottom?

A sphere (or the manipulated object's own shape) is dropped from above the
container's opening, centred, in a scene with just the table and the container,
and simulated for a second. It reaches the bottom when it ends within a few
millimetres of the container's inner floor. A convex hull over a cup fails this:
the probe stays on the closed top.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import mujoco
import numpy as np

from ..geometry.shape_kinds import BOX
from ..geometry.shapes import Shape
from ..mjcf.export import SceneObject, build_scene

PROBE_TIME_S = 1.0
FLOOR_TOLERANCE = 0.005


def opening_probe(container: Shape, probe: Shape | None = None, drop_height: float = 0.05) -> dict:
    """Drops a probe into the container and reports where it ends.

    Args:
        container: The container's shape (a cup or bowl).
        probe: The probe's shape; a sphere-like box of 40 % of the inner radius when None.
        drop_height: Height above the rim to drop from (m).

    Returns:
        ``{"passed", "reaches_bottom", "probe", "final_height_above_floor_m", "floor_m"}``.
    """
    inner = container.params.get("inner_radius", container.size[0] / 2)
    floor = container.params.get("bottom_thickness", 0.0)
    if probe is None:
        side = 0.8 * inner
        probe = Shape(BOX.name, (side, side, side))
    height = container.size[2]
    objects = [
        SceneObject("container", "static", container, np.array([0.0, 0.0, height / 2]), 0.0),
        SceneObject(
            "probe", "manipulated", probe, np.array([0.0, 0.0, height + drop_height + probe.size[2] / 2]), 0.3
        ),
    ]
    camera = _Camera()
    with tempfile.TemporaryDirectory() as folder:
        scene = build_scene(objects, [-0.2, -0.2, 0.2, 0.2], np.eye(4), camera, None, Path(folder))
    model = scene.model
    data = mujoco.MjData(model)
    body = model.body(scene.name_map["probe"]).id
    mujoco.mj_step(model, data, int(PROBE_TIME_S / model.opt.timestep))
    bottom = float(data.xpos[body][2] - probe.size[2] / 2)
    above_floor = bottom - floor
    reaches = bool(abs(above_floor) < FLOOR_TOLERANCE)
    return {
        "passed": reaches,
        "reaches_bottom": reaches,
        "probe": f"{probe.kind} {np.round(probe.size, 4).tolist()}",
        "final_height_above_floor_m": round(above_floor, 4),
        "floor_m": round(floor, 4),
    }


class _Camera:
    width, height, fx, fy, cx, cy = 64, 48, 50.0, 50.0, 31.5, 23.5
