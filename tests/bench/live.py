"""Speed of live re-synthesis (issue 11): a strip dragged on a ten-clip timeline.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/live.py

The timeline is synthesis_speed.py's: the ten real clips of common.TIMELINE (about
3,000 output frames), each next clip starting 0.5 s before the previous one ends,
cores leaving 0.5 s at each end. The fifth clip is moved by +10 frames, then by -10,
MOVES times in all, and core.resynthesis.Resynthesis.update runs after each move
(as the add-on's depsgraph handler does while the user drags). Printed beside it,
in the same run: the full synthesize of the same timeline and the naive crossfade
chained over it (tests/bench/metrics.naive_crossfade).

Target: under 50 ms from a change to the updated preview, keys written included;
the core's share is aimed at 35 ms, leaving the rest to the Blender side.
:func:`core_timings` returns the core's figures. Then the whole live path in Blender
(tests/bench/live_blender.py, run here too unless --core-only): the same timeline as NLA
strips of one armature, the fifth strip moved, timed from the change to the preview
updated, keys written included, beside the full Synthesize.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402  (tests/bench, next to this script)
import quality  # noqa: E402
from common import TIMELINE, timed  # noqa: E402
from core.motion import forward_kinematics  # noqa: E402
from core.resynthesis import Resynthesis  # noqa: E402
from core.rig import body_height, find_rig  # noqa: E402
from core.synthesize import Clip, synthesize, unique_names  # noqa: E402

OVERLAP_S = 0.5
MARGIN_S = 0.5
MOVED = 4  # the fifth clip
STEP = 10  # frames per move
MOVES = 20
FULL_REPEAT = 5
LIVE_TARGET_S = 0.050  # change to updated preview, keys written included
CORE_TARGET_S = 0.035  # the core's share of it


def timeline() -> list[Clip]:
    """The ten clips placed as synthesis_speed.py places them."""
    clips, start = [], 0
    labels = unique_names([quality.short(name) for name, _ in TIMELINE])  # (walk twice: "walk", "walk #2")
    for (name, frames), label in zip(TIMELINE, labels):
        motion = quality.load(name)
        motion = motion if frames is None else motion[:frames]
        clips.append(Clip(motion, start, core=quality.core_range(motion, MARGIN_S), name=label))
        start += quality.next_start(motion, OVERLAP_S)
    return clips


def core_timings(clips: list[Clip] | None = None, moves: int = MOVES) -> dict:
    """The core's figures of the live path, seconds: each ``update`` after a move of the
    fifth clip by +STEP / -STEP frames (``updates``, with their median and p90), the full
    ``synthesize`` of the same timeline (median of FULL_REPEAT), the chained naive
    crossfade, what one move re-did (``stats``, core.resynthesis.UpdateStats) and how far
    the last update lies from a fresh synthesis (``error``, body heights)."""
    clips = list(clips or timeline())
    rig = find_rig(clips[0].motion)
    live = Resynthesis()
    live.update(clips)  # the preview before the drag
    updates, stats = [], []
    for k in range(moves):
        clips[MOVED] = replace(clips[MOVED], start=clips[MOVED].start + (STEP if k % 2 == 0 else -STEP))
        began = time.perf_counter()
        result = live.update(clips)
        updates.append(time.perf_counter() - began)
        stats.append(live.last)
    fresh = synthesize(clips)
    full = timed(lambda: synthesize(clips), FULL_REPEAT)

    def naive():
        out = clips[0].motion
        for c in clips[1:]:
            out = metrics.naive_crossfade(out, c.motion, c.start, rig)
        return out

    g = [forward_kinematics(m.rotations, m.positions, m.skeleton.parents, rotations_out=False)[0]
         for m in (result.motion, fresh.motion)]
    return {
        "updates": updates,
        "update": statistics.median(updates),
        "update_p90": float(np.percentile(updates, 90)),
        "full": full,
        "naive": timed(naive, FULL_REPEAT),
        "stats": stats[-1],
        "frames": fresh.motion.n_frames,
        "pairs": len(fresh.plan.pairs),
        "error": float(np.abs(g[0] - g[1]).max()) / body_height(fresh.motion, rig),
    }


def ms(seconds: float) -> str:
    return f"{1000 * seconds:7.2f} ms"


def main() -> None:
    if not quality.MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {quality.MOCAP}")
    clips = timeline()
    t = core_timings(clips)
    s = t["stats"]
    print(f"live re-synthesis: timeline of {len(clips)} clips, {t['frames']} output frames, {t['pairs']} pairs; "
          f"clip 5 ('{clips[MOVED].name}') moved by +{STEP} / -{STEP} frames, {MOVES} times")
    print(f"  update after a move   {ms(t['update'])}   p90 {ms(t['update_p90'])}   "
          f"(re-planned {s.planned} pairs, kept {s.kept}, moved {s.moved} rigidly; held {s.held} gaps, "
          f"measured {s.measured})")
    print(f"  full synthesize       {ms(t['full'])}   ({t['full'] / t['update']:.1f} x the update)")
    print(f"  naive crossfade       {ms(t['naive'])}")
    print(f"  last update against a fresh synthesis: max joint position error {t['error']:.1e} body heights")
    print(f"  target: the core's share of the live path under {1000 * CORE_TARGET_S:.0f} ms -> "
          f"{'met' if t['update'] < CORE_TARGET_S else 'NOT met'} ({1000 * t['update']:.1f} ms); the whole live path "
          f"(keys written included, timed on the Blender side) must stay under {1000 * LIVE_TARGET_S:.0f} ms")
    if "--core-only" not in sys.argv:
        import live_blender  # (imports bpy with a temporary profile)

        live_blender.report(live_blender.blender_timings())


if __name__ == "__main__":
    main()
