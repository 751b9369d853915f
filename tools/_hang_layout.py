"""Draw the hang scene of a seed (``_hang_scene``): the mug tree or the hook board, the mug, the peg, the sides,
the camera.

The draws follow the ranges of a real mug tree and mug (metres, radians): base radius 0.06-0.08 and
thickness 0.012-0.02, post radius 0.008-0.012 and height 0.26-0.34 (at least 2 cm above the highest peg),
2 or 3 pegs of radius 0.004-0.006 and length 0.08-0.11 rising 15-30 degrees, 0.14-0.28 high at least 5 cm
apart and at least 100 degrees apart round the post; a mug of outer radius 0.035-0.042, height 0.08-0.10,
wall 0.004-0.005, bottom 0.005-0.007, 0.25-0.35 kg, its handle reaching 2.5-3.2 cm past the wall, 6-8 mm
thick, 12-16 mm wide, its loop 4.2-5 cm tall. Some draws are narrowed so that the script can work: the
loop leaves the peg ``LOOP_SPARE`` on each side, a peg is long enough to hang the mug ``POST_SPARE`` clear
of the post and ``TIP_SPARE`` inside its tip, the mug is hung on a peg high enough to clear the base, and
it starts where the hand above it clears the tree.

A hook board (``sample_wall_layout``) is screwed to a wall along one of the table's edges (the wall stands on
the table's top, its face on the edge), 15 cm either way of the edge's middle: a plate 0.08-0.16 wide,
0.08-0.14 tall and 0.012-0.02 thick, its bottom edge 0.12-0.22 above the table, with 1-3 pegs in a row
(their axes at least 6 cm apart and ``PLATE_MARGIN`` inside the plate's sides, at 35-65 % of its height
give or take 3 mm) of radius 0.004-0.006 and length 0.06-0.09 rising 10-25 degrees, straight out of the
wall or (half the seeds) each turned by up to 8 degrees. The mug is hung on an end peg, its body on the
side away from the others, from the peg's root far enough that it and the hand letting it go are
``WALL_GAP`` out from the plate; a peg is made longer, and the plate higher, where the mug needs it. The
camera looks from the room side, 10-40 degrees off the wall's normal towards the handle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from _hang_motion import seated_outline
from _hang_scene import TABLE_HALF, HangLayout, Mug, Rack, WallRack, rotation_z

LOOP_SPARE = 0.004  # at least this much room (m) on each side of the peg in the handle's loop
POST_SPARE = 0.015  # the hanging mug's wall this far (m) from the post's surface
TIP_SPARE = 0.012  # the handle this far (m) inside the peg's tip
HAND_REACH = 0.11  # the palm's farthest corner from the grasp centre, seen from above (m)
WALL_GAP = 0.015  # a hook board's hung mug and the hand letting it go this far (m) out from the plate's face
WALL_PEG_GAP = 0.06  # a hook board's pegs at least this far (m) apart along it
PLATE_MARGIN = 0.015  # a peg's axis at least this far (m) inside the plate's sides
TABLE_SPARE = 0.035  # a hook board's hung mug's lowest point this far (m) above the table as the hand lets go


def _peg_heights(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` heights in 0.14-0.28 m at least 5 cm apart, in random order."""
    slack = 0.14 - 0.05 * (count - 1)
    gaps = rng.dirichlet(np.ones(count + 1)) * slack
    heights = 0.14 + np.cumsum(gaps[:count]) + 0.05 * np.arange(count)
    return rng.permutation(heights)


def _peg_azimuths(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` azimuths (rad) at least 100 degrees apart round the post."""
    free = 360.0 - 100.0 * count
    gaps = 100.0 + rng.dirichlet(np.ones(count)) * free
    first = rng.uniform(0, 360)
    return np.deg2rad((first + np.r_[0.0, np.cumsum(gaps[:-1])]) % 360.0)


def sample_mug(rng: np.random.Generator, peg_radius: float) -> Mug:
    """Draw a mug whose handle's loop lets a peg of ``peg_radius`` through with room to spare."""
    r, h = rng.uniform(0.035, 0.042), rng.uniform(0.08, 0.10)
    t, width = rng.uniform(0.006, 0.008), rng.uniform(0.012, 0.016)
    extra = rng.uniform(max(0.025, t + 2 * peg_radius + 2 * LOOP_SPARE), 0.032)
    top = h - rng.uniform(0.008, 0.014)
    opening = rng.uniform(0.042, max(0.042, min(0.05, top - 2 * t - 0.008)))
    return Mug(
        outer_radius=float(r),
        wall=float(rng.uniform(0.004, 0.005)),
        bottom=float(rng.uniform(0.005, 0.007)),
        height=float(h),
        handle_reach=float(r + extra),
        handle_bottom=float(top - 2 * t - opening),
        handle_top=float(top),
        handle_thickness=float(t),
        handle_width=float(width),
        mass=float(rng.uniform(0.25, 0.35)),
        xy=np.zeros(2),
        yaw=0.0,
    )


def sample_layout(
    rng: np.random.Generator,
    peg_count: int | None = None,
    peg_length: float | None = None,
    miss: float = 0.0,
    camera_azimuth: float | None = None,
    camera_elevation: float | None = None,
) -> HangLayout:
    """Draw the seed's rack, mug, peg, sides and camera direction (its distance comes with ``place_camera``).

    Args:
        rng: Random generator of the seed.
        peg_count: 2 or 3 pegs; None draws it.
        peg_length: The pegs' length (m); None draws it long enough for the mug.
        miss: Let go this far short of the peg's tip (m); 0 hangs the mug.
        camera_azimuth: World azimuth of the camera (rad); None draws it beside the peg.
        camera_elevation: The camera's elevation (rad); None draws 15-35 degrees.

    Raises:
        ValueError: If a given peg length is too short to hang the mug clear of the post.
    """
    count = int(peg_count if peg_count is not None else rng.choice([2, 3]))
    heights, azimuths = _peg_heights(rng, count), _peg_azimuths(rng, count)
    elevation = np.deg2rad(rng.uniform(15, 30))
    peg_radius, post_radius = rng.uniform(0.004, 0.006), rng.uniform(0.008, 0.012)
    mug = sample_mug(rng, peg_radius)
    reach = mug.outer_radius + post_radius + POST_SPARE
    shortest = (reach + mug.handle_width / 2 + TIP_SPARE) / np.cos(elevation)
    if peg_length is None:
        peg_length = rng.uniform(max(0.08, shortest), max(0.11, shortest))
    elif peg_length < shortest:
        raise ValueError(
            f"a {peg_length * 100:.1f} cm peg is too short to hang this mug clear of the post "
            f"(it needs {shortest * 100:.1f} cm; raise --peg-length)"
        )
    rack = Rack(
        base_radius=float(rng.uniform(0.06, 0.08)),
        base_thickness=float(rng.uniform(0.012, 0.02)),
        post_radius=float(post_radius),
        post_height=float(rng.uniform(max(0.26, heights.max() + 0.02), 0.34)),
        peg_radius=float(peg_radius),
        peg_length=float(peg_length),
        peg_elevation=float(elevation),
        peg_heights=tuple(float(h) for h in heights),
        peg_azimuths=tuple(float(a) for a in azimuths),
        foot=np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), 0.0]),
        yaw=float(rng.uniform(-np.pi, np.pi)),
    )
    # The mug hangs below its peg by at most its far bottom edge's distance from the handle's top inner
    # corner: only pegs high enough keep it clear of the base.
    drop = np.hypot(2 * mug.outer_radius, mug.handle_top)
    high = [
        i for i, h in enumerate(heights) if h + reach * np.tan(elevation) - drop > rack.base_thickness + 0.025
    ]
    peg = int(rng.choice(high)) if high else int(np.argmax(heights))
    peg_azimuth = rack.yaw + rack.peg_azimuths[peg]
    if camera_azimuth is None:
        side = int(rng.choice([-1, 1]))
        camera_azimuth = peg_azimuth + side * np.deg2rad(rng.uniform(45, 70))
    else:
        side = 1 if np.sin(camera_azimuth - peg_azimuth) >= 0 else -1
    if camera_elevation is None:
        camera_elevation = np.deg2rad(rng.uniform(15, 35))
    mug = _place_mug(rng, rack, mug, peg_azimuth, side)
    return HangLayout(
        rack=rack,
        mug=mug,
        peg=peg,
        side=side,
        reach=float(reach),
        miss=float(miss),
        colours=_colours(rng),
        camera_azimuth=float(camera_azimuth),
        camera_elevation=float(camera_elevation),
    )


def sample_wall_layout(
    rng: np.random.Generator,
    peg_count: int | None = None,
    peg_length: float | None = None,
    miss: float = 0.0,
    camera_azimuth: float | None = None,
    camera_elevation: float | None = None,
) -> HangLayout:
    """Draw the seed's hook board on its wall, the mug, the peg, the sides and the camera's direction (its
    distance comes with ``place_camera``).

    Args:
        rng: Random generator of the seed.
        peg_count: 1 to 3 pegs; None draws it.
        peg_length: The pegs' length from the plate's face (m); None draws it long enough for the mug.
        miss: Let go this far short of the peg's tip (m); 0 hangs the mug.
        camera_azimuth: World azimuth of the camera (rad); None draws it 10-40 degrees off the wall's normal
            on the handle's side.
        camera_elevation: The camera's elevation (rad); None draws 15-35 degrees.

    Raises:
        ValueError: If the peg count is not 1 to 3, or a given peg length is too short to hang the mug clear
            of the plate.
    """
    count = int(peg_count if peg_count is not None else rng.choice([1, 2, 3]))
    if not 1 <= count <= 3:
        raise ValueError(f"a hook board has 1 to 3 pegs, not {count}")
    width = rng.uniform(max(0.08, (count - 1) * WALL_PEG_GAP + 2 * PLATE_MARGIN), 0.16)
    height, thickness = rng.uniform(0.08, 0.14), rng.uniform(0.012, 0.02)
    span = width - 2 * PLATE_MARGIN
    gaps = rng.dirichlet(np.ones(count + 1)) * (span - WALL_PEG_GAP * (count - 1))
    offsets = -span / 2 + np.cumsum(gaps[:count]) + WALL_PEG_GAP * np.arange(count)
    heights = rng.uniform(0.35, 0.65) * height + rng.uniform(-0.003, 0.003, count)
    azimuths = np.zeros(count) if rng.uniform() < 0.5 else np.deg2rad(rng.uniform(-8, 8, count))
    elevation = np.deg2rad(rng.uniform(10, 25))
    peg_radius = rng.uniform(0.004, 0.006)
    mug = sample_mug(rng, peg_radius)
    # An end peg, the body (at -side * v, v about the plate's +y) on the side away from the other pegs.
    peg = int(rng.choice([0, count - 1]))
    side = int(rng.choice([-1, 1])) if count == 1 else (1 if peg == 0 else -1)
    # The loop's level distance from the peg's root that keeps the hung mug and the hand WALL_GAP out from
    # the plate: a seated point's level offset from the seat is -side * y along u and side * x along v.
    seated = seated_outline(mug, elevation, peg_radius)
    a = azimuths[peg]
    out = -side * seated[:, 1] * np.cos(a) - side * seated[:, 0] * np.sin(a)
    reach = (WALL_GAP - out.min()) / np.cos(a)
    shortest = (reach + mug.handle_width / 2 + TIP_SPARE) / np.cos(elevation)
    if peg_length is None:
        peg_length = rng.uniform(max(0.06, shortest), max(0.09, shortest))
    elif peg_length < shortest:
        raise ValueError(
            f"a {peg_length * 100:.1f} cm peg is too short to hang this mug clear of the plate "
            f"(it needs {shortest * 100:.1f} cm; raise --peg-length)"
        )
    lowest = heights[peg] + reach * np.tan(elevation) + seated[:, 2].min()  # above the plate's bottom
    bottom = rng.uniform(max(0.12, TABLE_SPARE - lowest), max(0.22, TABLE_SPARE - lowest))
    normal = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][int(rng.integers(4))]  # into the room
    edge = abs(normal[0]) * TABLE_HALF[0] + abs(normal[1]) * TABLE_HALF[1]
    along = rng.uniform(-0.15, 0.15)
    rack = WallRack(
        plate_width=float(width),
        plate_thickness=float(thickness),
        post_height=float(height),
        peg_radius=float(peg_radius),
        peg_length=float(peg_length),
        peg_elevation=float(elevation),
        peg_heights=tuple(float(h) for h in heights),
        peg_offsets=tuple(float(o) for o in offsets),
        peg_azimuths=tuple(float(v) for v in azimuths),
        foot=np.array([-edge * normal[0] - along * normal[1], -edge * normal[1] + along * normal[0], bottom]),
        yaw=float(np.arctan2(normal[1], normal[0])),
    )
    if camera_azimuth is None:
        camera_azimuth = rack.yaw + side * np.deg2rad(rng.uniform(10, 40))
    if camera_elevation is None:
        camera_elevation = np.deg2rad(rng.uniform(15, 35))
    peg_azimuth = rack.yaw + rack.peg_azimuths[peg]
    root = rack.to_world(rack.peg_root(peg))[:2]
    mug = _place_mug(rng, rack, mug, peg_azimuth, side, root, lambda xy: _board_room(rack, xy))
    colours = _colours(rng)
    paint = [[0.86, 0.84, 0.78], [0.74, 0.8, 0.84], [0.76, 0.82, 0.72], [0.88, 0.8, 0.7]]
    wall = np.clip(np.array(paint[rng.integers(len(paint))]) * rng.uniform(0.9, 1.05), 0, 1)
    return HangLayout(
        rack=rack,
        mug=mug,
        peg=peg,
        side=side,
        reach=float(reach),
        miss=float(miss),
        colours=colours | {"wall": [*wall.tolist(), 1.0]},
        camera_azimuth=float(camera_azimuth),
        camera_elevation=float(camera_elevation),
    )


def _board_room(rack: WallRack, xy: np.ndarray) -> float:
    """Level distance (m) from ``xy`` (world) to a hook board's pegs, less their radius, and to its plate's
    face."""
    points = []
    for index in range(len(rack.peg_heights)):
        root, tip = rack.peg_ends(index)
        points += list(rack.to_world(np.linspace(root, tip, 12)))
    pegs = np.linalg.norm(np.array(points)[:, :2] - xy, axis=1).min() - rack.peg_radius
    face = (rack.rotation[:2, 0] @ (xy - rack.foot[:2])) - rack.plate_thickness
    return float(min(pegs, face))


def _hand_room(rack: Rack, xy: np.ndarray) -> float:
    """Level distance (m) from ``xy`` (world) to the rack's post and pegs, less their radii."""
    points = [rack.foot]
    for index in range(len(rack.peg_heights)):
        root, tip = rack.peg_ends(index)
        points += list(rack.to_world(np.linspace(root, tip, 12)))
    distance = np.linalg.norm(np.array(points)[:, :2] - xy, axis=1)
    return float(min(distance[0] - rack.post_radius, distance[1:].min() - rack.peg_radius))


def _place_mug(
    rng: np.random.Generator,
    rack: Rack | WallRack,
    mug: Mug,
    peg_azimuth: float,
    side: int,
    root: np.ndarray | None = None,
    room: Callable[[np.ndarray], float] | None = None,
) -> Mug:
    """The mug on the table beyond the peg's tip, on the side away from the camera, turned within 35 degrees
    of how it hangs, where the hand above it (while it grasps and lifts) clears the rack: ``room`` (level
    distance (m) from a world point to the rack; the post and the pegs by default) over ``HAND_REACH``.
    Distances are from ``root`` (the peg's root, world (m), (2,); the post's foot by default)."""
    root = rack.foot[:2] if root is None else root
    room = (lambda xy: _hand_room(rack, xy)) if room is None else room
    tip = rack.peg_length * np.cos(rack.peg_elevation)
    away = np.deg2rad(rng.uniform(15, 40))
    distance = (tip + mug.outer_radius + 0.035) / np.cos(away) + rng.uniform(0, 0.05)
    start = peg_azimuth - side * away
    yaw = float(peg_azimuth + side * np.pi / 2 + np.deg2rad(rng.uniform(-35, 35)))
    while True:
        xy = root + distance * np.array([np.cos(start), np.sin(start)])
        grasp = xy + (rotation_z(yaw) @ mug.grasp)[:2]
        if room(grasp) > HAND_REACH + 0.01:
            return replace(mug, xy=xy, yaw=yaw)
        distance += 0.01


def _colours(rng: np.random.Generator) -> dict[str, list[float]]:
    """A glazed mug's colour and a wooden or painted rack's."""
    glazes = [[0.92, 0.9, 0.85], [0.75, 0.16, 0.12], [0.16, 0.32, 0.7], [0.2, 0.55, 0.35], [0.95, 0.75, 0.2]]
    mug = np.clip(np.array(glazes[rng.integers(len(glazes))]) * rng.uniform(0.92, 1.05), 0, 1)
    wood = np.clip(np.array([0.55, 0.36, 0.2]) * rng.uniform(0.7, 1.2), 0, 1)
    rack = wood if rng.uniform() < 0.7 else np.full(3, rng.uniform(0.12, 0.2))
    return {"mug": [*mug.tolist(), 1.0], "rack": [*rack.tolist(), 1.0]}


def look_from(
    target: np.ndarray, azimuth: float, elevation: float, distance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Camera position and world-from-camera rotation (OpenCV axes) looking at ``target`` (world, m) from
    ``distance`` metres at ``azimuth`` (from world +x about z) and ``elevation`` (rad)."""
    direction = np.array(
        [np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)]
    )
    eye = target + distance * direction
    forward = -direction
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return eye, np.stack([right, np.cross(forward, right), forward], axis=1)


def place_camera(
    layout: HangLayout,
    points: np.ndarray,
    distance: float,
    margin: float = 0.05,
    eye_height: float | None = None,
) -> HangLayout:
    """The layout with its camera ``distance`` metres from the middle of ``points``, or farther (1 cm steps)
    until every point is inside the image, ``margin`` of its size from the edges.

    Args:
        layout: The scene with its camera's direction, ``fovy``, ``width`` and ``height``.
        points: What must be seen, world frame (m), (N, 3).
        distance: The nearest distance to try (m).
        margin: Share of the image size kept free at each edge.
        eye_height: Where given, the camera's height above the table (m): at each distance the elevation
            is the one that puts it there (and the layout's ``camera_elevation`` becomes it).

    Raises:
        ValueError: If no distance up to 3 m frames them.
    """
    target = (points.min(axis=0) + points.max(axis=0)) / 2
    focal = (layout.height / 2) / np.tan(np.deg2rad(layout.fovy) / 2)
    size = np.array([layout.width, layout.height])
    for step in np.arange(distance, 3.0, 0.01):
        elevation = layout.camera_elevation
        if eye_height is not None:
            elevation = float(np.arcsin(np.clip((eye_height - target[2]) / step, -1.0, 1.0)))
        eye, rot = look_from(target, layout.camera_azimuth, elevation, step)
        cam = (points - eye) @ rot
        if (cam[:, 2] < 0.1).any():
            continue
        pixels = focal * cam[:, :2] / cam[:, 2:] + (size - 1) / 2
        if (pixels >= margin * size).all() and (pixels <= (1 - margin) * size).all():
            return replace(layout, camera_pos=eye, camera_rot=rot, camera_elevation=elevation)
    raise ValueError("no camera within 3 m frames the rack, the mug and the hand (raise --fovy)")
