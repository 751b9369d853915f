"""The shelve scene's objects and frames: a shelf standing on the table, a book-like box, their layout.

Frames: world z up, z = 0 on the table top (docs/data-contract.md). The *shelf frame* is the project's
``shelf`` kind's local frame (``real2gym_addon.geometry.kinds.shelf``): its origin at the centre of the
shelf's outer box, z up, the open front facing +x, the width along y; the shelf is turned by ``yaw``
about world z. Its two sides stand at y = +-width/2 (``side_thickness`` thick, the full depth and
height), its back at x = -depth/2 between them (``back_thickness``, the full height), and each board
spans between the sides from the back's front face to the front, ``board_thickness`` thick, its top face
``board_heights[i]`` above the shelf's bottom (the table). The *book frame* has its origin at the box's
centre, x along its length, y across its width (the fingers close along it), z up.

The book is set on board ``board`` (the middle one) with its length along the shelf's width: its centre at
``place`` (shelf frame, x and y), its front face ``front_gap`` behind the board's front edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from _hang_scene import rotation_z

# Geom groups of the two objects (one object alone is rendered by switching the other off);
# 0 (environment), 3 (gripper) and 5 (hidden collision geoms) are _demo_scene's.
GROUP_BOOK = 1
GROUP_SHELF = 2


@dataclass(frozen=True)
class Shelf:
    """A shelf: boards between two sides, with a back, open on its front (the project's ``shelf`` kind).

    Attributes:
        depth: Outer extent along the shelf frame's x, back to front (m).
        width: Outer extent along y, side to side (m).
        height: Outer extent along z, the table to the sides' top (m).
        side_thickness: Each side wall's thickness (m).
        back_thickness: The back wall's thickness (m).
        board_thickness: Each board's thickness (m).
        board_heights: Each board's top face above the shelf's bottom, lowest first (m).
        xy: The centre of its outer box on the table, world frame (m), (2,).
        yaw: Its turn about world z (rad): its front faces (cos yaw, sin yaw).
    """

    depth: float
    width: float
    height: float
    side_thickness: float
    back_thickness: float
    board_thickness: float
    board_heights: tuple[float, ...]
    xy: np.ndarray
    yaw: float

    @property
    def size(self) -> np.ndarray:
        """Full outer extents, shelf frame (m), (3,): depth, width, height."""
        return np.array([self.depth, self.width, self.height])

    @property
    def rotation(self) -> np.ndarray:
        """World-from-shelf-frame rotation, (3, 3)."""
        return rotation_z(self.yaw)

    @property
    def centre(self) -> np.ndarray:
        """The shelf frame's origin, world frame (m), (3,)."""
        return np.r_[self.xy, self.height / 2]

    def to_world(self, points: np.ndarray) -> np.ndarray:
        """Shelf-frame points (m), (..., 3), in the world frame."""
        return np.asarray(points) @ self.rotation.T + self.centre

    def to_local(self, points: np.ndarray) -> np.ndarray:
        """World points (m), (..., 3), in the shelf frame."""
        return (np.asarray(points) - self.centre) @ self.rotation

    @property
    def inner_half_width(self) -> float:
        """Half the room between the sides (m)."""
        return self.width / 2 - self.side_thickness

    @property
    def back_face(self) -> float:
        """The back's front face, shelf frame x (m)."""
        return -self.depth / 2 + self.back_thickness

    def board_top(self, index: int) -> float:
        """Board ``index``'s top face above the table (m)."""
        return self.board_heights[index]

    def room_above(self, index: int) -> float:
        """The clear height above board ``index`` (m): to the next board's underside, or to the sides' top."""
        above = [h - self.board_thickness for h in self.board_heights[index + 1 :]]
        return (above[0] if above else self.height) - self.board_heights[index]

    def boxes(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Name, centre and half extents (shelf frame, m, (3,) each) of its boxes, which do not overlap, in the
        order of the ``shelf`` kind's pieces: ``side_minus_y``, ``side_plus_y``, ``back`` (where it has one)
        and ``board<i>``."""
        d, w, h = self.depth / 2, self.width / 2, self.height / 2
        side, x0, y0 = self.side_thickness, self.back_face, self.inner_half_width
        boxes = [
            ("side_minus_y", np.array([0.0, -w + side / 2, 0.0]), np.array([d, side / 2, h])),
            ("side_plus_y", np.array([0.0, w - side / 2, 0.0]), np.array([d, side / 2, h])),
        ]
        if self.back_thickness > 0:
            boxes.append(
                ("back", np.array([(-d + x0) / 2, 0.0, 0.0]), np.array([self.back_thickness / 2, y0, h]))
            )
        for index, top in enumerate(self.board_heights):
            centre = np.array([(x0 + d) / 2, 0.0, top - self.board_thickness / 2 - h])
            boxes.append((f"board{index}", centre, np.array([(d - x0) / 2, y0, self.board_thickness / 2])))
        return boxes

    def params(self) -> dict[str, float | int]:
        """truth.json's parameters (m; ``board_count`` a count): the project's ``shelf`` keys."""
        params: dict[str, float | int] = {
            "side_thickness": self.side_thickness,
            "back_thickness": self.back_thickness,
            "board_thickness": self.board_thickness,
            "board_count": len(self.board_heights),
        }
        for index, top in enumerate(self.board_heights):
            params[f"board{index}_height"] = top
        return params


@dataclass(frozen=True)
class Book:
    """A book-like box lying flat (the project's ``box`` kind).

    Attributes:
        length: Extent along its x (m).
        width: Extent along its y, across which the fingers close (m).
        height: Extent along its z (m).
        mass: Kilograms.
        xy: Its centre on the table at the start, world frame (m), (2,).
        yaw: Its turn about world z at the start (rad).
    """

    length: float
    width: float
    height: float
    mass: float
    xy: np.ndarray
    yaw: float

    @property
    def size(self) -> np.ndarray:
        """Full extents, book frame (m), (3,)."""
        return np.array([self.length, self.width, self.height])

    def corners(self) -> np.ndarray:
        """Its eight corners, book frame (m), (8, 3)."""
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        return signs * self.size / 2

    def density(self) -> float:
        """kg/m^3 so that it weighs ``mass``."""
        return float(self.mass / np.prod(self.size))


@dataclass(frozen=True)
class ShelveLayout:
    """Everything placed: the shelf, the book, where it goes, the hand's choices and the camera (m, rad).

    Attributes:
        shelf: The shelf, standing on the table.
        book: The book, lying on the table at the start.
        board: The board the book is set on (the middle one).
        place: Where the book's centre goes on that board, shelf frame x and y (m), (2,).
        place_turn: The book's turn about the shelf frame's z when set down (rad): +-pi/2, its length along
            the shelf's width, whichever is nearer its start.
        grasp_height: The grasp centre above the book's bottom (m).
        clearance: The book's bottom above the board while it is carried in (m).
        short: A failing demo lets go this far short of ``place`` along the shelf frame's x (m); 0 sets the
            book on the board.
        colours: ``book`` and ``shelf`` RGBA.
        camera_azimuth: Direction from the scene to the camera, from world +x about z (rad).
        camera_elevation: Angle of that direction above the table (rad).
        camera_height: The camera's height above the table (m).
        camera_pos: Camera optical centre, world frame, (3,).
        camera_rot: World-from-camera rotation, OpenCV axes (x right, y down, z forward), (3, 3).
        fovy: Vertical field of view (deg).
        width: Image width (px).
        height: Image height (px).
    """

    shelf: Shelf
    book: Book
    board: int
    place: np.ndarray
    place_turn: float
    grasp_height: float
    clearance: float
    short: float
    colours: dict[str, list[float]]
    camera_azimuth: float
    camera_elevation: float
    camera_height: float
    camera_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    camera_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    fovy: float = 45.0
    width: int = 320
    height: int = 240

    @property
    def board_top(self) -> float:
        """The top face of the board the book goes on, above the table (m)."""
        return self.shelf.board_top(self.board)

    @property
    def front_gap(self) -> float:
        """How far the placed book's front face is behind the board's front edge (m)."""
        return self.shelf.depth / 2 - self.place[0] - self.book.width / 2

    @property
    def place_yaw(self) -> float:
        """The book's turn about world z when set on the board (rad)."""
        return self.shelf.yaw + self.place_turn
