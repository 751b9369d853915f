"""A person's tracked hand as the recording (docs/data-contract.md, "Human hands").

The hand's samples give the wrist's pose and the thumb's and index finger's tips; the reader turns them into
the gripper's: the grasp centre between the tips, the fingers opening along the line between them, the
approach from the wrist, and the gap as wide as the tips are apart (a measured gap: it stalls at the object's
width while the fingers hold it). tools/_recording.py writes the hand from a known gripper motion; the reader
must give back that motion, and the bundled demo, its robot's recording rewritten as a hand's, must verify.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.errors import DemoFolderError
from real2gym.real2gym_addon.geometry.carry import gripper_hold
from real2gym.real2gym_addon.trajectory import FINGERTIP_PAD, parse_trajectory

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "block_in_cup"
FRAMES, FPS = 60, 30.0


def _motion():
    """Grasp-centre poses (world, contract axes), the measured gap and the holding frames of a pick and place."""
    t = np.arange(FRAMES) / (FRAMES - 1)
    poses = np.tile(np.eye(4), (FRAMES, 1, 1))
    poses[:, :3, 3] = np.c_[0.1 * t, 0.05 * np.sin(np.pi * t), 0.02 + 0.1 * np.sin(np.pi * t)]
    turn = np.radians(60) * np.clip((t - 0.3) / 0.4, 0, 1)
    tilt = np.radians(20) * np.sin(np.pi * t)  # the approach leans: the wrist is not straight above
    rotations = (
        Rotation.from_euler("z", turn[:, None])
        * Rotation.from_euler("x", np.pi)
        * Rotation.from_euler("y", tilt[:, None])
    )
    poses[:, :3, :3] = rotations.as_matrix()
    width = np.full(FRAMES, 0.09)  # a hand opens wider than the simulated gripper
    width[10:15] = np.linspace(0.09, 0.041, 5)
    width[15:40] = 0.041
    width[40:44] = np.linspace(0.041, 0.07, 4)
    width[44:] = 0.07
    return poses, width, (np.arange(FRAMES) >= 15) & (np.arange(FRAMES) < 40)


def test_a_tracked_hand_reads_back_as_the_gripper_between_its_fingertips(recording) -> None:
    poses, width, holding = _motion()
    hand = recording.recording_json("hand", poses, width, np.eye(4), holding)
    gripper = recording.recording_json("world_width_measured", poses, width, np.eye(4), holding)
    assert set(hand["samples"][0]) == {"frame", "wrist", "thumb_tip", "index_tip"} and hand["hand"] == "right"
    ours, theirs = parse_trajectory(hand, FRAMES, FPS), parse_trajectory(gripper, FRAMES, FPS)
    assert np.abs(ours.positions - theirs.positions).max() < 1e-6
    angle = (
        Rotation.from_quat(ours.quaternions[:, [1, 2, 3, 0]]).inv()
        * Rotation.from_quat(theirs.quaternions[:, [1, 2, 3, 0]])
    ).magnitude()
    assert np.degrees(angle).max() < 0.01
    # The tips are the gap and a finger's pad each side apart (the writer's HAND_PAD, the reader's default
    # fingertip_pad_m); 90 mm reads as fully open (the gripper's 80).
    assert recording.HAND_PAD == FINGERTIP_PAD
    assert np.abs(ours.opening - theirs.opening).max() < 1e-5
    padless = parse_trajectory({**hand, "fingertip_pad_m": 0.0}, FRAMES, FPS)
    assert np.abs(padless.opening - np.clip((width + 2 * FINGERTIP_PAD) / 0.08, 0, 1)).max() < 1e-5
    assert ours.kind == "measured" and ours.form["hand"] == "right" and ours.form["frame_of"] == "world"
    # Grasp and release from the pinch: where it stalls at the block's width, where it opens past it.
    assert gripper_hold(ours.opening) == gripper_hold(theirs.opening) == (14, 41)


def test_touching_fingertips_keep_the_opening_direction_of_the_sample_before(recording) -> None:
    poses, width, holding = _motion()
    hand = recording.recording_json("hand", poses, width, np.eye(4), holding)
    hand["samples"][20]["index_tip"] = hand["samples"][20]["thumb_tip"]  # a pinch on nothing, for one frame
    read = parse_trajectory(hand, FRAMES, FPS)
    opening = Rotation.from_quat(read.quaternions[:, [1, 2, 3, 0]]).as_matrix()[:, :, 1]
    assert np.allclose(opening[20], opening[19]) and read.opening[20] == 0.0


def _broken(recording, change) -> dict:
    poses, width, holding = _motion()
    data = copy.deepcopy(recording.recording_json("hand", poses, width, np.eye(4), holding))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(hand="middle"), "'hand' must be 'right' or 'left'"),
        (lambda d: d["samples"][7].pop("index_tip"), "frame 7 (right hand): 'index_tip' must be a list of 3"),
        (
            lambda d: d["samples"][3].update(wrist=[[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
            "frame 3 (right hand): 'wrist' must be",
        ),
        (
            lambda d: d["samples"][5].update(thumb_tip=[0.0, float("nan"), 0.1]),
            "frame 5 (right hand): 'thumb_tip' holds NaN",
        ),
        (
            lambda d: d["samples"][0].update(index_tip=d["samples"][0]["thumb_tip"]),
            "no sample before says which way",
        ),
        (
            lambda d: (
                d["samples"][9]["wrist"][0].__setitem__(
                    3, d["samples"][9]["thumb_tip"][0] / 2 + d["samples"][9]["index_tip"][0] / 2
                )
                or [
                    d["samples"][9]["wrist"][r].__setitem__(
                        3, (d["samples"][9]["thumb_tip"][r] + d["samples"][9]["index_tip"][r]) / 2
                    )
                    for r in (1, 2)
                ]
            ),
            "frame 9 (right hand): the grasp centre between the fingertips is 0 mm from the wrist",
        ),
        (lambda d: d.update(tcp_offset=0.1), "'tcp_offset' and 'axes' are a robot's"),
        (lambda d: d.update(fingertip_pad_m=0.05), "'fingertip_pad_m' is 0.05; it must lie in [0, 0.02]"),
    ],
)
def test_a_bad_hand_sample_is_named(recording, change, words: str) -> None:
    with pytest.raises(DemoFolderError, match=None) as error:
        parse_trajectory(_broken(recording, change), FRAMES, FPS)
    assert words in str(error.value), str(error.value)


def test_the_bundled_demo_verifies_with_its_recording_as_a_tracked_hand(tmp_path: Path) -> None:
    """The robot's recording rewritten as a right hand's joints (the fingertips 7 mm beyond the pads the fingers
    measured apart, the wrist 9 cm behind the grasp centre and 2 cm to the thumb's side), in the camera frame."""
    demo = Path(shutil.copytree(DEMO, tmp_path / "demo"))
    truth = json.loads((demo / "truth.json").read_text())
    recorded = json.loads((demo / "trajectory.json").read_text())
    gap = [f["opening_m"] for f in truth["gripper"]["frames"]]
    samples = []
    for sample in recorded["samples"]:
        w, x, y, z = sample["quaternion"]
        rotation = Rotation.from_quat([x, y, z, w]).as_matrix()
        centre, opening, approach = np.array(sample["position"]), rotation[:, 1], rotation[:, 2]
        half = gap[sample["frame"]] / 2 + 0.007
        wrist = np.eye(4)
        wrist[:3, :3], wrist[:3, 3] = rotation, centre - 0.09 * approach - 0.02 * opening
        samples.append({"frame": sample["frame"], "wrist": wrist.tolist(),
                        "thumb_tip": (centre - half * opening).tolist(), "index_tip": (centre + half * opening).tolist()})  # fmt: skip
    (demo / "trajectory.json").write_text(
        json.dumps({"frame_of": "camera", "hand": "right", "samples": samples})
    )
    out = tmp_path / "out"
    assert main(["run", str(demo), "--out", str(out), "--no-blend", "-q", "--margin", "0"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["verification"]["passed"], report["verification"]["checks"]
    assert report["gripper"]["form"]["hand"] == "right"
    keys = {k["event"]: k["frame"] for k in report["keyframes"]}
    true = {k["event"]: k["frame"] for k in truth["keyframes"]}
    assert abs(keys["grasp"] - true["grasp"]) <= 2 and abs(keys["release"] - true["release"]) <= 2
