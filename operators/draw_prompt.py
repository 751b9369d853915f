"""Drawing an object prompt over the video in the 3D view's camera view.

``real2gym.draw_prompt_box`` is modal: drag with the left mouse button to draw
the box, Shift+click to add a point on the object, Ctrl+click a point off it,
Enter or right-click to store them in the active object prompt, Esc to leave it
unchanged. On the object's prompt frame they redraw its prompt; on another frame
they become a correction there (its mask is re-seeded from that frame on).
``real2gym.remove_correction`` removes a correction. The drawing is shown live
by a ``POST_PIXEL`` draw handler, removed on every way out. View navigation
(wheel, middle mouse, trackpad) still works while drawing.
"""

from __future__ import annotations

import dataclasses

import bpy

from ..bridge.camera_view import (
    camera_frame_corners,
    clamp_to_video,
    region_to_video_pixel,
    video_pixel_to_region,
)
from ..bridge.overlays import video_camera
from ..bridge.prompts import remove_correction, set_drawn_prompt
from ..state.properties import has_box, prompt_on_frame

HELP = (
    "Drag: box  |  Shift+Click: point on the object  |  Ctrl+Click: point off it  |  "
    "Enter / Right-Click: confirm  |  Esc: cancel"
)
_NAVIGATION = {
    "MIDDLEMOUSE",
    "WHEELUPMOUSE",
    "WHEELDOWNMOUSE",
    "WHEELINMOUSE",
    "WHEELOUTMOUSE",
    "TRACKPADPAN",
    "TRACKPADZOOM",
    "NDOF_MOTION",
}
_MIN_BOX_SIDE = 1.0  # video pixels


@dataclasses.dataclass
class _Drawing:
    """What has been drawn so far, in video pixels (x right, y down); read by the draw handler."""

    area_pointer: int
    width: int
    height: int
    color: tuple[float, float, float]
    old_box: tuple[float, float, float, float] | None
    drag_start: tuple[float, float] | None = None
    drag_end: tuple[float, float] | None = None
    box: tuple[float, float, float, float] | None = None
    points: list[tuple[float, float, int]] = dataclasses.field(default_factory=list)

    def current_box(self) -> tuple[float, float, float, float] | None:
        """The box being dragged, else the finished one."""
        if self.drag_start is not None and self.drag_end is not None:
            (xa, ya), (xb, yb) = self.drag_start, self.drag_end
            return min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)
        return self.box


def _rectangle(corners, box, width, height) -> list[tuple[float, float]]:
    x0, y0, x1, y1 = box
    ring = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    ends = [video_pixel_to_region(corners, p, width, height) for p in ring]
    return [p for i in range(4) for p in (ends[i], ends[(i + 1) % 4])]


def _draw(drawing: _Drawing) -> None:
    import gpu
    from gpu_extras.batch import batch_for_shader

    context = bpy.context
    if context.area is None or context.area.as_pointer() != drawing.area_pointer:
        return
    scene = context.scene
    corners = camera_frame_corners(context.region, context.region_data, scene, scene.camera)
    if corners is None:
        return
    w, h = drawing.width, drawing.height
    lines = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    lines.uniform_float("viewportSize", (context.region.width, context.region.height))
    for box, color, width in (
        (drawing.old_box, (1.0, 1.0, 1.0, 0.5), 1.0),
        (drawing.current_box(), (*drawing.color, 1.0), 2.0),
    ):
        if box is None:
            continue
        lines.uniform_float("lineWidth", width)
        lines.uniform_float("color", color)
        batch_for_shader(lines, "LINES", {"pos": _rectangle(corners, box, w, h)}).draw(lines)
    fill = gpu.shader.from_builtin("UNIFORM_COLOR")
    for x, y, label in drawing.points:
        cx, cy = video_pixel_to_region(corners, (x, y), w, h)
        r = 4.0
        square = [(cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
        fill.uniform_float("color", (0.1, 0.9, 0.2, 1.0) if label else (0.95, 0.15, 0.1, 1.0))
        batch_for_shader(fill, "TRIS", {"pos": square}, indices=[(0, 1, 2), (0, 2, 3)]).draw(fill)
    gpu.state.blend_set("NONE")


def _active_prompt(context):
    state = context.scene.real2gym
    if 0 <= state.active_prompt_index < len(state.object_prompts):
        return state.object_prompts[state.active_prompt_index]
    return None


class REAL2GYM_OT_draw_prompt_box(bpy.types.Operator):
    """Draw the active object's box (and points) over the video in the camera view"""

    bl_idname = "real2gym.draw_prompt_box"
    bl_label = "Draw Box"
    bl_options = {"REGISTER", "UNDO"}

    _drawing: _Drawing | None = None
    _handle = None
    _region = None
    _prompt_name = ""

    @classmethod
    def poll(cls, context):
        space = context.space_data
        if context.area is None or context.area.type != "VIEW_3D" or space is None:
            cls.poll_message_set("Needs a 3D view")
            return False
        if space.region_3d is None or space.region_3d.view_perspective != "CAMERA":
            cls.poll_message_set("Look through the camera first (View > Cameras > Active Camera, Numpad 0)")
            return False
        camera = video_camera(context.scene)
        if camera is None or context.scene.camera != camera:
            cls.poll_message_set("Load the video first: the scene camera must be the Real2Gym camera")
            return False
        if _active_prompt(context) is None:
            cls.poll_message_set("Add or load an object prompt first")
            return False
        return True

    def invoke(self, context, event):
        area = context.area
        region_3d = context.space_data.region_3d
        self._region = next(r for r in area.regions if r.type == "WINDOW" and r.data == region_3d)
        prompt = _active_prompt(context)
        self._prompt_name = prompt.name
        render = context.scene.render
        frame = context.scene.frame_current
        here = prompt_on_frame(prompt, frame)
        self._drawing = _Drawing(
            area_pointer=area.as_pointer(),
            width=render.resolution_x,
            height=render.resolution_y,
            color=tuple(prompt.color),
            old_box=tuple(here.box) if here is not None and has_box(here) else None,
        )
        self._handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (self._drawing,), "WINDOW", "POST_PIXEL")
        kind = "correction, " if here is not prompt and has_box(prompt) else ""
        area.header_text_set(f"'{prompt.name}', {kind}frame {frame}:  {HELP}")
        context.window_manager.modal_handler_add(self)
        area.tag_redraw()
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        try:
            return self._modal(context, event)
        except BaseException:
            self._clean_up(context)
            raise

    def _video_pixel(self, event) -> tuple[float, float] | None:
        """The mouse position in video pixels; None when outside the 3D view's region."""
        region = self._region
        x, y = event.mouse_x - region.x, event.mouse_y - region.y
        if not (0 <= x < region.width and 0 <= y < region.height):
            return None
        scene = bpy.context.scene
        corners = camera_frame_corners(region, region.data, scene, scene.camera)
        if corners is None:
            return None
        return region_to_video_pixel(corners, (x, y), self._drawing.width, self._drawing.height)

    def _modal(self, context, event):
        drawing = self._drawing
        if self._region.data.view_perspective != "CAMERA":
            self._clean_up(context)
            self.report({"WARNING"}, "Left the camera view; the prompt is unchanged")
            return {"CANCELLED"}
        if event.type in _NAVIGATION:
            return {"PASS_THROUGH"}
        if event.type == "ESC" and event.value == "PRESS":
            self._clean_up(context)
            return {"CANCELLED"}
        if event.type in {"RET", "NUMPAD_ENTER", "RIGHTMOUSE"} and event.value == "PRESS":
            return self._confirm(context)
        if event.type == "MOUSEMOVE":
            if drawing.drag_start is not None:
                pixel = self._video_pixel(event)
                if pixel is not None:
                    drawing.drag_end = clamp_to_video(pixel, drawing.width, drawing.height)
                    context.area.tag_redraw()
            return {"RUNNING_MODAL"}
        if event.type == "LEFTMOUSE":
            pixel = self._video_pixel(event)
            if event.value == "PRESS":
                if pixel is None:
                    return {"PASS_THROUGH"}  # a click outside the view: buttons still work
                if event.shift or event.ctrl:
                    x, y = pixel
                    if 0 <= x < drawing.width and 0 <= y < drawing.height:
                        drawing.points.append((x, y, 0 if event.ctrl else 1))
                else:
                    drawing.drag_start = drawing.drag_end = clamp_to_video(
                        pixel, drawing.width, drawing.height
                    )
                context.area.tag_redraw()
                return {"RUNNING_MODAL"}
            if event.value == "RELEASE" and drawing.drag_start is not None:
                if pixel is not None:
                    drawing.drag_end = clamp_to_video(pixel, drawing.width, drawing.height)
                box = drawing.current_box()
                drawing.drag_start = drawing.drag_end = None
                if box[2] - box[0] >= _MIN_BOX_SIDE and box[3] - box[1] >= _MIN_BOX_SIDE:
                    drawing.box = box
                context.area.tag_redraw()
            return {"RUNNING_MODAL"}
        return {"RUNNING_MODAL"}

    def _confirm(self, context):
        drawing = self._drawing
        state = context.scene.real2gym
        prompt = state.object_prompts.get(self._prompt_name)
        if prompt is None:
            self._clean_up(context)
            self.report({"ERROR"}, f"The object prompt '{self._prompt_name}' was removed while drawing")
            return {"CANCELLED"}
        if drawing.box is None and not drawing.points:
            self._clean_up(context)
            self.report({"INFO"}, "Nothing drawn; the prompt is unchanged")
            return {"CANCELLED"}
        frame = context.scene.frame_current
        try:
            changed = set_drawn_prompt(prompt, frame, drawing.box, drawing.points)
        except ValueError as e:
            self.report({"WARNING"}, str(e))
            return {"RUNNING_MODAL"}
        self._clean_up(context)
        x0, y0, x1, y1 = changed.box
        kind = "" if changed is prompt else "correction "
        self.report(
            {"INFO"}, f"'{prompt.name}' {kind}on frame {frame}: box [{x0:.0f}, {y0:.0f}, {x1:.0f}, {y1:.0f}]"
        )
        return {"FINISHED"}

    def _clean_up(self, context) -> None:
        if self._handle is not None:
            bpy.types.SpaceView3D.draw_handler_remove(self._handle, "WINDOW")
            self._handle = None
        area = context.area or next(
            (a for a in context.screen.areas if a.as_pointer() == self._drawing.area_pointer), None
        )
        if area is not None:
            area.header_text_set(None)
            area.tag_redraw()

    def cancel(self, context):
        """Blender ended the operator (a file was loaded, the window closed)."""
        self._clean_up(context)


class REAL2GYM_OT_remove_correction(bpy.types.Operator):
    """Remove this correction of the object's mask (prompts.json changes when saved)"""

    bl_idname = "real2gym.remove_correction"
    bl_label = "Remove Correction"
    bl_options = {"REGISTER", "UNDO"}

    index: bpy.props.IntProperty(
        name="Index", description="The correction's place in the object's list", min=0
    )
    prompt_index: bpy.props.IntProperty(
        name="Object", description="The object prompt's place in the list; -1: the selected one", default=-1
    )

    def execute(self, context):
        state = context.scene.real2gym
        prompt_index = state.active_prompt_index if self.prompt_index < 0 else self.prompt_index
        try:
            frame = remove_correction(context.scene, prompt_index, self.index)
        except IndexError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Removed the correction on frame {frame}")
        return {"FINISHED"}


CLASSES = [REAL2GYM_OT_draw_prompt_box, REAL2GYM_OT_remove_correction]
