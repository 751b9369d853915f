"""``real2gym view OUT``: MuJoCo's own viewer replaying a run's simulated demo from its scene.xml.

The exported ``mjcf/scene.xml`` holds the simulation as ``<key>`` states, one per
video frame (:func:`~.verify.run.add_replay_keys`). The viewer opens the model
passively and, frame by frame in real time, sets the gripper's mocap target
and finger commands from the next key and steps the physics: the replay is
MuJoCo simulating the demo again, not a playback of stored poses. Between
loops the state is reset to the first key.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from .errors import Real2GymError
from .report import read_report


def replay_frames(model) -> list[int]:
    """The ids of the per-frame keys (``frame_0000`` ...), in order."""
    keys = [(model.key(i).name, i) for i in range(model.nkey)]
    return [i for name, i in sorted(keys) if name.startswith("frame_")]


def view_run(out_dir: Path | str, speed: float = 1.0, loop: bool = True, seconds: float | None = None) -> int:
    """Opens MuJoCo's passive viewer on a run and replays its demo until the window closes.

    Args:
        out_dir: The run's output folder (with report.json and mjcf/scene.xml).
        speed: Playback speed (1 = the video's).
        loop: Start again at the end.
        seconds: Close after this long (scripted use); None to wait for the window.

    Returns:
        The number of video frames replayed.

    Raises:
        Real2GymError: No report, no scene.xml with replay keys (run ``real2gym verify`` to write
            them), or no display to open a window on.
    """
    import mujoco

    report = read_report(out_dir)
    xml = Path(out_dir) / (report.artifacts.get("mjcf") or "mjcf/scene.xml")
    if not xml.is_file():
        raise Real2GymError(
            f"{xml} is missing: run 'real2gym verify {out_dir}' to export and simulate the scene"
        )
    model = mujoco.MjModel.from_xml_path(str(xml))
    frames = replay_frames(model)
    if not frames:
        raise Real2GymError(
            f"{xml} holds no replay keys (written by an older version): run 'real2gym verify {out_dir}' again"
        )
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        # MuJoCo's viewer would end the whole process ("could not initialize GLFW", exit 1).
        raise Real2GymError(
            "no display to open MuJoCo's viewer on (DISPLAY is not set): run it on a desktop, over 'ssh -X', "
            "or under xvfb-run; the replay keys in mjcf/scene.xml also play in any MuJoCo viewer"
        )
    import mujoco.viewer

    fps = float(report.video.fps)
    steps = max(1, round(1.0 / (fps * model.opt.timestep)))
    data = mujoco.MjData(model)
    before = set(threading.enumerate())
    try:
        viewer = mujoco.viewer.launch_passive(model, data, show_left_ui=False, show_right_ui=False)
    except Exception as e:  # GLFW cannot open a window: no display, or no OpenGL
        raise Real2GymError(
            f"cannot open MuJoCo's viewer window ({str(e).splitlines()[0][:160]}); it needs a display "
            "(DISPLAY set, or run it under xvfb-run) with OpenGL"
        ) from e
    # The viewer draws in a daemon thread: left running at exit, it dies inside a GLX call (a segfault).
    window_threads = set(threading.enumerate()) - before
    try:
        return _replay(model, data, viewer, frames, steps, fps, speed, loop, seconds)
    finally:
        viewer.close()
        for thread in window_threads:
            thread.join(timeout=10)


def _replay(
    model, data, viewer, frames: list[int], steps: int, fps: float, speed: float, loop: bool, seconds
):
    import mujoco

    replayed = 0
    started = time.monotonic()
    with viewer:
        video_camera = model.camera("video").id if _has_camera(model, "video") else -1
        if video_camera >= 0:
            viewer.cam.type, viewer.cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, video_camera
        while viewer.is_running():
            mujoco.mj_resetDataKeyframe(model, data, frames[0])
            for key_id in frames[1:]:
                tick = time.monotonic()
                key = model.key(key_id)
                if model.nmocap:
                    data.mocap_pos[:], data.mocap_quat[:] = key.mpos, key.mquat
                if model.nu:
                    data.ctrl[:] = key.ctrl
                mujoco.mj_step(model, data, steps)
                viewer.sync()
                replayed += 1
                if not viewer.is_running() or (seconds is not None and time.monotonic() - started > seconds):
                    return replayed
                time.sleep(max(0.0, 1.0 / (fps * speed) - (time.monotonic() - tick)))
            if not loop:
                break
    return replayed


def _has_camera(model, name: str) -> bool:
    try:
        model.camera(name)
    except KeyError:
        return False
    return True
