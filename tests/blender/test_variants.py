"""Variants in Blender: the Vary operator, loading a variant into the scene, comparing it with the demo.

Every test works on a copy of one verified run of the bundled demo (made once,
through the installed extension's own core); the loading and comparing tests on a
copy of one batch of three variants of it, made once by the core. Operators run
through ``execute`` (synchronous, like a script), which runs the same job a click
starts.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import bpy
import numpy as np
import pytest

MODULE = "bl_ext.user_default.real2gym"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"

pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="the bundled demo is missing")


def _module(name: str):
    return importlib.import_module(f"{MODULE}.{name}")


@pytest.fixture(scope="module")
def verified_run(verified_demo_run: Path) -> Path:
    return verified_demo_run


@pytest.fixture(scope="module")
def varied_run(verified_run: Path, tmp_path_factory) -> Path:
    """A copy of the run with three variants of the default plan (seed 0), made by the core."""
    out = Path(shutil.copytree(verified_run, tmp_path_factory.mktemp("varied") / "out"))
    entries = _module("real2gym_addon.variants.batch").vary(out, 3)
    assert any(e["passed"] for e in entries), entries
    return out


@pytest.fixture
def run(verified_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(verified_run, tmp_path / "run"))


@pytest.fixture
def varied(varied_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(varied_run, tmp_path / "varied"))


def _settings(scene, out: Path, count: int, jobs: int):
    scene.real2gym.out_dir = str(out)
    variants = scene.real2gym.variants
    variants.count, variants.jobs = count, jobs
    return variants


def _summary(out: Path) -> list[dict]:
    return json.loads((out / "variants" / "summary.json").read_text())


def _with_distractor(out: Path) -> dict:
    """The summary entry of a verified variant with a distractor (seed 0 draws some)."""
    return next(e for e in _summary(out) if e["passed"] and e["params"]["distractors"])


def test_vary_lists_the_batch_and_writes_its_files(run: Path, empty_scene) -> None:
    variants = _settings(empty_scene, run, count=3, jobs=1)
    assert bpy.ops.real2gym.vary() == {"FINISHED"}
    summary = _summary(run)
    assert [(e.name, e.passed, e.reason) for e in variants.entries] == [
        (e["id"], e["passed"], e["reason"]) for e in summary
    ]
    assert [e.name for e in variants.entries] == ["v0000", "v0001", "v0002"]
    assert any(e.passed for e in variants.entries)
    for entry in variants.entries:
        folder = run / "variants" / entry.name
        if entry.passed:
            assert entry.changes and not entry.reason
            for name in ("report.json", "trajectory.json", "mjcf/scene.xml"):
                assert (folder / name).is_file(), (entry.name, name)
        else:
            assert entry.reason and not folder.exists()
    assert (run / "variants" / "summary.html").is_file()
    assert Path(variants.run_dir) == run.resolve()
    assert variants.status.endswith("of 3 variants verified")
    # The panel's defaults are the core's plan: the same ranges as `real2gym vary` without a plan.
    plan = json.loads((run / "variants" / "plan.json").read_text())
    assert plan == json.loads(json.dumps(_module("real2gym_addon.variants.plan").VariationPlan().to_json()))


def test_vary_runs_variants_in_processes_inside_blender(run: Path, empty_scene) -> None:
    """Worker processes import the extension's core although its package (bl_ext) exists only in Blender."""
    variants = _settings(empty_scene, run, count=2, jobs=2)
    assert bpy.ops.real2gym.vary() == {"FINISHED"}
    assert len(variants.entries) == 2
    assert not [e.reason for e in variants.entries if "task died" in e.reason]
    assert any(e.passed for e in variants.entries)


def test_a_bad_range_is_an_operator_error_and_changes_nothing(varied: Path, empty_scene) -> None:
    bpy.ops.mesh.primitive_cube_add()
    variants = _settings(empty_scene, varied, count=3, jobs=1)
    assert bpy.ops.real2gym.list_variants() == {"FINISHED"}
    listed = [(e.name, e.passed) for e in variants.entries]
    objects = sorted(o.name for o in bpy.data.objects)
    files = sorted(str(p.relative_to(varied)) for p in varied.rglob("*"))
    variants.size_scale = (1.2, 0.9)
    with pytest.raises(
        RuntimeError, match=r"size_scale: its low end 1\.2 is above its high end 0\.9"
    ) as error:
        bpy.ops.real2gym.vary()
    assert "Traceback" not in str(error.value)
    assert [(e.name, e.passed) for e in variants.entries] == listed
    assert sorted(o.name for o in bpy.data.objects) == objects
    assert sorted(str(p.relative_to(varied)) for p in varied.rglob("*")) == files


def test_a_cancelled_batch_keeps_the_previous_set(varied: Path, empty_scene, extension) -> None:
    _settings(empty_scene, varied, count=3, jobs=1)
    empty_scene.real2gym.variants.seed = 7  # another set than the one on disk
    before = (varied / "variants" / "summary.json").read_bytes()
    job = extension.bridge.variants.vary_job(empty_scene)

    def cancel_after_the_first(message: str, fraction: float) -> None:
        if message.startswith("variant 1 of"):
            job.cancel()  # as Esc does: the next variant's step stops the batch

    job.progress = extension.real2gym_addon.progress.Progress(cancel_after_the_first)
    with pytest.raises(extension.real2gym_addon.errors.Cancelled, match="previous set is kept|cancelled"):
        job.run_now(empty_scene)
    assert (varied / "variants" / "summary.json").read_bytes() == before
    assert not list(varied.glob(".variants-*"))
    assert len(empty_scene.real2gym.variants.entries) == 0


def _sim_frames(obj) -> int:
    curves = _module("bridge.reconstruction").object_fcurves(obj)
    return len(next(c for c in curves if c.data_path == "location").keyframe_points)


def test_loading_a_variant_builds_its_objects_and_simulation(varied: Path, empty_scene) -> None:
    bpy.ops.mesh.primitive_cube_add()
    mine = bpy.context.active_object.name
    assert bpy.ops.real2gym.open_run(out_dir=str(varied)) == {"FINISHED"}
    chosen = _with_distractor(varied)
    folder = varied / "variants" / chosen["id"]
    report = json.loads((folder / "report.json").read_text())
    assert bpy.ops.real2gym.list_variants() == {"FINISHED"}
    assert bpy.ops.real2gym.load_variant(variant_id=chosen["id"]) == {"FINISHED"}

    frames = report["video"]["frames"]
    assert frames > 150  # the adapted demo holds still before the fingers close and open
    assert empty_scene.frame_end == frames - 1
    assert Path(empty_scene.real2gym.out_dir) == folder.resolve()
    assert _module("state.variants").shown_variant(empty_scene) == chosen["id"]
    objects = {o.real2gym.source_name: o for o in empty_scene.objects if o.real2gym.kind == "OBJECT"}
    assert set(objects) == {o["name"] for o in report["objects"]}
    distractors = [name for name, o in objects.items() if o.real2gym.role == "distractor"]
    assert len(distractors) == len(chosen["params"]["distractors"]) >= 1
    copies = {o.real2gym.source_name: o for o in empty_scene.objects if o.real2gym.kind == "SIMULATION"}
    assert set(objects) <= set(copies) and "gripper" in copies
    for name in objects:
        assert _sim_frames(copies[name]) == frames, name
    # The simulated block ends in the moved cup, as the variant was verified.
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    empty_scene.frame_set(frames - 1)
    cup_end = np.asarray(objects["cup"].matrix_world.translation)
    gap = np.linalg.norm(np.asarray(copies["block"].matrix_world.translation)[:2] - cup_end[:2])
    assert gap < cup["params"]["inner_radius"], gap
    assert bpy.data.objects.get(mine) is not None  # the user's own object stays

    # Open Run on the varied run shows the demo again: the distractors and their copies go.
    assert bpy.ops.real2gym.open_run(out_dir=str(varied)) == {"FINISHED"}
    names = {
        o.real2gym.source_name for o in empty_scene.objects if o.real2gym.kind in ("OBJECT", "SIMULATION")
    }
    assert not names & set(distractors)
    assert empty_scene.frame_end == 149 and bpy.data.objects.get(mine) is not None


def test_a_dropped_or_unknown_variant_cannot_be_loaded(varied: Path, empty_scene) -> None:
    empty_scene.real2gym.out_dir = str(varied)
    objects = sorted(o.name for o in bpy.data.objects)
    with pytest.raises(RuntimeError, match="v0099.* was dropped or never made"):
        bpy.ops.real2gym.load_variant(variant_id="v0099")
    assert sorted(o.name for o in bpy.data.objects) == objects


def test_compare_with_the_demo_writes_and_loads_the_picture(varied: Path, empty_scene) -> None:
    empty_scene.real2gym.out_dir = str(varied)
    chosen = _with_distractor(varied)["id"]
    assert bpy.ops.real2gym.compare_variant(variant_id=chosen) == {"FINISHED"}
    path = varied / "variants" / chosen / "compare.png"
    assert path.is_file()
    image = bpy.data.images[f"Real2Gym compare {chosen}"]
    width, height = image.size
    assert width == 2 * 480 and height > 2 * 360  # two frames across, the demo over the variant, a caption
