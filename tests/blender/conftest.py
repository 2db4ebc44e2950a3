"""Fixtures for tests that run against Blender (the ``bpy`` module).

Blender keeps its user profile (preferences, installed extensions) in the
folders named by ``BLENDER_USER_*``. They are pointed at a temporary folder
before ``bpy`` is first imported, so these tests never read or write a real
user's profile. ``bpy`` can be imported only once per process, so this holds
for ``pytest tests`` as well as ``pytest tests/blender``, provided nothing
imports ``bpy`` earlier (``tests/core`` never does).

Without ``bpy`` every test module here is skipped, with the reason shown
(``pytest -rs``), and never imported.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION_ID = "smart_motion"
REPOSITORY = "user_default"
MODULE = f"bl_ext.{REPOSITORY}.{EXTENSION_ID}"

_BPY_WAS_IMPORTED = "bpy" in sys.modules
PROFILE = Path(tempfile.mkdtemp(prefix="smart_motion_blender_profile_"))
atexit.register(shutil.rmtree, PROFILE, ignore_errors=True)
if not _BPY_WAS_IMPORTED:
    for variable, folder in (
        ("BLENDER_USER_RESOURCES", PROFILE),
        ("BLENDER_USER_CONFIG", PROFILE / "config"),
        ("BLENDER_USER_SCRIPTS", PROFILE / "scripts"),
        ("BLENDER_USER_DATAFILES", PROFILE / "datafiles"),
        ("BLENDER_USER_EXTENSIONS", PROFILE / "extensions"),
    ):
        os.environ[variable] = str(folder)

SKIP_REASON = ""
if _BPY_WAS_IMPORTED:
    # Blender read its profile folders when bpy was first imported.
    SKIP_REASON = (
        "bpy was imported before tests/blender/conftest.py could point Blender at a "
        "temporary user profile; run the Blender tests in a fresh process"
    )
try:
    import bpy
    import addon_utils  # ships with bpy, importable only after it
except ImportError as error:
    SKIP_REASON = f"Blender tests need the bpy module (pip install -r requirements.txt): {error}"


class _SkippedModule(pytest.Module):
    """A test module of this folder collected as skipped, without importing it."""

    def collect(self):
        pytest.skip(SKIP_REASON)


def pytest_pycollect_makemodule(module_path, parent):
    # A conftest cannot skip its folder by raising pytest.skip (pytest reports an
    # error), so each test module here is replaced by a skipped one instead.
    if SKIP_REASON:
        return _SkippedModule.from_parent(parent, path=module_path)
    return None


def blender_ext_script() -> Path:
    """Blender's extension builder (``blender --command extension``), shipped with bpy."""
    script = Path(bpy.utils.system_resource('SCRIPTS')) / "addons_core/bl_pkg/cli/blender_ext.py"
    if not script.is_file():
        pytest.fail(f"Blender's extension builder is missing from the bpy module: {script}")
    return script


def valid_tags_file() -> Path:
    """The tag list ``blender --command extension build`` validates against."""
    return Path(bpy.utils.system_resource('SCRIPTS')) / "modules/_bpy_internal/extensions/tags.py"


def run_blender_ext(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, str(blender_ext_script()), *args],
        capture_output=True, text=True, cwd=REPO,
    )
    if result.returncode != 0:
        pytest.fail(f"blender_ext {args[0]} failed:\n{result.stdout}\n{result.stderr}")
    return result


def extension_enabled(module: str = MODULE) -> bool:
    """Whether Blender has the add-on loaded and recorded as enabled in the preferences."""
    _loaded_default, loaded_state = addon_utils.check(module)
    return loaded_state and module in bpy.context.preferences.addons


@pytest.fixture(scope="session")
def blender_profile() -> Path:
    """The temporary folder Blender uses as the user profile for this session."""
    return PROFILE


@pytest.fixture(scope="session")
def is_enabled():
    """``is_enabled(module)``: whether an add-on is loaded and enabled in the preferences."""
    return extension_enabled


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory) -> Path:
    """The extension built from this checkout exactly as ``make zip`` builds it."""
    output = tmp_path_factory.mktemp("dist")
    tags = f"--valid-tags={valid_tags_file()}"
    run_blender_ext("build", "--source-dir", str(REPO), "--output-dir", str(output), tags)
    (zip_path,) = output.glob(f"{EXTENSION_ID}-*.zip")
    run_blender_ext("validate", tags, str(zip_path))
    return zip_path


@pytest.fixture(scope="session")
def installed_extension(extension_zip) -> str:
    """Install the zip into the user repository and enable it, as Install from Disk does.

    Returns the add-on module name Blender gives the extension.
    """
    result = bpy.ops.extensions.package_install_files(
        filepath=str(extension_zip), repo=REPOSITORY, enable_on_install=True,
    )
    assert result == {'FINISHED'}, result
    assert extension_enabled(), f"{MODULE} was installed but is not enabled"
    return MODULE


@pytest.fixture
def empty_scene(installed_extension):
    """An empty file with the extension installed and enabled.

    ``read_homefile`` keeps the preferences (and so the enabled add-ons); a
    test that turns the extension off gets it back here.
    """
    bpy.ops.wm.read_homefile(use_empty=True)
    if not extension_enabled():
        assert bpy.ops.preferences.addon_enable(module=installed_extension) == {'FINISHED'}
    yield bpy.context.scene
