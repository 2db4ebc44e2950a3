"""The plan is the single source of truth: a plan, loaded back from its JSON, renders the
synthesis that made it, bit for bit (core.synthesize.render), on real clips."""

import json

import numpy as np
import pytest

from core.options import ContactOptions, SynthesisOptions
from core.plan import Plan
from core.synthesize import Clip, render, synthesize

WALK, RUN, BOW, KICK = ("bandai1/walk_normal_001", "bandai1/run_happy_001", "bandai1/bow_normal_001",
                        "bandai1/kick_normal_001")


def loaded(plan: Plan) -> Plan:
    """The plan as another process reads it: through its JSON."""
    return Plan.from_dict(json.loads(plan.to_json()))


def assert_renders_the_same(timeline, **kw):
    made = synthesize(timeline, **kw)
    again = render(loaded(made.plan), timeline)
    np.testing.assert_array_equal(again.motion.rotations, made.motion.rotations)
    np.testing.assert_array_equal(again.motion.positions, made.motion.positions)
    np.testing.assert_array_equal(again.contacts, made.contacts)
    assert again.plan.to_dict() == made.plan.to_dict()
    return made


def cores_apart(prev, nxt, gap_s: float):
    """Two clips whose cores are ``gap_s`` apart, each leaving that much at both ends (as
    tests/bench/quality.py places them)."""
    m = round(gap_s * prev.fps)
    core = (m, prev.n_frames - 1 - m)
    return [Clip(prev, 0, core, "prev"), Clip(nxt, core[1], (m, nxt.n_frames - 1 - m), "next")]


@pytest.mark.parametrize("gap_s", [0.3, 0.6, 1.0])
@pytest.mark.parametrize("prev_name, next_name", [(WALK, BOW), (RUN, KICK), (BOW, WALK), (WALK, RUN)])
def test_a_loaded_plan_renders_the_same_motion(mocap, prev_name, next_name, gap_s):
    """Every method (a transition, a connection, adaptation with its steps) and the contact
    stage's holds come out of the plan alone."""
    assert_renders_the_same(cores_apart(mocap(prev_name), mocap(next_name), gap_s))


def test_a_timeline_with_a_rejection_and_a_composition_renders_the_same(mocap):
    walk, bow, wave = mocap("bandai2/walk_normal_001"), mocap(BOW), mocap("bandai2/wave-right-hand_normal_001")
    timeline = [Clip(walk, 0, (0, 220), "walk"), Clip(wave, 40, None, "wave"),
                Clip(bow, 180, (30, 137), "bow (core overlaps)"), Clip(bow, 280, (30, 137), "bow")]
    made = assert_renders_the_same(timeline)
    assert made.plan.rejected and made.plan.compositions


def test_the_plan_carries_what_it_was_made_with(mocap):
    """W, the pose ends and options other than the defaults: render needs nothing else."""
    options = SynthesisOptions(min_blend_s=0.4, contacts=ContactOptions(step_height=(0.05, 0.2)))
    made = assert_renders_the_same(cores_apart(mocap(WALK), mocap(KICK), 0.6), responsiveness=0.9,
                                   pose_ends="held", options=options)
    assert loaded(made.plan).options == options and loaded(made.plan).pose_ends == "held"


def test_a_plan_at_120_fps_renders_the_same(mocap):
    walk, bow = mocap(WALK).resampled(120.0), mocap(BOW).resampled(120.0)
    assert_renders_the_same(cores_apart(walk, bow, 0.6))


def test_render_says_which_clip_it_lacks(mocap):
    timeline = cores_apart(mocap(WALK), mocap(BOW), 0.6)
    plan = synthesize(timeline).plan
    with pytest.raises(ValueError, match="missing \\['next'\\]"):
        render(plan, timeline[:1])
