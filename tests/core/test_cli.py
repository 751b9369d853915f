"""The real2gym command line: what a user sees for good and bad runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from real2gym.real2gym_addon import Cancelled, Progress, run_pipeline
from real2gym.real2gym_addon.cli import main

REPO = Path(__file__).resolve().parents[2]


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "real2gym_addon", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_run_writes_report(tiny_demo: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["version"] == 1
    assert report["video"] == {
        "frames": 12,
        "fps": 24.0,
        "width": 96,
        "height": 72,
        "source": str(tiny_demo / "video.mp4"),
    }
    assert report["camera"]["fx"] == 80.0 and report["camera"]["world_from_camera"] is None
    assert report["task"] == {"type": "place_in", "object": "block", "target": "cup"}
    assert str(out / "report.json") in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["masks", "report.json", "summary.html"]
    assert [o["name"] for o in report["segmentation"]["objects"]] == ["block", "cup"]


def test_module_entry_point_matches_console_script(tiny_demo: Path, tmp_path: Path) -> None:
    result = _run_cli("segment", str(tiny_demo), "--out", str(tmp_path / "a"), "-q")
    assert result.returncode == 0, result.stderr
    main(["segment", str(tiny_demo), "--out", str(tmp_path / "b"), "-q"])
    first, second = (json.loads((tmp_path / n / "report.json").read_text()) for n in "ab")
    first.pop("timing"), second.pop("timing")
    assert first == second
    for name in ("block", "cup"):  # the same masks, byte for byte
        for png in (tmp_path / "a" / "masks" / name).iterdir():
            assert png.read_bytes() == (tmp_path / "b" / "masks" / name / png.name).read_bytes()


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda d: (d / "prompts.json").write_text("{"), "prompts.json is not valid JSON"),
        (lambda d: (d / "camera.json").unlink(), "camera.json is missing"),
        (lambda d: (d / "video.mp4").write_bytes(b"\x00" * 100), "cannot be opened as a video"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tiny_demo: Path, tmp_path: Path, breakage, message: str) -> None:
    breakage(tiny_demo)
    out = tmp_path / "out"
    result = _run_cli("run", str(tiny_demo), "--out", str(out), "-q")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("real2gym: error: ") and message in lines[0]
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_missing_demo_folder(tmp_path: Path, capsys) -> None:
    assert main(["run", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "demo folder not found" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_unwritable_output_folder(tiny_demo: Path, tmp_path: Path, capsys, where: str) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    out = blocker / "out" if where == "under_a_file" else Path("/proc/real2gym-out")
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 2
    assert f"cannot create the output folder {out}" in capsys.readouterr().err


def test_failed_run_keeps_earlier_output(tiny_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    before = (out / "report.json").read_bytes()
    prompts = json.loads((tiny_demo / "prompts.json").read_text())
    prompts["objects"][0]["frame"] = 99
    (tiny_demo / "prompts.json").write_text(json.dumps(prompts))
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 2
    assert (out / "report.json").read_bytes() == before
    assert sorted(os.listdir(out)) == ["masks", "report.json", "summary.html"]


def test_cancelled_run_writes_nothing(tiny_demo: Path, tmp_path: Path) -> None:
    progress = Progress()
    progress.cancel()
    with pytest.raises(Cancelled):
        run_pipeline(tiny_demo, tmp_path / "out", progress=progress, last_stage="segment")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_progress_reaches_the_end(tiny_demo: Path, tmp_path: Path) -> None:
    seen = []
    run_pipeline(
        tiny_demo, tmp_path / "out", progress=Progress(lambda m, f: seen.append((m, f))), last_stage="segment"
    )
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_version_names_the_package_and_mujoco(capsys) -> None:
    assert main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("real2gym 0.") and "MuJoCo 4." in line and "Python 3." in line


def test_json_prints_one_object_and_the_human_lines_go_to_stderr(
    tiny_demo: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q", "--json"]) == 0
    printed = capsys.readouterr()
    result = json.loads(printed.out)
    assert result["exit_code"] == 0 and result["command"] == "segment" and result["error"] is None
    assert result["verdict"] == "not simulated" and result["passed"] is None
    assert result["paths"]["report"] == str((out / "report.json").resolve())
    assert result["paths"]["masks"] == str((out / "masks").resolve())
    assert "report:" in printed.err


def test_json_on_bad_input_carries_the_error(tiny_demo: Path, tmp_path: Path, capsys) -> None:
    (tiny_demo / "prompts.json").write_text("{")
    assert main(["segment", str(tiny_demo), "--out", str(tmp_path / "out"), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["exit_code"] == 2 and result["verdict"] == "error"
    assert "prompts.json" in result["error"]


def test_a_run_over_logged_fixes_is_refused_without_force(tiny_demo: Path, tmp_path: Path, capsys) -> None:
    """An artist's fixes live in report.json's edit_log: a new run would silently drop them."""
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    report["edit_log"] = [{"kind": "rim_scale", "object": "cup", "args": {"factor": 1.05}}]
    (out / "report.json").write_text(json.dumps(report))
    before = (out / "report.json").read_bytes()
    capsys.readouterr()
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "1 fix(es) (rim_scale)" in err and "--force" in err and err.count("\n") == 1
    assert (out / "report.json").read_bytes() == before
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q", "--force"]) == 0
    assert "edit_log" not in json.loads((out / "report.json").read_text())


def test_a_new_run_leaves_nothing_of_the_old_one(tiny_demo: Path, tmp_path: Path) -> None:
    """An old comparison video beside a new report would show another run; the user's own files stay."""
    out = tmp_path / "out"
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    (out / "compare").mkdir()
    (out / "compare" / "comparison.mp4").write_bytes(b"old")
    (out / "scene.blend").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    assert main(["segment", str(tiny_demo), "--out", str(out), "-q"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["masks", "notes.txt", "report.json", "summary.html"]
