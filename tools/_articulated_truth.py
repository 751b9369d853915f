"""prompts.json and truth.json of an articulated scene (docs/data-contract.md, "The seed's other tasks").

The body is an object of shape ``cabinet`` with its part in ``parts``; the truth has the part as
an object of its own named ``<body>.<part>`` (``"part_of"`` the body) and a top-level ``joints``
list: per joint its type, axis and a point on it in the world frame (z up, z = 0 on the table),
the range the video shows, the value on every frame and the closed value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _articulated_scene import WALL, ArticulatedLayout
from _articulated_sim import ArticulatedResult
from _demo_gripper import FINGER_TRAVEL
from _demo_render import Intrinsics
from _demo_truth import ObjectSpec, gripper_entries, prompt_entry, world_from_camera

from real2gym_addon.truth import mask_prompt

TRUTH_VERSION = 1
_DIGITS = 6


def _r(values: Any) -> list[float]:
    return [round(float(v), _DIGITS) + 0.0 for v in np.ravel(values)]


def describe_objects(layout: ArticulatedLayout) -> list[ObjectSpec]:
    """The body, its part and (microwave scene) the cup, as prompts and truth describe them.

    The body's frame is the body frame of ``_articulated_scene`` (its opening faces +y); the part's
    box is a door's panel (its handle in ``params``) or a drawer's front and tray, in the part frame.
    """
    w, d, h = layout.size
    body_params: dict[str, Any] = {"wall_thickness": WALL, "opening": "+y"}
    if layout.cavity is not None:
        body_params["cavity_body_frame"] = _r(layout.cavity)
    if layout.control_width:
        body_params["control_panel_width"] = round(layout.control_width, _DIGITS)
    objects = [
        ObjectSpec(
            layout.body_name,
            layout.body_name,
            "static",
            "cabinet",
            "cabinet",
            [w, d, h],
            np.array([0.0, 0.0, h / 2]),
            body_params,
        ),  # fmt: skip
    ]
    part_params: dict[str, Any] = {"part_of": layout.body_name, "part": layout.part_name}
    if layout.handle is not None:
        centre, size = layout.handle.box()
        part_params["handle"] = {"centre_part_frame": _r(centre), "size": _r(size), "radius": layout.handle.radius,
                                 "bar_axis": "xyz"[layout.handle.axis]}  # fmt: skip
    objects.append(
        ObjectSpec(
            layout.part_label,
            f"{layout.body_name}_{layout.part_name}",
            "part",
            "auto",
            "box",
            layout.part_size.tolist(),
            layout.part_centre,
            part_params,
        )  # fmt: skip
    )
    if layout.cup is not None:
        cup = layout.cup
        objects.append(
            ObjectSpec(
                "cup",
                "cup",
                "manipulated",
                "cup",
                "cup",
                [2 * cup.radius, 2 * cup.radius, cup.height],
                np.array([0.0, 0.0, cup.height / 2]),
                {
                    "outer_radius": cup.radius,
                    "inner_radius": cup.radius - cup.wall,
                    "wall_thickness": cup.wall,
                    "bottom_thickness": cup.bottom,
                    "height": cup.height,
                },
            )  # fmt: skip
        )
    return objects


def joint_entry(layout: ArticulatedLayout, q: list[float], inertia: float = 0.0) -> dict[str, Any]:
    """truth.json's ``joints`` entry of the scene's joint.

    Args:
        layout: The scene.
        q: The joint's value on every video frame (rad or m).
        inertia: What the joint moves (kg*m^2 or kg, armature included): ``damping / inertia`` is how fast
            the part slows on its own.

    Returns:
        ``object``, ``part``, ``type``, ``axis_world`` (unit, positive q opens), ``pivot_world`` (a
        hinge: the bottom end of its axis; a slide: the drawer front's middle when closed), ``range``
        (lowest and highest q in the video), ``q`` per frame, ``closed_q``, ``limits`` (the model's),
        ``damping``, ``frictionloss``, ``inertia``, ``unit``.
    """
    return {
        "object": layout.body_name,
        "part": layout.part_name,
        "type": layout.joint_type,
        "axis_world": _r(layout.rotation @ layout.axis),
        "pivot_world": _r(layout.to_world(layout.pivot)),
        "range": _r([min(q), max(q)]),
        "q": _r(q),
        "closed_q": 0.0,
        "limits": _r(layout.q_range),
        "damping": round(layout.damping, _DIGITS),
        "frictionloss": round(layout.frictionloss, _DIGITS),
        "inertia": round(inertia, _DIGITS),
        "unit": "rad" if layout.joint_type == "hinge" else "m",
    }


def _handle_box(layout: ArticulatedLayout, intr: Intrinsics, w_from_c: np.ndarray, q: float) -> list[int]:
    """The handle's box in the image with the joint at ``q``: its 3-D box's corners projected, clipped."""
    centre, size = layout.handle.box()
    corners = centre + size / 2 * np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    rot, origin = layout.part_in_body(q)
    world = layout.to_world(corners @ rot.T + origin)
    cam = (world - w_from_c[:3, 3]) @ w_from_c[:3, :3]
    pixels = intr.project(cam)
    low = np.clip(np.floor(pixels.min(axis=0)), 0, [intr.width - 1, intr.height - 1]).astype(int)
    high = np.clip(np.ceil(pixels.max(axis=0)), 0, [intr.width - 1, intr.height - 1]).astype(int)
    return [int(low[0]), int(low[1]), int(high[0]), int(high[1])]


def part_prompt(
    layout: ArticulatedLayout, masks: list[np.ndarray], intr: Intrinsics, q: list[float], before: int
) -> dict[str, Any]:
    """prompts.json's ``parts`` entry: a box and a point on the frame where the part shows best.

    That frame is the first one before ``before`` (the hand's first touch) on which the part's
    visible area is at least 90 % of its largest there (frame 0 when nothing hides it).

    Args:
        layout: The scene.
        masks: The part's visible mask on every frame, (H, W) bool.
        intr: The camera's intrinsics.
        q: The joint's value on every frame.
        before: Frames from here on are not prompt frames (the hand may hide or move the part).
    """
    areas = np.array([m.sum() for m in masks[: max(before, 1)]])
    if not areas.max():
        raise ValueError(f"the {layout.part_label} is not seen before the hand reaches it; move the camera")
    frame = int(np.flatnonzero(areas >= 0.9 * areas.max())[0])
    box, point = mask_prompt(masks[frame])
    entry: dict[str, Any] = {"name": layout.part_name, "frame": frame, "box": box, "points": [[*point, 1]],
                             "joint": "auto"}  # fmt: skip
    if layout.handle is not None:
        entry["handle"] = _handle_box(layout, intr, world_from_camera(layout), q[frame])
    return entry


def prompts_json(
    layout: ArticulatedLayout,
    objects: list[ObjectSpec],
    first_masks: dict[str, np.ndarray],
    part: dict[str, Any],
    task: dict[str, Any],
    rgb_only: bool,
) -> dict[str, Any]:
    """prompts.json: the body (shape ``cabinet``, with its part), the cup, and the task.

    Args:
        layout: The scene.
        objects: From ``describe_objects``.
        first_masks: Object name to its visible mask on frame 0.
        part: The part's entry (``part_prompt``).
        task: The task.
        rgb_only: Give the body's known size (no depth: it sets the metric scale).
    """
    entries = []
    for spec in objects:
        if spec.role == "part":
            continue
        entry = prompt_entry(spec, first_masks[spec.name])
        if spec.name == layout.body_name:
            entry["parts"] = [part]
            if rgb_only:
                entry["size"] = _r(spec.size)
        entries.append(entry)
    return {"objects": entries, "task": task}


def task_json(layout: ArticulatedLayout) -> dict[str, Any]:
    """The scene's task (the contract's ``open``, ``close`` and ``steps``)."""
    if layout.scene == "microwave":
        return {"type": "steps", "steps": [
            {"type": "place_in", "object": "cup", "target": layout.body_name},
            {"type": "close", "object": layout.body_name, "part": layout.part_name}]}  # fmt: skip
    return {"type": "open", "object": layout.body_name, "part": layout.part_name}


def truth_json(
    layout: ArticulatedLayout,
    intr: Intrinsics,
    fps: float,
    objects: list[ObjectSpec],
    result: ArticulatedResult,
    generator: dict[str, Any],
) -> dict[str, Any]:
    """truth.json in the existing format (camera, table, objects with poses and RLE masks, keyframes,
    gripper, checks) plus ``joints``; parts are objects named ``<body>.<part>`` with ``part_of``."""
    w_from_c = world_from_camera(layout)
    up_cam = w_from_c[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    entries = []
    for spec in objects:
        params = {k: (round(v, _DIGITS) if isinstance(v, float) else v) for k, v in spec.params.items()}
        entries.append({"name": spec.name, "shape": spec.shape, "role": spec.role, "size": _r(spec.size), **params,
                        "mass": round(spec.mass, _DIGITS), "frames": spec.frames})  # fmt: skip
    return {
        "version": TRUTH_VERSION,
        "generator": generator,
        "scene": layout.scene,
        "video": {"frames": len(result.frames), "fps": fps, "width": intr.width, "height": intr.height},
        "camera": {"fx": intr.fx, "fy": intr.fy, "cx": intr.cx, "cy": intr.cy},
        "world_from_camera": [_r(row) for row in w_from_c],
        "table": {"normal_cam": _r(up_cam), "offset_cam": round(float(w_from_c[2, 3]), _DIGITS)},
        "objects": entries,
        "joints": [joint_entry(layout, result.q, result.inertia)],
        "keyframes": result.events,
        "gripper": {
            "frame_of": "camera",
            "max_opening_m": 2 * FINGER_TRAVEL,
            "frames": gripper_entries(result, w_from_c),
        },
        "checks": result.checks,
    }
