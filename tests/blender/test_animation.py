"""Fast keyframe writes on both action APIs (legacy on 4.3, slotted on 4.4+ and 5.x)."""

from __future__ import annotations

import importlib
import math
import time

import bpy
import pytest

MODULE = "bl_ext.user_default.real2gym"


def _samples(count: int, offset: float):
    frames = list(range(count))
    locations = [(offset + 0.01 * f, math.sin(f / 10.0), 0.002 * f) for f in frames]
    angles = [(0.0, 0.0, 0.05 * f) for f in frames]
    return frames, locations, angles


def test_keyframes_play_back_on_this_blender(extension, empty_scene) -> None:
    import numpy as np

    animation = importlib.import_module(f"{MODULE}.bridge.animation")
    objects = [bpy.data.objects.new(f"Body{i}", None) for i in range(3)]
    for obj in objects:
        empty_scene.collection.objects.link(obj)
    for i, obj in enumerate(objects):
        frames, locations, angles = _samples(120, i)
        animation.write_keyframes(obj, "location", np.array(frames), np.array(locations))
        animation.write_keyframes(obj, "rotation_euler", np.array(frames), np.array(angles))
    # Rewriting replaces the curves instead of adding keys.
    animation.write_keyframes(objects[0], "location", np.array(frames), np.array(_samples(120, 0)[1]))
    assert animation.has_slotted_actions() == (bpy.app.version >= (4, 4, 0))
    for frame in (0, 37, 119):
        empty_scene.frame_set(frame)
        for i, obj in enumerate(objects):
            expected = _samples(120, i)[1][frame]
            assert tuple(obj.location) == pytest.approx(expected, abs=1e-5)
            assert obj.rotation_euler.z == pytest.approx(0.05 * frame, abs=1e-5)
    curves = [c for c in _all_fcurves(objects[0]) if c.data_path == "location"]
    assert len(curves) == 3 and all(len(c.keyframe_points) == 120 for c in curves)


def _all_fcurves(obj):
    action = obj.animation_data.action
    if hasattr(action, "layers") and bpy.app.version >= (4, 4, 0):
        return [
            c
            for layer in action.layers
            for strip in layer.strips
            for bag in strip.channelbags
            for c in bag.fcurves
        ]
    return list(action.fcurves)


def test_bulk_writes_beat_keyframe_insert(extension, empty_scene) -> None:
    """A floor, not the benchmark: the bulk path must be clearly faster."""
    import numpy as np

    animation = importlib.import_module(f"{MODULE}.bridge.animation")
    frames, locations, _ = _samples(300, 0.0)
    bulk = bpy.data.objects.new("Bulk", None)
    started = time.perf_counter()
    animation.write_keyframes(bulk, "location", np.array(frames), np.array(locations))
    bulk_time = time.perf_counter() - started
    slow = bpy.data.objects.new("Slow", None)
    started = time.perf_counter()
    for frame, location in zip(frames, locations, strict=True):
        slow.location = location
        slow.keyframe_insert("location", frame=frame)
    insert_time = time.perf_counter() - started
    assert insert_time / bulk_time > 5, (insert_time, bulk_time)
