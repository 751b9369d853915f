"""Draw the insert scene of a seed (``_insert_scene``): the socket, the peg, the fit, colours and the camera's
direction.

The draws (metres, kilograms, radians): a socket of outer radius 0.035-0.05 with a hole 0.03-0.05 deep,
0.05-0.08 tall (its hole's bottom at least ``MIN_BOTTOM`` above its base), 0.8-1.5 kg (heavy: a steel or
stone holder that a peg going in does not move); its axis within 5 cm of the world's origin. A peg of radius
0.012-0.020, 0.08-0.12 long, 0.05-0.15 kg; the hole's radius is the peg's plus a clearance of 2.5-4 mm (a
tight fit), or, for a failing demo, the peg's less ``narrow``. Some draws are narrowed so that the script
can work:

- The fingers close across the peg near its top (the pads' tops ``PAD_BELOW_TOP`` under it), and with the
  peg resting on the hole's bottom their tips must stay ``FINGERTIP_CLEAR`` over the socket's top: the peg
  is long enough for the hole's depth.
- The peg starts beside the socket, its axis ``HAND_SIDE`` plus 1.5-5 cm beyond the socket's side, so that
  the open fingers (their opening along the line from the peg to the socket) come down beside it clear of
  the socket.

The camera looks across the carry (its direction 60-120 degrees from the line from the peg to the socket,
so that the fingers are seen at the peg's sides), 20-35 degrees above the table.
"""

from __future__ import annotations

import numpy as np
from _demo_gripper import FINGER_HALF, FINGER_TRAVEL, FINGERTIP_BELOW_CENTRE, PAD_HALF
from _hang_layout import place_camera
from _insert_scene import InsertLayout, Peg, Socket

PAD_BELOW_TOP = 0.003  # the pads' tops this far (m) under the peg's top
FINGERTIP_CLEAR = 0.015  # the fingertips at least this far (m) over the socket's top with the peg in
HAND_SIDE = (
    FINGER_TRAVEL + 2 * PAD_HALF[1] + 2 * FINGER_HALF[1]
)  # the open finger's back from the grasp centre
MIN_BOTTOM = 0.012  # the hole's bottom at least this far (m) above the socket's base
MIN_HOLE = 0.004  # a failing demo's hole keeps at least this radius (m)
CARRY_CLEARANCE = 0.02  # the peg's bottom this far (m) over the socket's top while carried over it
SET_GAP = 0.001  # the peg is let go with its bottom this far (m) over the hole's bottom
SOCKETS = ([0.55, 0.56, 0.58], [0.16, 0.16, 0.18], [0.62, 0.45, 0.28], [0.20, 0.42, 0.30], [0.30, 0.36, 0.45])
PEGS = ([0.80, 0.15, 0.12], [0.15, 0.35, 0.75], [0.95, 0.70, 0.10], [0.20, 0.60, 0.30], [0.90, 0.45, 0.10],
        [0.55, 0.25, 0.60])  # fmt: skip


def grasp_below_top() -> float:
    """The grasp centre below the peg's top (m): the pads' tops ``PAD_BELOW_TOP`` under it."""
    return PAD_HALF[2] + PAD_BELOW_TOP


def sample_layout(
    rng: np.random.Generator,
    narrow: float = 0.0,
    camera_azimuth: float | None = None,
    camera_elevation: float | None = None,
) -> InsertLayout:
    """Draw the seed's socket, peg, fit, places, colours and camera direction (its distance comes with
    ``frame_camera``). A seed draws the same with ``narrow`` and without, but for the hole's radius.

    Args:
        rng: Random generator of the seed.
        narrow: Make the hole this much narrower than the peg's radius (m); 0 gives it the drawn clearance.
        camera_azimuth: World azimuth of the camera (rad); None draws it across the carry.
        camera_elevation: The camera's elevation (rad); None draws 20-35 degrees.

    Raises:
        ValueError: If ``narrow`` leaves the hole less than ``MIN_HOLE`` in radius.
    """
    outer, depth = rng.uniform(0.035, 0.05), rng.uniform(0.03, 0.05)
    height = rng.uniform(max(0.05, depth + MIN_BOTTOM), 0.08)
    radius = rng.uniform(0.012, 0.020)
    over = grasp_below_top() + FINGERTIP_BELOW_CENTRE + FINGERTIP_CLEAR
    length = rng.uniform(max(0.08, depth + over), 0.12)
    clearance = rng.uniform(0.0025, 0.004)
    if narrow and radius - narrow < MIN_HOLE:
        raise ValueError(
            f"--narrow {narrow:g} leaves no hole: this seed's peg is {radius * 1000:.1f} mm in radius and "
            f"the hole must keep {MIN_HOLE * 1000:g} mm"
        )
    inner = radius - narrow if narrow else radius + clearance
    socket_xy = rng.uniform(-0.05, 0.05, 2)
    towards = rng.uniform(-np.pi, np.pi)  # from the socket to the peg's start
    distance = outer + HAND_SIDE + rng.uniform(0.015, 0.05)
    peg_xy = socket_xy + distance * np.array([np.cos(towards), np.sin(towards)])
    socket = Socket(float(outer), float(inner), float(height), float(height - depth),
                    float(rng.uniform(0.8, 1.5)), socket_xy)  # fmt: skip
    peg = Peg(float(radius), float(length), float(rng.uniform(0.05, 0.15)), peg_xy)
    carry = towards + np.pi  # from the peg's start to the socket
    if camera_azimuth is None:
        camera_azimuth = carry + rng.choice([-1, 1]) * np.deg2rad(rng.uniform(60, 120))
    if camera_elevation is None:
        camera_elevation = np.deg2rad(rng.uniform(20, 35))
    return InsertLayout(
        socket=socket,
        peg=peg,
        clearance=float(clearance),
        narrow=float(narrow),
        grasp_below_top=float(grasp_below_top()),
        carry_clearance=CARRY_CLEARANCE,
        set_gap=SET_GAP,
        yaw=float(carry - np.pi / 2),
        colours=_colours(rng),
        camera_azimuth=float(camera_azimuth),
        camera_elevation=float(camera_elevation),
    )


def _colours(rng: np.random.Generator) -> dict[str, list[float]]:
    """A holder's colour (steel, black plastic, wood, green plastic, slate) and a peg's unlike it."""
    socket = np.clip(np.array(SOCKETS[rng.integers(len(SOCKETS))]) * rng.uniform(0.9, 1.1), 0, 1)
    pegs = [c for c in PEGS if np.abs(np.subtract(c, socket)).sum() > 0.5]
    peg = np.clip(np.array(pegs[rng.integers(len(pegs))]) * rng.uniform(0.9, 1.1), 0, 1)
    return {"peg": [*peg.tolist(), 1.0], "socket": [*socket.tolist(), 1.0]}


def must_see(layout: InsertLayout, hand_points: np.ndarray) -> np.ndarray:
    """What the camera must see, world (m), (N, 3): the socket's box, the peg's at its start and in the hole,
    and ``hand_points``."""
    socket, peg = layout.socket, layout.peg
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    inserted = np.r_[socket.xy, socket.bottom + peg.length / 2]
    standing = np.r_[peg.xy, peg.length / 2]
    corners = [
        signs * socket.size / 2 + socket.centre,
        signs * peg.size / 2 + standing,
        signs * peg.size / 2 + inserted,
    ]
    return np.concatenate([*corners, hand_points])


def frame_camera(layout: InsertLayout, points: np.ndarray, distance: float) -> InsertLayout:
    """The layout with its camera ``distance`` metres from the middle of ``points`` (world, m, (N, 3)), or
    farther until they are all in the image (``_hang_layout.place_camera``).

    Raises:
        ValueError: If no camera within 3 m frames them.
    """
    try:
        return place_camera(layout, points, distance)
    except ValueError:
        raise ValueError(
            "no camera within 3 m frames the socket, the peg and the hand (raise --fovy)"
        ) from None
