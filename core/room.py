"""Give Room: the least move of a flagged gap's later clips that puts the gap under its flag threshold.

A gap between two cores is flagged when its motion skates, accelerates or pops
more than ``core.quality.FLAG_RATIO`` times what it is judged against
(``GapQuality.flags``). The commonest cause is a placement that leaves the
blends too little time. Give Room moves the gap's next clip, and every clip
whose core comes after, later by the least number of output frames, searched
frame by frame up to ``SynthesisOptions.give_room_s`` seconds (seconds, so any
frame rate), for which the gap is flagged for nothing; or says that so much is
not enough and moves nothing.

The search re-plans only the pair concerned (``core.synthesize.PairMeasure``:
everything before it joined once, the pair planned, rendered and measured at
each start), then confirms a start it finds with the whole timeline
synthesized (the pair's own measure takes the skate's floor levels from the
motion so far; the whole output has the later clips too). Pure: clips in,
a :class:`Room` out; the command line and the add-on apply the move.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from .options import SynthesisOptions
from .plan import Clip, PairPlan, Result
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
    def whole(timeline):
        if synthesized is not None:
            return synthesized(list(timeline))
        return synthesize(timeline, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends, options=options)

    pair = _pair(whole(clips), next_name)
    if pair is None:
        raise ValueError(f"no pair of the synthesis joins clip {next_name!r} (rejected, composed, or the first); "
                         "Give Room moves the clip after a flagged gap")
    before = tuple(pair.quality.flags) if pair.quality is not None else ()
    measure = pair_measure(clips, next_name, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends,
                           options=options)
    fps = measure.ctx.fps
    limit = int(round((options or SynthesisOptions()).give_room_s * fps))
    moving = later_clips(clips, next_name)
    room = Room(pair.prev, next_name, pair.gap, None, limit, fps, tuple(moving), before)
    if not before:
        return replace(room, frames=0, moved=())
    start = next(c for c in clips if c.name == next_name).start
    frames = 1
    while frames <= limit:
        # the pair alone, frame by frame, and the whole timeline where the pair says it would do
        found = measure.least_room(start + frames, limit - frames)
        if found is None:
            break
        frames += found
        after = _pair(whole(moved_clips(clips, moving, frames)), next_name)
        if after is not None and after.quality is not None and not after.quality.flags:
            return replace(room, frames=frames)
        frames += 1
    return replace(room, moved=(), after=tuple(measure.flags(start + limit)))


def give_room_to_every_flagged_gap(clips: Sequence[Clip], *, responsiveness: float = 0.5, rig: Rig | None = None,
                                   pose_ends: str = "eased", options: SynthesisOptions | None = None,
                                   synthesized: Callable[[list[Clip]], Result] | None = None
                                   ) -> tuple[list[Clip], list[Room]]:
    """Give Room to every flagged gap of the synthesis of ``clips`` in order, first gap first, each
    move shifting everything after it: the clips as moved and a :class:`Room` per flagged gap."""
    def whole(timeline):
        if synthesized is not None:
            return synthesized(list(timeline))
        return synthesize(timeline, responsiveness=responsiveness, rig=rig, pose_ends=pose_ends, options=options)

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
