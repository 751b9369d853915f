"""Reading demo folders: what a user gets for good and for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from demo_factory import make_demo
from real2gym.real2gym_addon import DemoFolderError, VideoError, WarningLog, load_demo


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _edit_object(demo: Path, index: int, **changes) -> None:
    data = json.loads((demo / "prompts.json").read_text())
    data["objects"][index].update(changes)
    (demo / "prompts.json").write_text(json.dumps(data))


def test_loads_movie_demo(demo: Path) -> None:
    loaded = load_demo(demo)
    assert (loaded.video.frames, loaded.video.width, loaded.video.height) == (12, 96, 72)
    assert loaded.video.fps == pytest.approx(24.0)
    assert [o.name for o in loaded.objects] == ["block", "cup"]
    assert loaded.objects[1].role == "container"
    assert loaded.task.target == "cup"
    assert loaded.depth_dir is None


def test_loads_frame_folder_and_warns_about_missing_fps(tmp_path: Path) -> None:
    folder = make_demo(tmp_path / "d", frames=5, as_frames=True)
    log = WarningLog()
    loaded = load_demo(folder, log)
    assert loaded.video.is_sequence and loaded.video.frames == 5
    assert any("fps" in w.message for w in log.warnings)
    _edit_json(folder / "camera.json", fps=15)
    assert load_demo(folder).video.fps == 15.0


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda d: (d / "camera.json").unlink(), "camera.json is missing"),
        (lambda d: (d / "camera.json").write_text("{ not json"), "camera.json is not valid JSON (line 1"),
        (lambda d: _edit_json(d / "camera.json", fx=-3), "'fx' must be positive"),
        (lambda d: _edit_json(d / "camera.json", fy="big"), "'fy' must be a number"),
        (
            lambda d: _edit_json(d / "camera.json", width=640),
            "camera.json says 640x72 but video.mp4 is 96x72",
        ),
        (lambda d: _edit_json(d / "camera.json", world_from_camera=[[1, 0], [0, 1]]), "4x4"),
        (lambda d: (d / "prompts.json").unlink(), "prompts.json is missing"),
        (lambda d: (d / "prompts.json").write_text("[1, 2"), "prompts.json is not valid JSON"),
        (lambda d: _edit_json(d / "prompts.json", objects=[]), "at least one object"),
        (lambda d: _edit_object(d, 0, frame=12), "object 'block': prompt frame 12 is out of range"),
        (lambda d: _edit_object(d, 1, box=[500, 500, 600, 600]), "object 'cup': box [500, 500, 600, 600]"),
        (
            lambda d: _edit_object(d, 0, box=[10, 10, 10, 30]),
            "object 'block': box [10, 10, 10, 30] on frame 0 has zero area",
        ),
        (lambda d: _edit_object(d, 0, shape="teapot"), "unknown shape 'teapot'"),
        (lambda d: _edit_object(d, 1, name="block"), "repeated: block"),
        (lambda d: _edit_object(d, 0, points=[[500, 5, 1]]), "point [500, 5, 1] on frame 0 lies outside"),
        (
            lambda d: _edit_json(
                d / "prompts.json", task={"type": "place_in", "object": "mug", "target": "cup"}
            ),
            "task's object 'mug' is not among the objects",
        ),
        (lambda d: (d / "video.mp4").unlink(), "no video in"),
        (lambda d: (d / "video.mp4").write_bytes(b""), "is empty (0 bytes)"),
        (lambda d: (d / "video.mp4").write_bytes(b"\x00" * 4096), "cannot be opened as a video"),
    ],
)
def test_bad_input_names_what_is_wrong(demo: Path, breakage, message: str) -> None:
    breakage(demo)
    with pytest.raises(DemoFolderError) as raised:
        load_demo(demo)
    assert message in str(raised.value)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DemoFolderError, match="demo folder not found"):
        load_demo(tmp_path / "nowhere")


def test_box_partly_outside_is_clipped_with_a_warning(demo: Path) -> None:
    _edit_object(demo, 0, box=[-10, -5, 30, 40])
    log = WarningLog()
    loaded = load_demo(demo, log)
    assert loaded.objects[0].box == (0.0, 0.0, 30.0, 40.0)
    assert "object 'block'" in log.warnings[0].message


def test_truncated_video_names_the_frame(tmp_path: Path) -> None:
    folder = make_demo(tmp_path / "d", frames=10)
    (folder / "video.mp4").unlink()
    path = folder / "video.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 24, (96, 72))
    noise = np.random.default_rng(0)
    for _ in range(10):
        writer.write(noise.integers(0, 255, (72, 96, 3), dtype=np.uint8))
    writer.release()
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6)])  # cut off the last frames and the index
    with pytest.raises(
        VideoError, match=r"video.avi is truncated or damaged: its header says 10 frames but frame \d"
    ):
        load_demo(folder)


def test_frames_of_mixed_sizes(tmp_path: Path) -> None:
    folder = make_demo(tmp_path / "d", frames=4, as_frames=True)
    cv2.imwrite(str(folder / "frames" / "000002.png"), np.zeros((10, 10, 3), np.uint8))
    with pytest.raises(VideoError, match=r"frame 2 \(000002.png\) is 10x10, frame 0 is 96x72"):
        load_demo(folder)


def test_frames_with_a_gap(tmp_path: Path) -> None:
    folder = make_demo(tmp_path / "d", frames=4, as_frames=True)
    (folder / "frames" / "000001.png").unlink()
    with pytest.raises(VideoError, match="frame 1 is missing"):
        load_demo(folder)


def test_empty_frames_folder(tmp_path: Path) -> None:
    folder = make_demo(tmp_path / "d", frames=2, as_frames=True)
    for f in (folder / "frames").iterdir():
        f.unlink()
    with pytest.raises(VideoError, match="holds no frame images"):
        load_demo(folder)


def test_frames_read_back(demo: Path) -> None:
    video = load_demo(demo).video
    frames = list(video.iter_frames())
    assert len(frames) == video.frames
    assert frames[3].shape == (72, 96, 3)
    assert np.abs(video.read_frame(3).astype(int) - frames[3].astype(int)).mean() < 1.0
    with pytest.raises(VideoError, match="frame 12 is out of range"):
        video.read_frame(12)
