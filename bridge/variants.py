"""Variants of the scene's run in Blender: the batch, one variant in the scene, a variant beside its demo.

:func:`vary_job` draws and verifies a batch with the Variants panel's ranges (the
core's :func:`~real2gym_addon.variants.batch.vary`, in a worker thread; its
processes run the variants) and lists the batch's summary in
``scene.real2gym.variants``. :func:`load_variant_job` opens one verified variant as
Open Run opens a run: the camera (moved with the variant's table height), the
objects (distractors included) with their keyframes, and the simulation's copies,
keyed from a replay of the MJCF the variant was verified with. Objects the user
edited are kept, a failure leaves the scene as it was, and Open Run on the varied
run brings the demo back. :func:`compare_job` writes ``compare.png`` (the demo
over the variant, first and last frames, from the video camera) and loads it as an
image. All are jobs (:mod:`.jobs`): ``start()`` for a click, ``run_now(scene)`` for
scripts and ``blender -b``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.progress import Progress
from ..real2gym_addon.report import read_report
from ..real2gym_addon.variants.batch import read_summary, vary
from ..real2gym_addon.variants.compare import changes_text, compare_variant, replay_run, variant_folder
from ..state.variants import active_entry, variation_plan
from .jobs import ThreadJob
from .pipeline import open_run
from .verification import scene_out_dir

COMPARE_IMAGE_PREFIX = "Real2Gym compare"


@dataclasses.dataclass
class Varied:
    """What :func:`vary_job` made.

    Attributes:
        folder: The varied run's output folder (the variants are in ``folder/variants``).
        entries: summary.json's entries.
        passed: How many were verified.
    """

    folder: Path
    entries: list[dict]
    passed: int


@dataclasses.dataclass
class LoadedVariant:
    """What :func:`load_variant_job` built.

    Attributes:
        variant_id: The variant (``v0003``).
        folder: Its folder.
        objects: Its objects' names in the report (distractors included).
        frames: Frames keyed.
    """

    variant_id: str
    folder: Path
    objects: list[str]
    frames: int


def varied_run(scene: bpy.types.Scene, out_dir: str | Path = "") -> Path:
    """The run to vary: ``out_dir``, else the scene's output folder; the demo's run when that is a variant.

    Raises:
        Real2GymError: No folder given or set.
    """
    folder = scene_out_dir(scene, out_dir)
    try:
        demo = (read_report(folder).variant or {}).get("demo")
    except Real2GymError:
        return folder  # vary() says what is wrong with it
    return Path(demo) if demo else folder


def show_entries(scene: bpy.types.Scene, entries: list[dict], folder: Path) -> None:
    """Lists a batch's summary entries in ``scene.real2gym.variants`` (the panel's list)."""
    variants = scene.real2gym.variants
    selected = active_entry(variants)
    selected = selected.name if selected is not None else ""
    variants.entries.clear()
    for entry in entries:
        item = variants.entries.add()
        item.name, item.index, item.passed = entry["id"], int(entry["index"]), bool(entry["passed"])
        item.reason, item.seconds = entry.get("reason") or "", float(entry.get("seconds") or 0.0)
        item.changes = changes_text(entry.get("params"))
    names = [item.name for item in variants.entries]
    passed = [item.name for item in variants.entries if item.passed]
    keep = selected if selected in names else (passed[0] if passed else "")
    variants.active_entry_index = names.index(keep) if keep else 0
    variants.run_dir = str(folder)
    variants.status = f"{len(passed)} of {len(entries)} variants verified"


def list_variants(scene: bpy.types.Scene, out_dir: str | Path = "") -> list[dict]:
    """Lists the variants already made for the scene's run (by the command line, an earlier session).

    Raises:
        Real2GymError: The run has no variants/summary.json.
    """
    folder = varied_run(scene, out_dir)
    entries = read_summary(folder)
    show_entries(scene, entries, folder)
    return entries


def vary_job(scene: bpy.types.Scene, out_dir: str | Path = "") -> ThreadJob:
    """A batch of variants of the scene's run with the panel's ranges, count, seed and jobs, as a job.

    The worker thread runs the core's ``vary`` (Esc stops it between variants and keeps the
    previous set); the main thread lists the summary. Its ``outcome`` is the :class:`Varied`.

    Raises:
        Real2GymError: No output folder, or a range that cannot be drawn from (PlanError,
            naming it); nothing was started or changed.
    """
    settings = scene.real2gym.variants
    folder = varied_run(scene, out_dir)
    plan = variation_plan(settings)
    plan.check()
    count, jobs = settings.count, settings.jobs

    def work(progress: Progress) -> list[dict]:
        progress.step(f"checking the ranges and starting {count} variants", 0.0)

        def finished(done: int, total: int, entry: dict) -> None:
            verdict = "verified" if entry["passed"] else "dropped"
            progress.step(f"variant {done} of {total}: {entry['id']} {verdict}", done / total)

        return vary(folder, count, plan, jobs, progress=finished, cancelled=lambda: progress.cancelled)

    def apply(scene: bpy.types.Scene, entries: list[dict]) -> Varied:
        show_entries(scene, entries, folder)
        return Varied(folder, entries, sum(bool(e["passed"]) for e in entries))

    return ThreadJob(work, apply, "the batch of variants")


def _chosen(scene: bpy.types.Scene, variant_id: str, out_dir: str | Path) -> tuple[Path, str]:
    """The varied run and the variant to work on: ``variant_id``, else the one selected in the list.

    Raises:
        Real2GymError: None given or selected, or it has no folder (dropped).
    """
    variants = scene.real2gym.variants
    run = Path(variants.run_dir) if variants.run_dir and not out_dir else varied_run(scene, out_dir)
    if not variant_id:
        entry = active_entry(variants)
        if entry is None:
            raise Real2GymError("no variant selected: vary the run first, or list its variants")
        variant_id = entry.name
    variant_folder(run, variant_id)
    return run, variant_id


def load_variant_job(scene: bpy.types.Scene, variant_id: str = "", out_dir: str | Path = "") -> ThreadJob:
    """Opening one verified variant in the scene, as a job: replayed in the worker thread, built on the main one.

    Args:
        scene: The scene to build into (as Open Run builds a run into it).
        variant_id: The variant (``v0003``); the one selected in the list when empty.
        out_dir: The varied run; the listed batch's (else the scene's) when empty.

    Raises:
        Real2GymError: No variant chosen, or it was dropped; nothing was started.
    """
    run, variant_id = _chosen(scene, variant_id, out_dir)
    folder = variant_folder(run, variant_id)

    def work(progress: Progress):
        progress.step(f"simulating {variant_id} from its verified scene", 0.2)
        return replay_run(folder)

    def apply(scene: bpy.types.Scene, verification) -> LoadedVariant:
        report = open_run(scene, folder, verification)
        scene.real2gym.variants.status = ""  # the panel says which variant the scene shows
        record = verification.record
        frames = record.frames if record.diverged_frame is None else record.diverged_frame
        return LoadedVariant(variant_id, folder, report.object_names(), frames)

    return ThreadJob(work, apply, f"the loading of {variant_id}")


def compare_job(scene: bpy.types.Scene, variant_id: str = "", out_dir: str | Path = "") -> ThreadJob:
    """Writing a variant's compare.png (demo over variant, first and last frames) and loading it, as a job.

    Its ``outcome`` is the Blender image (named ``Real2Gym compare <id>``).

    Raises:
        Real2GymError: No variant chosen, or it was dropped; nothing was started.
    """
    run, variant_id = _chosen(scene, variant_id, out_dir)

    def apply(scene: bpy.types.Scene, path: Path) -> bpy.types.Image:
        image = bpy.data.images.load(str(path), check_existing=True)
        image.reload()  # a comparison made again
        image.name = f"{COMPARE_IMAGE_PREFIX} {variant_id}"
        scene.real2gym.variants.status = f"Wrote {path}"
        return image

    return ThreadJob(
        lambda progress: compare_variant(run, variant_id, progress), apply, "the comparison with the demo"
    )


def show_image(context, image: bpy.types.Image) -> bool:
    """Shows an image in the screen's Image Editor, or in a new window with one.

    Returns:
        False where there is no window (``blender -b``, the bpy module): the image is in
        ``bpy.data.images`` only.
    """
    if bpy.app.background or context.window is None:
        return False
    editors = [a for a in context.screen.areas if a.type == "IMAGE_EDITOR"] if context.screen else []
    if not editors:
        bpy.ops.wm.window_new()
        window = context.window_manager.windows[-1]
        editors = [window.screen.areas[0]]
        editors[0].type = "IMAGE_EDITOR"
    editors[0].spaces.active.image = image
    return True
