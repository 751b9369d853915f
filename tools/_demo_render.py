"""Render the demo camera: colour, metric depth and per-object masks.

Pixel convention: OpenCV's, pixel (u, v) is column u, row v, its centre at integer
coordinates. MuJoCo's fovy is the vertical field of view and its principal point is the
image centre, so fx = fy = (H / 2) / tan(fovy / 2), cx = (W - 1) / 2, cy = (H - 1) / 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from _demo_scene import GROUP_ENVIRONMENT, GROUP_GRIPPER

CAMERA = "demo"


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics in pixels (OpenCV convention)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fovy(cls, width: int, height: int, fovy_deg: float) -> Intrinsics:
        """Intrinsics of a MuJoCo camera.

        Args:
            width: Image width in pixels.
            height: Image height in pixels.
            fovy_deg: MuJoCo's vertical field of view in degrees.

        Returns:
            Square pixels, principal point at the image centre.
        """
        focal = (height / 2) / np.tan(np.deg2rad(fovy_deg) / 2)
        return cls(width, height, focal, focal, (width - 1) / 2, (height - 1) / 2)

    def project(self, points_cam: np.ndarray) -> np.ndarray:
        """Pixel coordinates (u, v) of points in the OpenCV camera frame, shape (N, 2)."""
        points_cam = np.atleast_2d(points_cam)
        z = points_cam[:, 2]
        return np.stack(
            [self.fx * points_cam[:, 0] / z + self.cx, self.fy * points_cam[:, 1] / z + self.cy],
            axis=1,
        )


@dataclass
class FrameImages:
    """Everything rendered at one video frame.

    Attributes:
        rgb: Colour image, (H, W, 3) uint8, RGB order, noise-free.
        depth: z-depth along the optical axis (m), (H, W) float32; 0 where nothing.
        masks: Object name to visible mask, (H, W) bool.
        alone_pixels: Object name to its pixel count when rendered alone, unoccluded.
    """

    rgb: np.ndarray
    depth: np.ndarray
    masks: dict[str, np.ndarray]
    alone_pixels: dict[str, int]


class DemoRenderer:
    """Renders the demo camera and each object's visible and unoccluded masks.

    Args:
        model: The compiled demo scene.
        width: Image width in pixels.
        height: Image height in pixels.
        object_groups: Object name to the geom group that holds its visible geoms.
        unmasked_groups: Further geom groups shown in the colour and depth images, where they hide the objects
            behind them, but part of no object's mask (a poured cup's contents).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        width: int,
        height: int,
        object_groups: dict[str, int],
        unmasked_groups: tuple[int, ...] = (),
    ) -> None:
        self._model = model
        self._renderer = mujoco.Renderer(model, height, width)
        self._groups = object_groups
        shown = [GROUP_ENVIRONMENT, GROUP_GRIPPER, *object_groups.values(), *unmasked_groups]
        self._all = self._option(shown)
        self._alone = {name: self._option([g]) for name, g in object_groups.items()}
        self._geom_object = np.full(model.ngeom, -1)
        self._names = list(object_groups)
        for index, group in enumerate(object_groups.values()):
            self._geom_object[model.geom_group == group] = index
        self._far = 0.95 * model.vis.map.zfar * model.stat.extent

    @staticmethod
    def _option(groups: list[int]) -> mujoco.MjvOption:
        option = mujoco.MjvOption()
        option.geomgroup[:] = 0
        for group in groups:
            option.geomgroup[group] = 1
        return option

    def _object_ids(self, data: mujoco.MjData, option: mujoco.MjvOption) -> np.ndarray:
        """Object index per pixel (-1 for none), (H, W) int."""
        self._renderer.update_scene(data, CAMERA, option)
        seg = self._renderer.render()
        ids = np.full(seg.shape[:2], -1)
        is_geom = (seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)) & (seg[..., 0] >= 0)
        ids[is_geom] = self._geom_object[seg[..., 0][is_geom]]
        return ids

    def render(self, data: mujoco.MjData) -> FrameImages:
        """Render colour, depth and masks of the current state.

        Args:
            data: Simulation state, after ``mj_forward`` or ``mj_step``.

        Returns:
            The frame's images.
        """
        renderer = self._renderer
        renderer.update_scene(data, CAMERA, self._all)
        rgb = renderer.render().copy()
        renderer.enable_depth_rendering()
        renderer.update_scene(data, CAMERA, self._all)
        depth = renderer.render().astype(np.float32)
        renderer.disable_depth_rendering()
        depth[depth > self._far] = 0.0
        renderer.enable_segmentation_rendering()
        try:
            ids = self._object_ids(data, self._all)
            masks = {name: ids == index for index, name in enumerate(self._names)}
            alone = {
                name: int((self._object_ids(data, self._alone[name]) == index).sum())
                for index, name in enumerate(self._names)
            }
        finally:
            renderer.disable_segmentation_rendering()
        return FrameImages(rgb, depth, masks, alone)

    def close(self) -> None:
        """Free the OpenGL context."""
        self._renderer.close()
