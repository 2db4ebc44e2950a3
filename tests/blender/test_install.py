"""Installing the extension zip works as it does for a user (Install from Disk)."""

import sys
import zipfile
from pathlib import Path

import bpy
import pytest

from scenes import draw_panel

REPO = Path(__file__).resolve().parents[2]
# every module of the extension and the numpy core it imports ships in the zip
SHIPPED = {"blender_manifest.toml", "__init__.py"} | {
    str(p.relative_to(REPO)) for folder in ("addon", "core") for p in (REPO / folder).rglob("*.py")
    if "__pycache__" not in p.parts
}
LEFT_OUT_FOLDERS = ("tests/", "docs/", "benchmarks/", "dist/", "out/", "build/")
LEFT_OUT_FILES = {"Makefile", "requirements.txt", "pytest.ini", ".gitignore"}


def settings_rna():
    return bpy.types.Scene.bl_rna.properties["smart_motion"].fixed_type


def test_zip_holds_the_extension_and_nothing_of_the_development_checkout(extension_zip):
    with zipfile.ZipFile(extension_zip) as archive:
        names = set(archive.namelist())
    assert SHIPPED <= names
    assert not [n for n in names if n.startswith(LEFT_OUT_FOLDERS)]
    assert not names & LEFT_OUT_FILES
    dot_files = [n for n in names if any(part.startswith(".") for part in n.split("/"))]
    assert not dot_files, "dot-files (.venv, .git, .ci, .pytest_cache) must stay out"
    caches = [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not caches


def test_install_goes_into_the_temporary_profile(installed_extension, blender_profile):
    assert installed_extension == "bl_ext.user_default.smart_motion"
    module = sys.modules[installed_extension]
    assert Path(module.__file__).resolve().is_relative_to(blender_profile.resolve())
    assert Path(bpy.utils.user_resource('CONFIG')).is_relative_to(blender_profile)


def test_enabling_registers_the_panel_and_the_scene_settings(empty_scene):
    panel = bpy.types.SMART_MOTION_PT_main
    assert panel.bl_space_type == 'NLA_EDITOR'
    assert panel.bl_region_type == 'UI'
    assert panel.bl_category == "Smart Motion"
    assert panel.bl_label == "Smart Motion"
    assert isinstance(empty_scene.smart_motion, bpy.types.PropertyGroup)
    assert settings_rna().identifier == "SmartMotionSettings"


def test_responsiveness_slider_runs_from_0_to_1_and_starts_halfway(empty_scene):
    responsiveness = settings_rna().properties["responsiveness"]
    assert (responsiveness.hard_min, responsiveness.hard_max) == (0.0, 1.0)
    assert responsiveness.default == pytest.approx(0.5)
    assert responsiveness.description == "0 = most responsive, 1 = smoothest transitions"
    assert empty_scene.smart_motion.responsiveness == pytest.approx(0.5)

    empty_scene.smart_motion.responsiveness = 3.0
    assert empty_scene.smart_motion.responsiveness == 1.0, "Blender clamps to the hard range"


def test_new_file_starts_from_the_default_again(empty_scene, installed_extension, is_enabled):
    empty_scene.smart_motion.responsiveness = 0.9
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.context.scene.smart_motion.responsiveness == pytest.approx(0.5)
    assert is_enabled(installed_extension)


def test_panel_shows_the_active_armature_and_the_slider(empty_scene):
    rig = bpy.data.objects.new("Hero", bpy.data.armatures.new("HeroRig"))
    empty_scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig

    layout = draw_panel()

    assert "Hero" in layout.labels
    assert (empty_scene.smart_motion, "responsiveness") in layout.props


def test_panel_asks_for_an_armature_when_none_is_active(empty_scene):
    mesh = bpy.data.objects.new("Box", bpy.data.meshes.new("Box"))
    empty_scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh

    layout = draw_panel()

    assert "Box" not in layout.labels
    assert any("armature" in text.lower() for text in layout.labels)
    assert (empty_scene.smart_motion, "responsiveness") in layout.props


def test_disabling_unregisters_cleanly_and_enabling_again_works(
    empty_scene, installed_extension, is_enabled,
):
    try:
        assert bpy.ops.preferences.addon_disable(module=installed_extension) == {'FINISHED'}
        assert not is_enabled(installed_extension)
        assert not hasattr(bpy.types.Scene, "smart_motion")
        assert not hasattr(bpy.types, "SMART_MOTION_PT_main")
        assert "smart_motion" not in bpy.types.Scene.bl_rna.properties

        assert bpy.ops.preferences.addon_enable(module=installed_extension) == {'FINISHED'}
        assert is_enabled(installed_extension)
        assert hasattr(bpy.types, "SMART_MOTION_PT_main")
        assert bpy.context.scene.smart_motion.responsiveness == pytest.approx(0.5)
    finally:
        if not is_enabled(installed_extension):
            bpy.ops.preferences.addon_enable(module=installed_extension)
