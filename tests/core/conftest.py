"""Shared fixtures for the numpy-only tests: real capture from ../shared/mocap when present."""

import pytest
import real_capture

MOCAP = real_capture.MOCAP


@pytest.fixture(scope="session")
def mocap():
    """A loader ``mocap("bandai1/walk_normal_001")`` of real clips (cached); skips without the data."""
    real_capture.require(MOCAP)
    from core.bvh import read_bvh

    cache = {}

    def load(name: str):
        if name not in cache:
            cache[name] = read_bvh(MOCAP / f"{name}.bvh")
        return cache[name]

    return load
