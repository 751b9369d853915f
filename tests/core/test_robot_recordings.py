"""Robot recordings as robots write them, grasps and releases from them, careful releases and --repair.

Each trajectory.json convention of docs/data-contract.md is written here from one known
motion (grasp centre, contract axes, finger gap) by transforming it the way a
robot would store it; the reader must give back the same motion. The bundled
demo's own recording is then rewritten as a careful robot's (measured width,
a release that opens a millimetre past the object) to check that the replay
honours it, that ``release_clearance`` says when it cannot free the object, and
that ``--repair`` widens it, step by step in the edit log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.errors import DemoFolderError
from real2gym.real2gym_addon.geometry.carry import gripper_hold
from real2gym.real2gym_addon.geometry.keyframes import load_trajectory
from real2gym.real2gym_addon.trajectory import FULL_OPENING, parse_trajectory

DEMO = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"
FRAMES, FPS = 60, 30.0
WORLD_FROM_CAMERA = np.array(
    [[1, 0, 0, 0.0], [0, -0.6, 0.8, -0.5], [0, -0.8, -0.6, 0.45], [0, 0, 0, 1.0]]
)  # a camera looking down at the table


def _motion():
    """Per frame: grasp centre (world), rotation (contract axes, z down), measured finger gap (m)."""
    t = np.arange(FRAMES) / (FRAMES - 1)
    positions = np.c_[0.1 * t, 0.05 * np.sin(np.pi * t), 0.02 + 0.1 * np.sin(np.pi * t)]
    turn = np.radians(60) * np.clip((t - 0.3) / 0.4, 0, 1)  # the wrist turns while carrying
    rotations = Rotation.from_euler("z", turn[:, None]) * Rotation.from_euler("x", np.pi)
    width = np.full(FRAMES, 0.08)
    width[10:15] = np.linspace(0.08, 0.041, 5)  # closes and stalls on a 41 mm object
    width[15:40] = 0.041
    width[40:44] = np.linspace(0.041, 0.047, 4)  # a careful release: 6 mm wider
    width[44:] = 0.047
    return positions, rotations, width


def _sample(frame, position, rotation, **gripper):
    q = rotation.as_quat()
    return {"frame": frame, "position": list(position), "quaternion": [q[3], q[0], q[1], q[2]], **gripper}


def _world_path(data) -> tuple[np.ndarray, Rotation, np.ndarray]:
    samples = parse_trajectory(data, FRAMES, FPS)
    path = load_trajectory(samples, FRAMES, WORLD_FROM_CAMERA)
    return path.positions, Rotation.from_quat(path.quaternions[:, [1, 2, 3, 0]]), path.opening * FULL_OPENING


def _assert_same(data, every: int = 1) -> None:
    positions, rotations, width = _motion()
    found_p, found_r, found_w = _world_path(data)
    frames = np.arange(0, FRAMES, every)
    assert np.abs(found_p[frames] - positions[frames]).max() < 1e-4
    assert np.degrees((found_r[frames] * rotations[frames].inv()).magnitude()).max() < 0.1
    assert np.abs(found_w[frames] - width[frames]).max() < 1e-4


def test_world_frame_with_measured_width() -> None:
    positions, rotations, width = _motion()
    data = {"frame_of": "world", "gripper_kind": "measured",
            "samples": [_sample(i, positions[i], rotations[i], gripper_width_m=width[i]) for i in range(FRAMES)]}  # fmt: skip
    _assert_same(data)
    assert parse_trajectory(data, FRAMES, FPS).kind == "measured"


def test_camera_frame_fraction_open() -> None:
    positions, rotations, width = _motion()
    camera_from_world = np.linalg.inv(WORLD_FROM_CAMERA)
    to_camera = Rotation.from_matrix(camera_from_world[:3, :3])
    data = {"frame_of": "camera", "samples": [
        _sample(i, camera_from_world[:3, :3] @ positions[i] + camera_from_world[:3, 3], to_camera * rotations[i],
                gripper=width[i] / FULL_OPENING) for i in range(FRAMES)]}  # fmt: skip
    _assert_same(data)


@pytest.mark.parametrize("base_key", ["world_from_robot", "camera_from_robot"])
def test_robot_base_flange_closure_and_other_axes(base_key: str) -> None:
    """A robot base beside the table, the flange 10.34 cm behind the grasp centre, x the approach axis,
    closure 0 open to 1 closed, samples every third frame."""
    positions, rotations, width = _motion()
    world_from_robot = np.eye(4)
    world_from_robot[:3, :3] = Rotation.from_euler("z", 120, degrees=True).as_matrix()
    world_from_robot[:3, 3] = [0.45, -0.2, -0.02]
    base = (
        world_from_robot
        if base_key == "world_from_robot"
        else np.linalg.inv(WORLD_FROM_CAMERA) @ world_from_robot
    )
    robot_from_world = np.linalg.inv(world_from_robot)
    # Recorded axes: approach +x, opening -z, i.e. contract axes expressed as columns of the recorded frame.
    contract_in_recorded = np.c_[np.cross([0, 0, -1.0], [1.0, 0, 0]), [0, 0, -1.0], [1.0, 0, 0]]
    tcp = 0.1034
    samples = []
    for i in list(range(0, FRAMES, 3)) + [FRAMES - 1]:
        recorded = rotations[i] * Rotation.from_matrix(contract_in_recorded).inv()
        flange_world = positions[i] - rotations[i].apply([0, 0, tcp])
        robot_rotation = Rotation.from_matrix(robot_from_world[:3, :3]) * recorded
        samples.append(_sample(i, robot_from_world[:3, :3] @ flange_world + robot_from_world[:3, 3], robot_rotation,
                               gripper_closure=1 - width[i] / FULL_OPENING))  # fmt: skip
    data = {"frame_of": "robot_base", base_key: base.tolist(), "tcp_offset": tcp,
            "axes": {"approach": "+x", "opening": "-z"}, "samples": samples}  # fmt: skip
    _assert_same(data, every=3)
    found_p, found_r, _ = _world_path(data)
    # Between samples positions are linear and rotations slerped: within 2 mm and 1.5 degrees of the motion
    # (whose turn starts and stops between two samples).
    assert np.abs(found_p - positions).max() < 0.002
    assert np.degrees((found_r * rotations.inv()).magnitude()).max() < 1.5
    assert parse_trajectory(data, FRAMES, FPS).form["base"] == base_key


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"frame_of": "robot_base"}, "world_from_robot"),
        ({"frame_of": "robot_base", "world_from_robot": [[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
         "not a rigid transform"),
        ({"axes": {"approach": "+z", "opening": "+z"}}, "different axes"),
        ({"axes": {"approach": "up"}}, "axes 'approach'"),
        ({"tcp_offset": 10.0}, "tcp_offset"),
        ({"gripper_kind": "guessed"}, "gripper_kind"),
    ],
)  # fmt: skip
def test_bad_conventions_are_named(change: dict, words: str) -> None:
    positions, rotations, width = _motion()
    data = {
        "frame_of": "world",
        "samples": [_sample(i, positions[i], rotations[i], gripper=1.0) for i in range(FRAMES)],
    }
    data.update(change)
    with pytest.raises(DemoFolderError, match=words):
        parse_trajectory(data, FRAMES, FPS)


def test_mixed_gripper_states_are_refused() -> None:
    positions, rotations, width = _motion()
    samples = [_sample(i, positions[i], rotations[i], gripper=1.0) for i in range(FRAMES)]
    samples[5] = _sample(5, positions[5], rotations[5], gripper_width_m=0.08)
    with pytest.raises(DemoFolderError, match="mixes gripper states"):
        parse_trajectory({"frame_of": "world", "samples": samples}, FRAMES, FPS)


def test_grasp_is_the_stall_and_release_the_first_opening() -> None:
    _, _, width = _motion()
    measured = width / FULL_OPENING
    assert gripper_hold(measured) == (14, 41)  # stalls at 41 mm on frame 14; opens 6 mm from frame 41
    commanded = np.r_[np.ones(10), np.linspace(1, 0, 5)[1:], np.zeros(26), np.ones(20)]
    assert gripper_hold(commanded) == (13, 40)
    noisy = measured + np.random.default_rng(1).normal(0, 0.0002, FRAMES) / FULL_OPENING
    noisy[:10] = 1.0
    grasp, release = gripper_hold(noisy)
    assert abs(grasp - 14) <= 1 and abs(release - 41) <= 1  # a tenth of a millimetre of noise is no release
    assert gripper_hold(np.ones(FRAMES)) == (None, None)


@pytest.fixture(scope="module")
def careful_run(tmp_path_factory) -> Path:
    """The bundled demo with its recording as a careful robot writes it: measured finger gap, and a
    release that opens 6 mm past the gap the fingers held the block at (the issue's careful robot)."""
    demo = Path(shutil.copytree(DEMO, tmp_path_factory.mktemp("careful") / "demo"))
    truth = json.loads((demo / "truth.json").read_text())
    recording = json.loads((demo / "trajectory.json").read_text())
    gap = [f["opening_m"] for f in truth["gripper"]["frames"]]
    release = next(k["frame"] for k in truth["keyframes"] if k["event"] == "release")
    for sample in recording["samples"]:
        del sample["gripper"]
        frame = sample["frame"]
        sample["gripper_width_m"] = round(
            min(gap[frame], gap[release - 2] + 0.006) if frame >= release else gap[frame], 5
        )
    recording["gripper_kind"] = "measured"
    (demo / "trajectory.json").write_text(json.dumps(recording))
    out = demo.parent / "out"
    assert main(["run", str(demo), "--out", str(out), "--no-blend", "-q"]) == 0
    return out


def test_a_careful_release_is_honoured_and_explained(careful_run: Path, tmp_path: Path, capsys) -> None:
    report = json.loads((careful_run / "report.json").read_text())
    check = report["verification"]["checks"]["release_clearance"]
    assert check["passed"] and check["freed"] and check["video_shows_freed"]
    assert check["recorded_gap_m"] < check["held_gap_m"] + 0.007  # the fingers open only a few mm
    # The simulated block 20 % wider than the fingers' recorded release: pinched, said so, repaired.
    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    assert main(["fix", str(out), "--object", "block", "--scale", "1.2,1.2,1"]) == 1
    broken = json.loads((out / "report.json").read_text())
    check = broken["verification"]["checks"]["release_clearance"]
    assert not check["passed"] and not check["freed"] and check["clearance_m"] < 0
    suggestion = broken["verification"]["suggestions"][0]
    assert suggestion["fix"]["kind"] == "release_opening" and suggestion["check"] == "release_clearance"
    capsys.readouterr()
    assert main(["fix", str(out), "--repair", "-q"]) == 0
    assert "repair 1: release_opening on block" in capsys.readouterr().out
    repaired = json.loads((out / "report.json").read_text())
    assert repaired["repair"]["passed_before"] is False and repaired["repair"]["passed_after"] is True
    assert [e["kind"] for e in repaired["edit_log"]] == ["scale", "release_opening"]
    assert repaired["verification"]["checks"]["release_clearance"]["clearance_m"] > 0.005
    # Each step is undoable: the release opening comes back as recorded.
    assert main(["fix", str(out), "--undo"]) == 1
    undone = json.loads((out / "report.json").read_text())
    assert [f["gripper"] for f in undone["gripper"]["frames"]] == [
        f["gripper"] for f in broken["gripper"]["frames"]
    ]


def _carried_motion(pinned: bool = False):
    """A block lifted at frame 20, carried, lowered onto a target at frame 40 and left there (placed,
    not dropped); ``pinned``: the motion stuck at its start, as a tracker that lost the object gives."""
    from real2gym.real2gym_addon.geometry.motion import Motion

    frames = np.arange(FRAMES)
    down = np.clip((frames - 35) / 5, 0, 1)
    z = 0.02 + 0.1 * np.clip((frames - 20) / 5, 0, 1) - 0.07 * down * down * (3 - 2 * down)  # slowed to rest
    x = 0.15 * np.clip((frames - 25) / 10, 0, 1)
    positions = np.c_[x, np.zeros(FRAMES), z]
    if pinned:
        positions[:] = positions[0]
    return Motion(positions, np.zeros(FRAMES), np.ones(FRAMES, bool), static=pinned)


def test_a_placed_object_is_released_where_it_comes_to_rest() -> None:
    from real2gym.real2gym_addon.errors import WarningLog
    from real2gym.real2gym_addon.geometry.keyframes import detect_events

    found = {
        k["event"]: k["frame"] for k in detect_events("block", _carried_motion(), FPS, None, WarningLog())
    }
    assert found["lift"] == 21 and found["release"] == 40 and found["contact"] == 40  # 2 mm up on 21
    assert found["grasp"] == 21 - round(0.2 * FPS)  # estimated, said in a warning
    # Dropped from 7 cm instead: it lands at 1.2 m/s; the release is where the fall starts.
    dropped = _carried_motion()
    fall = np.arange(FRAMES) >= 35
    t = (np.arange(FRAMES) - 35) / FPS
    dropped.positions[fall, 2] = np.maximum(0.05, 0.12 - 0.5 * 9.81 * t[fall] ** 2)
    found = {k["event"]: k["frame"] for k in detect_events("block", dropped, FPS, None, WarningLog())}
    assert found["release"] == 35 and found["contact"] == 39
    # A drop whose last sampled step is short (it lands between two frames, or its hidden tail settles a
    # few millimetres lower): still speeding up on the frame before its rest, so still a drop.
    short = _carried_motion()
    short.positions[35:, 2] = [0.12, 0.113, 0.095, 0.062] + [0.056] * (FRAMES - 39)
    found = {k["event"]: k["frame"] for k in detect_events("block", short, FPS, None, WarningLog())}
    assert found["release"] == 35
    # Lowered while still carried sideways, then set down fast (seed 39, a can onto a plate, as its
    # partly seen fits measured it): the fall starts over where it lands, not 5 cm before it.
    swept = _carried_motion()
    swept.positions[30:, 0] = [0.10, 0.125, 0.14, 0.148, 0.15] + [0.15] * (FRAMES - 35)
    swept.positions[30:, 2] = [0.12, 0.115, 0.108, 0.105, 0.093, 0.084, 0.08] + [0.08] * (FRAMES - 37)
    found = {k["event"]: k["frame"] for k in detect_events("block", swept, FPS, None, WarningLog())}
    assert found["release"] == 32  # 10 mm from where it lands (30 before: 5 cm)


def test_without_recording_or_hand_the_grasp_is_where_the_hand_stops_covering_the_object() -> None:
    """A hand that closes on the resting block covers more of it frame by frame, then holds still until it
    lifts it (frame 21): the grasp is where the covering stops growing (seed 39 and 16 in Cycles: 1 frame
    early, where the lift's lead put it 4 early). A gripper from above that hides little leaves the lead."""
    from real2gym.real2gym_addon.errors import WarningLog
    from real2gym.real2gym_addon.geometry.keyframes import detect_events

    areas = np.full(FRAMES, 1000.0)
    areas[16:19] = [700, 400, 330]
    areas[19:30] = [320, 325, 318] + [330] * 8
    log = WarningLog()
    found = {
        k["event"]: k["frame"] for k in detect_events("block", _carried_motion(), FPS, None, log, areas=areas)
    }
    assert found["grasp"] == 18 and found["lift"] == 21
    assert any("stops covering" in w.message for w in log.warnings)
    from_above = np.full(FRAMES, 1000.0)
    from_above[18:] = 850
    found = {k["event"]: k["frame"] for k in detect_events("block", _carried_motion(), FPS, None, WarningLog(),
                                                          areas=from_above)}  # fmt: skip
    assert found["grasp"] == 21 - round(0.2 * FPS)


def test_recorded_grasp_and_release_do_not_wait_for_the_motion() -> None:
    """The recording shows the hand closing on the block, rising and opening; the tracker lost the block
    and pins it to its start. The grasp and release still come from the recording, the lift from the
    recorded hand rising."""
    from real2gym.real2gym_addon.errors import WarningLog
    from real2gym.real2gym_addon.geometry.keyframes import GripperTrajectory, detect_events

    carried = _carried_motion()
    _, rotations, width = _motion()
    hand = GripperTrajectory(carried.positions.copy(), np.tile([0, 1.0, 0, 0], (FRAMES, 1)),
                             width / FULL_OPENING, "trajectory.json")  # fmt: skip
    log = WarningLog()
    found = {
        k["event"]: k["frame"]
        for k in detect_events(
            "block", _carried_motion(pinned=True), FPS, hand, log, 0.04, (0.04, 0.04, 0.04)
        )
    }
    assert found["grasp"] == 14 and found["release"] == 41 and found["lift"] == 21
    assert any("recorded gripper rising" in w.message for w in log.warnings)
    # A hand that closes 20 cm away closes on something else: no keyframes from it.
    far = GripperTrajectory(hand.positions + [0.2, 0, 0], hand.quaternions, hand.opening, "trajectory.json")
    assert (
        detect_events("block", _carried_motion(pinned=True), FPS, far, WarningLog(), 0.04, (0.04,) * 3) == []
    )


def test_repair_undoes_a_step_that_does_not_help(careful_run: Path, tmp_path: Path, monkeypatch) -> None:
    """A step after which the same checks fail is undone, not kept: steps that changed nothing that mattered
    once stayed in the scene (five of them moved a block 6 cm and its grasp 12 frames, and it failed as
    before). Here every suggested fix is swapped for one that changes the cup by a tenth of a millimetre."""
    from real2gym.real2gym_addon.fixes import repair
    from real2gym.real2gym_addon.fixes.edits import apply_fix

    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    assert main(["fix", str(out), "--object", "block", "--scale", "1.2,1.2,1"]) == 1
    harmless = {"kind": "offset", "object": "cup", "delta": [0.0001, 0.0, 0.0]}
    monkeypatch.setattr(repair, "apply_fix", lambda report, fix: apply_fix(report, dict(harmless)))
    report, _ = repair.repair_run(out, rounds=2)
    steps = report.repair["rounds"]
    assert steps and all(not s["kept"] and "reverted" in s for s in steps), steps
    assert report.repair["passed_after"] is False
    assert [e["kind"] for e in json.loads((out / "report.json").read_text())["edit_log"]] == ["scale"]


def test_a_late_release_keyframe_is_moved_back_by_repair(careful_run: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    release = next(
        k["frame"]
        for k in json.loads((out / "report.json").read_text())["keyframes"]
        if k["event"] == "release"
    )
    assert main(["fix", str(out), "--object", "block", "--keyframe", f"release={release + 8}"]) == 1
    late = json.loads((out / "report.json").read_text())
    assert not late["verification"]["checks"]["grasp_held"]["passed"]
    fix = late["verification"]["suggestions"][0]["fix"]
    assert fix["kind"] == "keyframe" and fix["event"] == "release" and abs(fix["frame"] - release) <= 2
    assert main(["fix", str(out), "--repair", "-q"]) == 0
    assert json.loads((out / "report.json").read_text())["repair"]["passed_after"]


def _sweep(report: dict, start: int, end: int, sideways: float, hold_at: int) -> None:
    """The hand path of frames [start, end) slides along the fingers' opening axis: it arrives at
    (or leaves) the pose of frame ``hold_at`` from ``sideways`` metres away, at that pose's height."""
    samples = report["gripper"]["frames"]
    w, x, y, z = samples[hold_at]["quaternion_world"]
    opening_axis = Rotation.from_quat([x, y, z, w]).as_matrix()[:, 1]
    camera_from_world = np.linalg.inv(np.array(report["camera"]["world_from_camera"]))
    anchor = np.array(samples[hold_at]["position_world"])
    for frame in range(start, end):
        share = abs(frame - hold_at) / max(abs(start - hold_at), abs(end - 1 - hold_at))
        position = anchor + opening_axis * sideways * share
        samples[frame]["position_world"] = position.tolist()
        samples[frame]["position_cam"] = (
            camera_from_world[:3, :3] @ position + camera_from_world[:3, 3]
        ).tolist()


def test_a_hand_that_knocks_the_object_is_named_and_its_approach_rebuilt(
    careful_run: Path, tmp_path: Path
) -> None:
    """The recording brings the hand in sideways at the grasp height, along the fingers' opening axis: a pad
    sweeps through the block, which the video shows still. hand_clearance names the knock, and --repair
    brings the hand in from above instead; the step is logged and undoable."""
    from real2gym.real2gym_addon.reverify import reverify

    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    openings = np.array(
        [s["gripper"] for s in json.loads((out / "report.json").read_text())["gripper"]["frames"]]
    )
    stall, _ = gripper_hold(openings)
    broken, _ = reverify(out, edit=lambda report: _sweep(report, stall - 8, stall, 0.07, stall))
    check = broken.verification.checks["hand_clearance"]
    assert not check["passed"] and check["phase"] == "approach" and check["object"] == "block"
    assert check["moved_m"] > 0.01 and check["frame"] < stall
    suggestion = broken.verification.suggestions[0]
    assert suggestion["fix"] == {"kind": "approach", "object": "block", "phase": "grasp", "frame": stall}
    assert main(["fix", str(out), "--repair", "-q"]) == 0
    repaired = json.loads((out / "report.json").read_text())
    assert repaired["repair"]["passed_after"] and [e["kind"] for e in repaired["edit_log"]] == ["approach"]
    # The rebuilt approach: over the grasp pose, then straight down its approach axis onto it.
    path = np.array([s["position_world"] for s in repaired["gripper"]["frames"]])
    assert path[stall - 4 : stall, 2].min() > path[stall, 2] - 1e-6
    assert np.abs(path[stall - 2 : stall, :2] - path[stall, :2]).max() < 0.005
    assert main(["fix", str(out), "--undo"]) == 1
    undone = json.loads((out / "report.json").read_text())
    assert undone["gripper"]["frames"] == broken.gripper["frames"]


def test_repair_keeps_a_step_that_clears_one_of_two_knocks(careful_run: Path, tmp_path: Path) -> None:
    """The recorded hand sweeps sideways through the block on its way in and on its way out (a person's
    hand, as seed 2's world-frame recording has it). The first step, the approach from above, leaves
    hand_clearance failing on the way out (where the hand, sweeping out of the cup, now knocks the cup as
    well as the block: the block is in it): the same checks fail, but no knock is left on the way in, so
    it is kept and the second step takes the hand straight up after the release (it had been undone, and
    the repair ended with no untried suggestion)."""
    from real2gym.real2gym_addon.reverify import reverify

    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    openings = np.array(
        [s["gripper"] for s in json.loads((out / "report.json").read_text())["gripper"]["frames"]]
    )
    stall, release = gripper_hold(openings)

    def both_ways(report: dict) -> None:
        _sweep(report, stall - 8, stall, 0.07, stall)
        _sweep(report, release + 1, release + 9, 0.07, release)

    broken, _ = reverify(out, edit=both_ways)
    knocks = broken.verification.checks["hand_clearance"]["knocks"]
    assert {k["phase"] for k in knocks} == {"approach", "retreat"}, knocks
    assert main(["fix", str(out), "--repair", "-q"]) == 0
    repaired = json.loads((out / "report.json").read_text())
    kept = [s for s in repaired["repair"]["rounds"] if s["kept"]]
    assert [s["fix"]["kind"] for s in kept] == ["approach", "approach"]
    assert kept[0]["fix"]["phase"] == "grasp" and kept[1]["fix"]["phase"] == "release"
    assert "hand_clearance" in kept[0]["failed_after"] and kept[1]["failed_after"] == []
    assert [e["kind"] for e in repaired["edit_log"]] == ["approach", "approach"]


def test_approach_fixes_are_checked_before_they_change_anything(careful_run: Path, tmp_path: Path) -> None:
    from real2gym.real2gym_addon.fixes.edits import FixError, apply_fix

    report = json.loads((careful_run / "report.json").read_text())
    before = json.dumps(report)
    for fix, words in (
        ({"phase": "lift"}, "unknown approach phase"),
        ({"phase": "grasp", "clearance_m": 3.0}, "approach clearance"),
        ({"phase": "release", "frames": 1}, "must span 2"),
    ):
        with pytest.raises(FixError, match=words):
            apply_fix(report, {"kind": "approach", "object": "block", **fix})
    assert json.dumps(report) == before


def test_a_grasp_moved_up_the_object_raises_the_whole_hand_path_and_is_undone(careful_run: Path) -> None:
    """grasp_height: the hand holds the block nearer its top (its palm clears what the block goes into), the
    whole recorded path moved back along the approach axis; too far up the block is refused, and the fix
    is logged and undone like any other."""
    from real2gym.real2gym_addon.fixes.edits import FixError, apply_fix, max_grasp_rise, undo_last

    report = json.loads((careful_run / "report.json").read_text())
    before = np.array([f["position_world"] for f in report["gripper"]["frames"]])
    apply_fix(report, {"kind": "grasp_height", "object": "block", "rise_m": 0.008})
    after = np.array([f["position_world"] for f in report["gripper"]["frames"]])
    axes = np.array(
        [
            Rotation.from_quat(np.roll(f["quaternion_world"], -1)).as_matrix()[:, 2]
            for f in report["gripper"]["frames"]
        ]
    )
    np.testing.assert_allclose(after, before - 0.008 * axes, atol=2e-5)
    assert (after[:, 2] > before[:, 2]).all()  # a top-down hand: up
    height = next(o["size"][2] for o in report["objects"] if o["name"] == "block")
    with pytest.raises(FixError, match="finger pad"):
        apply_fix(
            report, {"kind": "grasp_height", "object": "block", "rise_m": max_grasp_rise(height) + 0.002}
        )
    assert report["edit_log"][-1]["kind"] == "grasp_height"
    undo_last(report)
    np.testing.assert_allclose([f["position_world"] for f in report["gripper"]["frames"]], before)


def test_the_grasp_is_moved_up_as_far_as_the_palm_or_the_fingers_need() -> None:
    """The rule behind the grasp_height suggestion: a palm that comes down onto a cup's rim while the hand
    lowers a block into it needs the grasp moved up by what it overlaps (plus 5 mm); fingers around a can
    as wide as the cup's opening, or that could not open in it to let go, must stay above the rim
    altogether, at most as far as leaves 1 cm of pad."""
    from real2gym.real2gym_addon.fixes.edits import max_grasp_rise
    from real2gym.real2gym_addon.fixes.rules import PALM_MARGIN, _grasp_rise
    from real2gym.real2gym_addon.mjcf.gripper import FINGERTIP_BELOW, GripperSpec

    def report(held_size, cup_inner, lowest):
        params = {
            "outer_radius": 0.038,
            "inner_radius": cup_inner,
            "wall_thickness": 0.038 - cup_inner,
            "bottom_thickness": 0.006,
        }
        cup = {"name": "cup", "shape": "cup", "size": [0.076, 0.076, 0.076], "role": "container", "params": params,
               "frames": [{"frame": f, "position_world": [0.1, 0.0, 0.038]} for f in range(10)]}  # fmt: skip
        held = {"name": "held", "shape": "box", "size": list(held_size),
                "frames": [{"frame": f, "position_world": [0.1, 0.0, 0.1]} for f in range(10)]}  # fmt: skip
        gripper = {"frames": [{"frame": f, "position_world": [0.1, 0.0, 0.2 - 0.02 * f if f < 8 else lowest],
                               "gripper": 0.0} for f in range(10)]}  # fmt: skip
        return {"objects": [held, cup], "gripper": gripper}

    hand = {"object": "cup", "phase": "carry", "frame": 5, "moved_m": 0.05}
    palm = GripperSpec().finger_size[2] - FINGERTIP_BELOW
    # A 16 mm block in a cup 69 mm across: the fingers fit in and can open there to let go of it; the palm
    # at 33 + 42 mm meets the 76 mm rim.
    rise, part = _grasp_rise(report((0.016, 0.042, 0.054), 0.0347, 0.033), hand, "held", 9)
    assert part == "palm" and rise == pytest.approx(0.076 + PALM_MARGIN - (0.033 + palm), abs=1e-4)
    # A 30 mm block there (seed 16 in Cycles): the 12 mm fingers fit in around it but could not open to
    # 40 mm in there to let go of it, so they stay above the rim like fingers that do not fit.
    rise, part = _grasp_rise(report((0.03, 0.042, 0.054), 0.0347, 0.033), hand, "held", 9)
    assert part == "fingers" and rise == pytest.approx(max_grasp_rise(0.054), abs=1e-4)
    # A 62 mm can in a cup 69 mm across: the fingers around it do not fit; at most 1 cm of pad stays on it.
    rise, part = _grasp_rise(report((0.062, 0.062, 0.08), 0.0347, 0.045), hand, "held", 9)
    assert part == "fingers" and rise == pytest.approx(max_grasp_rise(0.08), abs=1e-4)
    # The palm well above the rim: nothing to move.
    assert _grasp_rise(report((0.016, 0.042, 0.054), 0.0347, 0.06), hand, "held", 9) is None


def test_the_hand_that_cannot_follow_into_a_container_lets_go_above_it(careful_run: Path) -> None:
    """release_above: from the first frame of the carried object's last descent below the height, the hand
    stays at that height (its sideways path kept), opens as the recording opened at its release but from the
    frame given, stays put after letting go until it has risen clear, and the release keyframe moves there;
    a height the hand never comes down through is refused, and the fix is undone like any other."""
    from real2gym.real2gym_addon.fixes.edits import (
        APPROACH_MARGIN,
        FixError,
        apply_fix,
        descent_below,
        keyframe_frame,
        undo_last,
    )
    from real2gym.real2gym_addon.geometry.carry import gripper_hold

    report = json.loads((careful_run / "report.json").read_text())
    frames = report["gripper"]["frames"]
    before = np.array([f["position_world"] for f in frames])
    openings = np.array([f["gripper"] for f in frames])
    grasp, release = gripper_hold(openings)
    carried = before[grasp : release + 1, 2]
    height = float(
        before[release, 2] + 0.5 * (carried.max() - before[release, 2])
    )  # half way down to the release
    first = descent_below(before[:, 2], grasp, release, height)
    assert (
        first is not None and grasp < first <= release and before[first, 2] < height <= before[first - 1, 2]
    )
    let_go = min(first + 1, release)
    apply_fix(report, {"kind": "release_above", "object": "block", "height_m": height, "frame": let_go})
    after = np.array([f["position_world"] for f in frames])
    np.testing.assert_allclose(after[:first], before[:first])
    assert (after[first:, 2] >= height - 1e-5).all()
    np.testing.assert_allclose(after[first:let_go, :2], before[first:let_go, :2], atol=1e-5)
    rising = [f for f in range(let_go, len(frames)) if after[f, 2] >= height + APPROACH_MARGIN]
    still = after[let_go : rising[0] if rising else len(frames), :2]
    np.testing.assert_allclose(still, np.broadcast_to(before[let_go, :2], still.shape), atol=1e-5)
    shift = release - let_go
    np.testing.assert_allclose([f["gripper"] for f in frames[let_go:]],
                               [openings[min(f + shift, len(frames) - 1)] for f in range(let_go, len(frames))],
                               atol=1e-4)  # fmt: skip
    assert keyframe_frame(report, "release", "block") == let_go
    with pytest.raises(FixError, match="does not come down below"):
        apply_fix(
            report, {"kind": "release_above", "object": "block", "height_m": float(carried.max()) + 0.1}
        )
    undo_last(report)
    np.testing.assert_allclose([f["position_world"] for f in frames], before)
    np.testing.assert_allclose([f["gripper"] for f in frames], openings)


def test_the_rule_lets_go_above_the_rim_where_the_object_is_over_the_opening() -> None:
    """The rule behind the release_above suggestion: fingers around a can nearly as wide as the cup's opening
    stop with their tips 5 mm over the rim; the hand lets go on the first frame of its descent at that height
    where the can is over the opening (the hand still moving sideways before it)."""
    from real2gym.real2gym_addon.fixes.rules import PALM_MARGIN, SuggestionContext, _release_above
    from real2gym.real2gym_addon.geometry.shapes import Shape
    from real2gym.real2gym_addon.mjcf.gripper import FINGERTIP_BELOW

    params = {
        "outer_radius": 0.038,
        "inner_radius": 0.0347,
        "wall_thickness": 0.0033,
        "bottom_thickness": 0.006,
    }
    cup = {"name": "cup", "shape": "cup", "size": [0.076, 0.076, 0.076], "role": "container", "params": params,
           "frames": [{"frame": f, "position_world": [0.1, 0.0, 0.038], "quaternion_world": [1, 0, 0, 0]}
                      for f in range(14)]}  # fmt: skip
    can = {"name": "can", "shape": "cylinder", "size": [0.062, 0.062, 0.08],
           "frames": [{"frame": f, "position_world": [0.0, 0.0, 0.04]} for f in range(14)]}  # fmt: skip
    # Grasped on frame 1, lifted to 0.2 m, carried over to x = 0.1 while coming down, released on frame 12.
    xs = [0.0, 0.0, 0.0, 0.0, 0.02, 0.04, 0.06, 0.08, 0.09, 0.1, 0.1, 0.1, 0.1, 0.1]
    zs = [0.04, 0.04, 0.2, 0.2, 0.2, 0.16, 0.12, 0.11, 0.1, 0.08, 0.06, 0.045, 0.045, 0.1]
    gripper = {"frames": [{"frame": f, "position_world": [xs[f], 0.0, zs[f]], "gripper": 0.0 if 1 <= f < 12 else 1.0}
                          for f in range(14)]}  # fmt: skip
    keyframes = [
        {"frame": 1, "event": "grasp", "object": "can"},
        {"frame": 12, "event": "release", "object": "can"},
    ]
    report = {"objects": [can, cup], "gripper": gripper, "keyframes": keyframes}
    context = SuggestionContext(report, {}, {"hand_clearance"}, "can", "cup", Shape.from_report(can), cup,
                                Shape.from_report(cup), 12, None)  # fmt: skip
    hand = {"object": "cup", "phase": "carry", "frame": 10, "moved_m": 0.05}
    height, frame, part = _release_above(context, hand)
    assert part == "fingers" and height == pytest.approx(0.076 + PALM_MARGIN + FINGERTIP_BELOW, abs=1e-4)
    # Below that height from frame 7 (x = 0.08: the can is 2 cm off the axis, more than the room it has).
    assert frame == 9
    # A hand that stays above: nothing to suggest.
    for sample in gripper["frames"]:
        sample["position_world"][2] = max(sample["position_world"][2], 0.15)
    assert _release_above(context, hand) is None


def test_a_hand_that_presses_the_object_down_after_it_lands_sets_it_down(careful_run: Path) -> None:
    """The video shows the block set down 4 frames before the release, and the recorded hand goes on down
    12 mm along its approach axis (a recording at a low rate, interpolated; seed 39's can on its plate: 9 mm):
    in simulation the pads slide down the block and lose it before the release. The suggestion holds the
    hand where it sets the block down (``set_down``), along the approach axis only; the step is logged and
    undone like any other."""
    from real2gym.real2gym_addon.fixes.edits import _approach_axis, apply_fix, undo_last
    from real2gym.real2gym_addon.fixes.suggest import suggest_fixes

    report = json.loads((careful_run / "report.json").read_text())
    samples = report["gripper"]["frames"]
    _, release = gripper_hold(np.array([s["gripper"] for s in samples]))
    landed = release - 4
    block = next(o for o in report["objects"] if o["name"] == "block")
    for frame in block["frames"][landed:]:  # standing where it ends from `landed` on
        frame["position_world"] = list(block["frames"][-1]["position_world"])
    axis = _approach_axis(samples[landed])
    for frame in range(landed + 1, release + 1):
        pushed = np.array(samples[frame]["position_world"]) + axis * 0.012 * min(1.0, (frame - landed) / 2)
        samples[frame]["position_world"] = pushed.tolist()
    report["verification"]["checks"]["grasp_held"].update(
        passed=False, first_frame_without_contact=landed + 1
    )
    suggestion = suggest_fixes(report)[0]
    assert suggestion["fix"] == {"kind": "set_down", "object": "block", "frame": landed}
    assert "mm on down after it lands" in suggestion["text"]
    before = np.array([s["position_world"] for s in samples])
    apply_fix(report, suggestion["fix"])
    after = np.array([s["position_world"] for s in report["gripper"]["frames"]])
    assert np.abs((after[landed : release + 1] - after[landed]) @ axis).max() < 1e-6
    np.testing.assert_allclose(after[: landed + 1], before[: landed + 1], atol=1e-6)
    np.testing.assert_allclose(after[release + 1 :], before[release + 1 :], atol=1e-6)
    sideways = (after - before) - np.outer((after - before) @ axis, axis)
    assert np.abs(sideways).max() < 1e-6
    assert report["edit_log"][-1]["kind"] == "set_down"
    undo_last(report)
    np.testing.assert_allclose([s["position_world"] for s in report["gripper"]["frames"]], before)
    # Where the video shows the block still carried when the fingers lose it, the release keyframe moves.
    for frame in block["frames"][landed:release]:
        frame["position_world"][2] += 0.03
    assert suggest_fixes(report)[0]["fix"]["kind"] == "keyframe"


def test_a_hand_that_sets_the_object_down_lets_go_where_it_stops_covering_it() -> None:
    """Without a recording, a person's hand that covers the cup it carries sets it down as fast as a fall
    (seed 7 in Cycles: its path fits a free fall from 6 frames before the release) and leaves it 2 frames
    after it lands: the release is where the mask uncovers. A block dropped by a gripper that hid little of
    it during the carry keeps the drop's release."""
    from real2gym.real2gym_addon.errors import WarningLog
    from real2gym.real2gym_addon.geometry.keyframes import detect_events

    dropped = _carried_motion()
    fall = np.arange(FRAMES) >= 35
    t = (np.arange(FRAMES) - 35) / FPS
    dropped.positions[fall, 2] = np.maximum(0.05, 0.12 - 0.5 * 9.81 * t[fall] ** 2)  # lands on 39
    covered = np.full(FRAMES, 1000.0)
    covered[18:42] = 380  # the hand on it from the grasp until it leaves on 42
    found = {k["event"]: k["frame"] for k in detect_events("block", dropped, FPS, None, WarningLog(),
                                                          areas=covered)}  # fmt: skip
    assert found["release"] == 41
    seen = np.full(FRAMES, 1000.0)
    seen[18:21] = 850
    found = {
        k["event"]: k["frame"] for k in detect_events("block", dropped, FPS, None, WarningLog(), areas=seen)
    }
    assert found["release"] == 35
    # Put into a cup under the hand: out of sight from frame 36 (its path there a fall the motion stage
    # made up from where it was last seen, coming to rest on 45), seen again over the rim once the hand
    # has left on 43 (seed 16: at rest on 38, seen again on 36).
    hidden = _carried_motion()
    hidden.positions[35:, 2] = np.r_[np.linspace(0.12, 0.05, 11), [0.05] * (FRAMES - 46)]
    hidden.measured[36:43] = False
    into_cup = covered.copy()
    into_cup[36:43] = 0.0
    into_cup[43:] = 420
    found = {k["event"]: k["frame"] for k in detect_events("block", hidden, FPS, None, WarningLog(),
                                                          areas=into_cup)}  # fmt: skip
    assert found["release"] == 42


def test_set_down_from_the_command_line(careful_run: Path, tmp_path: Path, capsys) -> None:
    out = Path(shutil.copytree(careful_run, tmp_path / "run"))
    assert main(["fix", str(out), "--set-down", "40", "--no-verify"]) == 2
    assert "--object" in capsys.readouterr().err
    assert main(["fix", str(out), "--object", "block", "--set-down", "400", "--no-verify"]) == 2
    assert "outside the video" in capsys.readouterr().err
    assert main(["fix", str(out), "--object", "block", "--set-down", "100", "--no-verify"]) == 0
    log = json.loads((out / "report.json").read_text())["edit_log"]
    assert log[-1]["kind"] == "set_down" and log[-1]["args"] == {"frame": 100}
