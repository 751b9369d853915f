"""The physics a report sets for its objects: masses and frictions, read and written back.

report.json's ``objects[].mass``, ``density`` and ``friction`` are what the verifier
used, and an edit there (or in Blender, or ``real2gym verify --mass/--friction``)
changes the next verification (docs/data-contract.md). What a verification used is
written back by :meth:`~.report.Report.record_physics`.
"""

from __future__ import annotations

from .errors import Real2GymError
from .geometry.shapes import Shape
from .mjcf.export import DEFAULT_DENSITY, FRICTION_RANGE, collision_volume
from .report import Report

MASS_RANGE = (0.0, 1e5)
"""kg, and kg/m3 for a density: what a report may hold (0 = not set)."""


def physics_from_report(report: Report) -> tuple[dict[str, float], dict[str, float]]:
    """The masses and frictions report.json sets (``objects[].mass``, ``density``, ``friction``).

    A mass above 0 is taken as it is; otherwise a density other than the default
    gives density x collision volume (the contract: what the verifier used, and an
    edit there changes the next verification).

    Raises:
        Real2GymError: A value is not a finite number in its range; the message names the object.
    """
    masses, frictions = {}, {}
    for entry in report.objects:
        name = entry.get("name", "?")
        for key in ("mass", "density", "friction"):
            value = entry.get(key)
            if value is None:
                continue
            low, high = FRICTION_RANGE if key == "friction" else MASS_RANGE
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise Real2GymError(
                    f"report.json: object '{name}': {key} must be a number from {low:g} to {high:g}, got {value!r}"
                )
        if entry.get("mass"):
            masses[name] = float(entry["mass"])
        elif entry.get("density") and abs(entry["density"] - DEFAULT_DENSITY) > 1e-6:
            masses[name] = float(entry["density"]) * collision_volume(Shape.from_report(entry))
        if entry.get("friction") is not None:
            frictions[name] = float(entry["friction"])
    return masses, frictions


def physics_with(
    report: Report, masses: dict[str, float] | None, frictions: dict[str, float] | None
) -> tuple[dict[str, float], dict[str, float]]:
    """The report's masses and frictions (:func:`physics_from_report`) with the given overrides over them."""
    reported_masses, reported_frictions = physics_from_report(report)
    return reported_masses | (masses or {}), reported_frictions | (frictions or {})
