"""Nothing the user owns is ever deleted or overwritten (issue 26; the rule is in docs/cli.md).

A folder tree holds what a user has: a demo folder, a verified run, a parent folder with
their own files and folders, a link, and decoys named like the staging folders the tool
uses (``.env-staging``, ``.variants-staging``, ``.real2gym-staging-*``). Every command
that writes is run against it, first aimed at what it must not touch (each must exit 2
with one line and change no byte anywhere), then as a user would, where every byte
outside the command's own output must stay as it was.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from hostile_kit import assert_one_line as _assert_one_line
from hostile_kit import file_tree as _tree
from real2gym.real2gym_addon import json_files
from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.files import STAGING_MARKER, swap_in
from real2gym.real2gym_addon.targets import MANIFEST_NAME

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "block_in_cup"
TINY = REPO / "tests" / "data" / "tiny_demo"

DECOYS = (".env-staging/keep.txt", "run/.variants-staging/keep.txt", "run/.real2gym-staging-mine/keep.txt",
          "run/.variants-old/keep.txt", ".real2gym-staging-old-x/keep.txt")  # fmt: skip
"""Users' files in folders named like the staging folders of today's and earlier versions."""


@pytest.fixture(scope="module")
def user_tree(verified_demo_run: Path, tmp_path_factory) -> Path:
    """``root/``: notes.txt, photos/, a link to photos, demo/ (real files), tiny/ (a small demo),
    run/ (a verified run), oldbatch/ (a batch folder of real2gym's), the decoys, and bad JSON files."""
    root = tmp_path_factory.mktemp("user") / "root"
    root.mkdir()
    (root / "notes.txt").write_text("my notes")
    (root / "photos").mkdir()
    (root / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    (root / "link").symlink_to(root / "photos")
    shutil.copytree(DEMO, root / "demo")
    shutil.copytree(TINY, root / "tiny")
    shutil.copytree(verified_demo_run, root / "run")
    (root / "oldbatch").mkdir()
    (root / "oldbatch" / MANIFEST_NAME).write_text(json.dumps({"tool": "real2gym", "kind": "batch"}))
    (root / "oldbatch" / "summary.md").write_text("an earlier batch")
    for decoy in DECOYS:
        (root / decoy).parent.mkdir(parents=True, exist_ok=True)
        (root / decoy).write_text("a user's file")
    (root / "deep_plan.json").write_text('{"seed": ' + "[" * 200_000 + "]" * 200_000 + "}")
    return root


@pytest.fixture
def tree(user_tree: Path, tmp_path: Path) -> Path:
    """A fresh copy of the user's tree for one test (links kept as links)."""
    return Path(shutil.copytree(user_tree, tmp_path / "root", symlinks=True))


REFUSED = {
    "export-gym to the parent": (["export-gym", "{run}", "--to", "{root}"], "holds the run folder"),
    "export-gym to the demo": (["export-gym", "{run}", "--to", "{demo}"], "is a demo folder"),
    "export-gym to the masks": (["export-gym", "{run}", "--to", "{run}/masks"], "lies inside the run folder"),
    "export-gym to the mjcf": (["export-gym", "{run}", "--to", "{run}/mjcf"], "lies inside the run folder"),
    "export-gym to the run": (["export-gym", "{run}", "--to", "{run}"], "is the run folder"),
    "export-gym to a user folder": (
        ["export-gym", "{run}", "--to", "{root}/photos"],
        "is not empty and holds no",
    ),
    "export-gym to a decoy": (
        ["export-gym", "{run}", "--to", "{root}/.env-staging"],
        "is not empty and holds no",
    ),
    "export-gym to a file": (["export-gym", "{run}", "--to", "{root}/notes.txt"], "is a file, not a folder"),
    "export-gym to a link": (["export-gym", "{run}", "--to", "{root}/link"], "is a link"),
    "export-gym to nothing": (["export-gym", "{run}", "--to", ""], "argument --to: is empty"),
    "export-gym to blanks": (["export-gym", "{run}", "--to", "  "], "argument --to: is empty"),
    "export-gym a variant to its run": (
        ["export-gym", "{run}", "--to", "{run}/variants/v0000", "--variant", "v0000"],
        "lies inside the run folder",
    ),  # fmt: skip
    "run into the parent": (["run", "{demo}", "--out", "{root}"], "holds the demo folder"),
    "run into the demo": (["run", "{demo}", "--out", "{demo}"], "is the demo folder"),
    "run inside the demo": (["run", "{demo}", "--out", "{demo}/out"], "lies inside the demo folder"),
    "run into another demo": (["run", "{demo}", "--out", "{root}/tiny"], "is a demo folder"),
    "run into the mjcf": (["run", "{demo}", "--out", "{run}/mjcf"], "lies inside the run folder"),
    "run into a user folder": (
        ["run", "{demo}", "--out", "{root}/photos"],
        "is not empty and holds no earlier run",
    ),
    "run into a link": (["run", "{demo}", "--out", "{root}/link"], "is a link"),
    "run into nothing": (["run", "{demo}", "--out", ""], "argument --out: is empty"),
    "run into blanks": (["run", "{demo}", "--out", " \t"], "argument --out: is empty"),
    "segment into the parent": (["segment", "{tiny}", "--out", "{root}"], "holds the demo folder"),
    "segment into a user folder": (["segment", "{tiny}", "--out", "{root}/photos"], "is not empty"),
    "batch into the parent": (["batch", "{tiny}", "--out", "{root}"], "holds the demo folder"),
    "batch into the demo": (["batch", "{tiny}", "--out", "{tiny}"], "is the demo folder"),
    "batch into a run": (["batch", "{tiny}", "--out", "{run}"], "is a run's folder"),
    "batch over an earlier batch": (
        ["batch", "{tiny}", "--out", "{root}/oldbatch"],
        "pass --force to replace it",
    ),
    "vary nothing": (["vary", ""], "argument out_dir: is empty"),
    "vary with a deep plan": (
        ["vary", "{run}", "--plan", "{root}/deep_plan.json"],
        "deep_plan.json is nested more than 64 levels deep",
    ),  # fmt: skip
    "vary with an empty plan path": (["vary", "{run}", "--plan", ""], "argument --plan: is empty"),
    "fix nothing": (["fix", "", "--suggest"], "argument out_dir: is empty"),
    "verify nothing": (["verify", " "], "argument out_dir: is empty"),
    "compare nothing": (["compare", ""], "argument out_dir: is empty"),
    "compare the demo": (["compare", "{demo}"], "no report.json in"),
}


def _argv(template: list[str], root: Path) -> list[str]:
    places = {"root": root, "run": root / "run", "demo": root / "demo", "tiny": root / "tiny"}
    return [part.format(**places) for part in template]


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_command_aimed_at_what_it_must_not_touch_exits_2_and_changes_no_byte(
    case: str, tree: Path, capsys
) -> None:
    template, message = REFUSED[case]
    before = _tree(tree)
    capsys.readouterr()
    code = main(_argv(template, tree))
    captured = capsys.readouterr()
    assert code == 2, captured.err
    _assert_one_line(captured.err, re.escape(message))
    assert _tree(tree) == before


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


def _assert_only(changed: set[str], allowed: str) -> None:
    outside = sorted(key for key in changed if key != allowed and not key.startswith(allowed + "/"))
    assert not outside, f"changed outside {allowed}: {outside[:10]}"
    assert not changed & set(DECOYS), "a user's folder named like a staging folder was touched"


def test_every_writing_command_changes_only_its_own_output(tree: Path, capsys) -> None:
    """Each command, used as a user would, changes bytes only inside the output it owns."""
    steps = [
        (["export-gym", "{run}", "--to", "{root}/env"], 0, "env"),
        (["export-gym", "{run}", "--to", "{root}/env", "--force"], 0, "env"),
        (["export-gym", "{run}", "--to", "{root}/empty"], 0, "empty"),
        (["fix", "{run}", "--object", "cup", "--rim-scale", "1.02", "--no-verify"], 0, "run"),
        (["fix", "{run}", "--undo"], 0, "run"),
        (["verify", "{run}"], 0, "run"),
        (["vary", "{run}", "--count", "1", "--no-render", "-q"], 0, "run"),
        (["compare", "{run}", "-q"], 0, "run"),
        (["segment", "{tiny}", "--out", "{root}/seg", "-q"], 0, "seg"),
        (["segment", "{tiny}", "--out", "{root}/seg", "-q"], 0, "seg"),
        (["batch", "{tiny}", "--out", "{root}/batch", "--jobs", "1", "-q"], None, "batch"),
        (["batch", "{tiny}", "--out", "{root}/batch", "--jobs", "1", "-q", "--force"], None, "batch"),
    ]
    (tree / "empty").mkdir()
    for template, code, allowed in steps:
        before = _tree(tree)
        assert main(_argv(template, tree)) in ((0, 1) if code is None else (code,)), capsys.readouterr().err
        after = _tree(tree)
        _assert_only(_changed(before, after), allowed)
        decoys = set(DECOYS) | {str(Path(decoy).parent) for decoy in DECOYS}
        assert not [key for key in after if "staging" in key and key not in decoys], f"{template} left debris"
    assert (tree / "env" / "task.json").is_file() and (tree / "env" / MANIFEST_NAME).is_file()
    assert (tree / "batch" / "summary.md").is_file()


def test_export_gym_replaces_its_own_earlier_environment_only_with_force(tree: Path, capsys) -> None:
    assert main(["export-gym", str(tree / "run"), "--to", str(tree / "env")]) == 0
    (tree / "env" / "my_policy.pt").write_bytes(b"weights")
    assert main(["export-gym", str(tree / "run"), "--to", str(tree / "env")]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert (tree / "env" / "my_policy.pt").read_bytes() == b"weights"
    assert main(["export-gym", str(tree / "run"), "--to", str(tree / "env"), "--force"]) == 0
    assert not (tree / "env" / "my_policy.pt").exists()  # --force replaces the folder whole, as documented
    assert oct((tree / "env").stat().st_mode & 0o777) == oct(0o755)


def test_a_failed_swap_puts_the_earlier_output_back(tmp_path: Path, monkeypatch) -> None:
    target, staging = tmp_path / "env", tmp_path / "staging"
    target.mkdir()
    (target / "task.json").write_text("earlier")
    staging.mkdir()
    (staging / STAGING_MARKER).write_bytes(b"")
    real_rename = Path.rename

    def failing_rename(self, other):
        if self == staging:
            raise OSError(28, "No space left on device")
        return real_rename(self, other)

    monkeypatch.setattr(Path, "rename", failing_rename)
    with pytest.raises(OSError):
        swap_in(staging, target)
    assert (target / "task.json").read_text() == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env", "staging"]


def test_a_report_over_the_size_limit_is_refused_naming_it(tree: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(json_files, "MAX_JSON_BYTES", 1000)
    before = _tree(tree)
    assert main(["verify", str(tree / "run")]) == 2
    _assert_one_line(capsys.readouterr().err, r"report.json is 0 MB; JSON files over 0 MB are refused")
    assert _tree(tree) == before


def test_a_report_200000_levels_deep_is_refused(tree: Path, capsys) -> None:
    (tree / "run" / "report.json").write_text("[" * 200_000 + "]" * 200_000)
    before = _tree(tree)
    for command in (["verify"], ["fix", "--suggest"], ["compare", "-q"], ["vary"]):
        assert main([command[0], str(tree / "run"), *command[1:]]) == 2
        _assert_one_line(capsys.readouterr().err, "report.json is nested more than 64 levels deep")
    assert _tree(tree) == before
