"""The dish rack scene's objects and frames: a one-slot plate stand and a dish rack standing on the table, a
plate standing on its edge in the stand's slot, their layout.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *rack frame* of the stand and of
the dish rack is the project's ``dish_rack`` kind's local frame (``real2gym_addon.geometry.kinds.dish_rack``):
its origin at the centre of the rack's outer box, z up, its size ``[depth, width, height]`` along x, y and
z; each rack is turned by its ``yaw`` about world z. A base box ``base_thickness`` thick fills the whole
footprint on the table; ``slot_count + 1`` upright dividers, each ``pitch - slot_width`` thick along y and
spanning the full depth from the base's top to the full height, stand with divider k's centre at
y = (k - slot_count / 2) * pitch, so that slot j (0-based), the gap ``slot_width`` wide between dividers j
and j + 1, is centred at y = (j + 0.5 - slot_count / 2) * pitch. The width is exactly
``slot_count * pitch`` plus a divider's thickness: the outer dividers' outer faces are the box's sides.

The *plate frame* is the project's ``plate`` kind's standing on its edge (``on_edge``): its origin at the
disc's centre, the disc's axis along its y, its size ``[2 radius, thickness, 2 radius]``; the plate is
turned about world z so that its y runs along the racks' y (its faces across the row of slots).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from _hang_scene import rotation_z

# Geom groups of the three objects (one object alone is rendered by switching the others off);
# 0 (environment), 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's.
GROUP_PLATE = 1
GROUP_STAND = 2
GROUP_RACK = 4


@dataclass(frozen=True)
class DishRack:
    """A dish rack: a base with a row of upright dividers on it, the slots between them (the project's
    ``dish_rack`` kind).

    Attributes:
        depth: Outer extent along the rack frame's x (m): each divider's length.
        height: Outer extent along z, the table to the dividers' tops (m).
        base_thickness: The base box's thickness (m).
        slot_count: How many slots.
        pitch: From a divider's centre to the next one's, along y (m).
        slot_width: The gap between two neighbouring dividers, along y (m).
        xy: The centre of its outer box on the table, world frame (m), (2,).
        yaw: Its turn about world z (rad): its y runs along (-sin yaw, cos yaw).
    """

    depth: float
    height: float
    base_thickness: float
    slot_count: int
    pitch: float
    slot_width: float
    xy: np.ndarray
    yaw: float

    @property
    def divider_thickness(self) -> float:
        """Each divider's thickness along y (m)."""
        return self.pitch - self.slot_width

    @property
    def width(self) -> float:
        """Outer extent along y (m): the slots' pitches and one divider."""
        return self.slot_count * self.pitch + self.divider_thickness

    @property
    def size(self) -> np.ndarray:
        """Full outer extents, rack frame (m), (3,): depth, width, height."""
        return np.array([self.depth, self.width, self.height])

    @property
    def rotation(self) -> np.ndarray:
        """World-from-rack-frame rotation, (3, 3)."""
        return rotation_z(self.yaw)

    @property
    def centre(self) -> np.ndarray:
        """The rack frame's origin, world frame (m), (3,)."""
        return np.r_[self.xy, self.height / 2]

    def to_world(self, points: np.ndarray) -> np.ndarray:
        """Rack-frame points (m), (..., 3), in the world frame."""
        return np.asarray(points) @ self.rotation.T + self.centre

    def to_local(self, points: np.ndarray) -> np.ndarray:
        """World points (m), (..., 3), in the rack frame."""
        return (np.asarray(points) - self.centre) @ self.rotation

    def divider_y(self, index: int) -> float:
        """Divider ``index``'s centre, rack frame y (m)."""
        return (index - self.slot_count / 2) * self.pitch

    def slot_y(self, index: int) -> float:
        """Slot ``index``'s centre, rack frame y (m)."""
        return (index + 0.5 - self.slot_count / 2) * self.pitch

    @property
    def base_top(self) -> float:
        """The base's top face above the table (m): what a plate in a slot stands on."""
        return self.base_thickness

    def boxes(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Name, centre and half extents (rack frame, m, (3,) each) of its boxes, which do not overlap:
        ``base``, then ``divider<k>`` for k = 0 ... ``slot_count``."""
        d, w, h, b = self.depth / 2, self.width / 2, self.height / 2, self.base_thickness
        boxes = [("base", np.array([0.0, 0.0, -h + b / 2]), np.array([d, w, b / 2]))]
        half = np.array([d, self.divider_thickness / 2, h - b / 2])
        for index in range(self.slot_count + 1):
            boxes.append((f"divider{index}", np.array([0.0, self.divider_y(index), b / 2]), half))
        return boxes

    def params(self) -> dict[str, float | int]:
        """truth.json's parameters (m; ``slot_count`` a count): the project's ``dish_rack`` keys."""
        return {
            "base_thickness": self.base_thickness,
            "slot_count": self.slot_count,
            "pitch": self.pitch,
            "slot_width": self.slot_width,
        }


@dataclass(frozen=True)
class Plate:
    """A flat plate standing on its edge (the project's ``plate`` kind, ``on_edge``).

    Attributes:
        radius: The disc's radius (m).
        thickness: Its extent along its axis (m): what the fingers pinch.
        mass: Kilograms.
    """

    radius: float
    thickness: float
    mass: float

    @property
    def size(self) -> np.ndarray:
        """Full extents, plate frame (m), (3,): its axis along y."""
        return np.array([2 * self.radius, self.thickness, 2 * self.radius])

    def corners(self) -> np.ndarray:
        """The eight corners of its box, plate frame (m), (8, 3)."""
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        return signs * self.size / 2

    def density(self) -> float:
        """kg/m^3 so that it weighs ``mass``."""
        return float(self.mass / (np.pi * self.radius**2 * self.thickness))


@dataclass(frozen=True)
class DishRackLayout:
    """Everything placed: the stand, the dish rack, the plate, the slot it goes in, the hand's choices and the
    camera (m, rad).

    Attributes:
        stand: The one-slot stand holding the plate at the start.
        rack: The dish rack the plate goes into.
        plate: The plate, standing in the stand's slot at the start, its y along the stand's.
        slot: The dish rack's slot the plate goes into.
        narrow: A failing demo: the dish rack's slots are narrower than the plate is thick.
        grasp_below_top: The grasp centre below the plate's top (m).
        clearance: The plate's bottom over the higher rack's top while it is carried (m).
        set_gap: The plate is let go with its bottom this far over the dish rack's base (m).
        colours: ``plate``, ``stand`` and ``dish_rack`` RGBA.
        camera_azimuth: Direction from the scene to the camera, from world +x about z (rad).
        camera_elevation: Angle of that direction above the table (rad).
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    stand: DishRack
    rack: DishRack
    plate: Plate
    slot: int
    narrow: bool
    grasp_below_top: float
    clearance: float
    set_gap: float
    colours: dict[str, list[float]]
    camera_azimuth: float
    camera_elevation: float
    camera_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    camera_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    fovy: float = 45.0
    width: int = 320
    height: int = 240

    @property
    def start(self) -> np.ndarray:
        """The plate's centre at the start, standing upright on the stand's base in its slot, world (m), (3,)."""
        stand = self.stand
        return stand.to_world(
            np.array([0.0, stand.slot_y(0), stand.base_top + self.plate.radius - stand.height / 2])
        )

    @property
    def place(self) -> np.ndarray:
        """The plate's centre set upright in its slot on the dish rack's base, world (m), (3,)."""
        rack = self.rack
        return rack.to_world(
            np.array([0.0, rack.slot_y(self.slot), rack.base_top + self.plate.radius - rack.height / 2])
        )

    @property
    def place_yaw(self) -> float:
        """The plate's (and the hand's) turn about world z in the slot (rad): the dish rack's yaw, or it turned
        by half a turn, whichever is nearer the stand's (the plate is the same either way round)."""
        turns = np.round((self.stand.yaw - self.rack.yaw) / np.pi)
        return float(self.rack.yaw + turns * np.pi)

    @property
    def carry_floor(self) -> float:
        """The higher of the two racks' tops above the table (m): the plate is carried over it."""
        return max(self.stand.height, self.rack.height)

    def grasp_height(self, bottom: float) -> float:
        """The grasp centre's height (m) holding the plate upright with its lowest point at ``bottom`` (m)."""
        return bottom + 2 * self.plate.radius - self.grasp_below_top
