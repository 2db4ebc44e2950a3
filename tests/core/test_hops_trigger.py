"""One trigger searched without a table (core.hops.search_trigger, the add-on's Insert Hop): the same choice
as the search on whole distance matrices, from fewer of their entries."""

import numpy as np
import pytest

from core import hops

LIBRARY = ["bow_normal_001", "bye_normal_001", "call_normal_001", "walk-left_normal_001", "walk_normal_001"]
L = 15


@pytest.fixture(scope="module")
def clouds(mocap):
    motions = [mocap(f"bandai1/{name}") for name in LIBRARY]
    return hops.library_point_clouds(motions, LIBRARY.index("walk_normal_001"))[0]


def whole_matrix_choice(clouds, src, dst, trigger, offset, weight, max_stay):
    from_source = [hops.window_distance_matrix(clouds[src], c, L, same=i == src) for i, c in enumerate(clouds)]
    to_destination = [hops.window_distance_matrix(c, clouds[dst], L, same=i == dst) for i, c in enumerate(clouds)]
    return hops.search_one_hop(trigger, from_source, to_destination, offset=offset, blend_frames=L, dst=dst,
                               weight=weight, max_stay=max_stay)


@pytest.mark.parametrize("weight, max_stay", [(0.01 / 30, None), (0.001 / 30, None), (0.0, 30), (1.0, None)])
def test_one_trigger_gets_the_choice_of_the_whole_matrices(clouds, weight, max_stay):
    src, dst = LIBRARY.index("walk_normal_001"), LIBRARY.index("bow_normal_001")
    for offset in (20, 100):
        for trigger in hops.trigger_frames(len(clouds[src]), len(clouds[dst]), offset, L)[::23]:
            whole = whole_matrix_choice(clouds, src, dst, int(trigger), offset, weight, max_stay)
            one = hops.search_trigger(clouds, src, dst, int(trigger), offset=offset, blend_frames=L, weight=weight,
                                      max_stay=max_stay, min_gain=0.0)
            assert (one.hop, one.hop_offset, one.stay_src, one.stay_hop) == (
                whole.hop, whole.hop_offset, whole.stay_src, whole.stay_hop)
            # (sums over other frames: the same costs but for rounding)
            assert one.smoothness == pytest.approx(whole.smoothness, rel=1e-9, abs=1e-12)
            assert one.direct == pytest.approx(whole.direct, rel=1e-9)


def test_only_the_windows_a_trigger_reaches_are_measured(clouds, monkeypatch):
    src, dst = LIBRARY.index("walk_normal_001"), LIBRARY.index("bow_normal_001")
    real = hops.window_distance_matrix

    def measured(trigger, weight):
        """Entries of distance matrices computed by the search of ``trigger``."""
        sizes = []

        def counting(a, b, length, **kw):
            sizes.append(real(a, b, length, **kw).size)
            return real(a, b, length, **kw)

        monkeypatch.setattr(hops, "window_distance_matrix", counting)
        hops.search_trigger(clouds, src, dst, trigger, offset=100, blend_frames=L, weight=weight)
        return sum(sizes)

    windows = [len(c) - L + 1 for c in clouds]
    whole = sum(windows[src] * n + n * windows[dst] for n in windows)
    early_cheap, late_dear = measured(100, 0.001 / 30), measured(150, 0.05 / 30)
    assert late_dear < early_cheap < whole, "later triggers and dearer stays reach fewer windows"


def test_a_trigger_whose_direct_transition_does_not_fit_is_refused(clouds):
    src, dst = LIBRARY.index("walk_normal_001"), LIBRARY.index("bow_normal_001")
    with pytest.raises(ValueError, match="trigger 10: the direct transition does not fit"):
        hops.search_trigger(clouds, src, dst, 10, offset=100, blend_frames=L, weight=0.01)
    with pytest.raises(ValueError, match="with weight 0 the stays need a bound"):
        hops.search_trigger(clouds, src, dst, 150, offset=100, blend_frames=L, weight=0.0)


def test_a_hop_gaining_less_than_the_cost_resolves_keeps_the_direct_transition(clouds):
    """Issue 26 item 5: Insert Hop inserted a hop for a 0.35 % gain. Below HOP_MIN_GAIN of D the direct
    transition is kept; above it the hop is, as the search found it."""
    src, dst = LIBRARY.index("walk_normal_001"), LIBRARY.index("bow_normal_001")
    gains = []
    for offset in (20, 100):
        for trigger in hops.trigger_frames(len(clouds[src]), len(clouds[dst]), offset, L)[::7]:
            found = hops.search_trigger(clouds, src, dst, int(trigger), offset=offset, blend_frames=L, weight=1.0,
                                        min_gain=0.0)
            kept = hops.search_trigger(clouds, src, dst, int(trigger), offset=offset, blend_frames=L, weight=1.0)
            if (found.hop, found.hop_offset, found.stay_hop) == (dst, offset, 0):
                assert kept == found
                continue
            gain = (found.direct - found.cost) / found.direct
            gains.append(gain)
            if gain < hops.HOP_MIN_GAIN:
                assert (kept.hop, kept.hop_offset, kept.stay_src, kept.stay_hop) == (dst, offset, 0, 0)
                assert kept.cost == kept.direct == found.direct
            else:
                assert kept == found
    assert min(gains) < hops.HOP_MIN_GAIN <= max(gains), "both sides of the threshold are tried"
