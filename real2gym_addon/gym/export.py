"""``real2gym export-gym OUT --to DIR``: a verified scene as a self-contained environment folder.

DIR holds everything :func:`~.env.make_env` needs, and nothing of Blender:

- ``scene.xml`` and ``assets/``: the verified MJCF (the demo's, or a variant's);
- ``task.json``: the task, its success predicate, its phases (the keyframes), the
  objects' MJCF bodies, the control period and the variation plan ``reset`` draws from;
- ``demo_report.json``: the scene's report.json, from which the demo's actions are
  adapted to each episode's object poses.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import Real2GymError
from ..files import make_staging, missing_parents, remove_empty, swap_in, write_json_atomic
from ..json_files import read_json_file
from ..report import Report, read_report, write_report
from ..targets import ENVIRONMENT, check_target, write_manifest
from ..tasks import task_type
from ..variants.batch import VARIANTS_NAME
from ..variants.plan import VariationPlan, read_plan
from ..verify.checks import FIDELITY_LIMIT
from ..verify.simulate import CONTROL_PERIOD_S, PRE_ROLL_S, SETTLE_S

TASK_VERSION = 1
SCENE_NAME = "scene.xml"
TASK_NAME = "task.json"
DEMO_REPORT_NAME = "demo_report.json"
SUCCESS_SPEED = 0.05
"""m/s: the object counts as placed once it moves slower than this."""
RESET_RANGES = (
    "position_m",
    "yaw_deg",
    "target_position_m",
    "target_yaw_deg",
    "friction_scale",
    "mass_scale",
)
"""What ``reset`` varies of a plan's mechanical ranges (the rest needs a new model: use ``real2gym vary``)."""


def export_gym(out_dir: Path | str, to: Path | str, variant: str | None = None, force: bool = False) -> Path:
    """Writes the environment folder for a verified run (or one of its variants).

    The folder is filled in a staging folder of a unique name beside it and swapped in by
    renames; ``to`` must be new, empty, or an environment this command wrote before
    (replaced only with ``force``). See :mod:`..targets` for the rule.

    Args:
        out_dir: The run's output folder.
        to: The folder to write.
        variant: A variant's id (``v0003``) from ``OUT/variants``, or None for the demo's scene.
        force: Replace an environment exported into ``to`` before.

    Returns:
        The path of task.json.

    Raises:
        Real2GymError: The scene is not verified, its MJCF or an asset is missing, or
            ``to`` is not a folder this command may write (the run's own, the demo's, a
            non-empty folder it did not make, an earlier environment without ``force``).
    """
    out = Path(out_dir)
    source = out / VARIANTS_NAME / variant if variant else out
    check_target(to, "--to", ENVIRONMENT, [(out, "the run folder"), (source, "the exported scene's folder")],
                 force)  # fmt: skip
    report = read_report(source)
    verification = report.verification
    if verification is None or not verification.passed:
        raise Real2GymError(f"{source}: its scene is not verified; only a verified scene is exported")
    mjcf = source / (verification.mjcf or "mjcf/scene.xml")
    if not mjcf.is_file():
        raise Real2GymError(f"{mjcf} is missing; run 'real2gym verify {source}' to write it again")
    to = Path(to).expanduser()
    plan_path = out / VARIANTS_NAME / "plan.json"
    plan = read_plan(plan_path) if plan_path.is_file() else VariationPlan()
    created = missing_parents(to.parent)
    to.parent.mkdir(parents=True, exist_ok=True)
    staging = make_staging(to.parent)
    try:
        shutil.copy2(mjcf, staging / SCENE_NAME)
        if (mjcf.parent / "assets").is_dir():
            shutil.copytree(mjcf.parent / "assets", staging / "assets")
        write_report(staging, report, DEMO_REPORT_NAME)
        write_json_atomic(staging / TASK_NAME, task_description(report, plan))
        write_manifest(staging, ENVIRONMENT)
        swap_in(staging, to)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        remove_empty(created)
        raise
    return to / TASK_NAME


def task_description(report: Report, plan: VariationPlan) -> dict:
    """task.json's content: the task, success, phases, bodies, timing and the reset ranges."""
    task = report.task
    by_name = {o["name"]: o for o in report.objects}
    target = by_name.get(task.get("target") or "")
    kind = task_type(task["type"])
    success: dict = {"type": kind.name, "object": task["object"], "settled_speed_m_s": SUCCESS_SPEED,
                     "released": kind.releases, **kind.task_json(target)}  # fmt: skip
    mechanical = plan.to_json()["mechanical"]
    return {
        "version": TASK_VERSION,
        "task": task,
        "success": success,
        "phases": report.keyframes,
        "bodies": report.verification.name_map,
        "objects": [
            {"name": o["name"], "role": o["role"], "shape": o["shape"], "size": o["size"]}
            for o in report.objects
        ],  # fmt: skip
        "fps": report.video.fps,
        "control_period_s": CONTROL_PERIOD_S,
        "pre_roll_s": PRE_ROLL_S,
        "settle_s": SETTLE_S,
        "fidelity_limit_m": FIDELITY_LIMIT,
        "plan": {
            "seed": plan.seed,
            "settle_s": plan.settle_s,
            "mechanical": {k: mechanical[k] for k in RESET_RANGES},
        },  # fmt: skip
        "demo_report": DEMO_REPORT_NAME,
        "scene": SCENE_NAME,
    }


def read_task(folder: Path | str) -> dict:
    """An environment folder's task.json, with every file it names checked.

    Raises:
        Real2GymError: task.json, scene.xml, the demo report or a mesh scene.xml names is missing.
    """
    folder = Path(folder)
    path = folder / TASK_NAME
    try:
        task = read_json_file(path)
    except FileNotFoundError as e:
        raise Real2GymError(f"{folder} is not an exported environment: {TASK_NAME} is missing") from e
    except OSError as e:
        raise Real2GymError(f"cannot read {path}: {e}") from e
    if task.get("version") != TASK_VERSION:
        raise Real2GymError(f"{path} is of version {task.get('version')}; this version reads {TASK_VERSION}")
    for key in ("scene", "demo_report"):
        if not (folder / task[key]).is_file():
            raise Real2GymError(
                f"{folder}: {task[key]} is missing (named by {TASK_NAME}); export the folder again"
            )
    for asset in _mesh_files(folder / task["scene"]):
        if not (folder / "assets" / asset).is_file():
            raise Real2GymError(f"{folder}: the mesh assets/{asset} that {task['scene']} names is missing")
    return task


def _mesh_files(scene: Path) -> list[str]:
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(scene).getroot()
    return [mesh.get("file") for mesh in root.iter("mesh") if mesh.get("file")]
