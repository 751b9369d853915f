"""Editing prompts.json safely, and the coloured mask overlays (plain Python, no bpy)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.errors import DemoFolderError, Real2GymError
from real2gym.real2gym_addon.prompts import ObjectPrompt
from real2gym.real2gym_addon.prompts_file import read_prompts_file, save_prompts_file
from real2gym.real2gym_addon.segmentation.overlay import OVERLAYS_NAME, overlay_image, write_overlays


def test_a_box_off_the_image_still_loads_for_editing(tiny_demo: Path) -> None:
    data = json.loads((tiny_demo / "prompts.json").read_text())
    data["objects"][0]["box"] = [-5, 10, 500, 20]
    (tiny_demo / "prompts.json").write_text(json.dumps(data))
    prompts = read_prompts_file(tiny_demo)
    assert prompts[0].box == (-5, 10, 500, 20) and prompts[0].points == ((18, 28, 1),)
    data["objects"][1]["role"] = "lid"
    (tiny_demo / "prompts.json").write_text(json.dumps(data))
    with pytest.raises(DemoFolderError, match="object 'cup': unknown role 'lid'"):
        read_prompts_file(tiny_demo)


def test_saving_merges_backs_up_once_and_skips_no_change(tiny_demo: Path) -> None:
    path = tiny_demo / "prompts.json"
    original = path.read_bytes()
    prompts = read_prompts_file(tiny_demo)
    edits = [(p, p.name) for p in prompts]
    assert save_prompts_file(tiny_demo, edits) is False  # nothing changed: nothing written
    assert path.read_bytes() == original and not (tiny_demo / "prompts.json.orig").exists()
    renamed = ObjectPrompt("mug", 3, (1, 2, 3, 4), (), "cup", "container")
    assert save_prompts_file(tiny_demo, [edits[0], (renamed, "cup")]) is True
    saved = json.loads(path.read_text())
    assert saved["objects"][1] == {
        "name": "mug",
        "frame": 3,
        "box": [1, 2, 3, 4],
        "shape": "cup",
        "role": "container",
    }
    assert saved["task"] == {"type": "place_in", "object": "block", "target": "mug"}
    assert (tiny_demo / "prompts.json.orig").read_bytes() == original
    with pytest.raises(DemoFolderError, match="unique; rename the repeated: block"):
        save_prompts_file(tiny_demo, [edits[0], edits[0]])


def test_overlays_colour_the_masks_and_replace_earlier_ones(tmp_path: Path) -> None:
    mask = np.zeros((6, 8), np.uint8)
    mask[2:4, 3:6] = 255
    image = overlay_image(mask, (1.0, 0.5, 0.0))
    assert image.shape == (6, 8, 4)
    assert (image[mask > 0] == (0, 128, 255, 128)).all() and (image[mask == 0] == 0).all()

    for frame in range(3):
        (tmp_path / "masks" / "a").mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(tmp_path / "masks" / "a" / f"{frame:06d}.png"), mask)
    (tmp_path / OVERLAYS_NAME / "old").mkdir(parents=True)
    assert write_overlays(tmp_path, [("a", "masks/a")], {"a": (0.0, 0.0, 1.0)}) == {"a": 3}
    assert sorted(p.name for p in (tmp_path / OVERLAYS_NAME).iterdir()) == ["a"]
    written = cv2.imread(str(tmp_path / OVERLAYS_NAME / "a" / "000002.png"), cv2.IMREAD_UNCHANGED)
    assert (written[mask > 0] == (255, 0, 0, 128)).all()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".real2gym")]
    with pytest.raises(Real2GymError, match="no masks of 'b'"):
        write_overlays(tmp_path, [("b", "masks/b")])
    assert (tmp_path / OVERLAYS_NAME / "a" / "000002.png").is_file()  # the earlier overlays stay
