"""Small demo folders made on the fly for tests (contract form, a few frames)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def make_demo(
    folder: Path,
    frames: int = 12,
    width: int = 96,
    height: int = 72,
    fps: float = 24.0,
    as_frames: bool = False,
    camera: dict | None = None,
    prompts: dict | None = None,
) -> Path:
    """Writes a tiny demo: a red square moving over a grey background.

    Args:
        folder: The demo folder to create.
        frames: Number of video frames.
        width: Frame width in pixels.
        height: Frame height in pixels.
        fps: Frame rate of the movie.
        as_frames: Write frames/000000.png ... instead of video.mp4.
        camera: camera.json content; a matching pinhole camera when None.
        prompts: prompts.json content; one block and one cup when None.

    Returns:
        The demo folder.
    """
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    images = []
    for i in range(frames):
        image = np.full((height, width, 3), 90, np.uint8)
        x = 10 + i * 2
        cv2.rectangle(image, (x, 20), (x + 16, 36), (0, 0, 220), -1)
        cv2.circle(image, (width - 25, height - 25), 12, (200, 120, 30), -1)
        images.append(image)
    if as_frames:
        (folder / "frames").mkdir(exist_ok=True)
        for i, image in enumerate(images):
            cv2.imwrite(str(folder / "frames" / f"{i:06d}.png"), image)
    else:
        writer = cv2.VideoWriter(
            str(folder / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height)
        )
        for image in images:
            writer.write(image)
        writer.release()
    camera = camera or {
        "width": width,
        "height": height,
        "fx": 80.0,
        "fy": 80.0,
        "cx": width / 2,
        "cy": height / 2,
    }
    prompts = prompts or {
        "objects": [
            {
                "name": "block",
                "frame": 0,
                "box": [8, 18, 28, 38],
                "points": [[18, 28, 1]],
                "shape": "box",
                "role": "manipulated",
            },
            {
                "name": "cup",
                "frame": 0,
                "box": [width - 40, height - 40, width - 10, height - 10],
                "shape": "cup",
                "role": "container",
            },
        ],
        "task": {"type": "place_in", "object": "block", "target": "cup"},
    }
    (folder / "camera.json").write_text(json.dumps(camera))
    (folder / "prompts.json").write_text(json.dumps(prompts))
    return folder
