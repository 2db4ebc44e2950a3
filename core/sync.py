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
  lasts ``F``. Past its end a non-cyclic motion holds its last posture (§4.3):
  its own time goes on (the warp stays strictly increasing) and
  :meth:`SupportSequence.clip_frames` clamps it to the last frame.
* A cyclic clip's last frame stands for its first (its end pose matches its
  start, :func:`is_cyclic`), so it repeats with a period of ``F - 1`` frames;
  its sequence is built over frames ``0 .. F - 2`` and, where its first and
  last elements are the same support, the two merge across the seam.
* Output frames count from the earliest requested start (output frame 0).
* Priorities: higher plays first; equal priorities rank in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from . import quat
from .analysis import pelvis_facing, support_phases
from .motion import Motion
from .rig import Rig, detect_up, find_rig, leg_length


class Support(IntEnum):
    """An element of the paper's set FS (§4.1); codes 0-3 are :class:`core.analysis.Phase`'s."""

    DS = 0  # double support
    LS = 1  # left foot on the ground
    RS = 2  # right foot on the ground
    NONE = 3  # ∅: no foot on the ground (flight)
    ERR = 4  # two motions that cannot be blended at this step


_DS, _LS, _RS, _NONE, _ERR = (int(s) for s in Support)
_NAMES = tuple(s.name for s in Support)

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
    """

    codes: np.ndarray
    starts: np.ndarray
    n_frames: int
    fps: float
    cyclic: bool = False

    def __post_init__(self):
        codes = np.array(self.codes, dtype=np.int8)
        starts = np.array(self.starts, dtype=np.int64)
        if codes.ndim != 1 or len(codes) == 0 or starts.shape != codes.shape:
            raise ValueError(f"codes and starts must be equal-length, non-empty 1-d arrays, got {codes.shape} and {starts.shape}")
        if codes.min() < 0 or codes.max() > _NONE:
            raise ValueError(f"a motion's sequence holds DS, LS, RS or NONE (0..3), got {np.unique(codes).tolist()}")
        if np.any(codes[1:] == codes[:-1]):
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
        if n == 1:
            return int(self.codes[0]), float(e * P), float((e + 1) * P), False
        q, r = divmod(e - 1, n - 1)
        r += 1  # elements 1 .. n-1 of cycle q, the last of which runs into cycle q + 1
        if r == n - 1:
            return int(self.codes[r]), float(q * P + self.starts[r]), float((q + 1) * P + self.starts[1]), False
        return int(self.codes[r]), float(q * P + self.starts[r]), float(q * P + self.starts[r + 1]), False

    def extended_codes(self, count: int) -> np.ndarray:
        """The first ``count`` codes of the extended sequence (Fig. 6)."""
        return np.array([self.element(e)[0] for e in range(count)], dtype=np.int8)

    def clip_frames(self, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Own times ``(N,)`` -> (clip frames (N,) float, completed cycles (N,) int).

        Cyclic: wrapped into ``[0, period)`` (a frame between ``period - 1``
        and ``period`` interpolates towards the last frame, the first one's
        pose); else clamped to ``[0, n_frames - 1]``, cycles all 0. NaN stays NaN.
        """
        own = np.asarray(own, dtype=np.float64)
        if self.cyclic:
            cycles = np.floor(own / self.period)
            frames = own - cycles * self.period
            return frames, np.where(np.isnan(cycles), 0, cycles).astype(np.int64)
        return np.clip(own, 0.0, self.n_frames - 1.0), np.zeros(own.shape, dtype=np.int64)

    def to_dict(self) -> dict:
        return {
            "codes": [_NAMES[c] for c in self.codes.tolist()],
            "starts": self.starts.tolist(),
            "n_frames": self.n_frames,
            "fps": self.fps,
            "cyclic": self.cyclic,
        }


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


def _descendants(parents: np.ndarray, joint: int) -> np.ndarray:
    """Indices of ``joint`` and every joint below it (parents come first)."""
    below = np.zeros(len(parents), dtype=bool)
    below[joint] = True
    for j in range(joint + 1, len(parents)):  # a parent's flag is set before its children's
        below[j] = parents[j] >= 0 and below[parents[j]]
    return np.flatnonzero(below)


def cycle_mismatch(motion: Motion, rig: Rig | None = None) -> tuple[float, float]:
    """How far a clip's end is from its start: (pose gap in leg lengths, velocity gap in leg lengths per second).

    Every joint is placed relative to the pelvis, in the frame of the
    pelvis' horizontal facing (so where the clip ends up and which way it
    turned do not count); the pelvis itself adds its height and its
    velocity in that frame. The pose gap is the largest joint distance
    between the first and the last frame; the velocity gap is the largest
    change of velocity across the seam (last frame -> second frame) beyond
    the changes the clip itself makes in the frames either side.
    """
    if motion.n_frames < 3:
        raise ValueError(f"a clip needs at least 3 frames to compare its end with its start, got {motion.n_frames}")
    rig = rig or find_rig(motion)
    up = detect_up(motion, rig)
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    F = motion.n_frames
    picked = np.array([0, 1, 2, F - 3, F - 2, F - 1])  # three frames at the start, three at the end
    g = motion[picked].global_positions()  # (6, J, 3)
    hips = g[:, [rig.leg("L").hip, rig.leg("R").hip]]
    g = g[:, _descendants(motion.skeleton.parents, rig.pelvis)]  # (a root above the pelvis may stay put)
    pelvis = g[:, 0]
    facing = pelvis_facing(hips[:, 0], hips[:, 1], up)
    frame = np.stack([facing, np.broadcast_to(up, facing.shape), quat.cross(up, facing)], axis=1)  # (6, axis, 3)
    local = np.einsum("fak,fjk->fja", frame, g - pelvis[:, None])
    height = (pelvis @ up)[:, None, None] * np.array([0.0, 1.0, 0.0])
    local = np.concatenate([local, height], axis=1) / leg  # (6, J + 1, 3) in leg lengths
    # one-frame velocities in leg lengths per frame: [0→1, 1→2, F-3→F-2, F-2→F-1], the pelvis' travel
    # measured in the frame it faces at the earlier frame
    later, earlier = [1, 2, 4, 5], [0, 1, 3, 4]
    travel = np.einsum("fak,fk->fa", frame[earlier], pelvis[later] - pelvis[earlier]) / leg
    v = np.concatenate([local[later] - local[earlier], travel[:, None]], axis=1)
    # the last frame is the first: across the seam the velocity changes by v[0] - v[3]; a true cycle
    # changes it there no more than the clip's own acceleration does in the frames either side
    seam = quat.length(v[0] - v[3])
    own = np.maximum(quat.length(v[1] - v[0]), quat.length(v[3] - v[2]))
    velocity_gap = np.max(np.maximum(seam - own, 0.0)) * motion.fps
    return float(quat.length(local[5] - local[0]).max()), float(velocity_gap)


def is_cyclic(
    motion: Motion,
    rig: Rig | None = None,
    *,
    pose_tolerance: float = 0.05,
    velocity_tolerance: float = 1.5,
) -> bool:
    """§4.3: do the clip's end pose and velocity match its start, so that it can repeat as a whole?

    pose_tolerance      largest joint distance allowed between the first and
                        the last frame (:func:`cycle_mismatch`), in leg lengths.
    velocity_tolerance  largest velocity difference allowed, in leg lengths per second.
    """
    if motion.n_frames < 3:
        return False
    pose_gap, velocity_gap = cycle_mismatch(motion, rig)
    return pose_gap <= pose_tolerance and velocity_gap <= velocity_tolerance
