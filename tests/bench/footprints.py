"""Footprints' "sliding" rule on real capture (issue 26 item 3): red where feet slide, and only there.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/footprints.py

A print (core.footprints) is one run of frames in which a foot is down by the
skate measure's band (core.quality); it is *sliding* when its sole moved more
than ``slide_legs`` leg lengths. Two rules of how far a sole moved, measured in
the same run on the same prints:

  before  of heel and ball, the end that stayed nearer its place on the run's
          first frame, at its furthest from it, over every frame of the run
          (touch-down and lift-off included: the naive rule).
  after   of heel, ball and toe tip, the one that moved least, each only over
          the frames it is planted: itself down a whole sample of the skate
          measure after touching down and before lifting off
          (core.footprints.planted, sole_slide).

Over three sets of prints:

  untouched   every print of each clip as captured (walks, runs, dashes,
              turns, side and back steps, standing gestures, kicks, punches,
              slashes, a dance): these should (nearly) never slide.
  crossfade   prints touching the gap between two cores of a plain linear
              crossfade (tests/bench/metrics.naive_crossfade, NLA's auto blend
              over the strips' overlap) of consecutive clips: feet blended
              between two placements slide, and should show it.
  synthesis   prints touching the same gap of core.synthesize's output for the
              same two clips placed the same way.

Prints: the share of prints sliding, and for the gaps the share of gaps with a
sliding print, under each rule.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load, require_capture, short  # noqa: E402
from metrics import naive_crossfade  # noqa: E402

from core.analysis import horizontal  # noqa: E402
from core.footprints import FootprintOptions, footprints  # noqa: E402
from core.plan import Clip  # noqa: E402
from core.rig import find_rig, mean_leg_length  # noqa: E402
from core.synthesize import synthesize  # noqa: E402

# every kind of content the capture has (dataset 1 in two styles, dataset 2's walks, turns and gestures)
CLIPS = (
    *(f"bandai1/{content}_{style}_001" for style in ("normal", "proud")
      for content in ("walk", "run", "dash", "walk-back", "walk-left", "walk-right", "bow", "bye", "guide")),
    "bandai1/kick_normal_001", "bandai1/punch_normal_001", "bandai1/punch_normal_002",
    "bandai1/slash_normal_001", "bandai1/slash_normal_002", "bandai1/call_normal_001",
    "bandai1/respond_normal_001", "bandai1/dance-short_normal_001",
    "bandai2/walk_normal_001", "bandai2/run_normal_001", "bandai2/walk-turn-left_normal_001",
    "bandai2/walk-turn-right_normal_001", "bandai2/wave-both-hands_normal_001",
    "bandai2/raise-up-left-hand_normal_001",
)
# the transitions: each locomotion or action clip into another kind (pairs of real clips, both ways round)
PAIRS = (
    ("walk", "run"), ("run", "walk"), ("walk", "kick"), ("kick", "walk_proud"), ("walk-left", "walk-right"),
    ("dash", "walk-back"), ("bandai2/walk", "bandai2/walk-turn-left"), ("bandai2/walk-turn-right", "bandai2/run"),
    ("bandai2/run", "bandai2/walk"), ("walk_proud", "bow"), ("bow", "walk-left_proud"), ("punch", "walk"),
    ("walk", "slash"), ("guide", "run_proud"), ("run_proud", "dash_proud"), ("bandai2/walk", "bandai2/wave-both-hands"),
    ("bow", "guide"), ("guide_proud", "bye_proud"), ("call", "respond"), ("bye", "bandai2/raise-up-left-hand"),
)
KINDS = {  # the untouched clips by what the feet do
    "steps and turns": ("walk", "run", "dash", "walk-back", "walk-left", "walk-right", "walk-turn-left",
                        "walk-turn-right"),
    "standing gestures": ("bow", "bye", "guide", "call", "respond", "wave-both-hands", "raise-up-left-hand"),
    "kicks, punches, slashes": ("kick", "punch", "slash"),
    "dance": ("dance-short",),
}
GAP_S = 0.5  # seconds between the two cores
CORE_MARGIN_S = 0.5  # each core leaves this much of its clip out at the end the gap is on


def label(name: str) -> str:
    return ("bandai2/" if name.startswith("bandai2/") else "") + short(name)


def naive_slide(positions: np.ndarray, ankle: int, toe: int, up: np.ndarray, frames: tuple[int, int]) -> float:
    """The rule before: of heel and ball, the one nearer its place on the run's first frame, at its
    furthest from it over the whole run."""
    ends = horizontal(positions[frames[0]:frames[1] + 1][:, [ankle, toe]], up)
    return float(np.linalg.norm(ends - ends[0], axis=-1).max(axis=0).min())


def judged(motion, rig, prints, positions) -> list[tuple[bool, bool, tuple[int, int]]]:
    """(sliding before, sliding after, frames) of each print of ``motion``."""
    leg, up = mean_leg_length(motion, rig), motion.skeleton.up
    limit = FootprintOptions().slide_legs * leg
    out = []
    for p in prints:
        limb = rig.leg(p.side)
        toe = limb.toe if limb.toe is not None else limb.ankle
        out.append((naive_slide(positions, limb.ankle, toe, up, p.frames) > limit, p.sliding, p.frames))
    return out


def touching(verdicts, first: int, last: int):
    return [v for v in verdicts if v[2][0] <= last and v[2][1] >= first]


def share(verdicts, k: int) -> str:
    n = len(verdicts)
    return f"{sum(v[k] for v in verdicts):4d} of {n:4d} ({100.0 * sum(v[k] for v in verdicts) / max(n, 1):5.1f} %)"


def gap_share(gaps, k: int) -> str:
    n = len(gaps)
    hit = sum(any(v[k] for v in g) for g in gaps)
    return f"{hit:4d} of {n:4d} ({100.0 * hit / max(n, 1):5.1f} %)"


def main() -> int:
    require_capture("bandai1")
    began = time.perf_counter()
    clips = {label(name): load(name) for name in CLIPS}
    rig = find_rig(next(iter(clips.values())))

    untouched, per_clip = [], {}
    for name, motion in clips.items():
        v = judged(motion, rig, footprints(motion, rig), motion.global_positions())
        untouched += v
        per_clip[name] = v

    crossfade_gaps, synthesis_gaps = [], []
    for prev_name, next_name in PAIRS:
        prev, nxt = clips[prev_name], clips[next_name]
        gap, margin = int(round(GAP_S * prev.fps)), int(round(CORE_MARGIN_S * prev.fps))
        prev_core, next_core = (0, prev.n_frames - 1 - margin), (margin, nxt.n_frames - 1)
        next_start = prev_core[1] + gap - margin  # the strips overlap by the margins
        first, last = prev_core[1], next_start + next_core[0]
        blended = naive_crossfade(prev, nxt, next_start, rig, blend_frames=max(prev.n_frames - next_start, 2),
                                  auto_blend=True)
        crossfade_gaps.append(touching(judged(blended, rig, footprints(blended, rig), blended.global_positions()),
                                       first, last))
        result = synthesize([Clip(prev, 0, prev_core, prev_name), Clip(nxt, next_start, next_core, next_name)])
        out, start = result.motion, result.start
        gap_first, gap_last = result.plan.pairs[0].gap
        synthesis_gaps.append(touching(judged(out, rig, footprints(out, rig), out.global_positions()),
                                       gap_first - start, gap_last - start))

    print(f"{len(clips)} real clips, {len(PAIRS)} transitions between them (cores {GAP_S:g} s apart); "
          f"a print slides over {FootprintOptions().slide_legs:g} leg lengths")
    print()
    print(f"{'sliding prints':34s}{'before (whole run)':>26s}{'after (planted frames)':>28s}")
    rows = (("untouched clips, every print", untouched),
            ("crossfade, prints on the gaps", [v for g in crossfade_gaps for v in g]),
            ("synthesis, prints on the gaps", [v for g in synthesis_gaps for v in g]))
    for title, verdicts in rows:
        print(f"{title:34s}{share(verdicts, 0):>26s}{share(verdicts, 1):>28s}")
    for kind, contents in KINDS.items():
        verdicts = [v for name, vs in per_clip.items() if name.split("/")[-1].split("_")[0] in contents for v in vs]
        print(f"{'  untouched ' + kind:34s}{share(verdicts, 0):>26s}{share(verdicts, 1):>28s}")
    print(f"{'gaps with a sliding print':34s}")
    for title, gaps in (("  crossfade", crossfade_gaps), ("  synthesis", synthesis_gaps)):
        print(f"{title:34s}{gap_share(gaps, 0):>26s}{gap_share(gaps, 1):>28s}")
    print()
    print(f"{'sliding prints on each gap':46s}{'crossfade, before -> after':>28s}{'synthesis, before -> after':>28s}")
    for (prev_name, next_name), cross, ours in zip(PAIRS, crossfade_gaps, synthesis_gaps):
        print(f"  {prev_name + ' -> ' + next_name:44s}"
              + "".join(f"{f'{sum(v[0] for v in g)} -> {sum(v[1] for v in g)} of {len(g)}':>28s}" for g in (cross, ours)))
    print()
    print("untouched clips with a sliding print (before -> after):")
    for name, v in per_clip.items():
        before, after = sum(x[0] for x in v), sum(x[1] for x in v)
        if before or after:
            print(f"  {name:34s}{before:3d} -> {after:3d} of {len(v)}")
    print(f"({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
