"""The Blender under test is the one its virtual environment pins, and the manifest admits it."""

import sys
import tomllib
from pathlib import Path

import bpy
import pytest

REPO = Path(__file__).resolve().parents[2]


def test_blender_is_the_release_its_venv_pins():
    venv = Path(sys.prefix)
    if venv.parent != REPO or not venv.name.startswith(".venv"):
        pytest.skip(f"bpy from {venv}, not one of this checkout's virtual environments")
    requirements = REPO / ("requirements.txt" if venv.name == ".venv"
                           else f"requirements-blender-{venv.name.removeprefix('.venv-')}.txt")
    (pinned,) = [line.split("==")[1].strip() for line in requirements.read_text().splitlines()
                 if line.startswith("bpy==")]
    assert bpy.app.version_string.split()[0] == pinned


def test_the_manifest_admits_this_blender():
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text())
    minimum = tuple(int(part) for part in manifest["blender_version_min"].split("."))
    assert bpy.app.version >= minimum, (bpy.app.version_string, minimum)
