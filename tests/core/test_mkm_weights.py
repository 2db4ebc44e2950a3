"""Weights over output frames (an animated NLA influence) in core.mkm and core.sync.

A clip's weight may be one number or one per output frame. Numbers keep the
blend exactly as it was; weights over frames are used per frame in the blend
and read at each step's start for eq. (6).
"""

import numpy as np
import pytest

from core.mkm import blend_clips, presence_weights, weights_over_frames
from core.sync import synchronize, weight_at, support_sequence


def test_constant_weights_over_frames_give_the_blend_of_the_numbers_bit_for_bit(mocap):
    walk, run = mocap("bandai1/walk_normal_001"), mocap("bandai1/run_normal_001")
    numbers = blend_clips([walk, run], weights=[0.5, 0.5], names=["walk", "run"])
    over_frames = blend_clips([walk, run], weights=[np.full(40, 0.5), 0.5], names=["walk", "run"])
    assert np.array_equal(numbers.motion.rotations, over_frames.motion.rotations)
    assert np.array_equal(numbers.motion.positions, over_frames.motion.positions)
    assert np.array_equal(numbers.plan.boundaries, over_frames.plan.boundaries)


def test_a_weight_that_grows_over_frames_moves_the_blend_from_one_clip_to_the_other(mocap):
    walk, run = mocap("bandai1/walk_normal_001"), mocap("bandai1/run_normal_001")
    T = 400
    grows = np.linspace(0.0, 1.0, T)
    result = blend_clips([walk, run], weights=np.stack([1.0 - grows, grows]), names=["walk", "run"])
    fixed = blend_clips([walk, run], weights=[1.0, 0.0], names=["walk", "run"])
    assert result.to_dict()["weights"][0][:2] == [1.0, round(1.0 - 1.0 / (T - 1), 4)]
    assert "animated" in result.summary()
    # the durations follow the walk where it weighs everything and lean towards the run later
    assert np.allclose(result.plan.boundaries[:2], fixed.plan.boundaries[:2])
    assert not np.allclose(result.motion.rotations[-20:], fixed.motion.rotations[-20:], atol=1e-3)


def test_presence_weights_renormalise_weights_over_frames_at_every_frame():
    warps = np.zeros((2, 5))
    n = presence_weights(warps, [np.array([1.0, 1.0, 3.0, 0.0, 0.0]), 1.0], 30.0)
    assert np.allclose(n, [[0.5, 0.5, 0.75, 0.0, 0.0], [0.5, 0.5, 0.25, 1.0, 1.0]])
    # where both weigh 0 they share
    n = presence_weights(warps, [np.zeros(5), np.zeros(5)], 30.0)
    assert np.allclose(n, 0.5)


def test_weights_over_frames_hold_their_last_value_and_refuse_other_shapes():
    w = weights_over_frames([np.array([0.2, 0.4]), 1.0], 2, 4)
    assert np.allclose(w, [[0.2, 0.4, 0.4, 0.4], [1.0] * 4])
    assert weight_at(np.array([0.2, 0.4]), 7.5) == 0.4 and weight_at(np.array([0.2, 0.4]), 0.99) == 0.2
    with pytest.raises(ValueError, match="number or one per output frame"):
        weights_over_frames([np.zeros((2, 2)), 1.0], 2, 4)


def test_bad_weights_over_frames_are_refused_with_what_to_fix():
    seq = support_sequence(np.ones((10, 2), dtype=bool), 30.0)
    with pytest.raises(ValueError, match="non-negative at every frame"):
        synchronize([seq, seq], [2, 1], [0, 0], [np.array([0.5, -0.1]), 1.0])
    with pytest.raises(ValueError, match="0 at every frame"):
        blend_clips([_still(), _still()], weights=[np.zeros(3), np.zeros(3)])


def _still():
    from core.demo import demo_clips

    return demo_clips()["walk"].motion


def test_replace_mode_gives_the_upper_strip_its_influence_and_what_lies_beneath_the_rest():
    from core.mkm import nla_influences, replace_contributions

    assert np.allclose(replace_contributions([0.5, 1.0]), [0.5, 0.5])
    assert np.allclose(replace_contributions([1.0, 1.0, 1.0]), [1.0, 0.0, 0.0])
    assert np.allclose(replace_contributions([0.5, 0.5, 1.0]), [0.5, 0.25, 0.25])
    # per frame, and the inverse of nla_influences (which lists the strips from the bottom)
    u = np.array([[0.2, 0.9], [1.0, 0.5]])
    assert np.allclose(replace_contributions(u), [[0.2, 0.9], [0.8, 0.05]])
    w = np.array([0.2, 0.3, 0.5])
    assert np.allclose(replace_contributions(nla_influences(w)[::-1])[::-1], w / w.sum())
