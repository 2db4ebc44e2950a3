"""The add-on's warning rule before issue 26, loaded from git for the benchmarks to print beside today's.

``plan_warnings(plan_dict)`` of ``addon/report.py`` as it stood at commit OLD_COMMIT
(per pair, its warning on one line and its flagged figures on another), with the
core it imports at that commit, unpacked by ``git archive`` into a temporary folder
as the package ``smart_motion_old``: the old code itself, not a copy typed again.
It imports bpy (the add-on's module), which the repository's environment has.
Not a benchmark: tests/bench/gap_warnings.py and gap_warnings_blender.py use it.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

OLD_COMMIT = "c8939b3"  # main before issue 26's warnings
REPOSITORY = Path(__file__).resolve().parents[2]


def old_plan_warnings():
    """``addon.report.plan_warnings`` of OLD_COMMIT."""
    folder = Path(tempfile.mkdtemp(prefix="smart_motion_old_"))
    archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", OLD_COMMIT, "core", "addon/report.py",
                              "addon/strips.py"], check=True, capture_output=True).stdout
    package = folder / "smart_motion_old"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(package, filter="data")
    for init in (package / "__init__.py", package / "addon" / "__init__.py"):  # (not the add-on's: it registers)
        init.write_text("")
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("smart_motion_old.addon.report").plan_warnings
    finally:
        sys.path.remove(str(folder))
