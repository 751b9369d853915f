"""The Blender-free core of Real2Gym.

Video, prompts, the scene description, reports and the command line. Nothing in
this package imports bpy: it runs in plain Python and in Blender alike.
"""

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
from .prompts import ObjectPrompt, Task
from .scene import SceneDescription
from .video import Video, open_video

__all__ = [
    "Camera",
    "Cancelled",
    "Demo",
    "DemoFolderError",
    "ObjectPrompt",
    "OutputError",
    "PipelineRun",
    "PipelineWarning",
    "Progress",
    "Real2GymError",
    "SceneDescription",
    "Task",
    "Video",
    "VideoError",
    "WarningLog",
    "load_camera",
    "load_demo",
    "open_video",
    "run_pipeline",
]
