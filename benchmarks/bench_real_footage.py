"""Segmentation on real footage: does the confidence flag the obvious failures?

Runs the classical backend on every clip in ``../shared/real_footage/`` (the
repository's parent folder; read there, never copied into the repository). There is
no truth, so only failures that need none are counted: on a frame, an object's mask
is an *obvious failure* when its area exceeds :data:`LEAK_RATIO` times its area on
the prompt frame (it took in the table, the hand, the window), or when it and another
object's mask overlap with IoU above :data:`MERGE_IOU` (two objects became one). A
frame is *flagged* for an object when its confidence is below 0.5 or it carries
``review``.

Per object: the share of frames flagged, the share of its obvious-failure frames that
are flagged (target >= 0.9) and the share of its frames that are obvious failures
(target <= 0.25); and the same two over all clips' object-frames together. Contact sheets (six frames per clip, each object's mask outline and
name, the frame number, a red REVIEW where flagged) are written to
``.cache/bench_out/real_footage/<clip>.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
from run import REPO, Figure

sys.path.insert(0, str(REPO))  # the core package, from a checkout

NAME = "real_footage"
FOOTAGE = REPO.parent / "shared" / "real_footage"
OUT = REPO / ".cache" / "bench_out" / "real_footage"
LEAK_RATIO = 2.5
MERGE_IOU = 0.5
CONFIDENT = 0.5
CAUGHT_SHARE = 0.9
FAILURE_SHARE = 0.25
SHEET_FRAMES = 6
TILE_WIDTH = 480


def _flags(segmentation, demo) -> dict[str, dict[str, np.ndarray]]:
    """Per object: per-frame ``flagged``, ``failure`` (leak or merge) and ``leak``/``merge`` arrays."""
    from real2gym_addon.truth import mask_iou

    tracks = segmentation.objects
    frames = len(tracks[0].masks)
    merged = {t.name: np.zeros(frames, bool) for t in tracks}
    for i, a in enumerate(tracks):
        for b in tracks[i + 1 :]:
            for frame in range(frames):
                if (
                    a.masks[frame].any()
                    and b.masks[frame].any()
                    and mask_iou(a.masks[frame], b.masks[frame]) > MERGE_IOU
                ):
                    merged[a.name][frame] = merged[b.name][frame] = True
    result = {}
    for track, prompt in zip(tracks, demo.objects, strict=True):
        summaries = [track.frame_summary(f) for f in range(frames)]
        areas = np.array([s["area"] for s in summaries], float)
        leak = areas > LEAK_RATIO * max(areas[prompt.frame], 1.0)
        flagged = np.array([s["confidence"] < CONFIDENT or s.get("review", False) for s in summaries])
        reasons = [s.get("reason") for s in summaries]
        result[track.name] = {
            "flagged": flagged,
            "leak": leak,
            "merge": merged[track.name],
            "failure": leak | merged[track.name],
            "reasons": reasons,
        }
    return result


_RED = (40, 40, 255)
_WHITE = (255, 255, 255)


def _tag(image: np.ndarray, parts: list[tuple[str, tuple[int, int, int]]], origin: tuple[int, int]) -> None:
    """Draws coloured texts one after the other on a dark strip from ``origin``, kept inside the image."""
    font, scale, gap = cv2.FONT_HERSHEY_SIMPLEX, 0.5, 6
    sizes = [cv2.getTextSize(text, font, scale, 1) for text, _ in parts]
    width = sum(w for (w, _), _ in sizes) + gap * len(parts)
    height = max(h + base for (_, h), base in sizes) + 4
    x = max(0, min(origin[0], image.shape[1] - width))
    y = max(0, min(origin[1], image.shape[0] - height))
    cv2.rectangle(image, (x, y), (x + width, y + height), (20, 20, 20), -1)
    for (text, colour), ((w, h), _) in zip(parts, sizes, strict=True):
        cv2.putText(image, text, (x + 3, y + h + 2), font, scale, colour, 1, cv2.LINE_AA)
        x += w + gap


def contact_sheet(demo, segmentation, flags: dict, path: Path) -> None:
    """Writes six frames spread over the video with every object's mask outline, name and REVIEW tags.

    Args:
        demo: The checked demo.
        segmentation: Its masks.
        flags: :func:`_flags`' result.
        path: The PNG to write.
    """
    from real2gym_addon.segmentation.overlay import default_color

    picks = np.linspace(0, demo.video.frames - 1, SHEET_FRAMES).round().astype(int).tolist()
    tiles = []
    for frame in picks:
        image = demo.video.read_frame(frame).copy()
        scale = TILE_WIDTH / image.shape[1]
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        any_flag = False
        for index, track in enumerate(segmentation.objects):
            colour = tuple(int(255 * c) for c in reversed(default_color(index)))
            mask = cv2.resize(
                track.masks[frame].astype(np.uint8),
                (image.shape[1], image.shape[0]),
                interpolation=cv2.INTER_NEAREST,
            )
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            cv2.drawContours(image, contours, -1, colour, 2)
            ys, xs = np.nonzero(mask)
            origin = (int(xs.min()), int(ys.min()) - 20) if len(xs) else (4, 24 + 20 * index)
            parts = [(track.name, colour)]
            if flags[track.name]["flagged"][frame]:
                any_flag = True
                reason = flags[track.name]["reasons"][frame]
                parts.append(("REVIEW" + (f" {reason}" if reason else ""), _RED))
            _tag(image, parts, origin)
        _tag(image, [(f"frame {frame}", _WHITE)] + ([("REVIEW", _RED)] if any_flag else []), (0, 0))
        tiles.append(image)
    rows = [np.hstack(tiles[i : i + 3]) for i in range(0, SHEET_FRAMES, 3)]
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), np.vstack(rows)):
        raise RuntimeError(f"cannot write the contact sheet {path}")


def run(args) -> list[Figure]:
    """Segments each real clip, counts the obvious failures and how many are flagged, draws contact sheets."""
    from real2gym_addon.demo import load_demo
    from real2gym_addon.errors import WarningLog
    from real2gym_addon.segmentation import ClassicalSegmenter, segment_demo

    clips = sorted(p for p in FOOTAGE.iterdir() if (p / "prompts.json").is_file()) if FOOTAGE.is_dir() else []
    if not clips:
        print(f"{NAME}: no clips in {FOOTAGE}; skipped", file=sys.stderr)
        return []
    figures: list[Figure] = []
    failure_frames, flagged_failures, object_frames = 0, 0, 0
    for clip in clips:
        print(f"{NAME}: segmenting {clip.name}", file=sys.stderr, flush=True)
        demo = load_demo(clip)
        segmentation = segment_demo(demo, ClassicalSegmenter(), log=WarningLog())
        flags = _flags(segmentation, demo)
        sheet = OUT / f"{clip.name}.png"
        contact_sheet(demo, segmentation, flags, sheet)
        print(f"{NAME}: contact sheet {sheet}", file=sys.stderr, flush=True)
        for name, f in flags.items():
            failures = int(f["failure"].sum())
            caught = float(f["flagged"][f["failure"]].mean()) if failures else float("nan")
            share = float(f["failure"].mean())
            failure_frames += failures
            flagged_failures += int(f["flagged"][f["failure"]].sum())
            object_frames += len(f["failure"])
            figures += [
                Figure(
                    NAME,
                    f"{clip.name} {name} frames flagged ({len(f['flagged'])} frames)",
                    float(f["flagged"].mean()),
                    "",
                ),
                Figure(
                    NAME,
                    f"{clip.name} {name} obvious failures flagged ({failures} frames: "
                    f"{int(f['leak'].sum())} leak, {int(f['merge'].sum())} merge)",
                    caught,
                    "",
                    target=f">= {CAUGHT_SHARE}",
                    passed=None if not failures else caught >= CAUGHT_SHARE,
                ),
                Figure(
                    NAME,
                    f"{clip.name} {name} share of frames that are obvious failures",
                    share,
                    "",
                    target=f"<= {FAILURE_SHARE}",
                    passed=share <= FAILURE_SHARE,
                ),
            ]
    caught = flagged_failures / failure_frames if failure_frames else float("nan")
    share = failure_frames / object_frames
    figures += [
        Figure(
            NAME,
            f"all clips: obvious failures flagged ({failure_frames} of {object_frames} object-frames)",
            caught,
            "",
            target=f">= {CAUGHT_SHARE}",
            passed=None if not failure_frames else caught >= CAUGHT_SHARE,
        ),
        Figure(
            NAME,
            "all clips: share of object-frames that are obvious failures",
            share,
            "",
            target=f"<= {FAILURE_SHARE}",
            passed=share <= FAILURE_SHARE,
        ),
    ]
    return figures
