#!/usr/bin/env python3
"""Render a varied demo folder with Blender's Cycles: a hand carries an object on a table.

A second source of demos, independent of tools/make_demo.py (MuJoCo's renderer, a
gripper): Blender (the ``bpy`` module) renders with Cycles on the CPU a table with a
procedural top (wood, checker, plain white or marble), 2 to 4 objects (blocks, cans,
open cups, thin plates), a skin-coloured hand and arm that reaches in, grasps the
manipulated object (hiding 40-90 % of it), carries it into a cup, onto a plate or to
another spot, lets go and leaves; an area key light that moves, a brightness change,
sometimes motion blur, depth of field, white objects on a white table, look-alike
objects side by side or an object carried towards the camera: all drawn from
``--seed``. The frames get phone-like noise and JPEG compression (quality 35-80 per
frame) before they are encoded as ``video.mp4``. The folder follows docs/data-contract.md
(camera.json with ``world_from_camera``, prompts.json from the truth on frame 0,
sometimes depth/) plus truth.json (visible masks as RLE, visible fractions, poses)
for scoring. Exit status 1 when no scene of the seed can be filmed.

Example:
    .venv/bin/python tools/make_varied_demo.py --out /tmp/varied_1 --seed 1
    .venv/bin/python tools/make_varied_demo.py --out /tmp/tiny --seed 1 --frames 6 --size 160x120 --samples 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _demo_output import staged_output  # noqa: E402
from _demo_sensor import sensor_depth  # noqa: E402
from _varied_blender import HAND_ID, Renderer, quiet_stdout  # noqa: E402
from _varied_draw import draw_scene  # noqa: E402
from _varied_scene import T_GRASP, Scene  # noqa: E402
from _varied_truth import (  # noqa: E402
    camera_json,
    hand_truth,
    phone_frame,
    prompt_entry,
    truth_frame,
    truth_json,
)

FPS = 30.0
ATTEMPTS = 6
"""Scenes of one seed tried until one shows every object whole on frame 0."""
FRAME_ZERO_VISIBLE = 0.9
"""Share of each object that must be seen on frame 0 (its prompt frame)."""
PREVIEW_WIDTH = 320
"""Pixels across of the quick renders that check a scene and tune the grasp."""
_GENERATED = ("video.mp4", "depth", "camera.json", "prompts.json", "truth.json")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="demo folder to write")
    add("--seed", type=int, default=1, help="scene seed: layout, materials, light, hand, noise")
    add("--frames", type=int, default=48, help="number of video frames (at least 6)")
    add("--size", default="640x480", help="WxH in pixels")
    add("--samples", type=int, default=4, help="Cycles samples per pixel (denoised with OpenImageDenoise)")
    add("--task", choices=("place_in", "place_on", "lift", "stack"),
        help="the task to film (stack: the object set on a larger free block); default: drawn from the seed")  # fmt: skip
    add("--verbose", action="store_true", help="show Blender's render log")
    args = parser.parse_args(argv)
    try:
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must be WxH, e.g. 640x480; got {args.size!r}")
    if args.frames < 6 or min(args.width, args.height) < 64 or args.samples < 1:
        parser.error("need --frames >= 6, an image at least 64 pixels a side and --samples >= 1")
    return args


def _hidden_share(renderer, frame: int, folder: Path) -> float:
    """Share of the manipulated object hidden on ``frame`` (at the preview size)."""
    renderer.visible_mode()
    ids, _ = renderer.render_visible(frame, folder / "visible.png")
    renderer.full_mode([0])
    full = renderer.render_full(frame, folder / "full.png", [0])[0]
    return 1.0 - float((ids == 1).sum()) / max(int(full.sum()), 1)


def _frame_zero_ok(renderer, scene: Scene, folder: Path) -> bool:
    """Every object is seen whole (:data:`FRAME_ZERO_VISIBLE`) on frame 0."""
    renderer.visible_mode()
    ids, _ = renderer.render_visible(0, folder / "visible.png")
    for start in range(0, len(scene.items), 3):
        group = list(range(start, min(start + 3, len(scene.items))))
        renderer.full_mode(group)
        for index, full in renderer.render_full(0, folder / "full.png", group).items():
            if not full.any() or (ids == index + 1).sum() < FRAME_ZERO_VISIBLE * full.sum():
                return False
    return True


def tune_grasp(renderer, scene: Scene, folder: Path) -> float:
    """Sets how far the fingers reach so that the grasp hides ``scene.target_hidden``; returns the share."""
    grasp = int(np.ceil(T_GRASP * (scene.frames - 1)))
    low, high = 0.0, float(scene.manipulated.size[2]) + 0.01
    results = {}
    for reach in (low, high):
        renderer.set_finger_reach(reach)
        results[reach] = _hidden_share(renderer, grasp, folder)
    if scene.target_hidden <= results[low] or scene.target_hidden >= results[high]:
        reach = low if scene.target_hidden <= results[low] else high
    else:
        for _ in range(6):
            reach = (low + high) / 2
            renderer.set_finger_reach(reach)
            results[reach] = _hidden_share(renderer, grasp, folder)
            low, high = (reach, high) if results[reach] < scene.target_hidden else (low, reach)
        reach = min(results, key=lambda r: abs(results[r] - scene.target_hidden))
    renderer.set_finger_reach(reach)
    scene.finger_reach = reach
    return results[reach]


def prepare(args: argparse.Namespace, folder: Path):
    """Draws the seed's scenes until one passes the frame-0 check; builds it and tunes the grasp."""
    for attempt in range(ATTEMPTS):
        scene = draw_scene(args.seed, args.frames, args.width, args.height, attempt, args.task)
        renderer = Renderer(scene, args.samples)
        renderer.bl.render.resolution_percentage = max(1, min(100, round(100 * PREVIEW_WIDTH / args.width)))
        if _frame_zero_ok(renderer, scene, folder):
            hidden = tune_grasp(renderer, scene, folder)
            renderer.bl.render.resolution_percentage = 100
            return scene, renderer, hidden, attempt
    raise RuntimeError(f"seed {args.seed}: no scene in {ATTEMPTS} shows every object whole on frame 0")


def generate(args: argparse.Namespace, staging: Path, work: Path) -> dict:
    """Renders the demo into ``staging`` (temporary images in ``work``); returns truth.json's data."""
    started = time.monotonic()
    with quiet_stdout(args.verbose):
        scene, renderer, hidden, attempt = prepare(args, work)
        prepared = time.monotonic()
        renderer.colour_mode()
        for frame in range(scene.frames):
            renderer.render_colour(frame, work / f"colour_{frame:06d}.png")
        coloured = time.monotonic()
        renderer.visible_mode()
        seen = [renderer.render_visible(f, work / f"visible_{f:06d}.png") for f in range(scene.frames)]
        full: list[dict[int, np.ndarray]] = [{} for _ in range(scene.frames)]
        for start in range(0, len(scene.items), 3):
            group = list(range(start, min(start + 3, len(scene.items))))
            renderer.full_mode(group)
            for frame in range(scene.frames):
                full[frame].update(renderer.render_full(frame, work / "full.png", group))
    masks_done = time.monotonic()

    poses = scene.item_poses()
    w_from_c = scene.camera.world_from_camera
    per_object: list[list[dict]] = [[] for _ in scene.items]
    hand_frames = hand_truth(scene.hand_poses(), w_from_c, [ids == HAND_ID for ids, _ in seen])
    for frame, (ids, _) in enumerate(seen):
        hand = ids == HAND_ID
        for index in range(len(scene.items)):
            mask = full[frame][index]
            entry = truth_frame(
                frame, poses[frame, index], w_from_c, ids == index + 1, mask, int((mask & hand).sum())
            )
            per_object[index].append(entry)
    prompts = [prompt_entry(item, seen[0][0] == index + 1) for index, item in enumerate(scene.items)]

    rng = np.random.default_rng([args.seed, 7])
    writer = cv2.VideoWriter(
        str(staging / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (args.width, args.height)
    )
    if not writer.isOpened():
        raise RuntimeError("OpenCV cannot write mp4v video here")
    try:
        for frame in range(scene.frames):
            clean = cv2.imread(str(work / f"colour_{frame:06d}.png"), cv2.IMREAD_COLOR)
            writer.write(phone_frame(clean, scene.noise_sigma, int(scene.jpeg_quality[frame]), rng))
    finally:
        writer.release()
    if scene.with_depth:
        (staging / "depth").mkdir()
        for frame, (_, depth) in enumerate(seen):
            image = sensor_depth(depth, scene.camera.fx, rng)
            cv2.imwrite(str(staging / "depth" / f"{frame:06d}.png"), image, [cv2.IMWRITE_PNG_COMPRESSION, 9])

    generator = {
        "tool": "tools/make_varied_demo.py",
        "seed": args.seed,
        "attempt": attempt,
        "argv": sys.argv[1:],
        "renderer": "Blender Cycles (CPU)",
        "samples": args.samples,
        "cases": scene.cases,
        "table": scene.table["kind"],
        "motion_blur_shutter": scene.motion_blur,
        "depth_of_field_fstop": scene.fstop,
        "camera_elevation_deg": round(scene.camera.elevation, 2),
        "camera_fovy_deg": round(scene.camera.fovy, 2),
        "hand_target_hidden": round(scene.target_hidden, 3),
        "hand_hidden_at_grasp": round(hidden, 3),
        "noise_sigma": round(scene.noise_sigma, 2),
        "jpeg_quality": [int(q) for q in scene.jpeg_quality],
        "seconds": {
            "prepare": round(prepared - started, 1),
            "colour": round(coloured - prepared, 1),
            "masks": round(masks_done - coloured, 1),
        },
    }
    truth = truth_json(scene, per_object, FPS, generator)
    truth["hand"] = {"name": "hand", "frames": hand_frames}
    files = {
        "camera.json": camera_json(scene),
        "prompts.json": {"objects": prompts, "task": scene.task},
        "truth.json": truth,
    }
    for name, content in files.items():
        (staging / name).write_text(json.dumps(content, indent=None if name == "truth.json" else 2) + "\n")
    return truth


def main(argv: list[str] | None = None) -> int:
    """Runs the generator; returns the process exit status."""
    args = parse_args(argv)
    started = time.monotonic()
    out = args.out.resolve()
    work = Path(tempfile.mkdtemp(prefix="varied-render-"))
    try:
        with staged_output(out, _GENERATED) as staging:
            truth = generate(args, staging, work)
    except ValueError as error:  # an --out folder it may not write into
        print(f"make_varied_demo: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"make_varied_demo: failed: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    gen = truth["generator"]
    names = ", ".join(f"{o['name']} ({o['shape']}, {o['role']})" for o in truth["objects"])
    print(f"make_varied_demo: wrote {out}")
    print(
        f"make_varied_demo: seed {args.seed}, {args.frames} frames {args.width}x{args.height}, {names}; "
        f"cases: {', '.join(gen['cases']) or 'none'}; table {gen['table']}; hand hides "
        f"{gen['hand_hidden_at_grasp']:.0%} at the grasp; {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
