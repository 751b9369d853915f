"""Every option of ``real2gym run`` is reachable from Blender (issue 27): ``state/run_options.py``'s
table names where, each place exists, and the scene's settings become the same ``RunOptions``."""

from __future__ import annotations

import bpy


def test_every_run_option_has_its_place_in_blender(extension) -> None:
    sources = extension.state.run_options.BLENDER_SOURCES
    assert set(sources) == extension.real2gym_addon.run_options.option_names()
    for option, source in sources.items():
        kind, _, where = source.partition(":")
        if kind == "scene":
            assert where in bpy.types.Scene.bl_rna.properties["real2gym"].fixed_type.properties, option
        elif kind == "operator":
            module, name, *prop = where.split(".")
            rna = getattr(getattr(bpy.ops, module), name).get_rna_type()
            assert all(p in rna.properties for p in prop), option
        else:
            assert kind == "always", option


def test_the_scenes_settings_become_the_run_options(extension, empty_scene, tmp_path) -> None:
    state = empty_scene.real2gym
    state.depth_model = str(tmp_path / "model")
    state.replace_fixed_run = True
    state.segmentation_device = "cpu"
    options = extension.state.run_options.run_options(empty_scene)
    assert isinstance(options, extension.real2gym_addon.run_options.RunOptions)
    assert options.depth_model == str(tmp_path / "model") and options.force is True
    assert options.segmentation.device == "cpu"
    state.depth_model = ""
    assert extension.state.run_options.run_options(empty_scene).depth_model is None
