"""A clone without the real motion capture passes its tests, and says how many it skipped and why.

The capture (the Bandai Namco Research Motion Dataset) lives beside a
checkout, at ``../shared/mocap``, never in it. Every test that needs it skips
through ``tests/real_capture.py`` with one reason, and ``tests/conftest.py``
counts those skips in the run's summary.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def test_a_run_without_the_capture_says_how_many_tests_skipped_for_it_and_where_it_comes_from(tmp_path):
    # the two shared files in a folder with no ../shared/mocap beside it, and two tests that need clips
    checkout = tmp_path / "clone"
    (checkout / "tests").mkdir(parents=True)
    for name in ("conftest.py", "real_capture.py"):
        shutil.copy(TESTS / name, checkout / "tests" / name)
    (checkout / "tests" / "test_needs_clips.py").write_text(
        "from real_capture import MOCAP, require\n\n"
        "def test_a_walk():\n    require(MOCAP / 'bandai1' / 'walk_normal_001.bvh')\n\n"
        "def test_the_raises():\n    require(MOCAP / 'bandai2-raise')\n\n"
        "def test_without_clips():\n    assert True\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=checkout, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"2 of 2 skipped tests need the real motion capture at \S*shared/mocap: "
                     r"the Bandai Namco Research Motion Dataset, https://\S+", run.stdout), run.stdout
    assert "1 passed, 2 skipped" in run.stdout


def test_every_test_that_reads_the_capture_skips_through_real_capture():
    """A test reading ../shared/mocap on its own (an assert on a file count, a skip of its own wording,
    an absolute path) fails or skips unexplained in a clone; only real_capture.py says where it is."""
    offenders = []
    for path in sorted((TESTS / "core").glob("*.py")) + sorted((TESTS / "blender").glob("*.py")):
        text = path.read_text()
        if re.search(r"/work/shared|\"/[^\"]*mocap", text):
            offenders.append(f"{path.name}: an absolute path to the capture")
        for match in re.finditer(r"pytest\.skip\((f?\"[^\"]*(?:capture|mocap)[^\"]*\")", text):
            offenders.append(f"{path.name}: skips with its own reason {match.group(1)}")
        if re.search(r"assert len\([^)]*glob", text) and "require(" not in text:
            offenders.append(f"{path.name}: counts capture files without skipping when they are missing")
    assert not offenders, "\n".join(offenders)
