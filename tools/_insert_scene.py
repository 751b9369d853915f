"""The insert scene's objects and frames: a holder with a round hole (a socket) standing on the table, a
round peg (a plug, a dowel) standing beside it, their layout.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *socket frame* is the project's
``cup`` kind's local frame (``real2gym_addon.geometry.kinds.cup``): its origin at the centre of the socket's
bounding box, z up along the hole's axis. The socket is a round block of ``outer_radius`` and ``height``
with a round hole of ``inner_radius`` from its top down to ``bottom`` above its base: the project's cup with
a wall ``outer_radius - inner_radius`` thick. It collides as that kind does (``Shape.collision_pieces``: a
bottom disc and a ring of 16 wall boxes, whose inner faces are tangent to ``inner_radius``). The *peg frame*
is the project's ``cylinder`` kind's: its origin at the cylinder's centre, z along its axis. Neither is
turned about z (both are round; the socket's 16 wall boxes are turned as the kind has them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from real2gym_addon.geometry.pieces import GEOM_BOX, CollisionPiece
from real2gym_addon.geometry.shapes import Shape

# Geom groups of the two objects (one object alone is rendered by switching the other off);
# 0 (environment), 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's.
GROUP_PEG = 1
GROUP_SOCKET = 2


@dataclass(frozen=True)
class Socket:
    """A round holder with a round hole from its top (the project's ``cup`` kind, straight-walled).

    Attributes:
        outer_radius: The block's radius (m).
        inner_radius: The hole's radius (m).
        height: The table to its top (m).
        bottom: The hole's bottom above the block's base (m): the cup's ``bottom_thickness``.
        mass: Kilograms.
        xy: Its axis on the table, world frame (m), (2,).
    """

    outer_radius: float
    inner_radius: float
    height: float
    bottom: float
    mass: float
    xy: np.ndarray

    @property
    def hole_depth(self) -> float:
        """From its top down to the hole's bottom (m)."""
        return self.height - self.bottom

    @property
    def size(self) -> np.ndarray:
        """Full extents of its bounding box (m), (3,)."""
        return np.array([2 * self.outer_radius, 2 * self.outer_radius, self.height])

    @property
    def centre(self) -> np.ndarray:
        """The socket frame's origin at the start, world frame (m), (3,)."""
        return np.r_[self.xy, self.height / 2]

    def params(self) -> dict[str, float]:
        """truth.json's parameters (m): the project's ``cup`` keys."""
        return {
            "outer_radius": self.outer_radius,
            "inner_radius": self.inner_radius,
            "wall_thickness": self.outer_radius - self.inner_radius,
            "bottom_thickness": self.bottom,
        }

    def pieces(self) -> list[CollisionPiece]:
        """Its collision pieces, socket frame: the project's cup's (a bottom disc, then 16 wall boxes)."""
        return Shape("cup", tuple(self.size.tolist()), self.params()).collision_pieces()

    def volume(self) -> float:
        """Of its collision pieces, added up as MuJoCo weighs them (m^3; the wall boxes overlap a little where
        they meet)."""
        return float(sum(8 * np.prod(p.size) if p.kind == GEOM_BOX else 2 * np.pi * p.size[0] ** 2 * p.size[1]
                         for p in self.pieces()))  # fmt: skip


@dataclass(frozen=True)
class Peg:
    """A round peg standing upright (the project's ``cylinder`` kind).

    Attributes:
        radius: Its radius (m).
        length: Its length along its axis (m).
        mass: Kilograms.
        xy: Its axis on the table at the start, world frame (m), (2,).
    """

    radius: float
    length: float
    mass: float
    xy: np.ndarray

    @property
    def size(self) -> np.ndarray:
        """Full extents of its bounding box (m), (3,): diameter, diameter, length."""
        return np.array([2 * self.radius, 2 * self.radius, self.length])

    def density(self) -> float:
        """kg/m^3 so that it weighs ``mass``."""
        return float(self.mass / (np.pi * self.radius**2 * self.length))


def lowest_point(centre: np.ndarray, axis: np.ndarray, radius: float, length: float) -> float:
    """The height (m) of a cylinder's lowest point, given its centre (world, m, (3,)) and unit axis (world,
    (3,))."""
    up = abs(float(axis[2]))
    return float(centre[2] - length / 2 * up - radius * np.sqrt(max(1.0 - up * up, 0.0)))


@dataclass(frozen=True)
class InsertLayout:
    """Everything placed: the socket, the peg, the hand's choices and the camera (m, rad).

    Attributes:
        socket: The holder, standing on the table.
        peg: The peg, standing on the table beside it at the start.
        clearance: The hole's radius less the peg's as drawn (m): what the demo inserts with.
        narrow: A failing demo's hole is this much narrower than the peg's radius (m); 0 for none.
        grasp_below_top: The grasp centre below the peg's top (m).
        carry_clearance: The peg's bottom over the socket's top while it is carried over (m).
        set_gap: The peg is let go with its bottom this far over the hole's bottom (m).
        yaw: The fingers' opening direction, from world +y about z (rad): along the line from the peg's start
            to the socket's axis.
        colours: ``peg`` and ``socket`` RGBA.
        camera_azimuth: Direction from the scene to the camera, from world +x about z (rad).
        camera_elevation: Angle of that direction above the table (rad).
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    socket: Socket
    peg: Peg
    clearance: float
    narrow: float
    grasp_below_top: float
    carry_clearance: float
    set_gap: float
    yaw: float
    colours: dict[str, list[float]]
    camera_azimuth: float
    camera_elevation: float
    camera_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    camera_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    fovy: float = 45.0
    width: int = 320
    height: int = 240

    @property
    def intended_depth(self) -> float:
        """How far under the socket's top the script sets the peg's bottom (m): the hole's depth (it rests
        on the hole's bottom)."""
        return self.socket.hole_depth

    def grasp_height(self, bottom: float) -> float:
        """The grasp centre's height (m) holding the peg upright with its bottom at ``bottom`` (m)."""
        return bottom + self.peg.length - self.grasp_below_top
