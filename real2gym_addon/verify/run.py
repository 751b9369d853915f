"""Verifying a scene: export it, simulate the demo, run the checks.

:func:`verify_scene` is the one entry point: the pipeline's ``verify`` stage,
``real2gym verify`` and the Blender operators all call it. The checks are those
of :data:`~.registry.CHECKS`.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np

from ..errors import Real2GymError
from ..geometry.stage import Geometry
from ..mjcf.export import SceneModel, build_scene, objects_at_frame, write_mjcf
from ..mjcf.gripper import GripperSpec
from ..tasks import TASKS
from .margin import Margin, free_masses, measure_margin
from .registry import CheckInputs, run_checks
from .simulate import SimulationRecord, simulate, step_targets


@dataclasses.dataclass
class Verification:
    """The verifier's result.

    Attributes:
        passed: Every check passed.
        checks: Check name -> ``{"passed", ...figures}``.
        record: The simulation's record.
        scene: The exported model.
        mjcf_path: The written scene.xml.
        timing: Seconds spent exporting and simulating.
        geometry: The geometry it verified (the Blender side keys its simulation beside it).
        margin: The perturbed runs (:mod:`.margin`), or None when none were asked for.
    """

    passed: bool
    checks: dict[str, dict]
    record: SimulationRecord
    scene: SceneModel
    mjcf_path: Path
    timing: dict[str, float]
    geometry: Geometry
    margin: Margin | None = None

    def to_report(self, mjcf_relative: str) -> dict:
        """The report's ``verification`` entry."""
        record = self.record
        simulated_s = record.steps * self.scene.model.opt.timestep
        return {
            "passed": self.passed,
            "checks": self.checks,
            "mjcf": mjcf_relative,
            "name_map": self.scene.name_map,
            "simulation": {
                "timestep_s": self.scene.model.opt.timestep,
                "steps": record.steps,
                "simulated_s": round(simulated_s, 3),
                "wall_s": round(record.wall_s, 3),
                "real_time_factor": round(simulated_s / max(record.wall_s, 1e-9), 1),
                "warnings": record.warnings,
            },
            "timing_s": {k: round(v, 3) for k, v in self.timing.items()},
            **({"margin": self.margin.to_report()} if self.margin is not None else {}),
        }


def verify_scene(
    geometry: Geometry,
    camera,
    task: dict,
    fps: float,
    folder: Path,
    masses: dict[str, float] | None = None,
    gripper: GripperSpec | None = None,
    frictions: dict[str, float] | None = None,
    appearance: dict | None = None,
    before_simulating=None,
    margin: int = 0,
    on_margin_run=None,
) -> Verification:
    """Exports the scene to ``folder`` (scene.xml + assets), simulates the demo, checks it.

    Args:
        geometry: The geometry stage's result (shapes, motion, keyframes, gripper path).
        camera: The demo's intrinsics.
        task: ``{"type", "object", "target"}``.
        fps: Video frame rate.
        folder: The MJCF folder to write.
        masses: Object name -> kg, overriding the default density.
        gripper: Gripper dimensions; Franka Hand when None.
        frictions: Object name -> sliding friction (:data:`~..mjcf.export.DEFAULT_FRICTION` otherwise).
        appearance: What a camera sees (``mjcf.export.apply_appearance``); the default look when None.
        before_simulating: Called with the compiled :class:`SceneModel` before the simulation; it
            may raise to stop there (a variant's path that would hit the table).
        margin: Perturbed runs to simulate after it (:mod:`.margin`); 0 for none.
        on_margin_run: Called with ``(run index, runs)`` before each perturbed run (progress); it may
            raise to stop (a cancelled run's ``Progress.step``).

    Returns:
        The verification; ``passed`` is all checks.
    """
    started = time.perf_counter()
    _check_trajectory(geometry.gripper, task, fps)
    scene = _export(geometry, camera, folder, masses, gripper, frictions, appearance)
    exported = time.perf_counter() - started
    if before_simulating is not None:
        before_simulating(scene)
    record = _simulate(scene, geometry, fps)
    add_replay_keys(scene, record, geometry.gripper, fps, geometry.keyframes)
    path = write_mjcf(scene, folder)
    results = run_checks(CheckInputs(task, geometry, record, scene))
    passed = all(bool(r["passed"]) for r in results.values())
    timing = {"export": exported, "simulate": record.wall_s}
    verification = Verification(passed, _json_ready(results), record, scene, path, timing, geometry)
    if margin > 0:

        def judge(draft) -> dict[str, dict]:
            with tempfile.TemporaryDirectory() as scratch:
                model = _export(draft.geometry, camera, Path(scratch), draft.masses, gripper, draft.frictions)
            return run_checks(CheckInputs(task, draft.geometry, _simulate(model, draft.geometry, fps), model))

        verification.margin = measure_margin(
            geometry,
            free_masses(geometry, masses, record.masses),
            dict(frictions or {}),
            passed,
            judge,
            margin,
            on_run=on_margin_run,
        )
        timing["margin"] = verification.margin.wall_s
    return verification


def _export(
    geometry: Geometry, camera, folder: Path, masses, gripper, frictions, appearance=None
) -> SceneModel:
    trajectory = geometry.gripper
    pose = None if trajectory is None else (trajectory.positions[0], trajectory.quaternions[0])
    objects = objects_at_frame(geometry, 0, masses, frictions)
    return build_scene(
        objects, geometry.table.extent_world, geometry.world_from_camera, camera, pose, folder, gripper,
        appearance,
    )  # fmt: skip


def _simulate(scene: SceneModel, geometry: Geometry, fps: float) -> SimulationRecord:
    frames = len(geometry.objects[0].motion.positions) if geometry.objects else 0
    return simulate(scene.model, scene.name_map, geometry.gripper, fps, frames)


MAX_REPLAY_KEYS = 3000
"""At most this many per-frame keys go into scene.xml (a longer video keeps every n-th frame)."""


def add_replay_keys(scene: SceneModel, record: SimulationRecord, trajectory, fps: float, keyframes) -> None:
    """Adds the simulated demo to the exported model as ``<key>`` states.

    One key per video frame (``frame_0000`` ...; every n-th past :data:`MAX_REPLAY_KEYS`)
    and one per interaction keyframe (``grasp``, ``lift``, ``contact``, ``release``,
    with the object's name after a second one of the same event): ``time``, ``qpos``
    of the simulation at that frame, and with a gripper its mocap target (``mpos``,
    ``mquat``) and finger commands (``ctrl``), so that MuJoCo's viewer shows any state
    and stepping from a key with its ``ctrl`` and ``mpos`` replays the demo
    (``real2gym view``; docs/data-contract.md). Frames after a divergence get none.
    """
    model = scene.model
    last = record.frames if record.diverged_frame is None else record.diverged_frame
    if last <= 0:
        return
    stride = max(1, int(np.ceil(last / MAX_REPLAY_KEYS)))
    chosen = {f"frame_{frame:04d}": frame for frame in range(0, last, stride)}
    for keyframe in keyframes or []:
        frame = int(keyframe["frame"])
        if frame < last:
            name = str(keyframe["event"])
            if name in chosen:
                name = f"{name}_{keyframe.get('object', frame)}"
            chosen.setdefault(name, frame)
    frames = np.array(list(chosen.values()))
    if trajectory is not None:
        positions, quaternions, commands = step_targets(trajectory, fps, frames / fps)
    for index, (name, frame) in enumerate(chosen.items()):
        key = scene.spec.add_key()
        key.name, key.time = name, float(frame / fps)
        key.qpos = record.qpos[frame].tolist()
        if trajectory is not None and model.nmocap:
            key.mpos = positions[index].tolist()
            key.mquat = quaternions[index].tolist()
            key.ctrl = [float(commands[index])] * model.nu


MAX_GRIPPER_SPEED = 10.0
"""m/s: a faster jump between two frames of the gripper trajectory is an error in the data. Robot arms
move their hand at up to 2-3 m/s and a person's hand leaving the scene at 3-5 m/s; faster is a glitch or
a unit mistake."""


def _check_trajectory(trajectory, task: dict, fps: float) -> None:
    if trajectory is None:
        if task["type"] in TASKS:
            raise Real2GymError(
                f"no gripper trajectory for the '{task['type']}' task of '{task['object']}'; "
                "add trajectory.json or re-run the geometry stage, which synthesises one"
            )
        return
    values = np.c_[trajectory.positions, trajectory.quaternions, trajectory.opening]
    bad = np.nonzero(~np.isfinite(values).all(axis=1))[0]
    if len(bad):
        raise Real2GymError(f"the gripper trajectory holds NaN or infinite values at frame {int(bad[0])}")
    steps = np.linalg.norm(np.diff(trajectory.positions, axis=0), axis=1) * fps
    fast = np.nonzero(steps > MAX_GRIPPER_SPEED)[0]
    if len(fast):
        frame = int(fast[0])
        raise Real2GymError(
            f"the gripper trajectory jumps {steps[frame] / fps * 100:.1f} cm between frames {frame} and "
            f"{frame + 1} ({steps[frame]:.1f} m/s); fix trajectory.json there"
        )


def _json_ready(value):
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
