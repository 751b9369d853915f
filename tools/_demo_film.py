"""Film a simulated demo into a demo folder (docs/data-contract.md), as the task generators share it.

``DemoFilm`` is called on every video frame the simulation reaches: it renders the demo camera
(``_demo_render``), writes the colour frame with sensor noise to video.mp4 (or frames/) and the depth to
depth/ (16-bit PNGs in mm, ``_demo_sensor``), and appends each object's pose and mask to its truth
(``_demo_truth``). ``write_folder`` then writes camera.json, prompts.json, truth.json and, as asked,
trajectory.json and masks/; ``files_table`` lists them in the folder's README.md. ``image_size`` and
``add_output_options`` are the generators' shared command-line options. Used by tools/make_pour_demo.py,
make_hang_demo.py, make_shelve_demo.py and make_insert_demo.py.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import cv2
import mujoco
import numpy as np
from _demo_render import DemoRenderer, FrameImages, Intrinsics
from _demo_sensor import noisy_rgb, sensor_depth
from _demo_truth import ObjectSpec, camera_json, pose_entries, trajectory_json, truth_frame, world_from_camera

from real2gym_addon.truth import load_truth, write_given_masks


def image_size(text: str) -> tuple[int, int]:
    """``--size WxH`` (pixels) as (width, height).

    Raises:
        argparse.ArgumentTypeError: If it is not two whole numbers of at least 16.
    """
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size is WxH in pixels, e.g. 320x240, got {text!r}") from None
    if min(size) < 16:
        raise argparse.ArgumentTypeError(f"--size {text} is too small")
    return size


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """The options that say what the folder holds besides the video: depth noise, the recording, the
    camera's pose, the true masks, frames instead of a video."""
    add = parser.add_argument
    add("--stereo-noise", type=float, default=0.0, metavar="SIGMA",
        help="depth noise (one sigma, m) at 0.5 m of a consumer stereo camera (a ZED: about 0.02), growing "
        "with the square of the depth, with 15-30 %% of the readings missing in patches")  # fmt: skip
    add("--with-trajectory", action="store_true", help="write trajectory.json (the gripper, camera frame)")
    add("--with-world-from-camera", action="store_true", help="camera pose in camera.json")
    add("--given-masks", action="store_true", help="write the true masks as masks/<name>/000000.png ...")
    add("--frames-dir", action="store_true", help="write frames/*.png, not video.mp4")
    add("--renderer", choices=("mujoco", "cycles"), default="mujoco",
        help="film with MuJoCo's renderer, or the same simulation with Blender's Cycles (the bpy module) in the "
        "seed's own looks (tools/_task_cycles.py)")  # fmt: skip
    add("--samples", type=int, default=4, help="Cycles samples per pixel (denoised), with --renderer cycles")


def count_video_frames(path: Path) -> int:
    """How many frames OpenCV reads back from the video at ``path``."""
    capture = cv2.VideoCapture(str(path))
    count = 0
    while capture.read()[0]:
        count += 1
    capture.release()
    return count


class DemoFilm:
    """Writes the frames of a demo into ``staging`` as the simulation reaches them (MuJoCo's renderer), or
    keeps the states and films them with Cycles once the simulation went as meant (``--renderer cycles``:
    call :meth:`finish`).

    Args:
        staging: The folder being filled (``_demo_output.staged_output``).
        model: The compiled scene, with the camera ``demo``.
        layout: The scene's layout: ``camera_pos``, ``camera_rot``, ``fovy``, ``width`` and ``height``.
        objects: The objects whose truth is filled in (their ``frames`` grow by one per frame).
        args: The generator's options: ``seed``, ``fps``, ``frames``, ``frames_dir``, ``stereo_noise``,
            ``renderer`` and ``samples``.
        noise: Random generator of the sensor noise.
        object_groups: Object name to the geom group that holds its visible geoms.
        unmasked_groups: Further groups shown but in no object's mask (``DemoRenderer``).

    Raises:
        RuntimeError: If OpenCV cannot write an mp4v video here.
    """

    def __init__(
        self,
        staging: Path,
        model: mujoco.MjModel,
        layout: Any,
        objects: list[ObjectSpec],
        args: argparse.Namespace,
        noise: np.random.Generator,
        object_groups: dict[str, int],
        unmasked_groups: tuple[int, ...] = (),
    ) -> None:
        self.staging, self.objects, self.noise = staging, objects, noise
        self.intr = Intrinsics.from_fovy(layout.width, layout.height, layout.fovy)
        self.w_from_c = world_from_camera(layout)
        self.stereo_noise = args.stereo_noise
        self.first_masks: dict[str, np.ndarray] = {}
        if args.frames_dir:
            (staging / "frames").mkdir()
            self.writer = None
        else:
            self.writer = cv2.VideoWriter(str(staging / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), args.fps,
                                          (layout.width, layout.height))  # fmt: skip
            if not self.writer.isOpened():
                raise RuntimeError("OpenCV cannot write mp4v video here; use --frames-dir")
        (staging / "depth").mkdir()
        self.cycles = args.renderer == "cycles"
        self.renderer = None
        if self.cycles:
            self.model, self.layout, self.groups, self.unmasked = (
                model,
                layout,
                object_groups,
                unmasked_groups,
            )
            self.seed, self.samples, self.frames = args.seed, args.samples, args.frames
            self.states: list[tuple[np.ndarray, np.ndarray]] = []
            self.poses: list[list[tuple[np.ndarray, np.ndarray]]] = []
            self.looks = None
        else:
            self.renderer = DemoRenderer(model, layout.width, layout.height, object_groups, unmasked_groups)

    def on_frame(self, index: int, data: mujoco.MjData) -> None:
        """Render frame ``index`` of the state ``data``; write its colour and depth; add each object's truth.
        With Cycles, keep the state for :meth:`finish`."""
        poses = [
            (data.body(spec.body).xpos.copy(), data.body(spec.body).xquat.copy()) for spec in self.objects
        ]
        if self.cycles:
            self.states.append((data.geom_xpos.copy(), data.geom_xmat.copy()))
            self.poses.append(poses)
            return
        self._write(index, self.renderer.render(data), poses)

    def finish(self) -> None:
        """Film the kept states with Cycles and write them (``--renderer cycles``); nothing otherwise."""
        if not self.cycles:
            return
        from _task_cycles import draw_task_looks, film_task  # bpy is loaded for Cycles films only
        from _varied_blender import quiet_stdout

        middle = np.mean([position for position, _ in self.poses[0]], axis=0)
        self.looks = draw_task_looks(
            np.random.default_rng([self.seed, 5]), len(self.groups), middle, self.frames
        )
        layout = self.layout
        camera = (self.w_from_c, layout.fovy, (layout.width, layout.height))
        with tempfile.TemporaryDirectory(prefix="task-cycles-") as work, quiet_stdout(False):
            filmed = film_task(self.model, self.states, self.looks, self.groups, self.unmasked, camera,
                               self.samples, Path(work))  # fmt: skip
        for index, (images, poses) in enumerate(zip(filmed, self.poses, strict=True)):
            self._write(index, images, poses)

    def recorded(self) -> dict[str, Any]:
        """What truth.json's ``generator`` records of the filming."""
        if not self.cycles:
            return {"renderer": "MuJoCo (OpenGL)"}
        looks = self.looks
        return {"renderer": "Blender Cycles (CPU)", "samples": self.samples, "table": looks.table["kind"],
                "noise_sigma": round(looks.noise_sigma, 2), "jpeg_quality": [int(q) for q in looks.jpeg_quality]}  # fmt: skip

    def _write(self, index: int, images: FrameImages, poses: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Write frame ``index``'s colour (with sensor noise) and depth; add each object's truth."""
        if self.cycles:
            from _varied_truth import phone_frame

            rgb = cv2.cvtColor(images.rgb, cv2.COLOR_RGB2BGR)
            bgr = phone_frame(rgb, self.looks.noise_sigma, int(self.looks.jpeg_quality[index]), self.noise)
        else:
            bgr = cv2.cvtColor(noisy_rgb(images.rgb, self.noise), cv2.COLOR_RGB2BGR)
        if self.writer is None:
            cv2.imwrite(str(self.staging / "frames" / f"{index:06d}.png"), bgr)
        else:
            self.writer.write(bgr)
        depth = sensor_depth(images.depth, self.intr.fx, self.noise, self.stereo_noise)
        cv2.imwrite(str(self.staging / "depth" / f"{index:06d}.png"), depth, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        for spec, (position, quat) in zip(self.objects, poses, strict=True):
            entries = pose_entries(self.w_from_c, position, quat, spec.centre)
            mask = images.masks[spec.name]
            spec.frames.append(truth_frame(index, spec, entries, mask, images.alone_pixels[spec.name]))
            if index == 0:
                self.first_masks[spec.name] = mask

    def close(self) -> None:
        """Free the renderer and finish the video file."""
        if self.renderer is not None:
            self.renderer.close()
        if self.writer is not None:
            self.writer.release()

    def check_video(self, frames: int) -> None:
        """Read the video back (after ``close``).

        Raises:
            RuntimeError: If it does not hold ``frames`` frames.
        """
        if self.writer is not None and (count := count_video_frames(self.staging / "video.mp4")) != frames:
            raise RuntimeError(f"video.mp4 reads back {count} frames, expected {frames}")


def write_folder(
    staging: Path,
    args: argparse.Namespace,
    film: DemoFilm,
    layout: Any,
    prompts: dict[str, Any],
    truth: dict[str, Any],
) -> None:
    """Write camera.json (with ``fps`` where there is no video), prompts.json, truth.json and, as ``args``
    asks, trajectory.json (from the truth's gripper) and masks/ (from the truth's masks)."""
    files = {
        "camera.json": camera_json(film.intr, layout, args.with_world_from_camera)
        | ({"fps": args.fps} if args.frames_dir else {}),
        "prompts.json": prompts,
        "truth.json": truth,
    }
    if args.with_trajectory:
        files["trajectory.json"] = trajectory_json(truth["gripper"]["frames"])
    for name, content in files.items():
        (staging / name).write_text(json.dumps(content, indent=None if name == "truth.json" else 2) + "\n")
    if args.given_masks:
        write_given_masks(load_truth(staging), staging, [o.name for o in film.objects])


def files_table(args: argparse.Namespace, prompts: str, truth: str) -> str:
    """The README.md's table of the folder's files, as ``args`` (``add_output_options``) made them.

    Args:
        args: The generator's options.
        prompts: What prompts.json holds (a Markdown phrase).
        truth: What truth.json holds besides the ground truth for scoring (a phrase for the parentheses).
    """
    files = [
        ("video.mp4" if not args.frames_dir else "frames/", "colour video with sensor noise"),
        (
            "camera.json",
            "pinhole intrinsics" + (", world_from_camera" if args.with_world_from_camera else ""),
        ),
        ("depth/", "16-bit depth PNGs in mm, stereo-like noise, holes"),
        ("prompts.json", prompts),
        *(
            [("trajectory.json", "the gripper's grasp-centre pose and opening per frame, camera frame")]
            if args.with_trajectory
            else []
        ),
        *([("masks/", "the true visible masks, one folder per object")] if args.given_masks else []),
        ("truth.json", f"ground truth for scoring only ({truth})"),
    ]
    rows = "\n".join(f"| `{name}` | {text} |" for name, text in files)
    return f"| file | content |\n|---|---|\n{rows}"
