"""Speed of the synthesis engine on real capture: one pair, and a ten-clip timeline.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/synthesis_speed.py

Clips and placement are those of tests/bench/quality.py (next clip starting
0.5 s before the previous one ends, cores leaving 0.5 s at each end).

1. One pair, over every ordered pair of quality.py's clips (median of
   3 runs each, then the median over pairs):
     plan      core.methods.plan_pair: method choice, blending segments,
               optimal ranges, weight functions and feet of one pair (2014, 4.1-4.4).
     pair      the pair planned, rendered (core.render.render_pair), its feet
               held (the contact stage) and its gap measured (core.quality):
               every stage timed inside real synthesize calls (wrapped in this
               process; the engine is not changed). Target: median under 5 ms.
     whole     synthesize of the two-clip timeline, i.e. plan plus analysis of
               both clips, alignment and rendering with leg IK.
     naive     tests/bench/metrics.naive_crossfade of the same pair.
2. The range search alone, on every eq. (9) search those plans ran (their
   real features and candidate sets, recorded during step 1): the engine's
   coarse-to-fine optimal_blend_range against exhaustive_blend_range, which
   evaluates every candidate pair, with how often both find the same cost.
3. A timeline of ten real clips (about 3,000 output frames) synthesized end
   to end, median of 5 runs, against the naive crossfade chained over the
   same timeline. Target: under 100 ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402  (tests/bench, next to this script)
import quality  # noqa: E402
from common import TIMELINE, timed  # noqa: E402
from core.rig import find_rig  # noqa: E402

OVERLAP_S = 0.5
MARGIN_S = 0.5
PAIR_REPEAT = 3
TIMELINE_REPEAT = 5
class Recorder:
    """Wraps a function: times each call, and keeps the arguments of every call when asked."""

    def __init__(self, fn):
        self.fn = fn
        self.seconds: list[float] = []
        self.calls: list[tuple[tuple, dict]] = []
        self.keep = False

    def __call__(self, *args, **kwargs):
        if self.keep:
            self.calls.append((args, kwargs))
        t = time.perf_counter()
        out = self.fn(*args, **kwargs)
        self.seconds.append(time.perf_counter() - t)
        return out


def ms(seconds: float) -> str:
    return f"{1000 * seconds:7.2f} ms"


def naive_pairs(clips: dict, rig) -> list[float]:
    """The naive crossfade of every ordered pair (median of PAIR_REPEAT runs each), seconds."""
    out = []
    for a in quality.CLIPS:
        for b in quality.CLIPS:
            if a != b:
                prev, nxt = clips[a], clips[b]
                start = quality.next_start(prev, OVERLAP_S)
                out.append(timed(lambda: metrics.naive_crossfade(prev, nxt, start, rig), PAIR_REPEAT))
    return out


def pairs(engine, clips: dict, rig) -> list:
    """Step 1; returns the recorded range searches."""
    naive_ms = naive_pairs(clips, rig)
    if engine is None:
        print(f"one pair ({len(naive_ms)} real pairs, median of {PAIR_REPEAT} runs each; median and p90 over pairs)")
        print(f"  {'naive crossfade':<20} {ms(statistics.median(naive_ms))}   p90 {ms(float(np.percentile(naive_ms, 90)))}")
        return []
    from core import methods as planning
    from core import synthesize as engine_module

    Clip, synthesize = engine
    # the stages of one pair, each wrapped where synthesize calls it (the engine is not changed)
    stages = {name: Recorder(getattr(engine_module, name)) for name in ("plan_pair", "render_pair", "_feet_held", "_measured")}
    search = Recorder(planning.optimal_blend_range)
    for name, recorder in stages.items():
        setattr(engine_module, name, recorder)
    planning.optimal_blend_range = search
    plan_ms, pair_ms, whole_ms, failures = [], [], [], []
    try:
        for a in quality.CLIPS:
            for b in quality.CLIPS:
                if a == b:
                    continue
                prev, nxt = clips[a], clips[b]
                start = quality.next_start(prev, OVERLAP_S)
                timeline = [
                    Clip(prev, 0, core=quality.core_range(prev, MARGIN_S), name=quality.short(a)),
                    Clip(nxt, start, core=quality.core_range(nxt, MARGIN_S), name=quality.short(b)),
                ]
                search.keep = True
                try:
                    synthesize(timeline, responsiveness=0.5)  # warm, and records the searches once
                except Exception as error:  # a benchmark reports every failure and goes on
                    failures.append(f"{quality.short(a)} > {quality.short(b)}: {type(error).__name__}: {error}")
                    continue
                finally:
                    search.keep = False
                for recorder in stages.values():
                    recorder.seconds.clear()
                whole_ms.append(timed(lambda: synthesize(timeline, responsiveness=0.5), PAIR_REPEAT))
                if stages["plan_pair"].seconds:
                    plan_ms.append(statistics.median(stages["plan_pair"].seconds))
                    # planned, rendered, feet held and measured: all of one pair but the clips' analysis
                    pair_ms.append(statistics.median(np.sum([r.seconds for r in stages.values()], axis=0)))
    finally:
        for name, recorder in stages.items():
            setattr(engine_module, name, recorder.fn)
        planning.optimal_blend_range = search.fn

    print(f"one pair ({len(whole_ms)} real pairs, median of {PAIR_REPEAT} runs each; median and p90 over pairs)")
    rows = (("plan (plan_pair)", plan_ms), ("planned, rendered, feet held, measured", pair_ms),
            ("whole synthesize", whole_ms), ("naive crossfade", naive_ms))
    for label, values in rows:
        if values:
            print(f"  {label:<40} {ms(statistics.median(values))}   p90 {ms(float(np.percentile(values, 90)))}")
    if pair_ms:
        median = statistics.median(pair_ms)
        print(f"  target: one pair planned and rendered (contact stage and quality figures included) under 5 ms -> "
              f"{'met' if median < 0.005 else 'NOT met'} ({1000 * median:.2f} ms)")
    for f in failures:
        print(f"  failed: {f}")
    return search.calls


def searches(calls: list) -> None:
    """Step 2: coarse to fine against exhaustive on the recorded searches."""
    from core.optimize import exhaustive_blend_range, optimal_blend_range

    if not calls:
        print("\nrange search: no search was recorded")
        return
    fine, full, same, pairs_seen = [], [], 0, []
    for args, kwargs in calls:
        fine.append(timed(lambda: optimal_blend_range(*args, **kwargs), 3))
        full.append(timed(lambda: exhaustive_blend_range(*args, **kwargs), 3))
        a = optimal_blend_range(*args, **kwargs)
        b = exhaustive_blend_range(*args, **kwargs)
        same += bool(np.isclose(a.cost, b.cost, rtol=1e-9, atol=1e-12))
        previous, following = args  # the two BlendSides, each with its candidates
        pairs_seen.append(len(np.unique(previous.candidates)) * len(np.unique(following.candidates)))
    print(f"\nrange search, eq. (9) ({len(calls)} searches from those plans, "
          f"{int(np.median(pairs_seen))} candidate pairs in the median one, {max(pairs_seen)} at most)")
    print(f"  coarse to fine       {ms(statistics.median(fine))}   total {ms(sum(fine))}")
    print(f"  exhaustive           {ms(statistics.median(full))}   total {ms(sum(full))}"
          f"   ({sum(full) / max(sum(fine), 1e-12):.1f}x the time)")
    print(f"  same optimum (cost) in {same} of {len(calls)} searches")


def timeline(engine, rig) -> None:
    """Step 3: ten clips end to end."""
    from core.synthesize import unique_names

    clips, start = [], 0
    labels = unique_names([quality.short(name) for name, _ in TIMELINE])  # (walk twice: "walk", "walk #2")
    for (name, frames), label in zip(TIMELINE, labels):
        motion = quality.load(name)
        motion = motion if frames is None else motion[:frames]
        clips.append((label, motion, start))
        start += quality.next_start(motion, OVERLAP_S)
    frames = clips[-1][2] + clips[-1][1].n_frames
    print(f"\ntimeline of {len(clips)} clips, {frames} output frames "
          f"({', '.join(n for n, _, _ in clips)})")

    def naive():
        out = clips[0][1]
        for _, motion, at in clips[1:]:
            out = metrics.naive_crossfade(out, motion, at, rig)
        return out

    t_naive = timed(naive, TIMELINE_REPEAT)
    if engine is not None:
        Clip, synthesize = engine
        timeline = [Clip(m, at, core=quality.core_range(m, MARGIN_S), name=n) for n, m, at in clips]
        try:
            result = synthesize(timeline, responsiveness=0.5)
        except Exception as error:
            print(f"  engine failed: {type(error).__name__}: {error}")
        else:
            t_engine = timed(lambda: synthesize(timeline, responsiveness=0.5), TIMELINE_REPEAT)
            plan = result.plan
            print(f"  engine               {ms(t_engine)}   ({result.motion.n_frames} frames, "
                  f"{len(plan.pairs)} pairs: {', '.join(p.method for p in plan.pairs)}; {len(plan.rejected)} rejected)")
            print(f"  naive crossfade      {ms(t_naive)}")
            print(f"  target: under 100 ms -> {'met' if t_engine < 0.1 else 'NOT met'}")
            return
    print(f"  naive crossfade      {ms(t_naive)}")


def main() -> None:
    if not quality.MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {quality.MOCAP}")
    clips = {name: quality.load(name) for name in quality.CLIPS}
    rig = find_rig(clips[quality.CLIPS[0]])
    engine, reason = quality.engine_or_reason()
    if engine is None:
        print(f"engine not available ({reason}): the naive figures only")
    calls = pairs(engine, clips, rig)
    if engine is not None:
        searches(calls)
    timeline(engine, rig)


if __name__ == "__main__":
    main()
