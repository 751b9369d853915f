"""Draw the shelve scene of a seed (``_shelve_scene``): the shelf, the book, where it goes, colours and the
camera's direction and height.

The draws (metres, radians, kilograms): a book 0.10-0.16 long, 0.05-0.07 wide (the gripper opens 0.08),
0.03-0.05 tall, 0.15-0.40 kg; a shelf 0.30-0.40 wide and 0.20-0.26 deep, its sides and boards 12-20 mm
thick, its back 5-8 mm (or, one time in four, 12-18 mm), a bottom board on the table, a middle board
whose top is 0.10-0.16 above the table and, one time in two, a top board that caps it, 0.32-0.42 tall;
its middle within 5 cm of the world's origin, turned any way. Some draws are narrowed so that the script
can work:

- The room above the middle board (to the top board, or the sides' top) takes the hand as it lifts its
  fingertips ``FINGERTIP_CLEAR`` over the set-down book's top to back out over it, its flange's top
  ``ROOM_SPARE`` under the board above: the shelf is tall enough.
- The fingers close across the book's width along the shelf's depth, so the palm, 0.2 m long that way,
  reaches behind the book: the book goes far enough forward on the board for the palm's end to stay
  ``BACK_SPARE`` clear of the back, and the shelf is deep enough for that.
- The book's front face goes ``front_gap`` behind the board's front edge, drawn so that the example failing
  demo, let go ``SHORT_EXAMPLE`` short, leaves it partly over the edge with its centre beyond it
  (``TIP_SPARE`` at least): its centre ``SHORT_EXAMPLE - TIP_SPARE`` or less behind the edge, its back face
  ``OVER_SPARE`` more than ``SHORT_EXAMPLE`` behind it.

The book starts on the table in front of the shelf (its centre 14-20 cm beyond the front, up to 12 cm to
either side, turned within 45 degrees of how it is set down), where the hand over it clears the shelf. The
camera looks at the front from 20-40 degrees to one side, 6-20 cm above the middle board (and a few cm
above the middle of what it must see, so that it looks a little down).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from _articulated_motion import HAND_ABOVE_CENTRE
from _demo_gripper import FINGERTIP_BELOW_CENTRE, PAD_HALF, PALM_HALF
from _hang_layout import place_camera
from _hang_scene import rotation_z
from _shelve_scene import Book, Shelf, ShelveLayout

FINGERTIP_CLEAR = 0.008  # the fingertips this far (m) over the set-down book's top as the hand backs out
ROOM_SPARE = 0.012  # the hand's top at least this far (m) under the board above
BACK_SPARE = 0.012  # the palm's end at least this far (m) in front of the back
PAD_BELOW_TOP = 0.002  # the pads' tops this far (m) under the book's top
SHORT_EXAMPLE, TIP_SPARE, OVER_SPARE = 0.08, 0.012, 0.008  # the example failing demo's release (m)
OVER_EDGE = 0.004  # a book let go short is at least this far (m) over the board's front edge
LOOK_DOWN = 0.04  # the camera at least this far (m) above the middle of what it must see
WOODS = ([0.80, 0.64, 0.44], [0.66, 0.46, 0.28], [0.47, 0.30, 0.17], [0.36, 0.22, 0.13], [0.86, 0.76, 0.58])
COVERS = ([0.72, 0.12, 0.12], [0.12, 0.25, 0.62], [0.13, 0.45, 0.25], [0.90, 0.72, 0.15], [0.45, 0.20, 0.55],
          [0.10, 0.50, 0.55])  # fmt: skip


def grasp_height(book_height: float) -> float:
    """The grasp centre above the book's bottom (m): the pads' tops ``PAD_BELOW_TOP`` under its top."""
    return book_height - PAD_HALF[2] - PAD_BELOW_TOP


def backing_height(book_height: float) -> float:
    """The grasp centre above the board (m) while the open hand backs out over the set-down book."""
    return book_height + FINGERTIP_BELOW_CENTRE + FINGERTIP_CLEAR


def needed_room(book_height: float) -> float:
    """The clear height above the board (m) the hand needs to back out over the book."""
    return backing_height(book_height) + HAND_ABOVE_CENTRE + ROOM_SPARE


def sample_layout(
    rng: np.random.Generator,
    short: float = 0.0,
    camera_azimuth: float | None = None,
    camera_height: float | None = None,
) -> ShelveLayout:
    """Draw the seed's shelf, book, places, colours and camera direction and height (its distance comes with
    ``frame_camera``).

    Args:
        rng: Random generator of the seed.
        short: Let go this far short of the book's place (m); 0 sets it on the board.
        camera_azimuth: World azimuth of the camera (rad); None draws it 20-40 degrees to a side of the
            shelf's front.
        camera_height: The camera's height above the table (m); None draws it 6-20 cm above the middle board.

    Raises:
        ValueError: If ``short`` lets go of the book wholly in front of the board (``OVER_EDGE`` over it at
            least).
    """
    length, width, height = rng.uniform(0.10, 0.16), rng.uniform(0.05, 0.07), rng.uniform(0.03, 0.05)
    mass = rng.uniform(0.15, 0.40)
    side, board = rng.uniform(0.012, 0.020, 2)
    back = rng.uniform(0.005, 0.008) if rng.uniform() < 0.75 else rng.uniform(0.012, 0.018)
    middle = rng.uniform(0.10, 0.16)
    capped = bool(rng.uniform() < 0.5)
    tallest = middle + needed_room(height) + (board if capped else 0.0)
    shelf_height = rng.uniform(max(0.32, tallest), max(0.42, tallest))
    gap_low = max(0.01, SHORT_EXAMPLE - width + OVER_SPARE)
    gap_high = SHORT_EXAMPLE - width / 2 - TIP_SPARE
    front_gap = rng.uniform(gap_low, gap_high)
    depth = rng.uniform(max(0.20, width / 2 + back + BACK_SPARE + PALM_HALF[1] + front_gap), 0.26)
    shelf_width = rng.uniform(0.30, 0.40)
    heights = (board, middle, shelf_height) if capped else (board, middle)
    shelf = Shelf(
        depth=float(depth),
        width=float(shelf_width),
        height=float(shelf_height),
        side_thickness=float(side),
        back_thickness=float(back),
        board_thickness=float(board),
        board_heights=tuple(float(h) for h in heights),
        xy=rng.uniform(-0.05, 0.05, 2),
        yaw=float(rng.uniform(-np.pi, np.pi)),
    )
    place_y = rng.uniform(-1, 1) * min(0.02, shelf.inner_half_width - length / 2 - 0.02)
    place = np.array([depth / 2 - front_gap - width / 2, place_y])
    farthest = front_gap + width - OVER_EDGE
    if short > farthest:
        raise ValueError(
            f"--short {short:g} lets go of the book wholly in front of the board: this seed's book is partly over "
            f"the board's front edge when let go at most {farthest:.3f} m short"
        )
    # 14 cm or more beyond the front: the palm over the book (0.11 m from its centre) clears the shelf.
    start_local = np.array([depth / 2 + rng.uniform(0.14, 0.20), rng.uniform(-0.12, 0.12), 0.0])
    start_xy = shelf.to_world(start_local)[:2]
    turn = float(rng.choice([-1, 1]) * np.pi / 2)
    start_yaw = shelf.yaw + turn + np.deg2rad(rng.uniform(-45, 45))
    book = Book(float(length), float(width), float(height), float(mass), start_xy, float(start_yaw))
    if camera_azimuth is None:
        camera_azimuth = shelf.yaw + rng.choice([-1, 1]) * np.deg2rad(rng.uniform(20, 40))
    if camera_height is None:
        camera_height = middle + rng.uniform(0.06, 0.20)
    return ShelveLayout(
        shelf=shelf,
        book=book,
        board=1,
        place=place,
        place_turn=turn,
        grasp_height=float(grasp_height(height)),
        clearance=0.02,
        short=float(short),
        colours=_colours(rng),
        camera_azimuth=float(camera_azimuth),
        camera_elevation=0.0,
        camera_height=float(camera_height),
    )


def _colours(rng: np.random.Generator) -> dict[str, list[float]]:
    """A wood's colour for the shelf and a book cover's unlike it."""
    wood = np.clip(np.array(WOODS[rng.integers(len(WOODS))]) * rng.uniform(0.9, 1.1), 0, 1)
    covers = [c for c in COVERS if np.abs(np.subtract(c, wood)).sum() > 0.5]
    cover = np.clip(np.array(covers[rng.integers(len(covers))]) * rng.uniform(0.9, 1.1), 0, 1)
    return {"book": [*cover.tolist(), 1.0], "shelf": [*wood.tolist(), 1.0]}


def must_see(layout: ShelveLayout, hand_points: np.ndarray) -> np.ndarray:
    """What the camera must see, world (m), (N, 3): the shelf's corners, the book at its start and on the
    board, the table in front of the board where a book let go short falls, and ``hand_points``."""
    shelf, book = layout.shelf, layout.book
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    start = book.corners() @ rotation_z(book.yaw).T + np.r_[book.xy, book.height / 2]
    placed = np.c_[layout.place[0] + signs[:, 0] * book.width / 2, layout.place[1] + signs[:, 1] * book.length / 2,
                   np.full(8, layout.board_top - shelf.height / 2) + (signs[:, 2] > 0) * book.height]  # fmt: skip
    fall = np.array([[shelf.depth / 2 + 0.12, layout.place[1] + s * book.length / 2, -shelf.height / 2]
                     for s in (-1, 1)])  # fmt: skip
    return np.concatenate([shelf.to_world(signs * shelf.size / 2), start, shelf.to_world(placed),
                           shelf.to_world(fall), hand_points])  # fmt: skip


def frame_camera(layout: ShelveLayout, points: np.ndarray, distance: float) -> ShelveLayout:
    """The layout with its camera at its height (or ``LOOK_DOWN`` above the middle of ``points``, if that is
    higher) ``distance`` metres from that middle, or farther until ``points`` (world, m, (N, 3)) are all in
    the image (``_hang_layout.place_camera``).

    Raises:
        ValueError: If no camera within 3 m frames them.
    """
    middle = (points[:, 2].min() + points[:, 2].max()) / 2
    height = max(layout.camera_height, middle + LOOK_DOWN)
    try:
        framed = place_camera(layout, points, distance, eye_height=height)
    except ValueError:
        raise ValueError(
            "no camera within 3 m frames the shelf, the book and the hand (raise --fovy)"
        ) from None
    return replace(framed, camera_height=float(height))
