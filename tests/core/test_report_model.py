"""report.json's one model, reader and writer (issue 27): a report read and written again is the same file,
the version is known and older ones are migrated, and the model and the JSON Schema name the same fields."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from real2gym.real2gym_addon.errors import OutputError
from real2gym.real2gym_addon.report import (
    REPORT_NAME,
    REPORT_VERSION,
    Report,
    VerificationSection,
    migrate,
    read_report,
    versions,
    write_report,
)

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "report.schema.json"


def _minimal() -> dict:
    return {
        "version": REPORT_VERSION,
        "video": {"frames": 10, "fps": 30.0, "width": 64, "height": 48},
        "camera": {"fx": 50.0, "fy": 50.0, "cx": 32.0, "cy": 24.0, "width": 64, "height": 48},
    }


def test_a_demo_runs_report_round_trips_exactly(verified_demo_run: Path, tmp_path: Path) -> None:
    text = (verified_demo_run / REPORT_NAME).read_text(encoding="utf-8")
    raw = json.loads(text)
    report = read_report(verified_demo_run)
    assert report.to_json() == raw
    assert json.dumps(report.to_json(), indent=1) + "\n" == text  # the same keys, in the same order
    assert report.verification.passed and report.video.frames == raw["video"]["frames"]
    write_report(tmp_path, report)
    assert (tmp_path / REPORT_NAME).read_text(encoding="utf-8") == text


def test_unknown_keys_nulls_and_absent_sections_survive_a_round_trip() -> None:
    data = {
        "note": "a person's",
        **_minimal(),
        "objects": [],
        "table": None,
        "verification": {"checks": {"x": True}, "stale": None, "from_a_newer_version": [1], "passed": False},
        "timing": {"stages_s": {}, "total_s": 3.0},
    }
    data["camera"] |= {"world_from_camera": None, "lens": "wide"}
    report = Report.from_json(data)
    again = report.to_json()
    assert again == data and list(again) == list(data)
    assert list(again["verification"]) == list(data["verification"])
    assert report.table is None and report.camera.world_from_camera is None
    assert report.extra["note"] == "a person's" and report.verification.extra["from_a_newer_version"] == [1]
    assert report.keyframes == [] and "keyframes" not in again  # absent stays absent


def test_new_fields_come_after_those_read() -> None:
    report = Report.from_json(_minimal())
    report.set_verification({"passed": True, "checks": {}})
    report.record_stage_time("verify", 0.5)
    report.add_artifacts({"mjcf": "mjcf/scene.xml"})
    assert list(report.to_json()) == ["version", "video", "camera", "artifacts", "timing", "verification"]


def test_the_model_attaches_a_verification_its_suggestions_physics_and_files() -> None:
    data = _minimal() | {"objects": [{"name": "block"}, {"name": "cup", "friction": 0.3}]}
    report = Report.from_json(data)
    with pytest.raises(ValueError, match="the report has none"):
        report.attach_suggestions([])
    section = report.set_verification({"passed": False, "checks": {"a": {"passed": False}, "b": True}})
    assert isinstance(section, VerificationSection) and section.failed() == ["a"]
    report.attach_suggestions([{"text": "widen", "check": "a", "frame": 3, "fix": {"kind": "scale"}}])
    report.mark_stale()
    report.record_physics({"cup": 0.5}, default_friction=1.0)
    report.record_physics({"block": 0.8}, masses={"block": 0.05})
    report.add_artifacts({"masks": "masks"})
    report.add_artifacts({"mjcf": "mjcf/scene.xml"}, replace=True)
    written = report.to_json()
    assert written["verification"]["suggestions"][0]["text"] == "widen" and written["verification"]["stale"]
    assert written["objects"] == [
        {"name": "block", "friction": 0.8, "mass": 0.05},
        {"name": "cup", "friction": 0.5},
    ]
    assert written["artifacts"] == {"mjcf": "mjcf/scene.xml"}


def test_the_writer_is_atomic_and_refuses_nan(tmp_path: Path) -> None:
    report = Report.from_json(_minimal())
    path = write_report(tmp_path, report)
    before = path.read_text(encoding="utf-8")
    report.video.fps = math.nan
    with pytest.raises(OutputError, match=r"'video.fps' is NaN or infinite"):
        write_report(tmp_path, report)
    assert path.read_text(encoding="utf-8") == before and [p.name for p in tmp_path.iterdir()] == [
        REPORT_NAME
    ]
    with pytest.raises(TypeError, match="takes a Report"):
        write_report(tmp_path, _minimal())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (REPORT_VERSION + 1, f"has version {REPORT_VERSION + 1}; this real2gym reads version {REPORT_VERSION}; "
                             "it was written by a newer real2gym"),
        ("1", "has version '1'; this real2gym reads version"),
        (None, "has version None"),
        (0, "has version 0; this real2gym reads version"),
    ],
)  # fmt: skip
def test_a_version_it_cannot_read_is_named(tmp_path: Path, version, message: str) -> None:
    (tmp_path / REPORT_NAME).write_text(json.dumps(_minimal() | {"version": version}), encoding="utf-8")
    with pytest.raises(OutputError, match=message):
        read_report(tmp_path)


def test_the_migrations_are_applied_in_a_chain() -> None:
    calls = []

    def from_0(report: dict) -> dict:
        calls.append(0)
        return {**report, "version": 1, "video": {**report["video"], "width": 64}}

    def from_1(report: dict) -> dict:
        calls.append(1)
        return {**report, "version": 2}

    old = {"version": 0, "video": {"frames": 1}}
    assert migrate(old, {0: from_0, 1: from_1}, current=2) == {
        "version": 2,
        "video": {"frames": 1, "width": 64},
    }
    assert calls == [0, 1]
    assert migrate({"version": 2}, {0: from_0, 1: from_1}, current=2) == {"version": 2} and calls == [0, 1]
    with pytest.raises(ValueError, match="must give version 1"):
        migrate(old, {0: lambda report: report}, current=1)


def test_the_reader_migrates_an_older_report(tmp_path: Path, monkeypatch) -> None:
    """A report of a version the table knows is brought up to date before it is checked."""
    older = _minimal() | {"version": REPORT_VERSION - 1}
    del older["camera"]["width"]
    (tmp_path / REPORT_NAME).write_text(json.dumps(older), encoding="utf-8")
    with pytest.raises(OutputError, match="reads version"):
        read_report(tmp_path)

    def upgrade(report: dict) -> dict:
        camera = {**report["camera"], "width": report["video"]["width"]}
        return {**report, "camera": camera, "version": report["version"] + 1}

    monkeypatch.setitem(versions.MIGRATIONS, REPORT_VERSION - 1, upgrade)
    report = read_report(tmp_path)
    assert report.version == REPORT_VERSION and report.camera.width == 64


def test_a_report_copied_elsewhere_is_read_under_another_name(
    verified_demo_run: Path, tmp_path: Path
) -> None:
    shutil.copy(verified_demo_run / REPORT_NAME, tmp_path / "demo_report.json")
    assert read_report(tmp_path, "demo_report.json").to_json() == read_report(verified_demo_run).to_json()
    with pytest.raises(OutputError, match="missing"):
        read_report(tmp_path, "other.json")


def _fields(section: type) -> set[str]:
    return {f.name for f in dataclasses.fields(section)} - {"extra", "key_order"}


def test_the_model_and_the_json_schema_name_the_same_fields() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert _fields(Report) == set(schema["properties"]), "docs/schemas/report.schema.json and report/model.py"
    for key, section in Report.NESTED.items():
        assert _fields(section) == set(schema["properties"][key]["properties"]), key
    for key in ("video", "verification"):  # what the schema requires, the model cannot be without
        required = {f.name for f in dataclasses.fields(Report.NESTED[key]) if f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING}  # fmt: skip
        assert required == set(schema["properties"][key]["required"]), key
