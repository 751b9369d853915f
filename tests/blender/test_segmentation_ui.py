"""The Segmentation panel's Blender side: prompts in the scene, Segment, the mask overlays."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import bpy
import pytest

MODULE = "bl_ext.user_default.real2gym"
BACKEND = "classical"


def _bridge(name: str):
    return importlib.import_module(f"{MODULE}.bridge.{name}")


def _state(name: str):
    return importlib.import_module(f"{MODULE}.state.{name}")


def _scene_state(scene) -> dict:
    return {
        "camera": scene.camera.name if scene.camera else None,
        "objects": sorted(o.name for o in bpy.data.objects),
        "images": sorted(i.name for i in bpy.data.images),
        "clips": sorted(c.name for c in bpy.data.movieclips),
        "prompts": [(p.name, tuple(p.box)) for p in scene.real2gym.object_prompts],
    }


def _overlays(scene) -> list:
    camera = scene.camera
    return [bg for bg in camera.data.background_images if bg.source == "IMAGE"]


@pytest.fixture
def demo_scene(empty_scene, tiny_demo: Path, tmp_path: Path):
    """The empty scene set to the tiny demo, with an output folder and a backend that runs here."""
    state = empty_scene.real2gym
    state.demo_dir = str(tiny_demo)
    state.out_dir = str(tmp_path / "out")
    state.segmentation_backend = BACKEND
    return empty_scene


def test_load_edit_and_save_prompts(demo_scene, tiny_demo: Path) -> None:
    path = tiny_demo / "prompts.json"
    data = json.loads(path.read_text())
    data["objects"][0]["notes"] = "kept"  # a field the editor does not know
    data["source"] = "hand-labelled"
    path.write_text(json.dumps(data))
    original = path.read_bytes()

    assert bpy.ops.real2gym.load_prompts() == {"FINISHED"}
    prompts = demo_scene.real2gym.object_prompts
    assert [p.name for p in prompts] == ["block", "cup"]
    block, cup = prompts
    assert tuple(block.box) == (8, 18, 28, 38) and block.frame == 0
    assert [(p.x, p.y, p.label) for p in block.points] == [(18, 28, 1)]
    assert (block.shape, block.role, cup.shape, cup.role) == ("box", "manipulated", "cup", "container")
    assert tuple(block.color) != tuple(cup.color)

    # Edit: a new box on frame 2, a negative point, a renamed cup.
    block.box = (9, 19, 29.5, 39)
    block.frame = 2
    point = block.points.add()
    point.x, point.y, point.label = 5, 6, 0
    cup.name = "mug"
    assert bpy.ops.real2gym.save_prompts() == {"FINISHED"}
    saved = json.loads(path.read_text())
    assert saved["objects"][0] == {
        "name": "block",
        "frame": 2,
        "box": [9, 19, 29.5, 39],
        "points": [[18, 28, 1], [5, 6, 0]],
        "shape": "box",
        "role": "manipulated",
        "notes": "kept",
    }
    assert saved["objects"][1]["name"] == "mug" and "points" not in saved["objects"][1]
    assert saved["task"] == {"type": "place_in", "object": "block", "target": "mug"}
    assert saved["source"] == "hand-labelled"
    backup = tiny_demo / "prompts.json.orig"
    assert backup.read_bytes() == original
    # Atomic: no temporary files left; a second save keeps the first backup.
    assert sorted(p.name for p in tiny_demo.iterdir()) == [
        "camera.json",
        "prompts.json",
        "prompts.json.orig",
        "video.mp4",
    ]
    block.box = (10, 20, 30, 40)
    assert bpy.ops.real2gym.save_prompts() == {"FINISHED"}
    assert backup.read_bytes() == original
    assert json.loads(path.read_text())["objects"][0]["box"] == [10, 20, 30, 40]


def test_add_and_remove_prompts(demo_scene) -> None:
    bpy.ops.real2gym.load_prompts()
    demo_scene.frame_set(4)
    assert bpy.ops.real2gym.add_prompt(name="block") == {"FINISHED"}
    state = demo_scene.real2gym
    assert [p.name for p in state.object_prompts] == ["block", "cup", "block.002"]
    assert state.active_prompt_index == 2 and state.object_prompts[2].frame == 4
    assert bpy.ops.real2gym.remove_prompt() == {"FINISHED"}
    assert [p.name for p in state.object_prompts] == ["block", "cup"]


def test_a_box_drawn_on_a_later_frame_is_saved_as_a_correction(demo_scene, tiny_demo: Path) -> None:
    """Draw Box's bridge function: on another frame it adds a correction; saved, loaded back, removed."""
    prompts = _bridge("prompts")
    path = tiny_demo / "prompts.json"
    assert bpy.ops.real2gym.load_prompts() == {"FINISHED"}
    state = demo_scene.real2gym
    block = state.object_prompts["block"]
    assert block.frame == 0 and len(block.corrections) == 0

    changed = prompts.set_drawn_prompt(block, 6, (30, 18, 50, 38), [(40, 28, 1)])
    assert changed != block and (block.frame, tuple(block.box)) == (
        0,
        (8, 18, 28, 38),
    )  # the main prompt stays
    assert [(c.frame, tuple(c.box)) for c in block.corrections] == [(6, (30, 18, 50, 38))]
    # Redrawn on the same frame: the correction changes, no second one; points only keep its box.
    prompts.set_drawn_prompt(block, 6, (31, 18, 51, 38), [(41, 28, 1)])
    prompts.set_drawn_prompt(block, 6, None, [(42, 29, 1), (20, 5, 0)])
    assert len(block.corrections) == 1 and tuple(block.corrections[0].box) == (31, 18, 51, 38)
    with pytest.raises(ValueError, match="draw a box on frame 9"):
        prompts.set_drawn_prompt(block, 9, None, [(42, 29, 1)])
    # On its own frame the main prompt is redrawn, as before.
    assert prompts.set_drawn_prompt(block, 0, (7, 17, 29, 39), [(18, 28, 1)]) == block
    assert tuple(block.box) == (7, 17, 29, 39) and len(block.corrections) == 1
    assert bpy.ops.real2gym.save_prompts() == {"FINISHED"}
    saved = json.loads(path.read_text())["objects"][0]
    assert (saved["frame"], saved["box"]) == (0, [7, 17, 29, 39])
    assert saved["prompts"] == [{"frame": 6, "box": [31, 18, 51, 38], "points": [[42, 29, 1], [20, 5, 0]]}]

    assert bpy.ops.real2gym.load_prompts() == {"FINISHED"}
    block = demo_scene.real2gym.object_prompts["block"]
    assert [(c.frame, tuple(c.box), [(p.x, p.y, p.label) for p in c.points]) for c in block.corrections] == [
        (6, (31, 18, 51, 38), [(42, 29, 1), (20, 5, 0)])
    ]
    assert len(demo_scene.real2gym.object_prompts["cup"].corrections) == 0

    state.active_prompt_index = 0
    with pytest.raises(RuntimeError, match="'block' has no correction number 3"):
        bpy.ops.real2gym.remove_correction(index=3)
    assert bpy.ops.real2gym.remove_correction(index=0) == {"FINISHED"}
    assert len(block.corrections) == 0
    assert bpy.ops.real2gym.save_prompts() == {"FINISHED"}
    assert "prompts" not in json.loads(path.read_text())["objects"][0]


def test_a_new_object_gets_its_first_box_on_any_frame(demo_scene) -> None:
    bpy.ops.real2gym.load_prompts()
    demo_scene.frame_set(4)
    bpy.ops.real2gym.add_prompt(name="lid")
    lid = demo_scene.real2gym.object_prompts["lid"]
    _bridge("prompts").set_drawn_prompt(lid, 7, (10, 10, 30, 30), [])
    assert (lid.frame, tuple(lid.box), len(lid.corrections)) == (7, (10, 10, 30, 30), 0)


def test_segment_shows_masks_over_the_video(demo_scene, tmp_path: Path) -> None:
    import numpy as np

    bpy.ops.real2gym.load_prompts()
    state = demo_scene.real2gym
    state.object_prompts["cup"].color = (0.0, 0.0, 1.0)
    assert bpy.ops.real2gym.segment() == {"FINISHED"}

    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())
    assert report["segmentation"]["backend"] == BACKEND
    for name in ("block", "cup"):
        assert len(list((out / "masks" / name).glob("*.png"))) == 12
        assert len(list((out / "masks_overlay" / name).glob("*.png"))) == 12
    # The overlay is the cup's colour, half transparent, on its mask only.
    mask = _read_png(out / "masks" / "cup" / "000005.png")[..., 0] > 0
    overlay = _read_png(out / "masks_overlay" / "cup" / "000005.png")
    assert mask.any()
    assert (overlay[mask] == (0, 0, 255, 128)).all()
    assert (overlay[~mask] == 0).all()

    overlays = _overlays(demo_scene)
    assert [bg.image.name for bg in overlays] == ["Real2Gym Mask block", "Real2Gym Mask cup"]
    for bg in overlays:
        assert bg.image.source == "SEQUENCE"
        assert Path(bg.image.filepath).parent.parent == out / "masks_overlay"
        assert (bg.display_depth, bg.frame_method) == ("FRONT", "STRETCH")
        assert bg.image_user.frame_duration == 12 and bg.image_user.frame_start == 0
        assert bg.show_background_image
    # The video stays behind, as the first background.
    assert demo_scene.camera.data.background_images[0].source == "MOVIE_CLIP"

    state.object_prompts["cup"].show_mask = False
    assert [bg.show_background_image for bg in _overlays(demo_scene)] == [True, False]

    # Re-running updates the overlays instead of adding more; hidden stays hidden.
    assert bpy.ops.real2gym.segment() == {"FINISHED"}
    assert len(_overlays(demo_scene)) == 2 and len(demo_scene.camera.data.background_images) == 3
    assert [bg.show_background_image for bg in _overlays(demo_scene)] == [True, False]
    assert sorted(i.name for i in bpy.data.images) == ["Real2Gym Mask block", "Real2Gym Mask cup"]
    assert np.array_equal(_read_png(out / "masks_overlay" / "cup" / "000005.png"), overlay)
    assert state.segmentation_status == f"2 objects segmented ({BACKEND})"

    # The saved scene.blend shows the same overlays.
    bpy.ops.wm.open_mainfile(filepath=str(out / "scene.blend"))
    saved = bpy.context.scene
    assert [bg.image.name for bg in _overlays(saved)] == ["Real2Gym Mask block", "Real2Gym Mask cup"]
    assert [p.name for p in saved.real2gym.object_prompts] == ["block", "cup"]


def test_resegment_active_object_keeps_the_other_masks(demo_scene, tmp_path: Path) -> None:
    """The operator segments only the active object, with the correction drawn in the scene, as the core does."""
    bpy.ops.real2gym.load_prompts()
    state = demo_scene.real2gym
    assert bpy.ops.real2gym.segment() == {"FINISHED"}
    out = tmp_path / "out"
    cup = {p.name: p.read_bytes() for p in (out / "masks" / "cup").iterdir()}
    report = json.loads((out / "report.json").read_text())
    report["segmentation"]["objects"][1]["checked_by"] = "a person"  # kept as it is, not made again
    (out / "report.json").write_text(json.dumps(report))
    before = report["segmentation"]["objects"]
    _bridge("prompts").set_drawn_prompt(state.object_prompts["block"], 6, (24, 20, 34, 38), [(29, 29, 1)])
    state.active_prompt_index = 0
    script = tmp_path / "script"
    shutil.copytree(out, script)

    assert bpy.ops.real2gym.resegment_object() == {"FINISHED"}
    after = json.loads((out / "report.json").read_text())["segmentation"]["objects"]
    assert {p.name: p.read_bytes() for p in (out / "masks" / "cup").iterdir()} == cup
    assert after[1] == before[1] and after[0]["frames"][:6] == before[0]["frames"][:6]
    assert after[0]["frames"][6] != before[0]["frames"][6]  # the half-block correction on frame 6
    assert len(_overlays(demo_scene)) == 2
    # The same as the core function on the saved prompts (a script or the command line).
    pipeline = importlib.import_module(f"{MODULE}.real2gym_addon.pipeline")
    pipeline.run_pipeline(state.demo_dir, script, last_stage="segment", resegment="block")
    assert json.loads((script / "report.json").read_text())["segmentation"]["objects"] == after
    state.active_prompt_index = 7  # no active object
    with pytest.raises(RuntimeError, match="poll"):
        bpy.ops.real2gym.resegment_object()


def test_doubtful_masks_are_listed_and_lead_to_their_frames(demo_scene, tmp_path: Path) -> None:
    bpy.ops.real2gym.load_prompts()
    assert bpy.ops.real2gym.segment() == {"FINISHED"}
    state = demo_scene.real2gym
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    quality = importlib.import_module(f"{MODULE}.real2gym_addon.segmentation.quality")
    ranges = [r for o in report["segmentation"]["objects"] for r in quality.flagged_ranges(o["frames"])]
    assert len(state.mask_reviews) == len(ranges)  # the run's own flags, as the report holds them
    # A report whose cup mask leaked on frames 3-6 and was lost on 9: two entries, in frame order.
    section = report["segmentation"]
    for entry in section["objects"]:
        for frame in entry["frames"]:
            frame["review"] = entry["name"] == "cup" and frame["frame"] in (3, 4, 5, 6, 9)
            frame["reason"] = "leak" if frame["frame"] < 9 else "lost"
    mask_review = _bridge("mask_review")
    assert mask_review.show_mask_reviews(demo_scene, section) == 5
    rows = [(r.object_name, r.first, r.last, r.reason) for r in state.mask_reviews]
    assert rows == [("cup", 3, 6, "leak"), ("cup", 9, 9, "lost")]
    state.object_prompts["cup"].show_mask = False
    demo_scene.frame_set(0)
    assert bpy.ops.real2gym.go_to_mask_review(index=1) == {"FINISHED"}
    assert demo_scene.frame_current == 9 and state.object_prompts["cup"].show_mask
    assert state.object_prompts[state.active_prompt_index].name == "cup"
    with pytest.raises(RuntimeError, match="select a range in the Frames to Check list first"):
        bpy.ops.real2gym.go_to_mask_review(index=7)


def _read_png(path: Path):
    """An image as an ``HxWx4`` uint8 RGBA array, top row first (through Blender, no OpenCV here)."""
    import numpy as np

    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    rgba = np.round(pixels.reshape(height, width, 4) * 255).astype(np.uint8)
    return rgba[::-1]


def test_segment_loads_the_prompts_when_the_scene_has_none(demo_scene) -> None:
    assert len(demo_scene.real2gym.object_prompts) == 0
    assert bpy.ops.real2gym.segment() == {"FINISHED"}
    assert [p.name for p in demo_scene.real2gym.object_prompts] == ["block", "cup"]
    assert len(_overlays(demo_scene)) == 2


def test_unavailable_backend_refuses_and_changes_nothing(demo_scene, tiny_demo: Path, tmp_path: Path) -> None:
    bpy.ops.real2gym.load_prompts()
    state = demo_scene.real2gym
    state.object_prompts["block"].box = (1, 2, 30, 40)  # an unsaved edit
    state.segmentation_backend = "sam2"
    state.sam2_checkpoint = ""
    prompts_before = (tiny_demo / "prompts.json").read_bytes()
    before = _scene_state(demo_scene)
    with pytest.raises(RuntimeError, match="(?i)sam2"):
        bpy.ops.real2gym.segment()
    assert _scene_state(demo_scene) == before
    assert (tiny_demo / "prompts.json").read_bytes() == prompts_before
    assert not (tiny_demo / "prompts.json.orig").exists()
    assert not (tmp_path / "out").exists()
    available, reason = _state("segmentation").backend_availability(
        _state("segmentation").segmentation_options(demo_scene)
    )
    assert not available and reason


def test_sam2_checkpoint_falls_back_to_the_preferences(extension, demo_scene, tmp_path: Path) -> None:
    preferences = bpy.context.preferences.addons[MODULE].preferences
    preferences.sam2_checkpoint = str(tmp_path / "default.pt")
    options = _state("segmentation").segmentation_options
    state = demo_scene.real2gym
    state.sam2_checkpoint = ""
    assert options(demo_scene).sam2_checkpoint == str(tmp_path / "default.pt")
    state.sam2_checkpoint = str(tmp_path / "mine.pt")
    assert options(demo_scene).sam2_checkpoint == str(tmp_path / "mine.pt")
    assert options(demo_scene).sam2_config == "sam2.1_hiera_t"


def test_run_pipeline_uses_the_scene_backend(demo_scene, tmp_path: Path) -> None:
    """The Run button honours the panel's backend choice, through the same bridge function."""
    demo_scene.real2gym.segmentation_backend = "sam2"
    with pytest.raises(RuntimeError, match="segmentation backend 'sam2' cannot run"):
        bpy.ops.real2gym.run_pipeline()
    run_scene_pipeline = _bridge("scene_run").run_scene_pipeline
    demo_scene.real2gym.segmentation_backend = "flow_warp"
    run = run_scene_pipeline(demo_scene, last_stage="segment")
    assert run.segmentation.backend == "flow_warp"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["segmentation"]["backend"] == "flow_warp"


def test_masks_made_elsewhere_are_read_by_the_given_backend(
    demo_scene, tiny_demo: Path, tmp_path: Path
) -> None:
    """Masks brought in the demo folder (masks_indexed/, the DAVIS layout) come back through the panel's
    backend menu as they were given (issue 28)."""
    import cv2
    import numpy as np

    objects = json.loads((tiny_demo / "prompts.json").read_text())["objects"]
    (tiny_demo / "masks_indexed").mkdir()
    index = np.zeros((72, 96), np.uint8)
    for number, obj in enumerate(objects, start=1):
        x0, y0, x1, y1 = obj["box"]
        index[y0:y1, x0:x1] = number
    for frame in range(12):
        cv2.imwrite(str(tiny_demo / "masks_indexed" / f"{frame:06d}.png"), index)
    items = {
        item.identifier for item in demo_scene.real2gym.bl_rna.properties["segmentation_backend"].enum_items
    }
    assert "given" in items
    demo_scene.real2gym.segmentation_backend = "given"
    _bridge("scene_run").run_scene_pipeline(demo_scene, last_stage="segment")
    section = json.loads((tmp_path / "out" / "report.json").read_text())["segmentation"]
    assert section["backend"] == "given"
    for number, entry in enumerate(section["objects"], start=1):
        ys, xs = np.nonzero(index == number)
        expected = [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]
        assert [f["area"] for f in entry["frames"]] == [int((index == number).sum())] * 12, entry["name"]
        assert all(f["bbox"] == expected for f in entry["frames"]), entry["name"]


def test_prompts_of_another_demo_are_not_written_there(demo_scene, tiny_demo: Path, tmp_path: Path) -> None:
    import shutil

    bpy.ops.real2gym.load_prompts()
    other = Path(shutil.copytree(tiny_demo, tmp_path / "other"))
    demo_scene.real2gym.demo_dir = str(other)
    with pytest.raises(RuntimeError, match="Load Prompts"):
        bpy.ops.real2gym.segment()
    assert not (other / "prompts.json.orig").exists()


@pytest.mark.parametrize(
    "corners",
    [
        # A camera view: the frame is an axis-aligned rectangle (y up in the region).
        ((100.0, 500.0), (740.0, 500.0), (740.0, 20.0), (100.0, 20.0)),
        # Any quadrilateral (a general bilinear map).
        ((90.0, 510.0), (760.0, 480.0), (700.0, 10.0), (120.0, 40.0)),
    ],
)
def test_region_positions_map_to_video_pixels(extension, corners) -> None:
    view = _bridge("camera_view")
    width, height = 640, 480
    top_left, top_right, bottom_right, bottom_left = corners
    to_pixel = view.region_to_video_pixel
    assert to_pixel(corners, top_left, width, height) == pytest.approx((0, 0), abs=1e-6)
    assert to_pixel(corners, top_right, width, height) == pytest.approx((640, 0), abs=1e-6)
    assert to_pixel(corners, bottom_right, width, height) == pytest.approx((640, 480), abs=1e-6)
    assert to_pixel(corners, bottom_left, width, height) == pytest.approx((0, 480), abs=1e-6)
    for pixel in [(320, 240), (12.5, 400.25), (600, 3), (-20, 500)]:
        region = view.video_pixel_to_region(corners, pixel, width, height)
        assert to_pixel(corners, region, width, height) == pytest.approx(pixel, abs=1e-6)
    if corners[0][0] == corners[3][0]:
        # On the rectangle: x right, y down from the top-left, 1 region px = 1 video px here.
        assert to_pixel(corners, (420.0, 300.0), width, height) == pytest.approx((320.0, 200.0))


def test_a_hand_prompt_is_segmented_shown_and_kept_apart(demo_scene, tiny_demo: Path, tmp_path: Path) -> None:
    """A prompt with the role ``hand`` loads with that role, is segmented with the objects and shown over
    the video, and lands in the report's ``segmentation.hands``, not among the objects."""
    prompts = json.loads((tiny_demo / "prompts.json").read_text())
    prompts["objects"][0].update(name="hand", role="hand")  # the red square stands in for a hand
    prompts["task"] = {"type": "lift", "object": "cup"}
    (tiny_demo / "prompts.json").write_text(json.dumps(prompts))
    bpy.ops.real2gym.load_prompts()
    state = demo_scene.real2gym
    assert state.object_prompts["hand"].role == "hand"
    assert bpy.ops.real2gym.segment() == {"FINISHED"}

    out = tmp_path / "out"
    section = json.loads((out / "report.json").read_text())["segmentation"]
    assert [o["name"] for o in section["objects"]] == ["cup"]
    assert [h["name"] for h in section["hands"]] == ["hand"] and section["hands"][0]["role"] == "hand"
    assert len(list((out / "masks" / "hand").glob("*.png"))) == 12
    assert sorted(bg.image.name for bg in _overlays(demo_scene)) == [
        "Real2Gym Mask cup",
        "Real2Gym Mask hand",
    ]
    bpy.ops.real2gym.save_prompts()
    saved = json.loads((tiny_demo / "prompts.json").read_text())
    assert next(o for o in saved["objects"] if o["name"] == "hand")["role"] == "hand"
