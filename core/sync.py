"""Synchronization of motions played at the same time (Ménardais et al. 2004, MKM).

Each motion is reduced to its sequence of support phases (§4), elements of
FS = {RS, LS, DS, ∅, Err}; the ⊕ relation of Fig. 4 says whether motions can
be blended at a step (eqs. 1-3). :func:`synchronize` reorganises the
sequences so that their ⊕ is never Err (§5.1: change of index, a window of
``n_k`` synchronized steps, enlargement of the last synchronized elements by
priority, delayed starts), gives each synchronized step a duration (eq. 6)
and turns each motion's piecewise-linear time warp into a monotone C¹ spline
(§5.3, Fig. 11). The result is a :class:`SyncPlan`: data, no frames.

Conventions.

* Support codes equal :class:`core.analysis.Phase`'s for DS, LS, RS and no
  support (0-3); Err is 4.
* Time is in frames. A clip's *own time* ``t`` plays clip frame ``t``: frame
  ``f`` of a clip covers own time ``[f, f + 1)``, so an element of ``n``
  frames lasts ``n`` frames of own time and a non-cyclic clip of ``F`` frames
  lasts ``F``. Past its end a non-cyclic motion holds its last posture and
  its last element (§4.3): its own time goes on at the output's pace (the
  warp stays strictly increasing, :meth:`SupportSequence.clip_frames` clamps
  it to the last frame), and its held support counts where it agrees with
  the motions still playing and gives way where it would clash with them.
* A cyclic clip's last frame stands for its first (its end pose matches its
  start, :func:`is_cyclic`), so it repeats with a period of ``F - 1`` frames,
  as long as the blend runs unless it is ended (§4.3, :func:`synchronize`'s
  ``stops``); its sequence is built over frames ``0 .. F - 2`` and, where its
  first and last elements are the same support, the two merge across the seam.
* Output frames count from the earliest requested start (output frame 0).
* Priorities: higher plays first; equal priorities rank in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Sequence

import numpy as np

from . import quat
from .analysis import pelvis_facing, support_phases
from .motion import Motion, forward_kinematics
from .rig import Rig, detect_up, find_rig, leg_length
from .weights import cubic_hermite


class Support(IntEnum):
    """An element of the paper's set FS (§4.1); codes 0-3 are :class:`core.analysis.Phase`'s."""

    DS = 0  # double support
    LS = 1  # left foot on the ground
    RS = 2  # right foot on the ground
    NONE = 3  # ∅: no foot on the ground (flight)
    ERR = 4  # two motions that cannot be blended at this step


# Weights and priorities are relative (weights 1,3 blend as 0.25,0.75 do; priorities rank, and
# scale the weights of eq. (6)): none needs to be larger than this, and past it their sums and
# eq. (6)'s products of weight, priority and duration may overflow (weights 1e308 and 1e308 summed
# to infinity, a step's duration to NaN).
LARGEST_RELATIVE = 1e6

_DS, _LS, _RS, _NONE, _ERR = (int(s) for s in Support)
_NAMES = tuple(s.name for s in Support)

#: Elements of one stride of a biped in FS: a single support on each foot and the neutral (DS) or
#: absorbing (∅) phase after each. Any point of a step recurs within this many elements of a
#: sequence that alternates its feet, so a motion joining looks no further for an element in step
#: with the others (:func:`synchronize`).
STRIDE_ELEMENTS = 4

# Fig. 4, indexed [a, b]: DS neutral, ∅ absorbing, Err absorbing on {RS, LS, DS}, RS ⊕ LS = Err
_COMBINE = np.array(
    [
        #  DS     LS     RS     ∅      Err
        [_DS, _LS, _RS, _NONE, _ERR],  # DS
        [_LS, _LS, _ERR, _NONE, _ERR],  # LS
        [_RS, _ERR, _RS, _NONE, _ERR],  # RS
        [_NONE, _NONE, _NONE, _NONE, _NONE],  # ∅
        [_ERR, _ERR, _ERR, _NONE, _ERR],  # Err
    ],
    dtype=np.int8,
)
_COMBINE.setflags(write=False)
_TABLE = _COMBINE.tolist()  # the same table for the step loop's Python ints
_OTHER_FOOT = {_LS: _RS, _RS: _LS}


def combine(a, b) -> np.ndarray:
    """``a ⊕ b`` (Fig. 4), elementwise over int arrays (or ints) of :class:`Support` codes."""
    a, b = np.asarray(a), np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.size and (x.min() < 0 or x.max() > _ERR):
            raise ValueError(f"{name} holds codes outside 0..4 (DS, LS, RS, NONE, ERR): {np.unique(x).tolist()}")
    return _COMBINE[a.astype(np.intp), b.astype(np.intp)]


def combined_sequence(codes) -> np.ndarray:
    """Eq. (2): ``⊕_i S_i(k)`` of aligned sequences ``(nA, K)`` -> ``(K,)`` (associative: any order)."""
    codes = np.asarray(codes)
    if codes.ndim != 2 or len(codes) == 0:
        raise ValueError(f"codes must be (motions, steps) with at least one motion, got shape {codes.shape}")
    out = codes[0].astype(np.int8)
    for row in codes[1:]:
        out = combine(out, row)
    return out


def in_step(a: int, b: int) -> bool:
    """Two supports at the same point of a step: one foot alone on the ground, the same one in both,
    or neither with one foot alone (DS or ∅, the phases between single supports). A walk's single
    support against another's double support is half a step off: ⊕ allows it (DS is neutral) but
    the legs are then half a step apart."""
    return a == b if a in _OTHER_FOOT or b in _OTHER_FOOT else a in (_DS, _NONE) and b in (_DS, _NONE)


def synchronizable(codes) -> bool:
    """Eqs. (1)-(3): aligned sequences ``(nA, K)`` can be blended iff their ⊕ is never Err."""
    return bool(np.all(combined_sequence(codes) != _ERR))


# --------------------------------------------------------------------------
# §4.2-4.3: sequences and their extension


@dataclass(frozen=True)
class SupportSequence:
    """A motion's support-phase sequence (§4.2): run-length elements of one pass of the clip.

    codes     (n,) int8 :class:`Support` codes; two successive are never equal
              (for a cyclic clip the first and last may be: they merge across the seam).
    starts    (n,) int, first clip frame of each element (``starts[0] == 0``).
    n_frames  frames of the clip.
    fps       frames per second of the clip.
    cyclic    the clip repeats as a whole (§4.3); else it holds its last element.
    split     long double supports were cut into pieces (:func:`split_double_supports`, §7):
              successive DS elements are then allowed.
    """

    codes: np.ndarray
    starts: np.ndarray
    n_frames: int
    fps: float
    cyclic: bool = False
    split: bool = False

    def __post_init__(self):
        codes = np.array(self.codes, dtype=np.int8)
        starts = np.array(self.starts, dtype=np.int64)
        if codes.ndim != 1 or len(codes) == 0 or starts.shape != codes.shape:
            raise ValueError(f"codes and starts must be equal-length, non-empty 1-d arrays, got {codes.shape} and {starts.shape}")
        if codes.min() < 0 or codes.max() > _NONE:
            raise ValueError(f"a motion's sequence holds DS, LS, RS or NONE (0..3), got {np.unique(codes).tolist()}")
        if not self.split and np.any(codes[1:] == codes[:-1]):
            raise ValueError("two successive elements of a sequence are equal (§4.2): merge them")
        if starts[0] != 0 or np.any(np.diff(starts) <= 0) or starts[-1] >= self.period:
            raise ValueError(f"starts must rise from 0 and stay below {self.period}, got {starts.tolist()}")
        for name, a in (("codes", codes), ("starts", starts)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def period(self) -> int:
        """Own frames of one pass: ``n_frames - 1`` when cyclic (the last frame is the first), else ``n_frames``."""
        return self.n_frames - 1 if self.cyclic else self.n_frames

    @property
    def durations(self) -> np.ndarray:
        """(n,) frames of own time each element lasts in one pass."""
        return np.diff(np.append(self.starts, self.period))

    @property
    def seam_merges(self) -> bool:
        """A cyclic clip whose last element is its first one continuing across the seam."""
        return self.cyclic and len(self.codes) > 1 and self.codes[0] == self.codes[-1]

    def element(self, e: int) -> tuple[int, float, float, bool]:
        """Element ``e`` of the extended sequence (§4.3, Fig. 6): (code, own start, own end, held).

        A cyclic sequence repeats as a whole (the seam's merged element counts
        once per cycle); any other repeats its last element, *held*: its own
        time runs on past the clip's end, one last-element duration each.
        """
        n, P = len(self.codes), self.period
        if e < n and not (self.seam_merges and e == n - 1):
            end = self.starts[e + 1] if e + 1 < n else P
            return int(self.codes[e]), float(self.starts[e]), float(end), False
        if not self.cyclic:
            d = float(P - self.starts[-1])
            return int(self.codes[-1]), P + (e - n) * d, P + (e - n + 1) * d, True
        if not self.seam_merges:
            q, r = divmod(e, n)
            end = self.starts[r + 1] if r + 1 < n else P
            return int(self.codes[r]), float(q * P + self.starts[r]), float(q * P + end), False
        q, r = divmod(e - 1, n - 1)
        r += 1  # elements 1 .. n-1 of cycle q, the last of which runs into cycle q + 1
        if r == n - 1:
            return int(self.codes[r]), float(q * P + self.starts[r]), float((q + 1) * P + self.starts[1]), False
        return int(self.codes[r]), float(q * P + self.starts[r]), float(q * P + self.starts[r + 1]), False

    def extended_codes(self, count: int) -> np.ndarray:
        """The first ``count`` codes of the extended sequence (Fig. 6)."""
        return np.array([self.element(e)[0] for e in range(count)], dtype=np.int8)

    def clip_frames(self, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Own times ``(N,)`` -> (clip frames (N,) float, completed cycles (N,) int): :func:`clip_frames`
        of this clip. NaN stays NaN."""
        return clip_frames(own, self.n_frames, cyclic=self.cyclic)

    def to_dict(self) -> dict:
        return {
            "codes": [_NAMES[c] for c in self.codes.tolist()],
            "starts": self.starts.tolist(),
            "n_frames": self.n_frames,
            "fps": self.fps,
            "cyclic": self.cyclic,
            **({"split": True} if self.split else {}),
        }


def split_double_supports(sequence: SupportSequence, longest: float, *, piece: float | None = None
                          ) -> SupportSequence:
    """§7's splitting of neutral phases: every DS element of ``sequence`` longer than ``longest``
    frames cut into pieces of about ``piece`` frames (default ``longest``; at least two pieces,
    of (nearly) equal whole frames).

    The paper names the rule ("the possibility to split neutral constraint phases (double
    support)") without a method. Eq. (6) weighs each element's duration into the step it
    begins at: a gesture done standing has one double support as long as the clip (or, cyclic,
    one per cycle), which would lengthen every step of a walk it is blended with. Cut into
    pieces about as long as the other motions' elements, it lets them step through it one
    piece a step (DS is neutral for ⊕, so the pieces combine with anything), and eq. (6)
    averages piece lengths that are close to the steps' own. ``longest`` is the caller's
    choice (core.mkm: twice the mean element of the other motions, pieces of that mean).
    """
    piece = longest if piece is None else piece
    if not (longest >= 1 and piece >= 1):
        raise ValueError(f"longest and piece must be at least one frame, got {longest} and {piece}")
    codes, starts = [], []
    for code, start, duration in zip(sequence.codes.tolist(), sequence.starts.tolist(), sequence.durations.tolist()):
        pieces = min(max(2, int(round(duration / piece))), duration) if code == _DS and duration > longest else 1
        cuts = start + np.round(np.arange(pieces) * duration / pieces).astype(np.int64)
        codes += [code] * pieces
        starts += cuts.tolist()
    if len(codes) == len(sequence.codes):
        return sequence
    return SupportSequence(np.array(codes, dtype=np.int8), np.array(starts), sequence.n_frames, sequence.fps,
                           sequence.cyclic, split=True)


def clip_frames(own: np.ndarray, n_frames: int, *, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Own times ``(N,)`` of a clip of ``n_frames`` -> (clip frames (N,) float, completed cycles (N,) int).

    Cyclic: wrapped into ``[0, n_frames - 1]`` with period ``n_frames - 1`` (the
    last frame is the first of the next cycle: a frame between ``n_frames - 2``
    and the period interpolates towards it); else clamped to ``[0, n_frames -
    1]``, cycles all 0 (§4.3: it holds its last posture). NaN stays NaN, 0 cycles.
    """
    own = np.asarray(own, dtype=np.float64)
    last = n_frames - 1
    if not cyclic or last < 1:
        return np.clip(own, 0.0, max(last, 0)), np.zeros(own.shape, dtype=np.int64)
    cycles = np.floor(own / last)
    # (a frame at the very end of a cycle stays the last frame of that cycle, not frame 0 of the next)
    within = np.clip(own - cycles * last, 0.0, last)
    return within, np.where(np.isnan(cycles), 0, cycles).astype(np.int64)


def played_supports(warps, contacts: Sequence[np.ndarray], cyclic: Sequence[bool],
                    ends: Sequence[float] | None = None) -> np.ndarray:
    """Each motion's own support at the clip frame it plays: ``(K, T)`` int8 :class:`Support` codes
    (DS, LS, RS, NONE), -1 where it plays none of its own frames.

    warps     ``(K, T)`` own frames at each output frame (:attr:`SyncPlan.warps`, or any clip
              frames: NaN where a motion does not play yet).
    contacts  per motion, its ``(F_k, 2)`` bool foot contacts (left, right).
    cyclic    per motion, whether it repeats (:func:`clip_frames`); one that does not plays none
              of its own frames past its last one (it holds its last posture, §4.3).
    ends      per motion, the output frame where it stops (:attr:`SyncPlan.ends`), or None: past
              it the motion has faded out (core.mkm weighs it 0 there: a cyclic one ended early,
              or any clip the others outlast), so none of its feet are shown and it plays none
              of its own frames.

    What a blend shows of each motion's feet: two motions whose supports here are LS and RS on
    one frame clash (the one on its left foot alone, the other on its right), which ⊕ forbids
    of the synchronized elements (Fig. 4) but a frame-by-frame blend does not."""
    warps = np.atleast_2d(np.asarray(warps, dtype=np.float64))
    if len(contacts) != len(warps) or len(cyclic) != len(warps) or (ends is not None and len(ends) != len(warps)):
        raise ValueError(f"give contacts and cyclic (and ends, if any) for each of the {len(warps)} warps, got "
                         f"{len(contacts)}, {len(cyclic)}{'' if ends is None else f' and {len(ends)}'}")
    out = np.full(warps.shape, -1, dtype=np.int8)
    frames_out = np.arange(warps.shape[1], dtype=np.float64)
    for k, (warp, feet, repeats) in enumerate(zip(warps, contacts, cyclic)):
        feet = np.asarray(feet, dtype=bool)
        last = len(feet) - 1
        playing = ~np.isnan(warp) & (repeats | (np.nan_to_num(warp, nan=0.0) <= last + 0.5))
        if ends is not None:
            playing &= frames_out <= float(ends[k]) + 1e-9
        frames, _ = clip_frames(np.where(playing, warp, 0.0), len(feet), cyclic=bool(repeats))
        out[k] = np.where(playing, support_phases(feet)[np.clip(np.rint(frames).astype(np.int64), 0, last)], -1)
    return out


def support_sequence(contacts: np.ndarray, fps: float, *, cyclic: bool = False) -> SupportSequence:
    """``(F, 2)`` bool foot contacts (left, right; :func:`core.analysis.foot_contacts`) -> its sequence (§4.2).

    Run-length elements of the support phases, so two successive elements
    are never equal. A cyclic clip's sequence covers frames ``0 .. F - 2``
    (its last frame is its first).
    """
    contacts = np.asarray(contacts, dtype=bool)
    if contacts.ndim != 2 or contacts.shape[1] != 2:
        raise ValueError(f"contacts must be (frames, 2) for (left, right), got shape {contacts.shape}")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    n_frames = len(contacts)
    if n_frames < (3 if cyclic else 1):
        raise ValueError(f"a {'cyclic ' if cyclic else ''}sequence needs at least {3 if cyclic else 1} frames, got {n_frames}")
    phases = support_phases(contacts[:-1] if cyclic else contacts)  # Phase codes are Support's 0-3
    starts = np.flatnonzero(np.concatenate(([True], phases[1:] != phases[:-1])))
    return SupportSequence(phases[starts], starts, n_frames, float(fps), cyclic)


def cycle_mismatch(motion: Motion, rig: Rig | None = None, *, up: np.ndarray | None = None) -> tuple[float, float]:
    """How far a clip's end is from its start: (pose gap in leg lengths, velocity gap in leg lengths per second).

    Every joint is placed relative to the pelvis, in the frame of the
    pelvis' horizontal facing (so where the clip ends up and which way it
    turned do not count); the pelvis itself adds its height and its
    velocity in that frame. The pose gap is the largest joint distance
    between the first and the last frame; the velocity gap is the largest
    change of velocity across the seam (last frame -> second frame) beyond
    the changes the clip itself makes in the frames either side. ``up``: the
    clip's up axis when the caller knows it (``rig.detect_up``).
    """
    pose_gaps, velocity_gaps = cycle_mismatches([motion], rig, up=up)
    return float(pose_gaps[0]), float(velocity_gaps[0])


def cycle_mismatches(motions: Sequence[Motion], rig: Rig | None = None, *, up: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cycle_mismatch` of clips on one skeleton (the same joints and hierarchy), ``(pose gaps (K,),
    velocity gaps (K,))``, all at once: their first and last three frames in one pass of forward
    kinematics, and everything after it over the clips together (each number is its own clip's:
    six frames of a clip cost less than the numpy calls on them). ``up``: the clips' up axis when
    the caller knows it, else the first clip's (``rig.detect_up``)."""
    for m in motions:
        if m.n_frames < 3:
            raise ValueError(f"a clip needs at least 3 frames to compare its end with its start, got {m.n_frames}")
    first = motions[0]
    parents = first.skeleton.parents
    if any(not np.array_equal(m.skeleton.parents, parents) for m in motions):
        raise ValueError("the clips compared at once must share one skeleton (the same hierarchy)")
    rig = rig or find_rig(first)
    up = detect_up(first, rig) if up is None else np.asarray(up, dtype=np.float64)
    leg = np.array([0.5 * (leg_length(m.skeleton, rig, "L") + leg_length(m.skeleton, rig, "R")) for m in motions])
    # three frames at the start, three at the end, of every clip
    picked = [np.array([0, 1, 2, m.n_frames - 3, m.n_frames - 2, m.n_frames - 1]) for m in motions]
    # (K, 6, J, 3); positions only: the rotations of the joints nothing hangs from are not read
    g = forward_kinematics(np.concatenate([m.rotations[p] for m, p in zip(motions, picked)]),
                           np.concatenate([m.positions[p] for m, p in zip(motions, picked)]), parents,
                           rotations_out=False)[0].reshape(len(motions), 6, len(parents), 3)
    hips = g[:, :, [rig.leg("L").hip, rig.leg("R").hip]]
    g = g[:, :, np.flatnonzero(rig.subtree_mask(first.skeleton, rig.pelvis))]  # (a root above the pelvis may stay put)
    pelvis = g[:, :, 0]
    facing = pelvis_facing(hips[:, :, 0], hips[:, :, 1], up)
    frame = np.stack([facing, np.broadcast_to(up, facing.shape), quat.cross(up, facing)], axis=2)  # (K, 6, axis, 3)
    local = np.einsum("kfab,kfjb->kfja", frame, g - pelvis[:, :, None])
    height = (pelvis @ up)[:, :, None, None] * np.array([0.0, 1.0, 0.0])
    local = np.concatenate([local, height], axis=2) / leg[:, None, None, None]  # (K, 6, J + 1, 3) in leg lengths
    # one-frame velocities in leg lengths per frame: [0→1, 1→2, F-3→F-2, F-2→F-1], the pelvis' travel
    # measured in the frame it faces at the earlier frame
    later, earlier = [1, 2, 4, 5], [0, 1, 3, 4]
    travel = np.einsum("kfab,kfb->kfa", frame[:, earlier], pelvis[:, later] - pelvis[:, earlier]) / leg[:, None, None]
    v = np.concatenate([local[:, later] - local[:, earlier], travel[:, :, None]], axis=2)
    # the last frame is the first: across the seam the velocity changes by v[0] - v[3]; a true cycle
    # changes it there no more than the clip's own acceleration does in the frames either side
    seam = quat.length(v[:, 0] - v[:, 3])
    own = np.maximum(quat.length(v[:, 1] - v[:, 0]), quat.length(v[:, 3] - v[:, 2]))
    velocity_gaps = np.max(np.maximum(seam - own, 0.0), axis=1) * np.array([m.fps for m in motions])
    return quat.length(local[:, 5] - local[:, 0]).max(axis=1), velocity_gaps


def is_cyclic(
    motion: Motion,
    rig: Rig | None = None,
    *,
    pose_tolerance: float = 0.05,
    velocity_tolerance: float = 1.5,
    up: np.ndarray | None = None,
) -> bool:
    """§4.3: do the clip's end pose and velocity match its start, so that it can repeat as a whole?

    pose_tolerance      largest joint distance allowed between the first and
                        the last frame (:func:`cycle_mismatch`), in leg lengths.
    velocity_tolerance  largest velocity difference allowed, in leg lengths per second.
    up                  the clip's up axis when the caller knows it.
    """
    return are_cyclic([motion], rig, pose_tolerance=pose_tolerance, velocity_tolerance=velocity_tolerance, up=up)[0]


def are_cyclic(motions: Sequence[Motion], rig: Rig | None = None, *, pose_tolerance: float = 0.05,
               velocity_tolerance: float = 1.5, up: np.ndarray | None = None) -> list[bool]:
    """:func:`is_cyclic` of clips on one skeleton, all at once (:func:`cycle_mismatches`); a clip of
    fewer than three frames is not."""
    out = [False] * len(motions)
    long = [k for k, m in enumerate(motions) if m.n_frames >= 3]
    if long:
        pose_gaps, velocity_gaps = cycle_mismatches([motions[k] for k in long], rig, up=up)
        for k, pose_gap, velocity_gap in zip(long, pose_gaps.tolist(), velocity_gaps.tolist()):
            out[k] = pose_gap <= pose_tolerance and velocity_gap <= velocity_tolerance
    return out


# --------------------------------------------------------------------------
# §5.3: the time warp, a monotone C¹ spline


#: Bounds of a knot's slope as multiples of the chords either side (Fig. 11 E). Inside the box
#: [LOW, HIGH]² of Fritsch and Carlson's monotonicity region, where the cubic's derivative stays
#: strictly positive (its minimum over the box is at a corner: 0.1 at (0.1, 0.1), 0.25 at (2.5, 2.5)).
SLOPE_LOW, SLOPE_HIGH = 0.1, 2.5


def warp_slopes(times: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Slopes ``(m,)`` d own / d output at the knots of a piecewise-linear warp (§5.3, Fig. 11).

    times (m,) output frames, own (m,) own frames, both strictly increasing.
    The first knot takes its chord's slope (the motion enters at its own
    speed); each next knot mirrors the incoming slope about the element's
    chord (Fig. 11 D: ``2 chord - v``, so the element keeps its mean speed),
    bounded (Fig. 11 E) between the chords either side and within
    ``[SLOPE_LOW, SLOPE_HIGH]`` times each of them. The loop is sequential
    because each knot's slope is the mirror of the one before it.
    """
    chords = np.diff(own) / np.diff(times)
    slopes = np.empty(len(times))
    slopes[0] = chords[0]
    last = len(chords) - 1
    for j, chord in enumerate(chords.tolist()):
        mirror = 2.0 * chord - slopes[j]
        after = chords[j + 1] if j < last else chord
        small, big = min(chord, after), max(chord, after)
        low, high = max(small, SLOPE_LOW * big), min(big, SLOPE_HIGH * small)
        # chords more than HIGH / LOW apart leave no slope inside both boxes: the smaller chord's bound
        # keeps that side strictly monotone, and the other side stays so with a slope below LOW
        slopes[j + 1] = high if low > high else min(max(mirror, low), high)
    return slopes


@dataclass(frozen=True)
class WarpSpline:
    """A motion's smoothed time warp (§5.3): own frame at output frame, cubic Hermite between knots.

    times   (m,) output frames of the knots (the boundaries where the motion's elements change).
    own     (m,) the motion's own frame at each knot.
    slopes  (m,) d own / d output at each knot (:func:`warp_slopes`).
    """

    times: np.ndarray
    own: np.ndarray
    slopes: np.ndarray

    @classmethod
    def through(cls, times, own) -> "WarpSpline":
        times, own = np.asarray(times, dtype=np.float64), np.asarray(own, dtype=np.float64)
        if len(times) < 2 or np.any(np.diff(times) <= 0) or np.any(np.diff(own) <= 0):
            raise ValueError("a warp needs two or more knots, strictly increasing in output and own time")
        return cls(times, own, warp_slopes(times, own))

    def _segment(self, t: np.ndarray):
        t = np.asarray(t, dtype=np.float64)
        i = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 2)
        h = self.times[i + 1] - self.times[i]
        return t, i, h, (t - self.times[i]) / h

    def __call__(self, t) -> np.ndarray:
        """Own frames at output frames ``t``; NaN outside the knots."""
        t, i, h, s = self._segment(t)
        out = cubic_hermite(s, self.own[i], self.slopes[i] * h, self.own[i + 1], self.slopes[i + 1] * h)
        return np.where((t >= self.times[0]) & (t <= self.times[-1]), out, np.nan)

    def time_of(self, own: float) -> float:
        """The output frame where the warp reaches own frame ``own`` (inside the knots; bisection, it is monotone)."""
        if not self.own[0] <= own <= self.own[-1]:
            raise ValueError(f"own frame {own} lies outside the warp's {self.own[0]} .. {self.own[-1]}")
        j = min(int(np.searchsorted(self.own, own, side="right")) - 1, len(self.own) - 2)
        t0, h = float(self.times[j]), float(self.times[j + 1] - self.times[j])
        y0, y1 = float(self.own[j]), float(self.own[j + 1])
        m0, m1 = float(self.slopes[j]) * h, float(self.slopes[j + 1]) * h
        lo, hi = 0.0, 1.0
        for _ in range(60):  # on the segment's cubic in plain floats, down to the last bits of a frame
            s = 0.5 * (lo + hi)
            s2, s3 = s * s, s * s * s
            y = (2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * y1 + (s3 - s2) * m1
            lo, hi = (s, hi) if y < own else (lo, s)
        return t0 + 0.5 * (lo + hi) * h

    def derivative(self, t) -> np.ndarray:
        """d own / d output at output frames ``t`` (the cubic's own derivative); NaN outside the knots."""
        t, i, h, s = self._segment(t)
        s2 = s * s
        out = ((6 * s2 - 6 * s) * (self.own[i] - self.own[i + 1]) / h
               + (3 * s2 - 4 * s + 1) * self.slopes[i] + (3 * s2 - 2 * s) * self.slopes[i + 1])
        return np.where((t >= self.times[0]) & (t <= self.times[-1]), out, np.nan)


# --------------------------------------------------------------------------
# §5.1-5.2: synchronization and durations


@dataclass(frozen=True)
class SyncPlan:
    """The synchronized steps of motions played at the same time, and each motion's time warp.

    n_frames    output frames; the output ends when the last motion ends (its own time
                reaches its length: ``n_frames`` of a clip, a cyclic one's period or where it
                is ended), on the frame that plays a clip's last frame (a cyclic one's: up to
                its period); a cyclic motion not ended repeats until then (§4.3).
    boundaries  (K+1,) output frame (float) where each synchronized step begins; last = end.
    combined    (K,) :class:`Support` code of each step, the ⊕ of the motions' elements (eq. 2).
    elements    per motion, (K,) index of its element in its *extended* sequence
                (:meth:`SupportSequence.element`) at each step, -1 before it joins (at its
                join step, the element it entered at: 0, or one further into its first stride
                that is in step with the others, see :func:`synchronize`); an index that
                stays the same over steps is an enlarged element (§5.1); one that advances
                by two plays the element it passes over within the step before: a DS or
                ∅ (``in_phase``), a piece of a split DS (``pieces_in_step``), or the single
                support after a DS that landed with another's straight step
                (``strikes_together``).
    delays      per motion, output frames from its requested start to the step it joined
                at (waiting for a step boundary, and whole elements when it could not be
                synchronized there, §5.1).
    warps       per motion, (n_frames,) float: its own frame played at each output frame
                (NaN before it joins); strictly increasing, C¹ (:class:`WarpSpline`).
                :meth:`SupportSequence.clip_frames` turns own frames into clip frames.
    weights, priorities  as given (a weight: a number, or one per output frame).
    joins       per motion, the step it joined at.
    finished    per motion, its own time reached its length within the plan (False only
                when a motion was held back for good, see :func:`synchronize`).
    splines     per motion, its :class:`WarpSpline`.
    sequences   per motion, its :class:`SupportSequence`.
    ends        per motion, the output frame (fractional) where it stops (core.mkm fades it out
                there): where its own time reaches its length, or for a cyclic motion where it
                is ended (``stops``); a cyclic motion not ended, and one held back, stop at the
                plan's end.
    """

    n_frames: int
    boundaries: np.ndarray
    combined: np.ndarray
    elements: list[np.ndarray]
    delays: list[int]
    warps: list[np.ndarray]
    weights: tuple[float, ...] = ()
    priorities: tuple[float, ...] = ()
    joins: tuple[int, ...] = ()
    finished: tuple[bool, ...] = ()
    splines: list[WarpSpline] = field(default_factory=list, repr=False)
    sequences: list[SupportSequence] = field(default_factory=list, repr=False)
    ends: tuple[float, ...] = ()

    def entry_frames(self) -> list[int]:
        """Per motion, the clip frame it starts playing at: 0, or the first frame of the element
        further into its first stride that it entered at in step with the others (:func:`synchronize`);
        0 for one that joined no step (out of the legs' timing, or left out: ``joins`` -1)."""
        # (a motion out of the timing, or left out, never joins a step: it starts at its first frame)
        return [int(seq.element(int(elements[join]))[1]) if join >= 0 else 0 for seq, elements, join in
                zip(self.sequences, self.elements, self.joins)]

    def support_at(self) -> np.ndarray:
        """(n_frames,) combined :class:`Support` code of the step each output frame lies in."""
        step = np.searchsorted(self.boundaries, np.arange(self.n_frames), side="right") - 1
        return self.combined[np.clip(step, 0, len(self.combined) - 1)]

    def clip_frames(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Motion ``i``'s clip frame and completed cycles at each output frame (NaN frames before it joins)."""
        return self.sequences[i].clip_frames(self.warps[i])

    def to_dict(self) -> dict:
        return {
            "n_frames": self.n_frames,
            "combined": [_NAMES[c] for c in self.combined.tolist()],
            "boundaries": [round(float(b), 3) for b in self.boundaries],
            "delays": list(self.delays),
            "weights": [_weight_json(w) for w in self.weights],
            "priorities": [float(p) for p in self.priorities],
            "joins": list(self.joins),
            "entry_frames": self.entry_frames(),
            "finished": list(self.finished),
            "elements": [e.tolist() for e in self.elements],
            **({"ends": [round(float(e), 3) for e in self.ends]} if self.ends else {}),
        }


class _Extended:
    """A sequence's extended elements (§4.3), looked up once each: (code, own start, own end, held);
    ``fade``: own frames over which the motion's weight eases out before its end (:meth:`deactivation`);
    ``stop``: for a cyclic motion ended (:func:`synchronize`'s ``stops``), the own time where it stops
    (None: it repeats as a whole for as long as it is extended)."""

    def __init__(self, sequence: SupportSequence, fade: float = 0.0, stop: float | None = None):
        self.sequence = sequence
        self.fade = float(fade)
        self.end = float(sequence.period if stop is None else stop)
        self.stop = stop
        self.cache: list[tuple[int, float, float, bool]] = []

    def deactivation(self, e: int) -> float:
        """The motion's deactivation ramp (Fig. 2) at element ``e``'s middle: 1 until ``fade`` own frames
        before its end, easing to 0 at it (the smoothstep core.mkm.presence_weights fades it with).
        Eq. (6) weighs the element with it, so that the last element a capture cut short (a clip
        rarely ends where a support phase does) does not hurry the others through theirs."""
        if self.fade <= 0:
            return 1.0
        _, start, end, _ = self[e]
        u = min(max((self.end - 0.5 * (start + end)) / self.fade, 0.0), 1.0)
        return u * u * (3.0 - 2.0 * u)

    def __getitem__(self, e: int) -> tuple[int, float, float, bool]:
        while len(self.cache) <= e:
            code, start, end, held = self.sequence.element(len(self.cache))
            # a cyclic motion ended: its elements past where it stops are played past its end, where
            # it has faded out (core.mkm.presence_weights): they give way and do not vote, as a held
            # element does
            held = held or (self.stop is not None and start >= self.stop - 1e-9)
            self.cache.append((code, start, end, held))
        return self.cache[e]


@dataclass(frozen=True, eq=False)
class _Motions:
    """The motions :func:`synchronize` synchronizes, one entry each, as it has checked them.

    sequences   their support-phase sequences (§4);
    ext         each sequence's extended elements (§4.3, :class:`_Extended`);
    weights     each blend weight: a number, or one per output frame (eq. 6 reads it at each step);
    priorities  each priority, higher first;
    requested   each requested start, output frames from the earliest;
    lengths     each own time where it stops (a cyclic one not ended: where its first pass does);
    repeats     whether each, cyclic and not ended, plays on to the plan's end.
    """

    sequences: list[SupportSequence]
    ext: list[_Extended]
    weights: list
    priorities: list[float]
    requested: list[int]
    lengths: list[float]
    repeats: list[bool]


def _row_support(ext: list[_Extended], row: list[int], rank: list[int]) -> int:
    """The support of a step: the ⊕ (eq. 2) of the elements of the motions joined.

    A finished non-cyclic motion's held element (§4.3) counts where it agrees
    with the others and gives way where it would clash with them: being past
    its end, it cannot be enlarged into a solution, and a motion still playing
    would otherwise wait for it forever.
    """
    out = _DS
    held = []
    for i, e in enumerate(row):
        if e >= 0:
            code, _, _, is_held = ext[i][e]
            if is_held:
                held.append(i)
            else:
                out = _TABLE[out][code]
    for i in sorted(held, key=rank.index):
        joined = _TABLE[out][ext[i][row[i]][0]]
        out = joined if joined != _ERR else out
    return out


def synchronize(
    sequences: list[SupportSequence],
    priorities: list[float],
    starts: list[int],
    weights: list[float],
    *,
    n_k: int = 5,
    fade_frames: float = 0.0,
    stops: Sequence[float | None] | None = None,
    until: float = 0.0,
) -> SyncPlan:
    """Synchronize motions played at the same time (§5): steps, durations, time warps.

    sequences   each motion's :class:`SupportSequence` (one frame rate for all).
    priorities  each motion's priority, higher first; ties rank in the order given.
    starts      each motion's requested start, output frames (the earliest is output frame 0).
    weights     each motion's blend weight (>= 0): a number, or one per output frame ``(T,)``
                (an animated influence), read at the frame where each step begins for eq. (6)
                and held past its end (:func:`weight_at`).
    n_k         steps synchronized ahead (§5.1, default 5 as in MKM).
    fade_frames own frames over which each motion fades out before its end (core.mkm's
                deactivation ramp): eq. (6) weighs its elements there less (0: not at all).
    stops       per motion, None or, for a cyclic motion, the own time where it is ended
                (through its repeats: own time ``t`` plays clip frame ``t mod period``, so
                its period is one pass; at least one frame). Without one a cyclic motion
                repeats as a whole as long as the blend runs (§4.3: "we need to extend its
                sequence as long as the action is running"); a non-cyclic one stops at its
                end (cut the clip to end it earlier).
    until       output frame the plan runs to at least, where a cyclic motion not ended keeps
                repeating (a clip out of the timing, core.mkm's, plays that long).

    Steps (§5.1). The motions' current elements share one index k (the change
    of index of Fig. 7). Steps are committed ``n_k`` ahead of the current one:
    each motion proposes its next element; where their ⊕ is Err, the last
    synchronized elements are enlarged: the highest-priority motion whose
    proposed element is RS or LS gives the constraint, and the motions
    proposing the other foot keep their element one step more (Fig. 9).
    Should that not do, an ∅ of the previous step is extended, or every
    element is (Appendix A, eqs. 10-12): there is always a solution. A
    finished non-cyclic motion holds its last element (§4.3) where it agrees
    with the others and gives way where it would clash (:func:`_row_support`).
    Where one motion goes from one foot straight to the other (a double
    support shorter than a frame) while the others pass through a ∅, that
    phase is folded into the single support before it, on the side the
    priorities choose, so that the motions stay in step (§7's splitting of
    neutral phases; ``in_phase``): a motion's elements then advance by two
    over a ∅ it plays within the step before. Where the others pass through a
    DS, the straight step is paired with it (both land the same foot, their
    heel strikes together; ``strikes_together``), and the single support after
    is held a step by the side the priorities choose: the straight motion
    keeps it, or the other plays its own within its DS's step. A motion
    leaving the pieces of a split DS (§7) is kept in step with the others
    likewise (``pieces_in_step``).

    Starts (§5.1). A motion joins at the first step boundary at or after its
    requested start where its first ``n_k + 1`` elements (the current step
    and the ``n_k`` committed ahead) combine with the committed steps without
    Err; else it tries again at the next boundary (``delays`` says how long it
    waited). One that still cannot join after as many tries as there are
    elements in all sequences (plus ``n_k``) joins where its first element
    alone fits, the steps ahead recommitted with it.

    Joining in step (beyond §5.1). ⊕ lets a walk join another with its single
    support against the other's double support (DS is neutral), and the two
    then stay half a step apart for good, with no Err to show it. So a motion
    enters at its first element only where that is at the same point of a
    step (:func:`in_step`) as the motions already joined that weigh something;
    else at the element of its first stride (:data:`STRIDE_ELEMENTS`) that
    fits, is in step at the join and stays in step over more of the ``n_k + 1``
    steps than the first element would (the earliest of those), playing from
    that element's first frame, where what it skips lasts no longer than its
    stride from there. Where it has no such element at a boundary but would
    have one at a committed step within a stride, it waits for that step (as
    §5.1 waits for one that fits); else it enters at its first element as
    above (a clip standing still has nothing to be in step with, and a long
    standing start is played). ``elements`` at its join step says where it
    entered.

    Durations (§5.2, eq. 6). ``ΔS(k) = Σ w_i ΔS_i(k)`` over the motions whose
    element begins at step k, with ``w_i`` their blend weight times their
    priority, normalised over them ([MMKA04], which derives the weights from
    the priorities, is not available: this keeps a motion of weight 0 from
    shaping time, and makes priorities count when weights are equal). An
    element played with the one after it in one step (a fold) votes the own
    time of both. An element enlarged over several steps votes at each the
    share of its duration the other motions' elements give that step (eq. 6
    over the group of steps: they sum to the weighted mean of what each plays
    in them), and its own time spans every step it covers. A finished
    non-cyclic motion's held element votes only where nothing else does.

    Time warp (§5.3): each motion's own time at the boundaries where its
    elements change, smoothed by :class:`WarpSpline`.

    The plan ends when every motion has played to its end (a cyclic one not
    ended: one pass; it repeats on to the plan's end, at ``until`` at the
    earliest, and does not stop before it). As a guard (the
    rules above always let the highest-priority motion advance), it also
    ends once no unfinished motion has advanced for as many steps as the
    patience above; ``finished`` then says which motions were cut short.
    """
    nA = len(sequences)
    if nA == 0:
        raise ValueError("synchronize needs at least one motion")
    for name, values in (("priorities", priorities), ("starts", starts), ("weights", weights)):
        if len(values) != nA:
            raise ValueError(f"{name} has {len(values)} entries for {nA} motions: give one per motion")
    priorities = [float(p) for p in priorities]
    weights = [checked_weight(w) for w in weights]
    if not all(np.isfinite(priorities)):
        raise ValueError(f"priorities must be finite numbers, got {priorities}")
    checked_relative("priorities", priorities)
    if int(n_k) != n_k or n_k < 1:
        raise ValueError(f"n_k (steps synchronized ahead) must be a positive integer, got {n_k}")
    n_k = int(n_k)
    stops = checked_stops(sequences, stops)
    until = float(until)
    if not np.isfinite(until):
        raise ValueError(f"until (the output frame the plan runs to at least) must be a finite number, got {until}")
    # (a cyclic motion not ended repeats to the plan's end, §4.3; the others stop where they end)
    repeats = [seq.cyclic and stop is None for seq, stop in zip(sequences, stops)]
    lengths = [seq.period if stop is None else stop for seq, stop in zip(sequences, stops)]
    fps = sequences[0].fps
    for i, seq in enumerate(sequences):
        if abs(seq.fps - fps) > 1e-6 * fps:
            raise ValueError(f"motion {i} runs at {seq.fps:g} fps and motion 0 at {fps:g}: resample them to one rate")
    offset = min(int(s) for s in starts)
    requested = [int(s) - offset for s in starts]
    rank = sorted(range(nA), key=lambda i: (-priorities[i], i))
    ext = [_Extended(seq, 0.0 if repeat else fade_frames, stop) for seq, repeat, stop in zip(sequences, repeats, stops)]
    patience = sum(len(seq.codes) for seq in sequences) + n_k + 2
    motions = _Motions(sequences, ext, weights, priorities, requested, lengths, repeats)

    rows: list[list[int]] = []  # rows[j][i]: motion i's extended element at step j, -1 before it joins
    times = [0.0]  # times[j]: output frame where step j begins (known up to the current step + 1)
    join = [-1] * nA
    tries = [0] * nA

    def code(i: int, e: int) -> int:
        return ext[i][e][0]

    def combined_row(row: list[int]) -> int:
        return _row_support(ext, row, rank)

    def resolve(prev: list[int], proposed: list[int]) -> list[int]:
        """Elements of the next step when the proposed ones combine to Err (§5.1, Fig. 9, Appendix A)."""
        # (held elements give way rather than clash, so the clash is between motions still playing)
        codes = [code(i, e) if e >= 0 and not ext[i][e][3] else _DS for i, e in enumerate(proposed)]
        foot = next(codes[i] for i in rank if codes[i] in (_LS, _RS))  # Err means both feet are proposed
        for constraint in (foot, _OTHER_FOOT[foot]):
            trial = [prev[i] if codes[i] == _OTHER_FOOT[constraint] else proposed[i] for i in range(nA)]
            if combined_row(trial) != _ERR:
                return trial
        for i in rank:  # Appendix A: the previous step combined to ∅, extending an absorbing element is enough
            if prev[i] >= 0 and code(i, prev[i]) == _NONE:
                trial = list(proposed)
                trial[i] = prev[i]
                if combined_row(trial) != _ERR:
                    return trial
        return list(prev)  # eq. (10): every last element extended

    def playing(i: int, e: int) -> bool:
        return e >= 0 and not ext[i][e][3]

    def in_phase(prev: list[int], proposed: list[int]) -> list[int]:
        """The proposed elements, kept in step where a double support lies on one side only (§7).

        A motion that goes from one foot straight to the other (its double
        support, or flight, shorter than a frame) would otherwise meet the
        others' DS or ∅ with its next single support, and stay one element
        out of step with them ever after, in phase opposition with no Err to
        show it. The paper names the remedy, splitting neutral phases, without
        its details. Against a DS (:func:`strikes_together`): the straight
        step lands its foot where the others' DS lands theirs, and the phase
        the two sides do not share is the single support after it, held by
        the side the priorities choose (as Fig. 9 does). Against a flight
        (∅): the flight is folded into the single support before it: if the
        highest-priority motion concerned goes straight on, the others play it
        within their last single support and step to the next with it (the top
        priority never waits); else the motions going straight keep their
        single support through the others' flight (an enlargement).
        """
        live = [i for i in range(nA) if prev[i] >= 0 and playing(i, prev[i]) and playing(i, proposed[i])]
        trial = strikes_together(live, prev, proposed)
        if trial != proposed:
            return trial
        straight = [i for i in live if code(i, prev[i]) in _OTHER_FOOT
                    and code(i, proposed[i]) == _OTHER_FOOT[code(i, prev[i])]]
        if not straight:
            return proposed
        lead = min(straight, key=rank.index)
        foot, after = code(lead, prev[lead]), code(lead, proposed[lead])
        straight = [i for i in straight if code(i, prev[i]) == foot]
        # (a DS between is in step with the straight step as it is: it lands the same foot)
        between = [i for i in live if code(i, prev[i]) == foot and code(i, proposed[i]) == _NONE
                   and playing(i, proposed[i] + 1) and code(i, proposed[i] + 1) == after]
        if not between:
            return proposed
        trial = list(proposed)
        if min(straight + between, key=rank.index) in straight:
            for i in between:
                trial[i] = proposed[i] + 1
        else:
            for i in straight:
                trial[i] = prev[i]
        return trial if combined_row(trial) != _ERR else proposed

    def lands(i: int, e: int) -> int | None:
        """The foot motion i puts down where its element e begins (None: none, or it cannot tell):
        a DS after a single support lands the other foot; a single support lands its own foot after
        a flight or straight after the other foot's (after a DS it begins with a take-off)."""
        c, b = code(i, e), (code(i, e - 1) if e > 0 else None)
        if b is None:
            return None
        if c in _OTHER_FOOT:
            return c if b in (_NONE, _OTHER_FOOT[c]) else None
        return _OTHER_FOOT[b] if c == _DS and b in _OTHER_FOOT else None

    def straight_step(i: int, e: int) -> bool:
        """Motion i's element e is a single support straight after the other foot's (no DS between)."""
        return e > 0 and code(i, e) in _OTHER_FOOT and code(i, e - 1) == _OTHER_FOOT[code(i, e)]

    def strikes_together(live: list[int], prev: list[int], proposed: list[int]) -> list[int]:
        """The proposed elements, a motion stepping straight from foot to foot and one passing
        through a double support putting the same foot down together (beyond §7, see
        :func:`synchronize`).

        Against the highest-priority motion that weighs something (the lead): where the lead lands
        a foot by a straight step (or by the short DS after one) and another motion would still
        stand on its single support, landing that foot only with the DS after it, that motion plays
        its single support within its DS's step before (a fold over a single support: its DS began
        with the lead's previous landing); where the lead's DS landed the foot a motion stepped
        straight onto at the same time, and the lead now stands on it alone, that motion keeps its
        single support a step more (an enlargement, voted over both steps by eq. 6)."""
        now = times[min(len(rows), len(times) - 1)]
        weighing = [i for i in live if weight_at(weights[i], now) > 0]
        if len(weighing) < 2:
            return proposed
        lead = min(weighing, key=rank.index)
        ql, pl = proposed[lead], prev[lead]
        landing = lands(lead, ql)
        stepping = straight_step(lead, ql) or straight_step(lead, pl)
        trial = list(proposed)
        for i in live:
            if i == lead:
                continue
            p, q = prev[i], proposed[i]
            if (landing is not None and stepping and code(i, q) in _OTHER_FOOT and lands(i, q) is None
                    and playing(i, q + 1) and code(i, q + 1) == _DS and lands(i, q + 1) == landing):
                trial[i] = q + 1
            elif (straight_step(i, p) and code(lead, ql) == code(i, p) and lands(lead, ql) is None
                  and code(lead, pl) == _DS and lands(lead, pl) == code(i, p) and code(i, q) != code(i, p)):
                trial[i] = p
        return trial if combined_row(trial) != _ERR else proposed

    def piece(i: int, e: int) -> bool:
        """Element e of motion i is one of the pieces of a double support split (§7)."""
        return code(i, e) == _DS and ((e > 0 and code(i, e - 1) == _DS) or code(i, e + 1) == _DS)

    def pieces_in_step(prev: list[int], proposed: list[int]) -> list[int]:
        """The proposed elements, a motion leaving a split double support (§7) kept in step.

        The pieces of a long DS cut into several (:func:`split_double_supports`) are neutral,
        but each takes a step: an odd count of them against a walk's alternating elements puts
        the single support after them half a step off the others' (a walk's standing start
        split in two met the other walk's LS with its DS and played its own LS against the
        other's DS for good). So where its last piece is followed by the single support the
        others step onto now, the motion plays that piece within the one before (elements
        advance by two); and where the single support after its pieces is not in step with the
        others' (:func:`in_step`), it holds its last piece a step more (an enlargement, §5.1),
        until they come to it."""
        trial = list(proposed)
        for i in range(nA):
            p, q = prev[i], proposed[i]
            if p < 0 or not sequences[i].split or not (playing(i, p) and playing(i, q)) or code(i, p) != _DS:
                continue
            now = times[min(len(rows), len(times) - 1)]
            # (the others playing their own elements: one holding its end, or weighing 0, shows no step)
            shown = [e if m != i and join[m] >= 0 and e >= 0 and playing(m, e) and weight_at(weights[m], now) > 0
                     else -1 for m, e in enumerate(trial)]
            if all(e < 0 for e in shown):
                continue
            others = combined_row(shown)
            if piece(i, q) and code(i, q + 1) == others and playing(i, q + 1) and others in _OTHER_FOOT:
                trial[i] = q + 1
            elif piece(i, p) and code(i, q) in _OTHER_FOOT and not in_step(code(i, q), others):
                trial[i] = p
        return trial if combined_row(trial) != _ERR else proposed

    def commit(upto: int) -> None:
        """Synchronize the steps up to ``upto`` (eq. 5, one step at a time)."""
        while len(rows) <= upto:
            prev = rows[-1]
            proposed = pieces_in_step(prev, in_phase(prev, [e + 1 if e >= 0 else -1 for e in prev]))
            rows.append(proposed if combined_row(proposed) != _ERR else resolve(prev, proposed))

    def fits(i: int, k: int, window: int, entry: int = 0) -> bool:
        return all(combined_row(rows[k + j][:i] + [entry + j] + rows[k + j][i + 1:]) != _ERR
                   for j in range(window + 1))

    def others_steps(k: int, window: int) -> list[int]:
        """The support of the steps k .. k + window of the motions already joined that weigh something
        at the current step and play their own elements there (one of weight 0, or one holding its
        end or past where it stops, shows nothing to be in step with)."""
        now = times[min(k, len(times) - 1)]
        weighing = [m for m in range(nA) if join[m] >= 0 and weight_at(weights[m], now) > 0]
        return [combined_row([e if m in weighing and playing(m, e) else -1 for m, e in enumerate(rows[k + j])])
                for j in range(window + 1)]

    def in_step_count(i: int, k: int, window: int, entry: int) -> int:
        """How many of the steps k .. k + window motion i, entering at element ``entry``, plays in
        step (:func:`in_step`) with the motions already joined (:func:`others_steps`)."""
        return sum(in_step(code(i, entry + j), c) for j, c in enumerate(others_steps(k, window)))

    def in_step_entry(i: int, k: int, window: int) -> int | None:
        """The element motion i would enter at in step at step k (see :func:`synchronize`), or None:
        its first element where that fits and is in step there; else the element of its first
        stride that fits, is in step at step k and stays in step over more of the window than the
        first element would (the earliest of those most in step), skipping no more of its start
        than one of its strides from there lasts."""
        if not any(c in _OTHER_FOOT for c in others_steps(k, window)):
            return None  # (the others stand, or fly: no step to be in)
        first = fits(i, k, window)
        if first and in_step_count(i, k, 0, 0):
            return 0
        best, score = None, in_step_count(i, k, window, 0) if first else -1
        for e in range(1, STRIDE_ELEMENTS):
            skipped, stride = ext[i][e][1], ext[i][e + STRIDE_ELEMENTS][1] - ext[i][e][1]
            # (a start longer than one of the clip's strides, standing before it sets off, is played)
            if ext[i][e][3] or skipped > stride or not in_step_count(i, k, 0, e) or not fits(i, k, window, e):
                continue
            count = in_step_count(i, k, window, e)
            if count > score:
                best, score = e, count
        return best

    def entry_element(i: int, k: int, window: int) -> int | None:
        """The element motion i enters at when it joins at step k, or None when it waits (the join
        rule beyond §5.1, see :func:`synchronize`)."""
        entry = in_step_entry(i, k, window)
        if entry is not None:
            return entry
        # nothing in step here: wait for a step of the committed ones where it would be, as §5.1
        # waits for one that fits, if one comes within a stride
        ahead = range(1, min(STRIDE_ELEMENTS, window + 1))
        if tries[i] < STRIDE_ELEMENTS and any(in_step_entry(i, k + j, window - j) is not None for j in ahead):
            return None
        return 0 if fits(i, k, window) else None

    def place(i: int, k: int, window: int, entry: int = 0) -> None:
        """Motion i joins at step k at its element ``entry`` (:func:`fits` checked that it can). The
        steps ahead are committed again with it (the caller commits them), as every step is, so
        that the rules keeping the motions in step (``in_phase``, ``resolve``) see it from its start."""
        join[i] = k
        del rows[k + 1:]
        rows[k][i] = entry

    def done(i: int, k: int) -> bool:
        """Motion i has played to its end (a cyclic one not ended: one pass) by the end of step k."""
        e = rows[k][i]
        _, _, end, held = ext[i][e]
        return held or (end >= lengths[i] - 1e-9 and rows[k + 1][i] != e)

    k, stalled = 0, 0
    while True:
        for i in rank:  # §5.1: a motion starts at a step boundary, if it can be synchronized there
            if join[i] >= 0 or requested[i] > times[k] + 1e-9:
                continue
            if max(join) < 0:
                rows.append([-1] * nA)
                place(i, k, n_k)
                commit(k + n_k)
                continue
            commit(k + n_k)
            window = n_k if tries[i] < patience else 0
            entry = entry_element(i, k, window)
            if entry is not None:
                place(i, k, window, entry)
                commit(k + n_k)
            else:
                tries[i] += 1
                if tries[i] > 2 * patience:
                    first = _NAMES[code(i, 0)]
                    raise ValueError(f"motion {i} cannot be synchronized: its first element {first} clashes with the "
                                     f"others' support at every step it could start at; give it another start, or "
                                     f"blend it with motions that leave that foot free")
        commit(k + n_k)
        times.append(times[k] + _step_duration(motions, rows, join, k, times[k]))
        pending = any(j < 0 for j in join)
        # (cyclic motions not ended repeat on to ``until``, a clip out of the timing playing that long)
        extending = any(repeats) and times[k + 1] < until - 1e-9
        if not pending and not extending and all(done(i, k) for i in range(nA)):
            break
        moved = any(rows[k + 1][i] != rows[k][i] and (not done(i, k) or (extending and repeats[i]))
                    and not ext[i][rows[k + 1][i]][3] for i in range(nA) if join[i] >= 0)
        stalled = 0 if moved or pending else stalled + 1
        if stalled > patience:
            break
        k += 1
    return _plan(motions, rows, times, join, k + 1, until if any(repeats) else 0.0)


def checked_stops(sequences: Sequence[SupportSequence], stops) -> list[float | None]:
    """:func:`synchronize`'s ``stops``, per motion None or a float, or ``ValueError`` saying what to fix:
    a stop belongs to a cyclic motion (a non-cyclic one stops at its end: cut the clip to end it
    earlier) and lies at least one own frame on."""
    if stops is None:
        return [None] * len(sequences)
    stops = list(stops)
    if len(stops) != len(sequences):
        raise ValueError(f"stops has {len(stops)} entries for {len(sequences)} motions: give one per motion (None: "
                         f"where it ends)")
    out = []
    for i, (seq, stop) in enumerate(zip(sequences, stops)):
        if stop is None:
            out.append(None)
            continue
        stop = float(stop)
        if not seq.cyclic:
            raise ValueError(f"motion {i} is not cyclic, so it stops at its end: cut it to end it earlier, or give "
                             f"None")
        if not (np.isfinite(stop) and stop >= 1):
            raise ValueError(f"motion {i}'s stop must be an own time of at least one frame, got {stop}")
        out.append(stop)
    return out


def checked_weight(weight) -> float | np.ndarray:
    """A motion's blend weight as :func:`synchronize` takes it: a number, or one per output frame
    ``(T,)`` (an animated NLA influence; read by :func:`weight_at`), finite, non-negative and at
    most :data:`LARGEST_RELATIVE`."""
    if np.ndim(weight) == 0:
        value = float(weight)
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"weights must be finite and non-negative, got {weight}")
        checked_relative("weights", [value])
        return value
    values = np.asarray(weight, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"a weight over output frames must be a non-empty 1-d array, got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("weights over output frames must be finite and non-negative at every frame")
    checked_relative("weights", values)
    return values


def checked_relative(what: str, values) -> None:
    """``ValueError`` when a finite weight or priority among ``values`` is larger than
    :data:`LARGEST_RELATIVE` (in magnitude), saying they are relative."""
    values = np.asarray(values, dtype=np.float64)
    if np.any(np.abs(values) > LARGEST_RELATIVE):
        largest = f"{LARGEST_RELATIVE:,.0f}"
        rule = (f"1,3 blend as 0.25,0.75 do): give numbers of at most {largest}" if what == "weights" else
                f"higher plays first): give numbers between -{largest} and {largest}")
        raise ValueError(f"{what} are relative ({rule}, got {[float(v) for v in np.ravel(values)][:8]}")


def weight_at(weight, frame: float) -> float:
    """A weight (:func:`checked_weight`) at output frame ``frame``: a number is the same at every frame;
    weights over output frames are read at the frame ``frame`` lies in, the last one past their end
    (and the first before frame 0)."""
    if np.ndim(weight) == 0:
        return float(weight)
    return float(weight[int(np.clip(np.floor(frame + 1e-9), 0, len(weight) - 1))])


def _weight_json(weight):
    """A weight for :meth:`SyncPlan.to_dict`: the number, or the weights over output frames, rounded."""
    return float(weight) if np.ndim(weight) == 0 else [round(float(w), 4) for w in weight]


def _own_vote(rows, j: int, i: int, ext) -> float:
    """Own time motion i's element at step j plays there: its duration, or up to the element the
    motion plays at the next step where it plays the one after within this step too (a fold:
    ``in_phase``, ``pieces_in_step``), else that element's time would go unvoted."""
    e = rows[j][i]
    _, a, b, held = ext[i][e]
    after = rows[j + 1][i] if j + 1 < len(rows) else e
    if not held and after > e + 1 and not ext[i][after][3]:
        b = ext[i][after][1]
    return b - a


def _step_duration(motions: _Motions, rows, join, j: int, time: float = 0.0) -> float:
    """ΔS(j), eq. (6), over the motions whose element begins at step j (see :func:`synchronize`);
    weights over output frames are read at ``time``, the output frame where step j begins.
    ``rows[j][i]``: motion i's element at step j; ``join[i]``: the step it joined at.

    An element enlarged over steps a..b (§5.1) votes at each of them the share of its duration
    that the other motions' fresh elements give that step (eq. 6 over the group of steps), so
    that a long element held through a short one of the others neither lengthens the short step
    nor leaves the later ones to the others alone."""
    ext, weights, priorities = motions.ext, motions.weights, motions.priorities

    def weight(i, e):
        return weight_at(weights[i], time) * priorities[i] * ext[i].deactivation(e)

    def span(i, e):
        a = j
        while a > join[i] and rows[a - 1][i] == e:
            a -= 1
        b = j
        while b + 1 < len(rows) and rows[b + 1][i] == e:
            b += 1
        return a, b

    def fresh_mean(s, i):
        """The weighted mean vote of the motions other than i whose element begins and ends at step s."""
        num = den = 0.0
        for m, e in enumerate(rows[s]):
            if m == i or e < 0 or ext[m][e][3] or (s > join[m] and rows[s - 1][m] == e) or \
                    (s + 1 < len(rows) and rows[s + 1][m] == e):
                continue
            w = weight(m, e)
            num += w * _own_vote(rows, s, m, ext)
            den += w
        return num / den if den > 0 else None

    votes, held_votes = [], []
    for i, e in enumerate(rows[j]):
        if e < 0:
            continue
        _, a_own, b_own, held = ext[i][e]
        first, last = span(i, e)
        if held:
            if first == j:
                held_votes.append((i, b_own - a_own, e))
            continue
        if first == last:
            votes.append((i, _own_vote(rows, j, i, ext), e))
            continue
        d = _own_vote(rows, last, i, ext) if last + 1 < len(rows) else b_own - a_own
        shares = [fresh_mean(s, i) for s in range(first, last + 1)]
        if all(f is not None and f > 0 for f in shares):
            votes.append((i, d * shares[j - first] / sum(shares), e))
        else:
            votes.append((i, d / (last - first + 1), e))
    # (every motion continuing an enlarged element cannot happen: the top priority never waits)
    votes = votes or held_votes or [(i, ext[i][e][2] - ext[i][e][1], e) for i, e in enumerate(rows[j]) if e >= 0]
    w = [weight(i, e) for i, _, e in votes]
    if not sum(w) > 0:
        w = [max(priorities[i], 0.0) for i, _, _ in votes]
    if not sum(w) > 0:
        w = [1.0] * len(votes)
    return sum(wi * d for wi, (_, d, _) in zip(w, votes)) / sum(w)


def _plan(motions: _Motions, rows, times, join, K: int, until: float) -> SyncPlan:
    """The plan of the first ``K`` steps: knots, the end, warps. ``rows``, ``times`` and ``join``
    as :func:`synchronize` committed them; a cyclic motion not ended plays on to the plan's end,
    at ``until`` at the earliest."""
    sequences, ext, weights, priorities = motions.sequences, motions.ext, motions.weights, motions.priorities
    requested, lengths, repeats = motions.requested, motions.lengths, motions.repeats
    nA = len(sequences)
    times = list(times)
    for j in range(len(times) - 1, len(rows)):  # durations of the steps committed ahead, for the knots
        times.append(times[j] + _step_duration(motions, rows, join, j, times[j]))
    times = np.array(times)
    splines, ends, finished, counts = [], [], [], []
    for i in range(nA):
        column = [row[i] for row in rows]
        knot_t, knot_own = [], []
        held_since = None  # output frame where a motion reached its end (and the own time it reached)
        for j in range(join[i], len(rows) + 1):
            if j < len(rows) and j > join[i] and column[j] == column[j - 1]:
                continue
            if j < len(rows) and held_since is None and ext[i][column[j]][3]:
                held_since = times[j], ext[i][column[j]][1]
            knot_t.append(times[j])
            if held_since is not None:
                # past its end the held posture's own time runs at the output's pace (the clip frame is
                # clamped anyway; a cyclic one ended weighs nothing there), so the warp goes on
                # straight instead of bending into the hold
                knot_own.append(held_since[1] + times[j] - held_since[0])
            else:  # an element still running at the last step committed ends there
                knot_own.append(ext[i][column[j]][1] if j < len(rows) else ext[i][column[-1]][2])
        spline = WarpSpline.through(knot_t, knot_own)
        splines.append(spline)
        length = lengths[i]
        end_i = spline.time_of(min(length, knot_own[-1]))
        reached = knot_own[-1] >= length - 1e-9 and end_i <= times[K] + 1e-9
        finished.append(bool(reached))
        ends.append(end_i if reached else float(times[K]))
        # the output frames it needs: a cyclic clip's last frame is the next cycle's first, so up to
        # its period (or where it is ended); another's up to the frame that plays its last frame, not
        # past it, where its own time would be clamped (a last output step shorter than the others,
        # a jolt at the end)
        last = spline.time_of(min(length - 1, knot_own[-1])) if reached and not sequences[i].cyclic else None
        counts.append(int(np.floor(last + 1e-9)) + 1 if last is not None else int(np.ceil(ends[-1] - 1e-9)))
    end = max(max(ends), until)
    if until > 0:
        counts.append(int(np.ceil(until - 1e-9)))
    # (a cyclic motion not ended repeats to the plan's end and stops with it: it does not fade, §4.3)
    ends = [end if repeat else e for e, repeat in zip(ends, repeats)]
    K_out = int(np.searchsorted(times[:K], end - 1e-9, side="left"))
    n_frames = max(counts)
    frames = np.arange(n_frames, dtype=np.float64)
    warps = []
    for i, spline in enumerate(splines):
        w = spline(frames)
        w[frames < times[join[i]] - 1e-9] = np.nan
        warps.append(w)
    boundaries = np.append(times[:K_out], end)
    rank = sorted(range(nA), key=lambda i: (-priorities[i], i))
    combined = np.array([_row_support(ext, row, rank) for row in rows[:K_out]], dtype=np.int8)
    elements = [np.array([row[i] for row in rows[:K_out]], dtype=np.int64) for i in range(nA)]
    delays = [int(round(times[join[i]] - requested[i])) for i in range(nA)]
    return SyncPlan(n_frames, boundaries, combined, elements, delays, warps, tuple(weights), tuple(priorities),
                    tuple(join), tuple(finished), splines, list(sequences), tuple(float(e) for e in ends))
