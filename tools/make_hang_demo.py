#!/usr/bin/env python3
"""Generate a demo folder of a mug hung by its handle on a mug tree's peg.

A floating parallel-jaw gripper (tools/_demo_gripper.py; friction only) picks a mug off the table by its
handle (one finger inside the mug against the wall behind the handle, the other on the handle's outer
bar), carries it to one of the 2 or 3 pegs of a mug tree fixed to the table, turned so that the peg runs
through the handle's loop, threads the handle on the peg towards the post, seats the handle's upper arm on
the peg, tips the mug about the peg until it hangs as it will (its handle up, its body under the peg),
lets go, draws its fingers out of the mug and backs away; the mug hangs from the peg, clear of the table,
the tree's base and its post. MuJoCo simulates and renders it, in a model built here with MjSpec (not
by the project's MJCF exporter). The seed draws the tree (base, post, pegs' heights, azimuths, length,
elevation), the mug (radius, height, wall, handle), the peg, colours and the camera (from the side and a
little above, so that the pegs show against the wall behind).

The folder follows docs/data-contract.md: video.mp4 or frames/, camera.json, depth/ (16-bit PNGs in
mm), prompts.json (``mug`` and ``rack``, task ``hang``), optionally trajectory.json and masks/, truth.json
(poses and masks of both objects per frame, their shape parameters, keyframes ``grasp``, ``lift``,
``release``, ``hang``, the gripper per frame) and a README.md. The outcome is checked in the simulation:
the generator exits with status 1 when the mug does not end hanging still on the peg (or, with
``--miss``, when it does), or the hand touched the rack, and 2 for options it cannot film.

Example:
    MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py --out /tmp/hang --seed 0 --with-trajectory
    MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py --out /tmp/hang_miss --seed 0 --miss 0.04
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _articulated_motion import Script  # noqa: E402
from _demo_output import staged_output  # noqa: E402
from _demo_render import DemoRenderer, Intrinsics  # noqa: E402
from _demo_sensor import noisy_rgb, sensor_depth  # noqa: E402
from _demo_truth import camera_json, pose_entries, trajectory_json, truth_frame, world_from_camera  # noqa: E402
from _hang_layout import place_camera, sample_layout  # noqa: E402
from _hang_model import build_model  # noqa: E402
from _hang_motion import mug_on_peg, plan_script, thread_span  # noqa: E402
from _hang_scene import GROUP_MUG, GROUP_RACK, HangLayout  # noqa: E402
from _hang_sim import HangResult, simulate  # noqa: E402
from _hang_truth import describe_objects, prompts_json, truth_json  # noqa: E402

from real2gym_addon.truth import load_truth, write_given_masks  # noqa: E402

GENERATED = ("video.mp4", "frames", "depth", "masks", "camera.json", "prompts.json", "trajectory.json", "truth.json",
             "README.md")  # fmt: skip


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size is WxH in pixels, e.g. 320x240, got {text!r}") from None
    if min(size) < 16:
        raise argparse.ArgumentTypeError(f"--size {text} is too small")
    return size


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (lengths in metres, angles in degrees)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="demo folder to write")
    add("--seed", type=int, default=0, help="random seed (tree, mug, peg, colours, camera, noise)")
    add("--frames", type=int, default=240, help="number of video frames (the script needs 7 s)")
    add("--fps", type=float, default=30.0)
    add("--size", type=_size, default=(320, 240), metavar="WxH", help="image size in pixels")
    add("--fovy", type=float, default=45.0, help="vertical field of view, deg")
    add(
        "--camera-azimuth", type=float, default=None, help="deg from world +x (default: drawn beside the peg)"
    )
    add("--camera-elevation", type=float, default=None, help="deg above the table (default: drawn, 15-35)")
    add("--camera-distance", type=float, default=None,
        help="m from the scene's middle (default: drawn, 0.7-1.0); farther where the scene does not fit")  # fmt: skip
    add("--peg-count", type=int, choices=(2, 3), default=None, help="pegs on the tree (default: drawn)")
    add(
        "--peg-length",
        type=float,
        default=None,
        help="m from the post's axis to a peg's tip (default: drawn)",
    )
    add("--miss", type=float, default=0.0, metavar="M",
        help="a failing demo: let go with the handle M metres short of the peg's tip, so the mug falls")  # fmt: skip
    add("--stereo-noise", type=float, default=0.0, metavar="SIGMA",
        help="depth noise (one sigma, m) at 0.5 m of a consumer stereo camera (a ZED: about 0.02), growing "
        "with the square of the depth, with 15-30 %% of the readings missing in patches")  # fmt: skip
    add("--with-trajectory", action="store_true", help="write trajectory.json (the gripper, camera frame)")
    add("--with-world-from-camera", action="store_true", help="camera pose in camera.json")
    add("--given-masks", action="store_true", help="write the true masks as masks/<name>/000000.png ...")
    add("--frames-dir", action="store_true", help="write frames/*.png, not video.mp4")
    args = parser.parse_args(argv)
    if args.miss < 0:
        parser.error("--miss is a distance, 0 or more")
    return args


def make_layout(args: argparse.Namespace) -> tuple[HangLayout, Script]:
    """The seed's scene with a camera that frames the rack, the mug and the hand, and the gripper's script."""
    rng = np.random.default_rng([args.seed, 7])
    radians = {k: None if v is None else float(np.deg2rad(v))
               for k, v in (("camera_azimuth", args.camera_azimuth), ("camera_elevation", args.camera_elevation))}  # fmt: skip
    layout = sample_layout(rng, args.peg_count, args.peg_length, args.miss, **radians)
    width, height = args.size
    layout = replace(layout, fovy=args.fovy, width=width, height=height)
    script = plan_script(layout, args.frames / args.fps)
    low, high = layout.rack.bounds()
    corners = np.array(np.meshgrid(*zip(low, high, strict=True))).reshape(3, -1).T
    mug = layout.mug
    hung, _ = mug_on_peg(layout, thread_span(layout)[1])
    points = [
        layout.rack.to_world(corners),
        np.array([[*mug.xy, 0.0], [*mug.xy, mug.height], hung, hung + [0, 0, mug.height], [*hung[:2], 0.0]]),
        np.array([script.pose_at(t)[0] for t in np.arange(0.0, args.frames / args.fps, 0.1)]),
    ]
    distance = args.camera_distance if args.camera_distance is not None else rng.uniform(0.7, 1.0)
    return place_camera(layout, np.concatenate(points), distance), script


def _count_video_frames(path: Path) -> int:
    capture = cv2.VideoCapture(str(path))
    count = 0
    while capture.read()[0]:
        count += 1
    capture.release()
    return count


def generate(args: argparse.Namespace, staging: Path) -> dict:
    """Simulate, render and write the demo into ``staging``; return truth.json's data.

    Raises:
        RuntimeError: If the simulated demo did not go as the script meant (see ``_hang_sim``'s checks).
        ValueError: If the options describe a scene the script cannot film.
    """
    layout, script = make_layout(args)
    width, height = args.size
    position, quat, _ = script.pose_at(0.0)
    model = build_model(layout, position, quat, np.random.default_rng([args.seed, 2]))
    objects = describe_objects(layout)
    for spec in objects:
        spec.mass = float(model.body(spec.body).mass[0])
    intr = Intrinsics.from_fovy(width, height, args.fovy)
    noise = np.random.default_rng([args.seed, 1])
    w_from_c = world_from_camera(layout)
    first_masks: dict[str, np.ndarray] = {}
    if args.frames_dir:
        (staging / "frames").mkdir()
        writer = None
    else:
        writer = cv2.VideoWriter(str(staging / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), args.fps,
                                 (width, height))  # fmt: skip
        if not writer.isOpened():
            raise RuntimeError("OpenCV cannot write mp4v video here; use --frames-dir")
    (staging / "depth").mkdir()
    renderer = DemoRenderer(model, width, height, {"mug": GROUP_MUG, "rack": GROUP_RACK})

    def on_frame(index: int, data) -> None:
        images = renderer.render(data)
        bgr = cv2.cvtColor(noisy_rgb(images.rgb, noise), cv2.COLOR_RGB2BGR)
        if writer is None:
            cv2.imwrite(str(staging / "frames" / f"{index:06d}.png"), bgr)
        else:
            writer.write(bgr)
        depth = sensor_depth(images.depth, intr.fx, noise, args.stereo_noise)
        cv2.imwrite(str(staging / "depth" / f"{index:06d}.png"), depth, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        for spec in objects:
            body = data.body(spec.body)
            entries = pose_entries(w_from_c, body.xpos, body.xquat, spec.centre)
            mask = images.masks[spec.name]
            spec.frames.append(truth_frame(index, spec, entries, mask, images.alone_pixels[spec.name]))
            if index == 0:
                first_masks[spec.name] = mask

    try:
        result = simulate(model, layout, script, args.frames, args.fps, on_frame)
    finally:
        renderer.close()
        if writer is not None:
            writer.release()
    if result.failures:
        raise RuntimeError("; ".join(result.failures))
    if writer is not None and (count := _count_video_frames(staging / "video.mp4")) != args.frames:
        raise RuntimeError(f"video.mp4 reads back {count} frames, expected {args.frames}")

    generator = {"tool": "tools/make_hang_demo.py", "seed": args.seed, "argv": sys.argv[1:],
                 "renderer": "MuJoCo (OpenGL)", "miss_m": args.miss}  # fmt: skip
    truth = truth_json(layout, intr, args.fps, objects, result, generator)
    files = {
        "camera.json": camera_json(intr, layout, args.with_world_from_camera)
        | ({"fps": args.fps} if args.frames_dir else {}),
        "prompts.json": prompts_json(objects, first_masks),
        "truth.json": truth,
    }
    if args.with_trajectory:
        files["trajectory.json"] = trajectory_json(truth["gripper"]["frames"])
    for name, content in files.items():
        (staging / name).write_text(json.dumps(content, indent=None if name == "truth.json" else 2) + "\n")
    if args.given_masks:
        write_given_masks(load_truth(staging), staging, [o.name for o in objects])
    (staging / "README.md").write_text(readme(args, layout, result))
    return truth


def readme(args: argparse.Namespace, layout: HangLayout, result: HangResult) -> str:
    """The demo folder's README.md: what it shows, its files, its keyframes, how it was made."""
    rack, mug = layout.rack, layout.mug
    pegs = ", ".join(
        f"{h * 100:.1f} cm at {np.rad2deg(a) % 360:.0f} deg"
        for h, a in zip(rack.peg_heights, rack.peg_azimuths, strict=True)
    )
    tree = (f"a mug tree ({rack.post_height * 100:.1f} cm post on a {rack.base_radius * 200:.1f} cm base; "
            f"{len(rack.peg_heights)} pegs {rack.peg_length * 100:.1f} cm long rising {np.rad2deg(rack.peg_elevation):.0f} deg: "
            f"{pegs})")  # fmt: skip
    cup = (f"a mug {mug.outer_radius * 200:.1f} cm wide and {mug.height * 100:.1f} cm tall with a C-shaped handle "
           f"({mug.mass * 1000:.0f} g)")  # fmt: skip
    if layout.miss:
        story = (f"carries it towards peg {layout.peg} but lets go with the handle {layout.miss * 100:.1f} cm short of "
                 "the peg's tip: the mug falls (a demo that must fail)")  # fmt: skip
    else:
        story = (f"threads its handle on peg {layout.peg} towards the post, seats the handle's upper arm on the peg, "
                 "tips the mug about the peg until it hangs as it will, lets go and backs away; the mug hangs from "
                 "the peg")  # fmt: skip
    keys = ", ".join(f"{e['event']} {e['frame']}" for e in result.events)
    files = [
        ("video.mp4" if not args.frames_dir else "frames/", "colour video with sensor noise"),
        (
            "camera.json",
            "pinhole intrinsics" + (", world_from_camera" if args.with_world_from_camera else ""),
        ),
        ("depth/", "16-bit depth PNGs in mm, stereo-like noise, holes"),
        ("prompts.json", "boxes and points on the mug and the rack on frame 0; the task `hang`"),
        *(
            [("trajectory.json", "the gripper's grasp-centre pose and opening per frame, camera frame")]
            if args.with_trajectory
            else []
        ),  # fmt: skip
        *([("masks/", "the true visible masks, one folder per object")] if args.given_masks else []),
        ("truth.json", "ground truth for scoring only (poses, RLE masks, shape parameters, keyframes)"),
    ]
    table = "\n".join(f"| `{name}` | {text} |" for name, text in files)
    width, height = args.size
    command = " ".join(["MUJOCO_GL=egl .venv/bin/python tools/make_hang_demo.py", *sys.argv[1:]])
    return (
        f"# Hang a mug on a mug tree (seed {args.seed}{', missed' if layout.miss else ''})\n\n"
        f"A simulated robot demonstration in the demo-folder form of docs/data-contract.md. {tree.capitalize()} "
        f"stands on a table beside {cup}. A floating parallel-jaw gripper picks the mug up by its handle, "
        f"{story}. One fixed camera, {args.frames} frames, {width}x{height}, {args.fps:g} fps.\n\n"
        f"| file | content |\n|---|---|\n{table}\n\nKeyframes (from the simulation's contacts): {keys}.\n\n"
        f"Generated by tools/make_hang_demo.py, which checks the outcome in the simulation:\n\n"
        f"```sh\n{command}\n```\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the generator; return the process exit status."""
    args = parse_args(argv)
    started = time.monotonic()
    out = args.out.resolve()
    try:
        with staged_output(out, GENERATED) as staging:
            truth = generate(args, staging)
    except ValueError as error:
        print(f"make_hang_demo: bad options: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"make_hang_demo: failed: {error}", file=sys.stderr)
        return 1
    keys = ", ".join(f"{k['event']} {k['frame']}" for k in truth["keyframes"])
    check = truth["checks"]["missed_on_purpose" if args.miss else "mug_hangs"]
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"make_hang_demo: wrote {out}")
    print(
        f"make_hang_demo: seed {args.seed}, {args.frames} frames {args.size[0]}x{args.size[1]} @ {args.fps:g} fps; "
        f"{keys}; mug ends {max(check['lowest_above_table_m'], 0.0) * 100:.1f} cm above the table touching pegs "
        f"{check['pegs_touched']}; {size / 1e6:.2f} MB; {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
