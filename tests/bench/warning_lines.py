"""What the animator is told (issue 26): warnings per gap, placements the tool then flags, Give Room.

On a 16-strip timeline of real clips (common.TIMELINE's ten and six more, each next
clip overlapping its previous one by half a second, every clip's core its default
core as the add-on gives it: core.timeline.default_core, the same rule), synthesized
by core.synthesize.synthesize, the code path the add-on's Synthesize calls:

1. the warnings count before (the old report's rule: per pair, its warning and its
   flagged figures on lines of their own) and after (core.quality.gap_warning: one
   line per gap), with the lines;
2. Pack (each clip as soon as possible after the ones before it, as placed) and Add
   as Soon as Possible (each clip added after the timeline before it, as placed):
   how many of the gaps they create are flagged, before (the start W chooses,
   ``give_room_s = 0``: the code before issue 26) and after (the least delay up to
   ``give_room_s`` that keeps the gap unflagged);
3. Give Room on each flagged gap of the timeline: the move found and its time,
   re-planning only the pair (core.room) beside the naive search (the whole timeline
   synthesized at every frame), which must find the same move.

    .venv/bin/python tests/bench/warning_lines.py
"""

from __future__ import annotations

import os
import sys

# This script's name is the standard library's ``warnings``, which the imports below import: its
# folder leaves the module path until the standard one is loaded, and comes back for ``common``.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
import warnings  # noqa: E402,F401  (the standard library's)

sys.path.append(_HERE)

import time  # noqa: E402
from dataclasses import replace  # noqa: E402

from common import TIMELINE, load, short  # noqa: E402  (puts the repository on sys.path)

from core.options import SynthesisOptions  # noqa: E402
from core.quality import GapQuality, gap_warning  # noqa: E402
from core.room import give_room, moved_clips  # noqa: E402
from core.synthesize import Clip, scheduled_start, synthesize, unique_names  # noqa: E402
from core.timeline import Span, default_core  # noqa: E402

MORE = (("bandai1/guide_normal_001", None), ("bandai1/walk-left_normal_001", None), ("bandai2/walk-turn-right_normal_001", None),
        ("bandai1/call_normal_001", None), ("bandai1/respond_normal_001", None), ("bandai1/byebye_normal_001", None))
OVERLAP_S = 0.5
W = 0.5
BEFORE = SynthesisOptions(give_room_s=0.0)  # the start W chooses, not delayed: the code before issue 26


def timeline() -> list[Clip]:
    """The 16 clips placed end to end with OVERLAP_S of overlap, each with its default core."""
    placed, start = [], 0
    names = unique_names([short(name) for name, _ in TIMELINE + MORE])
    for (name, frames), label in zip(TIMELINE + MORE, names):
        motion = load(name)
        motion = motion if frames is None else motion[:frames]
        placed.append((label, motion, start))
        start += motion.n_frames - int(round(OVERLAP_S * motion.fps))
    spans = [Span(label, s, s + m.n_frames - 1) for label, m, s in placed]
    room = round(SynthesisOptions().min_blend_s * placed[0][1].fps)
    clips = []
    for k, (label, motion, s) in enumerate(placed):
        core = default_core(spans[k], spans[:k], spans[k + 1:], room)
        clips.append(Clip(motion, s, (core.first - s, core.last - s), label))
    return clips


def old_warning_lines(plan) -> list[str]:
    """The report before issue 26 (addon/report.py's plan_warnings at main): per pair its warning on
    one line and its flagged figures on another."""
    lines = [f"strip {r.clip!r} rejected: {r.reason}" for r in plan.rejected] + list(plan.warnings)
    for p in plan.pairs:
        if p.warning:
            lines.append(f"{p.prev!r} → {p.next!r}: {p.warning}")
        if p.quality is not None and p.quality.flags:
            lines.append(f"{p.prev!r} → {p.next!r}: the gap {p.gap[0]}-{p.gap[1]} has {', '.join(p.quality.flags)}; "
                         "give the clips more room or move the cores")
    return lines


def new_warning_lines(plan) -> list[str]:
    lines = [f"strip {r.clip!r} rejected: {r.reason}" for r in plan.rejected] + list(plan.warnings)
    return lines + plan.gap_warnings()


def flagged_created(clips: list[Clip], options: SynthesisOptions, mode: str
                    ) -> tuple[int, int, list[str], float, int]:
    """(gaps created, how many flagged in the synthesis, which, seconds, for how many the placement
    said that no start within give_room_s keeps its gap unflagged). ``pack``: each clip placed as
    soon as possible after the ones before it as packed; ``asap``: each clip added after the
    timeline before it as it stands."""
    began = time.perf_counter()
    placed, flagged, said = [clips[0]], [], 0
    for k in range(1, len(clips)):
        before = placed if mode == "pack" else clips[:k]
        scheduled = scheduled_start(before, clips[k], responsiveness=W, options=options)
        said += bool(scheduled.flags)
        clip = replace(clips[k], start=scheduled.start)
        if mode == "pack":
            placed.append(clip)
            continue
        pair = next(p for p in synthesize([*before, clip], responsiveness=W).plan.pairs if p.next == clip.name)
        if pair.quality is not None and pair.quality.flags:
            flagged.append(f"{pair.prev} → {pair.next}")
    if mode == "pack":
        plan = synthesize(placed, responsiveness=W).plan
        flagged = [f"{p.prev} → {p.next}" for p in plan.pairs if p.quality is not None and p.quality.flags]
    return len(clips) - 1, len(flagged), flagged, time.perf_counter() - began, said


def naive_room(clips: list[Clip], name: str, limit: int) -> int | None:
    """The naive Give Room: the whole timeline synthesized at every frame of delay."""
    nxt = next(c for c in clips if c.name == name)
    moving = [c.name for c in clips if c.start + c.core_range[0] >= nxt.start + nxt.core_range[0]]
    for frames in range(1, limit + 1):
        pair = next(p for p in synthesize(moved_clips(clips, moving, frames), responsiveness=W).plan.pairs
                    if p.next == name)
        if not pair.quality.flags:
            return frames
    return None


def main() -> None:
    clips = timeline()
    print(f"timeline: {len(clips)} clips, {clips[-1].end + 1} output frames ({', '.join(c.name for c in clips)}), "
          f"W = {W}")
    result = synthesize(clips, responsiveness=W)
    plan = result.plan
    old, new = old_warning_lines(plan), new_warning_lines(plan)
    flagged = [p for p in plan.pairs if p.quality is not None and p.quality.flags]
    unmeasured = [p for p in plan.pairs if p.quality is None or not GapQuality.measured.fget(p.quality)]
    print(f"\n1. warnings: {len(old)} lines before (old rule), {len(new)} after (one per gap); "
          f"{len(plan.pairs)} gaps, {len(flagged)} flagged, {len(unmeasured)} not measured")
    for line in new:
        print(f"   {line}")

    print("\n2. gaps created flagged           before (W's start)   after (least delay <= 2 s)")
    for mode, label in (("pack", "Pack"), ("asap", "Add as Soon as Possible")):
        n, b, which_b, tb, _ = flagged_created(clips, BEFORE, mode)
        _, a, which_a, ta, said = flagged_created(clips, SynthesisOptions(), mode)
        print(f"   {label:28s} {b:3d} of {n} ({tb:5.1f} s)     {a:3d} of {n} ({ta:5.1f} s), said so for {said}")
        print(f"      before: {', '.join(which_b) or '-'}")
        print(f"      after:  {', '.join(which_a) or '-'}")

    print("\n3. Give Room on each flagged gap: the move, pair re-planned vs whole timeline per frame (naive)")
    print(f"   {'gap':34s} {'moved':>12s} {'pair s':>8s} {'naive':>12s} {'naive s':>8s}")
    limit = round(SynthesisOptions().give_room_s * clips[0].motion.fps)
    for pair in flagged:
        t = time.perf_counter()
        room = give_room(clips, pair.next, responsiveness=W)
        t_room = time.perf_counter() - t
        t = time.perf_counter()
        naive = naive_room(clips, pair.next, limit)
        t_naive = time.perf_counter() - t

        def said(frames):
            return "not enough" if frames is None else f"{frames} frames"
        print(f"   {pair.prev + ' → ' + pair.next:34s} {said(room.frames):>12s} {t_room:8.2f} {said(naive):>12s} "
              f"{t_naive:8.2f}")


if __name__ == "__main__":
    main()
