"""Clips on a timeline to one continuous motion (Oshita 2014, section 4; 2008, sections 3-7).

The one entry point the command line and the add-on call is :func:`synthesize`.
Synthesis runs in three stages, the plan the single source of truth:

plan      every decision as data, pair by pair (core.methods.plan_pair: method,
          segments, ranges, weights, alignment, kept and stepping feet);
render    frames from the plan, making no decisions (core.render.render_pair);
contacts  the feet the blended sources hold down stay planted over every gap
          between cores (core.contacts.hold_feet), and each gap is measured
          against the untouched clips (core.quality).

Clips are sorted by start and joined pair by pair (2014, section 4): the
previous motion is everything synthesized so far, the following motion is the
next clip. A clip whose core overlaps the previous clip's core is rejected,
and the plan says which and why.

A clip that lies wholly inside another on the timeline and mainly moves its arms
is an additional motion (2008, section 8): it is left out of the sequence and
composed over the output afterwards (core.compose), one after another when
several are; the plan records each composition. Inside another but not
qualifying, a clip is joined in sequence as any other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .analysis import foot_contacts, horizontal
from .budget import OverBudget, check_budget, current_budget
from .compose import additional_parts, compose, shoulder_angles
from .contacts import PlannedStep, hold_feet
from .methods import SideFeatures, plan_pair
from .motion import Motion, forward_kinematics, resampled_frames, scale_mismatch
from .optimize import blend_weights
from .options import SynthesisOptions
from .plan import (ADAPTATION, ADAPTATION_HOLD, CONNECTION, TRANSITION, Clip, Composition, PairPlan, Plan, Rejection,
                   Result, Segment)
from .quality import (FootLevels, SourceFigures, floors_by_foot, foot_joints, foot_levels, foot_positions, gap_quality,
                      measure_step)
from .render import held_until, render_pair
from .schedule import earliest_start
from .text import counted
from .timeline import Sequencing, Span, sequencing, settled_sequencing
from .rig import Rig, check_legs_hang, detect_up, find_rig, leg_length
from .track import Context, Track

__all__ = ["synthesize", "render", "as_soon_as_possible", "scheduled_start", "Scheduled", "PairMeasure", "pair_measure", "additional_motion_parts", "Clip", "Plan", "PairPlan", "Segment", "Rejection", "Result", "SynthesisOptions",
           "TRANSITION", "CONNECTION", "ADAPTATION", "ADAPTATION_HOLD"]


def synthesize(
    clips: Sequence[Clip], *, responsiveness: float = 0.5, rig: Rig | None = None, pose_ends: str = "eased",
    options: SynthesisOptions | None = None,
) -> Result:
    """One continuous motion from clips on a timeline (2014, section 4).

    responsiveness  W in [0, 1]: 0 most responsive (short blends), 1 smoothest.
    rig             joint roles; found on the first clip when None.
    pose_ends       how a blend meets the motions at its ends:
                    "held"  as in the paper: a pose-to-pose segment blends
                            two held poses, and eq. (16) sets the weight's end
                            slopes so the blend leaves and reaches them at the
                            motions' speed (4.4.1);
                    "eased" (default) each end pose eases out of (into) its own
                            motion, which carries the motion's velocity into the
                            blend exactly (direction as well as speed), so the
                            weight's end slopes are 0: what eq. (16) supplies for
                            a held pose, the eased pose already has. Smoother at
                            the ends (tests/bench/quality.py measures both).
                            Ends where a motion plays on keep eq. (16)'s slopes.
    options         the tuning constants (core.options); the defaults when None.
    """
    clips, ctx, joints, contacts = _prepared(clips, responsiveness, rig, pose_ends, options)
    figures = {id(c): SourceFigures.of(c.motion, ctx.rig, ctx.up, g) for c, g in zip(clips, joints)}
    every = clips

    def join(found: Sequencing):
        seq = [every[k] for k in found.sequence]
        joined = _joined(seq, [contacts[k] for k in found.sequence], ctx)
        gone = {r.clip for r in joined[2]}
        return (seq, joined), [k for k, c in enumerate(every) if c.name in gone]

    # a clip inside one that was rejected goes in sequence, and the sequence is joined again (core.timeline)
    found, (clips, (track, pairs, rejected, joined)) = settled_sequencing(
        clip_spans(every), lambda k: could_be_additional(joints[k], ctx), join)
    additional = [(every[k], every[base]) for k, base in found.additional.items()]
    additional, late = composable(additional)
    rejected = [*rejected, *late]
    motion, pairs, compositions = _finished(clips[0].motion.skeleton, track, pairs, joined[1:], additional, figures,
                                            ctx)
    kept = [c for c in every if c.name not in {r.clip for r in rejected}]
    warnings = bone_length_warnings(kept) + floor_warnings(kept, [figures[id(c)].levels for c in kept], ctx.leg)
    return Result(motion, synthesis_plan(ctx, track, every, pairs, rejected, warnings, compositions), track.contacts)


def synthesis_plan(ctx: Context, track: Track, every: Sequence[Clip], pairs, rejected, warnings, compositions) -> Plan:
    """The plan of a synthesis (:func:`synthesize`, and core.resynthesis's updates)."""
    return Plan(
        fps=ctx.fps,
        responsiveness=ctx.responsiveness,
        start=track.first,
        end=track.last,
        clips=tuple(c.name for c in every),
        pairs=tuple(pairs),
        rejected=tuple(rejected),
        warnings=tuple(warnings),
        compositions=tuple(compositions),
        pose_ends=ctx.pose_ends,
        options=None if ctx.options == SynthesisOptions() else ctx.options,
    )


def render(plan: Plan, clips: Sequence[Clip], *, rig: Rig | None = None) -> Result:
    """The synthesis ``plan`` describes, drawn from ``clips`` without deciding again: the
    output :func:`synthesize` gave when it made the plan, bit for bit (``Plan.from_dict`` of
    its JSON included), and the plan measured anew.

    clips  the clips the plan was made from, by name (``plan.clips``); where they stand
           on the timeline, their cores and ``current`` as then.
    rig    as given to :func:`synthesize` (found on the first clip when None).

    Every pair is rendered as its plan says (core.render.render_pair), the contact stage
    holds the feet over every gap with the plan's steps, and the plan's compositions are
    composed over the output. Clips the plan rejected are left out.
    """
    clips, ctx, joints, contacts = _prepared(clips, plan.responsiveness, rig, plan.pose_ends, plan.options)
    named = {c.name: (c, k) for k, c in enumerate(clips)}
    missing = [name for name in plan.clips if name not in named]
    if missing or len(named) != len(clips):
        raise ValueError(f"render needs the plan's clips by their names {list(plan.clips)}, one each; "
                         + (f"missing {missing}" if missing else "two clips share a name"))
    figures = {id(c): SourceFigures.of(c.motion, ctx.rig, ctx.up, g) for c, g in zip(clips, joints)}
    gone = {r.clip for r in plan.rejected} | {c.clip for c in plan.compositions}
    first = plan.pairs[0].prev if plan.pairs else next(name for name in plan.clips if name not in gone)
    clip, k = named[first]
    track, joined = first_track(clip, contacts[k]), [(clip, clip)]
    for pair in plan.pairs:
        clip, k = named[pair.next]
        track = render_pair(_as_played(track, played_until(track, clip)), clip, contacts[k], pair, ctx)
        joined.append((joined[-1][1], clip))
    additional = [(named[c.clip][0], named[c.base][0]) for c in plan.compositions]
    motion, pairs, compositions = _finished(joined[0][0].motion.skeleton, track, list(plan.pairs), joined[1:],
                                            additional, figures, ctx)
    every = [named[name][0] for name in plan.clips]
    return Result(motion, synthesis_plan(ctx, track, every, pairs, plan.rejected, plan.warnings, compositions),
                  track.contacts)


def as_soon_as_possible(
    clips: Sequence[Clip], new_clip: Clip, *, responsiveness: float = 0.5, t_current: int | None = None,
    rig: Rig | None = None, pose_ends: str = "eased", options: SynthesisOptions | None = None,
) -> int:
    """The start of :func:`scheduled_start` (which also says what of the gap is still flagged there)."""
    return scheduled_start(clips, new_clip, responsiveness=responsiveness, t_current=t_current, rig=rig,
                           pose_ends=pose_ends, options=options).start


def scheduled_start(
    clips: Sequence[Clip], new_clip: Clip, *, responsiveness: float = 0.5, t_current: int | None = None,
    rig: Rig | None = None, pose_ends: str = "eased", options: SynthesisOptions | None = None,
) -> Scheduled:
    """The output frame at which ``new_clip`` starts when run as soon as possible after
    ``clips`` (2014, section 5; 2008, section 3.3); ``new_clip.start`` is ignored.

    The motion synthesized from ``clips`` so far is planned against the new clip, and
    the pair rendered and measured, at several starts (core.schedule.earliest_start:
    the same for every W, from the shortest room up to ``max_blend_s``, the paper's
    fixed interval among them; the one whose delay plus W's price on the gap's peak
    acceleration is least, then pulled earlier until no gap is left between the
    previous core and the blends while that costs no more). Responsiveness W acts as
    in :func:`synthesize` and on that price: a smoother W starts the clip no sooner and
    with no higher a peak, but for how W changes the ranges, and so the peak, at one
    start.

    The start is then delayed by the least number of frames, up to ``options.give_room_s``,
    that keeps the gap under its flag threshold (core.quality) under the same plan, and
    confirmed under W's own plan, the one :func:`synthesize` renders, stepping on while
    that flags the gap (``Scheduled.own_plan``; a smoother W may then start sooner, where
    a less smooth W's own ranges flag a start W = 0.5's do not): a placement the tool
    chooses is not one it then flags, whenever some start within ``give_room_s`` of W's
    choice allows it (``Scheduled.flags`` says what stays flagged when none does).

    t_current  eq. (17): the output frame being played; every blend starts after it,
               so synthesizing ``[*clips, Clip(..., start, current=t_current)]`` leaves
               every frame up to it as the synthesis of ``clips`` alone has it.
    Other arguments as in :func:`synthesize` (the same ones give the same plan).
    """
    if not clips:
        raise ValueError("nothing to run the clip after: give at least one clip before it")
    # placed after everything for the checks (and so last in the order of the cores)
    far = max(c.start + c.motion.n_frames for c in clips) + new_clip.motion.n_frames + 1
    new_clip = replace(new_clip, start=far, current=t_current)
    every, ctx, joints, contacts = _prepared([*clips, new_clip], responsiveness, rig, pose_ends, options)
    new_clip, clip_contacts = every[-1], contacts[-1]
    # additional motions (2008, 8) are composed over the sequence, not joined to it
    before, before_joints, before_contacts, _ = sequenced(every[:-1], joints[:-1], contacts[:-1], ctx)
    track, pairs, _, joined = _joined(before, before_contacts, ctx)
    last_clip = joined[-1][1]
    last_joints = next(g for c, g in zip(before, before_joints) if c is last_clip)
    return earliest_after(track, last_clip, last_joints, new_clip, joints[-1], clip_contacts, ctx,
                          so_far_feet(track, pairs, joined[1:], before, before_joints, ctx))


def so_far_feet(track: Track, pairs: list[PairPlan], joined: list[tuple[Clip, Clip]], clips: Sequence[Clip],
                joints: Sequence[np.ndarray], ctx: Context) -> np.ndarray:
    """The foot joints' positions ``(F, K, 3)`` of ``track`` (everything joined so far, ``pairs``
    between ``joined`` clips) after the contact stage, as synthesize's output has them there."""
    figures = {id(c): SourceFigures.of(c.motion, ctx.rig, ctx.up, g) for c, g in zip(clips, joints)}
    motion = Motion(clips[0].motion.skeleton, track.rotations, track.positions, ctx.fps)
    return foot_positions(_feet_held(motion, track, pairs, joined, figures, ctx), ctx.rig)


def pair_measure(clips: Sequence[Clip], next_name: str, *, responsiveness: float = 0.5, rig: Rig | None = None,
                 pose_ends: str = "eased", options: SynthesisOptions | None = None) -> PairMeasure:
    """The :class:`PairMeasure` of the pair that joins clip ``next_name`` to the clips before it in
    the sequence of ``clips`` (as :func:`synthesize` joins them, same arguments): everything
    before it joined once, the pair then planned and measured alone at any start of its clip.
    Raises ``ValueError`` when no clip of the sequence has that name, or it is the first."""
    every, ctx, joints, contacts = _prepared(clips, responsiveness, rig, pose_ends, options)
    seq, seq_joints, seq_contacts, _ = sequenced(every, joints, contacts, ctx)
    names = [c.name for c in seq]
    if next_name not in names[1:]:
        raise ValueError(f"no pair joins clip {next_name!r}: the clips in sequence are {names}, and the first "
                         "joins nothing")
    i = names.index(next_name)
    track, pairs, _, joined = _joined(seq[:i], seq_contacts[:i], ctx)
    last_clip = joined[-1][1]
    last_joints = seq_joints[seq.index(last_clip)]
    return PairMeasure(track, last_clip, last_joints, seq[i], seq_joints[i], seq_contacts[i], ctx,
                       so_far_feet(track, pairs, joined[1:], seq[:i], seq_joints[:i], ctx))


def _finished(skeleton, track: Track, pairs: list[PairPlan], joined: list[tuple[Clip, Clip]],
              additional: list[tuple[Clip, Clip]], figures: dict, ctx: Context
              ) -> tuple[Motion, list[PairPlan], list[Composition]]:
    """What follows the pairs' rendering, in :func:`synthesize` and :func:`render` alike: the
    output on ``skeleton``, the contact stage over every gap, the additional motions composed,
    each gap measured. The motion, the pairs with their quality and the compositions."""
    motion = Motion(skeleton, track.rotations, track.positions, ctx.fps)
    motion = _feet_held(motion, track, pairs, joined, figures, ctx)
    motion, compositions = composed_additional(motion, track.first, additional, ctx)
    return motion, _measured(motion, track.first, pairs, joined, figures, ctx), compositions


PRICED_W = 0.5  # the W whose plan measures every start as soon as possible weighs (earliest_after)


class PairMeasure:
    """One pair planned, rendered and measured with its next clip at any start, re-planning that
    pair alone: the track of everything before it is rendered once, and each start renders only
    from just before the previous core's end (frames the blends and the contact stage leave alone
    are not rendered again). The figures are the pair's gap as synthesize measures it
    (core.quality), but for the skate's floor levels, taken over this window rather than the
    whole output.

    track       everything before the next clip, before the contact stage (:func:`_joined`'s);
    last_clip, last_joints  the clip the track ends with and its global joint positions;
    new_clip, new_joints, clip_contacts  the next clip (``current`` set, checked as synthesize
                checks it), its joint positions and its contacts;
    ctx         the synthesis's context (its W plans the pair);
    so_far_feet the foot joints' positions (core.quality.foot_positions) of the output so far after
                its contact stage, ``(F, K, 3)`` from ``track.first``; None: the track's own, before it.
    """

    def __init__(self, track: Track, last_clip: Clip, last_joints: np.ndarray, new_clip: Clip,
                 new_joints: np.ndarray, clip_contacts: np.ndarray, ctx: Context,
                 so_far_feet: np.ndarray | None = None):
        self.played = played_until(track, new_clip)
        self.track = _as_played(track, self.played)
        self.last_clip, self.new_clip, self.clip_contacts, self.ctx = last_clip, new_clip, clip_contacts, ctx
        k = measure_step(ctx.fps)
        lo = max(self.played - 2 * k - self.track.first, 0)
        self.window = replace(self.track, rotations=self.track.rotations[lo:], positions=self.track.positions[lo:],
                              contacts=self.track.contacts[lo:], first=self.track.first + lo)
        self.figures = {id(last_clip): SourceFigures.of(last_clip.motion, ctx.rig, ctx.up, last_joints),
                        id(new_clip): SourceFigures.of(new_clip.motion, ctx.rig, ctx.up, new_joints)}
        # Skate is judged against the output's own floor levels (percentiles over every frame):
        # those of the motion so far and of the new clip from its core on, as the output will
        # have them (an alignment turns and moves a clip on the ground, heights stay), not of the
        # window alone, whose few frames put a floor anywhere.
        # The motion so far after its contact stage where the caller has it (``so_far_feet``): the
        # stage keeps feet off the floor they sank below in earlier gaps, and without it the floor
        # of a bow after seven clips lay 0.7 mm lower and its skate read half what synthesize flags.
        feet = foot_joints(ctx.rig)
        held = so_far_feet[: self.played - self.track.first + 1] if so_far_feet is not None else forward_kinematics(
            self.track.rotations[: self.played - self.track.first + 1],
            self.track.positions[: self.played - self.track.first + 1],
            new_clip.motion.skeleton.parents, feet, rotations_out=False)[0]
        self.levels = foot_levels(np.concatenate([held, new_joints[new_clip.core_range[0]:, feet]]) @ ctx.up, ctx.fps)
        # the same start is asked for more than once (its plan, its measure)
        self._plans: dict[int, PairPlan] = {}
        self._measured: dict[int, PairPlan] = {}

    def plan(self, start: int) -> PairPlan:
        """The pair's plan with the next clip starting at output frame ``start``."""
        if start not in self._plans:
            self._plans[start] = plan_pair(self.track, replace(self.new_clip, start=start), self.clip_contacts,
                                           self.ctx)
        return self._plans[start]

    def measured(self, start: int) -> PairPlan:
        """:meth:`plan` at ``start`` with its gap and the gap's quality figures (``quality``)."""
        if start not in self._measured:
            ctx, k = self.ctx, measure_step(self.ctx.fps)
            clip = replace(self.new_clip, start=start)
            gap = (self.played, start + clip.core_range[0])
            pair = replace(self.plan(start), gap=gap)
            out = render_pair(self.window, clip, self.clip_contacts, pair, ctx)
            n = min(gap[1] + k + 1 - out.first, len(out.rotations))
            out = replace(out, rotations=out.rotations[:n], positions=out.positions[:n], contacts=out.contacts[:n])
            motion = Motion(clip.motion.skeleton, out.rotations, out.positions, ctx.fps)
            ids = {id(self.last_clip): self.figures[id(self.last_clip)], id(clip): self.figures[id(self.new_clip)]}
            motion = _feet_held(motion, out, [pair], [(self.last_clip, clip)], ids, ctx)
            (self._measured[start],) = _measured(motion, out.first, [pair], [(self.last_clip, clip)], ids, ctx,
                                                 self.levels)
        return self._measured[start]

    def flags(self, start: int) -> list[str]:
        """What of the gap is flagged (core.quality.GapQuality.flags) with the next clip at ``start``."""
        quality = self.measured(start).quality
        return quality.flags if quality is not None else []

    def least_room(self, start: int, frames: int) -> int | None:
        """The least number of frames, 0 to ``frames``, the next clip must start after ``start`` for its
        gap to be flagged for nothing, searched by whole steps of the measure (core.quality.measure_step:
        a frame at 30 fps, two at 60); None when none does.

        Whole steps, because the measure samples every k-th output frame from the gap's first: a move
        by part of a step would judge the clip on other frames of its own than where it lay, and a
        resampled clip on interpolated ones, smoother than its own (a guide resampled to 60 fps was
        unflagged 7 frames later, flagged 8, unflagged 9, where at 30 fps it needed 5)."""
        return next((d for d in range(0, frames + 1, measure_step(self.ctx.fps)) if not self.flags(start + d)), None)


@dataclass(frozen=True)
class Scheduled:
    """Where a clip run as soon as possible starts (:func:`scheduled_start`), and what of its gap is
    still flagged there (core.quality, under W's own plan, as synthesize will flag it), when no
    start within ``options.give_room_s`` of the one chosen keeps it under its flag threshold: the
    placement then says so."""

    start: int
    flags: tuple[str, ...] = ()
    moved: int = 0  # frames the start was delayed past W's choice to keep the gap unflagged
    # of those, the frames W's own plan moved it from the first start W = PRICED_W's plan leaves
    # unflagged (negative: sooner): ``start - own_plan`` never comes sooner for a smoother W
    own_plan: int = 0


def earliest_after(track: Track, last_clip: Clip, last_joints: np.ndarray, new_clip: Clip, new_joints: np.ndarray,
                   clip_contacts: np.ndarray, ctx: Context, so_far: np.ndarray | None = None) -> Scheduled:
    """:func:`scheduled_start` given the track of everything before the new clip (before the
    contact stage, as :func:`_joined` leaves it), the last clip joined to it and the new clip
    (``current`` set, checked as synthesize checks it), with their global joint positions and
    the new clip's contacts (core.resynthesis keeps them all from its last update); ``so_far``:
    :func:`so_far_feet` of the track, where the caller has them (:class:`PairMeasure`)."""
    # Every W measures the same starts under one plan, W = PRICED_W's: W only prices their
    # peaks, so core.schedule's argument orders the starts by W (a smoother W never starts
    # the clip sooner). Measured under each W's own ranges, a start's peak depended on W,
    # and W = 1 started a walk into a punch 14 frames before W = 0.75.
    priced = replace(ctx, responsiveness=PRICED_W, weights=blend_weights(PRICED_W))
    measure = PairMeasure(track, last_clip, last_joints, new_clip, new_joints, clip_contacts, priced, so_far)

    def peak_at(start: int) -> float:
        # no sample in the gap: nothing there to be rough
        return measure.measured(start).quality.accel or 0.0

    o = ctx.options
    start = earliest_start(measure.plan, peak_at, played=measure.played, lead=new_clip.core_range[0], fps=ctx.fps,
                           responsiveness=ctx.responsiveness, interval_s=o.asap_interval_s,
                           min_blend_s=o.min_blend_s, max_interval_s=o.max_blend_s)
    # A placement the tool chooses must not be one it then flags: the start is delayed by the least
    # number of frames, up to give_room_s, that keeps the gap under its flag threshold (what Give
    # Room would do after). First under the same plan as the peaks, W = PRICED_W's: whether a
    # start is flagged then does not depend on W, and the first unflagged start from a later
    # start is never earlier, so a smoother W still never starts the clip sooner. (Under W's own
    # ranges alone the walk into a punch at W = 0.25 was delayed past W = 0.5's start.)
    limit = int(round(o.give_room_s * ctx.fps))
    delay = measure.least_room(start, limit)
    # Then confirmed under W's own plan, the one synthesize renders: a start W = PRICED_W leaves
    # unflagged can be flagged at another W (a walk into a punch at W = 1: "Hand_R popping 1.8
    # x"), and one it flags may not be (a guide at W = 1), so the start steps on while W's own
    # plan flags it, within the same give_room_s of W's choice.
    own = measure if ctx.responsiveness == PRICED_W else PairMeasure(
        track, last_clip, last_joints, new_clip, new_joints, clip_contacts, ctx, so_far)
    return confirmed_start(own, int(start), int(start) + (delay or 0), limit)


def confirmed_start(measure: PairMeasure, chosen: int, first: int, limit: int) -> Scheduled:
    """The first start from ``first`` on, within ``limit`` frames of ``chosen`` (W's choice), whose gap
    ``measure`` flags for nothing; else the first from ``chosen`` on; else ``chosen``, with what of its
    gap stays flagged. ``first`` is where the search under W = PRICED_W's plan stopped."""
    delay, found = measure.least_room(first, chosen + limit - first), first
    if delay is None and first > chosen:
        delay, found = measure.least_room(chosen, first - chosen - 1), chosen
    if delay is None:
        return Scheduled(chosen, tuple(measure.flags(chosen)), 0, chosen - first)
    return Scheduled(found + delay, (), found + delay - chosen, found + delay - first)


def _prepared(clips: Sequence[Clip], responsiveness: float, rig: Rig | None, pose_ends: str,
              options: SynthesisOptions | None) -> tuple[list[Clip], Context, list[np.ndarray], list[np.ndarray]]:
    """The clips checked and in the order of their cores, the synthesis's context, each
    clip's joint positions and its contacts (2008, 4.1)."""
    if pose_ends not in ("eased", "held"):
        raise ValueError(f"pose_ends must be 'eased' or 'held', got {pose_ends!r}")
    clips = checked_in_core_order(clips)
    # each clip's joints once: the up axis, its contacts (2008, 4.1) and its own figures (core.quality)
    joints = [forward_kinematics(c.motion.rotations, c.motion.positions, c.motion.skeleton.parents,
                                 rotations_out=False)[0] for c in clips]
    ctx = synthesis_context(clips[0].motion, joints[0], responsiveness, rig, pose_ends, options)
    for c, g in zip(clips, joints):
        check_legs_hang(c.motion, ctx.rig, clip=f"clip '{c.name}'", positions=g)
    contacts = [foot_contacts(c.motion, ctx.rig, up=ctx.up, positions=g) for c, g in zip(clips, joints)]
    return clips, ctx, joints, contacts


def synthesis_context(first: Motion, first_joints: np.ndarray, responsiveness: float, rig: Rig | None,
                      pose_ends: str, options: SynthesisOptions | None) -> Context:
    """The context of a synthesis whose first clip (in the order of the cores) is ``first``, with
    its global joint positions ``first_joints``: the rig found on it when None, and its up axis."""
    weights = blend_weights(responsiveness)
    rig = rig or find_rig(first)
    up = detect_up(first, rig, first_joints)
    return Context(
        rig=rig,
        up=up,
        fps=first.fps,
        leg=0.5 * (leg_length(first.skeleton, rig, "L") + leg_length(first.skeleton, rig, "R")),
        lower=rig.lower_body_mask(first.skeleton),
        weights=weights,
        responsiveness=float(responsiveness),
        pose_ends=pose_ends,
        options=options or SynthesisOptions(),
    )


def sequenced(clips: list[Clip], joints: list[np.ndarray], contacts: list[np.ndarray], ctx: Context, *,
              in_sequence: set[int] = frozenset(), qualifies: Sequence[bool] | None = None
              ) -> tuple[list[Clip], list[np.ndarray], list[np.ndarray], list[tuple[Clip, Clip]]]:
    """The clips joined in sequence (with their joint positions and contacts), and the
    additional motions as (clip, the sequence clip it lies inside) (2008, 3.2 and 8.1), as
    core.timeline.sequencing decides over the clips' spans.

    in_sequence  ``id``s of clips that go in sequence whatever they are.
    qualifies    per clip, :func:`could_be_additional` when already at hand.
    """
    found = sequencing(clip_spans(clips),
                       lambda i: could_be_additional(joints[i], ctx) if qualifies is None else qualifies[i],
                       in_sequence=[i for i, c in enumerate(clips) if id(c) in in_sequence])
    kept = found.sequence
    return ([clips[i] for i in kept], [joints[i] for i in kept], [contacts[i] for i in kept],
            [(clips[i], clips[base]) for i, base in found.additional.items()])


def clip_spans(clips: Sequence[Clip]) -> list[Span]:
    """Each clip's frames on the output timeline, as core.timeline's rules read them."""
    return [Span(c.name, c.start, c.end) for c in clips]


def could_be_additional(positions: np.ndarray, ctx: Context) -> bool:
    """Whether a clip (its global joint positions) may be an additional motion when it lies
    inside another (2008, 8.1): its body stays in place and it mainly moves its arms."""
    return bool(_additional(positions, ctx.rig, ctx.up, ctx.leg, ctx.options))


def additional_motion_parts(motion: Motion, rig: Rig | None = None, *, options: SynthesisOptions | None = None
                            ) -> str | None:
    """The parts ``motion`` lends as an additional motion when it lies wholly inside
    another clip (2008, 8.1: RIGHT_ARM, LEFT_ARM or UPPER_BODY), None when such a clip
    goes in sequence: what :func:`synthesize` decides for it, from the clip alone.

    A motion qualifies when its body stays in place and a shoulder angle ranges over
    ``options.additional_shoulder_deg``. Whether it is then composed also depends on
    the timeline (its base is in the sequence, not rejected): the plan's compositions
    say. ``rig`` is found on ``motion`` when None.
    """
    rig = rig or find_rig(motion)
    joints = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)[0]
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    return _additional(joints, rig, detect_up(motion, rig, joints), leg, options or SynthesisOptions())


def _additional(positions: np.ndarray, rig: Rig, up: np.ndarray, leg: float, options: SynthesisOptions) -> str | None:
    """:func:`additional_motion_parts` of a clip's global joint ``positions`` (F, J, 3)."""
    if not _stays_in_place(positions, rig, up, leg, options):
        return None
    return additional_parts(shoulder_angles(positions, rig), threshold_deg=options.additional_shoulder_deg)


def _stays_in_place(positions: np.ndarray, rig: Rig, up: np.ndarray, leg: float, options: SynthesisOptions) -> bool:
    """Whether a clip's body stays in place (2008, 8: an additional motion mainly moves the
    upper body): its pelvis never goes further across the floor than additional_travel
    leg lengths from where it starts. ``positions``: its global joint positions."""
    pelvis = positions[:, rig.pelvis]
    travel = np.linalg.norm(horizontal(pelvis - pelvis[0], up), axis=-1).max(initial=0.0)
    return bool(travel <= options.additional_travel * leg)


def composable(additional: list[tuple[Clip, Clip]]) -> tuple[list[tuple[Clip, Clip]], list[Rejection]]:
    """The additional motions that may be composed, and a rejection for each of the others.

    Eq. (17) holds for composition as for blends in sequence: a clip added while
    the output up to ``current`` was being played may change no frame up to it,
    and composition changes the output from the clip's first frame on, so such a
    clip composes only when it starts after ``current``.
    """
    kept, late = [], []
    for clip, base in additional:
        if clip.current is not None and clip.start <= clip.current:
            late.append(Rejection(clip.name, (
                f"it starts at output frame {clip.start}, inside '{base.name}', but frames up to {clip.current} "
                f"had been played when it was added (eq. 17); start '{clip.name}' after frame {clip.current}")))
        else:
            kept.append((clip, base))
    return kept, late


def composed_additional(motion: Motion, first: int, additional: list[tuple[Clip, Clip]], ctx: Context
                        ) -> tuple[Motion, list[Composition]]:
    """Each additional motion composed over the output, one after another (2008, 3.2 and 8)."""
    compositions = []
    for clip, base in additional:
        # the base clip's tail may play time-scaled shorter (eqs. 1, 3), so the output can end
        # before the span the additional motion was placed in: it plays up to that end
        inside = first + motion.n_frames - clip.start
        if inside < 2:
            continue  # (nothing of it left to compose over)
        parts = None
        if inside < clip.motion.n_frames:
            # (what it lends is decided on the whole clip: the part left may no longer swing an
            # arm over the threshold, and must still be composed, not dropped)
            g = forward_kinematics(clip.motion.rotations, clip.motion.positions, clip.motion.skeleton.parents,
                                   rotations_out=False)[0]
            parts = additional_parts(shoulder_angles(g, ctx.rig), threshold_deg=ctx.options.additional_shoulder_deg)
            clip = replace(clip, motion=clip.motion[:inside], core=None)
        motion, record = compose(motion, first, clip, ctx.rig, ctx.up, threshold_deg=ctx.options.additional_shoulder_deg,
                                 blend_s=ctx.options.composition_blend_s, base_name=base.name, parts=parts)
        compositions.append(record)
    return motion, compositions


def played_until(track: Track, clip: Clip) -> int:
    """The last output frame a blend into ``clip`` may not change: the previous core's end,
    or with eq. (17) the frame after ``clip.current`` when that is later (a blend may
    start after t_current only, 2014 section 5)."""
    return track.core_end if clip.current is None else max(track.core_end, int(clip.current) + 1)


def _as_played(track: Track, played: int) -> Track:
    """The track as the next pair sees it: the frames up to ``played`` as fixed as a core
    (eq. 17), and a current time after its end reached by holding its last pose (what
    the output shows there while nothing new has started, as for a gap before a blend)."""
    return replace(held_until(track, played), core_end=played)


def _joined(clips: list[Clip], contacts: list[np.ndarray], ctx: Context
            ) -> tuple[Track, list[PairPlan], list[Rejection], list[tuple[Clip, Clip]]]:
    """Plan and render pair by pair (2014, 4): the track, the pairs, the rejected clips and the
    (previous clip, next clip) of each pair after a first ``(clips[0], clips[0])``."""
    track = first_track(clips[0], contacts[0])
    pairs, rejected, joined = [], [], [(clips[0], clips[0])]  # joined: (previous clip, next clip) per pair
    # clips come in the order of their cores; one is left out only when its core overlaps an
    # accepted one (the last accepted, as accepted cores do not overlap)
    accepted_core = (clips[0].start + clips[0].core_range[0], track.core_end)
    for clip, clip_contacts in zip(clips[1:], contacts[1:]):
        track, accepted_core, outcome = join_clip(track, accepted_core, clip, clip_contacts, ctx)
        if isinstance(outcome, Rejection):
            rejected.append(outcome)
            continue
        pairs.append(outcome)
        joined.append((joined[-1][1], clip))
    return track, pairs, rejected, joined


def first_track(clip: Clip, contacts: np.ndarray) -> Track:
    """The track before any pair: the first clip as it is."""
    return Track(
        rotations=np.array(clip.motion.rotations),
        positions=np.array(clip.motion.positions),
        contacts=contacts.copy(),
        first=clip.start,
        core_end=clip.start + clip.core_range[1],
        name=clip.name,
        core_start=clip.start + clip.core_range[0],
    )


def join_clip(track: Track, accepted_core: tuple[int, int], clip: Clip, clip_contacts: np.ndarray, ctx: Context, *,
              following: SideFeatures | None = None) -> tuple[Track, tuple[int, int], PairPlan | Rejection]:
    """One step of :func:`_joined`: ``clip`` planned and rendered after ``track`` (whose last
    accepted core is ``accepted_core``, output frames), or the reason it is rejected (the
    track then unchanged). Returns the track, the last accepted core and the pair or rejection.
    ``following``: the clip's :func:`core.methods.following_features` when the caller keeps them."""
    core_begin = clip.start + clip.core_range[0]
    if core_begin <= track.core_end:
        return track, accepted_core, Rejection(clip.name, (
            f"its core (output frames {core_begin}..{clip.start + clip.core_range[1]}) overlaps the core of "
            f"'{track.name}' (output frames {accepted_core[0]}..{accepted_core[1]}); move '{clip.name}' so its "
            f"core starts after frame {track.core_end}, or shorten one of the cores"))
    # eq. (17): the frames played when the clip was added are as fixed as a core; the
    # planning and the contact stage see them as the previous core's end
    played = played_until(track, clip)
    if core_begin <= played:
        return track, accepted_core, Rejection(clip.name, (
            f"its core starts at output frame {core_begin}, but frames up to {clip.current} had been played "
            f"when it was added (eq. 17); start '{clip.name}' so its core starts after frame {played}"))
    accepted_core = (core_begin, clip.start + clip.core_range[1])
    track = _as_played(track, played)
    pair = plan_pair(track, clip, clip_contacts, ctx, following=following)
    room = core_begin - played - 1
    if room < ctx.options.min_blend_frames(ctx.fps):  # (to the nearest frame, as default cores leave it)
        pair = replace(pair, warning=(
            f"the cores of '{track.name}' (to frame {played}) and '{clip.name}' (from frame "
            f"{core_begin}) leave {counted(max(room, 0), 'frame')} to blend in, less than {ctx.options.min_blend_s:g} s: expect a "
            f"jump there; start '{clip.name}' later or shorten one of the cores"))
    pair = replace(pair, gap=(played, core_begin))
    track = render_pair(track, clip, clip_contacts, pair, ctx)
    return track, accepted_core, pair


def _feet_held(motion: Motion, track: Track, pairs: list[PairPlan], joined: list[tuple[Clip, Clip]], figures: dict,
               ctx: Context) -> Motion:
    """The contact stage (core.contacts) over every gap between cores; the floor of each gap
    the lower of its two clips' own (each clip keeps its floor, 2008 4.2)."""
    if not pairs:
        return motion
    floors = [gap_floors(figures[id(prev)], figures[id(nxt)], ctx.rig) for prev, nxt in joined]
    steps = [planned_steps(p) for p in pairs]
    motion = hold_feet(motion, track.first, track.contacts, [p.gap for p in pairs], ctx.rig, up=ctx.up, leg=ctx.leg,
                       floors=floors, steps=steps, options=ctx.options.contacts, pelvis_down=True)
    return motion


def gap_floors(prev: SourceFigures, nxt: SourceFigures, rig: Rig) -> np.ndarray:
    """The ``(2, 2)`` floor of a gap: the lower of its two clips' own (each clip keeps its floor, 2008 4.2)."""
    return floors_by_foot(np.minimum(prev.levels.floor, nxt.levels.floor), rig)


def planned_steps(pair: PairPlan) -> dict:
    """The steps the contact stage draws in a pair's gap: ``{foot: [PlannedStep, ...]}``.

    A step or a glide, each as its segment has it (its frames, where it lands, how high it
    rises), and a kept foot released onto its own swing (eq. 5): each leaves its hold before
    it travels (the contact stage draws the way); a swing is in the air already, bent by the
    render."""
    planned = {}
    for s in pair.segments:
        if s.foot and s.blend not in ("deformation", "swing"):
            to, lift = (np.asarray(s.way[1]), float(s.way[2])) if s.way else (None, None)
            planned.setdefault(("left", "right").index(s.foot), []).append(
                PlannedStep(s.start, s.end, to, lift, s.blend == "glide"))
    return planned


def _measured(motion: Motion, first: int, pairs: list[PairPlan], joined: list[tuple[Clip, Clip]], figures: dict,
              ctx: Context, levels: FootLevels | None = None) -> list[PairPlan]:
    """Each pair with its gap's quality figures against the untouched clips (core.quality);
    ``figures``: each clip's own (:class:`core.quality.SourceFigures`) by ``id``."""
    if not pairs:
        return pairs
    feet = foot_positions(motion, ctx.rig)
    levels = levels if levels is not None else foot_levels(feet @ ctx.up, ctx.fps)
    return [replace(p, quality=gap_quality(motion, first, p.gap, up=ctx.up, leg=ctx.leg, output_feet=feet,
                                           output_levels=levels,
                                           sources=[(figures[id(prev)], prev.start), (figures[id(nxt)], nxt.start)]))
            for p, (prev, nxt) in zip(pairs, joined)]


# Bones of clips on "the same" skeleton (same names and hierarchy) may still differ in
# length: another performer, another calibration. Beyond this share the plan says so.
BONE_LENGTH_TOLERANCE = 0.02


def bone_length_warnings(clips: Sequence[Clip], *, blend: bool = False) -> list[str]:
    """A warning for each clip whose bones differ in length from the first clip's by more
    than BONE_LENGTH_TOLERANCE, naming them: the output is on the first clip's skeleton, so
    such a clip's core keeps its joint rotations but not its joint positions. ``blend``: the
    clips are blended at the same time (core.mkm), where a clip has no core: such a clip takes
    part in the blend with its joint rotations."""
    if not clips:  # (a file given twice under one name, one copy rejected: the filter by name takes both)
        return []
    ref = clips[0]
    lengths = np.linalg.norm(ref.motion.skeleton.offsets, axis=-1)
    lengths[0] = 0.0  # the root's offset is where the skeleton stands, not a bone
    warnings = []
    for clip in clips[1:]:
        own = np.linalg.norm(clip.motion.skeleton.offsets, axis=-1)
        change = (own - lengths) / np.where(lengths > 0, lengths, 1.0)
        off = [j for j in np.argsort(-np.abs(change)) if lengths[j] > 0 and abs(change[j]) > BONE_LENGTH_TOLERANCE]
        if not off:
            continue
        every = np.flatnonzero(lengths > 0)
        if len(off) == len(every) and np.ptp(change[every]) <= BONE_LENGTH_TOLERANCE:
            names = f"every bone {100 * np.median(change[every]):+.0f} %: another performer's size, or another unit"
        else:
            names = ", ".join(f"{clip.motion.skeleton.names[j]} {100 * change[j]:+.0f} %" for j in off[:6])
            names += f" and {len(off) - 6} more" if len(off) > 6 else ""
        kept = (f"'{clip.name}' is blended by its joint rotations" if blend else
                f"the core of '{clip.name}' keeps its joint rotations")
        warnings.append(
            f"clip '{clip.name}' has bones of other lengths than '{ref.name}' ({names}); the output is on the "
            f"skeleton of '{ref.name}', so {kept} but not its joint positions")
    return warnings


# A clip whose feet stand this many leg lengths higher or lower than the first clip's does not fit the
# skeleton it is played on: its root's height was captured on legs of another length (another performer),
# and its feet float or sink (an action in Blender carries no bone lengths to compare, as
# bone_length_warnings does). The feet's floor of 130 clips of one performer (../shared/mocap/bandai1,
# each on its own skeleton) spreads over 0.026 leg lengths (a dash lands lower on its toes): twice that
# keeps them all quiet and catches a body 5 % larger or smaller, whose pelvis stands about 0.05 legs
# higher or lower (docs/design.md).
FLOOR_TOLERANCE = 0.05  # leg lengths


def floor_warnings(clips: Sequence[Clip], levels: Sequence, leg: float) -> list[str]:
    """A warning for each clip whose feet stand higher or lower than the first clip's by more than
    FLOOR_TOLERANCE leg lengths: the lowest of its foot joints' floor levels (``levels``, each clip's
    core.quality.FootLevels, on the skeleton it is played on) against the first clip's. ``leg``: the
    leg length, in the clips' unit."""
    if len(clips) < 2:
        return []
    floors = np.array([level.floor.min() for level in levels])
    off = (floors - floors[0]) / leg
    warnings = []
    for clip, shift in zip(clips[1:], off[1:]):
        if abs(shift) <= FLOOR_TOLERANCE:
            continue
        how = "float" if shift > 0 else "sink"
        warnings.append(
            f"the feet of '{clip.name}' {how} {abs(shift):.2f} leg lengths {'above' if shift > 0 else 'below'} "
            f"where those of '{clips[0].name}' stand: its root's height does not fit these legs, as when it was "
            f"captured on a body {'larger' if shift > 0 else 'smaller'} than this skeleton (same bone names, "
            f"other lengths); retarget it to this skeleton, or give it the skeleton it was captured on")
    return warnings


# What a synthesis holds at its peak per output frame and joint: the track, time warps, blends,
# the contact stage and the quality figures over a gap (measured with tracemalloc: 392 bytes
# over a gap of 20,000 frames between two Bandai Namco clips; a long clip alone, 165).
SYNTHESIS_BYTES_PER_FRAME_JOINT = 400
# A clip held for a synthesis, per frame and joint: its motion (7 doubles) and its joint positions (3).
CLIP_BYTES_PER_FRAME_JOINT = 80


def synthesis_bytes(frames: int, joints: int, clip_frames: int = 0) -> int:
    """Bytes a synthesis of ``frames`` output frames on ``joints`` joints holds at its peak, its
    clips (``clip_frames`` in all) held with their joint positions besides."""
    return (SYNTHESIS_BYTES_PER_FRAME_JOINT * int(frames) + CLIP_BYTES_PER_FRAME_JOINT * int(clip_frames)) * int(joints)


def output_span(spans: Sequence[tuple[int, int]], current: int | None = None) -> tuple[int, int]:
    """The first and last output frame of a synthesis of clips playing ``spans`` (each its start
    and its frame count at the output's rate): the output runs from the first clip's first frame
    to the last one's last frame, and past a current frame (eq. 17), whose frames the output
    holds up to it and a blend may start only after."""
    first = min(start for start, _ in spans)
    last = max(start + frames - 1 for start, frames in spans)
    return first, max(last, first if current is None else int(current) + 1)


def check_synthesis_size(spans: Sequence[tuple[int, int]], joints: int, current: int | None = None) -> None:
    """Refuse (core.budget) a synthesis whose output the memory budget cannot hold, before any
    of it is made; ``spans``, ``current`` as :func:`output_span`."""
    first, last = output_span(spans, current)
    frames = last - first + 1
    reach = f", past the current frame {current:,}" if current is not None and last == current + 1 else ""
    check_budget("the synthesis", synthesis_bytes(frames, joints, sum(n for _, n in spans)),
                 f"{frames:,} output frames, from frame {first:,} to {last:,}{reach}, x {joints} joints",
                 remedy="place the clips closer together" + (" and nearer the current frame" if reach else ""))


def unique_names(names: list[str]) -> list[str]:
    """``names`` with a repeated one numbered from its second time on (``walk``, ``walk #2``):
    the same file given twice is two clips."""
    taken, count, out = set(names), {}, []
    for name in names:
        count[name] = count.get(name, 0) + 1
        label = name
        if count[name] > 1:
            # (never a name given too: walk, "walk #2" and walk again are walk, walk #2, walk #3)
            k = count[name]
            while f"{name} #{k}" in taken:
                k += 1
            label = f"{name} #{k}"
            taken.add(label)
        out.append(label)
    return out


def checked_in_core_order(clips: Sequence[Clip], resample=None) -> list[Clip]:
    """The clips named, checked (one skeleton, at one scale: core.motion.scale_mismatch),
    resampled to the first clip's rate (``resample(motion, fps)``, Motion.resampled when None)
    and in the order of their cores."""
    if not clips:
        raise ValueError("nothing to synthesize: give at least one clip")
    clips = [c if c.name else replace(c, name=f"clip {i + 1}") for i, c in enumerate(clips)]
    ref = clips[0].motion
    for c in clips:
        m = c.motion
        if m.n_frames == 0:
            raise ValueError(f"clip '{c.name}' has no frames")
        if m.skeleton is not ref.skeleton and (m.skeleton.names != ref.skeleton.names
                                               or not np.array_equal(m.skeleton.parents, ref.skeleton.parents)):
            raise ValueError(
                f"clip '{c.name}' is on another skeleton than '{clips[0].name}' "
                f"({len(m.skeleton)} joints vs {len(ref.skeleton)}); all clips must share one skeleton")
        if m.skeleton is not ref.skeleton:
            other_scale = scale_mismatch(m.skeleton, ref.skeleton, f"clip '{c.name}'", f"'{clips[0].name}'")
            if other_scale:
                raise ValueError(other_scale)
        if c.blend_s is not None and not (np.isfinite(c.blend_s) and c.blend_s > 0):
            raise ValueError(f"clip '{c.name}': blend length {c.blend_s!r} s; give a positive number of seconds, "
                             "or none for the automatic length")
        lo, hi = c.core_range
        if lo > hi:
            raise ValueError(f"clip '{c.name}': core {lo}..{hi} ends before it starts; give its first frame, then "
                             f"its last (e.g. {hi}..{lo})")
        if not 0 <= lo <= hi < m.n_frames:
            raise ValueError(
                f"clip '{c.name}': core {lo}..{hi} is not inside its frames 0..{m.n_frames - 1}")
    # (np.isclose(fps, ref.fps, rtol=1e-4) on two numbers, without its dispatch: every live update checks)
    at_rate = [c.motion.fps == ref.fps or abs(c.motion.fps - ref.fps) <= 1e-8 + 1e-4 * abs(ref.fps) for c in clips]
    spans = []
    for c, same in zip(clips, at_rate):
        frames = c.motion.n_frames if same else resampled_frames(c.motion.n_frames, c.motion.fps, ref.fps)
        size = synthesis_bytes(frames, len(ref.skeleton))
        if not same and size > current_budget():
            # (before the synthesis's size: a clip that alone exceeds the budget once resampled
            # is a mistake in a frame rate, and the message names it)
            raise OverBudget(f"clip '{c.name}' at {c.motion.fps:g} fps, resampled to the first clip's {ref.fps:g} "
                             f"fps,", size, current_budget(), f"{frames:,} frames x {len(ref.skeleton)} joints",
                             f"check its frame rate, or resample it to {ref.fps:g} fps before synthesizing")
        spans.append((c.start, frames))
    check_synthesis_size(spans, len(ref.skeleton), max((c.current for c in clips if c.current is not None),
                                                       default=None))
    out = []
    for c, same in zip(clips, at_rate):
        if not same:
            # a clip at another rate is resampled, and its start and core kept in seconds
            scale = ref.fps / c.motion.fps
            m = c.motion.resampled(ref.fps) if resample is None else resample(c.motion, ref.fps)
            lo, hi = c.core_range
            core = (min(int(round(lo * scale)), m.n_frames - 1), min(int(round(hi * scale)), m.n_frames - 1))
            c = replace(c, motion=m, core=core if c.core is not None else None)
        out.append(c)
    # in the order of their cores (a clip may start earlier than another and still have
    # its core after the other's: the NLA lays out long lead-ins that way)
    return sorted(out, key=lambda c: (c.start + c.core_range[0], c.start))
