"""One variant: drawn, adapted, checked before simulating, verified, shrunk toward the demo when it fails.

:func:`run_variant` is the task function every executor runs (a process pool, Ray):
it takes a plain :class:`VariantJob`, reads the finished run it varies once per
process, and returns a JSON-ready result. It writes the variant's folder
(``mjcf/scene.xml`` with assets, ``trajectory.json``, ``report.json``, ``render.png``)
into the job's staging folder; it never raises for a variant that fails, it reports why.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..demo import camera_from_report
from ..errors import Real2GymError
from ..files import write_text_atomic
from ..fixes.suggest import suggest_fixes
from ..geometry.fit import FittedObject
from ..geometry.motion import Motion
from ..geometry.parts import part_key
from ..geometry.priors import resting_on
from ..geometry.report_io import geometry_from_report
from ..geometry.shape_kinds import kind_entry
from ..geometry.shapes import Shape
from ..geometry.stage import Geometry, ObjectGeometry
from ..mjcf.export import DEFAULT_DENSITY, FRICTION_RANGE, collision_volume
from ..mjcf.gripper import MAX_OPENING, NAMES
from ..physics import physics_from_report
from ..report import REPORT_NAME, Report, read_report, write_report
from ..scene import SceneDescription
from ..verify.run import Verification, verify_scene
from .adapt import AdaptError, adapt, find_segments
from .plan import MAX_SHRINKS, VariationPlan, shrink, signature

REACH_MARGIN = 0.15
"""The hand may go this far (m) past the table's edge; further is out of reach."""
PLACE_MARGIN = 0.01
"""Objects and distractors start at least this far (m) apart."""
HAND_HALF_WIDTH = 0.11
"""Half the hand's widest extent (m, the palm's length plus a centimetre): a distractor stays out of its sweep."""
HAND_REACH_DOWN = 0.15
"""A distractor is in the hand's way where the hand passes lower than the distractor's top plus this (m)."""
TOUCH_DEPTH = 0.001
"""Contacts deeper than this (m) between the hand and the table or an object before the grasp are a collision."""
THUMBNAIL_WIDTH = 320


class VariantRejected(Real2GymError):
    """A variant is dropped before or instead of its simulation (the reason is its message)."""


@dataclasses.dataclass(frozen=True)
class VariantJob:
    """What one variant needs, picklable for any executor.

    Attributes:
        out_dir: The finished run's output folder (its report.json is varied).
        plan: The plan as plan.json holds it.
        index: The variant's number.
        staging: Where to write the variant's folder (``staging/<id>``).
        render: Render the variant's first frame from the video camera.
    """

    out_dir: str
    plan: dict
    index: int
    staging: str
    render: bool = True


@dataclasses.dataclass
class BaseScene:
    """The run being varied, read once per process."""

    out_dir: Path
    report: Report
    geometry: Geometry
    camera: Any
    task: dict
    fps: float
    masses: dict[str, float]
    frictions: dict[str, float]
    objects: list[dict]

    @classmethod
    def load(cls, out_dir: Path | str) -> BaseScene:
        """Reads a finished run whose scene can be varied.

        Raises:
            Real2GymError: No report, no geometry, or no gripper path with a grasp to adapt.
        """
        report = read_report(out_dir)
        geometry = geometry_from_report(report)
        task = dict(report.task)
        if task.get("object") not in {o.name for o in geometry.objects}:
            raise Real2GymError(f"report.json's task names no object of the scene: {task!r}")
        find_segments(geometry, task)  # raises AdaptError when there is nothing to adapt
        masses, frictions = physics_from_report(report)
        objects = [
            {"name": o.name, "kind": o.fitted.shape.kind,
             "role": "manipulated" if o.name == task["object"] else
                     "target" if o.name == task.get("target") else o.role,
             "parts": [part_key(o.name, p.name) for p in o.parts]}
            for o in geometry.objects
        ]  # fmt: skip
        return cls(Path(out_dir), report, geometry, camera_from_report(report), task,
                   float(report.video.fps), masses, frictions, objects)  # fmt: skip

    def mass(self, obj: ObjectGeometry) -> float:
        """The object's mass in the demo (kg)."""
        return self.masses.get(obj.name, DEFAULT_DENSITY * collision_volume(obj.fitted.shape))


_BASES: dict[tuple[str, float], BaseScene] = {}


def base_scene(out_dir: str) -> BaseScene:
    """The run at ``out_dir``, read once per process (again when its report.json changes)."""
    path = Path(out_dir) / REPORT_NAME
    key = (str(path.resolve()), path.stat().st_mtime if path.exists() else 0.0)
    if key not in _BASES:
        _BASES.clear()
        _BASES[key] = BaseScene.load(out_dir)
    return _BASES[key]


def variant_id(index: int) -> str:
    """The folder name of variant ``index``."""
    return f"v{index:04d}"


def run_variant(job: VariantJob) -> dict[str, Any]:
    """Draws, adapts, verifies and writes one variant; shrinks it toward the demo while it fails.

    Returns:
        ``{"id", "index", "passed", "reason", "params", "signature", "seconds", "attempts",
        "checks", "render"}``: ``reason`` is empty for a verified variant, else why it was
        dropped; ``params`` are those of the last attempt.
    """
    started = time.perf_counter()
    ident = variant_id(job.index)
    folder = Path(job.staging) / ident
    result: dict[str, Any] = {"id": ident, "index": job.index, "passed": False, "reason": "", "params": None,
                              "signature": "", "seconds": 0.0, "attempts": 0, "checks": {}, "render": None}  # fmt: skip
    try:
        base = base_scene(job.out_dir)
        plan = VariationPlan.from_json(job.plan)
        params = plan.draw(job.index, base.objects)
        settle = int(round(plan.settle_s * base.fps))
        for attempt in range(MAX_SHRINKS + 1):
            result.update(params=params, signature=signature(params), attempts=attempt + 1)
            shutil.rmtree(folder, ignore_errors=True)
            try:
                if params["kind"] == "appearance":
                    verification, geometry = _appearance_only(base, params, folder), base.geometry
                    checks = base.report.verification.checks
                else:
                    geometry = vary_geometry(base, params, settle)
                    verification = _verify(base, geometry, params, folder)
                    checks = verification.checks
                failing = [name for name, check in checks.items() if not check.get("passed")]
                result["checks"] = {name: bool(check.get("passed")) for name, check in checks.items()}
                if not failing:
                    result.update(passed=True, reason="")
                    _write_variant(folder, base, geometry, verification, params, ident, plan.seed, job.index)
                    if job.render:
                        result["render"] = _render_start(folder, base, geometry, verification)
                    break
                result["reason"] = f"failed: {', '.join(failing)}"
            except (VariantRejected, AdaptError) as e:
                result["reason"] = str(e)
            except Real2GymError as e:  # the export or the simulation refused it
                result["reason"] = f"not verifiable: {str(e).splitlines()[0][:200]}"
            if params["kind"] == "appearance":
                break  # its physics is the demo's: shrinking changes nothing
            params = shrink(params)
        if not result["passed"]:
            shutil.rmtree(folder, ignore_errors=True)
            result["reason"] = (
                f"{result['reason']} (after {result['attempts']} tries, shrunk toward the demo)"
            )
    except Real2GymError as e:
        result["reason"] = str(e).splitlines()[0]
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def vary_geometry(base: BaseScene, params: dict, settle_frames: int) -> Geometry:
    """The variant's geometry: objects moved, scaled, the rim widened, the path adapted, distractors placed.

    Raises:
        VariantRejected: The objects overlap or leave the table, no place is free for a
            distractor, or the adapted path leaves the hand's reach.
    """
    geometry = adapt(base.geometry, base.task, params["objects"], params["table_dz"], settle_frames,
                     params.get("parts"))  # fmt: skip
    _check_placement(geometry)
    _check_reach(geometry)
    extra = _place_distractors(geometry, params["distractors"])
    geometry.objects.extend(extra)
    return geometry


def variant_physics(base: BaseScene, geometry: Geometry, params: dict) -> tuple[dict, dict]:
    """Each object's mass (kg) and sliding friction in a variant.

    The demo's mass follows the object's collision volume (a scaled object, a narrower rim),
    then the plan's mass scale; the friction is the demo's times the friction scale.
    """
    masses, frictions = {}, {}
    by_name = {o.name: o for o in base.geometry.objects}
    for obj in geometry.objects:
        demo = by_name.get(obj.name)
        volume = collision_volume(obj.fitted.shape)
        if demo is not None:
            mass = base.mass(demo) * volume / collision_volume(demo.fitted.shape)
        else:
            mass = DEFAULT_DENSITY * volume
        masses[obj.name] = mass * params["mass_scale"]
        friction = base.frictions.get(obj.name, 1.0) * params["friction_scale"]
        frictions[obj.name] = float(np.clip(friction, *FRICTION_RANGE))
    return masses, frictions


def _verify(base: BaseScene, geometry: Geometry, params: dict, folder: Path) -> Verification:
    masses, frictions = variant_physics(base, geometry, params)
    segments = find_segments(geometry, base.task)

    def approach_is_clear(scene) -> None:
        _check_approach(scene, geometry, base.task, segments.closing)

    return verify_scene(geometry, base.camera, base.task, base.fps, folder / "mjcf", masses,
                        frictions=frictions, appearance=params.get("appearance"),
                        before_simulating=approach_is_clear)  # fmt: skip


def _appearance_only(base: BaseScene, params: dict, folder: Path):
    """The demo's scene with another look: exported, not simulated (its physics is the demo's)."""
    from ..mjcf.export import build_scene, objects_at_frame, write_mjcf

    geometry = base.geometry
    trajectory = geometry.gripper
    pose = (trajectory.positions[0], trajectory.quaternions[0])
    scene = build_scene(objects_at_frame(geometry, 0, base.masses, base.frictions), geometry.table.extent_world,
                        geometry.world_from_camera, base.camera, pose, folder / "mjcf",
                        appearance=params.get("appearance"))  # fmt: skip
    write_mjcf(scene, folder / "mjcf")
    return scene


def _footprint(obj: ObjectGeometry) -> float:
    """Radius (m) of the circle that holds the object's footprint."""
    sx, sy, _ = obj.fitted.shape.size
    return 0.5 * max(sx, sy) if obj.fitted.shape.is_round else 0.5 * math.hypot(sx, sy)


def _outline_xy(obj: ObjectGeometry, frame: int) -> np.ndarray:
    """``Nx2``: the corners of the object's footprint on ``frame`` (world, m): its box turned by its yaw, or a
    16-sided polygon round a round one."""
    sx, sy, _ = obj.fitted.shape.size
    if obj.fitted.shape.is_round:
        angles = np.linspace(0.0, 2 * math.pi, 16, endpoint=False)
        local = 0.5 * max(sx, sy) * np.c_[np.cos(angles), np.sin(angles)] / math.cos(math.pi / 16)
    else:
        local = 0.5 * np.array([[-sx, -sy], [sx, -sy], [sx, sy], [-sx, sy]])
    yaw = float(obj.motion.yaws[frame])
    turn = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    return local @ turn.T + obj.motion.positions[frame, :2]


def footprint_gap(a: np.ndarray, b: np.ndarray) -> float:
    """m: how far apart two convex footprints (``Nx2`` corners, in order) are along the axis that separates
    them best (each edge's normal); negative, by how much they overlap, where none separates them. A
    shelf 36 cm wide and a book 3 cm in front of it are apart; their circles (the half diagonals) overlapped
    by 2 cm."""
    best = -math.inf
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        for normal in np.c_[-edges[:, 1], edges[:, 0]]:
            length = float(np.linalg.norm(normal))
            if length < 1e-12:
                continue
            along_a, along_b = a @ (normal / length), b @ (normal / length)
            best = max(best, float(along_b.min() - along_a.max()), float(along_a.min() - along_b.max()))
    return best


def _part_spots(obj: ObjectGeometry) -> list[tuple[np.ndarray, float]]:
    """Where an object's moving parts stand, at the start and the end and every quarter of the way between
    (a door swung open stands out past its body's footprint): ``(centre xy, radius)`` each."""
    spots = []
    for part in obj.parts:
        q = part.filled_q()
        radius = 0.5 * math.hypot(*part.shape.size[:2])
        for frame in np.linspace(0, len(q) - 1, 5).round().astype(int):
            spots.append((part.pose_at(float(q[frame]))[:2, 3], radius))
    return spots


def _check_placement(geometry: Geometry) -> None:
    x0, y0, x1, y1 = geometry.table.extent_world
    starts = [(o, o.motion.positions[0]) for o in geometry.objects]
    for obj, start in starts:
        if not (x0 <= start[0] <= x1 and y0 <= start[1] <= y1):
            raise VariantRejected(f"'{obj.name}' starts off the table ({start[0]:.3f}, {start[1]:.3f} m)")
    for i, (a, pa) in enumerate(starts):
        for b, pb in starts[i + 1 :]:
            if resting_on(a, [b]) is not None or resting_on(b, [a]) is not None:
                continue  # one starts in or on the other (a plate in its stand)
            gap = footprint_gap(_outline_xy(a, 0), _outline_xy(b, 0))
            if gap < PLACE_MARGIN and pa[2] < 0.5 and pb[2] < 0.5:
                raise VariantRejected(
                    f"'{a.name}' and '{b.name}' start {gap * 100:.1f} cm apart (overlapping)"
                )


def _check_reach(geometry: Geometry) -> None:
    x0, y0, x1, y1 = geometry.table.extent_world
    path = geometry.gripper.positions
    outside = (path[:, 0] < x0 - REACH_MARGIN) | (path[:, 0] > x1 + REACH_MARGIN)
    outside |= (path[:, 1] < y0 - REACH_MARGIN) | (path[:, 1] > y1 + REACH_MARGIN)
    if outside.any():
        frame = int(np.argmax(outside))
        raise VariantRejected(
            f"unreachable: the adapted path leaves the table's reach at frame {frame} "
            f"({path[frame, 0]:.2f}, {path[frame, 1]:.2f} m)"
        )


def _place_distractors(geometry: Geometry, wanted: list[dict]) -> list[ObjectGeometry]:
    """Distractors on free table, clear of the objects' start and end and of the hand's sweep.

    Each tries its drawn spot first, then spots of a generator seeded by that spot.

    Raises:
        VariantRejected: No free spot for one of them.
    """
    x0, y0, x1, y1 = geometry.table.extent_world
    frames = len(geometry.gripper.positions)
    taken = [(o.motion.positions[i, :2], _footprint(o)) for o in geometry.objects for i in (0, -1)]
    taken += [spot for o in geometry.objects for spot in _part_spots(o)]
    path = geometry.gripper.positions
    placed = []
    for number, spec in enumerate(wanted):
        size, height = float(spec["size"]), float(spec["height"])
        kind = kind_entry(spec["shape"])
        shape = Shape(kind.name, (size, size, height), {"radius": size / 2} if kind.round else {})
        radius = size / 2 if kind.round else size / math.sqrt(2)
        low_path = path[path[:, 2] < height + HAND_REACH_DOWN, :2]
        rng = np.random.default_rng(int(spec["u"] * 2**31))
        margin = radius + 0.02
        for attempt in range(60):
            u, v = (spec["u"], spec["v"]) if attempt == 0 else rng.random(2)
            xy = np.array(
                [x0 + margin + u * (x1 - x0 - 2 * margin), y0 + margin + v * (y1 - y0 - 2 * margin)]
            )
            clear = all(np.linalg.norm(xy - c) > r + radius + PLACE_MARGIN for c, r in taken)
            if clear and len(low_path):
                clear = np.linalg.norm(low_path - xy, axis=1).min() > radius + HAND_HALF_WIDTH
            if clear:
                break
        else:
            raise VariantRejected(
                f"no free place on the table for distractor {number + 1} ({kind}, {size * 100:.1f} cm): "
                "the table around the objects and the hand's path is full; ask for fewer distractors"
            )
        position = np.array([xy[0], xy[1], height / 2])
        yaw = math.radians(float(spec["yaw_deg"]))
        motion = Motion(
            np.tile(position, (frames, 1)), np.full(frames, yaw), np.zeros(frames, bool), static=True
        )
        name = f"distractor_{number + 1}"
        placed.append(ObjectGeometry(name, "distractor", FittedObject(shape, position, yaw), motion,
                                     [False] * frames))  # fmt: skip
        taken.append((xy, radius))
    return placed


def _check_approach(scene, geometry: Geometry, task: dict, closing: int) -> None:
    """Refuses a path whose hand, fingers open, hits the table or another object before the fingers close.

    Raises:
        VariantRejected: Names what it hits and on which frame.
    """
    import mujoco

    model = scene.model
    data = mujoco.MjData(model)
    hand = model.body(NAMES["hand"]).id
    joint = model.joint("gripper_free").qposadr[0]
    slides = [model.joint(NAMES[f"{side}_joint"]).qposadr[0] for side in ("left", "right")]
    is_hand = model.body_rootid[model.geom_bodyid] == hand
    manipulated = model.body(scene.name_map[task["object"]]).id
    names = {model.body(body).id: name for name, body in scene.name_map.items()}
    gripper = geometry.gripper
    for frame in range(0, closing + 1):
        data.qpos[joint : joint + 3] = gripper.positions[frame]
        data.qpos[joint + 3 : joint + 7] = gripper.quaternions[frame]
        data.qpos[slides] = gripper.opening[frame] * MAX_OPENING / 2
        mujoco.mj_fwdPosition(model, data)
        for contact in data.contact[: data.ncon]:
            g1, g2 = contact.geom
            if is_hand[g1] == is_hand[g2] or contact.dist > -TOUCH_DEPTH:
                continue
            other = model.geom_bodyid[g2 if is_hand[g1] else g1]
            if other == manipulated:
                continue
            what = "the table" if other == 0 else f"'{names.get(other, model.body(other).name)}'"
            raise VariantRejected(
                f"the adapted approach hits {what} at frame {frame}, before the fingers close "
                f"({-contact.dist * 1000:.0f} mm deep)"
            )


def _write_variant(folder: Path, base: BaseScene, geometry: Geometry, verification, params: dict,
                   ident: str, seed: int, index: int) -> None:  # fmt: skip
    """Writes the variant's trajectory.json and report.json (its mjcf/ is written already)."""
    gripper = geometry.gripper
    samples = [
        {"frame": i, "position": np.round(p, 6).tolist(), "quaternion": np.round(q, 6).tolist(),
         "gripper": round(float(g), 4)}
        for i, (p, q, g) in enumerate(zip(gripper.positions, gripper.quaternions, gripper.opening, strict=True))
    ]  # fmt: skip
    write_text_atomic(
        folder / "trajectory.json", json.dumps({"frame_of": "world", "fps": base.fps, "samples": samples})
    )
    description = SceneDescription.from_report(base.report)
    description.set_geometry(geometry)
    description.segmentation = None
    description.warnings = []
    report = description.report()
    report.video.frames = len(gripper.positions)
    report.add_artifacts({"mjcf": "mjcf/scene.xml", "trajectory": "trajectory.json"}, replace=True)
    if isinstance(verification, Verification):  # what it was verified with, so Verify on it keeps it
        masses, frictions = variant_physics(base, geometry, params)
        report.record_physics({name: round(value, 4) for name, value in frictions.items()},
                              masses={name: round(value, 6) for name, value in masses.items()})  # fmt: skip
        report.set_verification(verification.to_report("mjcf/scene.xml"))
        report.attach_suggestions(suggest_fixes(report.to_json()))
    else:  # appearance only: the demo's verdict (and its suggestions)
        report.set_verification({**base.report.verification.to_json(), "mjcf": "mjcf/scene.xml",
                                 "reused_from_demo": True})  # fmt: skip
    report.variant = {"id": ident, "index": index, "seed": seed, "signature": signature(params),
                      "params": params, "demo": str(base.out_dir.resolve())}  # fmt: skip
    write_report(folder, report)


def _render_start(folder: Path, base: BaseScene, geometry: Geometry, verification) -> str | None:
    """Renders the variant's first frame from the video camera into ``render.png``; None where nothing renders."""
    import cv2

    from ..render import offscreen_renderer, render_state

    model = verification.scene.model if isinstance(verification, Verification) else verification.model
    try:  # at the thumbnail's size: the camera's view is the same, the pixels a quarter
        width = min(THUMBNAIL_WIDTH, base.camera.width)
        height = int(round(base.camera.height * width / base.camera.width))
        renderer = offscreen_renderer(model, width, height)
        try:
            import mujoco

            data = mujoco.MjData(model)
            mujoco.mj_resetData(model, data)
            image = render_state(renderer, model, data.qpos.copy())
        finally:
            renderer.close()
    except Exception:  # noqa: BLE001 - a machine without OpenGL gets no thumbnail, the summary says so
        return None
    cv2.imwrite(str(folder / "render.png"), image)
    return "render.png"
