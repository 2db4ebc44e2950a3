"""A reach on a skeleton whose joint roles are given (Blender's Bone Mapping), not found from the names."""

import dataclasses

import numpy as np
import pytest

from core.reach import ReachSpace
from core.rig import find_rig

RAISES = [f"bandai2-raise/raise-up-right-hand_normal_00{i}" for i in (1, 2, 3, 4)]


def swapped_sides(name: str) -> str:
    """``Hand_L`` -> ``Hand_R`` and back: names that mislead the rig finder about every limb's side."""
    return name[:-1] + {"L": "R", "R": "L"}[name[-1]] if name[-2:] in ("_L", "_R") else name


def test_a_rig_given_to_the_reach_space_is_the_one_it_reaches_with(mocap):
    examples = [mocap(name) for name in RAISES]
    misnamed = [m.renamed({n: swapped_sides(n) for n in m.skeleton.names}) for m in examples]
    rig = dataclasses.replace(find_rig(examples[0]), joint_names=misnamed[0].skeleton.names)
    plain = ReachSpace.build(examples, n_blends=200)
    by_names = ReachSpace.build(misnamed, n_blends=200)  # (its right.wrist is the left hand)
    assert np.abs(by_names.space.hit_points - plain.space.hit_points).max() > 10.0
    mapped = ReachSpace.build(misnamed, n_blends=200, rig=rig)
    np.testing.assert_allclose(mapped.space.hit_points, plain.space.hit_points, atol=1e-9)
    for a, b in zip(plain.registration.motions, mapped.registration.motions):
        np.testing.assert_allclose(b.rotations, a.rotations, atol=1e-9)
        np.testing.assert_allclose(b.positions, a.positions, atol=1e-9)
    target = plain.space.hit_points[:3].mean(axis=0) + np.array([0.0, 20.0, 0.0])  # (beyond: partial blending)
    a, b = plain.reach(target), mapped.reach(target)
    assert (b.partial, b.hit_frame) == (a.partial, a.hit_frame)
    np.testing.assert_allclose(b.weights, a.weights, atol=1e-9)
    np.testing.assert_allclose(b.motion.rotations, a.motion.rotations, atol=1e-9)
    assert b.error == pytest.approx(a.error, abs=1e-9)
