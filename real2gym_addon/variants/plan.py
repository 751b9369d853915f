"""A variation plan: the seeded ranges a verified scene's variants are drawn from.

A plan (``variants/plan.json``) holds a seed and the ranges of every edit. Variant
``i`` is drawn from ``numpy.random.default_rng([seed, i])`` alone, so any variant can
be rebuilt from the plan and its index, whatever the number of jobs or the executor.

Mechanical edits change the physics (start poses, sizes, the rim, the table's height,
friction, mass, distractor objects); appearance edits change only what a camera sees
(colours, the table's texture, the light, the background). A variant that fails
verification is shrunk toward the demo, ``p = p_base + SHRINK * (p - p_base)``, and
verified again, at most :data:`MAX_SHRINKS` times (Real2Gym's rule).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Real2GymError
from ..geometry.shape_kinds import BOX, CYLINDER, is_container
from ..json_files import read_json_file

PLAN_VERSION = 1
SHRINK = 0.85
MAX_SHRINKS = 5
MAX_DISTRACTORS = 6
SIGNATURE_DECIMALS = 4
"""Parameters are compared to this many decimals (0.1 mm, 0.0001 of a scale) for duplicates."""


class PlanError(Real2GymError):
    """A variation plan or its ranges cannot be used."""


@dataclasses.dataclass
class Ranges:
    """Mechanical ranges. A ``(low, high)`` pair is drawn uniformly; a single number ``r`` is ``(-r, r)``.

    Attributes:
        position_m: Shift of the manipulated object's start along each table axis (m).
        yaw_deg: Turn of the manipulated object's start about the vertical (degrees).
        target_position_m: Shift of the target (container, support) along each table axis (m).
        target_yaw_deg: Turn of the target (degrees).
        size_scale: Scale of the manipulated object (all axes).
        rim_scale: Scale of a container's opening (its bottom and wall thickness stay).
        table_height_m: Height of the table under the camera (m): moves the camera, not the physics.
        friction_scale: Scale of every object's sliding friction.
        mass_scale: Scale of every object's mass.
        distractors: Number of distractor objects ``(low, high)``, inclusive.
        distractor_size_m: Side or diameter of a distractor (m).
        part_start: Change of each moving part's start value (a door's angle, a drawer's opening), as a
            share of its joint's range; a part the demo starts at an end of its range (a door shut, or as
            open as it goes) starts that much in from it.
    """

    position_m: float = 0.03
    yaw_deg: float = 20.0
    target_position_m: float = 0.03
    target_yaw_deg: float = 20.0
    size_scale: tuple[float, float] = (0.9, 1.1)
    rim_scale: tuple[float, float] = (1.0, 1.15)
    table_height_m: tuple[float, float] = (-0.03, 0.03)
    friction_scale: tuple[float, float] = (0.8, 1.2)
    mass_scale: tuple[float, float] = (0.8, 1.2)
    distractors: tuple[int, int] = (0, 2)
    distractor_size_m: tuple[float, float] = (0.03, 0.06)
    part_start: float = 0.15


@dataclasses.dataclass
class AppearanceRanges:
    """Appearance ranges.

    Attributes:
        colours: Draw every object's colour.
        table_texture: Draw the table's colour and a plain or checked texture.
        light_intensity: The light's brightness (0-1).
        light_tilt_deg: How far the light leans from straight above (degrees).
        background: Draw the background's colour.
        only_share: Share of variants that change appearance only (they reuse the demo's physics).
    """

    colours: bool = True
    table_texture: bool = True
    light_intensity: tuple[float, float] = (0.5, 1.0)
    light_tilt_deg: float = 30.0
    background: bool = True
    only_share: float = 0.0


@dataclasses.dataclass
class VariationPlan:
    """A seed and the ranges; saved as ``plan.json``.

    Attributes:
        seed: The plan's seed.
        mechanical: Mechanical ranges.
        appearance: Appearance ranges.
        settle_s: How long the hand holds still before its fingers close or open (s).
    """

    seed: int = 0
    mechanical: Ranges = dataclasses.field(default_factory=Ranges)
    appearance: AppearanceRanges = dataclasses.field(default_factory=AppearanceRanges)
    settle_s: float = 0.1

    def to_json(self) -> dict[str, Any]:
        """The plan as plan.json holds it."""
        return {"version": PLAN_VERSION, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "the plan") -> VariationPlan:
        """Reads a plan; unknown keys and bad ranges are errors naming them.

        Raises:
            PlanError: Not a plan of this version, an unknown key, or a bad range.
        """
        if not isinstance(data, dict):
            raise PlanError(f"{where} is not a JSON object")
        if data.get("version", PLAN_VERSION) != PLAN_VERSION:
            raise PlanError(
                f"{where} is of plan version {data.get('version')}; this version reads {PLAN_VERSION}"
            )
        known = {f.name for f in dataclasses.fields(cls)} | {"version"}
        unknown = set(data) - known
        if unknown:
            raise PlanError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
        plan = cls(
            seed=data.get("seed", 0),
            mechanical=_section(Ranges, data.get("mechanical", {}), f"{where}: mechanical"),
            appearance=_section(AppearanceRanges, data.get("appearance", {}), f"{where}: appearance"),
            settle_s=data.get("settle_s", 0.1),
        )
        plan.check()
        return plan

    def check(self) -> None:
        """Raises :class:`PlanError` naming the first range that cannot be drawn from."""
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise PlanError(f"the seed must be a whole number >= 0, got {self.seed!r}")
        if not _finite(self.settle_s) or not 0 <= self.settle_s <= 2:
            raise PlanError(f"settle_s must be 0-2 s, got {self.settle_s!r}")
        m = self.mechanical
        for name in ("position_m", "target_position_m", "yaw_deg", "target_yaw_deg"):
            low, high = _pair(getattr(m, name), name)
            if name.endswith("_m") and max(abs(low), abs(high)) > 0.5:
                raise PlanError(
                    f"{name} reaches {max(abs(low), abs(high))} m: more than half a metre off the demo"
                )
        for name in ("size_scale", "rim_scale", "friction_scale", "mass_scale", "distractor_size_m"):
            low, high = _pair(getattr(m, name), name)
            if low <= 0:
                raise PlanError(f"{name} must be above 0, got ({low}, {high})")
        low, high = _pair(m.table_height_m, "table_height_m")
        low, high = _pair(m.part_start, "part_start")
        if max(abs(low), abs(high)) > 1:
            raise PlanError(f"part_start is a share of a joint's range: within -1 to 1, got ({low}, {high})")
        low, high = _pair(m.distractors, "distractors")
        if low < 0 or high > MAX_DISTRACTORS or low != int(low) or high != int(high):
            raise PlanError(f"distractors must be whole numbers 0-{MAX_DISTRACTORS}, got ({low}, {high})")
        a = self.appearance
        low, high = _pair(a.light_intensity, "light_intensity")
        if low < 0 or high > 1:
            raise PlanError(f"light_intensity must lie in 0-1, got ({low}, {high})")
        _pair(a.light_tilt_deg, "light_tilt_deg")
        if not _finite(a.only_share) or not 0 <= a.only_share <= 1:
            raise PlanError(f"appearance only_share must lie in 0-1, got {a.only_share!r}")

    def signature(self) -> str:
        """A digest of the ranges (not the seed): two plans with the same ranges share it."""
        ranges = {k: v for k, v in self.to_json().items() if k != "seed"}
        return hashlib.sha1(json.dumps(ranges, sort_keys=True).encode()).hexdigest()[:12]

    def draw(self, index: int, objects: list[dict[str, Any]]) -> dict[str, Any]:
        """Variant ``index``'s parameters.

        Args:
            index: The variant's number (0-based).
            objects: ``{"name", "role", "kind", "parts"}`` per object of the demo (``parts``: its moving
                parts' keys, ``microwave.door``; none: no parts); the task's object has role
                ``manipulated``, its target ``target``.

        Returns:
            JSON-ready parameters (see ``docs/variants.md``): ``kind`` (``mechanical`` or
            ``appearance``), ``objects`` (per object ``dx``, ``dy`` in m, ``dyaw_deg``, ``scale``,
            ``rim_scale``), ``table_dz``, ``friction_scale``, ``mass_scale``, ``distractors``
            (``shape``, ``size``, and ``u``, ``v`` in [0, 1) where on the table to try first),
            ``appearance`` and ``parts`` (per part key, its start's change as a share of its range).
        """
        rng = np.random.default_rng([self.seed, index])
        m, a = self.mechanical, self.appearance
        appearance_only = bool(rng.random() < a.only_share)
        params: dict[str, Any] = {"kind": "appearance" if appearance_only else "mechanical", "objects": {}}
        for obj in objects:
            role = obj["role"]
            change = {"dx": 0.0, "dy": 0.0, "dyaw_deg": 0.0, "scale": 1.0, "rim_scale": 1.0}
            if role == "manipulated":
                change.update(dx=_draw(rng, m.position_m), dy=_draw(rng, m.position_m),
                              dyaw_deg=_draw(rng, m.yaw_deg), scale=_draw(rng, m.size_scale))  # fmt: skip
            elif role == "target":
                change.update(dx=_draw(rng, m.target_position_m), dy=_draw(rng, m.target_position_m),
                              dyaw_deg=_draw(rng, m.target_yaw_deg))  # fmt: skip
                if is_container(obj.get("kind")):
                    change["rim_scale"] = _draw(rng, m.rim_scale)
            if obj.get("parts"):
                change["scale"] = 1.0  # a body's parts hang on it at their measured places: it keeps its size
            params["objects"][obj["name"]] = change
        params["table_dz"] = _draw(rng, m.table_height_m)
        params["friction_scale"] = _draw(rng, m.friction_scale)
        params["mass_scale"] = _draw(rng, m.mass_scale)
        low, high = _pair(m.distractors, "distractors")
        params["distractors"] = [
            {
                "shape": BOX.name if rng.random() < 0.5 else CYLINDER.name,
                "size": round(_draw(rng, m.distractor_size_m), 4),
                "height": round(_draw(rng, m.distractor_size_m), 4),
                "u": float(rng.random()),
                "v": float(rng.random()),
                "yaw_deg": float(rng.uniform(0, 90)),
            }
            for _ in range(int(rng.integers(int(low), int(high) + 1)))
        ]
        params["appearance"] = _draw_appearance(rng, a, [o["name"] for o in objects])
        # Drawn last: a scene without parts draws what it drew before parts could vary.
        params["parts"] = {key: _draw(rng, m.part_start) for o in objects for key in o.get("parts") or ()}
        if appearance_only:
            params = {**base_params(objects), "kind": "appearance", "appearance": params["appearance"]}
        return _rounded(params)


def base_params(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The demo itself as parameters: no edit."""
    return {
        "kind": "mechanical",
        "objects": {
            o["name"]: {"dx": 0.0, "dy": 0.0, "dyaw_deg": 0.0, "scale": 1.0, "rim_scale": 1.0}
            for o in objects
        },  # fmt: skip
        "table_dz": 0.0,
        "friction_scale": 1.0,
        "mass_scale": 1.0,
        "distractors": [],
        "appearance": {},
        "parts": {key: 0.0 for o in objects for key in o.get("parts") or ()},
    }


def shrink(params: dict[str, Any], factor: float = SHRINK) -> dict[str, Any]:
    """The parameters moved toward the demo's: every offset times ``factor``, every scale toward 1.

    Distractors keep their size and place; appearance is unchanged.
    """
    out = json.loads(json.dumps(params))
    for change in out["objects"].values():
        for key in ("dx", "dy", "dyaw_deg"):
            change[key] *= factor
        for key in ("scale", "rim_scale"):
            change[key] = 1.0 + factor * (change[key] - 1.0)
    out["table_dz"] *= factor
    if "parts" in out:  # a part's start, as a share of its range, toward the demo's
        out["parts"] = {key: share * factor for key, share in out["parts"].items()}
    for key in ("friction_scale", "mass_scale"):
        out[key] = 1.0 + factor * (out[key] - 1.0)
    return _rounded(out)


def signature(params: dict[str, Any]) -> str:
    """A digest of the parameters at :data:`SIGNATURE_DECIMALS` decimals: equal parameters, equal digest."""
    text = json.dumps(_rounded(params, SIGNATURE_DECIMALS), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def read_plan(path: Path) -> VariationPlan:
    """Reads a plan.json.

    Raises:
        PlanError: Unreadable, not JSON, or not a plan.
    """
    try:
        data = read_json_file(path, PlanError, f"the plan {path}")
    except OSError as e:
        raise PlanError(f"cannot read the plan {path}: {e.strerror or e}") from e
    return VariationPlan.from_json(data, str(path))


def check_seed_reuse(plan: VariationPlan, saved: Path) -> None:
    """Refuses a seed already used in ``saved`` (a plan.json) with other ranges.

    The variants of one seed are one set; the same seed with other ranges would give
    different variants under the same ids.

    Raises:
        PlanError: ``saved`` holds the same seed with other ranges.
    """
    if not Path(saved).is_file():
        return
    try:
        previous = read_plan(saved)
    except PlanError:
        return  # an unreadable old plan is replaced, not compared
    if previous.seed == plan.seed and previous.signature() != plan.signature():
        raise PlanError(
            f"seed {plan.seed} was used with other ranges in {saved}: the same seed would give other "
            f"variants under the same ids; choose another seed, or remove {Path(saved).parent} to start again"
        )


def _section(cls, data: dict, where: str):
    if not isinstance(data, dict):
        raise PlanError(f"{where} is not a JSON object")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise PlanError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return cls(**values)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _pair(value, name: str) -> tuple[float, float]:
    if _finite(value):
        if value < 0:
            raise PlanError(
                f"{name} must be >= 0 as a single number (it means -{name}..+{name}), got {value}"
            )
        return -float(value), float(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_finite(v) for v in value):
        low, high = float(value[0]), float(value[1])
        if low > high:
            raise PlanError(f"{name}: its low end {low} is above its high end {high}")
        return low, high
    raise PlanError(f"{name} must be a number or a [low, high] pair, got {value!r}")


def _draw(rng: np.random.Generator, value) -> float:
    low, high = _pair(value, "range")
    return float(rng.uniform(low, high)) if high > low else low


def _draw_appearance(rng: np.random.Generator, a: AppearanceRanges, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if a.colours:
        out["colours"] = {n: _colour(rng, 0.55, 0.9) for n in names}
    if a.table_texture:
        out["table"] = {"colour": _colour(rng, 0.2, 0.85, saturation=0.35),
                        "texture": "checker" if rng.random() < 0.5 else "plain"}  # fmt: skip
    low, high = _pair(a.light_intensity, "light_intensity")
    tilt, turn = math.radians(abs(_draw(rng, a.light_tilt_deg))), rng.uniform(0, 2 * math.pi)
    out["light"] = {
        "intensity": float(rng.uniform(low, high)) if high > low else low,
        "direction": [math.sin(tilt) * math.cos(turn), math.sin(tilt) * math.sin(turn), -math.cos(tilt)],
    }
    if a.background:
        out["background"] = _colour(rng, 0.3, 0.95, saturation=0.25)
    return out


def _colour(rng: np.random.Generator, low: float, high: float, saturation: float = 0.8) -> list[float]:
    import colorsys

    return list(colorsys.hsv_to_rgb(float(rng.random()), float(rng.uniform(0.2, saturation)),
                                    float(rng.uniform(low, high))))  # fmt: skip


def _rounded(value, decimals: int = 6):
    if isinstance(value, dict):
        return {k: _rounded(v, decimals) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, decimals) for v in value]
    if isinstance(value, float):
        return round(value, decimals) + 0.0  # no -0.0
    return value
