"""Every Blender the manifest claims is tested, and `make test` sets each one up by itself.

`make test` runs every test on Blender 5.0 in ``.venv`` (``requirements.txt``) and the
tests again on each other Blender pinned in ``requirements-blender-X.Y.txt``, in a
``.venv-X.Y`` of its own made with the Python its bpy module is built for. These tests
check that wiring without installing anything; the runs themselves are the proof that
each version passes. They need ``make`` and, for the ignore rules, ``git``.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# a name, its extras if any (dask[distributed]: the name is what is pinned), one release
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[A-Za-z0-9_.,-]+\])?==([0-9][0-9A-Za-z.]*)$")


def requirement_files() -> dict[str, Path]:
    """The virtual environment's folder name for each requirements file."""
    files = {".venv": REPO / "requirements.txt"}
    for path in sorted(REPO.glob("requirements-blender-*.txt")):
        files[".venv-" + path.stem.removeprefix("requirements-blender-")] = path
    return files


def pins(path: Path) -> dict[str, str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return dict(PIN.match(line).groups() for line in lines if line and not line.startswith("#"))


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    outer = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(
        [shutil.which("make"), "-s", "-C", str(REPO), *args],
        capture_output=True, text=True, env=env if env is not None else outer,
    )


def test_every_requirement_is_pinned_to_one_release():
    for path in requirement_files().values():
        lines = [line.strip() for line in path.read_text().splitlines()]
        loose = [line for line in lines if line and not line.startswith("#") and not PIN.match(line)]
        assert not loose, f"{path.name}: not pinned with ==: {loose}"
        assert {"bpy", "numpy", "pytest"} <= pins(path).keys(), path.name


def test_the_venv_of_each_blender_is_named_after_it():
    for venv, path in requirement_files().items():
        if venv != ".venv":
            assert pins(path)["bpy"].startswith(venv.removeprefix(".venv-") + "."), path.name


def test_three_blenders_are_tested_the_lts_releases_and_50():
    tested = sorted(version(pins(path)["bpy"])[:2] for path in requirement_files().values())
    assert tested == [(4, 5), (5, 0), (5, 2)]


def test_the_core_tests_also_run_on_numpy_2():
    dry_run = make("-n", "test").stdout
    numpy_2 = [venv for venv, path in requirement_files().items() if version(pins(path)["numpy"])[0] == 2]
    assert numpy_2, "no venv has numpy 2"
    assert any(re.search(rf"^{re.escape(venv)}/bin/python -m pytest -q tests$", dry_run, re.M) for venv in numpy_2)


def test_the_manifest_admits_the_oldest_blender_tested_and_no_older_series():
    """``blender_version_min`` is the oldest Blender `make test` runs (4.5.6): the claim is
    checked on every run. 4.4.0 .. 4.5.4 fail 37 of the Blender tests (a new NLA strip is
    named after its action instead of the name given; 4.5.5 is not on PyPI).
    """
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text())
    minimum = version(manifest["blender_version_min"])
    oldest = min(version(pins(path)["bpy"]) for path in requirement_files().values())
    assert minimum == oldest


def test_the_readme_names_every_blender_tested():
    readme = (REPO / "README.md").read_text()
    for path in requirement_files().values():
        assert f"bpy {pins(path)['bpy']}" in readme, path.name


def test_make_test_runs_the_tests_in_every_venv():
    dry_run = make("-n", "test")
    assert dry_run.returncode == 0, dry_run.stderr
    for venv in requirement_files():
        assert re.search(rf"^{re.escape(venv)}/bin/python -m pytest -q tests(/blender)?$", dry_run.stdout, re.M), venv


def test_the_other_venvs_are_ignored_by_git():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for venv in requirement_files():
        ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", f"{venv}/bin/python"])
        assert ignored.returncode == 0, f"{venv} is not git-ignored"


def found_pythons() -> dict[str, str]:
    """``make pythons``: the interpreter each Blender's venv is made with."""
    result = make("pythons")
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_each_venv_is_made_with_the_python_its_bpy_is_built_for():
    expected = {"4.5": "3.11", "5.0": "3.11", "5.2": "3.13"}
    for blender, python in found_pythons().items():
        said = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True).stdout.strip()
        assert said == expected[blender], (blender, python)


def isolated_env(tmp_path: Path) -> tuple[dict, Path, Path]:
    """An environment with no Python on PATH and no pyenv: PATH, HOME and PYENV_ROOT in ``tmp_path``."""
    bin_dir, pyenv = tmp_path / "bin", tmp_path / "pyenv"
    bin_dir.mkdir()
    (bin_dir / "sed").symlink_to(shutil.which("sed"))  # the Makefile reads the manifest with it
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PYENV_ROOT": str(pyenv)}
    return env, bin_dir, pyenv


def test_a_missing_python_is_named_with_what_to_install(tmp_path):
    env, _, _ = isolated_env(tmp_path)
    result = make("pythons", env=env)
    assert result.returncode != 0
    assert "needs Python 3.11" in result.stderr and "pyenv install 3.11" in result.stderr


def test_pyenvs_versions_are_found_without_a_hard_coded_path(tmp_path):
    """A pyenv shim on PATH for a version not selected fails; the version's own binary is used."""
    real = {}
    for blender, python in found_pythons().items():
        real[blender] = subprocess.run([python, "-c", "import sys; print(sys.executable)"],
                                       capture_output=True, text=True).stdout.strip()
    env, bin_dir, pyenv = isolated_env(tmp_path)
    shim = bin_dir / "python3.13"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    for blender, python_version in (("5.0", "3.11"), ("5.2", "3.13")):
        versions = pyenv / "versions" / f"{python_version}.99" / "bin"
        versions.mkdir(parents=True)
        (versions / f"python{python_version}").symlink_to(real[blender])
    result = make("pythons", env=env)
    assert result.returncode == 0, result.stderr
    found = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert found["5.2"] == str(pyenv / "versions/3.13.99/bin/python3.13")
    assert found["4.5"] == found["5.0"] == str(pyenv / "versions/3.11.99/bin/python3.11")
