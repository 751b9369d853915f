"""Segmentation: mask accuracy and speed of the classical backend against the baseline.

Scores ``args.demo`` and every demo folder listed in the environment variable
``REAL2GYM_BENCH_DEMOS`` (separated by ``os.pathsep``), each against its
``truth.json`` (the visible part of each object, per frame). The baseline,
measured in the same run, is :class:`FlowWarpSegmenter` (the prompt frame's
mask carried along by optical flow). Both run on one core
(``cv2.setNumThreads(1)``); the time counted is the segmenter's own
(``init_state``, ``add_prompt``, ``propagate``), not video decoding.

Targets per object: mean IoU >= 0.90 over the frames where it is visible, IoU
>= 0.75 on every frame where at least half of it is visible; per scene: at
least 25 frames/s per object at 640x480, clearly better IoU than the
baseline, and no mask on a frame where an object is fully hidden.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from run import REPO, Figure
from timing import segment_timed

sys.path.insert(0, str(REPO))  # the core package, from a checkout

NAME = "segmentation"
MEAN_IOU = 0.90
HALF_VISIBLE_IOU = 0.75
HALF_VISIBLE = 0.5
FRAMES_PER_SECOND = 25.0
BETTER_BY = 0.05


def _demos(args) -> list[Path]:
    extra = [p for p in os.environ.get("REAL2GYM_BENCH_DEMOS", "").split(os.pathsep) if p]
    demos: list[Path] = []
    for path in [args.demo, *extra]:
        path = Path(path).resolve()
        if path not in demos:
            demos.append(path)
    return demos


def _score(demo_path: Path, segmenter) -> dict:
    """Segments one demo; returns per-object IoU figures, hidden-frame detections and frames/s."""
    from real2gym_addon.demo import load_demo
    from real2gym_addon.truth import load_truth, mask_iou

    demo, truth = load_demo(demo_path), load_truth(demo_path)
    segmentation, fps = segment_timed(demo, segmenter)
    objects = {}
    for track in segmentation.objects:
        ious, half, seen_hidden = [], [], 0
        for frame, expected in enumerate(truth.objects[track.name].frames):
            if not expected.visible:
                seen_hidden += bool(track.masks[frame].any())
                continue
            iou = mask_iou(track.masks[frame], expected.mask())
            ious.append(iou)
            if expected.visible_fraction >= HALF_VISIBLE:
                half.append(iou)
        objects[track.name] = {
            "mean": float(np.mean(ious)) if ious else float("nan"),
            "min_half": float(min(half)) if half else float("nan"),
            "seen_hidden": seen_hidden,
            "hidden": sum(not f.visible for f in truth.objects[track.name].frames),
        }
    return {"objects": objects, "fps": fps, "size": f"{demo.video.width}x{demo.video.height}"}


def _scene_figures(scene: str, classical: dict, baseline: dict) -> list[Figure]:
    figures = []
    for name, ours in classical["objects"].items():
        theirs = baseline["objects"][name]
        figures += [
            Figure(
                NAME,
                f"{scene} {name} mean IoU (visible frames)",
                ours["mean"],
                "IoU",
                theirs["mean"],
                "flow_warp",
                f">= {MEAN_IOU}",
                ours["mean"] >= MEAN_IOU,
            ),
            Figure(
                NAME,
                f"{scene} {name} min IoU (>= half visible)",
                ours["min_half"],
                "IoU",
                theirs["min_half"],
                "flow_warp",
                f">= {HALF_VISIBLE_IOU}",
                ours["min_half"] >= HALF_VISIBLE_IOU,
            ),
        ]
        if ours["hidden"]:
            figures.append(
                Figure(
                    NAME,
                    f"{scene} {name} masks while hidden ({ours['hidden']} frames)",
                    ours["seen_hidden"],
                    "frames",
                    theirs["seen_hidden"],
                    "flow_warp",
                    "0",
                    ours["seen_hidden"] == 0,
                )
            )
    ours_mean = float(np.mean([o["mean"] for o in classical["objects"].values()]))
    theirs_mean = float(np.mean([o["mean"] for o in baseline["objects"].values()]))
    figures += [
        Figure(
            NAME,
            f"{scene} mean IoU, all objects",
            ours_mean,
            "IoU",
            theirs_mean,
            "flow_warp",
            f">= flow_warp + {BETTER_BY}",
            ours_mean >= theirs_mean + BETTER_BY,
        ),
        Figure(
            NAME,
            f"{scene} frames/s per object ({classical['size']}, 1 core)",
            classical["fps"],
            "frames/s",
            baseline["fps"],
            "flow_warp",
            f">= {FRAMES_PER_SECOND:g}",
            classical["fps"] >= FRAMES_PER_SECOND,
        ),
    ]
    return figures


def run(args) -> list[Figure]:
    """Scores the classical backend and the flow-warp baseline on each demo with truth."""
    import cv2

    from real2gym_addon.segmentation import ClassicalSegmenter, FlowWarpSegmenter

    cv2.setNumThreads(1)
    figures: list[Figure] = []
    for demo in _demos(args):
        if not (demo / "truth.json").is_file():
            print(f"segmentation: {demo} has no truth.json; skipped", file=sys.stderr)
            continue
        print(f"segmentation: scoring {demo}", file=sys.stderr, flush=True)
        classical = _score(demo, ClassicalSegmenter())
        baseline = _score(demo, FlowWarpSegmenter())
        figures += _scene_figures(demo.name, classical, baseline)
    return figures
