"""The geometry stage: table, world frame, shapes, motion and keyframes of a demo.

Inputs: the checked demo (camera, depth when present, prompts) and the
segmentation's masks. Output: a :class:`Geometry` that the scene description,
the Blender bridge and the verifier use, and the report's ``table``,
``objects`` and ``keyframes``.
"""

from __future__ import annotations

import dataclasses
import time

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from ..demo import Demo
from ..depth import read_depth
from ..errors import DemoFolderError, WarningLog
from ..mesh_file import read_obj
from ..progress import Progress
from ..segmentation.run import Segmentation
from ..tasks import TASKS
from ..tasks.hanging import HANG, HANG_EVENT
from ..tasks.pouring import POUR
from .articulation import HAND_CLEAR, fit_object_parts, out_of_cavities, part_hand_path, with_part_hand
from .camera import (
    back_project,
    inverse_poses,
    invert,
    orientation,
    pose_at,
    pose_matrix,
    project,
    transform,
)
from .camera_motion import camera_path
from .carry import object_hold
from .contents import Contents
from .depth_clean import clean_depth
from .fit import FittedObject, RestView, fit_shape
from .hand import hand_evidence
from .keyframes import GripperTrajectory, detect_events, load_trajectory, seen_rise, synthesise_gripper
from .kinds import plate
from .known_size import require_metric_scale, table_from_known_sizes
from .mask_growth import MIN_RISE, grow_in_depth
from .motion import Motion, settle_hidden_tail, standing_centre, track, unmeasure_still_partly_seen_tail
from .no_depth import (
    UNSEEN_WEIGHT,
    fit_partly_seen,
    place_known_box,
    pseudo_points,
    rest_from_masks,
    track_silhouettes,
)
from .parts import PartGeometry, part_key
from .peg_prior import peg_through_handle
from .pouring import contents_of, pour_keyframes
from .priors import onto_support, out_of_supports, rest_until_lifted, support_height, within_slot
from .shape_kinds import BOX, CABINET, PLATE, RACK
from .silhouette import mask_outside, silhouette_iou, silhouette_mismatch, silhouette_polygon
from .table import (
    GeometryError,
    Table,
    fit_table_frames,
    given_table_readings,
    still_camera_table,
    table_from_world_pose,
)
from .wall_rack_fit import is_on_wall

REST_VIEWS = 6
STATIC_OUTSIDE = 0.25
"""Share of a prompted-static object's mask outside its fitted silhouette that says it has moved ..."""
STATIC_MOVED_FRAMES = 3
"""... on this many frames running."""
BOXY = (BOX.name, CABINET.name)
"""Kinds a known size places without depth (:func:`.no_depth.place_known_box`)."""
FULL_VIEW = 0.85
"""A rest view's mask is at least this share of the fullest one's (a hand in front makes it smaller)."""
GROWN_TOO_FAR = 1.5
"""A rest view whose mask, grown into the depth beside it, is more than this many times the median grown
view's has grown into something touching the object (a hand's fingers on it, its palm behind): it is left
out of the shape's fit."""
COVERS_PROMPT = 0.7
"""A frame whose mask holds this share of the prompt frame's mask sees the object where it stood ..."""
NEWLY_SEEN = 0.1
"""... unless, with depth, what its mask holds beyond the prompt frame's (over this share of the prompt's
mask) ..."""
REVEALED = 0.5
"""... was mostly (this share) not behind something nearer on the prompt frame: the object moved there (a
plate lifted out of its stand, in its own plane, covers most of where it stood and is seen larger)."""
ERODE = np.ones((5, 5), np.uint8)
DILATE = np.ones((9, 9), np.uint8)
"""Grows the objects' masks where the table fit and the camera motion take nothing (mask edges, shadows)."""
DOUBTFUL_CONFIDENCE = 0.3
"""A mask whose segmentation confidence is below this does not place its object (it may be a few specks)."""
ANCHOR_SEEN = 0.5
"""An object nothing carries holds an estimated camera path when it is measured on this share of frames."""
DRIFT_WARNING = 0.01
"""An object nothing carries that wanders this far (m) under an estimated camera path is warned about."""
ON_TABLE = 0.003
"""m: depth points this close to the table top are the table, not an object on it."""
MOSTLY_HIDDEN = 0.5
PARTLY_SEEN = 0.8
"""A moving object's mask under this share of its mask where it rests in full view is partly hidden there:
where it is found again after it moved unseen, its pose is judged by what the mask shows, the silhouette
allowed to reach behind what hides it."""
"""An object whose rest views show less than this share of its usual mask area is warned about."""
STEEP_VIEW = 50.0
"""Degrees above the table from which an object whose seen points form a thin top layer is seen from above ..."""
TOP_LAYER = 0.015
"""... that layer being at most this thick (m), or a third of its height."""
RESTING_GAP = 0.015
"""An object whose lowest seen point stays this far above the table never rests on it."""
LOWEST_POINTS = 20
"""An object's lowest seen point is its 2nd percentile of heights, or its this-many-th lowest where that is
lower: a shelf's mask holds thousands of points, and the few dozen on its bottom board's edge, all that
reaches the table, are less than 2 % of them."""


def _lowest_seen(heights: np.ndarray) -> float:
    """m: the lowest of an object's depth points, past the few lowest (stray readings at its mask's edge)."""
    ordered = np.sort(heights)
    return float(min(np.percentile(ordered, 2), ordered[min(LOWEST_POINTS, len(ordered) - 1)]))


TOP_HEIGHT_SLACK = 0.15
"""An object seen from above whose fitted height is further than this share from its top's height gets
that height."""


@dataclasses.dataclass
class ObjectGeometry:
    """One object's shape and motion.

    Attributes:
        name: From prompts.json.
        role: From prompts.json.
        fitted: The shape and its resting pose on the fit frame.
        motion: Per-frame world poses.
        visible: Per-frame visibility (from the masks).
        parts: Its moving parts (a door, a drawer), each on a joint (:mod:`.parts`); empty for a rigid object.
        contents: What it holds that a pour pours out (:mod:`.contents`), or None.
    """

    name: str
    role: str
    fitted: FittedObject
    motion: Motion
    visible: list[bool]
    parts: list[PartGeometry] = dataclasses.field(default_factory=list)
    contents: Contents | None = None

    def to_report(self, camera_from_world: np.ndarray) -> dict:
        """The report's object entry (contract fields plus the shape details).

        Args:
            camera_from_world: 4x4, or one per frame (``Nx4x4``) for a camera that moves.
        """
        entry = {
            "name": self.name,
            "role": self.role,
            **self.fitted.shape.to_report(),
            "static": self.motion.static,
        }
        count = len(self.motion.positions)
        views = np.broadcast_to(camera_from_world, (count, 4, 4)) if np.ndim(camera_from_world) == 2 else (
            np.asarray(camera_from_world)[np.minimum(np.arange(count), len(camera_from_world) - 1)]
        )  # fmt: skip
        world = Rotation.from_matrix(np.array([self.motion.rotation(i) for i in range(count)]))
        q_world = np.round(world.as_quat()[:, [3, 0, 1, 2]], 5)
        q_cam = np.round((Rotation.from_matrix(views[:, :3, :3]) * world).as_quat()[:, [3, 0, 1, 2]], 5)
        positions, partly = self.motion.positions, self.motion.partly_seen
        p_cam = np.round(np.einsum("nij,nj->ni", views[:, :3, :3], positions) + views[:, :3, 3], 5)
        p_world = np.round(positions, 5)
        frames = [
            {
                "frame": i,
                "position_cam": p_cam[i].tolist(),
                "quaternion_cam": q_cam[i].tolist(),
                "position_world": p_world[i].tolist(),
                "quaternion_world": q_world[i].tolist(),
                "visible": bool(self.visible[i]),
                "measured": bool(self.motion.measured[i]),
                **({"partly_seen": True} if partly is not None and partly[i] else {}),
            }
            for i in range(count)
        ]
        entry["frames"] = frames
        if self.parts:
            entry["parts"] = [part.to_report(self.name) for part in self.parts]
        if self.contents is not None:
            entry["contents"] = self.contents.to_json()
        return entry


@dataclasses.dataclass
class Geometry:
    """The geometry stage's result.

    Attributes:
        table: The support plane (seen from the camera on frame 0).
        world_from_camera: 4x4 (OpenCV camera frame into the z-up world); on frame 0
            for a camera that moves.
        objects: Per object, in prompts.json order.
        keyframes: ``{"frame", "event", "object"}`` in frame order.
        gripper: The gripper trajectory for simulation, or None without a manipulated object.
        camera_frames: ``Nx4x4`` world_from_camera per video frame for a camera that
            moves, None for one that stays put.
        camera_source: Where the camera's motion comes from: ``"camera.json"`` or
            ``"estimated"``; empty for a camera that stays put.
        joints_s: Seconds spent fitting the moving parts' joints (0 without parts).
    """

    table: Table
    world_from_camera: np.ndarray
    objects: list[ObjectGeometry]
    keyframes: list[dict]
    gripper: GripperTrajectory | None
    camera_frames: np.ndarray | None = None
    camera_source: str = ""
    joints_s: float = 0.0

    @property
    def camera_poses(self) -> np.ndarray:
        """world_from_camera per frame (``Nx4x4``), or the one 4x4 pose of a camera that stays put."""
        return self.world_from_camera if self.camera_frames is None else self.camera_frames


CLEAN_REACH = 4
"""Pixels around a pixel that ``clean_depth`` reads to decide it (a 3x3 range test; a hole opened by a 3x3
erosion and dilation, then its border dilated by 3x3: 3 pixels), with one to spare."""


class _DepthReader:
    """A frame's depth (metres, 0 = none), and its cleaned form (``clean_depth``) made once per frame."""

    def __init__(self, demo: Demo) -> None:
        self.demo = demo
        self._cache: dict[int, np.ndarray | None] = {}
        self._cleaned: dict[tuple, np.ndarray | None] = {}  # (frame, noise, box or None)

    def clean(
        self, frame: int, noise_1m: float, box: tuple[int, int, int, int] | None = None
    ) -> np.ndarray | None:
        """``clean_depth`` of the frame's depth (kept for the last few frames asked).

        Args:
            frame: The video frame.
            noise_1m: Depth noise at 1 m (m).
            box: Only this window (x0, y0, x1, y1 pixels, ends excluded) is wanted: it alone is cleaned, with
                a margin of :data:`CLEAN_REACH` pixels (what ``clean_depth`` looks at around a pixel), so it
                holds what the whole frame's cleaning would; the rest of the image is 0.
        """
        key = (frame, noise_1m, box)
        if key not in self._cleaned:
            raw = self(frame)
            if raw is None or box is None:
                cleaned = None if raw is None else clean_depth(raw, noise_1m)
            else:
                x0, y0, x1, y1 = box
                h, w = raw.shape
                a, b = max(0, y0 - CLEAN_REACH), max(0, x0 - CLEAN_REACH)
                window = clean_depth(
                    raw[a : min(h, y1 + CLEAN_REACH), b : min(w, x1 + CLEAN_REACH)], noise_1m
                )
                cleaned = np.zeros(raw.shape, np.float32)
                cleaned[y0:y1, x0:x1] = window[y0 - a : y1 - a, x0 - b : x1 - b]
            self._cleaned = {key: cleaned} if len(self._cleaned) > 8 else {**self._cleaned, key: cleaned}
        return self._cleaned[key]

    def __call__(self, frame: int) -> np.ndarray | None:
        if frame not in self._cache:
            try:
                image = read_depth(self.demo, frame)
            except DemoFolderError as e:
                raise GeometryError(str(e)) from e
            self._cache = {frame: image} if len(self._cache) > 8 else {**self._cache, frame: image}
        return self._cache[frame]


def _sampled_depth(depth: _DepthReader, sample: np.ndarray) -> list[np.ndarray]:
    """The depth images of the sampled frames (the table is measured on them)."""
    depth_frames = [depth(int(f)) for f in sample]
    if any(d is None for d in depth_frames):
        raise GeometryError(
            f"depth/ lacks images for some of frames {sample.tolist()}; one image per video frame is needed"
        )
    return depth_frames


def _leaves_its_place(fitted: FittedObject, masks, visible, views_from_world, camera) -> int | None:
    """The first frame of :data:`STATIC_MOVED_FRAMES` running on which more than :data:`STATIC_OUTSIDE` of
    the object's mask lies outside its fitted silhouette (it was knocked or carried off), or None: a mask
    that only shrinks (something passing in front) stays inside it."""
    world_from_object = pose_matrix(fitted.position, orientation(fitted.yaw))
    running = 0
    for frame, mask in enumerate(masks):
        if not visible[frame]:
            running = 0
            continue
        polygon = silhouette_polygon(
            fitted.shape, pose_at(views_from_world, frame) @ world_from_object, camera
        )
        running = running + 1 if mask_outside(polygon, mask) > STATIC_OUTSIDE else 0
        if running == STATIC_MOVED_FRAMES:
            return frame - STATIC_MOVED_FRAMES + 1
    return None


def _rest_frames(
    summary: list[dict], prompt_frame: int, seen_at=None, masks=None, depth=None, stays: bool = False
) -> list[int]:
    """Frames near the prompt where the object is fully seen and has not moved.

    Args:
        summary: The object's per-frame segmentation summary.
        prompt_frame: Its prompt's frame.
        seen_at: ``frame -> (u, v)``: where the prompt frame's mask centre would be seen on
            that frame if the object stood still (a camera that moves), or None for a
            camera that stays put.
        masks: The object's per-frame masks. With a camera that stays put, a frame whose
            mask covers most of the prompt frame's mask also sees the object where it was,
            however far its centre moved: the prompt frame showed only part of it (a hand
            in front, seen from above) and this one shows more. Only the frames around the
            prompt until it is seen elsewhere count, so an object carried back over its
            place, or put back there, later does not.
        depth: ``frame -> depth (m) or None``, or None: where given, a frame whose mask holds more than the
            prompt frame's counts only where that more was hidden by something nearer on the prompt frame.
        stays: The object is prompted static: with a camera that stays put, a frame that hides more of it
            than the prompt frame and shows nothing of it that was not hidden there (its mask within the
            prompt frame's, or with depth all it shows beyond it behind something nearer there) does not
            end the stretch round the prompt (a hand passing in front of a hook board, never seen whole
            until it has gone).
    """
    anchor = summary[prompt_frame]
    if not anchor["visible"]:
        return [prompt_frame]

    def expected(frame):
        return anchor["centroid"] if seen_at is None else seen_at(frame)

    def in_place(entry) -> bool:
        return entry["visible"] and np.hypot(*np.subtract(entry["centroid"], expected(entry["frame"]))) < 2.0

    still = [entry for entry in summary if in_place(entry)]
    if masks is not None and seen_at is None:
        prompt_mask = masks[prompt_frame]
        anchor_area = max(int(prompt_mask.sum()), 1)

        def revealed(frame) -> bool:
            """What the frame's mask holds beyond the prompt's was behind something nearer there."""
            new = masks[frame] & ~prompt_mask
            before, now = (None, None) if depth is None else (depth(prompt_frame), depth(frame))
            if new.sum() <= NEWLY_SEEN * anchor_area or before is None or now is None:
                return True
            both = (before[new] > 0) & (now[new] > 0)
            return not both.any() or float(np.mean(before[new][both] < now[new][both] - 0.01)) >= REVEALED

        def covers(frame) -> bool:
            entry = summary[frame]
            held = entry["visible"] and (masks[frame] & prompt_mask).sum() >= COVERS_PROMPT * anchor_area
            return held and revealed(frame)

        def more_hidden(frame) -> bool:
            if not stays or not summary[frame]["visible"]:
                return False
            # Without depth, only where its mask lies within the prompt frame's; with it, wherever all it
            # shows beyond that was behind something nearer on the prompt frame.
            inside = (masks[frame] & ~prompt_mask).sum() <= NEWLY_SEEN * anchor_area
            return (inside or depth is not None) and revealed(frame)

        # The stretch around the prompt until it is seen elsewhere (frames it is hidden in do not end it): a
        # cup put back where it stood after its pour, emptied, is not the cup the prompt showed.
        run = [prompt_frame]
        for step in (-1, 1):
            frame = prompt_frame + step
            while 0 <= frame < len(summary):
                if in_place(summary[frame]) or covers(frame) or more_hidden(frame):
                    run.append(frame)
                elif summary[frame]["visible"]:
                    break
                frame += step
        still = [summary[f] for f in sorted(run)]
    # Fully seen: as large as it gets while it stays there (a hand in front makes it smaller).
    largest = max(entry["area"] for entry in still)
    candidates = [entry["frame"] for entry in still if entry["area"] >= FULL_VIEW * largest]
    # Nearest the prompt first; an object that stays where it is, the fullest first (then the nearest): a
    # hand in front of a hook board on the prompt's frame hid a tenth of it there.
    areas = {entry["frame"]: entry["area"] for entry in still}
    candidates.sort(key=lambda f: (-areas[f] if stays else 0, abs(f - prompt_frame)))
    chosen = sorted(candidates[: REST_VIEWS * 4 : 4]) or [prompt_frame]
    return chosen


def _still_point_projector(
    camera, poses: np.ndarray, frame: int, entry: dict, mask: np.ndarray, depth: np.ndarray | None
):
    """``frame -> (u, v)``: where the mask centre on ``frame`` is seen from each frame's camera if it stays put.

    The centre is lifted to 3D by the depth under it, or else where its ray meets the table;
    None when neither places it (then only the prompt's frame counts as a rest view).
    """
    if not entry["visible"]:
        return None
    u, v = entry["centroid"]
    ray = np.array([(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, 1.0])
    z = 0.0
    if depth is not None:
        under = depth[mask & (depth > 0)]
        z = float(np.median(under)) if len(under) else 0.0
    pose = poses[frame]
    if z > 0:
        point = transform(pose, ray[None] * z)[0]
    else:
        direction = pose[:3, :3] @ ray
        if direction[2] >= -1e-6:
            return None
        point = pose[:3, 3] + direction * (-pose[2, 3] / direction[2])
    views = inverse_poses(poses)

    def seen_at(other: int) -> tuple[float, float]:
        u, v = project(camera, transform(views[other], point[None]))[0]
        return float(u), float(v)

    return seen_at


def _object_points(mask: np.ndarray, cleaned: np.ndarray | None, camera) -> np.ndarray | None:
    """The depth points under an object's (eroded) mask, camera frame; invalid and mixed pixels dropped.

    Args:
        mask: ``HxW`` bool.
        cleaned: The frame's depth after ``clean_depth`` (``HxW`` metres, 0 = none), or None.
        camera: Intrinsics.
    """
    if cleaned is None or not mask.any():
        return None
    eroded = cv2.erode(mask.astype(np.uint8), ERODE) > 0
    points = back_project(camera, cleaned, eroded)
    if len(points) < 10:
        return points
    z = points[:, 2]
    median = np.median(z)
    spread = max(0.02, 4 * np.median(np.abs(z - median)))
    return points[np.abs(z - median) < spread * 3]


def run_geometry(
    demo: Demo,
    segmentation: Segmentation,
    progress: Progress | None = None,
    log: WarningLog | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Geometry:
    """Runs the geometry stage.

    Args:
        demo: The checked demo.
        segmentation: Masks of every object on every frame (video size).
        progress: Progress inside ``span``; carries cancellation.
        log: Receives warnings.
        span: The part of the overall progress this stage covers.

    Raises:
        GeometryError: Neither depth, a camera pose nor a known size, depth of the wrong
            size, an object with no usable view, or one that never rests on the table.
    """
    progress = progress or Progress()
    log = log if log is not None else WarningLog()
    camera, frames = demo.camera, demo.video.frames
    require_metric_scale(demo)
    if demo.depth_dir is None:
        log.warn(
            "geometry",
            "no depth: shapes and motion come from the silhouettes and the camera pose (less accurate)",
        )
    depth = _DepthReader(demo)
    progress.step("fitting the table", span[0])
    sample = np.linspace(0, frames - 1, min(5, frames)).round().astype(int)
    union = [
        np.logical_or.reduce([t.masks[f] for t in segmentation.objects + segmentation.parts]) for f in sample
    ]
    union = [cv2.dilate(m.astype(np.uint8), DILATE) > 0 for m in union]
    camera_frames, camera_source, noise_1m = None, "", 0.0
    if camera.world_from_camera_frames is not None:
        camera_frames = np.asarray(camera.world_from_camera_frames, float)
        camera_source = "camera.json"
    if camera.world_from_camera is not None:
        world_from_camera = np.asarray(camera.world_from_camera, float)
        table = table_from_world_pose(world_from_camera)
        if demo.depth_dir is not None:  # the table is given, its depth's noise is still the camera's
            depth_frames = _sampled_depth(depth, sample)
            poses = [
                pose_at(world_from_camera if camera_frames is None else camera_frames, int(f)) for f in sample
            ]
            noise_1m, extent = given_table_readings(camera, depth_frames, union, poses)
            if extent is not None:
                table = dataclasses.replace(table, extent_world=extent)
    elif demo.depth_dir is None:  # RGB only: the pose from the objects of known size (known_size.py)
        table, world_from_camera = table_from_known_sizes(demo, segmentation, log)
    else:
        depth_frames = _sampled_depth(depth, sample)
        fit = fit_table_frames(camera, depth_frames, union, frames=sample.tolist())
        table, world_from_camera = fit.table, fit.world_from_camera
        noise = [p.noise_1m for p in fit.planes if p.found]
        noise_1m = float(np.median(noise)) if noise else 0.0
        masks = [t.masks for t in segmentation.objects]
        camera_frames = camera_path(
            camera, frames, demo.video.fps, fit.reference_frame, world_from_camera,
            lambda f: cv2.cvtColor(demo.video.read_frame(f), cv2.COLOR_BGR2RGB), depth,
            lambda f: cv2.dilate(np.logical_or.reduce([m[f] for m in masks]).astype(np.uint8), DILATE) > 0,
            fit.planes, log,
        )  # fmt: skip
        if camera_frames is None:  # the camera stays put: every sampled frame sees the same table
            fit = still_camera_table(fit)
            table, world_from_camera = fit.table, fit.world_from_camera
        else:
            camera_source = "estimated"
            world_from_camera = camera_frames[0]
            table = dataclasses.replace(table_from_world_pose(world_from_camera), extent_world=table.extent_world,
                                        inlier_rms=table.inlier_rms, source=table.source)  # fmt: skip
    poses = world_from_camera if camera_frames is None else camera_frames
    views_from_world = inverse_poses(poses)
    trajectory = None
    if demo.trajectory is not None:
        trajectory = load_trajectory(demo.trajectory, frames, poses)

    summaries = [[t.frame_summary(f) for f in range(frames)] for t in segmentation.objects]
    # Every object's depth points per frame, in one pass over the frames (a frame's depth is cleaned
    # once for all objects); None where it is not seen. Evidence the segmentation doubts measures
    # nothing: the priors (resting, carried, settled into a container) fill in there.
    frame_points = [[None] * frames for _ in segmentation.objects]
    if demo.depth_dir is not None:
        progress.step("measuring the objects' depth points", span[0] + 0.05 * (span[1] - span[0]))
        for f in range(frames):
            for o, track_ in enumerate(segmentation.objects):
                entry = summaries[o][f]
                if entry["visible"] and entry["confidence"] >= DOUBTFUL_CONFIDENCE:
                    frame_points[o][f] = _object_points(track_.masks[f], depth.clean(f, noise_1m), camera)
    objects, standing_in = [], set()  # standing_in: plates on their edge prompted standing in a stand or slot
    for index, (prompt, track_) in enumerate(zip(demo.objects, segmentation.objects, strict=True)):
        fraction = span[0] + (span[1] - span[0]) * (0.1 + 0.8 * index / len(demo.objects))
        progress.step(f"fitting and tracking '{prompt.name}'", fraction)
        summary = summaries[index]
        # Per rest frame: the mask as segmented (whether the object rests on the table is judged on
        # that) and grown into the depth-connected part it missed (the shape is fitted to that).
        views, seen, edge_lows = [], [], {}
        seen_at = None
        if camera_frames is not None:
            seen_at = _still_point_projector(
                camera, poses, prompt.frame, summary[prompt.frame], track_.masks[prompt.frame],
                depth(prompt.frame) if demo.depth_dir else None,
            )  # fmt: skip
        rest_depth = depth if demo.depth_dir is not None else None
        stays = prompt.role == "static" and not prompt.parts
        for frame in _rest_frames(summary, prompt.frame, seen_at, track_.masks, rest_depth, stays):
            mask, view, pose = track_.masks[frame], pose_at(views_from_world, frame), pose_at(poses, frame)
            if demo.depth_dir is None:
                views.append(RestView(mask, pseudo_points(mask, camera, view), view, False, frame))
                seen.append(views[-1])
                continue
            points = _object_points(mask, depth.clean(frame, noise_1m), camera)
            if points is None or len(points) < 10:
                continue
            seen.append(RestView(mask, transform(pose, points), view))
            # How low the object is seen, its mask's edge included (the points are eroded away
            # from it): from above, that edge is all of its side that shows.
            heights = transform(pose, back_project(camera, depth.clean(frame, noise_1m), mask))[:, 2]
            raised = heights[heights > MIN_RISE]
            if len(raised) >= 10:
                edge_lows[frame] = _lowest_seen(raised)
            if prompt.shape == RACK.name and is_on_wall(seen[-1].points_world):
                # A hook board rests on no table to grow along: grown, its mask took in the wall.
                views.append(RestView(mask, seen[-1].points_world, view))
                continue
            others = [t.masks[frame] for t in segmentation.objects + segmentation.parts if t is not track_]
            blocked = (
                cv2.dilate(np.logical_or.reduce(others).astype(np.uint8), DILATE) > 0 if others else None
            )
            grown = grow_in_depth(mask, depth(frame), camera, pose, blocked, noise_1m)
            if grown.sum() > mask.sum():
                points = _object_points(grown, depth.clean(frame, noise_1m), camera)
            views.append(RestView(grown, transform(pose, points), view))
        pairs = [(v, s) for v, s in zip(views, seen, strict=True) if len(v.points_world)]
        if len(pairs) >= 3:
            usual = float(np.median([v.mask.sum() for v, _ in pairs]))
            kept = [(v, s) for v, s in pairs if v.mask.sum() <= GROWN_TOO_FAR * usual]
            if len(kept) < len(pairs):
                log.warn("geometry", f"object '{prompt.name}': its mask grew into something touching it on "
                         f"{len(pairs) - len(kept)} of {len(pairs)} resting frames (a hand?); those are left out "
                         "of its shape's fit")  # fmt: skip
            pairs = kept
        if pairs:  # grown, a frame's mask may show that a hand hid part of the object there after all
            fullest = max(int(v.mask.sum()) for v, _ in pairs)
            pairs = [(v, s) for v, s in pairs if v.mask.sum() >= FULL_VIEW * fullest]
        views, seen = [v for v, _ in pairs], [s for _, s in pairs]
        if views and not any((v.points_world[:, 2] > ON_TABLE).any() for v in seen):
            raise GeometryError(
                f"object '{prompt.name}': the depth under its mask on frame {prompt.frame} does not rise above the "
                "table; it cannot be measured (check the mask, and the depth or the camera pose there)"
            )
        if not views:
            what = (
                "no depth readings under its mask"
                if demo.depth_dir
                else "its mask is too small or does not meet the table"
            )
            raise GeometryError(
                f"object '{prompt.name}': {what} on frame {prompt.frame}; it cannot be measured "
                "(check the mask and the depth there)"
            )
        lowest = min(_lowest_seen(v.points_world[:, 2]) for v in seen)
        lowest = min([lowest, *edge_lows.values()])
        from_above = lowest > RESTING_GAP
        # A plate standing on its edge in a stand or a slot: its rim's circle places its hidden bottom.
        in_a_stand = from_above and prompt.shape == PLATE.name
        # A rack in the air is a hook board on a wall (geometry/wall_rack_fit.py): it rests on nothing.
        on_a_wall = from_above and prompt.shape == RACK.name
        if from_above and not (in_a_stand or on_a_wall):
            if not _seen_from_above(seen) and not prompt.parts:  # a cabinet's plinth may hide its foot
                raise GeometryError(
                    f"object '{prompt.name}' does not rest on the table on frame {prompt.frame} (its lowest "
                    f"point is {lowest * 100:.1f} cm above it); put its prompt on a frame where it stands on "
                    "the table"
                )
            log.warn(
                "geometry",
                f"object '{prompt.name}' is seen from above: only its top shows ({lowest * 100:.1f} cm above the "
                "table), and it is taken to stand on the table with that height",
            )
        areas = [entry["area"] for entry in summary if entry["visible"]]
        seen_px = max(int(v.mask.sum()) for v in seen)
        if areas and seen_px < MOSTLY_HIDDEN * np.percentile(areas, 90):
            log.warn(
                "geometry",
                f"object '{prompt.name}' is mostly hidden where it rests (its mask there is {seen_px} px, elsewhere up "
                f"to {int(np.percentile(areas, 90))} px): its shape is fitted to the part that shows and may be "
                "wrong; put its prompt on a frame where it rests in full view",
            )
        mesh = read_obj(demo.path, prompt.mesh, prompt.name) if prompt.mesh else None
        fitted, warning = fit_shape(prompt.shape, views, camera, mesh=mesh)
        if prompt.parts and prompt.size is not None and demo.depth_dir is None and fitted.shape.kind in BOXY:
            # Silhouettes alone: the body's known size holds, and its parts stand in front of it.
            keys = {part_key(prompt.name, p.name) for p in prompt.parts}
            own = [t for t in segmentation.parts if t.name in keys]
            hidden = [np.logical_or.reduce([t.masks[v.frame] for t in own]) if own else None for v in views]
            fitted, warning = place_known_box(fitted, prompt.size, views, hidden, camera), None
        if warning:
            log.warn("geometry", f"object '{prompt.name}': {warning}")
        if in_a_stand and not plate.on_edge(fitted.shape):
            raise GeometryError(
                f"object '{prompt.name}' does not rest on the table on frame {prompt.frame} (its lowest point is "
                f"{lowest * 100:.1f} cm above it) and is not a plate standing on its edge; put its prompt on a frame "
                "where it stands on the table"
            )
        if in_a_stand:
            standing_in.add(prompt.name)
        if from_above and not (in_a_stand or on_a_wall):
            fitted = _top_height(fitted, seen, prompt.name, log)
        visible = [entry["visible"] for entry in summary]
        leaves = None
        if prompt.role == "static" and not prompt.parts:
            leaves = _leaves_its_place(fitted, track_.masks, visible, views_from_world, camera)
            if leaves is not None:
                log.warn("geometry", f"object '{prompt.name}' is prompted static but its mask leaves where it "
                                     f"stood from frame {leaves}: it is tracked as a moving object")  # fmt: skip
        if prompt.parts or (prompt.role == "static" and leaves is None):
            # An articulated body stays where it stands (geometry/parts.py), its parts move; a static one
            # stands where its fit from all its views put it (a rack's pose on one frame, from a view its
            # pegs make ambiguous, wandered by centimetres and turned by up to 180 degrees).
            count = len(summary)
            motion = Motion(np.repeat(fitted.position[None], count, axis=0), np.full(count, fitted.yaw),
                            np.array(visible, bool), static=True)  # fmt: skip
        elif demo.depth_dir is None:
            motion = track_silhouettes(
                fitted.shape,
                fitted.position,
                fitted.yaw,
                prompt.frame,
                track_.masks,
                visible,
                camera,
                views_from_world,
                trajectory,
            )
        else:
            points = frame_points[index]
            masks = track_.masks

            def agreement(frame, fit, hidden=False, shape=fitted.shape, masks=masks, full=seen_px):
                pose = pose_at(views_from_world, frame) @ pose_matrix(fit[0], orientation(fit[1], fit[2]))
                polygon = silhouette_polygon(shape, pose, camera)
                if not hidden or np.count_nonzero(masks[frame]) >= PARTLY_SEEN * full:
                    return silhouette_iou(polygon, masks[frame])
                # Found again where it is partly hidden (a hand closing on it, a cup's rim in front): what
                # the mask shows must be explained, but the silhouette may reach where the mask does not
                # (the object is there, behind). A grasp hides the object; it is no doubt about where it is.
                return 1.0 - silhouette_mismatch(polygon, masks[frame], UNSEEN_WEIGHT)

            def partly_seen(frame, predicted, yaw, shape=fitted.shape, masks=masks, summary=summary):
                # Too few depth points (a hand hides all but a sliver): the mask still places it.
                entry = summary[frame]
                if not entry["visible"] or entry["confidence"] < DOUBTFUL_CONFIDENCE:
                    return None
                view = pose_at(views_from_world, frame)
                return fit_partly_seen(shape, masks[frame], camera, view, predicted, yaw)

            motion = track(
                fitted.shape, fitted.position, fitted.yaw, prompt.frame, points, poses,
                silhouette=agreement, gripper=trajectory,
                partly_seen=partly_seen if trajectory is None else None,  # a recorded hand is the better evidence
                partial=np.array([entry["area"] < PARTLY_SEEN * seen_px for entry in summary]),
            )  # fmt: skip
        objects.append(
            ObjectGeometry(
                prompt.name,
                prompt.role,
                fitted,
                motion,
                [s["visible"] for s in summary],
                contents=contents_of(prompt, demo.task, fitted.shape, log),
            )  # fmt: skip
        )

    index_of = {prompt.name: index for index, prompt in enumerate(demo.objects)}
    # The carried object last: it may come to rest in or on another, whose own hidden tail is settled first
    # (a cup hidden behind the hand at the end stood 2 cm up until then, and the can let go into it with it).
    for obj in sorted(objects, key=lambda o: o.name == demo.task.object):
        motion = obj.motion
        unmeasure_still_partly_seen_tail(motion, obj.fitted.shape.size[2])
        if not motion.measured.any():
            continue
        grasp, release, _ = object_hold(trajectory, obj.fitted.shape.size, motion.positions, motion.measured)
        carried_until = None if grasp is None else release
        last = max(int(np.nonzero(motion.measured)[0][-1]), (carried_until or 0) - 1)
        at = motion.positions[min(last, len(motion.positions) - 1)]
        others = [o for o in objects if o is not obj]
        support = support_height(at[:2], others, below=at[2])
        fell = settle_hidden_tail(
            motion, support, obj.fitted.shape.size[2] / 2, demo.video.fps, carried_until
        )
        if fell is not None and demo.depth_dir is None:
            masks = segmentation.objects[index_of[obj.name]].masks
            _rest_where_seen(obj, masks, camera, views_from_world, fell, others)

    if camera_source == "estimated":
        corrected = _anchor_to_standing(objects, demo.task.object, camera_frames, log)
        if (
            trajectory is not None and demo.trajectory.frame_of == "camera"
        ):  # seen from the drifting camera too
            trajectory.positions[:, :2] += corrected[:, :2, 3] - camera_frames[:, :2, 3]
        camera_frames, world_from_camera = corrected, corrected[0]
        _say_drift(objects, demo.task.object, log)
    for obj in objects:  # in the world the camera's path was anchored to
        out_of_supports(obj, [o for o in objects if o is not obj])
        if obj.name in standing_in:
            _in_its_slot(obj, objects, log)
    part_keyframes, joints_started = [], time.perf_counter()
    if segmentation.parts:
        progress.step("fitting the moving parts' joints", span[0] + 0.85 * (span[1] - span[0]))
        depth_of = (
            (lambda f, box=None: depth.clean(f, noise_1m, box))
            if demo.depth_dir is not None
            else (lambda f, box=None: None)
        )
        part_keyframes = fit_object_parts(
            demo, segmentation, objects, camera, poses, depth_of, trajectory, log
        )
        joints_s = time.perf_counter() - joints_started
    progress.step("finding the interaction keyframes", span[0] + 0.9 * (span[1] - span[0]))
    keyframes, gripper = [], trajectory
    moved = (
        None
        if TASKS[demo.task.type].needs_part
        else next((o for o in objects if o.name == demo.task.object), None)
    )
    if moved is not None:
        hand = None
        if trajectory is None and segmentation.hands:  # the hand in the video, where nothing is recorded
            track_ = segmentation.objects[objects.index(moved)]
            hand = _hand_at(
                moved,
                track_.masks,
                segmentation.hands,
                camera,
                inverse_poses(world_from_camera if camera_frames is None else camera_frames),
            )
        areas = [entry["area"] for entry in summaries[index_of[moved.name]]]
        keyframes = detect_events(
            moved.name, moved.motion, demo.video.fps, trajectory, log, moved.fitted.shape.size[2],
            moved.fitted.shape.size, hand, areas,
        )  # fmt: skip
        if demo.task.type == HANG.name:  # where it comes to rest after the release, it hangs
            keyframes += [{**k, "event": HANG_EVENT} for k in keyframes if k["event"] == "contact"]
            target = next((o for o in objects if o.name == demo.task.target), None)
            if target is not None:
                peg_through_handle(moved, target, keyframes, trajectory, log)
        if demo.task.type == POUR.name and moved.contents is not None:
            keyframes += pour_keyframes(moved.name, moved.fitted.shape, moved.motion, moved.contents)
        if gripper is None:
            rest_until_lifted(moved.motion, keyframes, seen_rise(moved.motion, moved.fitted.shape.size[2]))
            if moved.name in standing_in:  # its rest is now one pose until the lift: in its slot again
                _in_its_slot(moved, objects, log)
            gripper = synthesise_gripper(
                moved.fitted.shape, moved.motion, keyframes, pour=demo.task.type == POUR.name
            )
            release = next((k["frame"] for k in keyframes if k["event"] == "release"), None)
            others = [o.fitted for o in objects if o is not moved]
            gripper = out_of_cavities(gripper, release, others, demo.video.fps)
    keyframes = sorted(keyframes + part_keyframes, key=lambda k: k["frame"])
    if trajectory is None and part_keyframes:  # nothing recorded the hand: it goes to each part the video moves  # fmt: skip
        paths = [part_hand_path(part, part_keyframes, part_key(obj.name, part.name), demo.video.fps, frames)
                 for obj in objects for part in obj.parts]  # fmt: skip
        paths = [path for path in paths if path is not None]
        if paths:
            tops = [o.fitted.position[2] + o.fitted.shape.size[2] / 2 for o in objects]
            gripper = with_part_hand(gripper, paths, demo.video.fps, frames, max(tops) + HAND_CLEAR)
    return Geometry(table, world_from_camera, objects, keyframes, gripper, camera_frames, camera_source,
                    joints_s if segmentation.parts else 0.0)  # fmt: skip


def _rest_where_seen(
    obj: ObjectGeometry,
    masks: list[np.ndarray],
    camera,
    views_from_world,
    fell: int,
    others: list[ObjectGeometry],
) -> None:
    """RGB only: an object that fell out of measurement (:func:`settle_hidden_tail`) and rests partly seen
    (a can let go into a cup, its lower part behind the rim) stands where its masks at rest put it, its
    height its support's (``no_depth.rest_from_masks``); its fall glides there. Kept where it was where
    fewer than three frames place it, or where the place found lies over another support."""
    motion = obj.motion
    half = obj.fitted.shape.size[2] / 2
    rest_z = float(motion.positions[-1, 2])
    resting = [f for f in range(fell + 1, len(masks)) if abs(motion.positions[f, 2] - rest_z) < 1e-6]
    if not resting:
        return
    found = rest_from_masks(obj.fitted.shape, masks, camera, views_from_world, resting, motion.positions[-1],
                            float(motion.yaws[-1]))  # fmt: skip
    if found is None or abs(support_height(found[:2], others, below=rest_z) + half - rest_z) > 1e-6:
        return
    shift = found[:2] - motion.positions[-1, :2]
    start = resting[0]
    for f in range(fell + 1, len(masks)):
        share = 1.0 if f >= start else (f - fell) / (start - fell)
        motion.positions[f, :2] += share * shift


def _hand_at(moved: ObjectGeometry, masks: list[np.ndarray], hands: list, camera, views_from_world):
    """What the hand that touches the carried object on the most frames says about it (``hand.hand_evidence``)."""
    size, positions = moved.fitted.shape.size, moved.motion.positions
    seen = [hand_evidence(h.name, h.masks, masks, positions, size, camera, views_from_world) for h in hands]
    return max(seen, key=lambda e: int(e.touch.sum()))


def _in_its_slot(obj: ObjectGeometry, objects: list[ObjectGeometry], log: WarningLog) -> None:
    """A plate prompted standing in a stand or a slot: inside the slot it stands in (:func:`.priors.within_slot`,
    said where it was thinned) and on its floor (:func:`.priors.onto_support`), until it moves."""
    others = [o for o in objects if o is not obj]
    thicker = within_slot(obj, others)
    if thicker is not None:
        log.warn("geometry", f"object '{obj.name}': fitted {thicker * 1000:.0f} mm thick, thicker than the slot it "
                 f"stands in at its start; made {obj.fitted.shape.size[1] * 1000:.0f} mm: check its thickness")  # fmt: skip
    onto_support(obj, others)


def _top_height(fitted: FittedObject, views: list[RestView], name: str, log: WarningLog) -> FittedObject:
    """An object seen only from above is as tall as its top is high: its fitted height is set to that.

    The silhouette of a top seen from above says nothing of the height, and a fit can trade
    the height against the footprint; the depth of the top (the upper tenth of its points, a
    rim rather than a dark inside) is the one measure of it.
    """
    top = float(np.median([np.percentile(v.points_world[:, 2], 90) for v in views]))
    height = fitted.shape.size[2]
    if abs(height - top) <= TOP_HEIGHT_SLACK * top:
        return fitted
    factor = top / height
    shape = dataclasses.replace(
        fitted.shape, size=(*fitted.shape.size[:2], top), params=dict(fitted.shape.params)
    )
    if "bottom_thickness" in shape.params:
        shape.params["bottom_thickness"] *= factor
    if shape.vertices is not None:
        shape.vertices = shape.vertices * np.array([1.0, 1.0, factor])
    log.warn(
        "geometry",
        f"object '{name}': its height is taken from its top's depth ({top * 100:.1f} cm; the fit gave "
        f"{height * 100:.1f} cm, which a view from above cannot confirm)",
    )
    return FittedObject(shape, np.array([*fitted.position[:2], top / 2]), fitted.yaw)


def _seen_from_above(views: list[RestView]) -> bool:
    """Whether an object is seen so steeply from above that only its top shows.

    Its seen points then lie in a thin layer (a rim, a lid) under a camera that looks down
    at it more steeply than :data:`STEEP_VIEW`: its sides, and so how it meets the table,
    are out of sight, and standing on the table is the only reading its mask and depth allow.
    """
    for view in views:
        points = view.points_world
        low, top = np.percentile(points[:, 2], [2, 98])
        eye = invert(view.camera_from_world)[:3, 3]
        ray = eye - np.median(points, axis=0)
        elevation = np.degrees(np.arcsin(ray[2] / np.linalg.norm(ray)))
        if top - low > max(TOP_LAYER, 0.3 * top) or elevation < STEEP_VIEW:
            return False
    return True


def _anchor_to_standing(
    objects: list[ObjectGeometry], moved: str, camera_frames: np.ndarray, log: WarningLog
) -> np.ndarray:
    """Takes an estimated camera path's drift along the table out with the objects nothing carries.

    An estimated path drifts in what the table cannot pin: the turn about the vertical and
    the shift along the table. The objects the task does not move stand still, so on each
    frame where they are measured, the world is shifted along the table to put them back
    where they were fitted, camera included (every object and the camera together: what
    each frame's camera sees is unchanged). The turn is left: one object cannot show it,
    a round one least of all.

    Returns:
        The corrected path (``Nx4x4``); the objects' motions are corrected in place.
    """
    anchors = [o for o in objects if o.name != moved and o.motion.measured.mean() >= ANCHOR_SEEN]
    if not anchors:
        return camera_frames
    frames = len(camera_frames)
    shift, count = np.zeros((frames, 2)), np.zeros(frames)
    for anchor in anchors:
        seen = anchor.motion.measured
        shift[seen] += anchor.fitted.position[:2] - anchor.motion.positions[seen, :2]
        count[seen] += 1
    known = count > 0
    shift[known] /= count[known, None]
    every = np.arange(frames)
    shift = np.stack([np.interp(every, every[known], shift[known, axis]) for axis in range(2)], axis=1)
    for obj in objects:
        obj.motion.positions[:, :2] += shift
        if (
            obj in anchors
            and (centre := standing_centre(obj.motion.positions[obj.motion.measured])) is not None
        ):
            obj.motion.positions[:] = centre
            obj.motion.yaws[:] = float(np.median(obj.motion.yaws))
            obj.motion.static = True
    corrected = camera_frames.copy()
    corrected[:, :2, 3] += shift
    names = ", ".join(f"'{o.name}'" for o in anchors)
    log.warn(
        "geometry",
        f"the estimated camera path is held to {names} (nothing carries {'it' if len(anchors) == 1 else 'them'}): "
        f"up to {100 * float(np.abs(shift).max()):.1f} cm of drift along the table taken out; its turn about the "
        "vertical may still drift",
    )
    return corrected


def _say_drift(objects: list[ObjectGeometry], moved: str, log: WarningLog) -> None:
    """Warns where an object nothing carries wanders in the world under an estimated camera path.

    An object the task does not move stands still in the video; where it wanders in the
    world frame, the estimated camera path has drifted (the objects are still right in
    each frame's camera, but not against each other over time).
    """
    for obj in objects:
        if obj.name == moved or obj.motion.static:
            continue
        positions = obj.motion.positions[obj.motion.measured]
        if not len(positions):
            continue
        wander = float(np.percentile(np.linalg.norm(positions - np.median(positions, axis=0), axis=1), 95))
        if wander > DRIFT_WARNING:
            log.warn(
                "geometry",
                f"object '{obj.name}' wanders {100 * wander:.1f} cm in the world though nothing carries it: the "
                "estimated camera path drifts; give the camera's pose per frame in camera.json "
                "('world_from_camera_frames') for a scene to simulate",
            )


def object_pose(obj: ObjectGeometry, frame: int) -> np.ndarray:
    """4x4 world pose of an object on a frame."""
    return pose_matrix(obj.motion.positions[frame], obj.motion.rotation(frame))
