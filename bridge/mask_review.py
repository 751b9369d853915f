"""The Segmentation panel's *Frames to Check*: doubtful masks, listed as frame ranges per object.

Filled from a report's ``segmentation`` section when a run finishes or a report
is loaded; choosing an entry jumps to its first frame with that object's mask
shown over the video.
"""

from __future__ import annotations

import bpy

from ..real2gym_addon.errors import Real2GymError
from ..real2gym_addon.segmentation.quality import flagged_ranges


def show_mask_reviews(scene: bpy.types.Scene, segmentation: dict | None) -> int:
    """Lists the frame ranges whose masks a person should check (the Segmentation panel's list).

    Args:
        scene: The scene.
        segmentation: The report's ``segmentation`` section, or None (clears the list).

    Returns:
        The number of flagged frames.
    """
    state = scene.real2gym
    state.mask_reviews.clear()
    state.active_mask_review_index = 0
    flagged = 0
    for entry in (segmentation or {}).get("objects", []):
        for first, last, reason in flagged_ranges(entry.get("frames", [])):
            item = state.mask_reviews.add()
            item.object_name, item.first, item.last, item.reason = entry["name"], first, last, reason
            flagged += last - first + 1
    return flagged


def go_to_mask_review(scene: bpy.types.Scene, index: int) -> None:
    """Jumps to the first frame of a listed range and shows that object's mask over the video.

    Raises:
        Real2GymError: No such entry in the list.
    """
    state = scene.real2gym
    if not 0 <= index < len(state.mask_reviews):
        raise Real2GymError("select a range in the Frames to Check list first")
    item = state.mask_reviews[index]
    state.active_mask_review_index = index
    prompt = state.object_prompts.get(item.object_name)
    if prompt is not None:
        prompt.show_mask = True
        state.active_prompt_index = list(state.object_prompts).index(prompt)
    scene.frame_set(item.first)
