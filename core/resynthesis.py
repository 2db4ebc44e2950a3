"""Live re-synthesis: the result of :func:`core.synthesize.synthesize`, redoing only what a change touches.

While the user drags a strip, the timeline is synthesized again and again with
one clip moved a few frames. :class:`Resynthesis` keeps what the last update
computed and, on the next, redoes only the work the change reaches (issue 11,
"live re-synthesis": re-plan only from the first pair the change touches). Its
output is synthesize's, up to float rounding (the tests compare both on random
edits of a real timeline).

What is kept, and why reusing it is exact
-----------------------------------------
A clip is *unchanged* when it is the same ``Motion`` object (identity; a
reference is kept, so an id is never reused) with the same start, core,
current time, name and blend length. Another responsiveness, rig, pose ends or options, or
another first clip (whose rig, up axis and leg length every pair shares),
start afresh.

1. **Per clip** (forward kinematics, contacts, its own quality figures, and
   whether it could be an additional motion): computed once per ``Motion``;
   what planning reads of it as a pair's following clip, its frames up to its
   core (``methods.SideFeatures``, taken frame by frame, so the same wherever
   the clip is placed): once per ``Motion`` and core start.
2. **Pairs before the change.** The clips are joined in the order of their
   cores, each pair seeing the track of everything before it
   (``synthesize.join_clip``). Step ``i`` depends only on clips ``0..i``, so the
   steps up to the first changed clip are kept as they are, track included.
3. **Pairs after the change, moved rigidly.** From a clip's last blended frame
   on (``render.rendered_until``), the track *is* that clip, turned about
   ``up`` and moved on the ground by its alignment (``align.Alignment``,
   carried by the pelvis joint). A pair reads the track only from
   ``read_from`` on: one frame before the previous core's end, less the body
   orientation's window (``orientation_window_s``, ``methods._align``) and
   the step pace's window from the track's end (``step_window_s``,
   ``methods._step_pace``). When that lies inside the previous clip's rigid
   part, in the old synthesis and in the new one, the pair's two inputs differ
   only by a rigid motion ``D`` (new placement of the previous clip after the
   old one's inverse). Every decision of the plan is invariant under it
   (features are taken in body frames, orientations are angles about ``up``,
   heights and ground distances do not change), and every frame is
   equivariant: slerps and linear blends commute with a rotation, the time
   warps do not look at space, the legs' IK targets move with the body. So the
   old pair is reused with ``D`` applied: its alignment composed with ``D``,
   its steps' ways moved by ``D``, its frames from the previous clip's rigid
   part on moved by ``D`` on the pelvis joint. Where the condition fails (a
   previous core shorter than the windows) the pair is planned anew.
4. **Contact stage, per gap.** ``contacts.hold_feet`` works frame by frame
   inside each gap, so it runs on one gap alone (on the output's skeleton).
   One thing differs from the all-gaps call in principle only: the last bit
   of a transcendental function numpy evaluates in blocks of another length
   (the knee directions the IK carries through a straight leg stay within a
   run of consecutive solved frames, which cores part, and each hold's fade
   within its run). It changes only the legs' joint rotations, which are
   local, so the same under ``D``; floors are heights. A gap whose frames are
   old ones (as they are, or moved by ``D``) keeps its held legs.
5. **Quality figures.** A gap's peak acceleration and the untouched clips'
   figures are invariant under ``D``; its skate is measured against the whole
   output's floor level (a percentile over every frame), so it is measured
   again whenever those levels change. Compositions (2008, 8) are composed
   anew over the whole output on every update (cheap), over rotations
   normalised exactly as synthesize's, and then every gap is measured anew,
   as the composition may reach into it. (Composition is well-conditioned
   since its leg-safe share became continuous at a leg's limit and its legs'
   IK got poles of their own, docs/design.md; before, a rounding difference
   could turn a knee another way, and an update differed from synthesize by
   up to 0.11 body heights on fuzzed timelines.)

The reuse is exact in arithmetic. In floating point a reused frame differs from
a fresh one by rounding (1e-14 of the body's size), and frames planned anew
after reused ones inherit it, magnified where a leg is nearly straight (the IK's
knee direction): up to about 1e-8 body heights, as much as synthesize itself
moves when its first clip is moved rigidly (tests/core/test_resynthesis.py). A
plan decision sitting exactly on a threshold could go the other way under such
rounding; none did in the tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from . import quat
from .align import Alignment
from .analysis import foot_contacts
from .contacts import hold_feet
from .methods import SideFeatures, following_features
from .motion import Motion, forward_kinematics
from .optimize import blend_weights
from .options import SynthesisOptions
from .plan import Clip, PairPlan, Rejection, Result
from .quality import SourceFigures, foot_joints, foot_levels, foot_positions, gap_quality, gap_skate, measure_step
from .render import blend_start, rendered_until
from .rig import Rig, check_legs_hang
from .synthesize import (bone_length_warnings, checked_in_core_order, composable, composed_additional,
                         could_be_additional, earliest_after, first_track, floor_warnings, gap_floors, join_clip,
                         planned_steps, played_until, clip_spans, Scheduled, synthesis_context, synthesis_plan)
from .timeline import settled_sequencing
from .track import Context, Track

__all__ = ["Resynthesis", "UpdateStats"]


@dataclass(frozen=True)
class UpdateStats:
    """What one :meth:`Resynthesis.update` did.

    planned   pairs planned and rendered anew;
    kept      pairs before the change, kept as they were;
    moved     pairs after the change, reused moved rigidly (see the module docstring);
    prepared  clips prepared anew (forward kinematics, contacts, figures);
    held      gaps whose feet the contact stage held anew;
    measured  gaps measured anew in full (the others keep their figures or re-read their skate);
    seconds   wall time of the update;
    unchanged the timeline was the last one: the last result came back as it was.
    """

    planned: int = 0
    kept: int = 0
    moved: int = 0
    prepared: int = 0
    held: int = 0
    measured: int = 0
    seconds: float = 0.0
    unchanged: bool = False


@dataclass(frozen=True)
class _Prepared:
    """One clip's own analysis (the motion kept so that its ``id`` stays its own)."""

    motion: Motion
    joints: np.ndarray  # (F, J, 3) global joint positions
    contacts: np.ndarray  # (F, 2)
    figures: SourceFigures
    qualifies: bool  # could be an additional motion (synthesize.could_be_additional)


class _TrackRef:
    """A track, or how to make it: ``base`` up to timeline frame ``at``, then ``source`` from
    ``at`` on moved by ``move`` (carried by the pelvis). Made on demand, once."""

    def __init__(self, track: Track | None = None, *, base: "_TrackRef | None" = None, at: int = 0,
                 source: "_TrackRef | None" = None, move: Alignment | None = None, core: tuple[int, int] = (0, 0),
                 name: str = ""):
        self._track, self.base, self.at, self.source, self.move = track, base, at, source, move
        self.core, self.name = core, name

    @property
    def made(self) -> bool:
        return self._track is not None

    def get(self, body: tuple) -> Track:
        """The track; ``body``: (skeleton, pelvis joint, fps) of the output."""
        if self._track is None:
            skeleton, pelvis, fps = body
            base, source = self.base.get(body), self.source.get(body)
            a, s = self.at - base.first, self.at - source.first
            rotations = np.concatenate([base.rotations[:a], source.rotations[s:]])
            positions = np.concatenate([base.positions[:a], source.positions[s:]])
            _move_pelvis(rotations[a:], positions[a:], self.move, skeleton, pelvis)
            self._track = Track(rotations=rotations, positions=positions,
                                contacts=np.concatenate([base.contacts[:a], source.contacts[s:]]),
                                first=base.first, core_end=self.core[1], name=self.name, core_start=self.core[0])
            self.base = self.source = None  # (no longer needed)
        return self._track

    def moved(self, base: "_TrackRef", at: int, move: Alignment, core: tuple[int, int], name: str) -> "_TrackRef":
        """This track from ``at`` on moved by ``move``, after ``base`` up to ``at``. A recipe whose
        source is itself a recipe from no later than ``at`` is folded into one (so chains of
        updates never stack recipes)."""
        if self._track is None and self.at <= at:
            return _TrackRef(base=base, at=at, source=self.source, move=_after(move, self.move), core=core, name=name)
        return _TrackRef(base=base, at=at, source=self, move=move, core=core, name=name)


def _move_pelvis(rotations: np.ndarray, positions: np.ndarray, move: Alignment, skeleton, pelvis: int) -> None:
    """Poses ``(T, J, 4), (T, J, 3)`` moved by ``move`` carried by the pelvis joint, in place:
    :meth:`Alignment.apply`'s arithmetic on the pelvis's column alone (the rest stays)."""
    parent = skeleton.parents[pelvis]
    if parent < 0:
        moved = move.apply(Motion.unchecked(skeleton, rotations, positions, 1.0), pelvis)
        rotations[:], positions[:] = moved.rotations, moved.positions
        return
    gpos, grot = forward_kinematics(rotations, positions, skeleton.parents, [parent])
    parent_rot, parent_pos = grot[:, 0], gpos[:, 0]
    turn = move.rotation
    world_rot = quat.mul(turn, quat.mul(parent_rot, rotations[:, pelvis]))
    world_pos = quat.mul_vec(turn, quat.mul_vec(parent_rot, positions[:, pelvis]) + parent_pos) + move.translation
    rotations[:, pelvis] = quat.inv_mul(parent_rot, world_rot)
    positions[:, pelvis] = quat.inv_mul_vec(parent_rot, world_pos - parent_pos)


@dataclass
class _Step:
    """One clip joined to the track (the first clip: the track itself)."""

    key: tuple
    clip: Clip
    outcome: PairPlan | Rejection | None  # None for the first clip
    track: _TrackRef  # the track after this step
    accepted_core: tuple[int, int]
    last: Clip  # the last accepted clip after this step
    placement: Alignment  # where ``last`` was placed (its pair's alignment)
    rigid_from: int  # output frame from which the track is ``last`` rigidly placed
    prev: Clip | None = None  # a pair: the previous accepted clip
    read_from: int | None = None  # a pair: the first output frame its planning and rendering read
    origin: tuple | None = None  # how this update got it: ("kept",), ("moved", old index, move, from frame), None: anew
    held: tuple | None = None  # a pair: (first frame, leg rotations (n, 6, 4), pelvis drop) of its gap once held, or None
    measured_with: tuple | None = None  # the floor levels the pair's quality was measured against


def _after(a: Alignment, b: Alignment) -> Alignment:
    """The rigid motion ``a`` after ``b`` (both turns about the same ``up``)."""
    angle = a.angle + b.angle
    if not -np.pi < angle <= np.pi:
        angle = float(np.arctan2(np.sin(angle), np.cos(angle)))
    return Alignment(angle, quat.mul_vec(a.rotation, b.translation) + a.translation, a.up, b.anchor)


def _inverse(a: Alignment) -> Alignment:
    """The rigid motion that undoes ``a``."""
    back = Alignment(-a.angle, np.zeros(3), a.up, a.anchor)
    return Alignment(-a.angle, -quat.mul_vec(back.rotation, a.translation), a.up, a.anchor)


def _moved_pair(pair: PairPlan, move: Alignment) -> PairPlan:
    """A pair's plan with its alignment and its steps' ways moved by ``move``."""
    segments = tuple(replace(s, way=(*move.apply_points(np.array(s.way[:2], dtype=np.float64)), s.way[2])) if s.way
                     else s for s in pair.segments)  # (both ends in one call: the same bits as one by one)
    return replace(pair, alignment=_after(move, pair.alignment), segments=segments)


def _key(clip: Clip) -> tuple:
    return (id(clip.motion), clip.start, clip.core, clip.current, clip.name, clip.blend_s)


class Resynthesis:
    """Keeps what the last synthesis computed and redoes only what a change touches.

    ``update(clips, responsiveness=W)`` returns what ``synthesize(clips,
    responsiveness=W, rig=rig, pose_ends=pose_ends, options=options)`` returns (up
    to float rounding; the plan alike); ``last`` says what it redid. See the
    module docstring for what is reused and why that is exact.
    """

    def __init__(self, *, rig: Rig | None = None, pose_ends: str = "eased", options: SynthesisOptions | None = None):
        if pose_ends not in ("eased", "held"):
            raise ValueError(f"pose_ends must be 'eased' or 'held', got {pose_ends!r}")
        self.rig, self.pose_ends, self.options = rig, pose_ends, options
        self.last = UpdateStats()
        self._inputs: tuple | None = None  # the last update's clips (kept, so ids stay theirs) and W
        self._result: Result | None = None
        self._resampled: dict[int, tuple[Motion, Motion]] = {}
        self._prepared: dict[int, _Prepared] = {}
        # each following clip's side of its pair (its frames up to its core), by (motion id, core
        # start): the same wherever the clip is placed (methods.SideFeatures)
        self._following: dict[tuple[int, int], tuple[Motion, SideFeatures]] = {}
        self._ctx: Context | None = None
        self._first: Motion | None = None
        self._steps: list[_Step] = []
        self._feet: tuple[int, np.ndarray] | None = None  # (first frame, (F, K, 3)) of the last output
        self._warned: tuple | None = None  # (accepted clips, their warnings)

    def update(self, clips: Sequence[Clip], *, responsiveness: float = 0.5) -> Result:
        """Same Result as ``synthesize(clips, responsiveness=..., rig=..., pose_ends=..., options=...)``,
        reusing earlier work (:attr:`last` says how much)."""
        began = time.perf_counter()
        inputs = (tuple(clips), float(responsiveness))
        if self._inputs is not None and self._result is not None and _same_inputs(inputs, self._inputs):
            self.last = UpdateStats(seconds=time.perf_counter() - began, unchanged=True)
            return self._result
        counts = {"planned": 0, "kept": 0, "moved": 0, "prepared": 0, "held": 0, "measured": 0}
        every = checked_in_core_order(clips, resample=self._resample)
        ctx = self._context(every[0].motion, responsiveness)
        prepared = [self._prepare(c.motion, ctx, counts, c.name) for c in every]
        self._forget(every)
        by_id = {id(p.motion): p for p in prepared}

        contacts = [p.contacts for p in prepared]
        qualifies = [p.qualifies for p in prepared]

        def join(found):
            seq = [every[k] for k in found.sequence]
            steps = self._joined(seq, [contacts[k] for k in found.sequence], ctx, counts)
            gone = {s.outcome.clip for s in steps if isinstance(s.outcome, Rejection)}
            return (seq, steps), [k for k, c in enumerate(every) if c.name in gone]

        # a clip inside one that was rejected goes in sequence, and the sequence is joined again (core.timeline)
        found, (seq, steps) = settled_sequencing(clip_spans(every), qualifies.__getitem__, join)
        additional, late = composable([(every[k], every[base]) for k, base in found.additional.items()])
        skeleton = seq[0].motion.skeleton
        track = steps[-1].track.get((skeleton, ctx.rig.pelvis, ctx.fps))
        pair_steps = [s for s in steps if isinstance(s.outcome, PairPlan)]
        # (the quality figures near an output's end see that end: spans stop at the earlier one)
        last = track.last if self._result is None else min(track.last, self._result.plan.end)
        spans = _unchanged_spans(steps, self._steps, last)

        rotations, positions, anew = _held(track, skeleton, pair_steps, spans, by_id, ctx, counts,
                                           normalized=bool(additional))
        motion = Motion.unchecked(skeleton, rotations, positions, ctx.fps)
        motion, compositions = composed_additional(motion, track.first, additional, ctx)
        feet = None if additional or not pair_steps else _feet(motion, track.first, steps, spans, anew, self._feet, ctx)
        pairs = _measured(motion, track.first, pair_steps, spans, by_id, ctx, feet, counts)
        rejected = [s.outcome for s in steps if isinstance(s.outcome, Rejection)] + late
        gone = {r.clip for r in rejected}
        plan = synthesis_plan(ctx, track, every, pairs, rejected,
                              self._warnings([c for c in every if c.name not in gone]), compositions)
        self._result = Result(motion, plan, track.contacts)
        self._inputs = inputs
        self._steps = steps
        self._feet = None if feet is None else (track.first, feet)
        self.last = UpdateStats(**counts, seconds=time.perf_counter() - began)
        return self._result

    def as_soon_as_possible(self, clips: Sequence[Clip], new_clip: Clip, *, responsiveness: float = 0.5,
                            t_current: int | None = None) -> int:
        """The start of :meth:`scheduled_start`."""
        return self.scheduled_start(clips, new_clip, responsiveness=responsiveness, t_current=t_current).start

    def scheduled_start(self, clips: Sequence[Clip], new_clip: Clip, *, responsiveness: float = 0.5,
                        t_current: int | None = None) -> Scheduled:
        """:func:`core.synthesize.scheduled_start` of ``new_clip`` after ``clips``, from this
        re-synthesis's own work: ``clips`` are brought up to date (:meth:`update`, at once when
        they are the last update's), and their track and analyses are not computed again.

        The track is the update's, which equals a fresh synthesis's to rounding, so the start
        is the same but where a candidate's measure sits on a tie to rounding.
        """
        if not clips:
            raise ValueError("nothing to run the clip after: give at least one clip before it")
        self.update(clips, responsiveness=responsiveness)
        far = max(c.start + c.motion.n_frames for c in clips) + new_clip.motion.n_frames + 1
        # checked as synthesize checks it (the skeleton, the frame rate), placed after everything
        new_clip = checked_in_core_order([clips[0], replace(new_clip, start=far, current=t_current)],
                                         resample=self._resample)[-1]
        ctx, counts = self._ctx, dict.fromkeys(("prepared",), 0)
        step = self._steps[-1]
        track = step.track.get((self._first.skeleton, ctx.rig.pelvis, ctx.fps))
        last = self._prepare(step.last.motion, ctx, counts, step.last.name)
        new = self._prepare(new_clip.motion, ctx, counts, new_clip.name)
        # the output so far after its contact stage, as the synthesis with the new clip will have it
        so_far = (foot_positions(self._result.motion, ctx.rig) if self._result.plan.start == track.first else None)
        return earliest_after(track, step.last, last.joints, new_clip, new.joints, new.contacts, ctx, so_far)

    def _warnings(self, accepted: list[Clip]) -> tuple[str, ...]:
        """synthesize's bone-length and floor warnings, again only when the accepted clips change."""
        key = tuple((id(c.motion), c.name) for c in accepted)
        if self._warned is None or self._warned[0] != key:
            levels = [self._prepared[id(c.motion)].figures.levels for c in accepted]
            self._warned = (key, tuple(bone_length_warnings(accepted) + floor_warnings(accepted, levels, self._ctx.leg)))
        return self._warned[1]

    # ------------------------------------------------------------------
    # per clip

    def _resample(self, motion: Motion, fps: float) -> Motion:
        """Motion.resampled, once per motion (the same object each time, so it counts as unchanged)."""
        kept = self._resampled.get(id(motion))
        if kept is None or kept[1].fps != fps:
            kept = (motion, motion.resampled(fps))
            self._resampled[id(motion)] = kept
        return kept[1]

    def _context(self, first: Motion, responsiveness: float) -> Context:
        """The synthesis's context; another first clip starts everything afresh, another W every pair."""
        if self._first is not first:
            self._prepared, self._steps, self._following = {}, [], {}
            g = forward_kinematics(first.rotations, first.positions, first.skeleton.parents, rotations_out=False)[0]
            self._ctx = synthesis_context(first, g, responsiveness, self.rig, self.pose_ends, self.options)
            self._first = first
        elif self._ctx.responsiveness != float(responsiveness):
            self._ctx = replace(self._ctx, weights=blend_weights(responsiveness), responsiveness=float(responsiveness))
            self._steps = []
        return self._ctx

    def _prepare(self, motion: Motion, ctx: Context, counts: dict, name: str) -> _Prepared:
        """A clip's joints, contacts, figures and whether it could be an additional motion, once
        per motion; its legs checked as synthesize checks them (``name`` for the message)."""
        p = self._prepared.get(id(motion))
        if p is None:
            g = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)[0]
            check_legs_hang(motion, ctx.rig, clip=f"clip '{name}'", positions=g)
            p = _Prepared(motion, g, foot_contacts(motion, ctx.rig, up=ctx.up, positions=g),
                          SourceFigures.of(motion, ctx.rig, ctx.up, g), could_be_additional(g, ctx))
            self._prepared[id(motion)] = p
            counts["prepared"] += 1
        return p

    def _forget(self, every: list[Clip]) -> None:
        """Drop what belongs to clips no longer on the timeline."""
        now = {id(c.motion) for c in every}
        self._prepared = {k: v for k, v in self._prepared.items() if k in now}
        self._resampled = {k: v for k, v in self._resampled.items() if id(v[1]) in now}
        self._following = {k: v for k, v in self._following.items() if k[0] in now}

    def _following_of(self, clip: Clip, ctx: Context) -> SideFeatures:
        """methods.following_features of ``clip``, once per motion and core start."""
        key = (id(clip.motion), clip.core_range[0])
        kept = self._following.get(key)
        if kept is None or kept[0] is not clip.motion:
            kept = self._following[key] = (clip.motion, following_features(clip, ctx))
        return kept[1]

    # ------------------------------------------------------------------
    # plan and render, pair by pair

    def _joined(self, seq: list[Clip], contacts: list[np.ndarray], ctx: Context, counts: dict) -> list[_Step]:
        old = self._steps
        keys = [_key(c) for c in seq]
        body = (seq[0].motion.skeleton, ctx.rig.pelvis, ctx.fps)
        # the steps before the first changed clip, as they were
        d = 0
        while d < min(len(keys), len(old)) and keys[d] == old[d].key:
            d += 1
        steps = [replace(s, origin=("kept",)) for s in old[:d]]
        counts["kept"] += sum(isinstance(s.outcome, PairPlan) for s in steps)
        if not steps:
            clip = seq[0]
            track = first_track(clip, contacts[0])
            steps.append(_Step(keys[0], clip, None, _TrackRef(track), (clip.start + clip.core_range[0], track.core_end),
                               clip, Alignment(0.0, np.zeros(3), ctx.up, ""), clip.start))
        # old pairs by (previous accepted clip, clip), for the ones after the change
        old_pairs = {}
        for j in range(1, len(old)):
            if isinstance(old[j].outcome, PairPlan):
                old_pairs.setdefault((_key(old[j - 1].last), old[j].key), j)
        for i in range(len(steps), len(seq)):
            clip, before = seq[i], steps[-1]
            j = old_pairs.get((_key(before.last), keys[i]))
            if j is not None:
                step = _moved(before, old, j, clip)
                if step is not None:
                    steps.append(step)
                    counts["moved"] += 1
                    continue
            track = before.track.get(body)
            new_track, accepted_core, outcome = join_clip(track, before.accepted_core, clip, contacts[i], ctx,
                                                      following=self._following_of(clip, ctx))
            if isinstance(outcome, Rejection):
                steps.append(replace(before, key=keys[i], clip=clip, outcome=outcome, origin=None, read_from=None,
                                     held=None, measured_with=None))
                continue
            counts["planned"] += 1
            played = played_until(track, clip)
            steps.append(_Step(keys[i], clip, outcome, _TrackRef(new_track), accepted_core, clip, outcome.alignment,
                               rendered_until(outcome, clip) + 1, prev=before.last,
                               read_from=_read_from(track, played, ctx)))
        return steps


# ----------------------------------------------------------------------
# contact stage and quality figures, per gap


def _held(track: Track, skeleton, steps: list[_Step], spans: dict, by_id: dict, ctx: Context, counts: dict, *,
          normalized: bool = False) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """The track's rotations and positions with every gap's feet held (core.contacts), old
    gaps' legs and pelvis drops reused;
    and the gaps held anew. ``normalized``: the rotations normalised first, as synthesize's
    output motion has them (composition's leg IK can turn a nearly straight knee another
    way for a rounding difference: what it composes over must be synthesize's to the bit)."""
    if normalized:
        rotations = track.rotations / np.linalg.norm(track.rotations, axis=-1, keepdims=True)
    else:
        rotations = np.array(track.rotations)
    legs = _leg_joints(ctx)
    positions, pelvis = track.positions, ctx.rig.pelvis
    anew = []
    for step in steps:
        g0, g1 = step.outcome.gap
        if g1 - g0 < 2 or g0 < track.first or g1 > track.last:
            step.held = None  # (the contact stage leaves such a gap alone)
            continue
        if not (step.origin and step.held is not None and _inside(spans, step, g0, g1)):
            step.held = _hold_gap(track, skeleton, step, by_id, ctx, legs)
            counts["held"] += 1
            anew.append((g0, g1))
        first, legs_rotations, drop = step.held
        frames = slice(first - track.first, first - track.first + len(legs_rotations))
        rotations[frames, legs] = legs_rotations
        if drop is not None:
            # (in the pelvis's parent's frame: a pair moved by D turns about up, which leaves it)
            positions = np.array(positions) if positions is track.positions else positions
            positions[frames, pelvis] += drop
    return rotations, positions, anew


def _hold_gap(track: Track, skeleton, step: _Step, by_id: dict, ctx: Context, legs: list[int]) -> tuple:
    """(first frame, leg rotations ``(n, 6, 4)``, the pelvis's drop ``(n, 3)`` in its parent's
    frame or None) of one gap with its feet held: hold_feet on that gap alone."""
    prev, nxt = _pair_clips(step)
    g0, g1 = step.outcome.gap
    a, b = g0 - track.first, g1 - track.first + 1
    # (on the output's skeleton, normalised, as synthesize holds the feet of the output motion)
    window = Motion(skeleton, track.rotations[a:b], track.positions[a:b], ctx.fps)
    floors = gap_floors(by_id[id(prev.motion)].figures, by_id[id(nxt.motion)].figures, ctx.rig)
    held = hold_feet(window, g0, track.contacts[a:b], [(g0, g1)], ctx.rig, up=ctx.up, leg=ctx.leg,
                     floors=[floors], steps=[planned_steps(step.outcome)], options=ctx.options.contacts,
                     pelvis_down=True)
    drop = held.positions[:, ctx.rig.pelvis] - window.positions[:, ctx.rig.pelvis]
    return g0, np.array(held.rotations[:, legs]), drop if drop.any() else None


def _feet(motion: Motion, first: int, steps: list[_Step], spans: dict, anew: list[tuple[int, int]],
          old: tuple[int, np.ndarray] | None, ctx: Context) -> np.ndarray:
    """The output's foot positions (quality.foot_positions): the old output's, as they are or
    moved, over the frames a reused step leaves as they were; forward kinematics elsewhere."""
    F = motion.n_frames
    fresh = np.ones(F, dtype=bool)
    feet = np.empty((F, len(foot_joints(ctx.rig)), 3))
    if old is not None:
        old_first, old_feet = old
        # (the steps of one run of moved pairs share their span's start and their move, and their
        # spans nest, each reaching to its next pair: the longest once, rather than every one
        # over the same frames again)
        unique = {}
        for step in steps:
            span = spans.get(id(step))
            if span is not None:
                move = None if step.origin[0] == "kept" else step.origin[2]
                key = (span[0], id(move))
                if key not in unique or span[1] > unique[key][0][1]:
                    unique[key] = (span, move)
        for span, move in unique.values():
            lo, hi = max(span[0], first, old_first), min(span[1], first + F - 1, old_first + len(old_feet) - 1)
            if hi < lo:
                continue
            points = old_feet[lo - old_first : hi + 1 - old_first]
            feet[lo - first : hi + 1 - first] = points if move is None else move.apply_points(points)
            fresh[lo - first : hi + 1 - first] = False
    for g0, g1 in anew:  # (a gap held anew is measured anew)
        fresh[max(g0 - first, 0) : g1 + 1 - first] = True
    if fresh.all():
        return foot_positions(motion, ctx.rig)
    if fresh.any():
        feet[fresh] = forward_kinematics(motion.rotations[fresh], motion.positions[fresh], motion.skeleton.parents,
                                         foot_joints(ctx.rig), rotations_out=False)[0]
    return feet


def _measured(motion: Motion, first: int, steps: list[_Step], spans: dict, by_id: dict, ctx: Context,
              feet: np.ndarray | None, counts: dict) -> list[PairPlan]:
    """Each pair with its gap's quality figures (core.quality), kept where nothing they read changed.
    ``feet``: the output's foot positions; None after a composition (every gap is measured anew)."""
    if not steps:
        return []
    composed = feet is None
    if composed:
        feet = foot_positions(motion, ctx.rig)
    levels = foot_levels(feet @ ctx.up, ctx.fps)
    levels_key = (levels.floor.tobytes(), levels.band.tobytes())
    k = measure_step(ctx.fps)
    pairs = []
    for step in steps:
        pair, (prev, nxt) = step.outcome, _pair_clips(step)
        g0, g1 = pair.gap
        old_quality = pair.quality
        if (not composed and step.origin and old_quality is not None and step.measured_with is not None
                and _inside(spans, step, g0 - k, g1 + k)):
            # its acceleration and the untouched clips' figures are the same; its skate
            # too, unless the output's floor levels moved
            if step.measured_with != levels_key:
                skate = gap_skate(feet, first, pair.gap, levels, ctx.up, ctx.fps)
                pair = replace(pair, quality=replace(old_quality, skate=None if skate is None else skate / ctx.leg))
        else:
            counts["measured"] += 1
            sources = [(by_id[id(prev.motion)].figures, prev.start), (by_id[id(nxt.motion)].figures, nxt.start)]
            pair = replace(pair, quality=gap_quality(motion, first, pair.gap, up=ctx.up, leg=ctx.leg,
                                                     output_feet=feet, output_levels=levels, sources=sources))
        step.outcome = pair
        step.measured_with = None if composed else levels_key
        pairs.append(pair)
    return pairs


def _moved(before: _Step, old: list[_Step], j: int, clip: Clip) -> _Step | None:
    """Old step ``old[j]`` moved onto the new track after ``before``, when its pair reads only
    the previous clip's rigid part in both syntheses (see the module docstring); else None."""
    old_before, step = old[j - 1], old[j]
    base = before.track
    if before.origin and before.origin[0] == "moved" and before.origin[1] == j - 1:
        # a run of moved pairs goes on: the track before it is the old one moved, from where
        # the run began (old[j] changes old[j - 1]'s track only after step.read_from)
        _, _, move, at = before.origin
        if not base.made:
            base = base.base
    else:
        at = max(before.rigid_from, old_before.rigid_from)
        move = _after(before.placement, _inverse(old_before.placement))
    if step.read_from is None or step.read_from < at:
        return None
    pair = _moved_pair(step.outcome, move)
    track = step.track.moved(base, at, move, (clip.start + clip.core_range[0], clip.start + clip.core_range[1]),
                             clip.name)
    return _Step(step.key, clip, pair, track, step.accepted_core, clip, pair.alignment, step.rigid_from,
                 prev=before.last, read_from=step.read_from, origin=("moved", j, move, at), held=step.held,
                 measured_with=step.measured_with)


def _same_inputs(a: tuple, b: tuple) -> bool:
    (clips_a, w_a), (clips_b, w_b) = a, b
    return w_a == w_b and len(clips_a) == len(clips_b) and all(
        x.motion is y.motion and _key(x)[1:] == _key(y)[1:] for x, y in zip(clips_a, clips_b))


def _read_from(track: Track, played: int, ctx: Context) -> int:
    """The first output frame a pair planned after ``track`` (played up to ``played``) reads:
    the previous core's end less the body orientation's window (methods._align), and the
    step pace's window back from the track's end (methods._step_pace)."""
    o = ctx.options
    last = max(track.last, played)
    return min(played - 1 - int(o.orientation_window_s * ctx.fps), last + 1 - int(o.step_window_s * ctx.fps))


def _pair_clips(step: _Step) -> tuple[Clip, Clip]:
    """(previous accepted clip, clip) of a pair step."""
    return step.prev, step.clip


def _leg_joints(ctx: Context) -> list[int]:
    """The joints the contact stage turns: both legs' hip, knee and ankle."""
    return [j for side in "LR" for j in (ctx.rig.leg(side).hip, ctx.rig.leg(side).knee, ctx.rig.leg(side).ankle)]


def _unchanged_spans(steps: list[_Step], old: list[_Step], last: int) -> dict[int, tuple[int, int]]:
    """For each reused pair step (by ``id``), the output frames ``(first, last)`` over which the new
    output is the old one (kept) or the old one moved by the step's move (moved): up to where
    the next pair that follows it, new or old, starts changing frames (its gap or its blend),
    and up to ``last`` (the earlier of the two outputs' ends: the quality figures near an end
    see it). Gaps held anew inside a span are the caller's to leave out."""
    def next_blends(seq):
        # the first frame each next pair changes: where it blends, or where its gap begins
        # (the contact stage holds the feet inside the gap, before the blend too)
        out, at = [None] * len(seq), None
        for i in range(len(seq) - 1, -1, -1):
            out[i] = at
            if isinstance(seq[i].outcome, PairPlan):
                at = min(blend_start(seq[i].outcome), seq[i].outcome.gap[0])
        return out

    new_next, old_next = next_blends(steps), next_blends(old)
    far = 1 << 60

    def until(a, b):
        return min(far if a is None else a, far if b is None else b, last + 1) - 1

    kept = sum(1 for s in steps if s.origin == ("kept",))
    same = until(new_next[kept - 1], old_next[kept - 1]) if kept else -far
    spans = {}
    for i, s in enumerate(steps):
        if s.origin is None or not isinstance(s.outcome, PairPlan):
            continue
        if s.origin[0] == "kept":
            spans[id(s)] = (-far, same)
        else:
            _, j, _, at = s.origin
            spans[id(s)] = (at, until(new_next[i], old_next[j]))
    return spans


def _inside(spans: dict, step: _Step, lo: int, hi: int) -> bool:
    span = spans.get(id(step))
    return span is not None and span[0] <= lo and hi <= span[1]
