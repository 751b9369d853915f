"""A varied demo's scene, fully decided: objects, camera, light, hand path, and their motion.

:class:`Scene` holds everything ``_varied_blender`` needs to build the Blender scene and
``_varied_truth`` needs for the truth: the objects (:class:`Item`), the camera
(:class:`Camera`), the light, the hand's waypoints, and the poses they give on every
frame. ``_varied_draw`` draws a scene from a seed; ``_varied_hand`` shapes the hand.

World frame: z up, z = 0 on the table top, metres (docs/data-contract.md). Camera frame: OpenCV
(x right, y down, z forward). Colours are linear RGB in [0, 1].
"""

from __future__ import annotations

import dataclasses

import numpy as np

SHAPES = ("box", "cylinder", "cup", "plate")
TABLE_KINDS = ("wood", "checker", "white", "marble")
CASES = ("white_on_white", "lookalike", "towards_camera")

# Hand timeline: fractions of the video at which the grasp centre reaches each waypoint.
T_ENTER, T_PRE, T_GRASP, T_LIFT_START, T_LIFTED = 0.0, 0.16, 0.26, 0.30, 0.40
T_OVER, T_PLACED, T_RELEASE, T_UP, T_GONE = 0.60, 0.68, 0.72, 0.80, 0.94


def linear(srgb) -> tuple[float, float, float]:
    """sRGB in [0, 1] to linear RGB (Blender's colour inputs)."""
    c = np.asarray(srgb, float)
    out = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return tuple(float(v) for v in out)


@dataclasses.dataclass
class Item:
    """An object on the table.

    Attributes:
        name: Its name in prompts.json and truth.json.
        shape: One of :data:`SHAPES`.
        size: Full bounding-box extents in its own frame, z up (m), (3,).
        params: Shape parameters (m): ``radius``, ``outer_radius``, ``inner_radius``,
            ``wall_thickness``, ``bottom_thickness``, ``height``.
        colour: Linear RGB.
        roughness: Principled roughness.
        role: ``manipulated``, ``container``, ``support`` or ``static``.
        xy: Centre on the table at the start (m), world frame, (2,).
        yaw: Rotation about world z at the start (rad).
        twin_of: Name of the object it looks exactly like, if any.
    """

    name: str
    shape: str
    size: np.ndarray
    params: dict[str, float]
    colour: tuple[float, float, float]
    roughness: float
    role: str
    xy: np.ndarray
    yaw: float
    twin_of: str | None = None

    @property
    def footprint(self) -> float:
        """Radius of the circle on the table that holds the object (m)."""
        return float(np.hypot(self.size[0], self.size[1]) / 2)


@dataclasses.dataclass
class Camera:
    """A pinhole camera (OpenCV convention: the top-left pixel's centre is (0, 0)).

    Attributes:
        width: Image width (px).
        height: Image height (px).
        fovy: Vertical field of view (deg).
        elevation: Angle of the line of sight below the horizontal (deg).
        world_from_camera: 4x4, OpenCV camera axes.
        focus_distance: Metres to the scene centre (depth of field focuses there).
    """

    width: int
    height: int
    fovy: float
    elevation: float
    world_from_camera: np.ndarray
    focus_distance: float

    @property
    def fy(self) -> float:
        """Focal length (px)."""
        return self.height / 2 / np.tan(np.deg2rad(self.fovy) / 2)

    @property
    def fx(self) -> float:
        """Focal length (px); pixels are square."""
        return self.fy

    @property
    def cx(self) -> float:
        """Principal point x (px)."""
        return (self.width - 1) / 2

    @property
    def cy(self) -> float:
        """Principal point y (px)."""
        return (self.height - 1) / 2

    def project(self, points_world: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of world points (N, 3); NaN behind the camera."""
        rotation, origin = self.world_from_camera[:3, :3], self.world_from_camera[:3, 3]
        cam = (np.asarray(points_world, float) - origin) @ rotation
        z = np.where(cam[:, 2] > 1e-6, cam[:, 2], np.nan)
        return np.stack([self.fx * cam[:, 0] / z + self.cx, self.fy * cam[:, 1] / z + self.cy], axis=1)


@dataclasses.dataclass
class Scene:
    """One varied demo, fully decided.

    Attributes:
        seed: The seed it was drawn from.
        frames: Number of video frames.
        cases: The hard cases it shows (subset of :data:`CASES`).
        table: ``kind`` (one of :data:`TABLE_KINDS`), ``colours`` (two linear RGB),
            ``scale`` (texture features per metre), ``roughness``.
        wall_colour: Linear RGB of the wall behind the table.
        items: The objects, in prompts.json order (the manipulated one first).
        task: prompts.json's task.
        camera: The camera.
        light: ``start``, ``end`` (positions, m), ``size`` (m), ``energy`` (W per frame,
            shape (frames,)), ``ambient`` (world strength per frame).
        motion_blur: Shutter as a share of a frame (0 = none).
        fstop: Aperture for depth of field, or None for none.
        skin: Linear RGB of the hand and arm; ``sleeve`` that of the upper arm.
        sleeve: Linear RGB of the sleeve.
        hand_scale: Size of the hand relative to an adult's.
        approach: Horizontal unit vector (2,) from the object towards the arm.
        towards_camera: Horizontal unit vector (2,) from the scene towards the camera.
        finger_reach: How far the fingers reach down the object's camera side (m);
            tuned by rendering so the hand hides ``target_hidden`` of it.
        target_hidden: Share of the manipulated object the grasp should hide.
        with_depth: Whether depth/ is written.
        jpeg_quality: Per frame, in [35, 80].
        noise_sigma: Gaussian noise, 8-bit levels.
        waypoints: ``(time, grasp centre, share of the turn)`` of the hand's path, time
            in [0, 1] over the video, grasp centre in metres (3,).
        total_turn: The hand's turn about z between grasp and release (rad).
    """

    seed: int
    frames: int
    cases: list[str]
    table: dict
    wall_colour: tuple[float, float, float]
    items: list[Item]
    task: dict
    camera: Camera
    light: dict
    motion_blur: float
    fstop: float | None
    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float]
    hand_scale: float
    approach: np.ndarray
    towards_camera: np.ndarray
    finger_reach: float
    target_hidden: float
    with_depth: bool
    jpeg_quality: np.ndarray
    noise_sigma: float
    waypoints: list[tuple[float, np.ndarray, float]]
    total_turn: float

    @property
    def manipulated(self) -> Item:
        """The object the hand carries."""
        return self.items[0]

    def keyframes(self) -> list[dict]:
        """Truth keyframes: grasp, lift and release of the manipulated object."""
        last = self.frames - 1
        events = (("grasp", T_GRASP), ("lift", T_LIFT_START), ("release", T_RELEASE))
        return [
            {"frame": int(np.ceil(t * last)), "event": e, "object": self.manipulated.name} for e, t in events
        ]

    def path(self, t: float) -> tuple[np.ndarray, float]:
        """The grasp centre (m, (3,)) and the hand's turn since the grasp (rad) at video time ``t`` in [0, 1]."""
        t = min(max(t, 0.0), 1.0)
        for (t0, p0, s0), (t1, p1, s1) in zip(self.waypoints[:-1], self.waypoints[1:], strict=True):
            if t0 <= t <= t1:
                w = _smoothstep((t - t0) / (t1 - t0)) if t1 > t0 else 1.0
                return (1 - w) * p0 + w * p1, ((1 - w) * s0 + w * s1) * self.total_turn
        return self.waypoints[-1][1], self.waypoints[-1][2] * self.total_turn

    def hand_poses(self) -> np.ndarray:
        """World pose (4x4) of the hand's frame per frame, (frames, 4, 4).

        The hand's frame is the grasp centre, turned about z by the hand's turn;
        at the grasp it coincides with the manipulated object's centre, world-aligned.
        """
        last = max(self.frames - 1, 1)
        return np.stack([_pose(*self.path(frame / last)) for frame in range(self.frames)])

    def item_poses(self, times: np.ndarray | None = None) -> np.ndarray:
        """World pose (4x4) of every object's bounding-box centre, (len(times), items, 4, 4).

        Args:
            times: Video times in [0, 1]; every frame's when None.
        """
        if times is None:
            times = np.arange(self.frames) / max(self.frames - 1, 1)
        poses = np.empty((len(times), len(self.items), 4, 4))
        for index, item in enumerate(self.items):
            poses[:, index] = _pose(np.r_[item.xy, item.size[2] / 2], item.yaw)
        carried = self.manipulated
        for row, t in enumerate(times):
            if t >= T_GRASP:
                centre, turn = self.path(min(t, T_RELEASE))
                poses[row, 0] = _pose(centre, turn + carried.yaw)
        return poses


def _pose(centre, yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    pose = np.eye(4)
    pose[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    pose[:3, 3] = centre
    return pose


def _smoothstep(t: float) -> float:
    t = min(max(t, 0.0), 1.0)
    return t * t * (3 - 2 * t)
