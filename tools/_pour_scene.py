"""The pour scene's objects and frames: a plain cup of small spheres, the bowl they are poured into, a layout.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *cup frame* and the *bowl frame*
have their origins at the middle of the object's bottom and z along its axis; the cup's x points at the
bowl at the start, so that its first wall box faces the finger on the bowl's side. The layout's level unit
vectors: ``u`` from the cup towards the bowl and ``n = z x u``; a turn about ``n`` by a positive angle tips
the cup's opening towards the bowl. The hand comes at the cup along ``-side * n``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from _hang_scene import wall_ring

# Geom groups of the objects (one object alone is rendered by switching the others off); 0 (environment),
# 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's. The contents have a group of their own:
# shown and hiding what is behind them, but in no object's mask.
GROUP_CUP = 1
GROUP_BOWL = 2
GROUP_CONTENTS = 4

BOWL_RINGS, BOWL_PIECES = 4, 16  # rings of tilted boxes up the bowl's wall, boxes per ring
LATTICE_GAP = 0.0008  # room (m) between neighbouring spheres, and to the cup's wall, as they are packed


@dataclass(frozen=True)
class Cup:
    """A plain straight cup without a handle (the project's ``cup`` kind).

    Attributes:
        outer_radius: Outer radius of the wall (m).
        wall: Wall thickness (m).
        bottom: Bottom thickness (m).
        height: Bottom to rim (m).
        mass: Kilograms (empty).
        xy: Its axis on the table at the start, world frame (m), (2,).
        yaw: Its turn about world z at the start (rad): its x axis towards the bowl.
    """

    outer_radius: float
    wall: float
    bottom: float
    height: float
    mass: float
    xy: np.ndarray
    yaw: float

    @property
    def inner_radius(self) -> float:
        """The wall's inner radius (m)."""
        return self.outer_radius - self.wall

    @property
    def size(self) -> np.ndarray:
        """Full bounding-box extents, cup frame (m), (3,)."""
        return np.array([2 * self.outer_radius, 2 * self.outer_radius, self.height])

    def wall_boxes(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The boxes round the wall (``_hang_scene.wall_ring``); the first faces the cup's +x."""
        return wall_ring(self.outer_radius, self.wall, self.height)

    def density(self) -> float:
        """kg/m^3 of its collision pieces (bottom disc and wall boxes) so that they weigh ``mass``."""
        volume = np.pi * self.outer_radius**2 * self.bottom
        volume += sum(np.prod(size) for _, size, _ in self.wall_boxes())
        return float(self.mass / volume)

    def params(self) -> dict[str, float]:
        """truth.json's parameters (m): the project's cup keys, as ``_demo_truth``'s cup writes them."""
        return {
            "outer_radius": self.outer_radius,
            "inner_radius": self.inner_radius,
            "wall_thickness": self.wall,
            "bottom_thickness": self.bottom,
            "height": self.height,
        }


@dataclass(frozen=True)
class Bowl:
    """A bowl whose wall curves up from a foot to a vertical rim (the project's ``bowl`` kind).

    Its outer radius at height z is ``_demo_scene.bowl_radius_at``'s quarter ellipse,
    r(t) = B + (R - B) sqrt(1 - (1 - t)^2), t = z / H; the inner surface is r(z) - wall, down to the floor
    at z = bottom.

    Attributes:
        outer_radius: R, the rim's outer radius (m).
        base_radius: B, the foot's outer radius (m).
        height: H, bottom to rim (m).
        wall: Horizontal wall thickness (m).
        bottom: Bottom thickness (m).
        mass: Kilograms.
        xy: Its axis on the table, world frame (m), (2,).
    """

    outer_radius: float
    base_radius: float
    height: float
    wall: float
    bottom: float
    mass: float
    xy: np.ndarray

    @property
    def inner_radius(self) -> float:
        """The rim's inner radius (m)."""
        return self.outer_radius - self.wall

    @property
    def size(self) -> np.ndarray:
        """Full bounding-box extents, bowl frame (m), (3,)."""
        return np.array([2 * self.outer_radius, 2 * self.outer_radius, self.height])

    def radius_at(self, z: np.ndarray | float) -> np.ndarray:
        """The outer radius (m) at height(s) ``z`` (m, bowl frame), shaped like ``z``."""
        t = np.clip(np.asarray(z, dtype=float) / self.height, 0.0, 1.0)
        return self.base_radius + (self.outer_radius - self.base_radius) * np.sqrt(1.0 - (1.0 - t) ** 2)

    @property
    def bottom_disc_radius(self) -> float:
        """The collision disc of the bottom (m): out to the wall's mid-line at the floor, past the foot."""
        return max(self.base_radius, float(self.radius_at(self.bottom)) - self.wall / 2)

    def wall_boxes(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Centre, half extents and rotation (bowl frame: m, (3,), (3, 3)) of ``BOWL_RINGS`` rings of
        ``BOWL_PIECES`` boxes, one ring per equal height step from the floor to the rim, each box on the
        wall's mid-line along its step's chord, its top leaning out, a little wider than its sector."""
        boxes = []
        heights = np.linspace(self.bottom, self.height, BOWL_RINGS + 1)
        for z0, z1 in zip(heights[:-1], heights[1:], strict=True):
            r0, r1 = float(self.radius_at(z0)), float(self.radius_at(z1))
            tilt = np.arctan2(r1 - r0, z1 - z0)
            middle = (r0 + r1) / 2 - self.wall / 2
            half = np.array([self.wall / 2, middle * np.tan(np.pi / BOWL_PIECES) * 1.05 + self.wall / 2,
                             np.hypot(r1 - r0, z1 - z0) / 2 + self.wall / 2])  # fmt: skip
            lean = np.array([[np.cos(tilt), 0, np.sin(tilt)], [0, 1, 0], [-np.sin(tilt), 0, np.cos(tilt)]])
            for k in range(BOWL_PIECES):
                a = 2 * np.pi * k / BOWL_PIECES
                turn = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
                boxes.append(
                    (np.array([middle * np.cos(a), middle * np.sin(a), (z0 + z1) / 2]), half, turn @ lean)
                )
        return boxes

    def density(self) -> float:
        """kg/m^3 of its collision pieces (bottom disc, wall boxes) so that they weigh ``mass``."""
        volume = np.pi * self.bottom_disc_radius**2 * self.bottom
        volume += sum(8 * np.prod(half) for _, half, _ in self.wall_boxes())
        return float(self.mass / volume)

    def params(self) -> dict[str, float]:
        """truth.json's parameters (m): the project's bowl keys, as ``_demo_truth``'s bowl writes them."""
        return {
            "outer_radius": self.outer_radius,
            "base_radius": self.base_radius,
            "inner_radius": self.inner_radius,
            "wall_thickness": self.wall,
            "bottom_thickness": self.bottom,
            "height": self.height,
        }

    def holds(self, points: np.ndarray) -> np.ndarray:
        """Whether each point (bowl frame, m, (N, 3)) is inside: within the inner surface at its height (so
        within the rim's inner radius), above the floor and below the rim; (N,) bool. A sphere on the table
        under the bowl's flaring wall is not inside."""
        radial, z = np.hypot(points[:, 0], points[:, 1]), points[:, 2]
        return (radial < self.radius_at(z) - self.wall) & (z > self.bottom) & (z < self.height)


@dataclass(frozen=True)
class Contents:
    """The cup's contents: equal spheres standing for grains or a liquid.

    Attributes:
        count: How many.
        radius: Each sphere's radius (m).
        density: kg/m^3 (glass beads: about 2500).
    """

    count: int
    radius: float
    density: float

    @property
    def mass_each(self) -> float:
        """One sphere's mass (kg)."""
        return float(4.0 / 3.0 * np.pi * self.radius**3 * self.density)

    def lattice(self, cup: Cup, fill: float) -> np.ndarray:
        """Where the spheres start, packed in layers of a hexagonal grid on the cup's floor, cup frame (m),
        (count, 3), each layer's grid shifted from the last one's.

        Args:
            cup: The cup they are packed in.
            fill: The highest share of the cup's inner depth the layers may take.

        Raises:
            ValueError: If they do not fit.
        """
        step = 2 * self.radius + LATTICE_GAP
        reach = cup.inner_radius - self.radius - LATTICE_GAP
        if reach < 0:
            raise ValueError(f"a {self.radius * 1000:.1f} mm sphere does not fit the cup")
        k = int(np.ceil(reach / step)) + 1
        i, j = np.meshgrid(np.arange(-k, k + 1), np.arange(-k, k + 1))
        grid = np.c_[(i + (j % 2) / 2).ravel() * step, j.ravel() * step * np.sqrt(3) / 2]
        centres: list[np.ndarray] = []
        z = cup.bottom + self.radius + LATTICE_GAP / 2
        top = cup.bottom + fill * (cup.height - cup.bottom) - self.radius
        layer = 0
        while len(centres) < self.count:
            if z > top:
                raise ValueError(
                    f"{self.count} spheres of {self.radius * 1000:.1f} mm radius fill the cup past "
                    f"{fill:.0%} of its depth (lower --count or --radius)"
                )
            ring = grid + (layer % 2) * np.array([step / 2, step * np.sqrt(3) / 6])
            ring = ring[np.hypot(ring[:, 0], ring[:, 1]) <= reach]
            ring = ring[np.argsort(np.hypot(ring[:, 0], ring[:, 1]), kind="stable")]
            centres += [np.r_[p, z] for p in ring[: self.count - len(centres)]]
            z += step
            layer += 1
        return np.array(centres)


@dataclass(frozen=True)
class PourLayout:
    """Everything placed: the cup, its contents, the bowl, the hand's choices and the camera (m, rad).

    Attributes:
        cup: The cup, standing on the table at the start.
        bowl: The bowl, resting on the table.
        contents: The spheres in the cup.
        side: +1 or -1: the hand comes at the cup from ``side * n``.
        grasp_height: The grasp centre's height above the cup's bottom while it holds it (m).
        lift: How far the hand lifts the cup off the table (m).
        tilt: How far it tips the cup towards the bowl to pour (rad).
        miss: A failing demo pours this far short of the bowl, along ``u`` (m); 0 pours into it.
        colours: ``cup``, ``bowl`` and ``contents`` RGBA.
        camera_azimuth: Direction from the scene to the camera, from world +x about z (rad).
        camera_elevation: Angle of that direction above the table (rad).
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    cup: Cup
    bowl: Bowl
    contents: Contents
    side: int
    grasp_height: float
    lift: float
    tilt: float
    miss: float
    colours: dict[str, list[float]]
    camera_azimuth: float
    camera_elevation: float
    camera_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    camera_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    fovy: float = 45.0
    width: int = 320
    height: int = 240

    @property
    def u(self) -> np.ndarray:
        """Level unit vector from the cup's start towards the bowl, world frame, (3,)."""
        d = self.bowl.xy - self.cup.xy
        return np.r_[d / np.linalg.norm(d), 0.0]

    @property
    def n(self) -> np.ndarray:
        """Level unit vector ``z x u``: the axis the cup is tipped about, world frame, (3,)."""
        u = self.u
        return np.array([-u[1], u[0], 0.0])

    @property
    def distance(self) -> float:
        """Level distance from the cup's axis to the bowl's at the start (m)."""
        return float(np.linalg.norm(self.bowl.xy - self.cup.xy))
