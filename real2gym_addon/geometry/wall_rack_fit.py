"""Fitting a hook board on a wall (the wall form of :mod:`.kinds.rack`) to its masks and depth.

A wall rack hangs in the air: its depth points start well above the table (:func:`is_on_wall`). Its plate
is the one flat, upright face among them: of the level directions, the one along which most points fall
in one thin layer is its normal (turned towards the camera, which looks at the board from the room), that
layer its front face, the layer's spread along the wall and up its width and height. The points standing
off the face by more than :data:`.rack_fit.PEG_CLEARANCE` are the pegs', grouped by touching (on a
1 cm grid). The groups that spread along a line give the pegs' shared elevation; each peg's axis runs
through its group's middle (moved behind the side the camera sees), its root where that axis meets the
face, its length to its farthest points. Then the plate, its pose and thickness (the camera sees its front
and, from the side, a little of its edge), the pegs' radius, elevation and turns are refined together
against the silhouettes and the depth, as a mug tree's are (:func:`.rack_fit.fit_mug_tree`); the roots
follow the refined face, the length stays as measured (:func:`_to_params`, :data:`SHARED`).

The wall is scenery: it is in no mask and it is not simulated, so the fitted rack is fixed where it hangs.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage
from scipy.optimize import minimize

from ..demo import Camera
from .camera import pose_matrix, yaw_rotation
from .fit_base import DEPTH_CAP, FittedObject, RestView, camera_centre, depth_sample
from .kinds import rack
from .rack_fit import (
    DEFAULT_ELEVATION,
    MAX_ELEVATION,
    MIN_RADIUS,
    PEG_CLEARANCE,
    PEG_MIN_POINTS,
    PEG_MIN_SPAN,
    PEG_SHAPE,
    REFINE_RUNS,
    SILHOUETTE_VIEWS,
    RackFitError,
    fill_pieces,
)
from .shapes import Shape

WALL_LIFT = 0.04
"""m: a rack whose depth points start this far above the table (their 2nd percentile) hangs on a wall."""
NORMAL_STEP = math.radians(1.0)
"""rad: the level directions tried for the plate's normal."""
FACE_BIN = 0.003
"""m: the layers along a direction in which the plate's face is looked for ..."""
FACE_LAYER = 0.009
"""... and the thickness of the layer taken as its face (three bins: depth noise spreads it)."""
PEG_GRID = 0.01
"""m: the grid on which the pegs' points are grouped by touching."""
DEFAULT_THICKNESS = 0.015
"""m: a plate's thickness before the silhouettes refine it (a hook board's is 1 to 2 cm)."""
DEPTH_SHARE = 0.5
"""The depth term's weight against the silhouettes' in the refinement (a mug tree's). 0.1 and 0.2 were
tried on tests/core/test_wall_rack.py's views (with the pegs' length still refined): each made one view
better and another worse."""
MAX_PEG_TURN = math.radians(45.0)
"""rad: the most a wall rack's peg may turn aside from straight out of the wall."""


def is_on_wall(points: np.ndarray) -> bool:
    """Whether a rack's depth points (``Nx3``, world, the table's dropped) hang on a wall (module doc)."""
    return len(points) > 0 and float(np.percentile(points[:, 2], 2)) > WALL_LIFT


def _face(points: np.ndarray, toward: np.ndarray) -> tuple[float, float]:
    """The plate's front face: ``(normal's angle about world z, its distance along it)``, the normal towards
    ``toward`` (a level direction to the camera)."""
    best = (-1, 0.0, 0.0)
    for angle in np.arange(0.0, math.pi, NORMAL_STEP):
        along = points[:, :2] @ [math.cos(angle), math.sin(angle)]
        bins = np.floor((along - along.min()) / FACE_BIN).astype(int)
        counts = np.convolve(np.bincount(bins), np.ones(round(FACE_LAYER / FACE_BIN)), mode="same")
        peak = int(np.argmax(counts))
        if counts[peak] > best[0]:
            layer = np.abs(along - (along.min() + (peak + 0.5) * FACE_BIN)) <= FACE_LAYER / 2
            best = (counts[peak], angle, float(np.median(along[layer])))
    _, angle, distance = best
    # The layer's own level line: the direction it spreads least along is the normal, to a fraction of the
    # search's step.
    normal = np.array([math.cos(angle), math.sin(angle)])
    layer = points[np.abs(points[:, :2] @ normal - distance) <= FACE_LAYER / 2, :2]
    if len(layer) >= 3:
        _, _, axes = np.linalg.svd(layer - layer.mean(axis=0), full_matrices=False)
        normal = axes[1] if axes[1] @ normal > 0 else -axes[1]
        angle, distance = math.atan2(normal[1], normal[0]), float(np.median(layer @ normal))
    if toward @ [math.cos(angle), math.sin(angle)] < 0:
        angle, distance = angle + math.pi, -distance
    return math.remainder(angle, 2 * math.pi), distance


def _peg_groups(points: np.ndarray) -> list[np.ndarray]:
    """The pegs' points in groups that touch on a :data:`PEG_GRID` grid, those with enough points."""
    cells = np.floor(points / PEG_GRID).astype(int)
    cells -= cells.min(axis=0)
    grid = np.zeros(cells.max(axis=0) + 1, bool)
    grid[tuple(cells.T)] = True
    labels, count = ndimage.label(grid, structure=np.ones((3, 3, 3)))
    of_point = labels[tuple(cells.T)]
    groups = [points[of_point == k] for k in range(1, count + 1)]
    return [g for g in groups if len(g) >= PEG_MIN_POINTS]


def _initial(views: list[RestView], points: np.ndarray) -> tuple[np.ndarray, dict, np.ndarray, np.ndarray]:
    """The start of the refinement: ``(the post frame's origin (3,) and turn (its normal's angle) as a vector
    [x, y, z, angle], the rack's parameters, each peg's points' middle (world, ``Px3``) and the direction
    from its axis towards the camera square to the peg, as long as the sine of the camera's angle to it
    (``Px3``))``."""
    eye = camera_centre(views)
    toward = eye[:2] - np.median(points[:, :2], axis=0)
    angle, distance = _face(points, toward / max(np.linalg.norm(toward), 1e-9))
    normal = np.array([math.cos(angle), math.sin(angle), 0.0])
    side = np.array([-normal[1], normal[0], 0.0])
    out = points @ normal - distance
    face = points[np.abs(out) <= FACE_LAYER]
    if len(face) < PEG_MIN_POINTS:
        raise RackFitError("no plate found in the wall rack's depth: no flat upright face among its points")
    lateral = face @ side
    left, right = np.percentile(lateral, [1, 99])
    bottom, top = np.percentile(face[:, 2], [1, 99])
    middle = (left + right) / 2
    # Each group's principal axis is its peg's, where it spreads along a line; a peg seen end on (pointing at
    # the camera, its few readings spread along the ray by the noise) takes the others' direction.
    groups, lines = _peg_groups(points[out > PEG_CLEARANCE]), []
    for group in groups:
        centre = group.mean(axis=0)
        _, spreads, axes = np.linalg.svd(group - centre, full_matrices=False)
        direction = axes[0] if axes[0] @ normal > 0 else -axes[0]
        along = np.ptp((group - centre) @ direction)
        if (
            along >= PEG_MIN_SPAN
            and spreads[0] >= PEG_SHAPE * spreads[1]
            and direction @ normal > math.cos(MAX_PEG_TURN)
        ):
            lines.append(direction)
    elevation = float(np.median([math.asin(d[2]) for d in lines])) if lines else DEFAULT_ELEVATION
    elevation = float(np.clip(elevation, 0.0, MAX_ELEVATION))
    pegs = []
    for group in groups:
        centre = group.mean(axis=0)
        direction = math.cos(elevation) * normal + [0.0, 0.0, math.sin(elevation)]
        root = centre - direction * ((centre @ normal - distance) / (direction @ normal))
        reach = float(np.percentile((group - root) @ direction, 98))
        if reach < PEG_MIN_SPAN:
            continue  # a knob on the plate, not a peg
        seen = (eye - centre) - ((eye - centre) @ direction) * direction
        pegs.append({"height": float(root[2] - bottom), "offset": float(root @ side - middle), "reach": reach,
                     "centre": centre, "seen": seen / np.linalg.norm(eye - centre)})  # fmt: skip
    if not pegs:
        raise RackFitError("no peg found on the wall rack: none of its depth points stands off its plate")
    pegs.sort(key=lambda p: (p["height"], p["offset"]))
    params = {
        "plate_width": float(right - left),
        "plate_thickness": DEFAULT_THICKNESS,
        "post_height": float(max(top - bottom, max(p["height"] for p in pegs) + 0.01)),
        "peg_radius": 0.005,
        "peg_length": float(np.median([p["reach"] for p in pegs])),
        "peg_elevation": elevation,
        "peg_count": float(len(pegs)),
    }
    for i, peg in enumerate(pegs):
        params[rack.peg_key(i, "peg_height")] = peg["height"]
        params[rack.peg_key(i, "peg_offset")] = peg["offset"]
        params[rack.peg_key(i, "peg_azimuth")] = 0.0  # straight out: the refinement turns it
    # The post frame's origin: the back face's bottom edge's middle, a thickness behind the front face.
    origin = (distance - DEFAULT_THICKNESS) * normal + middle * side + [0.0, 0.0, bottom]
    centres, seen = np.array([p["centre"] for p in pegs]), np.array([p["seen"] for p in pegs])
    return np.array([*origin, angle]), params, centres, seen


SHARED = ("plate_width", "plate_thickness", "post_height", "peg_radius", "peg_elevation")
"""The refined parameters besides the pose and the pegs' turns, in the vector's order. The pegs' length
stays as their points measured it: refined, it grew 2-12 mm on the generated boards, whose pegs the camera
sees 14-34 degrees off their axis (their farthest points had read it 0.9-3.2 mm long)."""


def _to_params(x: np.ndarray, centres: np.ndarray, seen: np.ndarray, length: float) -> dict:
    """The refined vector (pose, then :data:`SHARED`, then each peg's turn) -> params.

    The vector's pose puts the plate's *front* face's bottom edge's middle: the thickness grows the plate
    backwards, into the wall. Each peg's axis runs through its points' middle (``centres``, world), behind
    the surface the camera sees (``seen``: towards the camera, as long as the sine of its angle to the peg),
    along its direction to where it meets the face: its root. A peg seen against its plate has no silhouette
    of its own and its few points weigh little among the plate's: refined with the rest, on the generated
    boards, the roots went 2-11 mm off (from their points, within 2.4 mm).
    """
    params = {"peg_count": float(len(centres)), "peg_length": length}
    for name, value in zip(SHARED, x[4:9], strict=True):
        params[name] = abs(float(value))
    params["peg_radius"] = max(params["peg_radius"], MIN_RADIUS)
    params["plate_thickness"] = max(params["plate_thickness"], 0.003)
    turn, front = yaw_rotation(float(x[3])), np.asarray(x[:3])
    for i, (centre, toward) in enumerate(zip(centres, seen, strict=True)):
        azimuth = float(np.clip(x[9 + i], -MAX_PEG_TURN, MAX_PEG_TURN))
        direction = turn @ rack.peg_direction(params["peg_elevation"], azimuth)
        # The points on its side are on average 2/pi of a radius in front of its axis, those on its end on
        # it; the side's share of what is seen grows with the sine of the camera's angle to the peg.
        sine = float(np.linalg.norm(toward))
        side = 2 * params["peg_length"] * sine
        share = side / max(side + math.pi * params["peg_radius"] * math.sqrt(max(1 - sine**2, 0.0)), 1e-9)
        on_axis = centre - 2 / math.pi * params["peg_radius"] * share * toward / max(sine, 1e-9) - front
        root = on_axis - direction * (on_axis @ turn[:, 0]) / max(direction @ turn[:, 0], 1e-3)
        params[rack.peg_key(i, "peg_height")] = float(root[2])
        params[rack.peg_key(i, "peg_offset")] = float(root @ turn[:, 1])
        params[rack.peg_key(i, "peg_azimuth")] = azimuth
    return params


def _world_from_post(x: np.ndarray, params: dict) -> np.ndarray:
    """The post frame in the world from the vector's front-face pose and the plate's thickness."""
    turn = yaw_rotation(float(x[3]))
    return pose_matrix(np.asarray(x[:3]) - turn @ [params["plate_thickness"], 0.0, 0.0], turn)


def fit_wall_rack(views: list[RestView], camera: Camera, points: np.ndarray) -> FittedObject:
    """Fits a hook board on a wall (module doc) to ``views`` and their depth ``points`` (``Nx3``, world).

    Raises:
        RackFitError: The depth shows no plate or no peg (the message says which).
    """
    origin, params, centres, seen = _initial(views, points)
    pegs, length = int(params["peg_count"]), params["peg_length"]
    front = origin[:3] + yaw_rotation(float(origin[3])) @ [params["plate_thickness"], 0.0, 0.0]
    start = [*front, origin[3], *(params[k] for k in SHARED)]
    start += [params[rack.peg_key(i, "peg_azimuth")] for i in range(pegs)]
    chosen = [views[int(i)] for i in np.linspace(0, len(views) - 1, min(SILHOUETTE_VIEWS, len(views)))]
    sample = depth_sample(views, points)

    def loss(x: np.ndarray) -> float:
        shape_params = _to_params(x, centres, seen, length)
        shape = Shape(rack.RACK.name, (1.0, 1.0, 1.0), shape_params)
        world_from_local = _world_from_post(x, shape_params) @ pose_matrix(
            -rack.post_offset(shape), np.eye(3)
        )
        error = 0.0
        for view in chosen:
            model = fill_pieces(shape.collision_pieces(), view.camera_from_world @ world_from_local,
                                 view.mask.shape, camera)  # fmt: skip
            union = np.logical_or(model, view.mask).sum()
            error += 1.0 - (np.logical_and(model, view.mask).sum() / union if union else 0.0)
        local = (sample - world_from_local[:3, 3]) @ world_from_local[:3, :3]
        gap = np.minimum(np.abs(shape.surface_distance(local)), DEPTH_CAP)
        return error / len(chosen) + DEPTH_SHARE * float(gap.mean()) / DEPTH_CAP

    x = np.asarray(start, float)
    for _ in range(REFINE_RUNS):
        result = minimize(loss, x, method="Nelder-Mead",
                          options={"xatol": 2e-4, "fatol": 1e-5, "maxiter": 400 * len(start)})  # fmt: skip
        x = result.x
    params = _to_params(x, centres, seen, length)
    world_from_post = _world_from_post(x, params)
    shape = Shape(rack.RACK.name, rack.size_of(params), params, fit_error=float(result.fun))
    yaw = float(math.remainder(x[3], 2 * math.pi))
    centre = world_from_post[:3, 3] - yaw_rotation(yaw) @ rack.post_offset(shape)
    return FittedObject(shape, centre, yaw)
