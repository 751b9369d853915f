"""Where every Real2Gym panel lives: the 3D view's sidebar, in the "Real2Gym" tab."""

import textwrap


class SidebarPanel:
    """Mixin for the add-on's panels (Blender's own UI uses such mixins, e.g. ``View3DPanel``)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Real2Gym"


def wrapped_label(layout, context, text: str, icon: str = "NONE") -> None:
    """Labels ``text`` over as many lines as the sidebar's width needs."""
    scale = context.preferences.view.ui_scale
    width = max(20, int((context.region.width - 50 * scale) / (6.5 * scale)))
    column = layout.column(align=True)
    for index, line in enumerate(textwrap.wrap(text, width) or [""]):
        column.label(text=line, icon=icon if index == 0 else "BLANK1")
