"""Drawing a varied demo's scene from a seed.

Everything is decided here, in plain numpy, before Blender is touched: the table's
material, 2 to 4 objects (blocks, cans, open cups, thin plates) and where they stand,
which of the hard cases the scene shows (white objects on a white table, look-alike
objects side by side, an object carried towards the camera), the camera, the moving key
light and the brightness change, and the path of the hand that carries the manipulated
object to its target. A layout is kept only if every object stays in the picture, 15 to
80 pixels across at 640x480, and no two objects' boxes overlap on the prompt frame. The
same seed gives the same scene at any image size and length.

World frame: z up, z = 0 on the table top, metres (docs/data-contract.md). Colours are linear RGB.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from _varied_scene import (
    CASES,
    SHAPES,
    T_ENTER,
    T_GONE,
    T_GRASP,
    T_LIFT_START,
    T_LIFTED,
    T_OVER,
    T_PLACED,
    T_PRE,
    T_RELEASE,
    T_UP,
    Camera,
    Item,
    Scene,
    linear,
)

NAMES = {"box": "block", "cylinder": "can", "cup": "cup", "plate": "plate"}
PLATE_THICKNESS = 0.012
CUP_WALL = 0.004
CUP_BOTTOM = 0.006
PIXELS_PER_METRE = (480.0, 600.0)
"""At the scene centre, for a 480-pixel-high image (the framing is the same at any size)."""
EDGE_MARGIN = 0.03
"""Share of the image side kept free around every object, on every frame."""
OBJECT_PIXELS = (15.0, 80.0)
"""Smallest and largest extent across of an object's image box, at 640x480."""

_SKIN_SRGB = (
    (0.96, 0.80, 0.69),
    (0.89, 0.70, 0.58),
    (0.80, 0.60, 0.46),
    (0.68, 0.48, 0.34),
    (0.52, 0.36, 0.25),
    (0.36, 0.24, 0.17),
)
_OBJECT_SRGB = (
    (0.80, 0.12, 0.10),
    (0.15, 0.55, 0.20),
    (0.12, 0.30, 0.75),
    (0.95, 0.78, 0.12),
    (0.95, 0.45, 0.08),
    (0.50, 0.20, 0.60),
    (0.10, 0.55, 0.55),
    (0.45, 0.28, 0.15),
    (0.45, 0.45, 0.48),
    (0.08, 0.08, 0.09),
    (0.85, 0.30, 0.45),
    (0.55, 0.65, 0.20),
)
_WHITE_SRGB = ((0.93, 0.93, 0.91), (0.90, 0.90, 0.88), (0.95, 0.94, 0.90), (0.88, 0.89, 0.91))


def _waypoints(scene_items: list[Item], target_centre: np.ndarray, approach: np.ndarray, lift: float):
    """(time, grasp centre, turn share) of the hand's path."""
    item = scene_items[0]
    start = np.r_[item.xy, item.size[2] / 2]
    away = np.r_[approach, 0.0]
    up = np.array([0.0, 0.0, 1.0])
    carry_z = max(start[2], target_centre[2]) + lift
    return [
        (T_ENTER, start + 0.45 * away + 0.26 * up, 0.0),
        (T_PRE, start + 0.08 * away + 0.07 * up, 0.0),
        (T_GRASP, start, 0.0),
        (T_LIFT_START, start, 0.0),
        (T_LIFTED, np.r_[start[:2], carry_z], 0.2),
        (T_OVER, np.r_[target_centre[:2], carry_z], 1.0),
        (T_PLACED, target_centre, 1.0),
        (T_RELEASE, target_centre, 1.0),
        (T_UP, target_centre + 0.05 * away + 0.07 * up, 1.0),
        (T_GONE, target_centre + 0.45 * away + 0.30 * up, 1.0),
        (1.0, target_centre + 0.45 * away + 0.30 * up, 1.0),
    ]


def _make_item(rng: np.random.Generator, shape: str, role: str, colour, small: bool = False) -> Item:
    """An object of ``shape`` with sizes drawn for it (``small``: one a hand carries)."""
    params: dict[str, float] = {}
    if shape == "box":
        sx, sy = rng.uniform(0.03, 0.05 if small else 0.06, 2)
        size = np.array([sx, sy, rng.uniform(0.03, 0.065)])
    elif shape == "cylinder":
        r = rng.uniform(0.018, 0.026) if small else rng.uniform(0.022, 0.034)
        h = rng.uniform(0.05, 0.08) if small else rng.uniform(0.07, 0.11)
        size, params = np.array([2 * r, 2 * r, h]), {"radius": r, "height": h}
    elif shape == "cup":
        r = rng.uniform(0.028, 0.034) if small else rng.uniform(0.034, 0.045)
        h = rng.uniform(0.055, 0.075) if small else rng.uniform(0.065, 0.095)
        params = {
            "outer_radius": r,
            "inner_radius": r - CUP_WALL,
            "wall_thickness": CUP_WALL,
            "bottom_thickness": CUP_BOTTOM,
            "height": h,
        }
        size = np.array([2 * r, 2 * r, h])
    else:
        r = rng.uniform(0.042, 0.056)
        size, params = np.array([2 * r, 2 * r, PLATE_THICKNESS]), {"radius": r, "height": PLATE_THICKNESS}
    return Item(
        name=NAMES[shape],
        shape=shape,
        size=size,
        params=params,
        colour=colour,
        roughness=float(rng.uniform(0.25, 0.7)),
        role=role,
        xy=np.zeros(2),
        yaw=float(rng.uniform(0, np.pi)),
    )


def _fit_in_cup(item: Item, cup: Item) -> None:
    """Shrinks a carried object so it drops into the cup with 6 mm to spare."""
    room = cup.params["inner_radius"] - 0.006
    if item.footprint > room:
        factor = room / item.footprint
        item.size[:2] *= factor
        if "radius" in item.params:
            item.params["radius"] *= factor


def _colours(rng: np.random.Generator, count: int) -> list[tuple[float, float, float]]:
    picks = rng.choice(len(_OBJECT_SRGB), count, replace=False)
    return [linear(np.clip(np.asarray(_OBJECT_SRGB[i]) + rng.uniform(-0.04, 0.04, 3), 0, 1)) for i in picks]


def _camera(
    rng: np.random.Generator, width: int, height: int, centre: np.ndarray
) -> tuple[Camera, np.ndarray]:
    """A camera looking down at ``centre`` from 30-60 degrees, FOV 45-65 degrees; also towards-camera."""
    elevation = float(rng.uniform(30, 60))
    fovy = float(rng.uniform(45, 65))
    azimuth = float(rng.uniform(0, 2 * np.pi))
    fy_480 = 240 / np.tan(np.deg2rad(fovy) / 2)
    distance = fy_480 / rng.uniform(*PIXELS_PER_METRE)
    towards = np.array([np.cos(azimuth), np.sin(azimuth)])
    e = np.deg2rad(elevation)
    target = np.r_[centre, 0.03]
    eye = target + distance * np.r_[np.cos(e) * towards, np.sin(e)]
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, forward], axis=1)
    pose[:3, 3] = eye
    return Camera(width, height, fovy, elevation, pose, float(distance)), towards


def _corners(item: Item, pose: np.ndarray) -> np.ndarray:
    half = item.size / 2
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return (signs * half) @ pose[:3, :3].T + pose[:3, 3]


def _in_view(scene: Scene) -> bool:
    """Every object stays inside the image (with a margin) on every frame, 15 to 80 px across at 640x480."""
    cam = scene.camera
    margin = EDGE_MARGIN * np.array([cam.width, cam.height])
    smallest, largest = (v * cam.height / 480 for v in OBJECT_PIXELS)
    poses = scene.item_poses(np.linspace(0, 1, 25))
    for row, at_time in enumerate(poses):
        for item, pose in zip(scene.items, at_time, strict=True):
            uv = cam.project(_corners(item, pose))
            if not np.isfinite(uv).all():
                return False
            across = uv.max(axis=0) - uv.min(axis=0)
            if across.max() > largest or (row == 0 and across.max() < smallest):
                return False
            if (uv.min(axis=0) < margin).any() or (
                uv.max(axis=0) > np.array([cam.width, cam.height]) - margin
            ).any():
                return False
    return True


def _boxes_apart(scene: Scene) -> bool:
    """On frame 0 no two objects' image boxes overlap (each prompt box shows one object)."""
    poses = scene.item_poses(np.zeros(1))
    gap = 2 * scene.camera.height / 480
    boxes = []
    for index, item in enumerate(scene.items):
        uv = scene.camera.project(_corners(item, poses[0, index]))
        boxes.append((*uv.min(axis=0) - gap, *uv.max(axis=0) + gap))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                return False
    return True


def _segment_distance(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    s = np.clip(np.dot(point - a, ab) / max(np.dot(ab, ab), 1e-12), 0, 1)
    return float(np.linalg.norm(point - (a + s * ab)))


def _place_extras(rng, items: list[Item], placed: list[Item], corridors, towards, lateral) -> bool:
    """Puts each of ``items`` on a free spot of the table; False when there is none."""
    for item in items:
        for _ in range(200):
            if item.twin_of is not None:
                twin = next(p for p in placed if p.name == item.twin_of)
                side = lateral * rng.choice([-1.0, 1.0]) + towards * rng.uniform(-0.5, 0.5)
                side /= np.linalg.norm(side)
                spot = twin.xy + side * (twin.footprint + item.footprint + rng.uniform(0.008, 0.03))
            else:
                spot = rng.uniform(-0.2, 0.2) * lateral + rng.uniform(-0.16, 0.12) * towards
            clear = all(np.linalg.norm(spot - p.xy) > p.footprint + item.footprint + 0.015 for p in placed)
            # A look-alike stands right beside the carried object: the hand passes close to it.
            room = [0.01 if item.twin_of is not None else width for _, _, width in corridors]
            clear &= all(
                _segment_distance(spot, a, b) > item.footprint + r
                for (a, b, _), r in zip(corridors, room, strict=True)
            )
            if clear:
                item.xy = spot
                placed.append(item)
                break
        else:
            return False
    return True


def draw_scene(
    seed: int, frames: int, width: int, height: int, attempt: int = 0, task: str | None = None
) -> Scene:
    """Draws a scene from ``seed`` (``attempt`` picks another one from the same seed).

    Args:
        seed: The scene's seed: the same seed gives the same scene.
        frames: Number of video frames.
        width: Image width (px).
        height: Image height (px).
        attempt: Which of the seed's scenes (a render check may reject one).
        task: The task type to film (``stack``: the object set on a larger free block; ``place_in``,
            ``place_on``, ``lift``); None draws it from the seed as before.

    Returns:
        A scene whose objects stay in view on every frame.

    Raises:
        RuntimeError: If no layout fits the view (never seen).
    """
    for tries in range(400):
        rng = np.random.default_rng([seed, attempt, tries])
        scene = _draw(rng, seed, frames, width, height, task)
        if scene is not None and _in_view(scene) and _boxes_apart(scene):
            return scene
    raise RuntimeError(f"seed {seed}: no layout keeps every object in view")


def _draw(
    rng: np.random.Generator, seed: int, frames: int, width: int, height: int, task: str | None = None
) -> Scene | None:
    cases = [CASES[seed % 4 - 1]] if seed % 4 else []
    cases += [c for c in CASES if c not in cases and rng.random() < 0.15]
    white = "white_on_white" in cases
    task_type = rng.choice(["place_in", "place_on", "lift"], p=[0.45, 0.35, 0.2])
    task_type = task or task_type  # drawn all the same: a seed's other draws do not shift
    carried_shape = rng.choice(
        ["box", "cylinder", "cup"] if task_type not in ("place_in", "stack") else ["box", "cylinder"],
        p=[0.5, 0.3, 0.2] if task_type not in ("place_in", "stack") else [0.6, 0.4],
    )
    count = int(rng.integers(2, 5)) if task_type != "lift" else int(rng.integers(2, 4))
    colours = _colours(rng, 4)
    whites = [linear(_WHITE_SRGB[i]) for i in rng.choice(len(_WHITE_SRGB), 2, replace=False)]
    carried = _make_item(rng, carried_shape, "manipulated", whites[0] if white else colours[0], small=True)
    items = [carried]
    target: Item | None = None
    if task_type == "place_in":
        target = _make_item(
            rng, "cup", "container", whites[1] if white and rng.random() < 0.5 else colours[1]
        )
        _fit_in_cup(carried, target)
    elif task_type == "place_on":
        target = _make_item(rng, "plate", "support", whites[1] if white else colours[1])
    elif task_type == "stack":  # a larger free block, 1.5-3 cm wider than what is set on it
        target = _make_item(rng, "box", "container", whites[1] if white else colours[1])
        target.size[:2] = np.maximum(target.size[:2], max(carried.size[:2]) + rng.uniform(0.015, 0.03))
        target.name = "base"
    if target is not None:
        items.append(target)
    extras: list[Item] = []
    if "lookalike" in cases:
        twin = dataclasses.replace(
            carried,
            size=carried.size.copy(),
            params=dict(carried.params),
            role="static",
            twin_of=carried.name,
            yaw=float(rng.uniform(0, np.pi)),
        )
        extras.append(twin)
    while len(items) + len(extras) < count:
        shape = rng.choice(SHAPES, p=[0.3, 0.3, 0.25, 0.15])
        extras.append(_make_item(rng, shape, "static", colours[2 + len(extras) % 2]))
    used: dict[str, int] = {}
    for item in items + extras:
        used[item.name] = used.get(item.name, 0) + 1
        if used[item.name] > 1:
            item.name = f"{item.name}_{used[item.name]}"

    camera_rng = np.random.default_rng(rng.integers(1 << 32))
    camera, towards = _camera(camera_rng, width, height, np.zeros(2))
    lateral = np.array([-towards[1], towards[0]])
    if "towards_camera" in cases:
        move = towards * rng.uniform(0.15, 0.22) + lateral * rng.uniform(-0.05, 0.05)
    else:
        move = lateral * rng.choice([-1.0, 1.0]) * rng.uniform(0.15, 0.24) + towards * rng.uniform(
            -0.05, 0.05
        )
    start = -move / 2 + rng.uniform(-0.03, 0.03, 2)
    carried.xy = start
    end = start + move
    if target is not None:
        target.xy = end
    angle = np.deg2rad(rng.uniform(-100, 100))
    approach = -towards * np.cos(angle) + lateral * np.sin(angle)
    corridors = [(start, end, 0.05), (start, start + 0.4 * approach, 0.07), (end, end + 0.4 * approach, 0.07)]
    if not _place_extras(rng, extras, list(items), corridors, towards, lateral):
        return None
    items += extras

    if task_type == "place_in":
        rest_z = target.params["bottom_thickness"] + carried.size[2] / 2
    elif task_type == "place_on":
        rest_z = PLATE_THICKNESS + carried.size[2] / 2
    elif task_type == "stack":
        rest_z = target.size[2] + carried.size[2] / 2
    else:
        rest_z = carried.size[2] / 2
    target_centre = np.r_[end, rest_z]
    lift = float(rng.uniform(0.03, 0.06)) + (target.size[2] if target is not None else 0.0)
    total_turn = float(np.deg2rad(rng.uniform(-35, 35)))

    e0 = rng.uniform(0, 2 * np.pi)
    swing = rng.uniform(0.7, 2.0) * rng.choice([-1.0, 1.0])
    light_height, light_radius = rng.uniform(0.9, 1.5), rng.uniform(0.4, 0.9)
    energy = np.full(frames, rng.uniform(25, 45) * light_height**2)
    ambient = np.full(frames, rng.uniform(0.08, 0.2))
    if rng.random() < 0.7:  # a cloud, a lamp switched, an auto-exposure jump
        factor = rng.choice([rng.uniform(0.3, 0.5), rng.uniform(1.8, 2.6)])
        at, ramp = rng.uniform(0.25, 0.75) * frames, max(1.0, rng.uniform(0.05, 0.2) * frames)
        share = np.clip((np.arange(frames) - at) / ramp, 0, 1)
        curve = (1 + (factor - 1) * share) / max(factor, 1.0)  # the brighter end at the nominal level
        energy *= curve
        ambient *= curve
    light = {
        "start": np.r_[light_radius * np.cos(e0), light_radius * np.sin(e0), light_height],
        "end": np.r_[light_radius * np.cos(e0 + swing), light_radius * np.sin(e0 + swing), light_height],
        "size": float(rng.uniform(0.3, 1.0)),
        "energy": energy,
        "ambient": ambient,
    }
    kind = (
        "white" if white else rng.choice(["wood", "checker", "white", "marble"], p=[0.35, 0.25, 0.15, 0.25])
    )
    table_colours = {
        "wood": [linear((0.55, 0.36, 0.2)), linear((0.36, 0.21, 0.11))],
        "checker": [
            linear((0.85, 0.85, 0.82)),
            linear(rng.choice([(0.2, 0.2, 0.22), (0.25, 0.35, 0.6), (0.6, 0.25, 0.2)])),
        ],
        "white": [linear((0.92, 0.92, 0.9)), linear((0.88, 0.88, 0.86))],
        "marble": [linear((0.9, 0.9, 0.88)), linear((0.45, 0.45, 0.48))],
    }[kind]
    skin = linear(
        np.clip(np.asarray(_SKIN_SRGB[rng.integers(len(_SKIN_SRGB))]) + rng.uniform(-0.03, 0.03, 3), 0, 1)
    )
    return Scene(
        seed=seed,
        frames=frames,
        cases=cases,
        table={
            "kind": str(kind),
            "colours": table_colours,
            "scale": float(rng.uniform(6, 14)),
            "roughness": float(rng.uniform(0.3, 0.6)),
        },
        wall_colour=linear(rng.uniform(0.45, 0.85, 3)),
        items=items,
        task={"type": str(task_type), "object": carried.name}
        | ({"target": target.name} if target is not None else {}),
        camera=camera,
        light=light,
        motion_blur=float(rng.uniform(0.3, 0.6)) if rng.random() < 0.5 else 0.0,
        fstop=float(rng.uniform(1.2, 2.8)) if rng.random() < 0.4 else None,
        skin=skin,
        sleeve=linear(rng.uniform(0.05, 0.7, 3)),
        hand_scale=float(rng.uniform(0.85, 1.1)),
        approach=approach,
        towards_camera=towards,
        finger_reach=0.5 * carried.size[2],
        target_hidden=float(rng.uniform(0.45, 0.85)),
        with_depth=bool(rng.random() < 0.5),
        jpeg_quality=np.random.default_rng([seed, 3]).integers(35, 81, frames),
        noise_sigma=float(rng.uniform(2, 6)),
        waypoints=_waypoints(items, target_centre, approach, lift),
        total_turn=total_turn,
    )
