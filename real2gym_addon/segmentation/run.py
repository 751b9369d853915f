"""Segmenting a demo: every object through the whole video, masks on disk.

:func:`segment_demo` loads the frames (and depth) at a working size of at most
:data:`MAX_WORKING_SIDE` pixels, prompts the backend with each object's box and
points (and its corrections on later frames), propagates forward from the
earliest prompt and backward from the latest main prompt, maps the masks back to
the video's size and returns a
:class:`Segmentation`. :meth:`Segmentation.write` stores
``masks/<object>/000000.png`` (0/255) and :meth:`Segmentation.summary` the
report's per-frame figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

from ..demo import Demo
from ..depth import read_depth
from ..errors import DemoFolderError, OutputError, Real2GymError, WarningLog
from ..files import write_error
from ..names import inside
from ..progress import Progress
from .base import ObjectMask, Prompt, VideoSegmenter
from .quality import Doubt, assess

MAX_WORKING_SIDE = 1280
VISIBLE_MIN_AREA = 16
"""Masks smaller than this many pixels (at the video's size) count as not visible."""


@dataclasses.dataclass
class ObjectTrack:
    """One object's masks through the video.

    Attributes:
        name: The object's name from prompts.json.
        masks: Per frame ``HxW`` bool at the video's size (all False when unseen).
        confidence: Per frame confidence in [0, 1].
        reason: Per frame why a person should look at the mask (``quality.REASONS``),
            or None; empty when the masks were not checked.
    """

    name: str
    masks: list[np.ndarray]
    confidence: list[float]
    reason: list[str | None] = dataclasses.field(default_factory=list)

    def frame_summary(self, frame: int) -> dict:
        """Area (px), bbox ``[x0, y0, x1, y1]`` (px, exclusive ends), centroid ``[x, y]``, confidence,
        visible, and ``review`` (with its ``reason`` when true)."""
        mask = self.masks[frame]
        area = int(np.count_nonzero(mask))
        entry = {"frame": frame, "area": area, "confidence": round(float(self.confidence[frame]), 4)}
        reason = self.reason[frame] if self.reason else None
        entry["review"] = reason is not None
        if reason is not None:
            entry["reason"] = reason
        if area:
            # From the column and row counts: the same figures as every pixel's index gives, far quicker.
            columns, rows = np.count_nonzero(mask, axis=0), np.count_nonzero(mask, axis=1)
            xs, ys = np.flatnonzero(columns), np.flatnonzero(rows)
            entry["bbox"] = [int(xs[0]), int(ys[0]), int(xs[-1]) + 1, int(ys[-1]) + 1]
            cx = float(np.dot(np.arange(columns.size), columns)) / area
            cy = float(np.dot(np.arange(rows.size), rows)) / area
            entry["centroid"] = [round(cx, 2), round(cy, 2)]
        else:
            entry["bbox"], entry["centroid"] = None, None
        entry["visible"] = area >= VISIBLE_MIN_AREA
        return entry


@dataclasses.dataclass
class Segmentation:
    """All objects' masks.

    Attributes:
        backend: The backend's name.
        working_scale: Working size / video size (1.0 unless the video was reduced).
        objects: The tracks, in prompts.json order.
        hands: The tracks of the prompts with role ``hand`` (``Demo.hands``), segmented with the
            objects; evidence of the grasp and the release, not objects.
        parts: The tracks of the objects' moving parts (a door), named ``<object>.<part>``, segmented
            with the objects and apart from their bodies.
    """

    backend: str
    working_scale: float
    objects: list[ObjectTrack]
    hands: list[ObjectTrack] = dataclasses.field(default_factory=list)
    parts: list[ObjectTrack] = dataclasses.field(default_factory=list)

    def summary(self, mask_dir: str = "masks") -> dict:
        """Returns the report's ``segmentation`` section."""

        def entry(track: ObjectTrack, **role) -> dict:
            frames = [track.frame_summary(f) for f in range(len(track.masks))]
            return {"name": track.name, **role, "masks": f"{mask_dir}/{track.name}", "frames": frames}

        section = {
            "backend": self.backend,
            "working_scale": self.working_scale,
            "objects": [entry(track) for track in self.objects],
        }
        if self.hands:
            section["hands"] = [entry(track, role="hand") for track in self.hands]
        if self.parts:
            section["parts"] = [entry(track, role="part") for track in self.parts]
        return section

    def write(self, folder: Path) -> None:
        """Writes ``folder/<object>/000000.png ...`` (0 or 255, one PNG per frame), hands' too."""
        for track in [*self.objects, *self.hands, *self.parts]:
            target = inside(folder, track.name, f"the masks of '{track.name}'", OutputError)
            target.mkdir(parents=True, exist_ok=True)
            for frame, mask in enumerate(track.masks):
                ok = cv2.imwrite(str(target / f"{frame:06d}.png"), mask.astype(np.uint8) * 255)
                if not ok:
                    raise write_error(f"cannot write the mask of '{track.name}' on frame {frame}", target,
                                      "OpenCV could not write the PNG")  # fmt: skip


def working_scale(width: int, height: int) -> float:
    """The factor that brings the longer side down to :data:`MAX_WORKING_SIDE` (1.0 if already smaller)."""
    return min(1.0, MAX_WORKING_SIDE / max(width, height))


def load_frames(demo: Demo, scale: float) -> list[np.ndarray]:
    """Decodes every frame, resized by ``scale`` (``HxWx3`` uint8 BGR each)."""
    frames = []
    for frame in demo.video.iter_frames():
        if scale != 1.0:
            frame = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        frames.append(frame)
    return frames


def load_depth(demo: Demo, scale: float, log: WarningLog) -> list[np.ndarray | None] | None:
    """Reads ``depth/000000.png ...`` as float32 metres (0 = no reading), resized by ``scale``.

    Returns None (with a warning) when the depth images do not match the video.
    """
    if demo.depth_dir is None:
        return None
    depth: list[np.ndarray | None] = []
    for frame in range(demo.video.frames):
        try:
            metres = read_depth(demo, frame)
        except DemoFolderError as e:
            log.warn("segmentation", f"{e}; segmenting without depth")
            return None
        if metres is not None and scale != 1.0:
            metres = cv2.resize(metres, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
        depth.append(metres)
    return depth


def _prompt(view) -> Prompt:
    """One prompt of an object (its main prompt or a correction) for the backend, in video pixels."""
    points = np.array([p[:2] for p in view.points], np.float32).reshape(-1, 2)
    labels = np.array([p[2] for p in view.points], np.int32)
    return Prompt(frame=view.frame, box=view.box, points=points, labels=labels)


def segment_demo(
    demo: Demo,
    segmenter: VideoSegmenter,
    progress: Progress | None = None,
    log: WarningLog | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Segmentation:
    """Segments every prompted object through the whole video.

    An object's corrections (prompts on later frames) re-seed its mask from
    their frames on, going forward; its frames before a correction keep what the
    earlier prompts gave, and the other objects are not affected (exactly so with
    the classical and optical-flow backends; SAM2 attends to all of an object's
    prompted frames, see :class:`~.sam2_backend.Sam2Segmenter`).

    Args:
        demo: The checked demo folder.
        segmenter: The backend.
        progress: Receives per-frame progress inside ``span``; carries cancellation.
        log: Receives warnings (objects lost, frames never seen...).
        span: The part of the overall progress this stage covers.

    Returns:
        The masks at the video's size.
    """
    progress = progress or Progress()
    log = log if log is not None else WarningLog()
    hands, parts = len(demo.hands), demo.part_prompts()
    if hands or parts:  # segmented as objects are (a backend keeps them apart), then set aside
        demo = dataclasses.replace(demo, objects=demo.objects + demo.hands + parts, hands=())
    scale, frames, depth = _decode(demo, progress, log, span[0])
    segmenter.start_on(demo)
    segmenter.init_state(frames, depth)
    results = _propagate(demo, segmenter, range(len(demo.objects)), scale, len(frames), progress, span)
    progress.step("checking the masks for doubtful frames", span[1])
    doubts = _assess(demo, frames, depth, results)
    if segmenter.keeps_masks:  # flagged where doubtful, but as the user gave them
        empty = np.zeros(frames[0].shape[:2], bool)
        doubts = [dataclasses.replace(d, masks=[r[o].mask if o in r else empty for r in results])
                  for o, d in enumerate(doubts)]  # fmt: skip
    tracks = _tracks(demo, doubts, log)
    kept = len(tracks) - hands - len(parts)
    return Segmentation(
        segmenter.name, scale, tracks[:kept], tracks[kept : kept + hands], tracks[kept + hands :]
    )


def _decode(
    demo: Demo, progress: Progress, log: WarningLog, at: float
) -> tuple[float, list[np.ndarray], list[np.ndarray | None] | None]:
    """The working scale, the frames and the depth at that scale (see :func:`load_frames`, :func:`load_depth`)."""
    video = demo.video
    scale = working_scale(video.width, video.height)
    if scale != 1.0:
        log.warn(
            "segmentation",
            f"the video is {video.width}x{video.height}; segmenting at {scale:.2f} of that size",
        )
    progress.step("decoding the video for segmentation", at)
    frames = load_frames(demo, scale)
    if all(np.array_equal(frames[0], f) for f in frames[1:]):
        log.warn("segmentation", "every frame of the video is identical: nothing moves")
    return scale, frames, load_depth(demo, scale, log)


def _propagate(
    demo: Demo,
    segmenter: VideoSegmenter,
    object_ids: Iterable[int],
    scale: float,
    frame_count: int,
    progress: Progress,
    span: tuple[float, float],
) -> list[dict[int, ObjectMask]]:
    """Prompts the started backend with some objects' prompts and propagates them both ways.

    Args:
        demo: The demo; an object's id is its index in ``demo.objects``.
        segmenter: The backend, after ``init_state``.
        object_ids: The objects to segment.
        scale: Working size / video size.
        frame_count: The video's frames.
        progress: Receives per-frame progress inside ``span``.
        span: The part of the overall progress this covers.

    Returns:
        Per frame, object id -> its mask at working size (absent where the backend gave none).
    """
    object_ids = list(object_ids)
    results: list[dict[int, ObjectMask]] = [{} for _ in range(frame_count)]
    for object_id in object_ids:
        obj = demo.objects[object_id]
        for view in obj.prompts:  # the main prompt, then the corrections on later frames
            seeded = segmenter.add_prompt(object_id, _prompt(view).scaled(scale))
            if not seeded.mask.any():
                raise Real2GymError(
                    f"object '{obj.name}': the prompt on frame {view.frame} gives an empty mask; "
                    "draw the box tighter around the object or add a point on it"
                )
    earliest = min(demo.objects[o].frame for o in object_ids)
    latest = max(demo.objects[o].frame for o in object_ids)
    total = (frame_count - earliest) + (latest + 1)
    done = 0
    for start, reverse in ((earliest, False), (latest, True)):
        for frame, masks in segmenter.propagate(start, reverse=reverse):
            for object_id, result in masks.items():
                # After an object's main (earliest) prompt its masks come from the forward pass only,
                # where its corrections re-seed it from their frames on; before it, from the backward one.
                prompt_frame = demo.objects[object_id].frame
                if (frame >= prompt_frame) != reverse or frame == prompt_frame:
                    results[frame][object_id] = result
            done += 1
            fraction = span[0] + (span[1] - span[0]) * done / total
            progress.step(f"segmenting frame {frame} ({segmenter.name})", fraction)
    return results


def _assess(demo: Demo, frames: list[np.ndarray], depth, results: list[dict[int, ObjectMask]]) -> list[Doubt]:
    """All objects' working-size masks through :func:`quality.assess` (empty where a backend gave none)."""
    empty = np.zeros(frames[0].shape[:2], bool)
    masks = [[r[o].mask if o in r else empty for r in results] for o in range(len(demo.objects))]
    confidence = [[r[o].confidence if o in r else 0.0 for r in results] for o in range(len(demo.objects))]
    roles = [o.role for o in demo.objects]
    prompt_frames = [[p.frame for p in o.prompts] for o in demo.objects]
    scale = frames[0].shape[1] / demo.video.width
    boxes = [
        {p.frame: None if p.box is None else tuple(scale * v for v in p.box) for p in o.prompts}
        for o in demo.objects
    ]
    return assess(masks, confidence, frames, depth, roles, prompt_frames, boxes)


def _tracks(demo: Demo, doubts: list[Doubt], log: WarningLog) -> list[ObjectTrack]:
    video = demo.video
    tracks = []
    for obj, doubt in zip(demo.objects, doubts, strict=True):
        masks = []
        for mask in doubt.masks:
            if mask.shape != (video.height, video.width):
                mask = (
                    cv2.resize(
                        mask.astype(np.uint8), (video.width, video.height), interpolation=cv2.INTER_NEAREST
                    )
                    > 0
                )
            masks.append(mask)
        track = ObjectTrack(obj.name, masks, doubt.confidence, doubt.reason)
        visible = [track.frame_summary(f)["visible"] for f in range(len(masks))]
        if not visible[-1] and obj.role != "hand":  # a hand leaves the scene
            last_seen = max((f for f, v in enumerate(visible) if v), default=None)
            where = "never visible" if last_seen is None else f"not visible after frame {last_seen}"
            log.warn("segmentation", f"object '{obj.name}' is {where} (lost or occluded to the end)")
        tracks.append(track)
    return tracks
