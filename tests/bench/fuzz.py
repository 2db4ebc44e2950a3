"""Fuzzed timelines: random real clips, starts, cores and responsiveness through core.synthesize.

    .venv/bin/python tests/bench/fuzz.py [--timelines 1000] [--seed 0]

Each timeline takes 2 to 8 clips drawn from ../shared/mocap (any of its real
clips, the same clip more than once too), each at a random start (after,
overlapping or before the previous one), with a random core inside it or none
(the whole clip), and a random W. A timeline passes when:

* synthesize raises nothing (its documented error, ValueError, is for bad
  input, and the generator makes only valid timelines: cores inside their
  clips, one frame rate, one skeleton, names of their own, so any exception,
  a ValueError from deep inside numpy included, is a failure);
* the output has no NaN;
* every accepted core is exact (every joint, every core frame outside a composition, to 1e-6 of the
  body height; the first clip as it is, the others as their pair's plan aligns
  them);
* no clip is rejected whose core overlaps no accepted core;
* the run's peak Python memory (numpy's arrays included, tracemalloc) stays
  under MEMORY_BUDGET.

It prints the counts: timelines, pairs by method, rejections, errors by kind,
and every failure with its seed, so that any one can be replayed
(--only SEED). tests/core/test_fuzz.py runs the first 50 seeds of the same
generator in the test suite.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.bvh import read_bvh  # noqa: E402
from core.motion import Motion  # noqa: E402
from core.rig import body_height, find_rig  # noqa: E402
from core.synthesize import Clip, synthesize  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
CORE_TOLERANCE = 1e-6  # body heights
MEMORY_BUDGET = 600e6  # bytes of peak traced allocation for one timeline


def clip_names(mocap: Path = MOCAP) -> list[str]:
    """Every clip of the capture folder, as ``"bandai1/walk_normal_001"``, sorted."""
    return sorted(str(p.relative_to(mocap).with_suffix("")) for p in mocap.glob("*/*.bvh"))


class Clips:
    """Real clips read on first use and kept (the generator asks for the same ones often)."""

    def __init__(self, mocap: Path = MOCAP):
        self.mocap = mocap
        self.names = clip_names(mocap)
        self._cache: dict[str, Motion] = {}

    def __call__(self, name: str) -> Motion:
        if name not in self._cache:
            self._cache[name] = read_bvh(self.mocap / f"{name}.bvh")
        return self._cache[name]


def random_timeline(seed: int, clips: Clips) -> tuple[list[Clip], float]:
    """Seeded: 2 to 8 clips at random starts with random cores (or none), and a W."""
    rng = np.random.default_rng(seed)
    timeline, start = [], int(rng.integers(-50, 50))
    for i in range(int(rng.integers(2, 9))):
        name = clips.names[int(rng.integers(len(clips.names)))]
        motion = clips(name)
        n = motion.n_frames
        core = None
        if rng.random() < 0.8:
            lo = int(rng.integers(0, n))
            hi = int(rng.integers(lo, min(n, lo + int(rng.integers(1, 300))))) if lo < n - 1 else lo
            core = (lo, hi)
        timeline.append(Clip(motion, start, core, f"c{i} {Path(name).name}"))
        # the next one starts after this one, overlapping it, or (rarely) before it
        start += int(rng.integers(-n // 4, n + 120)) if rng.random() < 0.9 else -int(rng.integers(0, 200))
    return timeline, float(rng.choice([0.0, 1.0, rng.random()]))


@dataclass
class Outcome:
    seed: int
    clips: int
    error: str = ""  # the exception synthesize raised, if any
    unexpected: bool = False
    methods: list[str] = field(default_factory=list)
    rejected: int = 0
    failures: list[str] = field(default_factory=list)
    peak_bytes: float = 0.0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.failures


def _core_interval(clip: Clip) -> tuple[int, int]:
    lo, hi = clip.core_range
    return clip.start + lo, clip.start + hi


def check(seed: int, clips: Clips) -> Outcome:
    """Synthesize the seed's timeline and check what the module docstring lists."""
    timeline, w = random_timeline(seed, clips)
    out = Outcome(seed, len(timeline))
    tracemalloc.start()
    t = time.perf_counter()
    try:
        result = synthesize(timeline, responsiveness=w)
    except Exception as error:  # noqa: BLE001 (valid timelines: the fuzz reports any exception)
        out.unexpected, out.error = True, f"{type(error).__name__}: {error}"
        return out
    finally:
        out.seconds = time.perf_counter() - t
        out.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    plan = result.plan
    out.methods = [str(p.method) for p in plan.pairs]
    out.rejected = len(plan.rejected)
    if out.peak_bytes > MEMORY_BUDGET:
        out.failures.append(f"peak memory {out.peak_bytes / 1e6:.0f} MB over {MEMORY_BUDGET / 1e6:.0f} MB")
    motion = result.motion
    if not (np.isfinite(motion.rotations).all() and np.isfinite(motion.positions).all()):
        out.failures.append("NaN or infinity in the output")
        return out
    by_name = {c.name: c for c in timeline}
    rejected = {r.clip for r in plan.rejected}
    # an additional motion (2008, 8) is composed over the output: its core is laid over
    # another's, so neither is exact over the composition's frames
    composed = {c.clip for c in plan.compositions}
    layered = np.zeros(0, dtype=np.int64)
    if plan.compositions:
        layered = np.concatenate([np.arange(c.blend_in[0], c.blend_out[1] + 1) for c in plan.compositions])
    accepted = [c for c in timeline if c.name not in rejected | composed]
    first = min(accepted, key=lambda c: (_core_interval(c)[0], c.start))
    rig = find_rig(first.motion)
    height = body_height(first.motion, rig)
    placed = {first.name: first.motion}
    for pair in plan.pairs:
        placed[pair.next] = pair.alignment.apply(by_name[pair.next].motion, rig.pelvis)
    g = motion.global_positions()
    for clip in accepted:
        lo, hi = clip.core_range
        frames = np.arange(clip.start + lo, clip.start + hi + 1) - result.start
        if frames[0] < 0 or frames[-1] >= motion.n_frames:
            out.failures.append(f"core of {clip.name!r} outside the output")
            continue
        own = placed[clip.name][lo : hi + 1].global_positions()
        alone = ~np.isin(frames + result.start, layered)
        if not alone.any():
            continue
        error = float(np.abs(g[frames[alone]] - own[alone]).max()) / height
        if error > CORE_TOLERANCE:
            out.failures.append(f"core of {clip.name!r} off by {error:.1e} body heights")
    cores = [_core_interval(c) for c in accepted]
    for name in rejected:
        lo, hi = _core_interval(by_name[name])
        if not any(lo <= b and a <= hi for a, b in cores):
            out.failures.append(f"{name!r} rejected although its core {lo}..{hi} overlaps no accepted core")
    return out


def run(seeds, clips: Clips, progress: bool = True) -> tuple[list[Outcome], float]:
    """Every seed's outcome, and the seconds they took."""
    started = time.perf_counter()
    outcomes = []
    for i, seed in enumerate(seeds):
        outcomes.append(check(seed, clips))
        if progress and (i + 1) % 100 == 0:
            print(f"  {i + 1} timelines, {time.perf_counter() - started:.0f} s", flush=True)
    return outcomes, time.perf_counter() - started


def print_counts(outcomes: list[Outcome], clips: Clips, seconds: float) -> None:
    """The counts the module docstring lists, and every failure with its seed."""
    methods = collections.Counter(m for o in outcomes for m in o.methods)
    errors = collections.Counter(o.error.split(":")[0] + (": " + o.error.split(":", 1)[1].split("'")[0].strip()
                                                          if ":" in o.error else "") for o in outcomes if o.error)
    print(f"{len(outcomes)} fuzzed timelines of 2 to 8 real clips ({len(clips.names)} clips to draw from), "
          f"{sum(o.clips for o in outcomes)} clips, {seconds:.0f} s")
    print(f"  synthesized: {sum(not o.error for o in outcomes)}; exceptions: {sum(o.unexpected for o in outcomes)}")
    print(f"  pairs: {sum(methods.values())} ({', '.join(f'{m} {n}' for m, n in methods.most_common())})")
    print(f"  rejected clips (core overlapping an accepted core): {sum(o.rejected for o in outcomes)}")
    if errors:
        print("  errors, by kind:")
        for kind, n in errors.most_common():
            print(f"    {n:5d}  {kind}")
    peaks = np.array([o.peak_bytes for o in outcomes]) / 1e6
    print(f"  peak traced memory: median {np.median(peaks):.0f} MB, max {peaks.max():.0f} MB "
          f"(budget {MEMORY_BUDGET / 1e6:.0f} MB); time: median {np.median([o.seconds for o in outcomes]):.2f} s")
    failed = [o for o in outcomes if not o.ok]
    print(f"  failures: {len(failed)}")
    for o in failed:
        print(f"    seed {o.seed}: {o.error if o.unexpected else '; '.join(o.failures)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timelines", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--only", type=int, help="replay one seed")
    args = parser.parse_args()
    if not MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {MOCAP}")
    clips = Clips()
    seeds = [args.only] if args.only is not None else range(args.seed, args.seed + args.timelines)
    outcomes, seconds = run(seeds, clips)
    print()
    print_counts(outcomes, clips, seconds)
    sys.exit(1 if any(not o.ok for o in outcomes) else 0)


if __name__ == "__main__":
    main()
