"""The hang scene's objects and frames: a rack fixed in place (a mug tree on the table, or a hook board on a
wall), a mug with a handle, their layout.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *post frame* of a mug tree has
its origin where the post's axis meets the table, z up, turned by the rack's ``yaw`` about world z;
peg i leaves the post's axis at ``peg_heights[i]``. The post frame of a hook board (``WallRack``) has
its origin at the middle of the plate's back face's bottom edge (on the wall), x out of the wall into
the room, z up, y = z x x; peg i leaves the plate's front face at (``plate_thickness``,
``peg_offsets[i]``, ``peg_heights[i]``). Either way a peg runs along (cos e cos a, cos e sin a, sin e),
e the pegs' elevation and a its azimuth. The rack's *local frame* (truth.json's) has the post frame's
axes and its origin at the centre of the rack's bounding box. The *mug frame* has its origin at the
middle of the mug's bottom, z along its axis, x towards its handle; the handle's loop opens along y.

The *peg frame* of the peg the mug is hung on: ``u`` its level direction from its root outwards,
``v = z x u``. The mug hangs with its handle on the peg, its x axis along ``side * v`` (its body on the
far side from the camera), so that the peg runs through the loop along the mug's y.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from _demo_gripper import PAD_HALF

# Geom groups of the two objects (one object alone is rendered by switching the other off);
# 0 (environment), 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's.
GROUP_MUG = 1
GROUP_RACK = 2

TABLE_HALF = (0.85, 0.65)  # table top half extents (m)
WALL_PIECES = 24  # boxes round the mug's wall
HOOK_WALL = (
    0.04,
    1.6,
    1.0,
)  # the wall a hook board is screwed to: thickness, width, height above the table (m)


def rotation_z(angle: float) -> np.ndarray:
    """The turn by ``angle`` (rad) about world z, (3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def wall_ring(outer_radius: float, wall: float, height: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Centre, full extents and turn about z (cup frame: origin at the bottom's middle, z up; m and rad) of
    ``WALL_PIECES`` boxes round a straight cup's wall from its bottom to its rim, their outer faces tangent to
    ``outer_radius``; the first faces +x."""
    length = 2 * outer_radius * np.tan(np.pi / WALL_PIECES)
    middle = outer_radius - wall / 2
    boxes = []
    for k in range(WALL_PIECES):
        angle = 2 * np.pi * k / WALL_PIECES
        centre = np.array([middle * np.cos(angle), middle * np.sin(angle), height / 2])
        boxes.append((centre, np.array([wall, length, height]), angle))
    return boxes


class PegRack:
    """What a mug tree and a hook board share: straight pegs of one radius, length and elevation, each at its
    own height and azimuth, in a post frame at ``foot`` turned by ``yaw`` about world z (module doc)."""

    on_wall: ClassVar[bool] = False
    peg_radius: float
    peg_length: float
    peg_elevation: float
    peg_heights: tuple[float, ...]
    peg_azimuths: tuple[float, ...]
    foot: np.ndarray
    yaw: float

    @property
    def rotation(self) -> np.ndarray:
        """World-from-post-frame rotation, (3, 3)."""
        return rotation_z(self.yaw)

    def direction(self, index: int) -> np.ndarray:
        """Peg ``index``'s unit direction from root to tip, post frame, (3,)."""
        e, a = self.peg_elevation, self.peg_azimuths[index]
        return np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])

    def peg_root(self, index: int) -> np.ndarray:
        """Where peg ``index``'s axis starts, post frame (m), (3,)."""
        raise NotImplementedError

    def peg_ends(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Peg ``index``'s root and tip centre, post frame (m), (3,) each."""
        root = self.peg_root(index)
        return root, root + self.peg_length * self.direction(index)

    def to_world(self, points: np.ndarray) -> np.ndarray:
        """Post-frame points (m), (..., 3), in the world frame."""
        return np.asarray(points) @ self.rotation.T + self.foot

    def _widened_by_pegs(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``low`` and ``high`` (post frame, m) widened to hold every peg's axis from root to tip widened by
        the peg's radius every way."""
        for index in range(len(self.peg_heights)):
            ends = np.stack(self.peg_ends(index))
            low = np.minimum(low, ends.min(axis=0) - self.peg_radius)
            high = np.maximum(high, ends.max(axis=0) + self.peg_radius)
        return low, high


@dataclass(frozen=True)
class Rack(PegRack):
    """A mug tree: a round base, a post on it and straight pegs rising from the post's axis.

    Attributes:
        base_radius: Base disc radius (m).
        base_thickness: Base disc thickness (m).
        post_radius: Post radius (m).
        post_height: Table to the post's top (m).
        peg_radius: Peg radius (m).
        peg_length: From the post's axis to the tip's centre, along the peg (m).
        peg_elevation: Every peg's tilt up from the horizontal (rad).
        peg_heights: Where each peg's axis meets the post's axis, above the table (m).
        peg_azimuths: Each peg's direction about the post frame's z, from its +x (rad).
        foot: The post's axis on the table, world frame (m), (3,).
        yaw: The post frame's turn about world z (rad).
    """

    base_radius: float
    base_thickness: float
    post_radius: float
    post_height: float
    peg_radius: float
    peg_length: float
    peg_elevation: float
    peg_heights: tuple[float, ...]
    peg_azimuths: tuple[float, ...]
    foot: np.ndarray
    yaw: float

    @property
    def floor(self) -> float:
        """What a hung mug must clear (m above the table): the base's top."""
        return self.base_thickness

    def peg_root(self, index: int) -> np.ndarray:
        """Where peg ``index``'s axis starts, on the post's axis, post frame (m), (3,)."""
        return np.array([0.0, 0.0, self.peg_heights[index]])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The rack's bounding box (low, high), post frame (m): the base, the post and every peg's axis
        from root to tip widened by the peg's radius every way."""
        reach = max(self.base_radius, self.post_radius)
        low, high = np.array([-reach, -reach, 0.0]), np.array([reach, reach, self.post_height])
        return self._widened_by_pegs(low, high)

    def params(self) -> dict[str, float | int]:
        """The rack's truth.json parameters (m, rad; ``peg_count`` a count)."""
        params: dict[str, float | int] = {
            "base_radius": self.base_radius,
            "base_thickness": self.base_thickness,
            "post_radius": self.post_radius,
            "post_height": self.post_height,
            "peg_radius": self.peg_radius,
            "peg_length": self.peg_length,
            "peg_elevation": self.peg_elevation,
            "peg_count": len(self.peg_heights),
        }
        for index, (height, azimuth) in enumerate(zip(self.peg_heights, self.peg_azimuths, strict=True)):
            params[f"peg{index}_height"] = height
            params[f"peg{index}_azimuth"] = azimuth
        return params


@dataclass(frozen=True)
class WallRack(PegRack):
    """A hook board screwed to a wall: a flat plate, its back on the wall, and straight pegs out of its front.

    Attributes:
        plate_width: Along the wall (m).
        plate_thickness: Out of the wall (m).
        post_height: The plate's height, bottom edge to top edge (m).
        peg_radius: Peg radius (m).
        peg_length: From the plate's front face to the tip's centre, along the peg (m).
        peg_elevation: Every peg's tilt up from the horizontal (rad).
        peg_heights: Where each peg's axis meets the plate's front face, above its bottom edge (m).
        peg_offsets: Where each peg's axis meets the front face along the plate (post frame y) from its
            middle (m).
        peg_azimuths: Each peg's direction about the post frame's z, from its +x (out of the wall) (rad).
        foot: The middle of the plate's back face's bottom edge, world frame (m), (3,).
        yaw: The post frame's turn about world z (rad): the wall's normal into the room is at this azimuth.
    """

    on_wall: ClassVar[bool] = True
    plate_width: float
    plate_thickness: float
    post_height: float
    peg_radius: float
    peg_length: float
    peg_elevation: float
    peg_heights: tuple[float, ...]
    peg_offsets: tuple[float, ...]
    peg_azimuths: tuple[float, ...]
    foot: np.ndarray
    yaw: float

    @property
    def floor(self) -> float:
        """What a hung mug must clear (m above the table): the table (the wall rack stands on nothing)."""
        return 0.0

    def peg_root(self, index: int) -> np.ndarray:
        """Where peg ``index``'s axis starts, on the plate's front face, post frame (m), (3,)."""
        return np.array([self.plate_thickness, self.peg_offsets[index], self.peg_heights[index]])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The rack's bounding box (low, high), post frame (m): the plate and every peg's axis from root to
        tip widened by the peg's radius every way, nothing behind the wall (x >= 0)."""
        half = self.plate_width / 2
        low = np.array([0.0, -half, 0.0])
        high = np.array([self.plate_thickness, half, self.post_height])
        low, high = self._widened_by_pegs(low, high)
        low[0] = max(low[0], 0.0)
        return low, high

    def wall_box(self) -> tuple[np.ndarray, np.ndarray]:
        """The wall behind the plate (``HOOK_WALL``), centred on the table's edge under it: its centre in the
        post frame and its half extents along the post frame's axes (m), (3,) each.

        The wall's front face is the post frame's x = 0; it stands on the table's top."""
        thickness, width, height = HOOK_WALL
        along = float(
            self.rotation[:, 1] @ self.foot
        )  # the foot's offset along the wall from the edge's middle
        centre = np.array([-thickness / 2, -along, height / 2 - self.foot[2]])
        return centre, np.array([thickness, width, height]) / 2

    def params(self) -> dict[str, float | int]:
        """The rack's truth.json parameters (m, rad; ``peg_count`` a count): the wall form's keys."""
        params: dict[str, float | int] = {
            "plate_width": self.plate_width,
            "plate_thickness": self.plate_thickness,
            "post_height": self.post_height,
            "peg_radius": self.peg_radius,
            "peg_length": self.peg_length,
            "peg_elevation": self.peg_elevation,
            "peg_count": len(self.peg_heights),
        }
        for index in range(len(self.peg_heights)):
            params[f"peg{index}_height"] = self.peg_heights[index]
            params[f"peg{index}_offset"] = self.peg_offsets[index]
            params[f"peg{index}_azimuth"] = self.peg_azimuths[index]
        return params


@dataclass(frozen=True)
class Mug:
    """A straight open cup with a C-shaped handle on its +x side (the project's cup-with-handle model).

    Attributes:
        outer_radius: Outer radius of the wall (m).
        wall: Wall thickness (m).
        bottom: Bottom thickness (m).
        height: Bottom to rim (m).
        handle_reach: From the axis to the handle's outer edge (m).
        handle_bottom: The handle's lower edge above the mug's bottom (m).
        handle_top: Its upper edge above the bottom (m).
        handle_thickness: Its bars' thickness (m).
        handle_width: Its width across, along the mug's y (m).
        mass: Kilograms.
        xy: Its axis on the table at the start, world frame (m), (2,).
        yaw: Its turn about world z at the start (rad).
    """

    outer_radius: float
    wall: float
    bottom: float
    height: float
    handle_reach: float
    handle_bottom: float
    handle_top: float
    handle_thickness: float
    handle_width: float
    mass: float
    xy: np.ndarray
    yaw: float

    @property
    def inner_radius(self) -> float:
        """The wall's inner radius (m)."""
        return self.outer_radius - self.wall

    @property
    def loop(self) -> np.ndarray:
        """The middle of the handle's opening (between wall and bar, between the arms), mug frame (m)."""
        x = (self.outer_radius + self.handle_reach - self.handle_thickness) / 2
        return np.array([x, 0.0, (self.handle_bottom + self.handle_top) / 2])

    @property
    def grasp(self) -> np.ndarray:
        """Where the gripper's grasp centre holds it, mug frame (m): midway between the wall's inner face and
        the bar's outer face, the finger pads' tops level with the handle's top."""
        return np.array([(self.inner_radius + self.handle_reach) / 2, 0.0, self.handle_top - PAD_HALF[2]])

    @property
    def opening(self) -> tuple[float, float]:
        """The loop's opening (m): its width (wall to bar) and its height (arm to arm)."""
        t = self.handle_thickness
        return self.handle_reach - t - self.outer_radius, self.handle_top - self.handle_bottom - 2 * t

    @property
    def size(self) -> np.ndarray:
        """Full bounding-box extents, mug frame (m), (3,)."""
        r = self.outer_radius
        return np.array([r + self.handle_reach, max(2 * r, self.handle_width), self.height])

    @property
    def centre(self) -> np.ndarray:
        """The bounding box's centre, mug frame (m), (3,)."""
        return np.array([(self.handle_reach - self.outer_radius) / 2, 0.0, self.height / 2])

    def handle_boxes(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Centre and full extents (mug frame, m) of the lower arm, the upper arm and the outer bar; the
        arms start at the wall's mid-line."""
        t, w = self.handle_thickness, self.handle_width
        root, out = self.outer_radius - self.wall / 2, self.handle_reach
        z0, z1 = self.handle_bottom, self.handle_top
        return [
            (np.array([(root + out) / 2, 0.0, z0 + t / 2]), np.array([out - root, w, t])),
            (np.array([(root + out) / 2, 0.0, z1 - t / 2]), np.array([out - root, w, t])),
            (np.array([out - t / 2, 0.0, (z0 + z1) / 2]), np.array([t, w, z1 - z0 - 2 * t])),
        ]

    def outline(self, samples: int = 32) -> np.ndarray:
        """Points whose lowest says the mug's lowest: rings round its bottom and rim, the handle's corners,
        mug frame (m), (N, 3)."""
        angle = np.linspace(0, 2 * np.pi, samples, endpoint=False)
        ring = np.c_[self.outer_radius * np.cos(angle), self.outer_radius * np.sin(angle), np.zeros(samples)]
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        corners = [c + signs * s / 2 for c, s in self.handle_boxes()]
        return np.concatenate([ring, ring + [0, 0, self.height], *corners])

    def wall_boxes(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The boxes round the wall (``wall_ring``); the first faces the handle."""
        return wall_ring(self.outer_radius, self.wall, self.height)

    def density(self) -> float:
        """kg/m^3 of its collision pieces (bottom disc, wall boxes, handle boxes) so that they weigh ``mass``."""
        volume = np.pi * self.outer_radius**2 * self.bottom
        volume += sum(np.prod(size) for _, size, _ in self.wall_boxes())
        volume += sum(np.prod(size) for _, size in self.handle_boxes())
        return float(self.mass / volume)

    def centre_of_mass(self) -> np.ndarray:
        """Where its pieces' mass is centred, mug frame (m), (3,) (the wall's ring is centred on the axis)."""
        disc = np.pi * self.outer_radius**2 * self.bottom
        walls = sum(np.prod(size) for _, size, _ in self.wall_boxes())
        handle = [(np.prod(size), centre) for centre, size in self.handle_boxes()]
        moment = disc * np.array([0.0, 0.0, self.bottom / 2]) + walls * np.array([0.0, 0.0, self.height / 2])
        moment += sum(v * c for v, c in handle)
        return moment / (disc + walls + sum(v for v, _ in handle))

    def params(self) -> dict[str, float]:
        """The mug's truth.json parameters (m): the project's cup and handle keys."""
        return {
            "outer_radius": self.outer_radius,
            "inner_radius": self.inner_radius,
            "wall_thickness": self.wall,
            "bottom_thickness": self.bottom,
            "height": self.height,
            "handle_reach": self.handle_reach,
            "handle_bottom": self.handle_bottom,
            "handle_top": self.handle_top,
            "handle_thickness": self.handle_thickness,
            "handle_width": self.handle_width,
        }


@dataclass(frozen=True)
class HangLayout:
    """Everything placed: the rack, the mug, the peg it goes on and the camera (metres, radians).

    Attributes:
        rack: The mug tree or the hook board.
        mug: The mug, standing on the table at the start.
        peg: Index of the peg the mug is hung on.
        side: +1 or -1: the hung mug's x axis (to its handle) is ``side * v`` of the peg frame.
        reach: Where the handle's loop hangs: its level distance from the peg's root (m; on a mug tree the
            root is on the post's axis).
        miss: A failing demo lets go with the handle this far short of the peg's tip (m); 0 hangs it.
        colours: ``mug`` and ``rack`` RGBA (and a hook board's ``wall``).
        camera_azimuth: Direction from the scene to the camera, from world +x about z (rad).
        camera_elevation: Angle of that direction above the table (rad).
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    rack: Rack | WallRack
    mug: Mug
    peg: int
    side: int
    reach: float
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
    def peg_axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hung peg's ``u`` (level, from its root outwards), ``v`` (z x u) and unit direction, world frame."""
        direction = self.rack.rotation @ self.rack.direction(self.peg)
        u = np.r_[direction[:2] / np.linalg.norm(direction[:2]), 0.0]
        return u, np.array([-u[1], u[0], 0.0]), direction

    @property
    def hang_yaw(self) -> float:
        """The mug's turn about world z while it is threaded on the peg (its x along ``side * v``)."""
        u, _, _ = self.peg_axes
        return float(np.arctan2(u[1], u[0]) + self.side * np.pi / 2)

    def on_peg(self, along: float) -> np.ndarray:
        """The hung peg's axis ``along`` metres from its root (beyond the tip past its length), world (3,)."""
        root, _ = self.rack.peg_ends(self.peg)
        _, _, direction = self.peg_axes
        return self.rack.to_world(root) + along * direction
