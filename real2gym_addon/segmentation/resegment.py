"""Segmenting one object again, keeping the other objects' masks from an earlier run.

After a person adds a corrective prompt to one object (``prompts.json``: its
``prompts`` list), only that object needs segmenting again.
:func:`read_earlier_segmentation` reads the earlier run's ``segmentation``
section and ``masks/<object>/000000.png ...`` back from its output folder and
checks them against the demo: the same video size and frame count, the same
objects, and every kept mask present and matching the area its report entry
records (a mask edited by hand, or a folder from another demo, is refused).
:func:`resegment_object` then prompts the backend with that object's prompts
only (the main one and its corrections), propagates them, and runs the doubt
checks (:func:`.quality.assess`) over its new masks together with the kept
ones, so that its confidence and review flags are fresh. A pixel its new mask
shares with a kept mask stays the kept object's: the others are left alone.
:meth:`EarlierSegmentation.merged_section` and
:meth:`EarlierSegmentation.write_masks` give the report's section and the
masks folder: the kept objects' entries as they were and their PNGs copied
byte for byte.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import cv2
import numpy as np

from ..demo import Demo
from ..errors import DemoFolderError, OutputError, WarningLog
from ..names import inside
from ..progress import Progress
from ..report import REPORT_NAME, read_report
from .base import ObjectMask, VideoSegmenter
from .run import (
    VISIBLE_MIN_AREA,
    ObjectTrack,
    Segmentation,
    _assess,
    _decode,
    _propagate,
)

MASKS_DIR = "masks"
"""Where a run keeps its masks, inside the output folder."""
MASK_DEPENDENT_SECTIONS = ("objects", "table", "keyframes", "gripper", "verification")
"""Report sections a later stage made from the masks: dropped when an object is segmented again."""


def object_index(demo: Demo, name: str) -> int:
    """The index of the object called ``name`` in prompts.json.

    Raises:
        DemoFolderError: prompts.json has no such object; the message lists the ones it has.
    """
    names = [o.name for o in demo.objects]
    if name not in names:
        raise DemoFolderError(
            f"prompts.json has no object '{name}' to segment again; its objects are: {', '.join(names)}"
        )
    return names.index(name)


@dataclasses.dataclass
class EarlierSegmentation:
    """An earlier run's segmentation read back from its output folder, checked against the demo.

    Attributes:
        out_dir: The output folder it was read from.
        section: The report's ``segmentation`` section as read.
        entries: Object name -> its ``segmentation.objects[]`` entry as read.
        kept: The objects left alone -> their tracks (masks ``HxW`` bool at the video's size
            as read; confidence and reason from their report entries).
        mask_files: The objects left alone -> the PNG of each frame.
        warnings: The earlier report's segmentation warnings about the objects left alone.
        later_sections: The earlier report's sections made from the masks (geometry,
            verification: :data:`MASK_DEPENDENT_SECTIONS`) that it held.
        hands: The hands' tracks (``segmentation.hands``), kept as they were.
        hand_files: The hands -> the PNG of each frame.
    """

    out_dir: Path
    section: dict
    entries: dict[str, dict]
    kept: dict[str, ObjectTrack]
    mask_files: dict[str, list[Path]]
    warnings: list[dict]
    later_sections: list[str]
    hands: list[ObjectTrack] = dataclasses.field(default_factory=list)
    hand_files: dict[str, list[Path]] = dataclasses.field(default_factory=dict)

    def merged_section(self, segmentation: Segmentation, name: str) -> dict:
        """The report's ``segmentation`` section: ``name``'s new entry, the others' as they were.

        Args:
            segmentation: What :func:`resegment_object` returned.
            name: The object segmented again.

        Returns:
            The earlier section with ``name``'s entry replaced; the entry carries its own
            ``backend`` when that differs from the section's.
        """
        entry = segmentation.summary(MASKS_DIR)["objects"][_track_index(segmentation, name)]
        if segmentation.backend != self.section.get("backend"):
            entry["backend"] = segmentation.backend
        objects = [entry if t.name == name else self.entries[t.name] for t in segmentation.objects]
        return {key: objects if key == "objects" else value for key, value in self.section.items()}

    def write_masks(self, segmentation: Segmentation, name: str, folder: Path) -> None:
        """Writes ``folder/<object>/000000.png ...``: the kept objects' files copied, ``name``'s new.

        Args:
            segmentation: What :func:`resegment_object` returned.
            name: The object segmented again.
            folder: The masks folder to fill (in the run's staging folder).
        """
        for kept, files in {**self.mask_files, **self.hand_files}.items():
            target = inside(folder, kept, f"the masks of '{kept}'", OutputError)
            target.mkdir(parents=True, exist_ok=True)
            for source in files:
                shutil.copyfile(source, target / source.name)
        track = segmentation.objects[_track_index(segmentation, name)]
        Segmentation(segmentation.backend, segmentation.working_scale, [track]).write(folder)


def _track_index(segmentation: Segmentation, name: str) -> int:
    return [t.name for t in segmentation.objects].index(name)


def _again(out_dir: Path) -> str:
    return f"segment all objects again: real2gym segment DEMO --out {out_dir} (without --object)"


def read_earlier_segmentation(out_dir: Path | str, demo: Demo, name: str) -> EarlierSegmentation:
    """Reads and checks an earlier run's segmentation for segmenting ``name`` again.

    Its report.json is read and checked as ``verify`` and ``fix`` read one
    (``report.read_report``); the kept objects' masks are read too.

    Args:
        out_dir: The earlier run's output folder.
        demo: The demo folder now.
        name: The object to segment again.

    Returns:
        The earlier segmentation, the kept masks read.

    Raises:
        DemoFolderError: prompts.json has no object ``name``.
        OutputError: The folder holds no report.json or no segmentation, or one whose video or objects differ
            from the demo's now, or a kept object's masks are missing or do not match the report;
            the message names the file or object and says to segment all objects again.
    """
    out_dir = Path(out_dir)
    object_index(demo, name)
    if not (out_dir / REPORT_NAME).is_file():
        raise OutputError(
            f"{out_dir} holds no earlier segmentation (no report.json); first segment all objects: "
            f"real2gym segment DEMO --out {out_dir}"
        )
    report = read_report(out_dir)
    section = report.segmentation
    if not isinstance(section, dict) or not section.get("objects"):
        raise OutputError(
            f"report.json in {out_dir} holds no segmentation to keep; first segment all objects: "
            f"real2gym segment DEMO --out {out_dir}"
        )
    video, recorded = demo.video, report.video
    now = (video.frames, video.width, video.height)
    if (recorded.frames, recorded.width, recorded.height) != now:
        raise OutputError(
            f"the earlier segmentation in {out_dir} is of a {recorded.width}x{recorded.height} video "
            f"of {recorded.frames} frames, the demo's is {video.width}x{video.height} with "
            f"{video.frames} frames; {_again(out_dir)}"
        )
    entries: dict[str, dict] = {}
    for index, entry in enumerate(section["objects"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("frames"), list):
            raise OutputError(f"report.json: 'segmentation.objects[{index}]' has no 'frames' list")
        entries[entry["name"]] = entry
    names = [o.name for o in demo.objects]
    if sorted(entries) != sorted(names) or len(entries) != len(section["objects"]):
        raise OutputError(
            f"the earlier segmentation in {out_dir} has the objects {', '.join(entries)}, prompts.json "
            f"now has {', '.join(names)}; {_again(out_dir)}"
        )
    kept, files = {}, {}
    for other in names:
        if other != name:
            kept[other], files[other] = _read_kept(out_dir, entries[other], demo)
    warnings = [
        w
        for w in report.warnings
        if isinstance(w, dict)
        and w.get("stage") == "segmentation"
        and any(str(w.get("message", "")).startswith(f"object '{other}'") for other in kept)
    ]
    later = [key for key in MASK_DEPENDENT_SECTIONS if getattr(report, key)]
    hand_names = sorted(h.name for h in demo.hands)
    hand_entries = [e for e in section.get("hands", []) if isinstance(e, dict)]
    if sorted(str(e.get("name")) for e in hand_entries) != hand_names:
        raise OutputError(
            f"the earlier segmentation in {out_dir} has the hands {', '.join(str(e.get('name')) for e in hand_entries) or 'none'}, "
            f"prompts.json now has {', '.join(hand_names) or 'none'}; {_again(out_dir)}"
        )
    hands, hand_files = [], {}
    for entry in hand_entries:
        if not isinstance(entry.get("frames"), list):
            raise OutputError(
                f"report.json: the hand '{entry['name']}' in 'segmentation.hands' has no 'frames' list"
            )
        track, hand_files[entry["name"]] = _read_kept(out_dir, entry, demo)
        hands.append(track)
    return EarlierSegmentation(out_dir, section, entries, kept, files, warnings, later, hands, hand_files)


def _read_kept(out_dir: Path, entry: dict, demo: Demo) -> tuple[ObjectTrack, list[Path]]:
    """A kept object's masks and figures, each mask checked against its report entry."""
    name, video = entry["name"], demo.video
    if entry.get("masks") != f"{MASKS_DIR}/{name}":
        raise OutputError(
            f"report.json names the masks of '{name}' {entry.get('masks')!r:.80}, not "
            f"'{MASKS_DIR}/{name}'; {_again(out_dir)}"
        )
    frames = entry["frames"]
    if len(frames) != video.frames:
        raise OutputError(
            f"report.json has {len(frames)} frames of '{name}', the video has {video.frames}; {_again(out_dir)}"
        )
    folder = inside(out_dir, entry["masks"], f"the masks of '{name}'", OutputError)
    masks, confidence, reason, paths = [], [], [], []
    for frame, figures in enumerate(frames):
        where = f"report.json, object '{name}', frame {frame}"
        if not isinstance(figures, dict) or figures.get("frame") != frame:
            raise OutputError(f"{where}: the entries must list the frames 0 to {video.frames - 1} in order")
        area, sure = figures.get("area"), figures.get("confidence")
        if not all(
            isinstance(v, kind) and not isinstance(v, bool) for v, kind in ((area, int), (sure, (int, float)))
        ):
            raise OutputError(f"{where}: 'area' and 'confidence' must be numbers")
        path = folder / f"{frame:06d}.png"
        relative = f"{MASKS_DIR}/{name}/{path.name}"
        if path.is_symlink() or not path.is_file():
            raise OutputError(f"{relative} is missing from {out_dir}; {_again(out_dir)}")
        mask = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if mask is None or mask.ndim != 2 or mask.shape != (video.height, video.width):
            raise OutputError(
                f"{relative} in {out_dir} is not a {video.width}x{video.height} one-channel mask; "
                f"{_again(out_dir)}"
            )
        if not set(np.unique(mask).tolist()) <= {0, 255} or int(np.count_nonzero(mask)) != area:
            raise OutputError(
                f"{relative} in {out_dir} does not match report.json ({int(np.count_nonzero(mask))} mask "
                f"pixels, the report says {area}): was it edited? {_again(out_dir)}"
            )
        masks.append(mask > 0)
        confidence.append(float(sure))
        reason.append(figures.get("reason") if figures.get("review") else None)
        paths.append(path)
    return ObjectTrack(name, masks, confidence, reason), paths


def resegment_object(
    demo: Demo,
    segmenter: VideoSegmenter,
    earlier: EarlierSegmentation,
    name: str,
    progress: Progress | None = None,
    log: WarningLog | None = None,
    span: tuple[float, float] = (0.0, 1.0),
) -> Segmentation:
    """Segments one object through the whole video again, keeping the others' masks.

    The backend gets only this object's prompts (its main prompt and its
    corrections) and propagates them as :func:`.run.segment_demo` does: with the
    classical and optical-flow backends its frames before a new correction come
    out as before. Its masks then go through the doubt checks together with the
    kept masks (:func:`.quality.assess`); where its mask takes pixels of a kept
    mask, the kept object keeps them.

    Args:
        demo: The checked demo folder.
        segmenter: The backend.
        earlier: The earlier run's segmentation (:func:`read_earlier_segmentation`).
        name: The object to segment again.
        progress: Receives per-frame progress inside ``span``; carries cancellation.
        log: Receives warnings (the object lost, the video reduced...).
        span: The part of the overall progress this stage covers.

    Returns:
        Every object's masks at the video's size, in prompts.json order: the kept
        ones as read back, ``name``'s new.
    """
    progress = progress or Progress()
    log = log if log is not None else WarningLog()
    index = object_index(demo, name)
    video = demo.video
    scale, frames, depth = _decode(demo, progress, log, span[0])
    segmenter.start_on(demo)
    segmenter.init_state(frames, depth)
    results = _propagate(demo, segmenter, [index], scale, len(frames), progress, span)
    size = frames[0].shape[1::-1]
    for other, track in earlier.kept.items():
        o = object_index(demo, other)
        for frame, mask in enumerate(track.masks):
            if scale != 1.0:
                mask = cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
            results[frame][o] = ObjectMask(mask, track.confidence[frame])
    progress.step("checking the masks for doubtful frames", span[1])
    doubt = _assess(demo, frames, depth, results)[index]
    masks = []
    for frame, mask in enumerate(doubt.masks):
        if mask.shape != (video.height, video.width):
            mask = (
                cv2.resize(
                    mask.astype(np.uint8), (video.width, video.height), interpolation=cv2.INTER_NEAREST
                )
                > 0
            )
        for track in earlier.kept.values():  # the objects left alone keep their pixels
            mask = mask & ~track.masks[frame]
        masks.append(mask)
    track = ObjectTrack(name, masks, doubt.confidence, doubt.reason)
    visible = [int(m.sum()) >= VISIBLE_MIN_AREA for m in masks]
    if not visible[-1]:
        last_seen = max((f for f, v in enumerate(visible) if v), default=None)
        where = "never visible" if last_seen is None else f"not visible after frame {last_seen}"
        log.warn("segmentation", f"object '{name}' is {where} (lost or occluded to the end)")
    tracks = [track if o.name == name else earlier.kept[o.name] for o in demo.objects]
    return Segmentation(segmenter.name, scale, tracks, list(earlier.hands))
