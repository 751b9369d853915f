"""The geometry stage's moving parts: each part's joint, shape and value per frame, and its keyframes.

For each part prompted on an object (a door, a drawer), from the part's own masks:

1. **The joint.** With depth, the part's points on every frame go to :func:`.joint.fit_joint`,
   which registers them to a reference frame's and fits a hinge or a slide (whichever explains the
   motion clearly better, unless the prompt names one). Without depth, :func:`.joint.fit_joint_without_depth`
   tries a hinge on each edge of the body's opening and a slide along its normal against the part's
   silhouettes. A joint given in prompts.json is used as given; the video then only measures ``q``.
   A door's hinge line is then checked against its panel's faces and edges (:func:`hinge_line_from_planes`):
   the points place the line well across a door that turns slowly in view, but a door swung shut in a few
   frames leaves it free along the panel's normal (a rigid slide within its own plane moves no point
   off its surface), and it was found 4 to 9 cm behind a microwave's door. A line that far from where
   the faces put it is taken from them, with a warning. A recorded hand that traced an arc while
   the door turned (holding its handle, or pushing on one place of it) places the line better than
   either: the arc's centre is taken, and without depth its sweep is how far the door turned
   (:mod:`.hand_arc`). An axis within :data:`HINGE_SQUARE` of plumb or level is made so.
2. **Which end is closed.** Of the two ends of the observed range, the part is closed at the one where
   it lies nearest its body's centre (a door against its frame, a drawer pushed in). The axis is
   turned so that opening is positive and ``q`` is 0 closed: the range is ``[0, most open seen]``.
3. **The shape**, measured at the closed pose (the points of the frame that shows most of the part,
   moved there by the joint): a door is a panel as wide and tall as its points spread across the axis
   and along it, :data:`DOOR_THICKNESS` thick (one face shows); a drawer is an open box as wide and
   tall as its front, as deep as the body allows.
4. **The body's front** (its local +x) is turned to face the part, and a box-fitted body becomes a
   cabinet with walls.
5. **Keyframes**: ``push`` (or ``grasp`` where a recorded gripper closes as the part starts to move,
   then ``release`` where it opens), ``open`` and ``closed`` where the joint reaches its ends and stays.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import Real2GymError, WarningLog
from ..trajectory import FULL_OPENING
from .camera import back_project, pose_at, pose_matrix, transform, yaw_rotation
from .carry import release_after
from .coasting import coasting, joint_inertia
from .fit_base import FittedObject
from .hand_arc import hand_arc, turned_with_hand
from .joint import fit_joint, fit_joint_without_depth
from .keyframes import GripperTrajectory
from .kinds import cabinet as cabinet_kind
from .kinds import drawer as drawer_kind
from .kinds.articulated import HANDLE_DEFAULTS
from .parts import PART_ARMATURE, Joint, PartGeometry, part_key
from .pieces import DEFAULT_DENSITY
from .shape_kinds import CABINET, DOOR, DRAWER, MESH
from .shapes import Shape
from .table import GeometryError

DOOR_THICKNESS = 0.02
"""m: a door panel's thickness; the video shows one face of it."""
FACE_BIN = 0.004
"""m: the slices a part's points are counted in along its outward axis to find its front face."""
FACE_LAYER = 0.3
"""A slice holding this share of the fullest one's points is a layer of the part's surface, not a handle."""
FACE_WINDOW = 0.01
"""m: a face's middle is the median of the points this near it (closer than a drawer's inside behind it)."""
FACE_SETTLE = 20
"""Steps, at most, for that median to settle."""
HANDLE_STANDOFF = (0.008, 0.08)
"""m: points this far in front of a part's front face are its handle's."""
HANDLE_POINTS = 12
HANDLE_MIN_DEPTH = 0.02
HANDLE_BIN = 0.01
"""m: the slices along a bar handle in which its points are counted."""
HANDLE_DENSITY = 0.01
"""A slice of a bar handle holds at least this share of its points (fewer: stray points off an edge)."""
HANDLE_ACROSS = 0.025
"""m: a bar handle's points lie within this of their median across the bar."""
HANDLE_FRAMES = 30
"""Frames, at most, spread over the video, whose points (moved to the closed pose) measure a handle."""
"""m: a bar handle stands at least this far off its face (its bar's 12 mm and a finger's gap)."""
"""Depth points a handle needs to be fitted."""
MIN_POINTS = 40
"""Depth points a frame needs for the part's pose to be measured there."""
MOVING = {"hinge": math.radians(3.0), "slide": 0.01}
"""How far from where it started a joint has gone when the part has started to move (rad, m)."""
AT_END = 0.05
"""A joint within this share of its range from an end is at that end (``open``, ``closed``)."""
GRIP_CLOSING = 0.3
"""A recorded gripper that closes by this share of its opening around the start of the part's motion
grasps it; one that does not, pushes it."""
EMPTY_GRIP = 0.05
"""A recorded gripper closed below this share of its opening holds nothing: it pushes (a microwave's door
pushed shut with closed fingers, 2 s after they closed, was taken for grasped by a handle it does not
have). Fingers closed on a handle stop at its thickness (0.19 to 0.24 on the generated cabinets)."""
GRIP_WINDOW_S = 2.0
"""s: how long before the part starts to move a closing gripper counts as its grasp (a hand closes on a
handle and settles before it pulls: the door of a generated cabinet started 0.5 s after the fingers had
closed, and was taken for pushed)."""


def _part_points(mask: np.ndarray, depth_in, camera, world_from_camera) -> np.ndarray | None:
    """The part's depth points (world frame), its mask eroded so that mixed pixels at the edge go.

    Args:
        mask: ``HxW`` bool, the part's pixels.
        depth_in: box (x0, y0, x1, y1 pixels, ends excluded) -> the cleaned depth (``HxW`` metres, right in
            that box at least), or None without depth.
        camera: The intrinsics.
        world_from_camera: 4x4.
    """
    if not mask.any():
        return None
    eroded = cv2.erode(mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    rows, cols = np.flatnonzero(eroded.any(axis=1)), np.flatnonzero(eroded.any(axis=0))
    if not len(rows):
        return None
    depth = depth_in((int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1))
    if depth is None:
        return None
    points = back_project(camera, depth, eroded)
    if len(points) < MIN_POINTS:
        return None
    # Mixed pixels at an edge and depth seen past the part (through a gap) lie far off its depth.
    z = points[:, 2]
    median = np.median(z)
    points = points[np.abs(z - median) < 3 * max(0.02, 4 * np.median(np.abs(z - median)))]
    return transform(world_from_camera, points) if len(points) >= MIN_POINTS else None


JUMP = {"hinge": math.radians(10.0), "slide": 0.03}
"""A frame's joint value this far from the median of its neighbours' (three on each side) is a misfit (a
door seen edge-on, its other face taken for this one) and is left unmeasured (rad, m)."""


def _without_jumps(q: np.ndarray, kind: str) -> np.ndarray:
    """``q`` with the frames that jump away from their neighbours set to NaN."""
    kept = q.copy()
    for f in np.flatnonzero(np.isfinite(q)):
        around = q[max(0, f - 3) : f + 4]
        around = around[np.isfinite(around)]
        if len(around) >= 3 and abs(q[f] - np.median(around)) > JUMP[kind]:
            kept[f] = np.nan
    return kept


TURNED = math.radians(20.0)
"""A part whose face turns this far over the video is on a hinge."""


def _turns(points: list[np.ndarray | None]) -> bool:
    """Whether the part's face turns about the vertical by :data:`TURNED` over the video (a door on an upright
    hinge): the heading of its points' best plane's normal, on the frames where that plane stands upright (a
    drawer pulled open shows its floor too, whose normal is vertical and says nothing)."""
    headings = []
    for cloud in points:
        if cloud is not None and len(cloud) >= MIN_POINTS:
            sample = cloud[:: max(1, len(cloud) // 500)]
            normal = np.linalg.svd(sample - sample.mean(axis=0), full_matrices=False)[2][-1]
            if abs(normal[2]) < 0.5:
                headings.append(math.atan2(normal[1], normal[0]))
    if len(headings) < 3:
        return False
    turned = np.abs((np.array(headings) - headings[0] + math.pi / 2) % math.pi - math.pi / 2)
    return bool(np.percentile(turned, 90) > TURNED)


def _closed_end(q: np.ndarray, points: list[np.ndarray | None], body_centre: np.ndarray) -> float:
    """The end of the observed range of ``q`` (NaN where unmeasured) at which the part lies nearest its body's
    centre."""
    ends = []
    for end in (np.nanmin(q), np.nanmax(q)):
        frames = [
            f for f in np.flatnonzero(np.isfinite(q)) if abs(q[f] - end) < 1e-9 and points[f] is not None
        ]
        if not frames:
            frames = [int(np.nanargmin(np.abs(q - end)))]
        cloud = points[frames[0]]
        distance = (
            np.inf if cloud is None else float(np.linalg.norm(cloud.mean(axis=0)[:2] - body_centre[:2]))
        )
        ends.append((distance, float(end)))
    return min(ends)[1]


def _panel_frame(points: np.ndarray, axis: np.ndarray, away: np.ndarray) -> np.ndarray:
    """3x3 world-from-panel rotation: x the face's normal pointing ``away``, z along ``axis``."""
    centred = points - points.mean(axis=0)
    seen_normal = np.linalg.svd(centred, full_matrices=False)[2][-1]
    normal = seen_normal - axis * (seen_normal @ axis)  # the panel holds its hinge's axis
    normal /= max(np.linalg.norm(normal), 1e-9)
    if normal @ away < 0:
        normal = -normal
    z = axis / np.linalg.norm(axis)
    y = np.cross(z, normal)
    return np.column_stack([normal, y, z])


def _face_offset(x: np.ndarray) -> float:
    """The outermost substantial layer of points along a part's outward axis (m): its front face, past which
    only a handle stands (and behind which a drawer's open inside shows).

    The outermost slice holding :data:`FACE_LAYER` of the fullest one's points finds the layer; its middle is
    then where the median of the points within :data:`FACE_WINDOW` of it settles. The slice alone sits on the
    noise's outer side: with depth noise of 4-5 mm it put generated doors' faces 3-7 mm proud of the truth
    (a microwave's door into the hand that pushes it); the settled median, within 2 mm."""
    low, high = np.percentile(x, 1), np.percentile(x, 99)
    bins = max(1, int(np.ceil((high - low) / FACE_BIN)))
    counts, edges = np.histogram(x, bins=bins, range=(low, low + bins * FACE_BIN))
    layers = np.flatnonzero(counts >= FACE_LAYER * counts.max())
    top = layers[-1]
    inside = (x >= edges[top]) & (x < edges[top + 1])
    face = float(np.median(x[inside])) if inside.any() else float(edges[top])
    for _ in range(FACE_SETTLE):
        near = x[np.abs(x - face) < FACE_WINDOW]
        settled = float(np.median(near)) if len(near) else face
        if abs(settled - face) < 1e-5:
            break
        face = settled
    return face


def _standing_off(
    local: np.ndarray,
    evidence: list[np.ndarray] | None,
    centre: np.ndarray,
    rotation: np.ndarray,
    face: float,
) -> np.ndarray:
    """The part's points in its local frame (``(world - centre) @ rotation``) with ``evidence``'s added: each
    frame's points at the closed pose, their face levelled onto ``face`` (a plane fitted to each frame's
    face layer), so that a joint value a degree off, which tilts a 30 cm door's far edge 5 mm out, does not
    stand its face off as a handle."""
    if not evidence:
        return local
    levelled = [local]
    for cloud in evidence:
        here = (cloud - centre) @ rotation
        if len(here) < MIN_POINTS:
            continue
        layer = here[np.abs(here[:, 0] - _face_offset(here[:, 0])) < 2 * FACE_BIN]
        if len(layer) < MIN_POINTS:
            continue
        design = np.column_stack([np.ones(len(layer)), layer[:, 1], layer[:, 2]])
        plane = np.linalg.lstsq(design, layer[:, 0], rcond=None)[0]
        here[:, 0] += face - (plane[0] + plane[1] * here[:, 1] + plane[2] * here[:, 2])
        levelled.append(here)
    return np.concatenate(levelled)


def _handle_params(local: np.ndarray, face: float, bar_axis: int, centre_yz: np.ndarray) -> dict[str, float]:
    """A bar handle's parameters (:data:`.kinds.articulated.HANDLE_KEYS`) from the points standing off a part's
    front face (local frame, the face at x = ``face``), or none where too few stand off it.

    The depth under a thin bar is patchy: a frame holds a few dozen of its points, and stray ones off the
    part's edges stand off the face too. The bar is the densest stretch along its axis: the run of
    :data:`HANDLE_BIN` slices, each holding at least :data:`HANDLE_DENSITY` of the points (and 2), that
    holds the most, among the points within :data:`HANDLE_ACROSS` of their median across it.

    Args:
        local: ``Nx3`` the part's points in its local frame (from several frames, moved to one pose).
        face: Local x of its front face (m).
        bar_axis: 1 for a bar across (a drawer's), 2 for an upright bar (a door's).
        centre_yz: Local (y, z) of the part's box centre (the handle's offsets are from it).
    """
    stand = local[:, 0] - face
    bar = local[(stand > HANDLE_STANDOFF[0]) & (stand < HANDLE_STANDOFF[1])]
    if len(bar) < HANDLE_POINTS:
        return {}
    across = 3 - bar_axis  # the other in-face axis
    bar = bar[np.abs(bar[:, across] - np.median(bar[:, across])) < HANDLE_ACROSS]
    if len(bar) < HANDLE_POINTS:
        return {}
    along = bar[:, bar_axis]
    edges = np.arange(along.min(), along.max() + HANDLE_BIN, HANDLE_BIN)
    counts = np.histogram(along, bins=edges)[0] if len(edges) > 1 else np.array([len(bar)])
    dense = counts >= max(2, HANDLE_DENSITY * len(bar))
    runs, start = [], None
    for i, full in enumerate([*dense, False]):
        if full and start is None:
            start = i
        elif not full and start is not None:
            runs.append((int(counts[start:i].sum()), start, i))
            start = None
    if not runs:
        return {}
    _, first, last = max(runs)
    bar = bar[(along >= edges[first]) & (along <= edges[min(last, len(edges) - 1)])]
    if len(bar) < HANDLE_POINTS:
        return {}
    depth = float(np.percentile(bar[:, 0] - face, 95))
    if depth < HANDLE_MIN_DEPTH:  # a few points off a warped or noisy face: no handle
        return {}
    ends = np.percentile(bar[:, bar_axis], [2, 98])
    middle = np.median(bar[:, 1:], axis=0)
    middle[bar_axis - 1] = ends.mean()
    return {"handle_length": float(max(ends[1] - ends[0], 0.03)),
            "handle_depth": depth,
            "handle_offset_y": float(middle[0] - centre_yz[0]), "handle_offset_z": float(middle[1] - centre_yz[1])}  # fmt: skip


HINGE_SQUARE = math.radians(5.0)
"""A fitted hinge axis within this of the world's up is made plumb, and within this of level is made level:
furniture's hinges are one or the other, and a door hung 1 degree off plumb swings shut under its own
weight in the simulation (a microwave's door fell 0.8 rad while the cup went in)."""
PLANE_TURN = 0.05
"""The panels' normals must spread this much (the smaller across-axis eigenvalue of their mean outer
product; 0.05 is two views 35 degrees apart, or about 15 degrees each side) for their planes to place a
hinge line."""
PLANAR = 0.3
"""A frame's points are a panel where their thinnest spread is under this share of the next."""
EDGE_WEIGHT = 0.1
"""A panel's edge (a percentile of its points along it) counts this much against its face's plane (the settled
median of thousands of points) in :func:`hinge_line_from_planes`. Edges move with the view: the eroded mask and
the depth's mixed pixels trim an edge against the background more than one against a surface, and a door's end
face or handle widens its silhouette; on generated cabinets the edges of the same door were 1-2.5 cm apart shut
and open, where its face's plane was within 2-4 mm. At 0.3 they outvoted a cabinet's sweep of faces (its line
14 mm off, against 1-3 mm at 0.1); at 0.1 they still place a door shown in two stances (microwaves, 5-10 mm)."""
PANEL_EDGE = 1
"""Percentile of a panel's points along it taken as its edge (each edge is measured alike on every frame)."""
ROBUST_SCALE = 0.004
"""m: residuals past this count less in :func:`hinge_line_from_planes` (a hand over an edge, a frame's noise)."""
ROBUST_STEPS = 10
"""Rounds of re-weighting in :func:`hinge_line_from_planes`."""
TURN_BIN = math.radians(5.0)
"""The frames whose door faces within this of one heading are one stance in :func:`hinge_line_from_planes`."""
STANCE_FRAMES = 5
"""A stance is measured on at most this many of its frames, spread over it."""
PLANE_SAMPLE = 500
"""A frame's plane (which way it faces, whether it is flat) is fitted to about this many of its points."""
FACE_MISFIT_SLACK = 0.001
"""m: a fitted hinge line is kept while the door's faces, turned about it, lie within this (RMS over the stances)
of how well they lie about the line they place themselves; past it, their line is taken. On the generated sets
(MuJoCo and Cycles films, 18 doors) the cabinets' fitted lines, 0.7-2 mm from the truth, misfit the faces
0.02-0.17 mm more than the faces' own lines (1.4-8.3 mm from the truth); the microwaves' fitted lines, 3-11 cm
off, 3.2-22 mm more. A line's misfit does not grow with the depth's noise: both lines share it."""


def square_hinge_axis(axis: np.ndarray) -> np.ndarray:
    """A hinge axis made plumb or level where it is within :data:`HINGE_SQUARE` of either."""
    up = float(axis[2])
    if abs(up) >= math.cos(HINGE_SQUARE):
        return np.array([0.0, 0.0, math.copysign(1.0, up)])
    if abs(up) <= math.sin(HINGE_SQUARE):
        level = np.array([axis[0], axis[1], 0.0])
        return level / np.linalg.norm(level)
    return axis


@dataclasses.dataclass(frozen=True)
class FaceLine:
    """The hinge line a door's faces place (:func:`hinge_line_from_planes`) and how well they lie about it."""

    point: np.ndarray
    """A point of the line (world), level with the fitted pivot."""
    misfit_m: float
    """RMS of the faces' planes (one per stance) from the slab turned about this line."""
    fitted_misfit_m: float
    """The same about the fitted joint's line (the faces' offset and the edges refitted for it)."""

    def replaces_fit(self) -> bool:
        """Whether the faces lie clearly worse about the fitted line than about their own
        (:data:`FACE_MISFIT_SLACK`)."""
        return self.fitted_misfit_m > self.misfit_m + FACE_MISFIT_SLACK


def hinge_line_from_planes(
    joint: Joint, points: list[np.ndarray | None], q: np.ndarray, eyes: np.ndarray, body_centre: np.ndarray
) -> FaceLine | None:
    """The hinge line a door's faces place, or None where the frames' planes do not turn enough to tell
    (:data:`PLANE_TURN`).

    Each measured frame's panel gives the plane of the face the camera sees and where the panel's two edges
    lie along it. The door is taken as a slab :data:`DOOR_THICKNESS` thick (the panel the scene is built
    with) turning rigidly about the line, so that per frame, with ``m`` its outer face's normal and ``v``
    the direction along it across the axis (both turned with the door, measured), the line's point ``H``
    meets ``m @ H + a = face`` (``+ DOOR_THICKNESS`` where the inner face is the one seen: the camera stands
    on the door's body side) and ``v @ H + b = edge`` for each edge, with ``a`` (the outer face's offset from
    the line) and the edges' ``b`` the same on every frame. Solved by least squares, the edges weighted
    :data:`EDGE_WEIGHT`, large residuals down-weighted (:data:`ROBUST_SCALE`).

    The planes alone place the line only to within half the door's thickness: a door seen open from inside
    its swing shows its inner face, then its outer face shut, and the line through the middles of the
    panels was 14-23 mm off a microwave's hinge. The slab's edges and faces together turn it about one line.

    The faces' misfit is also measured about the fitted joint's line (the same equations with the line held
    there), so that the caller can tell whether the faces contradict it (:meth:`FaceLine.replaces_fit`).

    Args:
        joint: The fitted hinge (its axis is kept; ``q`` is measured about it, ``joint.closed`` shut).
        points: Per frame, the part's points (world), or None.
        q: Per frame, the joint's value (NaN where not measured).
        eyes: ``(F, 3)`` the camera's position per frame.
        body_centre: The body's centre (world): the door's outer face is the one away from it, shut.
    """
    axis = joint.axis
    across = np.linalg.svd(np.eye(3) - np.outer(axis, axis))[0][:, :2]  # a basis of the plane across the axis
    seen = {}  # frame -> (outward normal, whether the outer face is the one seen)
    for f, cloud in enumerate(points):
        if cloud is None or len(cloud) < MIN_POINTS or not np.isfinite(q[f]):
            continue
        sample = cloud[:: max(1, len(cloud) // PLANE_SAMPLE)]
        centre = sample.mean(axis=0)
        spread, directions = np.linalg.svd(sample - centre, full_matrices=False)[1:]
        if spread[2] > PLANAR * spread[1]:
            continue
        normal = directions[2] - axis * (directions[2] @ axis)
        normal /= max(np.linalg.norm(normal), 1e-9)
        if normal @ (eyes[f] - centre) < 0:
            normal = -normal  # toward the camera: the face seen is the outermost layer along it
        closing = joint.motion(joint.closed - q[f])[:3, :3]
        shut_centre = closing @ (centre - joint.pivot) + joint.pivot
        outer = float((closing @ normal) @ (shut_centre - body_centre)) > 0.0
        seen[f] = (normal if outer else -normal, outer)
    if len(seen) < 2:
        return None
    normals = np.array([outward for outward, _ in seen.values()])
    if np.linalg.eigvalsh(normals.T @ normals / len(normals))[1] < PLANE_TURN:  # [0] is along the axis (0)
        return None
    # A door stands still most of a video: each turn it shows counts once, lest the stances it holds outvote the
    # frames that turn it (an edge's bias at one stance is the same on all of its frames); a stance is measured
    # on a few of its frames, spread over it.
    stances = {}
    for f, outward in zip(seen, normals, strict=True):
        heading = math.atan2(outward @ across[:, 1], outward @ across[:, 0])
        stances.setdefault(round(heading / TURN_BIN), []).append(f)
    rows, values, prior = [], [], []
    for frames in stances.values():
        picked = [
            frames[i] for i in np.unique(np.linspace(0, len(frames) - 1, STANCE_FRAMES).round().astype(int))
        ]
        measured = []
        for f in picked:
            cloud, (outward, outer) = points[f], seen[f]
            centre = cloud.mean(axis=0)
            toward = outward if outer else -outward
            depth = (cloud - centre) @ toward
            face = _face_offset(depth)
            plane = outward @ centre + (face if outer else -face)
            along = np.cross(axis, outward)
            panel = cloud[np.abs(depth - face) < FACE_WINDOW] @ along
            low, high = np.percentile(panel, PANEL_EDGE), np.percentile(panel, 100 - PANEL_EDGE)
            measured.append(
                (
                    [*(outward @ across), 1, 0, 0],
                    [*(along @ across), 0, 1, 0],
                    [*(along @ across), 0, 0, 1],
                    plane + (0.0 if outer else DOOR_THICKNESS),
                    low,
                    high,
                )  # fmt: skip
            )
        for k in range(3):
            rows.append(np.mean([m[k] for m in measured], axis=0))
            values.append(float(np.mean([m[3 + k] for m in measured])))
            prior.append(1.0 if k == 0 else EDGE_WEIGHT)
    rows, values, prior = np.array(rows), np.array(values), np.array(prior)
    line, misfit = _solve_slab(rows, values, prior)
    _, fitted_misfit = _solve_slab(rows, values, prior, held=across.T @ joint.pivot)
    # Level with the fitted pivot.
    return FaceLine(across @ line + axis * (axis @ joint.pivot), misfit, fitted_misfit)


def _solve_slab(
    rows: np.ndarray, values: np.ndarray, prior: np.ndarray, held: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """The slab's equations of :func:`hinge_line_from_planes` solved by robust least squares: the line's place
    across its axis (``held`` there, if given), and the faces' RMS residual (m; their rows have weight 1)."""
    weights = prior
    if held is not None:
        values = values - rows[:, :2] @ held
        rows = rows[:, 2:]
    for _ in range(ROBUST_STEPS):
        solution = np.linalg.lstsq(rows * weights[:, None], values * weights, rcond=None)[0]
        residual = np.abs(rows @ solution - values)
        weights = prior * np.sqrt(np.minimum(1.0, ROBUST_SCALE / np.maximum(residual, 1e-9)))
    faces = prior == 1.0
    return (held if held is not None else solution[:2]), float(np.sqrt(np.mean(residual[faces] ** 2)))


def _outer_face_seen(joint: Joint, q: float, points: np.ndarray, world_from_camera, body_centre) -> bool:
    """Whether the camera sees a door's outer face on a frame: the camera, moved with the door to its closed
    pose, stands on the side of it away from its body."""
    closing = joint.motion(joint.closed - q)
    eye = transform(closing, np.asarray(world_from_camera)[None, :3, 3])[0]
    centre = transform(closing, points.mean(axis=0)[None])[0]  # a rigid move keeps the mean: move it alone
    return float((eye - centre) @ (centre - body_centre)) > 0.0


def _door_shape(
    points: np.ndarray,
    joint: Joint,
    body_centre: np.ndarray,
    inner: bool = False,
    evidence: list[np.ndarray] | None = None,
) -> tuple[Shape, np.ndarray, np.ndarray]:
    """A door panel from its points at the closed pose: ``(shape, centre (3,), rotation 3x3)``, world frame;
    with a bar handle where points stand off its face (in ``evidence``, other frames' points at the closed
    pose, too: :func:`_standing_off`). ``inner``: the points are on its inner face (the camera saw the door
    open from inside its swing): the panel stands out from them, and has no handle."""
    seen_centre = points.mean(axis=0)
    rotation = _panel_frame(points, joint.axis, seen_centre - body_centre)
    local = (points - seen_centre) @ rotation
    face = _face_offset(local[:, 0])
    panel = local[local[:, 0] <= face + HANDLE_STANDOFF[0]]
    low, high = np.percentile(panel, 1, axis=0), np.percentile(panel, 99, axis=0)
    middle = (low + high) / 2
    out = DOOR_THICKNESS / 2 if inner else -DOOR_THICKNESS / 2
    centre = seen_centre + rotation @ np.array([face + out, middle[1], middle[2]])
    size = (DOOR_THICKNESS, float(high[1] - low[1]), float(high[2] - low[2]))
    handle = (
        {}
        if inner
        else _handle_params(_standing_off(local, evidence, seen_centre, rotation, face), face, 2, middle[1:])
    )
    return Shape(DOOR.name, size, handle), centre, rotation


def _drawer_shape(
    points: np.ndarray, joint: Joint, body: FittedObject, evidence: list[np.ndarray] | None = None
) -> tuple[Shape, np.ndarray, np.ndarray]:
    """A drawer from its front's points at the closed pose, as deep as the body's inside along the slide; with
    a bar handle where points stand off its front (in ``evidence`` too, as for a door)."""
    out = joint.axis if joint.axis @ (points.mean(axis=0) - body.position) > 0 else -joint.axis
    up = np.array([0.0, 0.0, 1.0])
    across = np.cross(up, out)
    across /= max(np.linalg.norm(across), 1e-9)
    rotation = np.column_stack([out, across, np.cross(out, across)])
    seen_centre = points.mean(axis=0)
    local = (points - seen_centre) @ rotation
    face = _face_offset(local[:, 0])
    front_points = local[np.abs(local[:, 0] - face) <= HANDLE_STANDOFF[0]]
    low, high = np.percentile(front_points, 1, axis=0), np.percentile(front_points, 99, axis=0)
    middle = (low + high) / 2
    front = seen_centre + rotation @ np.array([face, middle[1], middle[2]])
    extents = np.abs(yaw_rotation(body.yaw).T @ out) @ np.asarray(body.shape.size, float)
    depth = float(max(0.05, 0.9 * extents))
    size = (depth, float(high[1] - low[1]), float(high[2] - low[2]))
    centre = front - out * depth / 2
    handle = _handle_params(_standing_off(local, evidence, seen_centre, rotation, face), face, 1, middle[1:])
    params = {**drawer_kind.default_params(size), **handle}
    return Shape(DRAWER.name, size, params), centre, rotation


GRIP_SPAN = 0.04
"""m: the length of bar a closing hand needs about its grasp centre (two finger pads and a margin)."""


def handle_where_held(part: PartGeometry, grasp_world: np.ndarray, q: float) -> PartGeometry:
    """The part with its bar handle where the recorded hand closed on it.

    The depth under a thin bar is mostly missing or mixed with the face's behind it (17 points of a 12 cm
    bar, found 3 cm long, on a cabinet in the generated set), and a bar found too short or too far along
    leaves the fingers closing on air. The grasp centre lies on the bar's axis: the bar is taken across
    the face and out from it where the hand closed, and long enough to hold :data:`GRIP_SPAN` about it
    (what the points found of its length is kept). A grasp centre off the face (not in front of it, or
    nearer than a bar can stand) leaves the part as it is.

    Args:
        part: The fitted part.
        grasp_world: ``(3,)`` the recorded grasp centre on the grasp frame, world (m).
        q: The joint's value on that frame.
    """
    shape = part.shape
    local = (np.linalg.inv(part.pose_at(q)) @ np.r_[grasp_world, 1.0])[:3]
    handle = {**HANDLE_DEFAULTS, **shape.params}
    depth = float(local[0] - shape.size[0] / 2 + handle["handle_thickness"] / 2)
    on_face = np.all(np.abs(local[1:]) <= np.asarray(shape.size[1:]) / 2)
    if not (on_face and HANDLE_MIN_DEPTH <= depth <= HANDLE_STANDOFF[1]):
        return part
    along = "handle_offset_z" if part.joint.type == "hinge" else "handle_offset_y"
    across = "handle_offset_y" if along == "handle_offset_z" else "handle_offset_z"
    grip = float(local[2] if along == "handle_offset_z" else local[1])
    low, high = grip - GRIP_SPAN / 2, grip + GRIP_SPAN / 2
    if "handle_length" in shape.params:
        low = min(low, handle[along] - handle["handle_length"] / 2)
        high = max(high, handle[along] + handle["handle_length"] / 2)
    params = {**shape.params, "handle_length": high - low, "handle_depth": depth, along: (low + high) / 2,
              across: float(local[1] if across == "handle_offset_y" else local[2])}  # fmt: skip
    return dataclasses.replace(part, shape=Shape(shape.kind, shape.size, params))


DRAWER_CLEARANCE = 0.002
"""m: the gap left between a drawer and its body's inside on every side but the front."""
DRAWER_SQUARE = math.radians(5.0)
"""An estimated slide within this of its body's front normal is taken along it."""


def drawer_inside(part: PartGeometry, body: FittedObject) -> PartGeometry:
    """A drawer squared to its body (its slide too, within :data:`DRAWER_SQUARE`) and cut to its inside at
    the closed pose, :data:`DRAWER_CLEARANCE` off the walls.

    A drawer is measured from its front, and a front often overlaps the body's opening: a box as wide
    as it starts inside the chest's walls (2 cm deep on a generated chest), and the simulation pushes it
    out on the first step. Its axes are the body's (a drawer fitted 1.5 degrees off its chest's axes
    still cut 8 mm into a side wall at its back). Its front stays where it was seen, and may stand out
    of the opening. A part that is no drawer, a body with no inside, or an inside that would leave less
    than a centimetre is left as it is.
    """
    if part.shape.kind != DRAWER.name:
        return part
    try:
        centre, half = body.shape.cavity()
    except ValueError:
        return part
    body_pose = pose_matrix(body.position, yaw_rotation(body.yaw))
    front = body_pose[:3, 0]
    if part.joint.source == "estimated" and abs(part.joint.axis @ front) > math.cos(DRAWER_SQUARE):
        # It slides along its body's front normal: the body's many points place that better than the
        # drawer's motion (0.2 against 2.0 degrees off the truth on a generated chest), and a drawer
        # pulled 2 degrees askew rubs the chest's walls a few centimetres out.
        axis = front if part.joint.axis @ front > 0 else -front
        part = dataclasses.replace(part, joint=dataclasses.replace(part.joint, axis=axis))
    in_body = np.linalg.inv(body_pose) @ part.pose_at(part.joint.closed)
    size = np.asarray(part.shape.size, float)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = transform(in_body, signs * size / 2)
    low = np.maximum(corners.min(axis=0), centre - half + DRAWER_CLEARANCE)
    high = np.minimum(corners.max(axis=0), centre + half - DRAWER_CLEARANCE)
    high[0] = transform(in_body, np.array([[size[0] / 2, 0.0, 0.0]]))[0, 0]  # the front where it was seen
    if np.any(high - low < 0.01):
        return part
    middle = (low + high) / 2
    params = dict(part.shape.params)
    old_middle = transform(np.linalg.inv(in_body), middle[None])[0]  # handle offsets stay on the front
    for key, axis in (("handle_offset_y", 1), ("handle_offset_z", 2)):
        if key in params:
            params[key] = float(params[key] - old_middle[axis])
    # Where the box stands at q_shape: the closed pose moved back by the joint.
    closed_world = body_pose @ pose_matrix(middle, np.eye(3))
    at_shape = part.joint.motion(part.q_shape - part.joint.closed) @ closed_world
    shape = Shape(part.shape.kind, tuple(float(v) for v in high - low), params)
    return dataclasses.replace(part, shape=shape, position=at_shape[:3, 3], rotation=at_shape[:3, :3])


DOOR_GAP = 0.002
"""m: the gap left between a closed door's inner face and its body's front."""
DOOR_SETBACK = 0.03
"""m: the most a body's front is set back behind its door; more says the door or the body is misfitted."""


def door_setback(body: FittedObject, part: PartGeometry) -> float:
    """How far (m) the body's front stands into its closed hinged door, plus :data:`DOOR_GAP`; 0 for a part
    that is no hinged door or a body that is no cabinet."""
    if part.joint.type != "hinge" or body.shape.kind != CABINET.name:
        return 0.0
    in_body = np.linalg.inv(pose_matrix(body.position, yaw_rotation(body.yaw))) @ part.pose_at(
        part.joint.closed
    )
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    inner = float(transform(in_body, signs * np.asarray(part.shape.size, float) / 2)[:, 0].min())
    return float(body.shape.size[0] / 2 - (inner - DOOR_GAP))


def body_behind_door(body: FittedObject, part: PartGeometry) -> FittedObject:
    """The body's front set back behind its closed door, :data:`DOOR_GAP` off its inner face.

    The door is measured from its own face; the body's front, fitted from its walls' silhouettes and
    points, can stand a few millimetres into the closed door (5 mm on a generated microwave), and a door
    that cannot close as far as the video shows fails the simulation. The body only gives up depth
    (at most :data:`DOOR_SETBACK`); a door that is no hinged panel, or a body that is no cabinet, is
    left as it is.
    """
    setback = door_setback(body, part)
    if setback <= 0 or setback > DOOR_SETBACK:
        return body
    body_pose = pose_matrix(body.position, yaw_rotation(body.yaw))
    size = np.asarray(body.shape.size, float)
    size[0] -= setback
    position = body.position - body_pose[:3, 0] * setback / 2
    extents = tuple(float(v) for v in size)
    shape = Shape(body.shape.kind, extents, cabinet_kind.default_params(extents) | dict(body.shape.params),
                  fit_error=body.shape.fit_error)  # fmt: skip
    return FittedObject(shape, position, body.yaw)


def face_the_part(body: FittedObject, part_centre: np.ndarray) -> FittedObject:
    """The body turned by quarter turns so that its front (local +x) faces the part; a box becomes a cabinet."""
    toward = part_centre[:2] - body.position[:2]
    best = max(range(4), key=lambda t: math.cos(body.yaw + t * math.pi / 2) * toward[0]
               + math.sin(body.yaw + t * math.pi / 2) * toward[1])  # fmt: skip
    kind = body.shape.kind if body.shape.kind in (CABINET.name, MESH.name) else CABINET.name
    if kind == MESH.name:  # the user's own mesh keeps its pose
        return body
    turned = _quarter_turned(body, best)
    if kind != body.shape.kind or best % 2:
        shape = turned.shape
        turned.shape = Shape(kind, shape.size, cabinet_kind.default_params(shape.size), shape.vertices,
                             shape.fit_error)  # fmt: skip
    return turned


def fit_part(
    prompt,
    owner: str,
    body: FittedObject,
    masks: list[np.ndarray],
    visible: list[bool],
    camera,
    poses: np.ndarray,
    depth_of,
    log: WarningLog | None = None,
    hand: np.ndarray | None = None,
) -> PartGeometry:
    """One part's joint, shape and per-frame value (see the module's steps 1 to 3).

    Args:
        prompt: Its :class:`..prompts.PartPrompt`.
        owner: Its object's name.
        body: Its body's fit.
        masks: Its masks per frame (video size).
        visible: Per frame, the mask is trusted.
        camera: Intrinsics.
        poses: world_from_camera, ``4x4`` or per frame ``Nx4x4``.
        depth_of: (frame, box=None) -> cleaned depth (``HxW`` metres; with a box, right in that box) or None
            without depth.
        log: Where a hinge line moved onto its door's planes is told (none: not told).
        hand: ``(F, 3)`` the recorded hand's grasp centre per frame (world), or None: where it traced an arc
            while the part turned, the arc's centre is the hinge line (:mod:`.hand_arc`), and without depth
            its sweep is how far the part turned.

    Raises:
        GeometryError: The part is never measured well enough to fit its joint, naming it.
    """
    name = part_key(owner, prompt.name)
    frames = len(masks)
    kind = prompt.given["type"] if prompt.given else prompt.joint
    has_depth = depth_of(0) is not None
    points = [None] * frames
    if has_depth:
        points = [_part_points(masks[f], partial(depth_of, f), camera, pose_at(poses, f)) if visible[f] else None
                  for f in range(frames)]  # fmt: skip
        if sum(p is not None for p in points) < 3:
            raise GeometryError(
                f"part '{name}': fewer than 3 frames show it with depth under its mask; prompt it where it shows"
            )
        if kind == "auto" and _turns(points):  # a slide never turns its part: a hinge it is
            kind = "hinge"
        fit = fit_joint(points, kind=kind)
    else:
        # Which side opens is tried on each side the camera sees (the body's front, +x, is turned to it); the
        # panel is the whole side, or as much of it as the part's mask covers on its prompt's frame and its
        # first (a drawer in a chest's upper half). The joint whose panel matches the masks best is kept.
        shown = [m if v else None for m, v in zip(masks, visible, strict=True)]
        eye, main = pose_at(poses, 0)[:3, 3], prompt.prompts[0].frame
        tries = []
        for turn in range(4) if body.shape.kind != MESH.name else (0,):  # a user's mesh keeps its pose
            turned = _quarter_turned(body, turn)
            normal, size = yaw_rotation(turned.yaw)[:, 0], np.asarray(turned.shape.size, float)
            if normal @ (eye - turned.position - normal * size[0] / 2) <= 0:
                continue  # the camera cannot see an opening on that side
            panels = [(np.array([DOOR_THICKNESS, size[1], size[2]]), np.zeros(3))]
            for f in dict.fromkeys((main, next((f for f in range(frames) if visible[f]), main))):
                extent = _on_front(masks[f], camera, pose_at(poses, f), turned) if visible[f] else None
                if extent is not None:
                    y_low, y_high, z_low, z_high = extent
                    panels.append((np.array([DOOR_THICKNESS, y_high - y_low, z_high - z_low]),
                                   np.array([0.0, (y_low + y_high) / 2, (z_low + z_high) / 2])))  # fmt: skip
            for panel, offset in panels:
                arguments = (turned.position, turned.yaw, size, "+x", panel, camera, pose_at(poses, 0), shown)
                try:
                    chosen = fit_joint_without_depth(
                        *arguments, kind=kind, panel_offset=offset, measure=False
                    )
                except Real2GymError:
                    continue  # no frame shows the part
                tries.append((chosen.residual_m, len(tries), arguments, offset, turned, chosen))
        # Each try is only chosen on a few frames; the best is measured on every frame (the next, where none of
        # its frames matches its panel).
        fit = None
        for _, _, arguments, offset, turned, chosen in sorted(tries, key=lambda tried: tried[:2]):
            try:
                fit = fit_joint_without_depth(*arguments, kind=kind, panel_offset=offset, choice=chosen)
            except Real2GymError:
                continue  # no frame's mask matches this panel
            body = turned
            break
        if fit is None:
            raise GeometryError(
                f"part '{name}': no frame's mask matches a panel on a side of '{owner}' the camera sees; check "
                "the body's box and the part's masks, or give its joint"
            )
    axis, pivot = np.asarray(fit.axis, float), np.asarray(fit.pivot, float)
    q = _without_jumps(np.where(np.asarray(fit.visible, bool), np.asarray(fit.q, float), np.nan), fit.type)
    if prompt.given and axis @ np.asarray(prompt.given["axis_world"], float) < 0:
        q = -q  # measured about the given axis (a door given turning about -z, fitted about +z)
    closed = _closed_end(q, points, body.position) if has_depth else float(np.nanmin(q))
    far = float(np.nanmax(q)) if closed == float(np.nanmin(q)) else float(np.nanmin(q))
    if prompt.given:
        # As given; the video's closed end is the given closed value (the given axis was once turned with
        # the estimate's, and a door given shut at 0 was fitted 90 degrees round, beside its body).
        lo, hi = prompt.given["range"]
        joint = Joint(prompt.given["type"], np.asarray(prompt.given["axis_world"], float),
                      np.asarray(prompt.given["pivot_world"], float), (lo, hi),
                      float(prompt.given.get("closed", lo)), source="given")  # fmt: skip
        q = q - closed + joint.closed
    else:
        if far < closed:  # opening is positive, closed is 0
            axis, q, closed, far = -axis, -q, -closed, -far
        q = q - closed
        if fit.type == "hinge":
            axis = square_hinge_axis(axis)
        joint = Joint(fit.type, axis, pivot, (0.0, max(far - closed, 1e-3)), 0.0)
        on_arc = False
        if hand is not None and joint.type == "hinge":
            joint, q, on_arc = _on_hand_arc(joint, q, hand, has_depth)
        planes = None
        if has_depth and joint.type == "hinge" and not on_arc:
            eyes = np.array([pose_at(poses, f)[:3, 3] for f in range(frames)])
            planes = hinge_line_from_planes(joint, points, q, eyes, body.position)
        if planes is not None and planes.replaces_fit():
            apart = pivot - planes.point - axis * ((pivot - planes.point) @ axis)
            joint = dataclasses.replace(joint, pivot=planes.point)
            if log is not None:
                log.warn(
                    "geometry",
                    f"part '{name}': its motion put the hinge {100 * np.linalg.norm(apart):.1f} cm off the line "
                    f"its panel's faces turn about (they lie {1000 * planes.fitted_misfit_m:.1f} mm RMS about the "
                    f"fitted line, {1000 * planes.misfit_m:.1f} mm about theirs: the door swung in too few frames "
                    "to place it); the hinge is on that line: check it in the Fixes panel",
                )
    usable = [f for f in range(frames) if points[f] is not None and np.isfinite(q[f])]
    if not usable:  # without depth: the shape from the body's opening, as far as the mask covers it closed
        shut = [
            f
            for f in range(frames)
            if visible[f] and np.isfinite(q[f]) and abs(q[f] - joint.closed) < SHUT[joint.type]
        ]
        extent = None
        if shut:
            f = min(shut, key=lambda f: abs(q[f] - joint.closed))
            extent = _on_front(masks[f], camera, pose_at(poses, f), body)
        return _part_without_depth(prompt.name, body, joint, q, visible, extent)
    outer = usable
    if joint.type == "hinge":
        # A door's shape from a frame that shows its outer face: seen open from inside its swing, its inner
        # face was taken for the outer one and the panel put its thickness inside (2 cm on a microwave).
        outer = [
            f for f in usable if _outer_face_seen(joint, q[f], points[f], pose_at(poses, f), body.position)
        ]
    seen = outer or usable
    # Measured where it is shut if it shows well there: an open view moved shut by a value a few degrees off
    # stands its face out (2.4 degrees put a microwave's door 12 mm proud of its frame, into the pushing hand).
    most = max(len(points[f]) for f in seen)
    shut = []
    if joint.type == "hinge":  # a slide moves every point alike: any of its frames does
        near = [f for f in seen if abs(q[f] - joint.closed) < SHUT["hinge"]]
        shut = [f for f in near if len(points[f]) >= SHUT_SHOWS * most]
    best = max(shut or seen, key=lambda f: len(points[f]))
    at_closed = transform(joint.motion(joint.closed - q[best]), points[best])
    # A thin bar's depth is patchy on any one frame: its handle is measured on frames spread over the video.
    evidence = [transform(joint.motion(joint.closed - q[f]), points[f])
                for f in seen[:: max(1, len(seen) // HANDLE_FRAMES)] if f != best]  # fmt: skip
    if joint.type == "hinge":
        shape, centre, rotation = _door_shape(at_closed, joint, body.position, not outer, evidence)
    else:
        shape, centre, rotation = _drawer_shape(at_closed, joint, body, evidence)
    return PartGeometry(
        prompt.name, shape, centre, rotation, joint.closed, joint, q, np.asarray(visible, bool)
    )


def _on_hand_arc(
    joint: Joint, q: np.ndarray, hand: np.ndarray, has_depth: bool
) -> tuple[Joint, np.ndarray, bool]:
    """The hinge moved onto the recorded hand's arc where it traced one while the part turned; without depth,
    the frames it turned the part measured by its sweep (see :mod:`.hand_arc`). Returns the joint, ``q``,
    and whether the arc placed them."""
    known = np.isfinite(q)
    if known.sum() < 2:
        return joint, q, False
    filled = np.interp(np.arange(len(q)), np.flatnonzero(known), q[known])
    arc = hand_arc(joint, filled, hand)
    if arc is None:
        return joint, q, False
    joint = dataclasses.replace(joint, pivot=arc.pivot)
    if has_depth:
        return joint, q, True
    turned = turned_with_hand(filled, arc, joint.closed)
    moved = np.zeros(len(q), bool)
    moved[arc.start : arc.end + 1] = True
    q = np.where(known | moved, turned, np.nan)
    q = q - np.nanmin(q)  # shut is 0
    return dataclasses.replace(joint, range=(0.0, max(float(np.nanmax(q)), 1e-3))), q, True


SHUT = {"hinge": math.radians(3.0), "slide": 0.01}
"""A frame whose joint value is this near closed shows the part over its body's front."""
SHUT_SHOWS = 0.5
"""A shut frame showing this share of the points of the frame that shows most measures the part's shape."""
PANEL_INSET = 0.003
"""m: a door panel measured from a mask alone stops this short of its body's edges (the mask's edge pixels
reach past them, and a panel as tall as its body scrapes the table as it turns)."""


def _quarter_turned(body: FittedObject, turns: int) -> FittedObject:
    """The body turned by ``turns`` quarter turns about its upright axis (its footprint swapped on odd ones)."""
    size = tuple(body.shape.size)
    if turns % 2:
        size = (size[1], size[0], size[2])
    shape = Shape(body.shape.kind, size, dict(body.shape.params), body.shape.vertices, body.shape.fit_error)
    return FittedObject(
        shape, body.position.copy(), math.remainder(body.yaw + turns * math.pi / 2, 2 * math.pi)
    )


def _on_front(mask: np.ndarray, camera, world_from_camera: np.ndarray, body: FittedObject) -> tuple | None:
    """Where a mask lies on the body's front face: ``(y_low, y_high, z_low, z_high)`` in the body's frame (m),
    the mask's pixels' rays cut by the face's plane (2nd to 98th percentiles, within the face, inset by
    :data:`PANEL_INSET`); None for a mask that hardly meets it."""
    rows, cols = np.nonzero(mask)
    if len(rows) < MIN_POINTS:
        return None
    rays = np.column_stack(
        [(cols - camera.cx) / camera.fx, (rows - camera.cy) / camera.fy, np.ones(len(rows))]
    )
    body_from_camera = np.linalg.inv(pose_matrix(body.position, yaw_rotation(body.yaw))) @ world_from_camera
    eye, rays = body_from_camera[:3, 3], rays @ body_from_camera[:3, :3].T
    half = np.asarray(body.shape.size, float) / 2
    along = (half[0] - eye[0]) / np.where(np.abs(rays[:, 0]) > 1e-9, rays[:, 0], np.nan)
    hits = eye + rays * along[:, None]
    hits = hits[(along > 0) & (np.abs(hits[:, 1]) <= half[1] + 0.02) & (np.abs(hits[:, 2]) <= half[2] + 0.02)]
    if len(hits) < MIN_POINTS:
        return None
    low, high = np.percentile(hits[:, 1:], 2, axis=0), np.percentile(hits[:, 1:], 98, axis=0)
    inner = half[1:] - PANEL_INSET
    low, high = np.maximum(low, -inner), np.minimum(high, inner)
    if np.any(high - low < 0.02):
        return None
    return float(low[0]), float(high[0]), float(low[1]), float(high[1])


def _part_without_depth(
    name: str, body: FittedObject, joint: Joint, q: np.ndarray, visible, extent: tuple | None = None
) -> PartGeometry:
    """A part seen only as silhouettes: a panel over the body's front face (a door; as wide and tall as its
    mask covers the front where it is shut, ``extent`` from :func:`_on_front`, else the whole front) or a
    drawer behind it."""
    front = yaw_rotation(body.yaw)
    size = body.shape.size
    centre = body.position + front[:, 0] * (size[0] / 2 + DOOR_THICKNESS / 2)
    if joint.type == "hinge":
        y_low, y_high, z_low, z_high = extent or (-size[1] / 2, size[1] / 2, PANEL_INSET - size[2] / 2,
                                                  size[2] / 2 - PANEL_INSET)  # fmt: skip
        centre = centre + front @ np.array([0.0, (y_low + y_high) / 2, (z_low + z_high) / 2])
        shape = Shape(DOOR.name, (DOOR_THICKNESS, y_high - y_low, z_high - z_low))
    else:
        inner = (0.9 * size[0], 0.9 * size[1], 0.5 * size[2])
        shape = Shape(DRAWER.name, inner, drawer_kind.default_params(inner))
        centre = body.position + front[:, 0] * (size[0] / 2 - inner[0] / 2)
    return PartGeometry(name, shape, centre, front, joint.closed, joint, q, np.asarray(visible, bool))


def part_events(name: str, part: PartGeometry, fps: float, opening: np.ndarray | None) -> list[dict]:
    """The part's keyframes: ``push`` or ``grasp`` (and ``release``), ``open``, ``closed``.

    Args:
        name: The part's key (``cabinet.door``).
        part: The fitted part.
        fps: Video frame rate.
        opening: The recorded gripper's opening per frame (0 closed, 1 open), or None.
    """
    q = part.filled_q()
    joint = part.joint
    share = np.array([joint.opening(v) for v in q])
    events = []
    moved = np.flatnonzero(np.abs(q - q[0]) > MOVING[joint.type])
    if len(moved):
        start = int(moved[0])
        event = "push"
        if opening is None and share[-1] > share[start] and "handle_length" in part.shape.params:
            # Unrecorded, a part with a handle that opens away from its body is pulled by it: a push
            # from the face its motion leaves behind put the hand inside the cabinet.
            event = "grasp"
            still = np.flatnonzero(np.abs(q - q[-1]) > MOVING[joint.type])  # let go where it stops
            events.append({"frame": int(min(len(q) - 1, still[-1] + 1)), "event": "release", "object": name})
        elif opening is not None:
            before = max(0, start - int(round(GRIP_WINDOW_S * fps)))
            closed_on_it = opening[start] > EMPTY_GRIP  # fingers that close on nothing push with their tips
            if closed_on_it and opening[before : start + 1].max() - opening[start] > GRIP_CLOSING:
                event = "grasp"
                # Where the fingers start to open, as for an object (the window to judge the hold ends
                # there: counted from where they had opened by 0.3, a cabinet's door failed on three
                # frames of fingers already parting).
                release = release_after(np.asarray(opening, float) * FULL_OPENING, start)
                if release is not None:
                    events.append({"frame": int(release), "event": "release", "object": name})
        events.append({"frame": start, "event": event, "object": name})
        for end, label in ((0.0, "closed"), (1.0, "open")):
            near = np.abs(share - end) <= AT_END
            if near[start:].any() and near[-1]:
                since = len(near) - int(np.argmin(near[::-1]))  # the first frame of the last run at that end
                events.append({"frame": int(since), "event": label, "object": name})
    return sorted(events, key=lambda e: e["frame"])


HAND_STANDOFF = 0.012
"""m: the grasp centre's distance from the face it pushes with closed fingers (their tips' reach)."""
HAND_REACH_S = 0.5
"""s: how long the hand takes to come in to a part (from :data:`HAND_CLEAR` away) and to leave it."""
HAND_CLEAR = 0.10
"""m: how far from the part's face the hand starts its approach and ends its retreat."""
PUSH_AT = 0.8
"""Where across a door (its share of the width from the hinge) the hand pushes or grips without a handle."""
CAVITY_RISE = 0.03
"""m: how far a hand that let go inside a cavity rises (its fingers off the object's top) before it leaves."""
PALM_REACH = 0.10
"""m: how far the verifier's palm reaches either side of its grasp centre (half the long side of
``mjcf.gripper.GripperSpec.palm_size``): a hand leaving a cavity goes this much further out before it rises."""
CAVITY_RISE_S = 0.2
CAVITY_OUT_S = 0.3
"""s: how long it takes to rise, then to leave through the opening."""
HAND_CLOSE_S = 0.25
"""s: how long the fingers take to close on a handle, at rest, before the part is pulled."""


def part_hand_path(part: PartGeometry, events: list[dict], name: str, fps: float, count: int):
    """The hand's path for a part where nothing recorded it: in along the part's face normal to where the part
    rests (for a grasp, closing on its handle there over :data:`HAND_CLOSE_S`), then with it over its motion (fingers closed on its handle for a grasp, closed and pushing on the face that
    trails the motion for a push), then out along the normal.

    Args:
        part: The fitted part (its ``q`` per frame).
        events: The keyframes (its own among them, named ``name``).
        name: The part's key.
        fps: Video frame rate.
        count: Video frames.

    Returns:
        ``(positions Nx3, quaternions Nx4 [w, x, y, z], opening N, first, last)``: the path on frames
        ``first`` to ``last`` (inclusive), or None where the part has no push or grasp.
    """
    own = {e["event"]: e["frame"] for e in events if e["object"] == name}
    start = own.get("push", own.get("grasp"))
    if start is None:
        return None
    q = part.filled_q()
    still = np.flatnonzero(np.abs(q - q[-1]) > MOVING[part.joint.type])
    end = int(min(count - 1, own.get("release", still[-1] + 1 if len(still) else count - 1)))
    grasped = "grasp" in own
    size, params = part.shape.size, part.shape.params
    hinge_y = (np.linalg.inv(part.pose_at(part.q_shape)) @ np.r_[part.joint.pivot, 1.0])[1]
    if grasped and "handle_length" in params:
        contact = np.array([size[0] / 2 + params.get("handle_depth", 0.03) - 0.006,
                            params.get("handle_offset_y", 0.0), params.get("handle_offset_z", 0.0)])  # fmt: skip
    else:
        far = -np.sign(hinge_y) * size[1] / 2 * PUSH_AT if part.joint.type == "hinge" else 0.0
        contact = np.array([size[0] / 2, far, 0.0])
    side = 1.0
    if not grasped:  # push on the face the motion leaves behind
        here, later = part.pose_at(q[start]), part.pose_at(q[min(end, start + 3)])
        velocity = (later[:3, :3] @ contact + later[:3, 3]) - (here[:3, :3] @ contact + here[:3, 3])
        side = -1.0 if velocity @ here[:3, 0] > 0 else 1.0
        contact[0] = side * size[0] / 2
    reach = max(2, int(round(HAND_REACH_S * fps)))
    # The hand comes to the part where it rests, before it moves: the frame that shows it moved (3 degrees,
    # 1 cm) has it a few centimetres on, and fingers closed there close on air.
    close = int(round(HAND_CLOSE_S * fps)) if grasped else 0
    arrive = max(0, start - close)
    resting = float(np.median(q[: start + 1]))
    first, last = max(0, arrive - reach), min(count - 1, end + reach)
    positions, quats, opening = np.zeros((count, 3)), np.zeros((count, 4)), np.ones(count)
    for f in range(first, last + 1):
        pose = part.pose_at(resting if f < start else q[min(f, end)])
        normal = pose[:3, 0] * side
        point = pose[:3, :3] @ contact + pose[:3, 3] + normal * (0.0 if grasped else HAND_STANDOFF)
        out = HAND_CLEAR * (max(0, arrive - f) / (arrive - first or 1) + max(0, f - end) / (last - end or 1))
        positions[f] = point + normal * out
        approach = -normal  # palm to fingertips, into the face
        across = pose[:3, 1] if not (grasped and part.joint.type == "slide") else pose[:3, 2]
        across = across - approach * (across @ approach)
        across /= max(np.linalg.norm(across), 1e-9)
        quats[f] = Rotation.from_matrix(
            np.column_stack([np.cross(across, approach), across, approach])
        ).as_quat()[[3, 0, 1, 2]]
        opening[f] = (0.0 if arrive <= f <= end else 1.0) if grasped else 0.0
    return positions, quats, opening, first, last


def _slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """The unit quaternion (``[w, x, y, z]``) a share ``t`` of the way from ``a`` to ``b`` on the shorter arc."""
    b = b if float(a @ b) >= 0 else -b
    angle = math.acos(min(1.0, abs(float(a @ b))))
    if angle < 1e-6:
        return a.copy()
    return (math.sin((1 - t) * angle) * a + math.sin(t * angle) * b) / math.sin(angle)


def out_of_cavities(gripper, release: int | None, bodies: list[FittedObject], fps: float):
    """A synthesised gripper path that lets go inside a body's cavity (a cup put in a microwave) and leaves
    it out through the opening, along the body's front, instead of rising into its top; the path as it
    was otherwise.

    Args:
        gripper: The synthesised path.
        release: The frame it lets go, or None.
        bodies: Bodies that may hold a cavity (fitted, at rest).
        fps: Video frame rate.
    """
    if gripper is None or release is None or release >= len(gripper.positions) - 1:
        return gripper
    at = gripper.positions[release]
    for body in bodies:
        if body.shape.entry.cavity is None:
            continue
        turn = yaw_rotation(body.yaw)
        centre, half = body.shape.cavity()
        local = turn.T @ (at - body.position) - centre
        if np.any(np.abs(local) >= half):
            continue
        # Up off the object (the fingers clear its top), then out past the front face (local +x).
        out = half[0] - local[0] + HAND_CLEAR + PALM_REACH
        frames = np.arange(1, len(gripper.positions) - release, dtype=float)
        rise = max(1.0, CAVITY_RISE_S * fps)
        up = CAVITY_RISE * np.minimum(1.0, frames / rise)
        along = out * np.clip((frames - rise) / max(1.0, CAVITY_OUT_S * fps), 0.0, 1.0)
        positions = gripper.positions.copy()
        positions[release + 1 :] = at + np.outer(up, [0.0, 0.0, 1.0]) + np.outer(along, turn[:, 0])
        return dataclasses.replace(gripper, positions=positions)
    return gripper


def with_part_hand(gripper, part_paths: list, fps: float, count: int, clear_z: float = 0.0):
    """A synthesised gripper path (or none) with each part's hand path laid over it, joined by moves over
    the objects: the hand goes from where it was up to ``clear_z`` (m; above every body: an open door
    stands between the cavity it left and the face it pushes), across, and down to each part's approach,
    over the second before it."""
    if gripper is None:
        first = min(p[3] for p in part_paths)
        base = part_paths[0]
        positions = np.repeat(base[0][first][None] + [0.0, 0.0, HAND_CLEAR], count, axis=0)
        gripper = GripperTrajectory(positions, np.repeat(base[1][first][None], count, axis=0), np.ones(count),
                                    "synthesised")  # fmt: skip
    positions, quats, opening = gripper.positions.copy(), gripper.quaternions.copy(), gripper.opening.copy()
    for path_positions, path_quats, path_opening, first, last in sorted(part_paths, key=lambda p: p[3]):
        travel = max(1, min(int(round(2 * HAND_REACH_S * fps)), first))
        # It sets off once the path before has done moving (a hand leaving a cavity is not lifted out of it).
        moving = np.flatnonzero(np.linalg.norm(np.diff(positions[: first + 1], axis=0), axis=1) > 1e-6)
        settled = int(moving[-1]) + 1 if len(moving) else 0
        before = max(0, first - travel, min(settled, first - 3))
        start, end = positions[before].copy(), path_positions[first]
        over = max(clear_z, start[2], end[2])
        corners = np.array([start, [*start[:2], over], [*end[:2], over], end])
        legs = np.linalg.norm(np.diff(corners, axis=0), axis=1)
        reach = np.r_[0.0, np.cumsum(legs)] / max(float(legs.sum()), 1e-9)
        for f in range(before, first):  # from the hand's pose then to the approach's start
            t = (f - before) / (first - before)
            leg = min(int(np.searchsorted(reach, t, side="right")) - 1, 2)
            share = (t - reach[leg]) / max(reach[leg + 1] - reach[leg], 1e-9)
            positions[f] = (1 - share) * corners[leg] + share * corners[leg + 1]
            # Turned once it is up (its palm swings round as it turns).
            quats[f] = _slerp(
                quats[before], path_quats[first], float(np.clip((t - reach[1]) / (1 - reach[1] + 1e-9), 0, 1))
            )
            opening[f] = path_opening[first]
        positions[first : last + 1] = path_positions[first : last + 1]
        quats[first : last + 1] = path_quats[first : last + 1]
        opening[first : last + 1] = path_opening[first : last + 1]
        positions[last + 1 :] = path_positions[last]
        quats[last + 1 :] = path_quats[last]
        opening[last + 1 :] = path_opening[last]
    return GripperTrajectory(positions, quats, opening, "synthesised")


LET_GO_GAP = 0.01
"""m: a recorded hand that pushed a part has let go where it stands this much farther from the part's surface
than while it pushed."""


def _let_go(part: PartGeometry, name: str, events: list[dict], trajectory) -> int | None:
    """The frame the hand lets go of a part it moved: its ``release`` keyframe, or, where it pushed and is
    recorded, the first frame after the push began on which the hand stands :data:`LET_GO_GAP` farther from the
    part's surface than it did on the push's first frames. None where neither is known."""
    own = {e["event"]: e["frame"] for e in events if e["object"] == name}
    if "release" in own:
        return int(own["release"])
    if "push" not in own or trajectory is None:
        return None
    q = part.filled_q()
    start = int(own["push"])
    gaps = []
    for f in range(start, len(q)):
        local = transform(np.linalg.inv(part.pose_at(q[f])), trajectory.positions[f][None])
        gaps.append(float(part.shape.surface_distance(local)[0]))
    pushing = float(np.median(gaps[: max(2, len(gaps) // 10)]))
    away = np.flatnonzero(np.array(gaps) > pushing + LET_GO_GAP)
    return start + int(away[0]) if len(away) else None


COAST_STARTS = 3
"""A coast is fitted from the frame the hand is found to let go and the next ones (the hand parts from a part
over a frame or two): its slowing must agree over them to be taken."""
COAST_AGREE = 0.25
"""The fits from :data:`COAST_STARTS` frames must agree on the part's slowing (damping rate x speed + friction
rate) at half its speed as the hand lets go (midway through its coast) within this share. At each fit's own
start speed they would not: a later start is a slower part, which slows less."""


def _damped_as_filmed(
    part: PartGeometry, name: str, events: list[dict], trajectory, fps: float, log: WarningLog | None = None
) -> PartGeometry:
    """The part with the damping and friction loss its coast after the hand lets go shows (:mod:`.coasting`),
    as the simulation's inertia for it needs them; unchanged where the video shows no coast, or its joint was
    given, or the fits from the let-go frame and the next ones disagree (then told)."""
    if part.joint.source == "given":
        return part
    let_go = _let_go(part, name, events, trajectory)
    if let_go is None:
        return part
    q = part.filled_q()
    coasts = [coasting(q, fps, part.joint, let_go + k) for k in range(COAST_STARTS)]
    if any(c is None for c in coasts):
        return part
    midway = coasts[0].speed / 2.0
    slowing = np.array([c.damping_rate * midway + c.friction_rate for c in coasts])
    if slowing.max() - slowing.min() > COAST_AGREE * np.median(slowing):
        if log is not None:
            log.warn(
                "geometry",
                f"part '{name}': it coasts after the hand lets go (frame {let_go}), but its slowing is not "
                f"measured well ({slowing.min():.2g}-{slowing.max():.2g} from the frames the hand parts from "
                "it); the default damping and friction loss are kept: set them in the Fixes panel if it matters",
            )
        return part
    chosen = coasts[int(np.argsort(slowing)[len(slowing) // 2])]
    inertia = joint_inertia(part, DEFAULT_DENSITY, PART_ARMATURE)
    joint = dataclasses.replace(part.joint, damping=chosen.damping_rate * inertia,
                                frictionloss=chosen.friction_rate * inertia)  # fmt: skip
    return dataclasses.replace(part, joint=joint)


def fit_object_parts(
    demo, segmentation, objects: list, camera, poses: np.ndarray, depth_of, trajectory, log: WarningLog
) -> list[dict]:
    """Fits every part of every object (setting ``parts`` on each :class:`..stage.ObjectGeometry`, its body
    turned to face them) and returns their keyframes."""
    tracks = {t.name: t for t in segmentation.parts}
    keyframes = []
    for prompt, obj in zip(demo.objects, objects, strict=True):
        for part_prompt in prompt.parts:
            name = part_key(prompt.name, part_prompt.name)
            track = tracks[name]
            visible = [track.frame_summary(f)["visible"] for f in range(len(track.masks))]
            hand = None if trajectory is None else trajectory.positions
            part = fit_part(
                part_prompt, prompt.name, obj.fitted, track.masks, visible, camera, poses, depth_of, log, hand
            )
            obj.parts.append(part)
            where = part.pose_at(part.joint.closed)[:3, 3]
            if not obj.parts[1:]:
                obj.fitted = face_the_part(obj.fitted, where)
                obj.motion.yaws[:] = obj.fitted.yaw
            part = obj.parts[-1] = drawer_inside(part, obj.fitted)
            behind, setback = body_behind_door(obj.fitted, part), door_setback(obj.fitted, part)
            if setback > DOOR_SETBACK:
                log.warn(
                    "geometry",
                    f"part '{name}': closed, it stands {100 * setback:.1f} cm into "
                    f"'{prompt.name}' and cannot close in the simulation; check the body's fit and the door's "
                    "(the Fixes panel, or `real2gym fix --part`)",
                )
            obj.motion.positions += behind.position - obj.fitted.position
            obj.fitted = behind
            events = part_events(
                name, part, demo.video.fps, None if trajectory is None else trajectory.opening
            )
            grasp = next((e["frame"] for e in events if e["event"] == "grasp"), None)
            if grasp is not None and trajectory is not None:
                obj.parts[-1] = handle_where_held(part, trajectory.positions[grasp], part.filled_q()[grasp])
            obj.parts[-1] = _damped_as_filmed(obj.parts[-1], name, events, trajectory, demo.video.fps, log)
            keyframes += events
    return keyframes


__all__ = [
    "DOOR_THICKNESS",
    "face_the_part",
    "fit_object_parts",
    "fit_part",
    "handle_where_held",
    "FaceLine",
    "hinge_line_from_planes",
    "out_of_cavities",
    "part_events",
    "square_hinge_axis",
]
