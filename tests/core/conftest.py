"""Shared fixtures for the numpy-only tests: real capture from ../shared/mocap when present."""

from pathlib import Path

import pytest

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap"


@pytest.fixture(scope="session")
def mocap():
    """A loader ``mocap("bandai1/walk_normal_001")`` of real clips (cached); skips without the data."""
    if not MOCAP.is_dir():
        pytest.skip(f"real motion capture not found at {MOCAP}")
    from core.bvh import read_bvh

    cache = {}

    def load(name: str):
        if name not in cache:
            cache[name] = read_bvh(MOCAP / f"{name}.bvh")
        return cache[name]

    return load
