"""The verifier's speed: export, simulation overhead, and keyframe import into Blender.

Baselines measured in the same run: a bare loop of ``mj_step`` over the same
model and number of steps that sets the same gripper controls every step and
records nothing (the verifier's overhead must stay <= 1.2x of it); the same loop
with no controls at all (the scene idles: less contact work); and Blender's
``keyframe_insert`` on the same keyframes (the bulk write must be >= 50x faster).
Single core: OpenCV and BLAS threads are limited to one.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
from run import Figure

NAME = "verifier"


def _geometry(demo_dir):
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.geometry.stage import run_geometry
    from real2gym.real2gym_addon.segmentation.backends import SegmentationOptions, make_segmenter
    from real2gym.real2gym_addon.segmentation.run import segment_demo

    demo = load_demo(demo_dir)
    segmentation = segment_demo(demo, make_segmenter(SegmentationOptions()))
    return demo, run_geometry(demo, segmentation)


def _bare_loop(model, steps: int) -> float:
    import mujoco

    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    started = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return time.perf_counter() - started


def _keyframes() -> list[Figure]:
    try:
        import bpy

        from real2gym.bridge.animation import write_keyframes
    except ImportError as e:
        return [Figure(NAME, "keyframe import", float("nan"), "s", target=f"needs bpy ({e})", passed=False)]
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    frames = np.arange(1000, dtype=np.float32)
    objects = [bpy.data.objects.new(f"Body{i}", None) for i in range(10)]
    values = [np.c_[np.sin(frames / 50 + i), np.cos(frames / 70), frames * 1e-3] for i in range(10)]
    started = time.perf_counter()
    for obj, value in zip(objects, values, strict=True):
        write_keyframes(obj, "location", frames, value)
        write_keyframes(obj, "rotation_euler", frames, value * 0.5)
    bulk = time.perf_counter() - started
    slow_objects = [bpy.data.objects.new(f"Slow{i}", None) for i in range(2)]
    started = time.perf_counter()
    for obj, value in zip(slow_objects, values, strict=False):
        for frame, row in zip(frames, value, strict=True):
            obj.location = row
            obj.rotation_euler = row * 0.5
            obj.keyframe_insert("location", frame=float(frame))
            obj.keyframe_insert("rotation_euler", frame=float(frame))
    insert = (time.perf_counter() - started) * 5  # 2 of the 10 objects, scaled to 10
    return [
        Figure(NAME, "keyframe import 10 objects x 1000 frames", bulk, "s", insert, "keyframe_insert (2 objects x5)",
               "< 0.05 s and >= 50x faster", bulk < 0.05 and insert / bulk >= 50),
    ]  # fmt: skip


def run(args) -> list[Figure]:
    """Measures export, simulation overhead and real-time factor on ``args.demo``."""
    import cv2

    from real2gym.real2gym_addon.verify.run import verify_scene

    cv2.setNumThreads(1)
    demo, geometry = _geometry(args.demo)
    with tempfile.TemporaryDirectory() as folder:
        result = verify_scene(geometry, demo.camera, {"type": demo.task.type, "object": demo.task.object,
                                                      "target": demo.task.target}, demo.video.fps, Path(folder))  # fmt: skip
    from real2gym.real2gym_addon.verify.simulate import replay, simulate

    record, model = result.record, result.scene.model
    task_fps, name_map = demo.video.fps, result.scene.name_map
    wall = min(
        [record.wall_s]
        + [simulate(model, name_map, geometry.gripper, task_fps, record.frames).wall_s for _ in range(2)]
    )
    bare = min(_bare_loop(model, record.steps) for _ in range(3))
    same_motion = min(replay(model, geometry.gripper, demo.video.fps, record.frames)[0] for _ in range(3))
    simulated = record.steps * model.opt.timestep
    factor = simulated / wall
    figures = [
        Figure(NAME, "export and compile", result.timing["export"], "s", target="< 2 s", passed=result.timing["export"] < 2),
        Figure(NAME, "simulation wall time", wall, "s", same_motion,
               "bare loop, same controls", "<= 1.2x", wall / same_motion <= 1.2),
        Figure(NAME, "simulation wall time (vs idle)", wall, "s", bare, "bare loop, no controls"),
        Figure(NAME, "real-time factor", factor, "x", target=">= 20x", passed=factor >= 20),
        Figure(NAME, "demo verified", float(result.passed), "", target="1", passed=result.passed),
    ]  # fmt: skip
    return figures + _keyframes()
