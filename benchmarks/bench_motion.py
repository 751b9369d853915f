"""Motion and verification against truth.json, with and without a robot recording, before and after repair.

For each cached varied scene (Blender-rendered, a hand carries an object; tools/make_varied_demo.py,
cached in ``.cache/bench_varied/``) and the bundled demo, scenes are built in
``.cache/bench_motion/scenes/``: (i) without a recording, (ii) with trajectory.json in one of
the recording forms of tools/_recording.py (cycled over the seeds so each appears), (iii)
with ``careful_release`` for the seeds whose object goes into a cup. Each scene goes
through the command line in a child process, ``real2gym run SCENE --out OUT --no-blend -q``
(exit 0 verified, 1 not verified, 2 refused), and then ``real2gym fix OUT --repair -q``
(``n/a`` where that command does not exist yet). Scored: the manipulated object's position
RMS over the frames where it is visible (world frame, mm), each true keyframe's error
(frames; ``missed`` when the run has none for that event), and whether the scene is verified
before and after repair. Two scenes run at a time. Positions are compared in the camera
frame (``position_cam``): where camera.json gives ``world_from_camera`` (the varied scenes)
that is the same distance as in the world frame, and where it does not (the bundled demo)
the run's world frame is its own, not truth's.

Every scene is run twice: with the tracker's masks (the default backend) and with the true masks
(truth.json's, written as masks made elsewhere and read by ``--backend given``), so that what the
motion stage does with masks known to be right is measured apart from the tracker (issue 28's
three-way table: tracker, true masks, true masks and a recording).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from run import Figure

NAME = "motion"
REPO = Path(__file__).resolve().parents[1]
VARIED = REPO / ".cache" / "bench_varied"
WORK = REPO / ".cache" / "bench_motion"
SEEDS = (1, 2, 7, 14, 16, 17, 26, 39)
CAREFUL_SEEDS = (1, 16, 26)
"""Seeds whose object is put into a cup, where a hand that barely opens may drag it."""
RMS_TARGET_MM = 10.0
KEYFRAME_TARGET = 3
VERIFIED_WITH_TARGET = 0.90
VERIFIED_WITHOUT_TARGET = 0.75
WALL_TARGET_S = 360.0
RUN_TIMEOUT_S = 300
FOLLOWS_IOU = 0.7
"""A tracker mask follows the object on a frame where its IoU with the true visible mask is at least this."""
LOST_RMS_MM = 30.0
"""A run whose position RMS is over this, or that misses a keyframe, has lost the object's motion."""
GROUPS = (
    ("tracker", False, False),
    ("true", False, False),
    ("tracker", False, True),
    ("true", False, True),
    ("true", True, False),
    ("tracker", True, False),
)
"""The table's rows: (masks, with a recording, with the hand prompted)."""
_SCENE_FILES = ("video.mp4", "camera.json", "prompts.json", "truth.json", "trajectory.json")


@dataclasses.dataclass
class Scene:
    """One benchmark scene: a demo folder and how it was made.

    Attributes:
        name: Its name in the figures.
        folder: The demo folder.
        recording: The recording form, ``"bundled"`` for the bundled demo's own, or None.
        masks: ``"tracker"`` (segmented by the default backend) or ``"true"`` (truth's, via ``given``).
        hand: prompts.json also prompts the hand (``"role": "hand"``), as evidence of grasp and release.
    """

    name: str
    folder: Path
    recording: str | None
    masks: str = "tracker"
    hand: bool = False


@dataclasses.dataclass
class Result:
    """What one scene's run and repair gave.

    Attributes:
        scene: The scene.
        exit_code: ``real2gym run``'s exit status.
        seconds: Wall time of run and repair.
        rms_mm: Position RMS of the manipulated object over its visible frames, or None.
        keyframes: Event -> frame error (found minus true), or None when missed.
        verified_before: Whether the run verified.
        verified_after: Whether it verified after ``fix --repair`` (False when the run was
            refused); None when ``fix --repair`` does not exist.
        note: Why a figure is missing.
        follows: With the tracker's masks, the share of the frames where the manipulated object is seen on
            which its mask's IoU with the true visible mask is at least :data:`FOLLOWS_IOU`; else None.
    """

    scene: Scene
    exit_code: int
    seconds: float
    rms_mm: float | None = None
    keyframes: dict[str, int | None] = dataclasses.field(default_factory=dict)
    verified_before: bool = False
    verified_after: bool | None = None
    note: str = ""
    follows: float | None = None

    @property
    def lost(self) -> bool:
        """The run lost the manipulated object's motion: no position, RMS over LOST_RMS_MM, or a keyframe missed."""
        return (
            self.rms_mm is None
            or self.rms_mm > LOST_RMS_MM
            or any(d is None for d in self.keyframes.values())
        )


def _cli() -> str:
    local = REPO / ".venv" / "bin" / "real2gym"
    return str(local if local.exists() else Path(sys.executable).with_name("real2gym"))


def _copy_demo(source: Path, target: Path, with_recording: bool) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in _SCENE_FILES:
        if (source / name).is_file() and (with_recording or name != "trajectory.json"):
            shutil.copy2(source / name, target / name)
    if (source / "depth").is_dir():
        shutil.copytree(source / "depth", target / "depth")


def with_true_masks(scene: Scene) -> Scene:
    """A copy of the scene with truth.json's masks as masks made elsewhere (``masks/<object>/``)."""
    sys.path.insert(0, str(REPO))
    from real2gym.real2gym_addon.truth import load_truth, write_given_masks

    folder = scene.folder.with_name(scene.folder.name + "_true_masks")
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(scene.folder, folder)
    names = [o["name"] for o in json.loads((folder / "prompts.json").read_text())["objects"]]
    write_given_masks(load_truth(folder), folder, names)
    return Scene(folder.name, folder, scene.recording, "true", scene.hand)


def add_hand_prompt(source: Path, target: Path) -> bool:
    """A copy of a scene whose prompts.json also prompts the hand, as a user would (``truth.hand_prompt``).
    False where truth has no hand."""
    sys.path.insert(0, str(REPO))
    from real2gym.real2gym_addon.truth import hand_prompt, load_truth

    entry = hand_prompt(load_truth(source))
    if entry is None:
        return False
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    prompts = json.loads((target / "prompts.json").read_text())
    prompts["objects"].append(entry)
    (target / "prompts.json").write_text(json.dumps(prompts, indent=2) + "\n")
    return True


def build_scenes(bundled: Path, quick: bool) -> list[Scene]:
    """Builds the benchmark's demo folders under ``WORK/scenes``, each with the tracker's masks and a
    copy with the true masks; returns them in run order."""
    scenes = _tracked_scenes(bundled, quick)
    return scenes + [with_true_masks(scene) for scene in scenes]


def _tracked_scenes(bundled: Path, quick: bool) -> list[Scene]:
    """Builds the benchmark's demo folders under ``WORK/scenes``; returns them in run order."""
    sys.path.insert(0, str(REPO / "tools"))
    from _recording import FORMS
    from add_recording import add_recording

    root = WORK / "scenes"
    scenes = []
    if (bundled / "trajectory.json").is_file():
        _copy_demo(bundled, root / "block_in_cup", with_recording=True)
        scenes.append(Scene("block_in_cup", root / "block_in_cup", "bundled"))
    _copy_demo(bundled, root / "block_in_cup_bare", with_recording=False)
    scenes.append(Scene("block_in_cup_bare", root / "block_in_cup_bare", None))
    if quick:
        return scenes
    # The robots' forms; the hand form is measured by bench_tasks' stack_cycles_hand.
    forms = [f for f in FORMS if f not in ("careful_release", "hand")]
    for index, seed in enumerate(SEEDS):
        source = VARIED / f"seed{seed}"
        if not (source / "truth.json").is_file():
            print(
                f"bench_motion: {source} is missing; skipped (render it with make_varied_demo.py)",
                file=sys.stderr,
            )
            continue
        _copy_demo(source, root / f"seed{seed}", with_recording=False)
        scenes.append(Scene(f"seed{seed}", root / f"seed{seed}", None))
        if add_hand_prompt(root / f"seed{seed}", root / f"seed{seed}_hand"):
            scenes.append(Scene(f"seed{seed}_hand", root / f"seed{seed}_hand", None, hand=True))
        recorded = [forms[index % len(forms)]] + (["careful_release"] if seed in CAREFUL_SEEDS else [])
        for form in recorded:
            folder = root / f"seed{seed}_{form}"
            shutil.rmtree(folder, ignore_errors=True)
            add_recording(source, form, folder)
            scenes.append(Scene(folder.name, folder, form))
    return scenes


def score(report: dict, truth: dict) -> tuple[float | None, dict[str, int | None]]:
    """Position RMS (mm, camera frame) of the manipulated object over its visible frames, and keyframe errors.

    Args:
        report: report.json of the run.
        truth: truth.json of the scene.

    Returns:
        The RMS (None if the run has no such object) and, per true keyframe of the
        manipulated object, the first found keyframe of that event minus the true frame
        (None when the run found none).
    """
    true_object = next(o for o in truth["objects"] if o["role"] == "manipulated")
    name = true_object["name"]
    found = next((o for o in report.get("objects", []) if o["name"] == name), None)
    rms = None
    if found is not None:
        positions = {f["frame"]: f["position_cam"] for f in found["frames"]}
        errors = [
            np.linalg.norm(np.subtract(positions[f["frame"]], f["position_cam"]))
            for f in true_object["frames"]
            if f["visible"] and f["frame"] in positions
        ]
        rms = 1000 * float(np.sqrt(np.mean(np.square(errors)))) if errors else None
    keyframes: dict[str, int | None] = {}
    for key in truth["keyframes"]:
        if key["object"] != name:
            continue
        frames = sorted(
            k["frame"]
            for k in report.get("keyframes", [])
            if (k["event"], k["object"]) == (key["event"], name)
        )
        keyframes[key["event"]] = frames[0] - key["frame"] if frames else None
    return rms, keyframes


def mask_follows(scene: Scene, out: Path) -> float | None:
    """Share of the manipulated object's visible frames whose tracker mask (``out/masks/<name>/``) has IoU of
    at least :data:`FOLLOWS_IOU` with truth's visible mask."""
    import cv2

    sys.path.insert(0, str(REPO))
    from real2gym.real2gym_addon.truth import load_truth, mask_iou

    truth = load_truth(scene.folder)
    name = next(o["name"] for o in json.loads((scene.folder / "truth.json").read_text())["objects"]
                if o["role"] == "manipulated")  # fmt: skip
    folder = out / "masks" / name
    if not folder.is_dir():
        return None
    ious = []
    for frame in truth.objects[name].frames:
        if not frame.visible:
            continue
        image = cv2.imread(str(folder / f"{frame.frame:06d}.png"), cv2.IMREAD_UNCHANGED)
        found = np.zeros_like(frame.mask()) if image is None else image > 0
        ious.append(mask_iou(found, frame.mask()))
    return float(np.mean(np.array(ious) >= FOLLOWS_IOU)) if ious else None


def run_scene(scene: Scene) -> Result:
    """Runs the pipeline and then repair on one scene, and scores the run."""
    out = WORK / "out" / scene.name
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    command = [_cli(), "run", str(scene.folder), "--out", str(out), "--no-blend", "-q"]
    if scene.masks == "true":
        command += ["--backend", "given"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Result(
            scene, -1, time.perf_counter() - started, verified_after=False, note=f"run over {RUN_TIMEOUT_S} s"
        )
    result = Result(scene, done.returncode, 0.0)
    report_path = out / "report.json"
    if done.returncode == 2 or not report_path.is_file():  # refused: nothing to repair, not verified
        result.verified_after = False
        result.note = (done.stderr.strip().splitlines() or ["no report"])[-1][:100]
        result.seconds = time.perf_counter() - started
        return result
    report, truth = json.loads(report_path.read_text()), json.loads((scene.folder / "truth.json").read_text())
    result.rms_mm, result.keyframes = score(report, truth)
    if scene.masks == "tracker":
        result.follows = mask_follows(scene, out)
    result.verified_before = bool(report["verification"]["passed"])
    try:
        fix = subprocess.run(
            [_cli(), "fix", str(out), "--repair", "-q"], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        result.note = f"repair over {RUN_TIMEOUT_S} s"
    else:
        if fix.returncode == 2 and "usage:" in fix.stderr:
            result.note = "repair n/a"
        elif fix.returncode == 2:
            result.note = "repair refused: " + (fix.stderr.strip().splitlines() or [""])[-1][:80]
            result.verified_after = False
        else:
            repaired = json.loads(report_path.read_text())
            after = repaired.get("repair", {}).get("passed_after")
            result.verified_after = bool(after) if after is not None else fix.returncode == 0
    result.seconds = time.perf_counter() - started
    return result


def _share(values: list[bool | None]) -> float:
    """Share of True among ``values``; NaN when empty or any is None (not measured)."""
    if not values or any(v is None for v in values):
        return math.nan
    return sum(bool(v) for v in values) / len(values)


def _keyframe_text(keyframes: dict[str, int | None]) -> str:
    return ", ".join(f"{e} {'missed' if d is None else f'{d:+d}'}" for e, d in keyframes.items()) or "-"


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "n/a"}[value]


def _group(results: list[Result], masks: str, recorded: bool, hand: bool) -> list[Result]:
    """The results of one row of the table."""
    return [
        r
        for r in results
        if r.scene.masks == masks and (r.scene.recording is not None) == recorded and r.scene.hand == hand
    ]


def _following(results: list[Result]) -> list[Result]:
    """The tracker runs whose masks follow the manipulated object (IoU >= FOLLOWS_IOU) on most frames."""
    return [r for r in results if r.follows is not None and r.follows > 0.5]


def _print_results(results: list[Result], wall: float) -> None:
    print(
        f"bench_motion: targets: position RMS <= {RMS_TARGET_MM:g} mm while visible; keyframes within "
        f"{KEYFRAME_TARGET} frames; verified after repair >= {VERIFIED_WITH_TARGET:.0%} with a recording, "
        f">= {VERIFIED_WITHOUT_TARGET:.0%} without"
    )
    rows = [
        ("scene", "masks", "recording", "IoU>=0.7", "exit", "RMS mm", "keyframe error (frames)", "verified",
         "after repair", "s")
    ]  # fmt: skip
    for r in results:
        rms = "n/a" if r.rms_mm is None else f"{r.rms_mm:.1f}"
        after = _yes(r.verified_after) + (f" ({r.note})" if r.note else "")
        follows = "-" if r.follows is None else f"{r.follows:.0%}"
        rows.append((r.scene.name, r.scene.masks, r.scene.recording or "none", follows, str(r.exit_code), rms,
                     _keyframe_text(r.keyframes),
                     _yes(r.verified_before), after, f"{r.seconds:.0f}"))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    print("bench_motion: the three-way table (and the tracker with a recording)")
    rows = [
        ("masks", "recording", "hand", "scenes", "verified", "after repair", "RMS median mm",
         "keyframes within 3")
    ]  # fmt: skip
    for masks, recorded, hand in GROUPS:
        chosen = _group(results, masks, recorded, hand)
        if not chosen:
            continue
        before, after = (
            _share([r.verified_before for r in chosen]),
            _share([r.verified_after for r in chosen]),
        )
        rms = [r.rms_mm for r in chosen if r.rms_mm is not None]
        deltas = [d for r in chosen for d in r.keyframes.values()]
        within = sum(d is not None and abs(d) <= KEYFRAME_TARGET for d in deltas)
        rows.append((masks, "yes" if recorded else "no", "prompted" if hand else "-", str(len(chosen)), f"{before:.0%}",
                     "n/a" if math.isnan(after) else f"{after:.0%}",
                     f"{np.median(rms):.1f}" if rms else "n/a", f"{within}/{len(deltas)}"))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    following = _following(results)
    lost = [r.scene.name for r in following if r.lost]
    print(
        f"bench_motion: tracker masks that follow the object (IoU >= {FOLLOWS_IOU} on most frames): "
        f"{len(following)} scenes; of them {len(lost)} lost the motion (RMS > {LOST_RMS_MM:g} mm or a keyframe "
        f"missed){': ' + ', '.join(lost) if lost else ''}"
    )
    rms = [r.rms_mm for r in results if r.rms_mm is not None]
    if rms:
        print(
            f"bench_motion: position RMS median {np.median(rms):.1f} mm, worst {max(rms):.1f} mm; {wall:.0f} s"
        )


def run(args) -> list[Figure]:
    """Builds the scenes, runs and repairs each (two at a time), prints and returns the figures."""
    started = time.perf_counter()
    scenes = build_scenes(Path(args.demo), getattr(args, "quick", False))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run_scene, scenes))
    wall = time.perf_counter() - started
    _print_results(results, wall)
    figures = []
    for r in results:
        label = f"{r.scene.name} ({r.scene.recording or 'no recording'}, {r.scene.masks} masks)"
        if r.rms_mm is None:
            figures.append(Figure(NAME, f"{label}: position RMS (visible)", math.nan, "mm",
                                  target=f"<= {RMS_TARGET_MM:g}", passed=False))  # fmt: skip
        else:
            figures.append(Figure(NAME, f"{label}: position RMS (visible)", r.rms_mm, "mm",
                                  target=f"<= {RMS_TARGET_MM:g}", passed=r.rms_mm <= RMS_TARGET_MM))  # fmt: skip
        for event, delta in r.keyframes.items():
            value = math.nan if delta is None else abs(delta)
            figures.append(Figure(NAME, f"{label}: {event} timing", value, "frames", target=f"<= {KEYFRAME_TARGET}",
                                  passed=delta is not None and abs(delta) <= KEYFRAME_TARGET))  # fmt: skip
        figures.append(Figure(NAME, f"{label}: verified before repair", float(r.verified_before), ""))
        after = math.nan if r.verified_after is None else float(r.verified_after)
        figures.append(Figure(NAME, f"{label}: verified after repair", after, ""))
    for masks, recorded, hand in GROUPS:
        chosen = _group(results, masks, recorded, hand)
        if not chosen:
            continue
        label = f"{masks} masks, {'with' if recorded else 'without'} a recording{', the hand prompted' if hand else ''}"
        target = VERIFIED_WITH_TARGET if recorded else VERIFIED_WITHOUT_TARGET
        before = _share([r.verified_before for r in chosen])
        after = _share([r.verified_after for r in chosen])
        figures.append(Figure(NAME, f"verified ({label}), before repair", 100 * before, "%"))
        # The targets are for the true masks (issue 28); the tracker's are reported beside them.
        figures.append(Figure(NAME, f"verified ({label}), after repair", 100 * after, "%",
                              target=f">= {target:.0%}" if masks == "true" else "",
                              passed=(not math.isnan(after) and after >= target) if masks == "true" else None))  # fmt: skip
    rms = [r.rms_mm for r in results if r.rms_mm is not None]
    if rms:
        figures.append(Figure(NAME, "position RMS, median over scenes", float(np.median(rms)), "mm",
                              target=f"<= {RMS_TARGET_MM:g}", passed=float(np.median(rms)) <= RMS_TARGET_MM))  # fmt: skip
        figures.append(Figure(NAME, "position RMS, worst scene", max(rms), "mm", target=f"<= {RMS_TARGET_MM:g}",
                              passed=max(rms) <= RMS_TARGET_MM))  # fmt: skip
    following = _following(results)
    figures.append(Figure(NAME, f"tracker scenes whose masks follow the object (of {len(following)}) that lost its motion",
                          float(sum(r.lost for r in following)), "", target="0",
                          passed=not any(r.lost for r in following)))  # fmt: skip
    figures.append(Figure(NAME, f"wall time ({len(scenes)} scenes, 2 at a time)", wall, "s",
                          target=f"< {WALL_TARGET_S:g} s", passed=wall < WALL_TARGET_S))  # fmt: skip
    return figures
