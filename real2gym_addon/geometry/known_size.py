"""The camera pose from objects of known size, for RGB-only demos (no depth, no pose given).

A mask tells an object's outline, not its distance; with the table unknown too,
a scene and its copy scaled by any factor look the same. A known size on an
object's prompt (``"height"`` or ``"size"``, metres) fixes that factor: the
object stands on the table (z = 0) under its mask, so its outline on the image
depends on the camera's pitch, roll and height above the table, on where it
stands and how it is turned, and on its size. :func:`estimate_camera_pose` finds
all of them together so that every known-size object's projected silhouette
matches its masks on the frames where it rests: least squares on the distances
between the silhouette's outline and the mask's (smooth where an IoU is not),
from several starting pitches, keeping the answer whose silhouettes match the
masks best (IoU). Extents not given (a box's footprint when only its height is
known, a cylinder's diameter) are fitted with the rest.

Roll is fitted, not assumed: an upright object's sides lean in the image by the
camera's roll, and its top's outline is turned by it.

Each object's footprint is parametrised by the pixel where its base centre is
seen: its position on the table follows from that pixel's ray, so a change of
pitch or height keeps it under its mask.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
from scipy.optimize import least_squares

from ..demo import Camera, Demo
from ..errors import WarningLog
from ..segmentation.run import Segmentation
from .camera import invert, pose_matrix, yaw_rotation
from .shape_kinds import AUTO, BOX, CYLINDER, SHAPE_KINDS
from .shapes import Shape
from .silhouette import mask_box, silhouette_ious, silhouette_polygon
from .table import GeometryError, Table, world_from_table

"""Shapes fitted as an upright cylinder (their outline, handle and profile aside)."""
START_PITCHES = tuple(math.radians(d) for d in range(15, 86, 7))
"""Starting pitches (the optical axis below the horizon) tried for the search, radians."""
OUTLINE_SAMPLES = 64
"""Points compared along each outline (the projected silhouette's and the mask's)."""
ROBUST_PIXELS = 2.0
"""Outline distances beyond this (pixels; a hand in front, a handle) count less than squared."""
MAX_EVALUATIONS = 400
"""Outline comparisons one least-squares search may make."""
BEYOND_IMAGE = 64
"""Pixels beyond the image's edge over which a cut mask is continued for the outline comparison."""
DIFFERENCE_STEP = 1e-3
"""Finite-difference step of the search, in units of :data:`STEPS`."""
IMPOSSIBLE = 1e3
"""The outline distance (pixels) given to a pose that cannot be (an object above the horizon)."""
REST_FRAMES = 5
"""Frames (the prompt's and those where the mask stays the same) each object is matched on."""
SAME_MASK = 0.9
"""IoU with the prompt frame's mask above which another frame shows the object at rest there."""
POOR_FIT_IOU = 0.85
"""A silhouette IoU below this after the fit is flagged: the pose from it is doubtful."""
MIN_MASK_PIXELS = 30
"""A mask smaller than this (pixels) cannot set the scale."""
STEPS = {"pitch": 0.05, "roll": 0.03, "log_height": 0.1, "pixel": 3.0, "yaw": 0.2, "log_extent": 0.1}
"""The search's first step along each kind of unknown (radians, log metres, pixels)."""


@dataclasses.dataclass
class KnownObject:
    """One object of known size, as the pose search sees it.

    Attributes:
        name: From prompts.json.
        kind: ``box``, ``cylinder`` or ``auto`` (both tried, the better kept).
        height: Known height, metres.
        footprint: Known ``(sx, sy)`` (a box) or ``(d, d)`` (a cylinder), metres; None to fit it.
        masks: ``HxW`` bool masks of the object at rest, from one camera pose.
    """

    name: str
    kind: str
    height: float
    footprint: tuple[float, float] | None
    masks: list[np.ndarray]


@dataclasses.dataclass
class PoseEstimate:
    """The camera pose found from known sizes.

    Attributes:
        world_from_camera: 4x4 (OpenCV camera into the z-up world, table at z = 0).
        pitch: The optical axis below the horizon, radians.
        roll: About the optical axis, radians.
        height: The camera above the table, metres.
        ious: Per object name, the silhouette IoU of the fit (mean over its masks).
        sizes: Per object name, the fitted full extents ``(sx, sy, sz)``, metres.
        kinds: Per object name, the shape fitted (``box`` or ``cylinder``).
    """

    world_from_camera: np.ndarray
    pitch: float
    roll: float
    height: float
    ious: dict[str, float]
    sizes: dict[str, tuple[float, float, float]]
    kinds: dict[str, str]

    @property
    def residual(self) -> float:
        """Mean silhouette mismatch (1 - IoU) over the objects."""
        return float(np.mean([1.0 - v for v in self.ious.values()]))

    def report(self) -> dict:
        """Per object: its silhouette IoU, the shape fitted and its extents (the report's figures)."""
        return {
            name: {
                "silhouette_iou": round(iou, 4),
                "shape": self.kinds[name],
                "size": [round(v, 5) for v in self.sizes[name]],
            }
            for name, iou in self.ious.items()
        }


@dataclasses.dataclass
class KnownSizeTable(Table):
    """The table of a pose estimated from known sizes; the report says from which objects and how well.

    Attributes:
        residual: The fit's mean silhouette mismatch (1 - IoU) over the objects.
        objects: Per object name, the fit's silhouette IoU, shape and extents (:meth:`PoseEstimate.report`).
    """

    residual: float = 0.0
    objects: dict[str, dict] = dataclasses.field(default_factory=dict)

    def to_report(self) -> dict:
        """The report's ``table`` entry, with ``known_size``: the objects and the fit's residual."""
        known = {"residual": round(self.residual, 4), "objects": self.objects}
        return {**super().to_report(), "known_size": known}


def has_metric_scale(demo: Demo) -> bool:
    """Whether the demo gives a metric scale: depth, a camera pose, or an object of known size."""
    camera = demo.camera
    return (
        demo.depth_dir is not None
        or camera.world_from_camera is not None
        or camera.world_from_camera_frames is not None
        or any(o.known_height is not None for o in demo.objects)
    )


def require_metric_scale(demo: Demo) -> None:
    """Refuses a demo whose objects cannot be placed at metric scale (call before segmenting).

    Raises:
        GeometryError: No depth/, no camera pose and no known size; the message says what to add.
    """
    if has_metric_scale(demo):
        return
    example = demo.objects[0].name
    raise GeometryError(
        "the demo has no depth/ folder and camera.json has no world_from_camera, and no object's prompt "
        "gives a known size: the table and the objects cannot be placed at metric scale. Add one of: "
        "depth images (depth/000000.png ...), the camera pose ('world_from_camera' in camera.json), or "
        f'the real size of an object resting on the table in prompts.json (e.g. "height": 0.10 or '
        f"\"size\": [0.06, 0.06, 0.10] in metres on object '{example}')"
    )


def camera_from_world(pitch: float, roll: float, height: float) -> np.ndarray:
    """The camera's 4x4 camera_from_world for a pitch, roll and height above the table.

    The world frame is :func:`.table.world_from_table`'s: z up, z = 0 on the table.

    Args:
        pitch: The optical axis below the horizon, radians.
        roll: About the optical axis, radians.
        height: The camera above the table, metres.
    """
    c, s = math.cos(roll), math.sin(roll)
    up = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
        [0.0, -math.cos(pitch), -math.sin(pitch)]
    )
    return invert(world_from_table(up, height))


def _on_table(camera: Camera, world_from_cam: np.ndarray, pixel: np.ndarray) -> np.ndarray | None:
    """Where a pixel's ray meets the table (world, metres), or None above the horizon."""
    ray = world_from_cam[:3, :3] @ np.array(
        [(pixel[0] - camera.cx) / camera.fx, (pixel[1] - camera.cy) / camera.fy, 1.0]
    )
    if ray[2] >= -1e-6:
        return None
    origin = world_from_cam[:3, 3]
    return origin + ray * (-origin[2] / ray[2])


def _square(kind: str) -> bool:
    """The known-size fit's model of an object of this kind has a rectangular footprint (its yaw and two
    extents unknown), not a round one (one diameter)."""
    return not SHAPE_KINDS[kind].round


class _Layout:
    """The search's unknowns as one vector: the camera's, then each object's.

    Camera: pitch, roll, log height. Object: the pixel of its base centre (u, v),
    then for a box its yaw and, without a known footprint, log sx and log sy; for a
    cylinder, without a known diameter, its log diameter.
    """

    def __init__(self, objects: list[KnownObject], kinds: list[str]) -> None:
        self.objects, self.kinds = objects, kinds
        self.slices, steps, start = [], [STEPS["pitch"], STEPS["roll"], STEPS["log_height"]], 3
        self.owners: list[int | None] = [None, None, None]
        """Per unknown, the object it belongs to (None: the camera's)."""
        for index, (obj, kind) in enumerate(zip(objects, kinds, strict=True)):
            own = [STEPS["pixel"], STEPS["pixel"]]
            if _square(kind):
                own.append(STEPS["yaw"])
            if obj.footprint is None:
                own += [STEPS["log_extent"]] * (2 if _square(kind) else 1)
            self.slices.append(slice(start, start + len(own)))
            self.owners += [index] * len(own)
            steps += own
            start += len(own)
        self.steps = np.array(steps)

    def shapes(self, x: np.ndarray) -> list[tuple[Shape, np.ndarray, float]]:
        """Per object: its shape, base-centre pixel and yaw."""
        result = []
        for obj, kind, part in zip(self.objects, self.kinds, self.slices, strict=True):
            values = x[part]
            pixel, rest = values[:2], list(values[2:])
            yaw = rest.pop(0) if _square(kind) else 0.0
            if obj.footprint is not None:
                sx, sy = obj.footprint
            elif _square(kind):
                sx, sy = math.exp(rest[0]), math.exp(rest[1])
            else:
                sx = sy = math.exp(rest[0])
            result.append((Shape(kind, (sx, sy, obj.height)), pixel, yaw))
        return result


class _MaskTarget:
    """One mask, ready to be compared with an outline smoothly (for least squares).

    A mask cut by the image's edge is continued beyond it (its edge rows and
    columns repeated, :data:`BEYOND_IMAGE` pixels), and its outline along the
    edge is not an outline of the object: it is left out.

    Attributes:
        distance: Signed distance to the mask's outline in pixels (negative inside, zero half way
            between an inside and an outside pixel centre), over the image and the margin around it.
        outline: ``Kx2`` pixels on the mask's outline (between its edge pixels and the outside).
    """

    def __init__(self, mask: np.ndarray) -> None:
        inside = cv2.copyMakeBorder(mask.astype(np.uint8), *[BEYOND_IMAGE] * 4, cv2.BORDER_REPLICATE)
        to_inside = cv2.distanceTransform(1 - inside, cv2.DIST_L2, 5)
        to_outside = cv2.distanceTransform(inside, cv2.DIST_L2, 5)
        self.distance = np.where(inside > 0, 0.5 - to_outside, to_inside - 0.5).astype(np.float32)
        contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        points = np.concatenate([c.reshape(-1, 2) for c in contours]).astype(float)
        height, width = mask.shape
        centre = points.mean(axis=0)
        points = points[(points > 0).all(axis=1) & (points[:, 0] < width - 1) & (points[:, 1] < height - 1)]
        away = points - centre
        away /= np.maximum(np.linalg.norm(away, axis=1, keepdims=True), 1e-9)
        points = points + 0.5 * away  # from the edge pixels' centres out to the outline
        self.outline = points[np.linspace(0, len(points) - 1, min(OUTLINE_SAMPLES, len(points))).astype(int)]

    def residuals(self, polygon: np.ndarray) -> np.ndarray:
        """How far (pixels) the polygon's outline lies from the mask's, and the mask's from the polygon's."""
        on_polygon = _along(polygon, OUTLINE_SAMPLES) + BEYOND_IMAGE
        return np.r_[_bilinear(self.distance, on_polygon), _distance_to_polygon(self.outline, polygon)]


def _bilinear(image: np.ndarray, pixels: np.ndarray) -> np.ndarray:
    """``image`` at ``Nx2`` sub-pixel positions ``(u, v)``, clamped to the image (float64 throughout:
    OpenCV's remap rounds positions to 1/32 pixel, which a finite-difference Jacobian cannot use)."""
    height, width = image.shape
    u = np.clip(pixels[:, 0], 0.0, width - 1.001)
    v = np.clip(pixels[:, 1], 0.0, height - 1.001)
    u0, v0 = u.astype(int), v.astype(int)
    fu, fv = u - u0, v - v0
    top = image[v0, u0] * (1 - fu) + image[v0, u0 + 1] * fu
    bottom = image[v0 + 1, u0] * (1 - fu) + image[v0 + 1, u0 + 1] * fu
    return top * (1 - fv) + bottom * fv


def _along(polygon: np.ndarray, count: int) -> np.ndarray:
    """``count`` points evenly spaced along a closed polygon's outline."""
    closed = np.vstack([polygon, polygon[:1]]).astype(float)
    lengths = np.hypot(*np.diff(closed, axis=0).T)
    at = np.r_[0.0, np.cumsum(lengths)]
    wanted = np.linspace(0.0, at[-1], count, endpoint=False)
    return np.c_[np.interp(wanted, at, closed[:, 0]), np.interp(wanted, at, closed[:, 1])]


def _distance_to_polygon(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Unsigned distance (pixels) of ``Nx2`` points to a closed polygon's outline."""
    start = polygon.astype(float)
    edge = np.roll(start, -1, axis=0) - start
    offset = points[:, None, :] - start[None]
    t = np.clip((offset * edge).sum(axis=2) / np.maximum((edge**2).sum(axis=1), 1e-12), 0.0, 1.0)
    return np.linalg.norm(offset - t[..., None] * edge, axis=2).min(axis=1)


def _polygons(x: np.ndarray, layout: _Layout, camera: Camera, only: int | None = None) -> list | None:
    """Per object, its projected silhouette (``Kx2`` pixels), or None for one other than ``only``
    when given; None for a pose that cannot be (a base above the horizon)."""
    if not 0.0 < x[0] < math.pi / 2 or abs(x[1]) > math.pi / 4:
        return None
    view = camera_from_world(x[0], x[1], math.exp(x[2]))
    world_from_cam = invert(view)
    polygons = []
    for index, (obj, (shape, pixel, yaw)) in enumerate(zip(layout.objects, layout.shapes(x), strict=True)):
        if only is not None and index != only:
            polygons.append(None)
            continue
        base = _on_table(camera, world_from_cam, pixel)
        if base is None:
            return None
        pose = pose_matrix(base + [0.0, 0.0, obj.height / 2], yaw_rotation(yaw))
        polygons.append(silhouette_polygon(shape, view @ pose, camera))
    return polygons


def _mismatches(x: np.ndarray, layout: _Layout, camera: Camera) -> list[float] | None:
    """Per object, the mean 1 - IoU over its masks; None for a pose that cannot be."""
    polygons = _polygons(x, layout, camera)
    if polygons is None:
        return None
    return [
        float(np.mean([1.0 - iou for iou in silhouette_ious(polygon, obj.masks)]))
        for obj, polygon in zip(layout.objects, polygons, strict=True)
    ]


def _object_residuals(x: np.ndarray, layout: _Layout, camera: Camera, targets, only: int | None = None):
    """Per object, its outline distances (pixels) over its masks, each object weighted alike (None for
    one other than ``only``); None for a pose that cannot be."""
    polygons = _polygons(x, layout, camera, only)
    if polygons is None:
        return None
    return [
        None
        if polygon is None
        else np.concatenate([t.residuals(polygon) for t in masks]) / math.sqrt(len(masks))
        for polygon, masks in zip(polygons, targets, strict=True)
    ]


def _residuals(offset: np.ndarray, start: np.ndarray, layout: _Layout, camera: Camera, targets) -> np.ndarray:
    """Every object's outline distances (pixels) at ``start + offset * steps``; large for a pose that
    cannot be."""
    parts = _object_residuals(start + offset * layout.steps, layout, camera, targets)
    if parts is None:
        return np.full(sum(OUTLINE_SAMPLES + len(t.outline) for masks in targets for t in masks), IMPOSSIBLE)
    return np.concatenate(parts)


def _jacobian(offset: np.ndarray, start: np.ndarray, layout: _Layout, camera: Camera, targets) -> np.ndarray:
    """Forward differences of :func:`_residuals`, :data:`DIFFERENCE_STEP` apart (silhouettes are float32
    pixels: least squares' default step of about 1e-8 is lost in their rounding). An object's own
    unknowns move only its own outline, so only that is projected again."""
    x = start + offset * layout.steps
    base = _object_residuals(x, layout, camera, targets)
    rows = np.cumsum([0] + [sum(OUTLINE_SAMPLES + len(t.outline) for t in masks) for masks in targets])
    jacobian = np.zeros((rows[-1], len(x)))
    if base is None:
        return jacobian
    for column, owner in enumerate(layout.owners):
        moved = x.copy()
        moved[column] += DIFFERENCE_STEP * layout.steps[column]
        parts = _object_residuals(moved, layout, camera, targets, owner)
        for index, part in enumerate(parts or []):
            if part is not None:
                jacobian[rows[index] : rows[index + 1], column] = (part - base[index]) / DIFFERENCE_STEP
    return jacobian


def _start(objects: list[KnownObject], kinds: list[str], pitch: float, camera: Camera) -> np.ndarray | None:
    """A first guess at a pitch: roll 0, each base under its mask's bottom, the height from its top.

    At a camera height of 1, the object's top edge (seen at the mask's top row,
    above its base) stands some height ``t`` above the table; the known height is
    then ``height / t`` times that scene.
    """
    world_from_cam = invert(camera_from_world(pitch, 0.0, 1.0))
    values, scales = [], []
    for obj, kind in zip(objects, kinds, strict=True):
        x0, y0, x1, y1 = mask_box(obj.masks[0])
        base_pixel = np.array([(x0 + x1) / 2, y1 - 0.15 * (y1 - y0)])
        base = _on_table(camera, world_from_cam, base_pixel)
        if base is None:
            return None
        distance = float(np.linalg.norm(base - world_from_cam[:3, 3]))
        top = world_from_cam[:3, :3] @ np.array([(x0 + x1) / 2 - camera.cx, y0 - camera.cy, camera.fy])
        # The top row's ray passes over the base at height t: where its horizontal reach equals the base's.
        origin, reach = world_from_cam[:3, 3], np.linalg.norm(base[:2] - world_from_cam[:2, 3])
        rise = origin[2] + top[2] * reach / max(np.linalg.norm(top[:2]), 1e-9)
        scale = obj.height / rise if rise > 1e-3 else 1.0
        scales.append(scale)
        width = (x1 - x0) * distance / camera.fx * scale
        own = [*base_pixel]
        if _square(kind):
            own.append(0.0)
        if obj.footprint is None:
            own += [math.log(width * 0.8)] * (2 if _square(kind) else 1)
        values.append(own)
    height = float(np.exp(np.mean(np.log(scales))))
    return np.array([pitch, 0.0, math.log(height)] + [v for own in values for v in own])


def _search(objects: list[KnownObject], kinds: list[str], camera: Camera) -> tuple[np.ndarray, float]:
    """The best fit for one choice of shapes: least squares on the outlines from every starting pitch,
    the one whose silhouettes match the masks best (IoU) kept.

    Returns:
        The unknowns (see :class:`_Layout`) and their mean silhouette mismatch (1 - IoU).
    """
    layout = _Layout(objects, kinds)
    targets = [[_MaskTarget(m) for m in obj.masks] for obj in objects]
    best = None
    for pitch in START_PITCHES:
        start = _start(objects, kinds, pitch, camera)
        if start is None:
            continue
        fit = least_squares(
            _residuals, np.zeros(len(start)), jac=_jacobian, args=(start, layout, camera, targets),
            loss="soft_l1", f_scale=ROBUST_PIXELS, max_nfev=MAX_EVALUATIONS,
        )  # fmt: skip
        x = start + fit.x * layout.steps
        errors = _mismatches(x, layout, camera)
        if errors is not None and (best is None or np.mean(errors) < best[1]):
            best = (x, float(np.mean(errors)))
    if best is None:
        raise GeometryError(
            "the objects of known size are not seen standing on a table from any plausible camera pitch; "
            "check their masks on the prompt frame"
        )
    return best


def estimate_camera_pose(objects: list[KnownObject], camera: Camera) -> PoseEstimate:
    """Finds the camera's pitch, roll and height above the table from objects of known size.

    Args:
        objects: At least one object of known height resting on the table, with its masks.
        camera: Intrinsics (pixels).

    Returns:
        The pose, with each object's fitted size and silhouette IoU.
    """
    choices = [[BOX.name, CYLINDER.name] if o.kind == AUTO.name else [o.kind] for o in objects]
    best = None
    for kinds in _combinations(choices):
        x, loss = _search(objects, kinds, camera)
        if best is None or loss < best[1]:
            best = (x, loss, kinds)
    x, _, kinds = best
    layout = _Layout(objects, kinds)
    errors = _mismatches(x, layout, camera)
    pitch, roll, height = float(x[0]), float(x[1]), float(math.exp(x[2]))
    return PoseEstimate(
        world_from_camera=invert(camera_from_world(pitch, roll, height)),
        pitch=pitch,
        roll=roll,
        height=height,
        ious={o.name: 1.0 - e for o, e in zip(objects, errors, strict=True)},
        sizes={
            o.name: tuple(float(v) for v in s.size)
            for o, (s, _, _) in zip(objects, layout.shapes(x), strict=True)
        },
        kinds=dict(zip([o.name for o in objects], kinds, strict=True)),
    )


def _combinations(choices: list[list[str]]) -> list[list[str]]:
    """Every pick of one kind per object (``auto`` objects try both)."""
    picks = [[]]
    for options in choices:
        picks = [pick + [kind] for pick in picks for kind in options]
    return picks


def known_objects(demo: Demo, segmentation: Segmentation) -> list[KnownObject]:
    """The demo's objects of known size, each with its masks on the frames it rests as on its prompt.

    Raises:
        GeometryError: An object of known size is not seen on its prompt frame.
    """
    found = []
    for prompt, track in zip(demo.objects, segmentation.objects, strict=True):
        if prompt.known_height is None:
            continue
        anchor = track.masks[prompt.frame]
        if int(anchor.sum()) < MIN_MASK_PIXELS:
            raise GeometryError(
                f"object '{prompt.name}': its mask on frame {prompt.frame} is too small to set the scale "
                "from its known size; check its prompt there"
            )
        entry = SHAPE_KINDS[prompt.shape]
        kind = BOX.name if entry is BOX else CYLINDER.name if entry.round else AUTO.name
        found.append(KnownObject(prompt.name, kind, prompt.known_height, _footprint(prompt, kind),
                                 _rest_masks(track.masks, prompt.frame)))  # fmt: skip
    return found


def _footprint(prompt, kind: str) -> tuple[float, float] | None:
    """The known footprint a fit can keep: a box's or a plain cylinder's (a cup's may include a handle)."""
    if prompt.size is None or kind == AUTO.name or SHAPE_KINDS[prompt.shape].container:
        return None
    sx, sy, _ = prompt.size
    return (sx, sy) if _square(kind) else ((sx + sy) / 2, (sx + sy) / 2)


def _rest_masks(masks: list[np.ndarray], frame: int) -> list[np.ndarray]:
    """The prompt frame's mask and up to :data:`REST_FRAMES` - 1 others nearest it that match it."""
    anchor = masks[frame]
    chosen = [anchor]
    for other in sorted(range(len(masks)), key=lambda f: abs(f - frame)):
        if len(chosen) >= REST_FRAMES:
            break
        if other == frame:
            continue
        mask = masks[other]
        union = np.logical_or(anchor, mask).sum()
        if union and np.logical_and(anchor, mask).sum() / union >= SAME_MASK:
            chosen.append(mask)
    return chosen


def table_from_known_sizes(
    demo: Demo, segmentation: Segmentation, log: WarningLog
) -> tuple[KnownSizeTable, np.ndarray]:
    """The table and world frame of an RGB-only demo, from its objects of known size.

    Args:
        demo: The checked demo (no depth, no camera pose; at least one known size).
        segmentation: Masks of every object on every frame.
        log: Receives the accuracy warning, and a flag for a poor fit.

    Returns:
        The table (``source = "known_size"``) and world_from_camera (4x4).
    """
    objects = known_objects(demo, segmentation)
    estimate = estimate_camera_pose(objects, demo.camera)
    names = ", ".join(f"'{o.name}'" for o in objects)
    pitch, roll = math.degrees(estimate.pitch), math.degrees(estimate.roll)
    log.warn(
        "geometry",
        f"no depth and no camera pose: the camera pose (pitch {pitch:.1f} deg, roll {roll:.1f} deg, "
        f"{estimate.height * 100:.1f} cm above the table) was estimated from the known size of {names} "
        f"(silhouette mismatch {estimate.residual:.3f}); sizes and positions are less accurate than with "
        "depth",
    )
    for name, iou in estimate.ious.items():
        if iou < POOR_FIT_IOU:
            log.warn(
                "geometry",
                f"object '{name}': its known size fits its mask poorly (silhouette IoU {iou:.2f}); the "
                "camera pose from it is doubtful: check its mask, its shape and the size given, or add "
                "the camera pose",
            )
    view = invert(estimate.world_from_camera)
    normal = view[:3, 2]
    table = KnownSizeTable(
        normal_cam=normal,
        offset_cam=-float(normal @ view[:3, 3]),
        source="known_size",
        residual=estimate.residual,
        objects=estimate.report(),
    )
    return table, estimate.world_from_camera
