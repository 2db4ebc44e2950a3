"""Cores far apart on the timeline: memory linear in the gap, and the same plans where the
bound on a blend's length (SynthesisOptions.max_blend_s) does not bite."""

import tracemalloc

import numpy as np
import pytest

from core.options import SynthesisOptions
from core.synthesize import Clip, synthesize

WALK = "bandai1/walk_normal_001"
BOW = "bandai1/bow_normal_001"
KICK = "bandai1/kick_normal_001"
RUN = "bandai1/run_happy_001"
DANCE = "bandai1/dance-short_normal_001"
UNBOUNDED = SynthesisOptions(max_blend_s=1e9)


def apart(prev, nxt, gap: int, margin: int = 10) -> list[Clip]:
    """``prev`` from frame 0 and ``nxt`` placed so that their cores are ``gap`` frames apart
    (each core leaving ``margin`` frames of its clip at either end)."""
    prev_core = (margin, prev.n_frames - 1 - margin)
    return [Clip(prev, 0, prev_core, "prev"), Clip(nxt, prev_core[1] + gap - margin, (margin, nxt.n_frames - 1 - margin), "next")]


def decisions(plan) -> dict:
    """The plan but for the options it was made with (which differ here by construction)."""
    return {k: v for k, v in plan.to_dict().items() if k != "options"}


def peak_bytes(timeline: list[Clip]) -> int:
    """Peak of Python's (numpy's included) allocations while ``timeline`` synthesizes."""
    tracemalloc.start()
    try:
        synthesize(timeline)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gap_of_twenty_thousand_frames_synthesizes_in_memory_linear_in_the_gap(mocap):
    """The clips are 10 s long at most: the output holds the walk's last pose, then the bow's
    first, over most of the gap. The search for the blend's range over every pair of the gap's
    frames took 3.2 GB for its (t0, t1) grid alone at 20,000 frames, and grew with the gap's square."""
    walk, bow = mocap(WALK), mocap(BOW)
    short, long = peak_bytes(apart(walk, bow, 2_000)), peak_bytes(apart(walk, bow, 20_000))
    assert long < 500e6, f"{long / 1e6:.0f} MB"
    # ten times the gap, about ten times the memory (a hundred times if it grew with the square)
    assert long < 15 * short, f"{long / 1e6:.0f} MB against {short / 1e6:.0f} MB"


@pytest.mark.parametrize("gap", [9, 18, 30, 90])
def test_the_bound_leaves_ordinary_gaps_as_they_were(mocap, gap):
    """Cores 0.3 to 3 s apart: every blend the gap allows is shorter than the bound."""
    for prev, nxt in ((WALK, BOW), (BOW, WALK), (RUN, KICK), (DANCE, RUN)):
        timeline = apart(mocap(prev), mocap(nxt), gap)
        bounded, unbounded = synthesize(timeline), synthesize(timeline, options=UNBOUNDED)
        assert decisions(bounded.plan) == decisions(unbounded.plan)
        assert np.array_equal(bounded.motion.rotations, unbounded.motion.rotations)
        assert np.array_equal(bounded.motion.positions, unbounded.motion.positions)


def test_a_long_gap_whose_blends_are_shorter_than_the_bound_keeps_its_plan(mocap):
    """67 s between the cores: the search runs in blocks, and finds the blends it found over the whole gap."""
    timeline = apart(mocap(WALK), mocap(BOW), 2_000)
    assert decisions(synthesize(timeline).plan) == decisions(synthesize(timeline, options=UNBOUNDED).plan)


def test_no_blend_lasts_longer_than_max_blend_s(mocap):
    """A bow into the dance at W = 1, 20 s apart: the acceleration limit asks for a slow change
    between two still poses, about 9 s; a shorter bound shortens it."""
    timeline = apart(mocap(BOW), mocap(DANCE), 600)
    free = synthesize(timeline, responsiveness=1.0).plan.pairs[0]
    fps = timeline[0].motion.fps
    assert max(s.end - s.start for s in free.segments) / fps > 3.0
    bounded = synthesize(timeline, responsiveness=1.0, options=SynthesisOptions(max_blend_s=3.0)).plan.pairs[0]
    assert max(s.end - s.start for s in bounded.segments if s.possible) <= 3.0 * fps
