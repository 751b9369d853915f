"""Object masks through the video: the segmenter interface and its backends.

``classical`` (OpenCV only, the default), ``sam2`` (Meta's SAM2 video
predictor, when torch, sam2 and a checkpoint are present) and ``flow_warp``
(the baseline the benchmark compares against).
"""

from .base import ObjectMask, Prompt, VideoSegmenter
from .classical import ClassicalSegmenter
from .flow_warp import FlowWarpSegmenter
from .resegment import EarlierSegmentation, read_earlier_segmentation, resegment_object
from .run import ObjectTrack, Segmentation, segment_demo
from .sam2_backend import Sam2Segmenter, sam2_status

__all__ = [
    "ClassicalSegmenter",
    "EarlierSegmentation",
    "FlowWarpSegmenter",
    "ObjectMask",
    "ObjectTrack",
    "Prompt",
    "Sam2Segmenter",
    "Segmentation",
    "VideoSegmenter",
    "read_earlier_segmentation",
    "resegment_object",
    "sam2_status",
    "segment_demo",
]
