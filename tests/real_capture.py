"""Where the tests find real motion capture, and the one reason they give when it is missing.

The capture is not part of the project (its licence is non-commercial): it is
looked for beside the checkout, at ``../shared/mocap``, laid out as the
README's "Data for tests and benchmarks" says. A clone without it still
passes: every test that needs a clip skips with :data:`REASON`, and the
summary of ``pytest tests`` (``tests/conftest.py``) counts those skips.
"""

from pathlib import Path

import pytest

MOCAP = Path(__file__).resolve().parents[1].parent / "shared" / "mocap"
SOURCE = ("the Bandai Namco Research Motion Dataset, "
          "https://github.com/BandaiNamcoResearchInc/Bandai-Namco-Research-Motiondataset")
#: Every skip for want of the capture starts with this (the summary counts them by it).
PREFIX = "no real motion capture"
REASON = f"{PREFIX} at ../shared/mocap ({MOCAP}): {SOURCE} (see the README, 'Data for tests and benchmarks')"


def require(path: Path | str = MOCAP) -> Path:
    """``path`` (a folder or file of the capture) when it exists; otherwise skip the test with :data:`REASON`.

    A missing part of a capture that is otherwise there names that part, so a
    partial download is told apart from none."""
    path = Path(path)
    if path.exists():
        return path
    if MOCAP.is_dir():
        pytest.skip(f"{PREFIX}: {path} is missing from {MOCAP} ({SOURCE})")
    pytest.skip(REASON)
