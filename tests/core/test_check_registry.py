"""The tables of checks and segmentation backends: everything that shows a check or a backend reads them.

A check added to ``CHECKS`` (here a fake one, patched in) is run by the verifier, shown
in the panel's summary with its label and figure, listed on the keyframes it
concerns, asked for its suggestion and written into docs/checks.md's table, with no
other edit. The verifier itself with a fake check is in test_verifier.py.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest
from docs_kit import gen_docs

from real2gym.real2gym_addon.errors import SegmentationError
from real2gym.real2gym_addon.fixes.review import keyframe_checks
from real2gym.real2gym_addon.fixes.suggest import suggest_fixes
from real2gym.real2gym_addon.report import REPORT_VERSION, Report
from real2gym.real2gym_addon.segmentation import backends
from real2gym.real2gym_addon.summary import render_summary
from real2gym.real2gym_addon.verify import registry
from real2gym.real2gym_addon.verify.summary import short_figure, summarise_verification

REPO = Path(__file__).resolve().parents[2]
EVENTS = {"grasp", "lift", "contact", "release", "push", "open", "closed"}

RESULTS = {
    "task_success": {"passed": True, "radial_offset_m": 0.0001, "inner_radius_m": 0.0411,
                     "height_above_bottom_m": 0.0072, "inside": True, "resting_on_bottom": True},
    "grasp_held": {"passed": True, "held_fraction": 1.0, "slip_m": 0.0003, "first_frame_without_contact": None,
                   "frames": [53, 107]},
    "support": {"passed": True, "weight_n": 0.369, "support_n": 0.369, "ratio": 1.0, "by": {"cup": 0.369}},
    "stability": {"passed": True, "max_linear_speed_m_s": 5e-05, "max_angular_speed_rad_s": 0.0015},
    "penetration": {"passed": False, "max_m": 0.0031, "peak_m": 0.0055, "object": "block", "frame": 51},
    "trajectory_fidelity": {"passed": True, "rms_m": {"before_grasp": 0.0008, "carried": 0.007}, "limit_m": 0.03},
    "release_clearance": {"passed": True, "release_frame": 108, "recorded_gap_m": 0.0794, "held_gap_m": 0.0394,
                          "clearance_m": 0.04, "freed": True, "held_after_release": 0.0, "video_shows_freed": True},
    "hand_clearance": {"passed": False, "object": "cup", "phase": "approach", "frame": 40, "moved_m": 0.012,
                       "limit_m": 0.01},
    "objects_at_rest_at_start": {"passed": True, "object": "cup", "frame": 2, "moved_m": 0.0, "window_s": 0.233,
                                 "limit_m": 0.002},
    "no_shortcuts": {"passed": True, "problems": []},
    "joint_fidelity": {"passed": True, "parts": {"cabinet.door": {"rms": 0.031, "worst_frame": 40, "limit": 0.15,
                                                                  "unit": "rad"}}},
    "simulation_stable": {"passed": False, "frame": 31, "warnings": [], "reason": "the simulation diverged"},
}  # fmt: skip
"""One result of each check, as report.json holds them (the bundled demo's, one or two failed)."""


def _fake_check(**changes) -> registry.Check:
    fields = dict(
        label="Fake",
        measure=lambda run: {"passed": False, "frame": 7},
        figure=lambda check: f"at f {check['frame']}",
        needs="the fake figure under its limit",
        events=("release",),
        suggest=_fake_suggestion,
    )
    return registry.Check("fake_check", **{**fields, **changes})


def _fake_suggestion(context, made):
    """Do the fake thing (`offset`)."""
    if "fake_check" not in context.failing:
        return []
    return [{"text": "fix the fake thing", "check": "fake_check", "frame": 7, "fix": {"kind": "offset"}}]


def _report(checks: dict) -> dict:
    return {
        "version": REPORT_VERSION,
        "video": {"frames": 150, "fps": 30.0, "width": 640, "height": 480},
        "camera": {"fx": 580.0, "fy": 580.0, "cx": 319.5, "cy": 239.5, "width": 640, "height": 480},
        "task": {"type": "lift", "object": "block"},
        "objects": [{"name": "block", "shape": "box", "size": [0.04, 0.04, 0.04]}],
        "keyframes": [
            {"frame": 50, "event": "grasp", "object": "block"},
            {"frame": 108, "event": "release", "object": "block"},
        ],  # fmt: skip
        "verification": {"passed": all(c["passed"] for c in checks.values()), "checks": checks},
    }


def test_every_check_has_a_label_a_figure_and_what_it_needs() -> None:
    labels = [check.label for check in registry.CHECKS.values()]
    assert len(set(labels)) == len(labels) and all(labels)
    assert set(registry.CHECKS) == set(RESULTS)
    for name, check in registry.CHECKS.items():
        assert check.name == name and check.needs and set(check.events) <= EVENTS
        assert callable(check.measure) and callable(check.figure)
        if check.suggest is not None:  # docs/checks.md says what it suggests from its docstring
            assert (check.suggest.__doc__ or "").strip()
        figure = short_figure(name, RESULTS[name])
        assert figure and figure != name, name
    assert short_figure("penetration", RESULTS["penetration"]) == "3.1 mm (block, f 51)"
    assert short_figure("hand_clearance", RESULTS["hand_clearance"]) == "cup +12.0 mm (approach, f 40)"


def test_the_summary_shows_every_check_and_survives_unknown_ones() -> None:
    checks = {name: result for name, result in RESULTS.items() if name != "simulation_stable"}
    summary = summarise_verification(_report({**checks, "from_a_newer_version": {"passed": True, "x": 1}}))
    assert summary.verified is False
    assert [row.name for row in summary.checks] == [*checks, "from_a_newer_version"]
    assert [row.label for row in summary.checks][:3] == ["Task", "Grasp", "Support"]
    unknown = summary.checks[-1]
    assert (unknown.label, unknown.passed, unknown.figure) == ("from_a_newer_version", True, "")
    broken = summarise_verification(_report({"grasp_held": {"passed": False}}))  # figures missing
    assert broken.checks[0].figure == ""
    assert summarise_verification({"objects": []}).verified is None


def test_a_diverged_simulation_reports_only_what_does_not_read_it_to_the_end(monkeypatch) -> None:
    shortcuts = dataclasses.replace(
        registry.CHECKS["no_shortcuts"], measure=lambda run: {"passed": True, "problems": []}
    )
    monkeypatch.setitem(registry.CHECKS, "no_shortcuts", shortcuts)
    record = SimpleNamespace(diverged_frame=31, warnings=["nan"])
    results = registry.run_checks(
        registry.CheckInputs({"type": "lift", "object": "block"}, None, record, None)
    )
    assert results == {
        "simulation_stable": {
            "passed": False,
            "frame": 31,
            "warnings": ["nan"],
            "reason": "the simulation diverged (NaN or bad accelerations)",
        },
        "no_shortcuts": {"passed": True, "problems": []},
    }


def test_a_check_added_to_the_table_shows_everywhere(monkeypatch) -> None:
    monkeypatch.setitem(registry.CHECKS, "fake_check", _fake_check())
    checks = {"grasp_held": RESULTS["grasp_held"], "fake_check": {"passed": False, "frame": 7}}
    report = _report(checks)

    # The verifier runs it (the table's order, after the others) ...
    record = SimpleNamespace(diverged_frame=None)
    others = {
        name: dataclasses.replace(check, measure=lambda run: {"passed": True})
        for name, check in registry.CHECKS.items()
        if name != "fake_check"
    }
    with monkeypatch.context() as patched:
        for name, check in others.items():
            patched.setitem(registry.CHECKS, name, check)
        results = registry.run_checks(registry.CheckInputs(report["task"], None, record, None))
    assert list(results)[-1] == "fake_check" and results["fake_check"] == {"passed": False, "frame": 7}

    # ... the panel shows its label and figure, the review list its keyframe, the suggestions its rule ...
    row = summarise_verification(report).checks[-1]
    assert (row.name, row.label, row.passed, row.figure) == ("fake_check", "Fake", False, "at f 7")
    release = next(r for r in keyframe_checks(report) if r["event"] == "release")
    assert release["checks"] == ["grasp_held", "fake_check"] and release["failed"] == ["fake_check"]
    assert [s["check"] for s in suggest_fixes(report)] == ["fake_check"]
    # ... summary.html what it needs, and docs/checks.md's table a row.
    from real2gym.real2gym_addon.summary import Pictures

    assert "the fake figure under its limit" in render_summary(Report.from_json(report), Pictures())
    table = gen_docs().checks_table()
    assert (
        "| `fake_check` | Fake | the fake figure under its limit | release | Do the fake thing (`offset`). |"
        in table
    )


def test_docs_checks_table_is_up_to_date() -> None:
    """docs/checks.md's table of checks is generated: run tools/gen_docs.py after changing CHECKS."""
    text = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    assert gen_docs().with_checks_table(text) == text, "docs/checks.md is out of date: run tools/gen_docs.py"


def test_every_backend_is_in_the_table_and_a_new_one_needs_one_entry(monkeypatch) -> None:
    assert (
        backends.BACKENDS == tuple(backends.SEGMENTATION_BACKENDS)
        and backends.DEFAULT_BACKEND in backends.BACKENDS
    )
    for name, backend in backends.SEGMENTATION_BACKENDS.items():
        assert backend.name == name and backend.label and backend.description
        assert importlib.util.find_spec(f"real2gym.real2gym_addon.segmentation.{backend.module}") is not None
        fields = {f.name for f in dataclasses.fields(backends.SegmentationOptions)}
        assert set(backend.options) <= fields - {"backend"}

    made = []
    fake = backends.Backend(
        "fake",
        label="Fake",
        description="a test backend",
        module="classical",
        make=lambda module, options: made.append(options) or module.ClassicalSegmenter(),
        status=lambda options: (options.device == "cpu", "needs the CPU"),
        options=("device",),
    )
    monkeypatch.setitem(backends.SEGMENTATION_BACKENDS, "fake", fake)
    assert backends.backend_status(backends.SegmentationOptions(backend="fake")) == (False, "needs the CPU")
    segmenter = backends.make_segmenter(backends.SegmentationOptions(backend="fake", device="cpu"))
    assert type(segmenter).__name__ == "ClassicalSegmenter" and made[0].backend == "fake"
    with pytest.raises(SegmentationError, match="unknown segmentation backend 'nope'"):
        backends.make_segmenter(backends.SegmentationOptions(backend="nope"))
