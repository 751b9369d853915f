"""The installed extension: registration, the pipeline operator, the scene it builds."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import bpy
import pytest
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

MODULE = "bl_ext.user_default.real2gym"


def _scene_state(scene) -> dict:
    render = scene.render
    return {
        "frames": (scene.frame_start, scene.frame_end),
        "size": (render.resolution_x, render.resolution_y),
        "fps": (render.fps, render.fps_base),
        "camera": scene.camera.name if scene.camera else None,
        "objects": sorted(o.name for o in bpy.data.objects),
        "clips": sorted(c.name for c in bpy.data.movieclips),
        "collections": sorted(c.name for c in bpy.data.collections),
    }


def test_extension_is_installed_from_the_zip(extension) -> None:
    path = Path(extension.__file__).resolve()
    assert "extensions" in path.parts and "user_default" in path.parts, path
    assert hasattr(bpy.types.Scene, "real2gym") and hasattr(bpy.types.Object, "real2gym")
    assert hasattr(bpy.types, "REAL2GYM_PT_main")
    assert bpy.ops.real2gym.run_pipeline.idname() == "REAL2GYM_OT_run_pipeline"
    # Its core runs on the extension's own wheels.
    import mujoco  # noqa: F401

    assert sys_module(f"{MODULE}.real2gym_addon").__name__.startswith("bl_ext.")


def sys_module(name: str):
    import sys

    return sys.modules[name]


def test_run_pipeline_builds_the_video_scene(tiny_demo: Path, tmp_path: Path, empty_scene) -> None:
    out = tmp_path / "out"
    assert bpy.ops.real2gym.run_pipeline(demo_dir=str(tiny_demo), out_dir=str(out), last_stage="segment") == {
        "FINISHED"
    }
    scene = empty_scene
    assert (scene.frame_start, scene.frame_end) == (0, 11)
    assert (scene.render.resolution_x, scene.render.resolution_y) == (96, 72)
    assert scene.render.fps / scene.render.fps_base == pytest.approx(24.0)
    camera = scene.camera
    assert camera.name == "Real2Gym Camera" and camera.real2gym.kind == "CAMERA"
    assert camera.data.lens == pytest.approx(80.0 * 36.0 / 96.0)
    clip = camera.data.background_images[0].clip
    assert clip.frame_duration == 12 and tuple(clip.size) == (96, 72)
    assert scene.real2gym.video_frames == 12
    report = json.loads((out / "report.json").read_text())
    assert report["artifacts"]["blend"] == "scene.blend" and (out / "scene.blend").is_file()
    # The saved file holds the same scene; the open file keeps its own path.
    assert bpy.data.filepath == ""
    bpy.ops.wm.open_mainfile(filepath=str(out / "scene.blend"))
    saved = bpy.context.scene
    assert saved.camera.name == "Real2Gym Camera" and saved.frame_end == 11
    assert saved.real2gym.report_path == str(out / "report.json")


def test_rerun_updates_instead_of_duplicating(tiny_demo: Path, tmp_path: Path) -> None:
    for _ in range(2):
        bpy.ops.real2gym.run_pipeline(
            demo_dir=str(tiny_demo), out_dir=str(tmp_path / "out"), last_stage="segment"
        )
    assert [o.name for o in bpy.data.objects] == ["Real2Gym Camera"]
    assert len(bpy.data.movieclips) == 1


def test_script_and_operator_give_the_same_report(
    extension, tiny_demo: Path, tmp_path: Path, empty_scene
) -> None:
    bpy.ops.real2gym.run_pipeline(demo_dir=str(tiny_demo), out_dir=str(tmp_path / "op"), last_stage="segment")
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    extension.bridge.pipeline.run_in_scene(
        bpy.context.scene, tiny_demo, tmp_path / "script", last_stage="segment"
    )
    reports = [json.loads((tmp_path / n / "report.json").read_text()) for n in ("op", "script")]
    for report in reports:
        report.pop("timing")
    assert reports[0] == reports[1]


def _rename_block(demo: Path, name: str) -> None:
    prompts = json.loads((demo / "prompts.json").read_text())
    prompts["objects"][0]["name"] = prompts["task"]["object"] = name
    (demo / "prompts.json").write_text(json.dumps(prompts))


def _set_pose(demo: Path, matrix: list) -> None:
    camera = json.loads((demo / "camera.json").read_text())
    (demo / "camera.json").write_text(json.dumps({**camera, "world_from_camera": matrix}))


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda d: (d / "prompts.json").write_text("{"), "prompts.json is not valid JSON"),
        (lambda d: (d / "video.mp4").unlink(), "no video in"),
        (lambda d: (d / "camera.json").write_text('{"width": 96}'), "'height' must be a number"),
        (lambda d: _rename_block(d, "../../escaped"), "the object name '../../escaped' contains '/'"),
        (
            lambda d: _set_pose(d, [[0, 0, 0, 0]] * 3 + [[0, 0, 0, 1]]),
            "'world_from_camera': .* not a rotation",
        ),
        (
            lambda d: (d / "trajectory.json").write_text(
                '{"samples": [{"frame": 0, "position": [0, 0, 0.3], "quaternion": [0, 0, 0, 0], "gripper": 1}]}'
            ),
            "frame 0: the quaternion .* is not a unit quaternion",
        ),
    ],
)
def test_bad_input_cancels_and_leaves_the_scene(
    tiny_demo: Path, tmp_path: Path, empty_scene, breakage, message
) -> None:
    bpy.ops.mesh.primitive_cube_add()
    before = _scene_state(empty_scene)
    breakage(tiny_demo)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.real2gym.run_pipeline(
            demo_dir=str(tiny_demo), out_dir=str(tmp_path / "out"), last_stage="segment"
        )
    assert _scene_state(empty_scene) == before
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escaped").exists() and not (tiny_demo.parent / "escaped").exists()


def _files(root: Path) -> dict[str, bytes]:
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()}


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("{demo}", "is the demo folder"),
        ("{demo}/out", "lies inside the demo folder"),
        ("{root}", "holds the demo folder"),
        ("{root}/mine", "is not empty and holds no earlier run"),
    ],
)
def test_an_output_folder_it_must_not_touch_is_refused(
    tiny_demo: Path, empty_scene, out: str, message: str
) -> None:
    """The write rule of docs/cli.md holds in Blender too: the demo, its parent, a user's folder."""
    root = tiny_demo.parent
    (root / "mine").mkdir()
    (root / "mine" / "notes.txt").write_text("my notes")
    bpy.ops.mesh.primitive_cube_add()
    before, files = _scene_state(empty_scene), _files(root)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.real2gym.run_pipeline(
            demo_dir=str(tiny_demo), out_dir=out.format(demo=tiny_demo, root=root), last_stage="segment"
        )
    assert _scene_state(empty_scene) == before
    assert _files(root) == files


def test_failure_while_building_restores_the_scene(
    extension, tiny_demo: Path, tmp_path: Path, empty_scene
) -> None:
    bpy.ops.mesh.primitive_cube_add()
    before = _scene_state(empty_scene)
    bridge = extension.bridge.pipeline
    original = bridge.save_blend_copy

    def failing_save(path):
        raise extension.real2gym_addon.errors.OutputError(f"disk full while writing {path}")

    bridge.save_blend_copy = failing_save
    try:
        with pytest.raises(RuntimeError, match="disk full"):
            bpy.ops.real2gym.run_pipeline(
                demo_dir=str(tiny_demo), out_dir=str(tmp_path / "out"), last_stage="segment"
            )
    finally:
        bridge.save_blend_copy = original
    assert _scene_state(empty_scene) == before
    assert not (tmp_path / "out").exists()  # the run created it, and removed it when it failed


def test_camera_projects_like_opencv(extension, tiny_demo: Path, tmp_path: Path, empty_scene) -> None:
    """An off-centre principal point, non-square pixels and a world pose."""
    camera = {
        "width": 96,
        "height": 72,
        "fx": 90.0,
        "fy": 84.0,
        "cx": 41.5,
        "cy": 39.0,
        "world_from_camera": [[1, 0, 0, 0.1], [0, 0, 1, -0.6], [0, -1, 0, 0.3], [0, 0, 0, 1]],
    }
    (tiny_demo / "camera.json").write_text(json.dumps(camera))
    bpy.ops.real2gym.run_pipeline(
        demo_dir=str(tiny_demo), out_dir=str(tmp_path / "out"), last_stage="segment"
    )
    scene = empty_scene
    pose = camera["world_from_camera"]
    for point_cam in [(0.0, 0.0, 0.8), (0.05, -0.03, 0.5), (-0.1, 0.08, 1.2)]:
        x, y, z = point_cam
        u, v = camera["fx"] * x / z + camera["cx"], camera["fy"] * y / z + camera["cy"]
        world = Vector([sum(pose[r][c] * (*point_cam, 1.0)[c] for c in range(4)) for r in range(3)])
        ndc = world_to_camera_view(scene, scene.camera, world)
        assert ndc.x * 96 == pytest.approx(u, abs=1e-3)
        assert (1.0 - ndc.y) * 72 == pytest.approx(v, abs=1e-3)
        assert ndc.z == pytest.approx(z, abs=1e-6)


def test_the_whole_pipeline_verifies_the_demo_in_blender(tmp_path: Path, empty_scene) -> None:
    """The bundled demo, every stage, inside this Blender (its own wheels: OpenCV, SciPy, MuJoCo)."""
    demo = Path(__file__).resolve().parents[2] / "examples" / "block_in_cup"
    out = tmp_path / "out"
    assert bpy.ops.real2gym.run_pipeline(demo_dir=str(demo), out_dir=str(out)) == {"FINISHED"}
    report = json.loads((out / "report.json").read_text())
    assert report["verification"]["passed"], report["verification"]["checks"]
    assert (out / "mjcf" / "scene.xml").is_file() and (out / "scene.blend").is_file()
    assert empty_scene.frame_end == 149


def test_heavy_operators_push_undo_but_are_never_redone(extension) -> None:
    """Run, Open Run, Verify, Import Sim and every fix make one undo step each, and none shows in the Adjust
    Last Operation panel: redoing from there runs execute() on the UI thread (a CoACD fix for minutes)."""
    module = importlib.import_module(MODULE)
    heavy = ["run_pipeline", "open_run", "verify", "import_simulation", "rim_scale", "scale_object", "offset_object",
             "set_collision", "set_joint", "add_keyframe", "move_keyframe", "delete_keyframe", "apply_suggestion", "repair",
             "undo_fix"]  # fmt: skip
    classes = {cls.bl_idname: cls for cls in module.operators.CLASSES}
    for name in heavy:
        options = classes[f"real2gym.{name}"].bl_options
        assert "UNDO" in options and "REGISTER" not in options, (name, options)
