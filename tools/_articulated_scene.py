"""Articulated scenes: a microwave with a hinged door, a cabinet with a door, a chest with a drawer.

Each scene has one *body* fixed to the table (a box open on its front face) and one *part* joined
to it by a hinge or a slide joint, and the microwave also a cup on the table. This module draws
their sizes and places and frames them with the camera; ``_articulated_model`` builds the MuJoCo
model.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *body frame* has its
origin at the middle of the body's bottom face, x across its width, y out of its opening (the
front), z up; it is the world frame turned by ``yaw`` about z. The *part frame* is a door's hinge
point (the bottom end of the hinge axis, on the door's outer face) or a drawer's front (the
middle of the front panel's outer face); with the joint at 0 (closed) its axes are the body's.
A door opens by a positive turn about ``axis``, a drawer by a positive slide along it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.spatial.transform import Rotation

# Geom groups of the three objects (one object alone is rendered by switching the others off);
# 0 (environment), 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's.
GROUP_BODY = 1
GROUP_PART = 2
GROUP_CUP = 4

SCENES = {
    # scene: (body name, part name, joint type)
    "microwave": ("microwave", "door", "hinge"),
    "cabinet": ("cabinet", "door", "hinge"),
    "drawer": ("chest", "drawer", "slide"),
}
WALL = 0.015  # wall thickness of every body (m)
TABLE_HALF = (0.85, 0.65)  # table top half extents (m)


@dataclass(frozen=True)
class Handle:
    """A bar handle on the part's outer face.

    Attributes:
        centre: The bar's middle, part frame (m), (3,).
        axis: 0 for a bar along the part's x (a drawer's), 2 for one along z (a door's).
        length: Bar length (m).
        radius: Bar radius (m).
        standoff: Distance from the part's outer face to the bar's axis (m).
    """

    centre: np.ndarray
    axis: int
    length: float
    radius: float
    standoff: float

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre and full extents (part frame, m) of the box round the bar and its two posts."""
        size = np.full(3, 2 * self.radius)
        size[self.axis] = self.length
        size[1] = self.standoff + self.radius
        centre = self.centre.copy()
        centre[1] = size[1] / 2
        return centre, size


@dataclass(frozen=True)
class Cup:
    """An open cylindrical cup standing on the table.

    Attributes:
        xy: Its axis on the table, world frame (m), (2,).
        yaw: Its turn about z (rad): a wall box faces the fingers.
        radius: Outer radius (m).
        height: Bottom to rim (m).
        wall: Wall thickness (m).
        bottom: Bottom thickness (m).
    """

    xy: np.ndarray
    yaw: float
    radius: float
    height: float
    wall: float = 0.004
    bottom: float = 0.006


@dataclass(frozen=True)
class ArticulatedLayout:
    """Sizes and places of one articulated scene (metres, radians).

    Attributes:
        scene: ``microwave``, ``cabinet`` or ``drawer``.
        body_name: The body's object name (``microwave``, ``cabinet``, ``chest``).
        part_name: The part's name (``door``, ``drawer``).
        joint_type: ``hinge`` or ``slide``.
        size: Body's full extents (width, depth, height), body frame, (3,).
        origin: Body frame origin, world frame, (3,).
        yaw: Body frame's turn about world z.
        hinge_side: +1 or -1: the door's hinge is at body x = hinge_side * width / 2 (0: a drawer).
        part_size: Full extents of the part's box (a door's panel; a drawer's tray and front), part frame.
        part_centre: That box's centre, part frame, (3,).
        pivot: Part frame origin, body frame, (3,).
        axis: Joint axis, body frame, (3,) unit; positive q opens.
        q_range: The joint's limits (rad or m); closed is 0.
        q_start: The joint's value on the first frame.
        q_goal: Where the script takes the part (closed for ``close``).
        damping: Joint damping (N m s/rad or N s/m).
        frictionloss: Joint dry friction (N m or N).
        handle: The part's handle, or None.
        cavity: A microwave's inside, body frame: x0, x1, y0, y1, floor z, ceiling z; else None.
        control_width: A microwave's control panel width beside its door (m); 0 otherwise.
        shelf_z: A cabinet's shelf (its top face, m above the bottom) or a chest's divider (its middle).
        cup: The cup (microwave scene), or None.
        colours: Part name to RGBA.
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    scene: str
    body_name: str
    part_name: str
    joint_type: str
    size: np.ndarray
    origin: np.ndarray
    yaw: float
    hinge_side: int
    part_size: np.ndarray
    part_centre: np.ndarray
    pivot: np.ndarray
    axis: np.ndarray
    q_range: tuple[float, float]
    q_start: float
    q_goal: float
    damping: float
    frictionloss: float
    handle: Handle | None
    cavity: tuple[float, ...] | None
    control_width: float
    shelf_z: float
    cup: Cup | None
    colours: dict[str, list[float]] = field(default_factory=dict)
    camera_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    camera_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    fovy: float = 45.0
    width: int = 320
    height: int = 240

    @property
    def rotation(self) -> np.ndarray:
        """World-from-body rotation, (3, 3)."""
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    @property
    def part_label(self) -> str:
        """The part's object name in truth.json and masks/: ``<body>.<part>``."""
        return f"{self.body_name}.{self.part_name}"

    def to_world(self, points_body: np.ndarray) -> np.ndarray:
        """Body-frame points (m), (..., 3), in the world frame."""
        return np.asarray(points_body) @ self.rotation.T + self.origin

    def part_in_body(self, q: float) -> tuple[np.ndarray, np.ndarray]:
        """Rotation (3, 3) and origin (3,) of the part frame in the body frame with the joint at ``q``."""
        if self.joint_type == "hinge":  # Rodrigues' formula about the unit axis
            k = np.array(
                [
                    [0, -self.axis[2], self.axis[1]],
                    [self.axis[2], 0, -self.axis[0]],
                    [-self.axis[1], self.axis[0], 0],
                ]
            )
            return np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * k @ k, self.pivot.copy()
        return np.eye(3), self.pivot + self.axis * q


def sample_layout(scene: str, rng: np.random.Generator) -> ArticulatedLayout:
    """Draw one scene's sizes, places, joint and colours (the camera comes later: ``place_camera``).

    Args:
        scene: ``microwave``, ``cabinet`` or ``drawer``.
        rng: Random generator of the seed.

    Returns:
        The layout, with a default camera.
    """
    body_name, part_name, joint_type = SCENES[scene]
    origin = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.12, -0.04), 0.0])
    yaw = float(np.deg2rad(rng.uniform(-12, 12)))
    side = int(rng.choice([-1, 1]))
    grey = rng.uniform(0.42, 0.92)
    common = {"scene": scene, "body_name": body_name, "part_name": part_name, "joint_type": joint_type}
    common |= {"origin": origin, "yaw": yaw}
    if scene == "microwave":
        w, d, h = rng.uniform(0.43, 0.48), rng.uniform(0.32, 0.38), rng.uniform(0.26, 0.30)
        control = rng.uniform(0.08, 0.10)
        thick = rng.uniform(0.022, 0.03)
        door = np.array([w - control - 0.003, thick, h - 0.006])
        radius, cup_h = rng.uniform(0.029, 0.033), rng.uniform(0.07, 0.085)
        cup_body = np.array(
            [-side * rng.uniform(w / 2 - 0.06, w / 2 + 0.02), d / 2 + rng.uniform(0.13, 0.18), 0]
        )
        cup_xy = (Rotation.from_euler("z", yaw).as_matrix() @ cup_body + origin)[:2]
        hue = rng.integers(4)
        cup_rgba = [[0.8, 0.15, 0.12, 1], [0.15, 0.6, 0.25, 1], [0.15, 0.35, 0.8, 1], [0.9, 0.75, 0.1, 1]][
            hue
        ]
        return ArticulatedLayout(
            **common,
            size=np.array([w, d, h]),
            hinge_side=side,
            part_size=door,
            part_centre=np.array([-side * door[0] / 2, -thick / 2, door[2] / 2]),
            pivot=np.array([side * w / 2, d / 2 + 0.002 + thick, 0.003]),
            axis=np.array([0.0, 0.0, -side]),
            q_range=(0.0, float(np.deg2rad(125))),
            q_start=float(np.deg2rad(rng.uniform(80, 110))),
            q_goal=0.0,
            damping=float(rng.uniform(0.08, 0.2)),
            frictionloss=float(rng.uniform(0.01, 0.03)),
            handle=None,
            cavity=(
                min(side * (w / 2 - WALL), -side * (w / 2 - control)),
                max(side * (w / 2 - WALL), -side * (w / 2 - control)),
                -d / 2 + WALL,
                d / 2,
                WALL,
                h - WALL,
            ),
            control_width=float(control),
            shelf_z=0.0,
            cup=Cup(cup_xy, yaw, float(radius), float(cup_h)),
            colours={
                "body": [grey, grey, grey * 1.02, 1],
                "door": [grey * 0.9, grey * 0.9, grey * 0.92, 1],
                "window": [0.05, 0.06, 0.07, 1],
                "panel": [0.08, 0.08, 0.09, 1],
                "cup": cup_rgba,
            },
        )
    if scene == "cabinet":
        w, d, h = rng.uniform(0.30, 0.38), rng.uniform(0.26, 0.32), rng.uniform(0.34, 0.42)
        thick = rng.uniform(0.016, 0.022)
        door = np.array([w - 0.004, thick, h - 0.008])
        standoff, length = rng.uniform(0.035, 0.042), rng.uniform(0.12, 0.18)
        handle_x = -side * (door[0] - rng.uniform(0.04, 0.055))
        wood = np.array([0.62, 0.45, 0.3]) * rng.uniform(0.8, 1.2)
        body = [*np.clip(wood, 0, 1), 1] if rng.uniform() < 0.5 else [grey, grey * 0.98, grey * 0.95, 1]
        return ArticulatedLayout(
            **common,
            size=np.array([w, d, h]),
            hinge_side=side,
            part_size=door,
            part_centre=np.array([-side * door[0] / 2, -thick / 2, door[2] / 2]),
            pivot=np.array([side * w / 2, d / 2 + 0.002 + thick, 0.004]),
            axis=np.array([0.0, 0.0, -side]),
            q_range=(0.0, float(np.deg2rad(120))),
            q_start=0.0,
            q_goal=float(np.deg2rad(rng.uniform(86, 94))),
            damping=float(rng.uniform(0.05, 0.15)),
            frictionloss=float(rng.uniform(0.01, 0.03)),
            handle=Handle(
                np.array([handle_x, standoff, door[2] / 2 + rng.uniform(-0.03, 0.03)]),
                2,
                float(length),
                float(rng.uniform(0.008, 0.01)),
                float(standoff),
            ),
            cavity=None,
            control_width=0.0,
            shelf_z=float(h * rng.uniform(0.45, 0.55)),
            cup=None,
            colours={"body": body, "door": [c * 0.95 for c in body[:3]] + [1], "handle": [0.7, 0.7, 0.72, 1]},
        )
    w, d, h = rng.uniform(0.36, 0.44), rng.uniform(0.30, 0.36), rng.uniform(0.26, 0.32)
    divider = rng.uniform(0.11, 0.13)
    thick = rng.uniform(0.016, 0.02)
    front_h = h - divider - 0.004
    tray_depth = d - WALL - 0.03
    part_size = np.array([w - 0.006, thick + tray_depth, front_h])
    standoff, length = rng.uniform(0.035, 0.042), rng.uniform(0.10, 0.16)
    wood = np.clip(np.array([0.55, 0.38, 0.24]) * rng.uniform(0.75, 1.25), 0, 1)
    return ArticulatedLayout(
        **common,
        size=np.array([w, d, h]),
        hinge_side=0,
        part_size=part_size,
        part_centre=np.array([0.0, -part_size[1] / 2, 0.0]),
        pivot=np.array([0.0, d / 2 + 0.002 + thick, divider + 0.002 + front_h / 2]),
        axis=np.array([0.0, 1.0, 0.0]),
        q_range=(0.0, float(tray_depth - 0.05)),
        q_start=0.0,
        q_goal=float(rng.uniform(0.13, 0.19)),
        damping=float(rng.uniform(2.0, 5.0)),
        frictionloss=float(rng.uniform(0.3, 0.8)),
        handle=Handle(
            np.array([0.0, standoff, 0.0]),
            0,
            float(length),
            float(rng.uniform(0.007, 0.009)),
            float(standoff),
        ),
        cavity=None,
        control_width=0.0,
        shelf_z=float(divider),
        cup=None,
        colours={"body": [*wood, 1], "door": [*(wood * 1.1).clip(0, 1), 1], "handle": [0.15, 0.15, 0.16, 1]},
    )


def look_from(
    target: np.ndarray, azimuth: float, elevation: float, distance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Camera position and world-from-camera rotation (OpenCV axes) looking at ``target``.

    Args:
        target: The point looked at, world frame (m), (3,).
        azimuth: Direction from the target to the camera, from world +x about z (rad).
        elevation: Angle of that direction above the table (rad).
        distance: Metres from the target.
    """
    direction = np.array(
        [np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)]
    )
    eye = target + distance * direction
    forward = -direction
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return eye, np.stack([right, np.cross(forward, right), forward], axis=1)


def place_camera(
    layout: ArticulatedLayout, points: np.ndarray, azimuth: float, elevation: float, margin: float = 0.06
) -> ArticulatedLayout:
    """The layout with a camera at ``azimuth`` and ``elevation`` that frames ``points``.

    The camera looks at the middle of the points' bounding box from the nearest distance (1 cm
    steps from 0.5 m) at which every point projects inside the image, ``margin`` of its size
    from the edges.

    Args:
        layout: The scene; its ``fovy``, ``width`` and ``height`` are the camera's.
        points: What must be seen, world frame (m), (N, 3).
        azimuth: Direction from the scene to the camera, from world +x about z (rad).
        elevation: Angle above the table (rad).
        margin: Share of the image size kept free at each edge.

    Raises:
        ValueError: If no distance up to 3 m frames them.
    """
    target = (points.min(axis=0) + points.max(axis=0)) / 2
    focal = (layout.height / 2) / np.tan(np.deg2rad(layout.fovy) / 2)
    size = np.array([layout.width, layout.height])
    for distance in np.arange(0.5, 3.0, 0.01):
        eye, rot = look_from(target, azimuth, elevation, distance)
        cam = (points - eye) @ rot
        if (cam[:, 2] < 0.1).any():
            continue
        pixels = focal * cam[:, :2] / cam[:, 2:] + (size - 1) / 2
        if (pixels >= margin * size).all() and (pixels <= (1 - margin) * size).all():
            return replace(layout, camera_pos=eye, camera_rot=rot)
    raise ValueError(f"no camera within 3 m frames the {layout.scene} scene (raise --fovy)")
