"""Give Room: the least move of a flagged gap's later clips that puts the gap under its flag threshold.

A gap between two cores is flagged when its motion skates, accelerates or pops
more than ``core.quality.FLAG_RATIO`` times what it is judged against
(``GapQuality.flags``). The commonest cause is a placement that leaves the
blends too little time. Give Room moves the gap's next clip, and every clip
whose core comes after, later by the least number of output frames, searched
by whole steps of the measure (``core.quality.measure_step``: a frame at 30 fps,
two at 60; ``PairMeasure.least_room`` says why) up to
``SynthesisOptions.give_room_s`` seconds (seconds, so any frame rate), for which
the gap is flagged for nothing; or says that so much is not enough and moves
nothing.

The search re-plans only the pair concerned (``core.synthesize.PairMeasure``:
everything before it joined once, the pair planned, rendered and measured at
each start), then confirms a start it finds with the whole timeline
synthesized. The two measures differ only in the skate's floor levels (the
pair's are those of the motion so far and of the next clip from its core on;
the whole output's have the later clips too): a start the pair's measure
flags for skate that the whole timeline would not flag is passed over, so
the move found is the least the pair's measure allows, confirmed; never one
the whole timeline flags. When no move is enough, what stays flagged is the
whole timeline's at the limit. ``tests/bench/gap_warnings.py`` checks the moves
against the whole timeline searched step by step. Pure: clips in, a
:class:`Room` out; the command line and the add-on apply the move.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from .options import SynthesisOptions
from .plan import Clip, PairPlan, Result
from .quality import measure_step
from .rig import Rig
from .synthesize import pair_measure, synthesize

__all__ = ["Room", "give_room", "give_room_to_every_flagged_gap", "later_clips", "moved_clips"]


@dataclass(frozen=True)
class Room:
    """What Give Room did for the gap from ``prev``'s core to ``next``'s.

    gap      the gap's output frames (first, last) before the move.
    frames   how far the later clips moved, in output frames; None when ``limit``
             frames were not enough (nothing moved).
    limit    the most it could move them: ``give_room_s`` at the output's rate.
    fps      the output's rate (``frames / fps`` seconds).
    moved    the clips moved (the next one and every one whose core comes after; none
             when nothing moved).
    before, after  the gap's flags before, and after the move (or at ``limit`` when
             nothing was enough).
    """

    prev: str
    next: str
    gap: tuple[int, int]
    frames: int | None
    limit: int
    fps: float
    moved: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...] = ()

    def text(self) -> str:
        """``"gave 'guide' room: moved it and 2 later clips 9 frames (0.30 s) later; the gap ... is no longer flagged"``."""
        between = f"{self.prev!r} → {self.next!r}"
        if not self.before:
            return f"{between}: the gap {self.gap[0]}-{self.gap[1]} is not flagged; nothing moved"
        if self.frames is None:
            return (f"{between}: moving {self.next!r} and what follows up to {self.limit / self.fps:g} s "
                    f"({self.limit} frames) later is not enough (still {', '.join(self.after) or 'flagged'}); "
                    "nothing moved: move its cores, or set a blend length on it")
        others = len(self.moved) - 1
        return (f"{between}: moved {self.next!r}" + (f" and {others} later clip{'s' if others != 1 else ''}"
                                                      if others else "")
                + f" {self.frames} frame{'s' if self.frames != 1 else ''} ({self.frames / self.fps:.2f} s) later; "
                f"the gap, frames {self.gap[0]}-{self.gap[1] + self.frames}, is no longer flagged")

    def to_dict(self) -> dict:
        return {"prev": self.prev, "next": self.next, "gap": list(self.gap), "frames": self.frames,
                "seconds": None if self.frames is None else self.frames / self.fps, "limit": self.limit,
                "moved": list(self.moved), "before": list(self.before), "after": list(self.after)}


def later_clips(clips: Sequence[Clip], next_name: str) -> list[str]:
    """The names of ``next_name`` and of every clip whose core starts no sooner than its core: what
    moves with it (an additional motion lying in one of them included, as its core is inside)."""
    nxt = next(c for c in clips if c.name == next_name)
    begin = nxt.start + nxt.core_range[0]
    return [c.name for c in clips if c.start + c.core_range[0] >= begin]


def moved_clips(clips: Sequence[Clip], names: Sequence[str], frames: int) -> list[Clip]:
    """``clips`` with those named started ``frames`` later (their cores with them), the others as they are."""
    names = set(names)
    return [replace(c, start=c.start + frames) if c.name in names else c for c in clips]


def _synthesizer(responsiveness: float, rig: Rig | None, pose_ends: str, options: SynthesisOptions | None
                 ) -> Callable[[list[Clip]], Result]:
    """``timeline -> synthesize(timeline, ...)`` with these arguments: the whole timeline, synthesized."""
    def whole(timeline: list[Clip]) -> Result:
        return synthesize(timeline, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends, options=options)
    return whole


def _flags(pair: PairPlan | None) -> tuple[str, ...]:
    return tuple(pair.quality.flags) if pair is not None and pair.quality is not None else ()


def _pair(result: Result, next_name: str) -> PairPlan | None:
    return next((p for p in result.plan.pairs if p.next == next_name), None)


def give_room(clips: Sequence[Clip], next_name: str, *, responsiveness: float = 0.5, rig: Rig | None = None,
              pose_ends: str = "eased", options: SynthesisOptions | None = None,
              synthesized: Callable[[list[Clip]], Result] | None = None) -> Room:
    """The :class:`Room` the gap into clip ``next_name`` needs (see the module docstring).

    Arguments as :func:`core.synthesize.synthesize`'s; ``synthesized(clips)`` synthesizes a
    whole timeline with them (a ``core.resynthesis.Resynthesis``'s update where the caller
    keeps one; synthesize when None). Raises ``ValueError`` when no pair joins that clip.
    """
    whole = synthesized or _synthesizer(responsiveness, rig, pose_ends, options)
    pair = _pair(whole(list(clips)), next_name)
    if pair is None:
        raise ValueError(f"no pair of the synthesis joins clip {next_name!r} (rejected, composed, or the first); "
                         "Give Room moves the clip after a flagged gap")
    before = _flags(pair)
    measure = pair_measure(clips, next_name, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends,
                           options=options)
    fps = measure.ctx.fps
    limit = int(round((options or SynthesisOptions()).give_room_s * fps))
    moving = later_clips(clips, next_name)
    room = Room(pair.prev, next_name, pair.gap, None, limit, fps, tuple(moving), before)
    if not before:
        return replace(room, frames=0, moved=())
    start = next(c for c in clips if c.name == next_name).start
    step = measure_step(fps)  # (whole steps of the measure: PairMeasure.least_room says why)
    frames = step
    while frames <= limit:
        # the pair alone, step by step, and the whole timeline where the pair says it would do
        found = measure.least_room(start + frames, limit - frames)
        if found is None:
            break
        frames += found
        after = _pair(whole(moved_clips(clips, moving, frames)), next_name)
        if after is not None and not _flags(after):
            return replace(room, frames=frames)
        frames += step
    # what the whole timeline flags with the clips moved as far as they may (the pair's own measure
    # could say otherwise of skate, its floor levels being those of the motion so far)
    return replace(room, moved=(), after=_flags(_pair(whole(moved_clips(clips, moving, limit)), next_name)))


def give_room_to_every_flagged_gap(clips: Sequence[Clip], *, responsiveness: float = 0.5, rig: Rig | None = None,
                                   pose_ends: str = "eased", options: SynthesisOptions | None = None,
                                   synthesized: Callable[[list[Clip]], Result] | None = None
                                   ) -> tuple[list[Clip], list[Room]]:
    """Give Room to every flagged gap of the synthesis of ``clips`` in order, first gap first, each
    move shifting everything after it: the clips as moved and a :class:`Room` per flagged gap."""
    whole = synthesized or _synthesizer(responsiveness, rig, pose_ends, options)
    clips, rooms, done = list(clips), [], set()
    while True:
        flagged = next((p for p in whole(clips).plan.pairs
                        if p.next not in done and p.quality is not None and p.quality.flags), None)
        if flagged is None:
            return clips, rooms
        done.add(flagged.next)
        room = give_room(clips, flagged.next, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends,
                         options=options, synthesized=whole)
        rooms.append(room)
        if room.frames:
            clips = moved_clips(clips, room.moved, room.frames)
