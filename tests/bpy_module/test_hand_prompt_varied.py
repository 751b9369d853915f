"""A hand prompted in a Cycles-rendered demo (tools/make_varied_demo.py) gives the grasp and the release.

The scene is not the project's MuJoCo demo: a person's hand (capsules) carries a block into a cup, and no
trajectory.json says when it closes or opens. With the true masks (``--backend given``, the hand's too)
the keyframes must come from the hand within 3 frames of truth; without the hand's prompt the grasp is
only estimated (from the hand's covering of the block, or from the lift).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.truth import hand_prompt, load_truth, write_given_masks

REPO = Path(__file__).resolve().parents[2]
SEED, FRAMES, SIZE = 16, 40, "320x240"


@pytest.fixture(scope="module")
def carried(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 16: a block carried into a cup, with depth; 40 frames at 320x240, one sample."""
    out = tmp_path_factory.mktemp("hand") / "demo"
    command = [sys.executable, str(REPO / "tools" / "make_varied_demo.py"), "--out", str(out), "--seed",
               str(SEED), "--frames", str(FRAMES), "--size", SIZE, "--samples", "1"]  # fmt: skip
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path_factory.mktemp("blender_user")))
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return out


def _run(folder: Path, out: Path, with_hand: bool) -> dict:
    truth = load_truth(folder)
    prompts = json.loads((folder / "prompts.json").read_text())
    if with_hand:
        prompts["objects"].append(hand_prompt(truth))
        (folder / "prompts.json").write_text(json.dumps(prompts))
    write_given_masks(truth, folder, [o["name"] for o in prompts["objects"]])
    main(["run", str(folder), "--out", str(out), "--no-blend", "-q", "--backend", "given"])
    return json.loads((out / "report.json").read_text())


def test_the_truth_holds_the_hands_masks_and_its_grasp_centre(carried: Path) -> None:
    truth = load_truth(carried)
    grasp = truth.keyframe("grasp")
    hand = truth.hand.frames
    assert hand[grasp].visible and not hand[0].visible or hand[0].mask().sum() < hand[grasp].mask().sum()
    carried_object = truth.objects[truth.keyframes[0]["object"]]
    assert abs(hand[grasp].position_world - carried_object.frames[grasp].position_world).max() < 1e-4


def test_the_hand_in_the_video_gives_grasp_and_release_within_three_frames(carried: Path, tmp_path) -> None:
    truth = load_truth(carried)
    folder = Path(shutil.copytree(carried, tmp_path / "with_hand"))
    report = _run(folder, tmp_path / "out_hand", with_hand=True)
    assert [h["name"] for h in report["segmentation"]["hands"]] == ["hand"]
    assert (tmp_path / "out_hand" / "masks" / "hand" / "000000.png").is_file()
    assert "hand" not in [o["name"] for o in report["objects"]]
    found = {k["event"]: k for k in report["keyframes"]}
    for event in ("grasp", "release"):
        assert found[event].get("source") == "hand", report["keyframes"]
        assert abs(found[event]["frame"] - truth.keyframe(event)) <= 3, (event, report["keyframes"])

    bare = Path(shutil.copytree(carried, tmp_path / "bare"))
    report = _run(bare, tmp_path / "out_bare", with_hand=False)
    assert not any(k.get("source") == "hand" for k in report["keyframes"])
    # Without the hand, the grasp is estimated (from the hand's covering of the object, or the lift), and
    # the run says so.
    assert any("grasp frame" in w["message"] and "estimated from" in w["message"] for w in report["warnings"])
