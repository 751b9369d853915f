"""Depth points a camera would see on a posed shape's boxes, for tests of what is measured from depth."""

from __future__ import annotations

import numpy as np

from real2gym.real2gym_addon.geometry.camera import yaw_rotation


def points_seen(shape, fitted, camera: np.ndarray, count: int = 4000) -> np.ndarray:
    """World points on the faces of ``shape``'s box pieces (posed as ``fitted``) that face ``camera``, less those
    hidden in a joint between two pieces (no occlusion besides: enough for layers and runs)."""
    rng = np.random.default_rng(1)
    out = []
    for piece in shape.collision_pieces():
        half = np.asarray(piece.size)
        for axis in range(3):
            for sign in (-1.0, 1.0):
                normal = np.zeros(3)
                normal[axis] = sign
                local = rng.uniform(-1, 1, (count // 12, 3)) * half
                local[:, axis] = sign * half[axis]
                local += piece.position
                world = (yaw_rotation(fitted.yaw) @ local.T).T + fitted.position
                facing = (camera - world) @ (yaw_rotation(fitted.yaw) @ normal) > 0
                inside = shape.surface_distance(local + 1e-4 * normal) > 0
                out.append(world[facing & inside])
    return np.concatenate(out)
