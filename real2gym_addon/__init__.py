"""The Blender-free core of Real2Gym.

Video, prompts, the scene description, reports and the command line. Nothing in
this package imports bpy: it runs in plain Python and in Blender alike.

MuJoCo picks its OpenGL backend when it is first imported; on Linux we ask for
EGL (headless, works with and without a display) when the EGL library is there
and the user chose no backend. Without it MuJoCo keeps its default, and only
rendering (``real2gym compare``) is unavailable, with a message saying why.
"""

import ctypes.util as _ctypes_util
import os as _os
import sys as _sys

if _sys.platform.startswith("linux") and "MUJOCO_GL" not in _os.environ and _ctypes_util.find_library("EGL"):
    _os.environ["MUJOCO_GL"] = "egl"

from .demo import Camera, Demo, load_camera, load_demo
from .errors import (
    Cancelled,
    DemoFolderError,
    OutputError,
    PipelineWarning,
    Real2GymError,
    VideoError,
    WarningLog,
)
from .pipeline import PipelineRun, run_pipeline
from .progress import Progress
from .prompts import Correction, ObjectPrompt, Task
from .report import Report, read_report, write_report
from .scene import SceneDescription
from .video import Video, open_video

__all__ = [
    "Camera",
    "Cancelled",
    "Correction",
    "Demo",
    "DemoFolderError",
    "ObjectPrompt",
    "OutputError",
    "PipelineRun",
    "PipelineWarning",
    "Progress",
    "Real2GymError",
    "Report",
    "SceneDescription",
    "Task",
    "Video",
    "VideoError",
    "WarningLog",
    "load_camera",
    "load_demo",
    "open_video",
    "read_report",
    "run_pipeline",
    "write_report",
]
