"""Fifty seeded random timelines of real clips through core.synthesize (tests/bench/fuzz.py
runs a thousand): valid timelines, so nothing may go wrong."""

import importlib.util
import sys
from pathlib import Path

import pytest
from real_capture import require

_PATH = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"
# tests/bench is a folder of scripts, not a package: load the module by path
_spec = importlib.util.spec_from_file_location("bench_fuzz", _PATH)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # its dataclasses look their module up there
_spec.loader.exec_module(fuzz)

SEEDS = range(50)
# seeds the 1,000-timeline benchmark once failed on: an additional motion placed inside a
# clip whose tail the output time-scaled shorter than that clip's span
REGRESSIONS = (57, 311, 770)


@pytest.fixture(scope="module")
def clips():
    require(fuzz.MOCAP)
    return fuzz.Clips()


@pytest.mark.parametrize("seed", [*SEEDS, *REGRESSIONS])
def test_a_random_timeline_synthesizes_with_exact_cores_and_only_the_rejections_it_must(clips, seed):
    """No exception, no NaN, every accepted core exact, no clip rejected whose core overlaps
    no accepted core, peak memory within the budget."""
    outcome = fuzz.check(seed, clips)
    assert not outcome.unexpected, outcome.error
    assert not outcome.failures, "; ".join(outcome.failures)


def test_the_timelines_cover_what_they_are_for(clips):
    """The generator is not trivially passing: its timelines have several clips, rejections
    and more than one method among them."""
    outcomes = [fuzz.check(seed, clips) for seed in SEEDS[:10]]
    assert sum(o.clips for o in outcomes) >= 30
    assert sum(o.rejected for o in outcomes) > 0
    assert len({m for o in outcomes for m in o.methods}) >= 2


# a seeded sample of the hostile-input fuzz (tests/bench/fuzz.py --commands runs every case):
# malformed files, devices and hand-made hop tables through the commands, each in its own process
COMMAND_CASES = fuzz.cases(seed=0, count=10)


@pytest.mark.parametrize("case", COMMAND_CASES, ids=[f"{c.kind}-{c.command}" for c in COMMAND_CASES])
def test_hostile_input_gets_a_clean_refusal_or_a_finite_output_and_no_input_changes(clips, case, tmp_path):
    good = [fuzz.MOCAP / f"{name}.bvh" for name in fuzz.GOOD]
    run = fuzz.run_table_case if case.command in fuzz.TABLE_COMMANDS else fuzz.run_case
    outcome, said = run(case, tmp_path, good)
    assert outcome in ("clean refusal", "accepted"), f"{outcome}: {said}"


@pytest.mark.parametrize("seed", range(10))
def test_a_hostile_timeline_is_refused_cleanly_or_keeps_its_cores(clips, seed):
    """Repeated files, a core on the frame after the previous one, clips at 60 and 120 fps, a
    clip on another rig."""
    outcome, said = fuzz.hostile_outcome(seed, clips)
    assert outcome in ("clean refusal", "accepted"), f"{outcome}: {said}"
