"""Broken and hostile input against the command line (issue: hardening).

Each case breaks one thing in a copy of the bundled demo (video, camera, depth,
prompts, trajectory), in a finished run's report.json, or in the arguments, and
runs ``real2gym`` as a user would. Every case must end with its exit code (2 for
bad input), one line on stderr that names what is wrong, no traceback, nothing
written outside the output folder, and an earlier output byte-identical.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from hostile_kit import assert_one_line as _assert_one_line
from hostile_kit import file_tree as _tree
from real2gym.real2gym_addon import cli
from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.errors import OutputError
from real2gym.real2gym_addon.files import OutputFolder
from real2gym.real2gym_addon.segmentation.run import ObjectTrack, Segmentation

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "block_in_cup"
TINY = REPO / "tests" / "data" / "tiny_demo"
FRAMES = 150


def _demo(tmp_path: Path) -> Path:
    """A demo folder whose files link to the bundled demo's; a case replaces what it breaks."""
    demo = tmp_path / "demo"
    demo.mkdir()
    for name in ("video.mp4", "camera.json", "prompts.json", "trajectory.json", "depth"):
        (demo / name).symlink_to(DEMO / name)
    return demo


def _edit_json(name: str, edit: Callable[[dict], object]) -> Callable[[Path], None]:
    """A breakage that rewrites ``name`` after ``edit`` changed (or replaced) its content."""

    def breakage(demo: Path) -> None:
        data = json.loads((DEMO / name).read_text())
        result = edit(data)
        (demo / name).unlink()
        (demo / name).write_text(json.dumps(data if result is None else result))

    return breakage


def _write(name: str, content: bytes | str) -> Callable[[Path], None]:
    def breakage(demo: Path) -> None:
        target = demo / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        target.write_bytes(content.encode() if isinstance(content, str) else content)

    return breakage


def _remove(name: str) -> Callable[[Path], None]:
    return lambda demo: (demo / name).unlink()


def _own_depth(demo: Path) -> Path:
    """Replaces the linked depth folder by one of links to each image, so one can be swapped."""
    (demo / "depth").unlink()
    folder = demo / "depth"
    folder.mkdir()
    for image in sorted((DEMO / "depth").iterdir()):
        (folder / image.name).symlink_to(image)
    return folder


def _depth(frame: int, write: Callable[[Path], None] | None) -> Callable[[Path], None]:
    def breakage(demo: Path) -> None:
        target = _own_depth(demo) / f"{frame:06d}.png"
        target.unlink()
        if write is not None:
            write(target)

    return breakage


def _objects(edit: Callable[[list], object]) -> Callable[[Path], None]:
    return _edit_json("prompts.json", lambda p: edit(p["objects"]))


def _rename(name: str) -> Callable[[Path], None]:
    def edit(prompts: dict) -> None:
        prompts["objects"][0]["name"] = name
        prompts["task"]["object"] = name

    return _edit_json("prompts.json", edit)


def _mesh_prompt(obj_text: str) -> Callable[[Path], None]:
    """The cup becomes a user's mesh, ``cup.obj`` in the demo folder, with ``obj_text`` as its content."""

    def breakage(demo: Path) -> None:
        (demo / "cup.obj").write_text(obj_text)
        _objects(lambda o: o[1].update(shape="mesh", mesh="cup.obj"))(demo)

    return breakage


def _pose(matrix: list[list[float]]) -> Callable[[Path], None]:
    return _edit_json("camera.json", lambda c: c.update(world_from_camera=matrix))


def _sample(index: int, **fields) -> Callable[[Path], None]:
    return _edit_json("trajectory.json", lambda t: t["samples"][index].update(fields))


def _samples(edit: Callable[[list], object]) -> Callable[[Path], None]:
    def change(t: dict) -> None:
        t["samples"] = edit(t["samples"])

    return _edit_json("trajectory.json", change)


_ROTATION = [[1, 0, 0, 0.1], [0, -1, 0, 0.2], [0, 0, -1, 0.5], [0, 0, 0, 1]]
_NAN = float("nan")

DEMO_CASES = {
    # video
    "no video": (_remove("video.mp4"), "no video in"),
    "empty video": (_write("video.mp4", b""), r"video.mp4 is empty \(0 bytes\)"),
    "text as video": (_write("video.mp4", "not a movie\n" * 50), "cannot be opened as a video"),
    "truncated video": (
        lambda d: _write("video.mp4", (DEMO / "video.mp4").read_bytes()[:60_000])(d),
        "video.mp4",
    ),
    # camera.json
    "camera missing": (_remove("camera.json"), "camera.json is missing"),
    "camera not json": (_write("camera.json", "{'width': 640"), "camera.json is not valid JSON"),
    "camera a list": (_write("camera.json", "[640, 480]"), "camera.json must hold a JSON object"),
    "camera fx negative": (_edit_json("camera.json", lambda c: c.update(fx=-500)), "'fx' must be positive"),
    "camera fx text": (_edit_json("camera.json", lambda c: c.update(fx="500")), "'fx' must be a number"),
    "camera fx NaN": (_edit_json("camera.json", lambda c: c.update(fx=_NAN)), "'fx' must be a number"),
    "camera fx absurd": (
        _edit_json("camera.json", lambda c: c.update(fx=1e9)),
        "focal lengths .* implausible",
    ),
    "camera cx far off": (_edit_json("camera.json", lambda c: c.update(cx=1e6)), "principal point"),
    "camera wrong size": (
        _edit_json("camera.json", lambda c: c.update(width=320, height=240)),
        "camera.json says 320x240 but video.mp4 is 640x480",
    ),
    "camera depth_scale zero": (
        _edit_json("camera.json", lambda c: c.update(depth_scale=0)),
        "'depth_scale' must be positive",
    ),
    "camera depth_scale huge": (
        _edit_json("camera.json", lambda c: c.update(depth_scale=1000)),
        "'depth_scale' is 1000 metres per depth unit",
    ),
    "pose singular": (_pose([[0, 0, 0, 0]] * 3 + [[0, 0, 0, 1]]), "is not a rotation"),
    "pose scaled": (
        _pose([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]]),
        "is not a rotation",
    ),
    "pose reflection": (
        _pose([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, -1, 0.5], [0, 0, 0, 1]]),
        "reflection",
    ),
    "pose last row": (_pose([*_ROTATION[:3], [0, 0, 1, 1]]), "the last row is"),
    "pose 3x4": (_pose(_ROTATION[:3]), "must be a 4x4 list"),
    "pose far away": (
        _pose([[1, 0, 0, 1e6], [0, -1, 0, 0], [0, 0, -1, 0.5], [0, 0, 0, 1]]),
        "from the world origin",
    ),
    # depth
    "depth 8-bit": (
        _depth(5, lambda p: cv2.imwrite(str(p), np.full((480, 640), 90, np.uint8))),
        r"depth/000005.png is 8-bit",
    ),
    "depth text file": (_depth(5, lambda p: p.write_text("hello")), r"depth/000005.png cannot be read"),
    "depth missing frame": (_depth(77, None), "depth/ has no image for frame 77"),
    "depth wrong size": (
        _depth(120, lambda p: cv2.imwrite(str(p), np.full((240, 320), 900, np.uint16))),
        r"depth/000120.png is 320x240 but the video is 640x480",
    ),
    "depth colour": (
        _depth(3, lambda p: cv2.imwrite(str(p), np.full((480, 640, 3), 900, np.uint16))),
        "depth/000003.png has 3 channels",
    ),
    "depth a file": (_write("depth", "x"), "is not a folder"),
    # prompts.json: names
    "name parent path": (
        _rename("../../../etc/x"),
        r"objects\[0\]: the object name '../../../etc/x' contains '/'",
    ),
    "name absolute": (_rename("/tmp/real2gym-escape"), "contains '/'"),
    "name backslash": (_rename("..\\..\\x"), r"contains '\\\\'"),
    "name dot dot": (_rename(".."), "contains '..'"),
    "name hidden": (_rename(".block"), "starts with a dot"),
    "name control": (_rename("blo\x07ck"), "control or invisible character U\\+0007"),
    "name newline": (_rename("block\nrm -rf"), "U\\+000A"),
    "name long": (_rename("b" * 300), "is 300 characters long"),
    "name device": (_rename("NUL"), "reserved device name"),
    "name not text": (_rename(5), "needs a non-empty 'name'"),
    "names repeated": (
        _objects(lambda o: o[1].update(name="block")),
        "object names must be unique; repeated: block",
    ),
    "name 64 four-byte characters": (_rename("\U0001f9f1" * 64), "is 256 bytes long in UTF-8; at most 231"),
    "names differ by case": (
        _objects(lambda o: o[1].update(name="Block")),
        "the object names 'block' and 'Block' differ only by case or Unicode form",
    ),
    "names differ by Unicode form": (
        _objects(lambda o: [o[0].update(name="caf\u00e9"), o[1].update(name="cafe\u0301")] and None),
        "differ only by case or Unicode form",
    ),
    # JSON files nested or sized to exhaust the reader
    "prompts 200,000 levels deep": (
        _write("prompts.json", "[" * 200_000 + "]" * 200_000),
        "prompts.json is nested more than 64 levels deep",
    ),
    "camera 100 levels deep": (
        _write("camera.json", '{"a": ' * 100 + "1" + "}" * 100),
        "camera.json is nested more than 64 levels deep",
    ),
    "trajectory 200,000 levels deep": (
        _write("trajectory.json", '{"samples": ' + "[" * 200_000 + "]" * 200_000 + "}"),
        "trajectory.json is nested more than 64 levels deep",
    ),
    "prompts not UTF-8": (
        _write("prompts.json", b'{"objects": "\xff\xfe"}'),
        "prompts.json is not UTF-8 text",
    ),
    # a user's mesh past the limits
    "mesh of 200,001 faces": (
        _mesh_prompt("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n" + "f 1 2 3\n" * 200_001),
        "200,001 faces, over the limit of 200,000; decimate it first",
    ),  # fmt: skip
    # prompts.json: counts and sizes
    "50 objects": (
        _objects(lambda o: o.extend({**o[1], "name": f"cup{i}", "role": "static"} for i in range(48))),
        "prompts.json lists 50 objects; one run handles at most 16",
    ),
    "no objects": (_objects(lambda o: o.clear()), "at least one object"),
    "prompts a list": (_write("prompts.json", "[]"), "must hold an 'objects' list"),
    "box tiny": (_objects(lambda o: o[0].update(box=[100, 100, 102, 130])), "under 4 pixels on a side"),
    "box off image": (
        _objects(lambda o: o[0].update(box=[700, 500, 800, 600])),
        "lies outside the 640x480 image",
    ),
    "box NaN": (_objects(lambda o: o[0].update(box=[_NAN, 1, 2, 3])), "'box' must be"),
    "box inverted": (_objects(lambda o: o[0].update(box=[271, 285, 220, 229])), "has zero area"),
    "prompt frame past end": (_objects(lambda o: o[0].update(frame=150)), "prompt frame 150 is out of range"),
    "prompt frame negative": (_objects(lambda o: o[0].update(frame=-1)), "prompt frame -1 is out of range"),
    "prompt frame text": (_objects(lambda o: o[0].update(frame="0")), "'frame' must be a whole frame number"),
    "point label 2": (_objects(lambda o: o[0].update(points=[[245, 257, 2]])), r"points\[0\] must be"),
    "point off image": (_objects(lambda o: o[0].update(points=[[2450, 257, 1]])), "lies outside"),
    "unknown shape": (_objects(lambda o: o[0].update(shape="sphere")), "unknown shape 'sphere'"),
    "unknown role": (_objects(lambda o: o[0].update(role="boss")), "unknown role 'boss'"),
    "task target missing": (
        _edit_json("prompts.json", lambda p: p["task"].update(target="plate")),
        "needs a 'target' among the objects",
    ),
    # trajectory.json
    "trajectory a list": (
        _write("trajectory.json", "[]"),
        "must hold a JSON object with 'samples', not a list",
    ),
    "trajectory no samples": (_write("trajectory.json", '{"samples": []}'), "non-empty 'samples' list"),
    "trajectory not json": (_write("trajectory.json", "{"), "trajectory.json is not valid JSON"),
    "quaternion zero": (_sample(12, quaternion=[0, 0, 0, 0]), r"frame 12: the quaternion .* \(norm 0\)"),
    "quaternion scaled": (_sample(30, quaternion=[2, 0, 0, 0]), "frame 30: the quaternion .* not a unit"),
    "position NaN": (_sample(40, position=[_NAN, 0, 0]), "frame 40: 'position' holds NaN"),
    "position short": (_sample(41, position=[0, 0]), "frame 41: 'position' must be a list of 3 numbers"),
    "position far": (_sample(42, position=[1e6, 0, 0]), "frame 42: the position .* over 100 m away"),
    "gripper negative": (_sample(50, gripper=-0.2), r"frame 50: 'gripper' is -0.2; it must lie in \[0, 1\]"),
    "gripper above one": (_sample(51, gripper=2), r"frame 51: 'gripper' is 2"),
    "gripper text": (_sample(52, gripper="open"), "frame 52: 'gripper' must be a finite number"),
    "sample frame text": (_sample(7, frame="7"), r"samples\[7\] needs a whole 'frame' number"),
    "sample frame past end": (
        _sample(149, frame=500),
        "frame 500: the frame is outside the video's frames 0 to 149",
    ),
    "sample frame repeated": (_sample(9, frame=8), "frame 8 has more than one sample"),
    "40 of 150 samples": (
        _samples(lambda s: s[:40]),
        "samples for frames 0 to 39 .* but the video has frames 0 to 149",
    ),
    "frame_of unknown": (
        _edit_json("trajectory.json", lambda t: t.update(frame_of="robot")),
        "'frame_of' must be one of camera, world, robot_base",
    ),
}


@pytest.fixture
def earlier_output(tmp_path: Path) -> Path:
    """An output folder holding an earlier run's files (which a failed run must leave as they were)."""
    out = tmp_path / "out"
    (out / "masks" / "block").mkdir(parents=True)
    (out / "masks" / "block" / "000000.png").write_bytes(b"earlier mask")
    (out / "report.json").write_text('{"version": 1, "earlier": true}')
    return out


@pytest.mark.parametrize("case", list(DEMO_CASES))
def test_broken_demo_exits_2_with_one_line_and_writes_nothing(
    case: str, tmp_path: Path, earlier_output: Path, capsys
) -> None:
    breakage, message = DEMO_CASES[case]
    demo = _demo(tmp_path)
    breakage(demo)
    before_out = _tree(earlier_output)
    before_all = _tree(tmp_path)
    capsys.readouterr()
    code = main(["run", str(demo), "--out", str(earlier_output), "--no-blend", "-q"])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    _assert_one_line(captured.err, message)
    assert captured.out == ""
    assert _tree(earlier_output) == before_out
    assert _tree(tmp_path) == before_all
    assert not Path("/tmp/real2gym-escape").exists()


def test_a_failed_run_leaves_no_output_folder_it_created(tmp_path: Path, capsys) -> None:
    demo = _demo(tmp_path)
    _sample(12, quaternion=[0, 0, 0, 0])(demo)
    out = tmp_path / "new" / "deeper" / "out"
    assert main(["run", str(demo), "--out", str(out), "--no-blend", "-q"]) == 2
    assert not (tmp_path / "new").exists()


def test_mask_writer_refuses_a_name_that_leaves_the_folder(tmp_path: Path) -> None:
    """The second line of defence: even a name that slipped past the door cannot leave OUT."""
    masks = [np.ones((4, 4), bool)]
    for name in ("../escaped", "/tmp/real2gym-escape-abs", "a/../../escaped"):
        segmentation = Segmentation("classical", 1.0, [ObjectTrack(name, masks, [1.0])])
        with pytest.raises(OutputError, match="leads outside|absolute path"):
            segmentation.write(tmp_path / "out" / "masks")
    assert sorted(p.name for p in tmp_path.rglob("*")) == []
    assert not Path("/tmp/real2gym-escape-abs").exists()


# ---- a finished run, then its report tampered with, and bad fix arguments ----


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A verified run of the bundled demo; proves that a whole run writes nothing outside OUT."""
    root = tmp_path_factory.mktemp("finished")
    demo = root / "demo"
    shutil.copytree(DEMO, demo)
    before_root, before_demo = _tree(root), _tree(DEMO)
    out = root / "out"
    assert main(["run", str(demo), "--out", str(out), "--no-blend", "-q"]) == 0
    after = _tree(root)
    assert {k: v for k, v in after.items() if not k.startswith("out")} == before_root
    assert _tree(DEMO) == before_demo
    assert not [p for p in out.rglob(".real2gym-staging-*")]
    return out


def _tampered(run: Path, tmp_path: Path, edit: Callable[[dict], object] | None) -> Path:
    out = Path(shutil.copytree(run, tmp_path / "out"))
    if edit is not None:
        report = json.loads((out / "report.json").read_text())
        result = edit(report)
        (out / "report.json").write_text(json.dumps(report if result is None else result))
    return out


def _object_frame(report: dict) -> dict:
    return report["objects"][0]["frames"][10]


REPORT_CASES = {
    "NaN position": (
        lambda r: _object_frame(r).update(position_cam=[_NAN, 0, 0]),
        ["verify"],
        r"'objects\[0\].frames\[10\].position_cam\[0\]' is NaN or infinite",
    ),
    "Infinity mass": (
        lambda r: r["objects"][0].update(mass=float("inf")),
        ["verify"],
        "'objects\\[0\\].mass' is NaN",
    ),
    "path-like object name": (
        lambda r: r["objects"][0].update(name="../../x"),
        ["verify"],
        r"report.json, objects\[0\]: the object name '../../x' contains '/'",
    ),
    "mask folder outside": (
        lambda r: r["segmentation"]["objects"][0].update(masks="../../../etc"),
        ["fix", "--suggest"],
        "the masks of 'block': '../../../etc' leads outside",
    ),
    "mask folder absolute": (
        lambda r: r["segmentation"]["objects"][0].update(masks="/etc"),
        ["verify"],
        "'/etc' is an absolute path",
    ),
    "artifact outside": (
        lambda r: r["artifacts"].update(mjcf="../../../../etc/passwd"),
        ["verify"],
        "artifacts.mjcf: '../../../../etc/passwd' leads outside",
    ),
    "video is /etc/passwd": (
        lambda r: r["video"].update(source="/etc/passwd"),
        ["compare", "-q"],
        "names /etc/passwd, which is not a demo folder's video",
    ),
    "video is a device": (
        lambda r: r["video"].update(source="/dev/zero"),
        ["compare", "-q"],
        "names /dev/zero, which is not a demo folder's video",
    ),
    "video moved": (
        lambda r: r["video"].update(source="/nonexistent/video.mp4"),
        ["compare", "-q"],
        "the demo's video /nonexistent/video.mp4 .* is missing",
    ),
    "version 2": (lambda r: r.update(version=2), ["verify"], "report.json has version 2"),
    "report a list": (lambda r: [r], ["verify"], "must hold a JSON object"),
    "keyframe past end": (
        lambda r: r["keyframes"][0].update(frame=9999),
        ["fix", "--suggest"],
        r"keyframes\[0\] is at frame 9999",
    ),
    "video missing": (lambda r: r.__delitem__("video"), ["verify"], "'video' is missing"),
    "not json": (lambda r: "{", ["verify"], "is not valid JSON"),
    "no report": (None, ["verify"], "no report.json in"),
}


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_tampered_report_exits_2_and_changes_nothing(
    case: str, finished_run: Path, tmp_path: Path, capsys
) -> None:
    edit, command, message = REPORT_CASES[case]
    out = _tampered(finished_run, tmp_path, edit if case not in ("not json", "no report") else None)
    if case == "not json":
        (out / "report.json").write_text("{")
    if case == "no report":
        (out / "report.json").unlink()
    before = _tree(tmp_path)
    capsys.readouterr()
    code = main([command[0], str(out), *command[1:]])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    _assert_one_line(captured.err, message)
    assert _tree(tmp_path) == before


FIX_CASES = {
    "keyframe not a number": (
        ["--object", "block", "--keyframe", "grasp=abc"],
        "argument --keyframe: wants a whole",
    ),
    "keyframe unknown event": (["--object", "block", "--keyframe", "wobble=3"], "EVENT one of grasp"),
    "keyframe past end": (["--object", "block", "--keyframe", "grasp=400"], "frame 400 is outside the video"),
    "rim scale huge": (["--object", "cup", "--rim-scale", "1e9"], "--rim-scale: must lie between 0.2 and 5"),
    "rim scale NaN": (["--object", "cup", "--rim-scale", "nan"], "--rim-scale: must lie between"),
    "scale zero": (["--object", "block", "--scale", "1,0,1"], "--scale: must lie between 0.2 and 5, got 0"),
    "scale two numbers": (["--object", "block", "--scale", "1,1"], "three comma-separated numbers"),
    "offset far": (["--object", "block", "--offset", "5,0,0"], "--offset: must lie between -1 and 1"),
    "offset frame negative": (
        ["--object", "block", "--offset", "0,0,0.01", "--frame", "-1"],
        "--frame: must be 0",
    ),
    "offset frame past end": (
        ["--object", "block", "--offset", "0,0,0.01", "--frame", "900"],
        "the offset's frame 900 is outside the video",
    ),
    "coacd pieces zero": (
        ["--object", "cup", "--collision", "coacd", "--coacd-max-pieces", "0"],
        "must be 1 to 64",
    ),
    "collision unknown": (["--object", "cup", "--collision", "sphere"], "invalid choice: 'sphere'"),
    "suggestion zero": (["--apply-suggestion", "0"], "--apply-suggestion: must be 1 or more"),
    "suggestion past end": (["--apply-suggestion", "40"], "there are 0 suggestions"),
    "no object": (["--rim-scale", "1.1"], "name the object to fix with --object"),
    "unknown object": (["--object", "mug", "--rim-scale", "1.1"], "no object named 'mug'"),
    "nothing": ([], "no fix given"),
}


@pytest.mark.parametrize("case", list(FIX_CASES))
def test_bad_fix_arguments_exit_2_and_change_nothing(
    case: str, finished_run: Path, tmp_path: Path, capsys
) -> None:
    arguments, message = FIX_CASES[case]
    out = _tampered(finished_run, tmp_path, None)
    before = _tree(out)
    capsys.readouterr()
    code = main(["fix", str(out), *arguments])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    _assert_one_line(captured.err, message)
    assert _tree(out) == before


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["verify", "{out}", "--mass", "block=-1"], "--mass: must lie between 0.001 and 1000"),
        (["verify", "{out}", "--mass", "block"], "--mass: wants NAME=KG"),
        (["verify", "{out}", "--mass", "mug=0.1"], "--mass names unknown objects: mug"),
        (["batch", "{demo}", "--out", "{out}/b", "--jobs", "0"], "--jobs: must be 1 to 64, got 0"),
        (["run", "{demo}", "--out", "{out}", "--backend", "magic"], "invalid choice: 'magic'"),
        (["run", "{demo}"], "the following arguments are required: --out"),
        (["explode"], "invalid choice: 'explode'"),
    ],
)
def test_bad_arguments_exit_2_in_one_line(
    arguments: list[str], message: str, finished_run: Path, tmp_path: Path, capsys
) -> None:
    out = _tampered(finished_run, tmp_path, None)
    before = _tree(tmp_path)
    capsys.readouterr()
    argv = [a.format(out=out, demo=DEMO) for a in arguments]
    assert main(argv) == 2
    _assert_one_line(capsys.readouterr().err, message)
    assert _tree(tmp_path) == before


# ---- output folder: a file, a lock, debris of killed runs, a full disk, a bug ----


def test_output_path_that_is_a_file(tmp_path: Path, capsys) -> None:
    target = tmp_path / "out"
    target.write_text("mine")
    assert main(["segment", str(TINY), "--out", str(target), "-q"]) == 2
    _assert_one_line(capsys.readouterr().err, "is a file, not a folder")
    assert target.read_text() == "mine"


def test_a_second_run_into_a_locked_output_folder_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    holder = OutputFolder(out)  # another run, in the middle of its work
    try:
        capsys.readouterr()
        assert main(["segment", str(TINY), "--out", str(out), "-q"]) == 2
        _assert_one_line(capsys.readouterr().err, "another real2gym run is writing into")
        assert [p.name for p in out.iterdir()] == [holder.staging.name]
    finally:
        holder.discard()
    assert main(["segment", str(TINY), "--out", str(out), "-q"]) == 0


def _start(demo: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "real2gym_addon", "run", str(demo), "--out", str(out), "--no-blend", "-q"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for_staging(process: subprocess.Popen, out: Path) -> list[Path]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        staging = list(out.glob(".real2gym-staging-*")) if out.is_dir() else []
        if staging and any(s.iterdir() for s in staging):
            return staging
        time.sleep(0.05)
    raise AssertionError(f"the run never staged anything: {process.communicate()}")


def test_a_killed_run_leaves_debris_that_the_next_run_removes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = _start(DEMO, out)
    _wait_for_staging(process, out)
    process.kill()
    process.wait()
    assert list(out.glob(".real2gym-staging-*")), "SIGKILL leaves the staging folder (nothing can clean then)"
    assert main(["segment", str(TINY), "--out", str(out), "-q"]) == 0
    assert not list(out.glob(".real2gym-staging-*"))
    assert (out / "report.json").is_file()


def test_sigterm_cancels_with_130_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = _start(DEMO, out)
    _wait_for_staging(process, out)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    _assert_one_line(stderr, "cancelled; nothing was written", prefix="real2gym: ")
    assert not out.exists()


def test_a_full_disk_is_named_and_leaves_nothing(tmp_path: Path) -> None:
    """The output folder on a 300 KiB file system (tmpfs in a private mount namespace)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode().strip()}")
    script = (
        f"mount -t tmpfs -o size=300k tmpfs {disk} && "
        f"{sys.executable} -m real2gym_addon run {DEMO} --out {disk}/out --no-blend -q; "
        f"echo rc=$?; ls -A {disk}"
    )
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=REPO, capture_output=True, text=True)
    assert "rc=2" in result.stdout, result.stdout + result.stderr
    _assert_one_line(result.stderr, "no space left on device")
    assert result.stdout.strip().endswith("rc=2"), "the failed run left files on the disk: " + result.stdout


def test_an_internal_error_exits_3_with_a_log(tmp_path: Path, monkeypatch, capsys) -> None:
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli.PipelineRun, "analyse", broken)
    assert main(["segment", str(TINY), "--out", str(tmp_path / "out"), "-q"]) == 3
    err = capsys.readouterr().err
    _assert_one_line(
        err, r"ZeroDivisionError: a bug; the details are in .*\.log", prefix="real2gym: internal error"
    )
    log = Path(err.split("the details are in ")[1].split(" (please")[0])
    assert "Traceback" in log.read_text() and "ZeroDivisionError" in log.read_text()
    log.unlink()


REAL_FOOTAGE = REPO.parent / "shared" / "real_footage"


@pytest.mark.skipif(not REAL_FOOTAGE.is_dir(), reason="../shared/real_footage is not beside this checkout")
@pytest.mark.parametrize("clip", ["c2_mug", "c3_plant", "c4_pour01"])
def test_real_footage_passes_the_door(clip: str) -> None:
    """The checks refuse broken input, not real cameras' data (guessed intrinsics, 1 fps ZED depth)."""
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.errors import WarningLog

    log = WarningLog()
    demo = load_demo(REAL_FOOTAGE / clip, log)
    assert demo.video.frames >= 14 and len(demo.objects) == 2
    assert not log.warnings
