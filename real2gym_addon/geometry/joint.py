"""The joint of an articulated object's moving part (a door's hinge, a drawer's slide) from its motion.

World frame z up, metres, radians. A hinge is a line (unit ``axis`` through ``pivot``) and one angle
``q`` per frame (right-hand rule about ``axis``); a slide is a unit direction and one displacement ``q``
per frame along it. ``q`` is 0 on the reference frame and the axis is signed so that the motion seen is
mostly positive (opening).

With depth (:func:`fit_joint`):

1. Patches. Each seen frame's points are cut into cells a few centimetres wide; a cell that holds a flat
   piece of surface keeps its mean point and normal (cells without one borrow a neighbour's).
2. Seed. Consecutive seen frames are registered to each other by point-to-plane ICP (6-DoF, all pairs
   at once, leaving out what the surfaces seen do not constrain, such as sliding within a door's
   plane). A hinge's seed is the axis their rotations share and the line their screw motions share; a
   slide's, the direction their shifts share. Where the part is mostly flat (a door, a lid) the frames'
   dominant planes seed the hinge better: their normals turn about the axis by ``q``, and the planes
   moved back by the hinge fall onto one plane (one per face of the panel, below).
3. Fit. Robust Gauss-Newton over all frames at once: one axis and one ``q`` per frame, fitted to the
   point-to-plane distances between each frame's points, moved by the joint, and the patches of the
   frames 1, 4, 16 and 40 seen frames later (Tukey weights: outliers, a hand, mixed edge pixels drop
   out), and, for a hinge, to the turn of the frames' plane normals. No single frame is the reference
   surface, so what comes into view later is matched against frames that saw it.
4. The other face. A camera that stays put sees a thin panel's other face once it turns past the
   camera's line of sight; frames either side of that angle match faces a panel's thickness apart,
   which would pull the axis off by about that much. The angle is found from the pairs that fit worst
   (:func:`_other_face`) and pairs that span it are left out.
5. Choice. With ``kind="auto"`` both models are fitted and the hinge is kept only where its residual
   is clearly below the slide's. Frames whose points land too rarely, fit much worse than the others,
   or do not show the joint's motion are not measured.

Without depth (:func:`fit_joint_without_depth`). The body's fitted box and the face holding the
opening give five hypotheses: a hinge on each edge of the panel, opening outwards, and a slide out
along the face's normal. For each, every frame's ``q`` is the value whose projected panel outline best
matches the part's mask (IoU, a coarse-to-fine 1-D search); the hypothesis with the best mean IoU wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from ..demo import Camera
from ..errors import Real2GymError
from .camera import invert, pose_matrix, transform, yaw_rotation
from .silhouette import mask_box

MIN_POINTS = 40
"""A frame with fewer points than this measures nothing."""
GRID_POINTS = 1000
"""Points per frame, at most, cut into patches (evenly spaced through the frame's points)."""
SAMPLE_POINTS = 50
"""Points per frame, at most, moved into the other frames' patches."""
CONVERGED = 5e-4
"""A fitting step that moves the axis less than this (radians, metres), and nine in ten frames' ``q`` less,
ends the fit."""
CELL = 0.02
"""m: the patches' smallest cell size; a part gets cells of at least 1/15 its size, large enough to hold
about 12 of its points, and a coarse set twice that for the first iterations (wide capture)."""
DENSE_CELLS = 4_000_000
"""Cells over all frames, at most, in the table that finds patches; beyond, the cells grow."""
PAIR_GAPS = (1, 4, 16, 40)
"""Each seen frame is matched with the seen frames this many seen frames later."""
OUTLIER_CAP = 0.02
"""m: a point's distance counts at most this much in a residual; a point that lands on no patch counts this."""
CLEARLY_BETTER = 0.75
"""With ``kind="auto"`` a hinge is chosen only if its residual is below this fraction of the slide's."""
MIN_MATCHED = 0.3
"""A frame whose points land on the other frames' surface less than this share of the time is not measured."""
WORST_FRAME = 2.0
"""A frame whose points fit this many times worse (RMS) than the typical frame's is not measured (a door
seen edge-on, where the camera turns from one of its faces to the other)."""
MIN_OBSERVED = 0.1
"""A frame is not measured where the surfaces seen leave the joint nearly free: where moving the part
along the joint moves its points off their surface by less than this share (squared, on average) of
how far it moves them (a drawer's top, seen alone, does not tell how far it is out)."""
STEP_CONDITION = 0.02
"""Between consecutive frames, motions the points constrain less than this share of the best-constrained
one are left out (a plane's points do not tell how it slides along itself)."""
FACE_GAP = 0.006
"""m: frames whose planes the joint brings this far apart, parallel, see different faces of a thin part."""
NORMAL_GATE = np.radians(10.0)
"""A frame's dominant plane that disagrees with the hinge by more than this does not enter the fit."""
MIN_IOU = 0.3
"""Without depth, a frame whose best outline matches its mask worse than this is not measured."""
SEARCH_FRAMES = 24
"""Without depth, the hypotheses are compared on at most this many frames, spread over the video."""
SEARCH_STEPS = 13
"""Without depth, q values tried per frame before refining around the best."""
PRUNE_IOU = 0.1
"""Without depth, a hypothesis whose mean IoU on every third of the trial frames is this far below the best's
is not tried on the others (on the generated RGB-only scenes the wrong edges and the slide scored 0.2-0.6 below
the right hinge on cabinets and microwaves; a drawer's best hinge 0.07 below its slide, and so kept)."""

FLAT_RUN_GAP = 8
"""Seen frames between two flat ones past which their normals' continuity is not trusted (a door could turn
more than 90 degrees unseen); the half-turn is then chosen again."""

_OPENINGS = {
    "+x": (0, 1.0),
    "-x": (0, -1.0),
    "+y": (1, 1.0),
    "-y": (1, -1.0),
    "+z": (2, 1.0),
    "-z": (2, -1.0),
}


@dataclass(frozen=True, eq=False)
class JointFit:
    """An estimated joint.

    Attributes:
        type: ``"hinge"`` or ``"slide"``.
        axis: ``(3,)`` unit vector, world frame (the hinge's line direction, or the slide direction).
        pivot: ``(3,)`` world point, metres: on the hinge's axis (nearest the part's middle); for a
            slide, the part's centroid at ``q = 0``.
        range: ``(lo, hi)``: the observed extremes of ``q`` (radians or metres).
        q: ``(F,)`` joint value per video frame, NaN where not measured; 0 on the reference frame.
        visible: ``(F,)`` bool: the frames where ``q`` was measured.
        residual_m: With depth, the chosen model's RMS point distance in metres (each capped at
            :data:`OUTLIER_CAP`); without depth, 1 - its mean IoU.
        other_residual_m: The same for the other model (NaN where it was not fitted).
        source: ``"estimated"``.
        extent: ``(lo, hi)`` metres: the part's extent along ``axis`` from ``pivot``.
    """

    type: str
    axis: np.ndarray
    pivot: np.ndarray
    range: tuple[float, float]
    q: np.ndarray
    visible: np.ndarray
    residual_m: float
    other_residual_m: float
    source: str = "estimated"
    extent: tuple[float, float] = (0.0, 0.0)

    def to_report(self) -> dict:
        """The joint as report.json's ``parts[].joint`` (JSON-ready, rounded)."""
        return {
            "type": self.type,
            "axis_world": [round(float(v), 6) for v in self.axis],
            "pivot_world": [round(float(v), 5) for v in self.pivot],
            "range": [round(float(v), 5) for v in self.range],
            "source": self.source,
            "residual_m": round(float(self.residual_m), 6),
        }

    def q_at(self, frame: int) -> float:
        """The joint value on a video frame, interpolated between measured frames (held at the ends).

        Args:
            frame: Video frame index.

        Returns:
            ``q`` (radians or metres); NaN if no frame was measured.
        """
        seen = np.flatnonzero(self.visible)
        if len(seen) == 0:
            return float("nan")
        return float(np.interp(frame, seen, self.q[seen]))


def hinge_axis_error(fit: JointFit, true_axis: np.ndarray, true_pivot: np.ndarray) -> tuple[float, float]:
    """How far a fitted hinge is from the truth.

    Args:
        fit: The fitted joint.
        true_axis: ``(3,)`` the true axis direction, world frame (its sign does not matter).
        true_pivot: ``(3,)`` a world point on the true axis, metres.

    Returns:
        ``(angle_deg, line_distance_m)``: the angle between the axis directions, ignoring sign, and the
        larger distance from the true line of the fitted line's points at the two ends of the part's
        extent along it.
    """
    a = np.asarray(fit.axis, float) / np.linalg.norm(fit.axis)
    b = np.asarray(true_axis, float) / np.linalg.norm(true_axis)
    angle = float(np.degrees(np.arccos(min(1.0, abs(float(a @ b))))))
    ends = fit.pivot + np.outer(fit.extent, a) - np.asarray(true_pivot, float)
    off_line = ends - np.outer(ends @ b, b)
    return angle, float(np.linalg.norm(off_line, axis=1).max())


def slide_axis_error(fit: JointFit, true_axis: np.ndarray) -> float:
    """The angle in degrees between a fitted slide's direction and the true one (``(3,)``, world), ignoring sign."""
    a = np.asarray(fit.axis, float) / np.linalg.norm(fit.axis)
    b = np.asarray(true_axis, float) / np.linalg.norm(true_axis)
    return float(np.degrees(np.arccos(min(1.0, abs(float(a @ b))))))


def fit_joint(
    points: list[np.ndarray | None], body_from_world: np.ndarray | None = None, kind: str = "auto"
) -> JointFit:
    """Estimates a part's joint from its surface points over a video.

    Args:
        points: Per video frame, the part's surface points (``Nx3``, metres, world frame: its mask's
            back-projected depth pixels), or None where the part is not seen or its points are flagged.
        body_from_world: ``(F, 4, 4)`` pose of the world in the body's frame per frame, for a body that
            moves; None for a body that stays put. The axis and pivot are then given in the world as the
            body stands on the reference frame.
        kind: ``"hinge"``, ``"slide"`` or ``"auto"`` (fit both; the hinge only where it explains the
            motion clearly better).

    Returns:
        The joint; ``q`` is 0 on the first measured frame (normally the first with at least
        :data:`MIN_POINTS` points).

    Raises:
        Real2GymError: Fewer than three frames show the part, no frame's ``q`` can be measured (a part
            that does not move), or ``kind`` is unknown.
    """
    if kind not in ("hinge", "slide", "auto"):
        raise Real2GymError(f"joint kind {kind!r} is not one of hinge, slide, auto")
    frames = [
        f
        for f, cloud in enumerate(points)
        if cloud is not None and np.isfinite(cloud).all(1).sum() >= MIN_POINTS
    ]
    if len(frames) < 3:
        raise Real2GymError(
            f"the moving part is seen with {MIN_POINTS}+ depth points on {len(frames)} frames; "
            "its joint needs at least three: give the joint's axis and pivot, or mask the part on more frames"
        )
    clouds = []
    for f in frames:
        cloud = np.asarray(points[f], float)
        cloud = cloud[np.isfinite(cloud).all(1)]
        if body_from_world is not None:
            cloud = transform(body_from_world[f], cloud)
        if len(cloud) > GRID_POINTS:
            cloud = cloud[np.linspace(0, len(cloud) - 1, GRID_POINTS).astype(int)]
        clouds.append(cloud)
    problem = _Problem(clouds)
    rotations, translations, weights, shifts = problem.register_steps()
    fits = {}
    if kind in ("hinge", "auto"):
        seed = problem.hinge_from_planes(_Hinge.seed(rotations, translations, weights, problem.centre))
        fits["hinge"] = problem.refine(seed, 0, 4)
    if kind in ("slide", "auto"):
        fits["slide"] = problem.refine(_Slide.seed(shifts, weights), 0, 4)
    # Both are judged on the same pairs of frames: those the hinge finds to see one face of the part.
    skip = fits["hinge"].other_face if "hinge" in fits else np.zeros(len(problem.pairs), bool)
    residuals = {name: problem.residual(fit.distance, skip) for name, fit in fits.items()}
    if kind == "auto":
        # A slide the surfaces seen do not measure (a still door's plane, "sliding" within itself) loses.
        slide_measured = fits["slide"].measured.mean() >= 0.5
        clearly = residuals["hinge"] < CLEARLY_BETTER * residuals["slide"]
        chosen = "hinge" if clearly or not slide_measured else "slide"
    else:
        chosen = kind
    fitted = problem.refine(fits[chosen].model, 4, 8)  # the chosen one, on to convergence
    model, measured = fitted.model, fitted.measured
    if not measured.any():
        raise Real2GymError(
            f"the moving part's {chosen} cannot be measured on any frame: the surfaces seen do not show "
            "its motion (it may not move in the video); give the joint's axis, pivot and range"
        )
    residual = problem.residual(fitted.distance, fitted.other_face if chosen == "hinge" else skip)
    other_residual = residuals.get("slide" if chosen == "hinge" else "hinge", float("nan"))
    q_seen = model.q - model.q[np.argmax(measured)]  # 0 on the first measured frame
    sign = -1.0 if -q_seen[measured].min() > q_seen[measured].max() else 1.0
    first = frames[int(np.argmax(measured))]
    reference = np.asarray(points[first], float)
    reference = reference[np.isfinite(reference).all(1)]
    if body_from_world is not None:
        reference = transform(body_from_world[first], reference)
    axis, pivot = sign * model.axis, model.pivot
    if chosen == "hinge":
        pivot = pivot + axis * ((reference.mean(0) - pivot) @ axis)
    else:
        pivot = reference.mean(0)
    along = (reference - pivot) @ axis
    extent = (float(np.percentile(along, 2)), float(np.percentile(along, 98)))
    if body_from_world is not None:
        world_from_body = invert(body_from_world[first])
        axis, pivot = world_from_body[:3, :3] @ axis, transform(world_from_body, pivot[None])[0]
    q = np.full(len(points), np.nan)
    visible = np.zeros(len(points), bool)
    q[np.asarray(frames)[measured]] = sign * q_seen[measured]
    visible[np.asarray(frames)[measured]] = True
    seen_q = q[visible]
    return JointFit(
        type=chosen,
        axis=axis,
        pivot=pivot,
        range=(float(seen_q.min()), float(seen_q.max())),
        q=q,
        visible=visible,
        residual_m=float(residual),
        other_residual_m=float(other_residual),
        extent=extent,
    )


class _Patches:
    """Flat pieces of surface of each seen frame: per occupied cell, the mean point and the normal.

    Cells are found through a dense table over the points' common bounding box (one slab per frame). A
    cell without a patch of its own (the surface only grazes it) takes a neighbouring cell's, so a point
    near the surface always finds the plane there.
    """

    def __init__(self, points: np.ndarray, frame: np.ndarray, frames: int, cell: float, bounds: np.ndarray):
        low, high = bounds
        while np.prod(np.ceil((high - low) / cell) + 4) * frames > DENSE_CELLS:
            cell *= 1.25
        self.cell = cell
        self.low = np.floor(low / cell) - 2.0
        self.shape = (np.floor(high / cell) + 3.0 - self.low).astype(np.int64)
        self.strides = np.array([self.shape[1] * self.shape[2], self.shape[2], 1], np.int64)
        self.strides_frame = int(np.prod(self.shape))
        keys, inside = self._keys(frame, points)
        keys, inverse, counts = np.unique(keys[inside], return_inverse=True, return_counts=True)
        origin = points[inside].mean(0)
        local = points[inside] - origin
        mean = np.stack([np.bincount(inverse, local[:, i], len(keys)) for i in range(3)], 1) / counts[:, None]
        entries = [
            np.bincount(inverse, local[:, i] * local[:, j], len(keys)) / counts - mean[:, i] * mean[:, j]
            for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
        ]
        smallest, middle, normal = _smallest_eigen(*entries)
        flat = (counts >= 4) & (smallest <= 0.25 * middle)
        number = np.full(len(keys), -1)
        number[flat] = np.arange(flat.sum())
        self.mean = mean[flat] + origin
        self.normal = normal[flat]
        self.count, self.frame = counts[flat], keys[flat] // self.strides_frame
        self.spread = np.stack(entries, 1)[flat]  # each patch's points' covariance: xx, xy, xz, yy, yz, zz
        self.of_point = np.full(len(points), -1)
        self.of_point[inside] = number[inverse]
        self.table = np.full(int(np.prod(self.shape)) * frames, -1, np.int32)
        own = keys[flat]
        strides = self.strides
        offsets = np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).reshape(3, -1).T
        for offset in sorted(offsets.tolist(), key=lambda o: -np.abs(o).sum()):  # the nearest written last
            self.table[np.clip(own + offset @ strides, 0, len(self.table) - 1)] = np.arange(len(own))

    def _keys(self, frame: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cells = np.floor(points * (1.0 / self.cell) - self.low)
        inside = np.all((cells >= 1) & (cells < self.shape - 1), axis=1)
        keys = cells[:, 0] * self.strides[0] + cells[:, 1] * self.strides[1] + cells[:, 2]
        return (keys + frame * float(self.strides_frame)).astype(np.int64), inside

    def lookup(self, frame: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The patch under each point of a frame: ``(mean (M,3), normal (M,3), found (M,))``."""
        keys, inside = self._keys(frame, points)
        number = self.table[np.where(inside, keys, 0)]
        found = inside & (number >= 0)
        number = np.where(found, number, 0)
        return self.mean[number], self.normal[number], found


def _smallest_eigen(a00, a01, a02, a11, a12, a22) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of many symmetric 3x3 matrices, given by their six entries (each ``(C,)``): the two smallest
    eigenvalues and the unit eigenvector of the smallest (closed form, Smith 1961; several times
    faster than ``np.linalg.eigh`` on many small matrices)."""
    q = (a00 + a11 + a22) / 3.0
    p = np.sqrt(((a00 - q) ** 2 + (a11 - q) ** 2 + (a22 - q) ** 2 + 2.0 * (a01**2 + a02**2 + a12**2)) / 6.0)
    p += 1e-30
    b00, b11, b22, b01, b02, b12 = (a00 - q) / p, (a11 - q) / p, (a22 - q) / p, a01 / p, a02 / p, a12 / p
    det = b00 * (b11 * b22 - b12**2) - b01 * (b01 * b22 - b12 * b02) + b02 * (b01 * b12 - b11 * b02)
    angle = np.arccos(np.clip(det / 2.0, -1.0, 1.0)) / 3.0
    smallest = q + 2.0 * p * np.cos(angle + 2.0 * np.pi / 3.0)
    middle = 3.0 * q - (q + 2.0 * p * np.cos(angle)) - smallest
    rows = [
        np.stack([a00 - smallest, a01, a02], 1),
        np.stack([a01, a11 - smallest, a12], 1),
        np.stack([a02, a12, a22 - smallest], 1),
    ]
    # The eigenvector is across every row of (A - smallest I): the longest cross product of two rows.
    candidates = np.stack([_cross(rows[0], rows[1]), _cross(rows[0], rows[2]), _cross(rows[1], rows[2])])
    lengths = np.linalg.norm(candidates, axis=2)
    best = np.argmax(lengths, axis=0)
    cells = np.arange(len(a00))
    return smallest, middle, candidates[best, cells] / (lengths[best, cells][:, None] + 1e-300)


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cross product of two Mx3 arrays (faster than np.cross on many short rows)."""
    return np.stack(
        [
            u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1],
            u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2],
            u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0],
        ],
        1,
    )


def _skew(v: np.ndarray) -> np.ndarray:
    """The 3x3 matrix of ``v x``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _turn(vectors: np.ndarray, axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Each row of ``vectors`` (Mx3) turned by its angle (radians) about one unit axis."""
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    return vectors * c + (vectors @ _skew(axis).T) * s + np.outer(vectors @ axis, axis) * (1.0 - c)


def _basis(axis: np.ndarray) -> np.ndarray:
    """Two unit vectors (2x3), ``e1`` and ``e2 = axis x e1``, at right angles to a unit axis."""
    first = np.cross(axis, np.eye(3)[np.argmin(np.abs(axis))])
    first /= np.linalg.norm(first)
    return np.stack([first, np.cross(axis, first)])


def _per_frame_sums(frame: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Per frame, the sum of its rows (``(M, K)`` -> ``(n, K)``)."""
    return np.stack([np.bincount(frame, rows[:, i], n) for i in range(rows.shape[1])], 1)


def _matrices(entries: np.ndarray) -> np.ndarray:
    """Symmetric 3x3 matrices from their six entries (xx, xy, xz, yy, yz, zz), ``(n, 6)`` -> ``(n, 3, 3)``."""
    return entries[:, [[0, 1, 2], [1, 3, 4], [2, 4, 5]]]


def _outer_entries(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The six entries of ``u v^T`` (symmetric when ``u = v``), per row."""
    return np.stack([u[:, i] * v[:, j] for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))], 1)


def _dominant_planes(patches: _Patches, points_per_frame: np.ndarray):
    """Each frame's main plane: ``(normal (n,3), centre (n,3), planar (n,))``; where ``planar`` is False
    the frame's points are not mostly one plane.

    The direction most of the frame's patches face (weighted by their points) picks the plane; the
    normal is then fitted to the points of the patches that face that way (so a door's narrow edges do
    not tilt it).
    """
    n, frame, count, normal = len(points_per_frame), patches.frame, patches.count, patches.normal
    direction = np.linalg.eigh(
        _matrices(_per_frame_sums(frame, _outer_entries(normal, normal * count[:, None]), n))
    )
    direction = direction[1][:, :, 2]
    agree = count * (np.abs(np.einsum("ij,ij->i", normal, direction[frame])) > np.cos(np.radians(20.0)))
    total = np.bincount(frame, agree, n)
    centre = _per_frame_sums(frame, patches.mean * agree[:, None], n) / np.maximum(total, 1)[:, None]
    offset = patches.mean - centre[frame]
    spread = _per_frame_sums(frame, (patches.spread + _outer_entries(offset, offset)) * agree[:, None], n)
    values, vectors = np.linalg.eigh(_matrices(spread / np.maximum(total, 1)[:, None]))
    planar = (
        (total > 0.5 * points_per_frame) & (values[:, 0] < 0.01 * values[:, 1]) & (values[:, 1] > 0.04**2)
    )
    return vectors[:, :, 0], centre, planar


class _Hinge:
    """A hinge being fitted: unit axis, a point on it, and q per seen frame (radians)."""

    size = 4  # axis direction (2) and position (2)
    converged = False

    def __init__(self, axis: np.ndarray, pivot: np.ndarray, q: np.ndarray):
        self.axis, self.pivot, self.q = axis / np.linalg.norm(axis), pivot, q

    @classmethod
    def seed(cls, rotations, translations, weights, centre) -> _Hinge:
        """From consecutive frames' motions: the axis their rotations share, the line their screws share."""
        turns = Rotation.from_matrix(rotations).as_rotvec()
        axis = np.linalg.eigh((turns * weights[:, None]).T @ turns)[1][:, -1]
        q = np.concatenate([[0.0], np.cumsum(turns @ axis)])
        lever = np.eye(3) - rotations  # (I - R) p = t for every step of a turn about a line through p
        trust = weights.copy()
        for _ in range(4):
            normal = np.einsum("n,nji,njk->ik", trust, lever, lever)
            right = np.einsum("n,nji,nj->i", trust, lever, translations)
            # Held to the plane through the centre across the axis, and faintly to the centre itself.
            along, ridge = np.trace(normal) + 1e-12, 1e-6 * np.trace(normal) + 1e-12
            normal += along * np.outer(axis, axis) + ridge * np.eye(3)
            right += along * axis * (axis @ centre) + ridge * centre
            pivot = np.linalg.solve(normal, right)
            miss = np.linalg.norm(np.einsum("nij,j->ni", lever, pivot) - translations, axis=1)
            trust = weights / (1.0 + (miss / max(1.5 * np.median(miss), 1e-4)) ** 2)
        return cls(axis, pivot, q)

    def move(self, points: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Points of one frame where the joint puts them ``dq`` radians further on."""
        return _turn(points - self.pivot, self.axis, dq) + self.pivot

    def rows(self, points, dq, normal, moved):
        """Derivatives of the point-to-plane residuals: by the axis ``(M, 4)`` and by ``dq`` ``(M,)``."""
        start, arm = points - self.pivot, moved - self.pivot
        c, s = np.cos(dq), np.sin(dq)
        arm_normal = _cross(arm, normal)
        e = _basis(self.axis)
        back = _turn(normal, self.axis, -dq)  # R^T n
        tilt = (arm_normal - _cross(start, back)) @ e.T  # n . (w x arm - R (w x start)), w = e1, e2
        along = normal @ e.T  # (I - R) e1 = (1 - c) e1 - s e2; (I - R) e2 = (1 - c) e2 + s e1
        shift = np.stack(
            [(1 - c) * along[:, 0] - s * along[:, 1], (1 - c) * along[:, 1] + s * along[:, 0]], 1
        )
        return np.concatenate([tilt, shift], 1), arm_normal @ self.axis

    def update(self, step: np.ndarray, centre: np.ndarray) -> None:
        """Applies a step: the axis turned by ``step[:2]`` (radians), moved by ``step[2:]`` (metres)."""
        e = _basis(self.axis)
        pivot = self.pivot + step[2:] @ e
        self.axis = Rotation.from_rotvec(step[:2] @ e).apply(self.axis)
        self.pivot = pivot - self.axis * ((pivot - centre) @ self.axis)


class _Slide:
    """A slide being fitted: unit direction and q per seen frame (metres)."""

    size = 2
    converged = False

    def __init__(self, axis: np.ndarray, q: np.ndarray):
        self.axis, self.q = axis / np.linalg.norm(axis), q
        self.pivot = np.zeros(3)

    @classmethod
    def seed(cls, shifts, weights) -> _Slide:
        """From consecutive frames' motions (how far they move the points' centre): the direction they share."""
        axis = np.linalg.eigh((shifts * weights[:, None]).T @ shifts)[1][:, -1]
        return cls(axis, np.concatenate([[0.0], np.cumsum(shifts @ axis)]))

    def move(self, points: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Points of one frame where the joint puts them ``dq`` metres further on."""
        return points + np.outer(dq, self.axis)

    def rows(self, points, dq, normal, moved):
        """Derivatives of the point-to-plane residuals: by the direction ``(M, 2)`` and by ``dq`` ``(M,)``."""
        tilt = (normal @ _skew(self.axis).T) @ _basis(self.axis).T  # n . (w x s) = w . (s x n)
        return tilt * dq[:, None], normal @ self.axis

    def update(self, step: np.ndarray, centre: np.ndarray) -> None:
        """Applies a step: the direction turned by ``step`` (radians)."""
        self.axis = Rotation.from_rotvec(step @ _basis(self.axis)).apply(self.axis)


def _robust_weights(residual: np.ndarray, found: np.ndarray, floor: float, ceiling: float) -> np.ndarray:
    """Tukey's biweight, its cut-off 4.685 robust standard deviations of the residuals (within ``floor``
    and ``ceiling``, metres); zero off the surface. A thin part's other face, a panel's thickness away,
    gets no weight once the fit has converged."""
    spread = 1.4826 * np.median(np.abs(residual[found])) if found.any() else ceiling
    cut = float(np.clip(4.685 * spread, floor, ceiling))
    return np.where(found & (np.abs(residual) < cut), (1.0 - (residual / cut) ** 2) ** 2, 0.0)


@dataclass
class _Fitted:
    """A joint model fitted to the seen frames.

    Attributes:
        model: The hinge or slide.
        distance: ``(M,)`` each point row's distance to the surface it lands on (metres, capped at
            :data:`OUTLIER_CAP`, which a point that lands on no surface gets).
        other_face: ``(P,)`` for a hinge, the pairs of frames that see opposite faces of the part.
        measured: ``(n,)`` the seen frames whose ``q`` the points tell: enough of them land on surface
            (:data:`MIN_MATCHED`), the surfaces there do not let the part move along the joint unseen
            (:data:`MIN_OBSERVED`), and they fit about as well as the others (:data:`WORST_FRAME`).
    """

    model: _Hinge | _Slide
    distance: np.ndarray
    other_face: np.ndarray
    measured: np.ndarray


class _Problem:
    """The seen frames' patches, and the points of each frame that are moved into the others."""

    def __init__(self, clouds: list[np.ndarray]):
        self.n = n = len(clouds)
        self.centre = clouds[0].mean(0)
        frame = np.repeat(np.arange(n), [len(c) for c in clouds])
        points = np.concatenate(clouds)
        size = float(np.max(np.percentile(clouds[0], 98, axis=0) - np.percentile(clouds[0], 2, axis=0)))
        cell = max(CELL, size / 15.0, size * np.sqrt(12.0 / len(clouds[0])))  # about 12 points a cell
        some = points[np.linspace(0, len(points) - 1, min(len(points), 5000)).astype(int)]
        bounds = np.percentile(some, [0.5, 99.5], axis=0)
        self.patches = [_Patches(points, frame, n, c, bounds) for c in (2.0 * cell, cell)]
        fine = self.patches[-1]
        number = np.maximum(fine.of_point, 0)
        offset = np.einsum("ij,ij->i", points - fine.mean[number], fine.normal[number])
        on_surface = (fine.of_point >= 0) & (np.abs(offset) < 0.006)
        starts = np.r_[0, np.cumsum([len(c) for c in clouds])]
        self.samples = []
        for f in range(n):
            pool = np.flatnonzero(on_surface[starts[f] : starts[f + 1]])
            pool = pool if len(pool) >= 20 else np.arange(len(clouds[f]))
            self.samples.append(
                clouds[f][pool[np.linspace(0, len(pool) - 1, min(SAMPLE_POINTS, len(pool))).astype(int)]]
            )
        counts = np.array([len(c) for c in clouds])
        self.normals, self.plane_centres, self.planar = _dominant_planes(fine, counts)
        self.pairs = np.array([(i, i + gap) for gap in PAIR_GAPS for i in range(n - gap)] or [(0, 1)])
        self.rows = self._rows(self.pairs)[:4]

    def _rows(self, pairs: np.ndarray):
        """Points (M,3), their frame, target frame and pair, and where each pair's rows start."""
        sizes = np.array([len(self.samples[i]) for i, _ in pairs])
        points = np.concatenate([self.samples[i] for i, _ in pairs])
        pair = np.repeat(np.arange(len(pairs)), sizes)
        return points, pairs[pair, 0], pairs[pair, 1], pair, np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def register_steps(self):
        """The rigid motion between consecutive seen frames (``x' = R x + t``).

        Returns:
            ``(R (P,3,3), t (P,3), matched (P,), shift (P,3))``: per pair of consecutive seen frames, the
            motion, the share of points that landed on the other frame's surface, and how far the motion
            moves the points' centre (metres).
        """
        pairs = np.array([(i, i + 1) for i in range(self.n - 1)])
        points, _, target, pair, starts = self._rows(pairs)
        count = np.diff(np.r_[starts, len(points)])
        centre = np.add.reduceat(points, starts) / count[:, None]
        # Turns are scaled by the points' spread so that all six directions are in metres.
        radius = np.sqrt(np.add.reduceat(np.sum((points - centre[pair]) ** 2, 1), starts) / count) + 1e-6
        rotations = np.tile(np.eye(3), (len(pairs), 1, 1))
        translations = np.zeros((len(pairs), 3))
        for patches in [self.patches[0]] * 3 + [self.patches[1]] * 3:
            moved = np.einsum("mij,mj->mi", rotations[pair], points) + translations[pair]
            mean, normal, found = patches.lookup(target, moved)
            residual = np.einsum("ij,ij->i", moved - mean, normal)
            weight = _robust_weights(residual, found, 0.005, 0.05)
            jac = np.concatenate([_cross(moved - centre[pair], normal) / radius[pair, None], normal], 1)
            normal_eq = np.add.reduceat(jac[:, :, None] * jac[:, None, :] * weight[:, None, None], starts)
            right = np.add.reduceat(jac * (weight * residual)[:, None], starts)
            # What the surfaces seen leave free (sliding along a plane) is not moved at all.
            values, vectors = np.linalg.eigh(normal_eq)
            usable = values > STEP_CONDITION * values[:, -1:]
            inverse = np.where(usable, 1.0 / np.where(usable, values, 1.0), 0.0)
            step = -np.einsum("pik,pk,pjk,pj->pi", vectors, inverse, vectors, right)
            turn = Rotation.from_rotvec(step[:, :3] / radius[:, None]).as_matrix()
            rotations = turn @ rotations
            translations = np.einsum("pij,pj->pi", turn, translations - centre) + centre + step[:, 3:]
        matched = np.add.reduceat((weight > 0).astype(float), starts) / count
        shifts = np.einsum("pij,pj->pi", rotations, centre) + translations - centre
        return rotations, translations, matched, shifts

    def refine(self, model, first: int, last: int) -> _Fitted:
        """Robust Gauss-Newton on one axis and q per frame: steps ``first`` to ``last - 1`` at most.

        The first step matches against the coarse patches, the rest against the fine ones, with the
        robust cut-off's floor narrowing from 2 cm to 5 mm; it stops once a step moves nothing by more
        than :data:`CONVERGED`.

        Returns:
            The fit, and what it leaves: see :class:`_Fitted`.
        """
        points, source, target, pair = self.rows
        hinge = isinstance(model, _Hinge)
        planes = self.pairs[self.planar[self.pairs[:, 0]] & self.planar[self.pairs[:, 1]]]
        for iteration in range(first, last if not model.converged else first):
            patches, floor = (self.patches[0], 0.02) if iteration == 0 else (self.patches[1], 0.01)
            floor = 0.005 if iteration > 1 else floor
            dq = model.q[target] - model.q[source]
            moved = model.move(points, dq)
            mean, normal, found = patches.lookup(target, moved)
            residual = np.einsum("ij,ij->i", moved - mean, normal)
            weight = _robust_weights(residual, found, floor, 0.04)
            if hinge:
                weight[
                    _other_face(model.q, self.pairs, pair, np.where(found, np.abs(residual), OUTLIER_CAP))[
                        pair
                    ]
                ] = 0
            rows_axis, rows_q = model.rows(points, dq, normal, moved)
            terms = [(rows_axis, rows_q, residual, weight, source, target)]
            if hinge and len(planes):
                terms.append(self._plane_terms(model, planes, points, weight))
            step = _solve(terms, self.n, model.size)
            model.q = model.q + step[model.size :]
            model.update(step[: model.size], self.centre)
            moves = np.r_[np.abs(step[: model.size]), np.percentile(np.abs(step[model.size :]), 90)]
            if iteration > 1 and moves.max() < CONVERGED:
                model.converged = True
                break
        dq = model.q[target] - model.q[source]
        moved = model.move(points, dq)
        mean, normal, found = self.patches[1].lookup(target, moved)
        distance = np.where(found, np.abs(np.einsum("ij,ij->i", moved - mean, normal)), OUTLIER_CAP)
        distance = np.minimum(distance, OUTLIER_CAP)
        landed = (distance < OUTLIER_CAP).astype(float)
        # How much a change of q moves each point off its surface, as a share of how far it moves it.
        by_q = model.rows(points, dq, normal, moved)[1] ** 2
        if hinge:
            arm = moved - model.pivot
            by_q /= np.maximum(np.sum(arm**2, 1) - (arm @ model.axis) ** 2, 1e-12)
        n = self.n
        rows = np.maximum(np.bincount(source, minlength=n) + np.bincount(target, minlength=n), 1)
        landed_rows = np.bincount(source, landed, n) + np.bincount(target, landed, n)
        observed = (
            np.bincount(source, landed * by_q, n) + np.bincount(target, landed * by_q, n)
        ) / np.maximum(landed_rows, 1)
        other_face = (
            _other_face(model.q, self.pairs, pair, distance) if hinge else np.zeros(len(self.pairs), bool)
        )
        kept = landed * ~other_face[pair]
        square = (np.bincount(source, kept * distance**2, n) + np.bincount(target, kept * distance**2, n)) / (
            np.maximum(np.bincount(source, kept, n) + np.bincount(target, kept, n), 1)
        )
        measured = (landed_rows / rows >= MIN_MATCHED) & (observed >= MIN_OBSERVED)
        if measured.any():
            measured &= square <= WORST_FRAME**2 * np.median(square[measured])
        return _Fitted(model, distance, other_face, measured)

    def residual(self, distance: np.ndarray, skip: np.ndarray) -> float:
        """RMS of the point rows' distances (metres, capped), leaving out the pairs ``skip`` marks."""
        keep = ~skip[self.rows[3]]
        return float(np.sqrt(np.mean(distance[keep] ** 2))) if keep.any() else OUTLIER_CAP

    def hinge_from_planes(self, model: _Hinge) -> _Hinge:
        """A better seed where the part is mostly flat: its planes' normals turn about the axis by ``q``.

        The axis is the direction the (consistently signed) normals turn about, each frame's ``q`` the
        angle its normal has turned, and the pivot the line that moves each frame's plane back onto the
        first's, or onto the other face's plane where the camera sees the part's other side (see
        :func:`_other_face`). Frames that are not flat keep their motion from their neighbours.
        """
        flat = np.flatnonzero(self.planar)
        if len(flat) < 5:
            return model
        normals = self.normals[flat].copy()
        for i in range(1, len(normals)):  # signed by continuity
            normals[i] *= np.sign(normals[i] @ normals[i - 1]) or 1.0
        # A panel turns about an axis along it: its normals sweep a great circle across the axis. Where
        # they do not (a cone), the axis is across the plane they sweep.
        values, vectors = np.linalg.eigh(normals.T @ normals / len(normals))
        if values[1] < np.radians(4.0) ** 2 / 12.0:
            return model  # the planes barely turn: the points alone tell the axis
        if values[0] > np.sin(np.radians(3.0)) ** 2:
            values, vectors = np.linalg.eigh(np.cov(normals.T))
            if values[0] > 0.05 * values[1]:
                return model  # not about one axis
        axis = vectors[:, 0] * (np.sign(vectors[:, 0] @ model.axis) or 1.0)
        start = normals[0] - axis * (normals[0] @ axis)
        start /= np.linalg.norm(start)
        turned = np.arctan2(normals @ np.cross(axis, start), normals @ start)
        q = model.q.copy()
        q[flat] = q[flat[0]] + turned
        # The half-turn a plane's normal cannot tell, chosen once for each run of flat frames close together
        # (their normals, signed by continuity, follow the turn frame by frame) by the median of what the
        # frame-to-frame registration says. Chosen frame by frame, it flipped a microwave door's shut frames:
        # the registration had fallen 80-90 degrees behind during a quick push the gripper hid.
        runs = np.split(np.arange(len(flat)), np.flatnonzero(np.diff(flat) > FLAT_RUN_GAP) + 1)
        for run in runs:
            q[flat[run]] += np.pi * np.round(np.median((model.q[flat[run]] - q[flat[run]]) / np.pi))
        q = model.q + np.interp(np.arange(self.n), flat, q[flat] - model.q[flat])
        q -= q[0]
        e = _basis(axis)
        lever = (normals - normals[0]) @ e.T
        offset = (
            np.einsum("ij,ij->i", normals, self.plane_centres[flat]) - (normals - normals[0]) @ model.pivot
        )
        cuts = [None, *np.unique(q[flat])[1:]]
        best = None
        for cut in cuts:
            side = np.ones(len(flat)) if cut is None else (q[flat] < cut).astype(float)
            design = (
                np.column_stack([lever, side, 1.0 - side])
                if cut is not None
                else np.column_stack([lever, side])
            )
            solution, *_ = np.linalg.lstsq(design, offset, rcond=None)
            miss = float(np.sqrt(np.mean((design @ solution - offset) ** 2)))
            if cut is not None:
                miss += 0.5 * FACE_GAP * (abs(solution[2] - solution[3]) < FACE_GAP)  # no real second face
            if best is None or miss < best[0]:
                best = (miss, solution)
        pivot = model.pivot + best[1][:2] @ e
        return _Hinge(axis, pivot - axis * ((pivot - self.centre) @ axis), q)

    def _plane_terms(self, model: _Hinge, planes: np.ndarray, points: np.ndarray, weight: np.ndarray):
        """Rows tying each frame's dominant plane to the hinge: ``(R(q_j - q_i) n_i) x n_j = 0``."""
        i, j = planes.T
        first, second = self.normals[i], self.normals[j]
        dq = model.q[j] - model.q[i]
        turned = _turn(first, model.axis, dq)
        error = _cross(turned, second)
        gate = np.linalg.norm(error, axis=1) < np.sin(NORMAL_GATE)
        # As strong as the pair's points would be, were the plane turned by the same angle.
        radius_sq = np.mean(
            np.sum(_cross(points - model.pivot, np.tile(model.axis, (len(points), 1))) ** 2, 1)
        )
        strength = SAMPLE_POINTS * radius_sq * gate * weight.mean()
        e = _basis(model.axis)
        tilts = [
            _cross(
                _cross(np.tile(v, (len(i), 1)), turned) - _turn(np.cross(v, first), model.axis, dq), second
            )
            for v in e
        ]
        by_q = _cross(turned @ _skew(model.axis).T, second)
        rows_axis = np.zeros((len(i), 3, model.size))
        rows_axis[:, :, 0], rows_axis[:, :, 1] = tilts
        # Three rows per pair, one per component of the cross product.
        return (
            rows_axis.reshape(-1, model.size),
            by_q.ravel(),
            error.ravel(),
            np.repeat(strength, 3),
            np.repeat(i, 3),
            np.repeat(j, 3),
        )


def _other_face(q: np.ndarray, pairs: np.ndarray, pair: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """Which pairs of frames see opposite faces of a thin part, such as a door's outside, then its inside.

    A camera that stays put sees a turning panel's other face once the panel turns past its line of sight:
    beyond one angle ``q*``. Pairs of frames on either side of it match surfaces a panel's thickness
    apart. ``q*`` is where the pairs that span it fit worst against those that do not (none if no angle
    makes the spanning pairs fit worse than :data:`FACE_GAP` or twice the typical pair).

    Args:
        q: Joint value per seen frame (radians).
        pairs: ``(P, 2)`` seen-frame indices of each pair.
        pair: The pair of each point row.
        distance: Each row's distance to the surface (metres, capped at :data:`OUTLIER_CAP`).

    Returns:
        ``(P,)`` bool.
    """
    per_pair = np.bincount(pair, np.minimum(distance, OUTLIER_CAP), len(pairs))
    per_pair /= np.maximum(np.bincount(pair, minlength=len(pairs)), 1)
    excess = per_pair - max(FACE_GAP, 2.0 * float(np.median(per_pair)))
    low, high = np.sort(q[pairs], axis=1).T
    cuts = np.unique(q)
    # Each pair adds its excess to every cut strictly between its two frames' q.
    score = np.zeros(len(cuts) + 1)
    np.add.at(score, np.searchsorted(cuts, low, side="right"), excess)
    np.add.at(score, np.searchsorted(cuts, high, side="left"), -excess)
    score = np.cumsum(score)[:-1]
    best = int(np.argmax(score))
    if score[best] <= 0.0:
        return np.zeros(len(pairs), bool)
    cut = 0.5 * (cuts[best] + cuts[min(best + 1, len(cuts) - 1)])
    return (low < cut) & (high > cut)


def _solve(terms, n: int, k: int) -> np.ndarray:
    """A damped Gauss-Newton step on ``k`` axis parameters and ``n`` frame values (the first held at 0).

    Each term is ``(rows_axis (M,k), rows_q (M,), residual (M,), weight (M,), source (M,), target (M,))``:
    a row's residual depends on the axis and on ``q[target] - q[source]``.
    """
    normal_eq = np.zeros((k + n, k + n))
    right = np.zeros(k + n)
    for rows_axis, rows_q, residual, weight, source, target in terms:
        weighted = rows_axis * weight[:, None]
        normal_eq[:k, :k] += weighted.T @ rows_axis
        right[:k] += weighted.T @ residual
        for column in range(k):
            both = weighted[:, column] * rows_q
            normal_eq[column, k:] += np.bincount(target, both, n) - np.bincount(source, both, n)
        square = weight * rows_q**2
        normal_eq[k:, k:] += np.diag(np.bincount(target, square, n) + np.bincount(source, square, n))
        mixed = np.bincount(source * n + target, square, n * n).reshape(n, n)
        normal_eq[k:, k:] -= mixed + mixed.T
        both = weight * rows_q * residual
        right[k:] += np.bincount(target, both, n) - np.bincount(source, both, n)
    normal_eq[k:, :k] = normal_eq[:k, k:].T
    free = np.r_[np.arange(k), k + np.arange(1, n)]
    system = normal_eq[np.ix_(free, free)]
    damping = 1e-3 * np.diag(system) + 1e-9 * (np.trace(system) / len(free) + 1e-12)
    damping[:k] += 1e-3 * np.diag(system)[:k].max()  # an axis direction the points leave free stays put
    damping[k:] += 1e-2 * np.median(np.diag(system)[k:])  # and so does a frame's q they leave free
    system += np.diag(damping)
    step = np.zeros(k + n)
    step[free] = np.linalg.solve(system, -right[free])
    step[:k] = np.clip(step[:k], -0.2, 0.2)
    step[k:] = np.clip(step[k:], -0.3, 0.3)
    return step


def fit_joint_without_depth(
    body_centre: np.ndarray,
    body_yaw: float,
    body_size: np.ndarray,
    opening: str,
    panel_size: np.ndarray,
    camera: Camera,
    world_from_camera: np.ndarray,
    masks: list[np.ndarray | None],
    kind: str = "auto",
    max_angle: float = np.radians(120.0),
    panel_offset: np.ndarray | None = None,
    measure: bool = True,
    choice: JointFit | None = None,
) -> JointFit:
    """Estimates a part's joint from its masks alone, given the body's box and the side that opens.

    The panel is a box of ``panel_size`` centred on the opening face, its outer face flush with it, at
    ``q = 0`` (closed). A hinge opens outwards (the panel leaves the body), up to ``max_angle``; a slide
    moves out along the face's normal, up to the body's depth, and its outline is the drawer out in front
    of the body (the front, and the tray behind it from the body's face on: the mask shows both).

    Args:
        body_centre: ``(3,)`` the body's box centre, world frame, metres.
        body_yaw: The box's yaw about world z, radians.
        body_size: ``(3,)`` the box's size along its local x, y, z, metres.
        opening: The face holding the opening, in the box's frame: ``"+x"``, ``"-x"``, ``"+y"``,
            ``"-y"``, ``"+z"`` or ``"-z"``.
        panel_size: ``(3,)`` the moving panel's size along the box's local x, y, z, metres.
        camera: Intrinsics (pixels).
        world_from_camera: 4x4 camera pose (OpenCV: x right, y down, z forward).
        masks: Per video frame, the part's ``HxW`` bool mask, or None where it is not seen.
        kind: ``"hinge"``, ``"slide"`` or ``"auto"``.
        max_angle: Radians, the widest a hinge is searched.
        panel_offset: ``(3,)`` the panel's centre across the opening face from the face's centre (box
            frame, metres; a drawer in a chest's upper half), or None for a centred panel.
        measure: False: only choose the joint (its residuals, on :data:`SEARCH_FRAMES` frames), leaving
            ``q`` unmeasured (NaN) on every frame: several openings are compared so, and the best measured.
        choice: What a call with ``measure=False`` and the same arguments returned: its joint is measured
            without being chosen again (the comparison is a third of the work).

    Returns:
        The joint, with ``q = 0`` closed; ``residual_m`` and ``other_residual_m`` hold 1 - mean IoU of the
        chosen hypothesis and of the best of the other kind.

    Raises:
        Real2GymError: ``opening`` or ``kind`` is unknown, or no frame has a mask.
    """
    if opening not in _OPENINGS or kind not in ("hinge", "slide", "auto"):
        raise Real2GymError(f"opening {opening!r} or joint kind {kind!r} is unknown")
    masks = [None if mask is None else np.asarray(mask) != 0 for mask in masks]
    seen = [f for f, mask in enumerate(masks) if mask is not None and mask.any()]
    if not seen:
        raise Real2GymError("the moving part has no mask on any frame: its joint cannot be estimated")
    body_size, panel_size = np.asarray(body_size, float), np.asarray(panel_size, float)
    index, side = _OPENINGS[opening]
    outward = side * np.eye(3)[index]
    across = (
        np.zeros(3) if panel_offset is None else np.asarray(panel_offset, float) * (1.0 - np.abs(outward))
    )
    centre = outward * (body_size[index] - panel_size[index]) / 2.0 + across
    corners = centre + (np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * panel_size / 2.0)
    hypotheses = []
    if kind in ("hinge", "auto"):
        for edge in (i for i in range(3) if i != index):
            along = 3 - index - edge
            for end in (-1.0, 1.0):
                point = (
                    outward * body_size[index] / 2.0 + across + end * np.eye(3)[edge] * panel_size[edge] / 2.0
                )
                axis = np.eye(3)[along]
                axis = axis if np.cross(axis, centre - point) @ outward > 0 else -axis
                hypotheses.append(_Hypothesis("hinge", axis, point, max_angle, panel_size[along]))
    if kind in ("slide", "auto"):
        hypotheses.append(_Hypothesis("slide", outward, centre, body_size[index], panel_size[index]))
    world_from_body = pose_matrix(np.asarray(body_centre, float), yaw_rotation(body_yaw))
    camera_from_body = invert(world_from_camera) @ world_from_body
    boxes = {f: mask_box(masks[f]) for f in seen}
    areas = {f: np.count_nonzero(masks[f]) for f in seen}

    # The panel's corners at q, in the camera's frame, are a sum of fixed terms (a turn is Rodrigues' formula:
    # the offset from the hinge, its cross with the axis, its part along the axis; a slide moves the corners
    # in front of the body along it): each hypothesis's terms are worked out once, not on each of the
    # thousands of poses the search tries.
    rotation, shift = camera_from_body[:3, :3], camera_from_body[:3, 3]
    terms = []
    for hypothesis in hypotheses:
        if hypothesis.type == "hinge":
            offset = corners - hypothesis.point
            along = np.outer(offset @ hypothesis.axis, hypothesis.axis)
            fixed = (hypothesis.point + along) @ rotation.T + shift
            terms.append(
                (fixed, (offset - along) @ rotation.T, np.cross(hypothesis.axis, offset) @ rotation.T)
            )
        else:  # a drawer out by q shows all of itself in front of the body: its front and the tray behind it
            moving = np.outer((corners - centre) @ outward > 0, hypothesis.axis)
            terms.append((corners @ rotation.T + shift, moving @ rotation.T, None))
    focal, principal = np.array([camera.fx, camera.fy]), np.array([camera.cx, camera.cy])

    def iou(which: int, frame: int, q: float) -> float:
        fixed, first, second = terms[which]
        if second is None:
            in_camera = fixed + first * q
        else:
            in_camera = fixed + first * math.cos(q) + second * math.sin(q)
        if in_camera[:, 2].min() < 0.01:
            return 0.0  # the panel reaches behind the camera: not what the video shows
        pixels = focal * in_camera[:, :2] / in_camera[:, 2:] + principal
        return _outline_iou(pixels, masks[frame], boxes[frame], areas[frame])

    def search(which: int, frame: int) -> tuple[float, float]:
        top = hypotheses[which].top
        values = np.linspace(0.0, top, SEARCH_STEPS)
        step = values[1] - values[0]
        best_q, best = 0.0, -1.0
        for _ in range(3):  # a grid, then two finer ones around the best (itself already scored)
            for q in values:
                score = iou(which, frame, float(q))
                if score > best:
                    best_q, best = float(q), score
            step /= 4.0
            values = [v for v in np.clip(best_q + step * np.array([-2, -1, 1, 2]), 0.0, top) if v != best_q]
        return best_q, best

    world_axes = [world_from_body[:3, :3] @ h.axis for h in hypotheses]
    if choice is not None:
        best = next(h for h in range(len(hypotheses)) if hypotheses[h].type == choice.type
                    and np.allclose(world_axes[h], choice.axis) and np.allclose(
                        transform(world_from_body, hypotheses[h].point[None])[0], choice.pivot))  # fmt: skip
        scores = [1.0 - choice.residual_m if h == best else 1.0 - choice.other_residual_m
                  for h in range(len(hypotheses))]  # fmt: skip
        return _measured(hypotheses, scores, best, seen, masks, search, world_from_body, measure=True)
    trial = [seen[i] for i in np.unique(np.linspace(0, len(seen) - 1, SEARCH_FRAMES).round().astype(int))]
    # Every hypothesis on every third trial frame first; only those near the best of them (and each kind's
    # best, whose score is reported) on the rest.
    first = trial[::3]
    found = [[search(h, f)[1] for f in first] for h in range(len(hypotheses))]
    means = np.array([np.mean(scored) for scored in found])
    kept = {int(h) for h in np.flatnonzero(means >= means.max() - PRUNE_IOU)}
    for kind in {h.type for h in hypotheses}:
        kept.add(
            max((h for h in range(len(hypotheses)) if hypotheses[h].type == kind), key=lambda h: means[h])
        )
    rest = [f for f in trial if f not in first]
    scores = [np.mean(found[h] + [search(h, f)[1] for f in rest]) if h in kept else means[h]
              for h in range(len(hypotheses))]  # fmt: skip
    best = int(np.argmax(scores))
    return _measured(hypotheses, scores, best, seen, masks, search, world_from_body, measure)


def _measured(hypotheses, scores, best, seen, masks, search, world_from_body, measure) -> JointFit:
    """The chosen hypothesis as a :class:`JointFit`, ``q`` measured on every frame that shows the part where
    ``measure``."""
    chosen = hypotheses[best]
    others = [s for h, s in zip(hypotheses, scores, strict=True) if h.type != chosen.type]
    q = np.full(len(masks), np.nan)
    visible = np.zeros(len(masks), bool)
    for f in seen if measure else ():
        value, score = search(best, f)
        if score >= MIN_IOU:
            q[f], visible[f] = value, True
    if measure and not visible.any():
        raise Real2GymError(
            "no frame's mask matches the moving panel's outline: check the body's box and the opening"
        )
    return JointFit(
        type=chosen.type,
        axis=world_from_body[:3, :3] @ chosen.axis,
        pivot=transform(world_from_body, chosen.point[None])[0],
        range=(float(np.nanmin(q)), float(np.nanmax(q))) if visible.any() else (0.0, 0.0),
        q=q,
        visible=visible,
        residual_m=1.0 - float(scores[best]),
        other_residual_m=1.0 - float(max(others)) if others else float("nan"),
        extent=(-chosen.length / 2.0, chosen.length / 2.0),
    )


class _Hypothesis(NamedTuple):
    """A joint tried against the masks, in the body's frame.

    Attributes:
        type: ``"hinge"`` or ``"slide"``.
        axis: ``(3,)`` unit vector: the hinge's line (opening positive) or the slide's direction (out).
        point: ``(3,)`` metres: a point on the hinge's line (its middle), or the closed panel's centre.
        top: The largest ``q`` tried (radians or metres).
        length: Metres: the panel's length along the hinge (its thickness for a slide).
    """

    type: str
    axis: np.ndarray
    point: np.ndarray
    top: float
    length: float


def _outline_iou(pixels: np.ndarray, mask: np.ndarray, box: tuple[int, int, int, int], area: int) -> float:
    """IoU of the convex hull of some pixels (``Kx2``) with a mask (``HxW`` bool; its box and pixel count
    given), filled at 1/16 pixel within the two's joint box."""
    hull = cv2.convexHull(pixels.astype(np.float32)).reshape(-1, 2)
    height, width = mask.shape
    (low_x, low_y), (high_x, high_y) = hull.min(axis=0).tolist(), hull.max(axis=0).tolist()
    x0 = int(max(0, min(math.floor(low_x), box[0])))
    y0 = int(max(0, min(math.floor(low_y), box[1])))
    x1 = int(min(width, max(math.ceil(high_x), box[2]) + 1))
    y1 = int(min(height, max(math.ceil(high_y), box[3]) + 1))
    if x1 <= x0 or y1 <= y0:
        return 0.0
    canvas = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(canvas, np.round((hull - [x0, y0]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    inside = canvas.view(bool)
    overlap = np.count_nonzero(inside & mask[y0:y1, x0:x1])
    return overlap / (area + np.count_nonzero(inside) - overlap)
