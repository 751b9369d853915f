"""The JSON Schemas in docs/schemas/ hold for the files Real2Gym reads and writes.

docs/data-contract.md points outside tools at these schemas; a schema that refuses a real demo
folder or report, or accepts what the readers refuse, would mislead every tool built on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.demo import parse_camera
from real2gym.real2gym_addon.errors import DemoFolderError, WarningLog
from real2gym.real2gym_addon.prompts import parse_prompts
from real2gym.real2gym_addon.trajectory import parse_trajectory

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "docs" / "schemas"
DATA = REPO / "tests" / "data"
BUNDLED = REPO / "examples" / "block_in_cup"
DEMO_KINDS = ("prompts", "camera", "trajectory")
KINDS = (*DEMO_KINDS, "report")
DEMO_FILES = list(
    dict.fromkeys(
        [
            *(BUNDLED / f"{kind}.json" for kind in DEMO_KINDS),
            DATA / "tiny_demo" / "prompts.json",
            DATA / "tiny_demo" / "camera.json",
            *(path for kind in DEMO_KINDS for path in sorted(DATA.rglob(f"{kind}.json"))),
        ]
    )
)
READERS = {  # the bundled demo's video: 150 frames of 640x480 at 30 fps
    "prompts": lambda data: parse_prompts(data, 150, 640, 480, WarningLog()),
    "camera": parse_camera,
    "trajectory": lambda data: parse_trajectory(data, 150, 30.0),
}


def _schema(kind: str) -> dict:
    return json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))


def _read(path: Path):
    """The file's JSON, refusing NaN and Infinity: Python reads them, JSON has no such numbers."""

    def refuse(constant: str):
        raise ValueError(f"{path} holds {constant}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _errors(kind: str, data) -> list[str]:
    found = Draft202012Validator(_schema(kind)).iter_errors(data)
    return sorted(f"{error.json_path}: {error.message}" for error in found)


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_a_valid_draft_2020_12_schema(kind: str) -> None:
    Draft202012Validator.check_schema(_schema(kind))


@pytest.mark.parametrize("path", DEMO_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_demo_folder_files_match_their_schema(path: Path) -> None:
    assert _errors(path.stem, _read(path)) == []


def test_segment_report_matches_the_schema(tiny_demo: Path, tmp_path: Path) -> None:
    """A report that stops after segmentation: no objects fitted, no table, no verification."""
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    assert _errors("report", _read(out / "report.json")) == []


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The report of a whole run on the bundled demo (about half a minute)."""
    out = tmp_path_factory.mktemp("run") / "out"
    main(["run", str(BUNDLED), "--out", str(out), "-q", "--no-blend"])
    return _read(out / "report.json")


def test_full_run_report_matches_the_schema(full_report: dict) -> None:
    assert _errors("report", full_report) == []
    # The fields the contract lists for a finished run are all there.
    assert {"table", "verification", "segmentation", "gripper"} <= full_report.keys()
    assert full_report["objects"] and all("friction" in o for o in full_report["objects"])


def _unknown_role(prompts: dict) -> str:
    prompts["objects"][0]["role"] = "tool"
    return "$.objects[0].role"


def _no_fx(camera: dict) -> str:
    del camera["fx"]
    return "$: 'fx' is a required property"


def _three_element_quaternion(trajectory: dict) -> str:
    trajectory["samples"][0]["quaternion"] = [0.0, 0.0, 1.0]
    return "$.samples[0].quaternion"


@pytest.mark.parametrize(
    ("kind", "spoil"),
    [("prompts", _unknown_role), ("camera", _no_fx), ("trajectory", _three_element_quaternion)],
)
def test_schema_refuses_what_the_reader_refuses(kind: str, spoil) -> None:
    data = _read(BUNDLED / f"{kind}.json")
    where = spoil(data)
    errors = _errors(kind, data)
    assert errors and all(e.startswith(where) for e in errors), errors
    with pytest.raises(DemoFolderError):
        READERS[kind](data)
