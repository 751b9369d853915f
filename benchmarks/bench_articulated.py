"""Doors and drawers: each part's joint against the truth, and the verdict, on scenes made another way.

The scenes come from tools/make_articulated_demo.py (its own MuJoCo model, not the project's
exporter), cached in ``.cache/articulated_scenes/<set>/``: a microwave the cup is put into before
its door is pushed shut (a ``steps`` task), a cabinet door and a drawer opened by their handles;
seeded sizes, hinge sides, cameras and colours. Three sets: RGB-D with the robot's recording,
RGB-D without it, and RGB only (the body's known size) with the recording; a fourth of microwaves
whose door is let go to coast shut; and the same three filmed with Blender's Cycles in the seed's own
looks (``--renderer cycles``: other materials, a procedural table, a moving area light, phone noise and
JPEG), the last two derived from the first (:data:`DERIVED`). Each scene goes
through ``real2gym run SCENE --out OUT --backend given --no-blend -q`` (the true masks, written as
masks made elsewhere, so the joint and the verdict are measured apart from the tracker), two at a
time. Scored against truth.json's ``joints`` (compared in the run's world frame, which is the
camera's pose in camera.json): the joint's type; a hinge's axis direction (degrees) and the
distance between the fitted and the true axis lines over the door's height (m); a slide's
direction (degrees); the range's span (degrees or cm); and whether the scene verifies. The time
the joint fit adds is the run's ``geometry_joints`` stage, against its whole geometry stage.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from run import Figure

from real2gym.real2gym_addon.geometry.coasting import joint_inertia
from real2gym.real2gym_addon.geometry.parts import DEFAULT_DAMPING, PART_ARMATURE, PartGeometry
from real2gym.real2gym_addon.geometry.pieces import DEFAULT_DENSITY

NAME = "articulated"
REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "articulated_scenes"
WORK = REPO / ".cache" / "bench_articulated"
SCENES = ("microwave", "cabinet", "drawer")
SETS = {
    "rgbd_rec": (range(4), ("--with-trajectory", "--with-world-from-camera", "--given-masks")),
    "rgbd_norec": (range(2), ("--with-world-from-camera", "--given-masks")),
    "rgb_rec": (range(2), ("--rgb-only", "--with-trajectory", "--with-world-from-camera", "--given-masks")),
    "rgbd_letgo": (
        range(4),
        ("--let-go", "0.6", "--with-trajectory", "--with-world-from-camera", "--given-masks"),
        ("microwave",),
    ),
    "cycles_rgbd_rec": (
        range(2),
        ("--renderer", "cycles", "--with-trajectory", "--with-world-from-camera", "--given-masks"),
    ),  # fmt: skip
}
"""Set name -> (seeds, generator options[, scenes: all three where not named]). ``rgbd_letgo``: the microwave's
door pushed quickly and let go with 60 % of its swing to go, coasting shut on its damping and friction."""
DERIVED = {
    "cycles_rgbd_norec": ("cycles_rgbd_rec", "no_recording"),
    "cycles_rgb_rec": ("cycles_rgbd_rec", "rgb_only"),
}
"""Set name -> (the set its scenes are taken from, what is taken away): the Cycles renders are slow (about 2.5
min a scene), so their scenes without the recording and without depth are the same films less
``trajectory.json``, or less ``depth/`` with the body's known size in prompts.json (as ``--rgb-only`` gives)."""
SET_DEPTH = {"rgbd_rec": "depth", "rgbd_norec": "depth", "rgb_rec": "rgb", "rgbd_letgo": "depth",
             "cycles_rgbd_rec": "depth", "cycles_rgbd_norec": "depth", "cycles_rgb_rec": "rgb"}  # fmt: skip
SLOWING_SPEED = {"hinge": 2.0, "slide": 0.3}
"""rad/s or m/s: the speed the fitted and the true slowing (damping / inertia x speed + friction / inertia) are
compared at: about the let-go doors' speeds."""
SLOWING_TARGET = 0.30
"""Our own bar (the issue sets none): the slowing within 30 % of the truth's."""
AXIS_TARGET_DEG = {"depth": 2.0, "rgb": 5.0}
LINE_TARGET_M = {"depth": 0.01, "rgb": 0.02}
RANGE_TARGET = {"hinge": math.radians(5.0), "slide": 0.01}
VERIFIED_WITH_TARGET = 0.90
VERIFIED_WITHOUT_TARGET = 0.75
JOINT_TIME_TARGET_S = 2.0


def _scenes() -> dict[str, dict[str, Path]]:
    """The sets' scenes (made once); only those named in ``$REAL2GYM_ARTICULATED_SETS`` (comma-separated)
    where it is set."""
    sys.path.insert(0, str(REPO / "tools"))
    from make_articulated_set import articulated_set

    known = [*SETS, *DERIVED]
    wanted = [n for n in os.environ.get("REAL2GYM_ARTICULATED_SETS", "").split(",") if n] or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise SystemExit(
            f"REAL2GYM_ARTICULATED_SETS: no set {', '.join(unknown)} (the sets: {', '.join(known)})"
        )
    made = {}
    for name in wanted:
        source = DERIVED.get(name, (name,))[0]
        if source not in made:
            seeds, options = SETS[source][:2]
            made[source] = articulated_set(
                CACHE / source, seeds, (SETS[source][2:] or (SCENES,))[0], options, jobs=2
            )
        if name in DERIVED:
            made[name] = {scene: _derive(folder, CACHE / name / scene, DERIVED[name][1])
                          for scene, folder in made[source].items()}  # fmt: skip
    return {name: made[name] for name in wanted}


def _derive(source: Path, folder: Path, taken: str) -> Path:
    """``folder`` made from the demo ``source`` less its recording (``no_recording``) or its depth
    (``rgb_only``: the body's known size from truth.json goes into prompts.json); files are hard links."""
    if folder.exists():
        shutil.rmtree(folder)  # the cache's own derived copy, made again from its source
    folder.mkdir(parents=True)
    drop = {"no_recording": {"trajectory.json"}, "rgb_only": {"depth"}}[taken]
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts[0] in drop or path.is_dir():
            continue
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        os.link(path, folder / relative)
    if taken == "rgb_only":
        truth = json.loads((source / "truth.json").read_text())
        sizes = {o["name"]: o["size"] for o in truth["objects"]}
        prompts = json.loads((source / "prompts.json").read_text())
        for entry in prompts["objects"]:
            if entry.get("parts"):
                entry["size"] = sizes[entry["name"]]
        (folder / "prompts.json").unlink()
        (folder / "prompts.json").write_text(json.dumps(prompts, indent=2) + "\n")
    return folder


def _run(scene: Path, out: Path) -> int:
    command = [str(REPO / ".venv" / "bin" / "real2gym"), "run", str(scene), "--out", str(out), "--backend", "given",
               "--no-blend", "-q", "--force"]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=1800).returncode


def _line_distance(point, axis, true_point, true_axis, height: float) -> float:
    """The largest distance from the true axis line of the fitted line's points over ``height`` (m)."""
    worst = 0.0
    along = np.asarray(point) - true_axis * ((np.asarray(point) - true_point) @ true_axis)
    for t in (-height / 2, height / 2):
        p = along + axis * t
        d = (p - true_point) - ((p - true_point) @ true_axis) * true_axis
        worst = max(worst, float(np.linalg.norm(d)))
    return worst


def score(out: Path, scene: Path) -> list[dict]:
    """Each part's joint against the truth (one row per part) from a finished run."""
    report = json.loads((out / "report.json").read_text())
    truth = json.loads((scene / "truth.json").read_text())
    to_report = np.asarray(report["camera"]["world_from_camera"], float) @ np.linalg.inv(
        np.asarray(truth["world_from_camera"], float)
    )
    rows = []
    for entry in report["objects"]:
        for part in entry.get("parts", []):
            joint = part["joint"]
            true = next(
                j for j in truth["joints"] if j["object"] == entry["name"] and j["part"] == part["name"]
            )
            true_axis = to_report[:3, :3] @ np.asarray(true["axis_world"], float)
            true_pivot = to_report[:3, :3] @ np.asarray(true["pivot_world"], float) + to_report[:3, 3]
            axis = np.asarray(joint["axis_world"], float)
            # Signed: both open by a positive turn (slide), so a door fitted to open the other way is 180 off.
            angle = math.degrees(math.acos(max(-1.0, min(1.0, float(axis @ true_axis)))))
            row = {"type_right": joint["type"] == true["type"], "type": true["type"], "axis_deg": angle,
                   "span": abs((joint["range"][1] - joint["range"][0]) - (true["range"][1] - true["range"][0]))}  # fmt: skip
            if true.get("inertia") and joint["type"] == true["type"]:
                # The fitted rates are the report's damping over the inertia the scene builds the part with.
                inertia = joint_inertia(PartGeometry.from_report(part), DEFAULT_DENSITY, PART_ARMATURE)
                speed = SLOWING_SPEED[true["type"]]
                fitted = (joint["damping"] * speed + joint["frictionloss"]) / inertia
                truth = (true["damping"] * speed + true["frictionloss"]) / true["inertia"]
                row["slowing_error"] = abs(fitted - truth) / truth
                row["damping_measured"] = abs(joint["damping"] - DEFAULT_DAMPING[joint["type"]]) > 1e-9
            if true["type"] == "hinge" and joint["type"] == "hinge":
                # The true pivot is the axis's bottom end: the door spans its height above it.
                centre = true_pivot + true_axis * part["size"][2] / 2 * np.sign(true_axis[2] or 1.0)
                row["line_m"] = _line_distance(np.asarray(joint["pivot_world"], float), axis, centre, true_axis,
                                               part["size"][2])  # fmt: skip
            rows.append(row)
    return rows


def run(args) -> list[Figure]:
    if getattr(args, "quick", False):
        return []
    sets = _scenes()
    results = {}
    for set_name, scenes in sets.items():
        jobs = []
        for name, folder in sorted(scenes.items()):
            out = WORK / set_name / name
            out.parent.mkdir(parents=True, exist_ok=True)
            jobs.append((name, folder, out))
        with ThreadPoolExecutor(max_workers=2) as pool:
            codes = list(pool.map(lambda job: _run(job[1], job[2]), jobs))
        for (name, folder, out), code in zip(jobs, codes, strict=True):
            rows = score(out, folder) if (out / "report.json").is_file() else []
            report = json.loads((out / "report.json").read_text()) if rows else {}
            stages = report.get("timing", {}).get("stages_s", {})
            results[(set_name, name)] = {"code": code, "rows": rows, "joints_s": stages.get("geometry_joints"),
                                         "geometry_s": stages.get("geometry"), "frames": report.get("video", {}).get("frames")}  # fmt: skip
            figures = ", ".join(
                f"{r['type']}{'' if r['type_right'] else ' (WRONG TYPE)'} axis {r['axis_deg']:.2f} deg"
                + (f" line {r['line_m'] * 1000:.1f} mm" if "line_m" in r else "")
                + (
                    f" slowing err {r['slowing_error'] * 100:.0f} %{'' if r['damping_measured'] else ' (default)'}"
                    if "slowing_error" in r
                    else ""
                )
                + f" span err {math.degrees(r['span']) if r['type'] == 'hinge' else r['span'] * 100:.2f}"
                + (" deg" if r["type"] == "hinge" else " cm")
                for r in rows
            )
            print(f"  {set_name:10s} {name:18s} {'verified' if code == 0 else f'exit {code}':9s} {figures}",
                  file=sys.stderr, flush=True)  # fmt: skip
    return _figures(results)


def _figures(results: dict) -> list[Figure]:
    figures = []
    for set_name, depth in SET_DEPTH.items():
        rows = [r for (s, _), v in results.items() if s == set_name for r in v["rows"]]
        runs = [v for (s, _), v in results.items() if s == set_name]
        if not runs:
            continue
        right = sum(r["type_right"] for r in rows)
        figures.append(Figure(NAME, f"{set_name}: joint type right", right, f"of {len(runs)}",
                              target=f"all {len(runs)}", passed=right == len(runs) == len(rows)))  # fmt: skip
        hinges = [r for r in rows if r["type"] == "hinge" and r["type_right"]]
        slides = [r for r in rows if r["type"] == "slide" and r["type_right"]]
        if hinges:
            worst = max(r["axis_deg"] for r in hinges)
            figures.append(Figure(NAME, f"{set_name}: hinge axis, worst", worst, "deg",
                                  target=f"<= {AXIS_TARGET_DEG[depth]:g}", passed=worst <= AXIS_TARGET_DEG[depth]))  # fmt: skip
            line = max(r["line_m"] for r in hinges)
            figures.append(Figure(NAME, f"{set_name}: hinge axis line, worst", line * 1000, "mm",
                                  target=f"<= {LINE_TARGET_M[depth] * 1000:g}", passed=line <= LINE_TARGET_M[depth]))  # fmt: skip
            span = max(r["span"] for r in hinges)
            figures.append(Figure(NAME, f"{set_name}: hinge range, worst", math.degrees(span), "deg",
                                  target="<= 5", passed=span <= RANGE_TARGET["hinge"]))  # fmt: skip
        if slides:
            worst = max(r["axis_deg"] for r in slides)
            figures.append(Figure(NAME, f"{set_name}: slide direction, worst", worst, "deg",
                                  target=f"<= {AXIS_TARGET_DEG[depth]:g}", passed=worst <= AXIS_TARGET_DEG[depth]))  # fmt: skip
            span = max(r["span"] for r in slides)
            figures.append(Figure(NAME, f"{set_name}: slide range, worst", span * 100, "cm",
                                  target="<= 1", passed=span <= RANGE_TARGET["slide"]))  # fmt: skip
        coasting = [r for r in rows if "slowing_error" in r]
        if set_name == "rgbd_letgo" and coasting:
            measured = [r for r in coasting if r["damping_measured"]]
            figures.append(Figure(NAME, f"{set_name}: damping measured from the coast", len(measured),
                                  f"of {len(coasting)}", target=f"all {len(coasting)}",
                                  passed=len(measured) == len(coasting)))  # fmt: skip
            if measured:
                worst = max(r["slowing_error"] for r in measured)
                figures.append(Figure(NAME, f"{set_name}: slowing at {SLOWING_SPEED['hinge']:g} rad/s, worst error",
                                      worst * 100, "%", target=f"<= {SLOWING_TARGET * 100:g} % (ours)",
                                      passed=worst <= SLOWING_TARGET))  # fmt: skip
        verified = sum(v["code"] == 0 for v in runs) / len(runs)
        target = VERIFIED_WITHOUT_TARGET if set_name.endswith("_norec") else VERIFIED_WITH_TARGET
        figures.append(Figure(NAME, f"{set_name}: verified", verified * 100, "%",
                              target=f">= {target * 100:g} %", passed=verified >= target))  # fmt: skip
        timed = [v for v in runs if v["joints_s"] is not None]
        if timed:
            worst = max(timed, key=lambda v: v["joints_s"])
            figures.append(Figure(NAME, f"{set_name}: joint fit, slowest ({worst['frames']} frames)", worst["joints_s"],
                                  "s", worst["geometry_s"], "its geometry stage", f"< {JOINT_TIME_TARGET_S:g} s",
                                  worst["joints_s"] < JOINT_TIME_TARGET_S))  # fmt: skip
    return figures
