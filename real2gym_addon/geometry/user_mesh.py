"""A user's mesh (``"shape": "mesh", "mesh": "file.obj"`` in prompts.json), read and fitted to the video.

The OBJ file (its ``v`` and ``f`` lines; polygons are fanned into triangles,
the rest is ignored) may be in any unit and any position: the fit scales it,
turns it about the vertical and places it upright on the table so that its
silhouette matches the masks and its surface the depth points (Nelder-Mead from
the bounding boxes, from several yaws, with the file's z or its y as up).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize
from scipy.spatial import cKDTree

from ..demo import Camera
from .fit_base import (
    DEPTH_CAP,
    FittedObject,
    RestView,
    _restarted_minimize,
    _silhouette_error,
    all_points,
    depth_sample,
)
from .shape_kinds import MESH
from .shapes import Shape

START_YAWS = 8
"""Yaws (evenly spread) the fit starts from."""
MESH_DEPTH_WEIGHT = 0.5
"""Weight of the depth term (as in :mod:`.fit`, but heavier): the surface's detail, which a convex
outline hides (where a handle points), shows in the depth alone."""
UP_AXES = {"z": np.eye(3), "y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])}
"""Rotations taking a file's up axis to z: the contract's z up, and the y up many exporters write."""


def fit_user_mesh(
    vertices: np.ndarray, faces: np.ndarray, views: list[RestView], camera: Camera
) -> FittedObject:
    """Scales, turns and places a user's mesh upright on the table to match the views.

    Args:
        vertices: ``Vx3`` vertices in the file's units and frame.
        faces: ``Fx3`` triangle indices.
        views: Frames on which the object rests, with masks and depth points (world frame).
        camera: Intrinsics.

    Returns:
        A ``mesh`` shape with the user's faces (collided as its convex hull) and its pose.
    """
    points = all_points(views)
    sample = depth_sample(views, points)
    height = float(np.percentile(points[:, 2], 98))
    footprint = np.percentile(points[:, :2], [2, 98], axis=0).mean(axis=0)
    best = None
    for up, rotation in UP_AXES.items():
        unit = _upright(vertices @ rotation.T)
        size = unit.max(axis=0) - unit.min(axis=0)
        loss = _loss(unit, faces, views, camera, sample)
        starts = [
            np.array([*footprint, yaw, height / size[2]])
            for yaw in np.arange(START_YAWS) * 2 * math.pi / START_YAWS
        ]
        start = min(starts, key=loss)
        # A first simplex as wide as the starts are apart: scipy's default barely moves a yaw of 0.
        steps = np.diag([0.01, 0.01, math.pi / START_YAWS, 0.05 * start[3]])
        first = minimize(loss, start, method="Nelder-Mead", options={"initial_simplex": np.vstack([start, start + steps]),
                                                                     "xatol": 2e-4, "fatol": 1e-4, "maxiter": 400})  # fmt: skip
        result = _restarted_minimize(loss, first.x, maxiter=400)
        if best is None or result.fun < best[0]:
            best = (result.fun, result.x, unit, up)
    error, (x, y, yaw, scale), unit, _ = best
    local = unit * abs(scale)
    size = tuple(float(v) for v in local.max(axis=0) - local.min(axis=0))
    shape = Shape(MESH.name, size, vertices=local, faces=faces, fit_error=float(error), collision="hull")
    return FittedObject(shape, np.array([x, y, size[2] / 2]), float(yaw))


def _upright(vertices: np.ndarray) -> np.ndarray:
    """The vertices moved so that their bounding box is centred on the origin."""
    return vertices - (vertices.max(axis=0) + vertices.min(axis=0)) / 2


def _loss(unit: np.ndarray, faces: np.ndarray, views: list[RestView], camera: Camera, sample: np.ndarray):
    """The fit's loss over ``(x, y, yaw, scale)``: silhouette error plus a capped depth term
    (:data:`MESH_DEPTH_WEIGHT`), the distances taken to points spread over the mesh (scaled with it)."""
    import trimesh

    mesh = trimesh.Trimesh(unit, faces, process=False)
    hull = Shape(MESH.name, (1.0, 1.0, 1.0), vertices=mesh.convex_hull.vertices)
    surface = np.asarray(trimesh.sample.sample_surface(mesh, 3000, seed=0)[0]) if mesh.area > 0 else unit
    tree = cKDTree(surface)
    half_height = (unit[:, 2].max() - unit[:, 2].min()) / 2

    def loss(v):
        x, y, yaw, scale = v
        scale = abs(scale)
        posed = Shape(MESH.name, (1.0, 1.0, 1.0), vertices=hull.vertices * scale)
        position = np.array([x, y, half_height * scale])
        error = _silhouette_error(posed, position, yaw, views, camera)
        if len(sample):
            c, s = math.cos(yaw), math.sin(yaw)
            offset = sample - position
            local = np.c_[
                c * offset[:, 0] + s * offset[:, 1], -s * offset[:, 0] + c * offset[:, 1], offset[:, 2]
            ]
            gap = np.minimum(tree.query(local / max(scale, 1e-9))[0] * scale, DEPTH_CAP)
            error += MESH_DEPTH_WEIGHT * float(gap.mean()) / DEPTH_CAP
        return error

    return loss
