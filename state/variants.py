"""The Variants panel's state: ``scene.real2gym.variants``.

The ranges a batch of variants is drawn from (the core's
:class:`~..real2gym_addon.variants.plan.Ranges` and ``AppearanceRanges``, with their
defaults), the count, seed and parallel jobs, and the last batch's summary (one entry
per variant, dropped ones with their reason). :func:`variation_plan` turns the ranges
into the core's plan; the bridge fills the entries from ``summary.json``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import bpy

from ..real2gym_addon.variants.batch import VARIANTS_NAME
from ..real2gym_addon.variants.plan import MAX_DISTRACTORS, AppearanceRanges, Ranges, VariationPlan

_RANGES, _LOOK, _PLAN = Ranges(), AppearanceRanges(), VariationPlan()
CPU_COUNT = max(1, os.cpu_count() or 1)


def _shift(name: str, description: str, default: float):
    return bpy.props.FloatProperty(
        name=name, description=description, default=default, min=0.0, max=0.5, soft_max=0.2,
        subtype="DISTANCE", unit="LENGTH", precision=3,
    )  # fmt: skip


def _turn(name: str, description: str, default_deg: float):
    return bpy.props.FloatProperty(
        name=name, description=description, default=math.radians(default_deg), min=0.0,
        max=math.pi, subtype="ANGLE", unit="ROTATION",
    )  # fmt: skip


def _span(name: str, description: str, default, soft_min: float = 0.5, soft_max: float = 2.0, **options):
    """A (low, high) pair: drawn uniformly between them."""
    return bpy.props.FloatVectorProperty(
        name=name, description=f"{description} (low, high)", size=2, default=tuple(default),
        soft_min=soft_min, soft_max=soft_max, precision=3, **options,
    )  # fmt: skip


class REAL2GYM_PG_variant_entry(bpy.types.PropertyGroup):
    """One variant of the last batch (``name``: its id, ``v0003``), as summary.json has it."""

    index: bpy.props.IntProperty(name="Index", description="The variant's number in the plan")
    passed: bpy.props.BoolProperty(name="Verified", description="The variant passed every check")
    reason: bpy.props.StringProperty(name="Reason", description="Why it was dropped (empty when verified)")
    seconds: bpy.props.FloatProperty(name="Seconds", description="Time spent on it", unit="TIME_ABSOLUTE")
    changes: bpy.props.StringProperty(name="Changes", description="What it changes from the demo")


class REAL2GYM_PG_variants(bpy.types.PropertyGroup):
    """Ranges, count and seed of a batch of variants, and the last batch (``scene.real2gym.variants``)."""

    position_m: _shift(
        "Shift", "How far the manipulated object's start moves along each table axis (+-)", _RANGES.position_m
    )
    yaw_deg: _turn(
        "Turn", "How far the manipulated object's start turns about the vertical (+-)", _RANGES.yaw_deg
    )
    target_position_m: _shift(
        "Target Shift", "How far the target (the container) moves along each table axis (+-)",
        _RANGES.target_position_m,
    )  # fmt: skip
    target_yaw_deg: _turn(
        "Target Turn", "How far the target turns about the vertical (+-)", _RANGES.target_yaw_deg
    )
    size_scale: _span("Size Scale", "Scale of the manipulated object", _RANGES.size_scale, min=0.01)
    rim_scale: _span(
        "Rim Scale", "Scale of a container's opening; its bottom and wall thickness stay", _RANGES.rim_scale,
        min=0.01,
    )  # fmt: skip
    table_height_m: _span(
        "Table Height", "Height of the table under the camera (moves the camera)", _RANGES.table_height_m,
        -0.2, 0.2, unit="LENGTH",
    )  # fmt: skip
    friction_scale: _span(
        "Friction Scale", "Scale of every object's sliding friction", _RANGES.friction_scale, min=0.01
    )
    mass_scale: _span("Mass Scale", "Scale of every object's mass", _RANGES.mass_scale, min=0.01)
    distractors: bpy.props.IntVectorProperty(
        name="Distractors", description="Number of extra objects on the table (low, high), inclusive",
        size=2, default=_RANGES.distractors, min=0, max=MAX_DISTRACTORS,
    )  # fmt: skip
    distractor_size_m: _span(
        "Distractor Size", "Side or diameter of a distractor", _RANGES.distractor_size_m, 0.01, 0.2,
        min=0.001, unit="LENGTH",
    )  # fmt: skip
    colours: bpy.props.BoolProperty(
        name="Colours", description="Draw every object's colour", default=_LOOK.colours
    )
    table_texture: bpy.props.BoolProperty(
        name="Table Texture", description="Draw the table's colour and a plain or checked texture",
        default=_LOOK.table_texture,
    )  # fmt: skip
    background: bpy.props.BoolProperty(
        name="Background", description="Draw the background's colour", default=_LOOK.background
    )
    light_intensity: _span(
        "Light", "The light's brightness, 0-1", _LOOK.light_intensity, 0.0, 1.0, min=0.0, max=1.0
    )
    light_tilt_deg: _turn(
        "Light Tilt", "How far the light leans from straight above (+-)", _LOOK.light_tilt_deg
    )
    only_share: bpy.props.FloatProperty(
        name="Look Only", description="Share of variants that change only the look (they keep the demo's physics)",
        default=_LOOK.only_share, min=0.0, max=1.0, subtype="FACTOR",
    )  # fmt: skip
    settle_s: bpy.props.FloatProperty(
        name="Settle", description="How long the hand holds still before its fingers close or open",
        default=_PLAN.settle_s, min=0.0, max=2.0, subtype="TIME_ABSOLUTE", unit="TIME_ABSOLUTE",
    )  # fmt: skip
    count: bpy.props.IntProperty(
        name="Count", description="Variants to draw", default=20, min=1, soft_max=200
    )
    seed: bpy.props.IntProperty(
        name="Seed", description="The plan's seed: the same seed and ranges give the same variants", min=0
    )
    jobs: bpy.props.IntProperty(
        name="Jobs", description="Variants verified at once, each in its own process",
        default=min(2, CPU_COUNT), min=1, max=CPU_COUNT,
    )  # fmt: skip

    run_dir: bpy.props.StringProperty(
        name="Varied Run", description="The run whose variants are listed", subtype="DIR_PATH"
    )
    entries: bpy.props.CollectionProperty(type=REAL2GYM_PG_variant_entry, name="Variants")
    active_entry_index: bpy.props.IntProperty(name="Active Variant", min=0)
    status: bpy.props.StringProperty(name="Status", description="What the last batch, load or comparison did")
    running: bpy.props.BoolProperty(
        name="Working", description="A batch, a load or a comparison is in progress"
    )
    progress: bpy.props.FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR")
    progress_text: bpy.props.StringProperty(name="Progress Text")


def variation_plan(variants: REAL2GYM_PG_variants) -> VariationPlan:
    """The core's plan from the panel's ranges (angles in degrees, pairs as tuples); not checked yet."""

    def pair(values) -> tuple[float, float]:
        low, high = (round(float(v), 6) for v in values)  # float32 as typed: 1.1, not 1.100000023
        return low, high

    mechanical = Ranges(
        position_m=round(variants.position_m, 6),
        yaw_deg=round(math.degrees(variants.yaw_deg), 4),
        target_position_m=round(variants.target_position_m, 6),
        target_yaw_deg=round(math.degrees(variants.target_yaw_deg), 4),
        size_scale=pair(variants.size_scale),
        rim_scale=pair(variants.rim_scale),
        table_height_m=pair(variants.table_height_m),
        friction_scale=pair(variants.friction_scale),
        mass_scale=pair(variants.mass_scale),
        distractors=(int(variants.distractors[0]), int(variants.distractors[1])),
        distractor_size_m=pair(variants.distractor_size_m),
    )
    look = AppearanceRanges(
        colours=variants.colours,
        table_texture=variants.table_texture,
        light_intensity=pair(variants.light_intensity),
        light_tilt_deg=round(math.degrees(variants.light_tilt_deg), 4),
        background=variants.background,
        only_share=round(variants.only_share, 6),
    )
    return VariationPlan(int(variants.seed), mechanical, look, round(variants.settle_s, 6))


def active_entry(variants: REAL2GYM_PG_variants):
    """The variant selected in the list, or None."""
    if 0 <= variants.active_entry_index < len(variants.entries):
        return variants.entries[variants.active_entry_index]
    return None


def shown_variant(scene: bpy.types.Scene) -> str:
    """The listed variant the scene shows (its output folder is ``<varied run>/variants/<id>``), or ''."""
    variants, out_dir = scene.real2gym.variants, scene.real2gym.out_dir
    if not variants.run_dir or not out_dir:
        return ""
    folder = Path(bpy.path.abspath(out_dir))
    return folder.name if folder.parent == Path(variants.run_dir) / VARIANTS_NAME else ""


CLASSES = [REAL2GYM_PG_variant_entry, REAL2GYM_PG_variants]
