"""Rendering one entry of a hop table (Koyama & Goto 2019, sections 3 and 4.1; issue 13 item 5).

A table entry ``T_t = (hop, o_sh, s_s, s_h)`` says which clip to insert and
when; this module turns it into frames, three ways:

plain   the paper's blends (its Unity runtime crossfades clips): the source
        alone, a crossfade of L frames to the hop, the hop alone for ``s_h``
        frames, a crossfade of L frames to the destination, the destination
        alone. The hop is placed by the 2-D rigid transform (a turn about up,
        a move along the ground) that Kovar et al.'s distance found for its
        first blend window, so its body meets the source's where the distance
        was measured and does not jump; the destination is placed on the
        placed hop likewise over the second window (its timing stays fixed:
        destination frame k plays at source frame k + offset). Joint rotations
        are slerped, translations (the pelvis's, so the aligned body path)
        interpolated, with smoothstep weights that are neither 0 nor 1 on any
        blend frame (:func:`crossfade_weights`).
engine  this project's synthesis (core.synthesize): source, hop and
        destination as three clips on the source's timeline at the search's
        timing, the frames each plays alone as its core, so that the engine's
        alignment, blends and contact stage render the two transitions and
        the hop plays as the search chose. Cores (source frames, the
        timeline's):
          source       its frames up to the first blend, ``.. t + s_s - 1``;
          hop          the frames it plays alone, ``t + s_s + L .. u - 1``;
          destination  from the end of its blend, ``u + L ..``, to its end.
        A core needs a frame: where a clip plays none alone (no second stay;
        a trigger at frame 0 with no first stay; a destination that ends with
        its blend), its core is the one blend frame where the plain blends
        give it nearly all the weight: the hop's ``t + s_s + L`` (= u), the
        source's first blend frame, the destination's last. Each clip is given
        only the frames it plays in the plain render (the source up to the end
        of its blend, the hop over its two blends and its stay, the
        destination from its blend on), so that no clip lies inside another's
        span and none is taken for an additional motion to compose (2008,
        section 8); in the two corner cases the clip next to the source (the
        destination) starts a frame late (ends a frame early) for that.
direct  the plain direct transition for comparison: the destination placed
        on the source over the window at the trigger, crossfaded over L
        frames from the trigger.

When the hop is the destination at its own timing (``o_sh = offset``) there
is no second blend: the transition is the direct one delayed by ``s_s``.

Every render is in the source's world (the source is never moved) and on its
frames: output frame ``i`` is source frame ``first + i``. By default it spans
L frames before the trigger (from frame 0 at the earliest), so the source's
motion into the transition shows, to L frames after the destination takes
over (to the destination's last frame at the latest).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from . import hops
from .align import Alignment
from .motion import Motion, forward_kinematics
from .render import blend
from .weights import smoothstep

PLAIN, ENGINE, DIRECT = "plain", "engine", "direct"


@dataclass(frozen=True)
class HopTimeline:
    """One table entry on the source's frames (core.hops's timeline conventions).

    hop_name, src_name, dst_name  the clips' file names, as the table has them.
    """

    trigger: int
    hop_offset: int  # o_sh: hop frame h plays at source frame h + o_sh
    stay_src: int  # s_s
    stay_hop: int  # s_h
    offset: int  # o_sd: destination frame k plays at source frame k + offset
    blend_frames: int  # L
    hop_is_destination: bool  # the hop is the destination at its own timing: no second blend
    hop_name: str = ""
    src_name: str = ""
    dst_name: str = ""

    @property
    def first_blend(self) -> int:
        """Source frame the first blend starts at: ``t + s_s``."""
        return self.trigger + self.stay_src

    @property
    def second_blend(self) -> int | None:
        """Source frame the second blend starts at, ``u = t + s_s + L + s_h``; None when there is none."""
        return None if self.hop_is_destination else self.first_blend + self.blend_frames + self.stay_hop

    @property
    def settled(self) -> int:
        """The first source frame at which the destination plays alone."""
        last = self.first_blend if self.hop_is_destination else self.second_blend
        return last + self.blend_frames

    def span(self, n_src: int, n_dst: int) -> tuple[int, int]:
        """The default output, source frames ``[first, stop)``: L before the trigger to L after
        :attr:`settled`, inside the source's and the destination's frames."""
        length = self.blend_frames
        return max(self.trigger - length, 0), min(self.settled + length, n_dst + self.offset)

    def to_dict(self) -> dict:
        return {"trigger": self.trigger, "hop": self.hop_name, "offset": self.hop_offset, "stay_src": self.stay_src,
                "stay_hop": self.stay_hop, "first_blend": self.first_blend, "second_blend": self.second_blend,
                "settled": self.settled}


def timeline_of(table: hops.HopTable, trigger: int, *, direct: bool = False) -> HopTimeline:
    """The table's choice at ``trigger`` (or, with ``direct``, the direct transition there) as a timeline."""
    row = table.index(trigger)
    hop, hop_offset, stay_src, stay_hop = (int(x) for x in table.choices[row])
    if direct:
        hop, hop_offset, stay_src, stay_hop = table.dst, table.offset, 0, 0
    return HopTimeline(int(trigger), hop_offset, stay_src, stay_hop, table.offset, table.blend_frames,
                       hop == table.dst and hop_offset == table.offset, table.hops[hop], table.hops[table.src],
                       table.hops[table.dst])


@dataclass(frozen=True, eq=False)
class HopRender:
    """A rendered transition: ``motion`` (on the source's skeleton, in its world), whose frame 0
    is source frame ``first``; the timeline it renders; the method; the engine's plan (engine only)."""

    motion: Motion
    first: int
    timeline: HopTimeline
    method: str
    plan: object | None = None

    def summary(self) -> str:
        tl = self.timeline
        what = ("the direct transition" if self.method == DIRECT else
                f"hop {tl.hop_name!r} at offset {tl.hop_offset}, stays {tl.stay_src} and {tl.stay_hop} frames")
        second = "" if tl.second_blend is None else f", the second at {tl.second_blend}"
        return (f"{self.method}: {what}; trigger {tl.trigger}, first blend at source frame {tl.first_blend}{second}, "
                f"the destination alone from {tl.settled}; {self.motion.n_frames} frames from source frame "
                f"{self.first}")


# --------------------------------------------------------------------------- the rigid fit of a window


def ground_fit(target: np.ndarray, moving: np.ndarray, up: np.ndarray) -> Alignment:
    """The turn about ``up`` and the move along the ground that bring points ``moving (N, 3)``
    closest to ``target (N, 3)`` (least squares; nothing moves vertically): Kovar et al.'s
    alignment, in closed form as core.hops.window_distance_matrix has it. With ground coordinates as
    complex numbers u (target) and v (moving), centred, the best turn is ``arg sum u conj(v)``
    and the move takes the turned centroid of v onto that of u."""
    frame = hops.ground_frame(up)  # rows e1, e2 (= up x e1), up: a turn by a about up is e^{ia} here
    a, b = target @ frame[:2].T, moving @ frame[:2].T
    u, v = a[:, 0] + 1j * a[:, 1], b[:, 0] + 1j * b[:, 1]
    cross = np.sum((u - u.mean()) * np.conj(v - v.mean()))
    angle = float(np.angle(cross)) if abs(cross) > 0 else 0.0
    shift = u.mean() - np.exp(1j * angle) * v.mean()
    return Alignment(angle, shift.real * frame[0] + shift.imag * frame[1], frame[2].copy(), "Kovar window")


def window_fit(target: Motion, target_frame: int, moving: Motion, moving_frame: int, length: int,
               joints: np.ndarray, up: np.ndarray) -> Alignment:
    """:func:`ground_fit` of the body ``joints`` of ``moving``'s frames ``[moving_frame, + length)``
    onto ``target``'s ``[target_frame, + length)``: the placement the blend window's distance found."""
    def cloud(m: Motion, first: int) -> np.ndarray:
        window = m[first : first + length]
        return forward_kinematics(window.rotations, window.positions, m.skeleton.parents, joints,
                                  rotations_out=False)[0].reshape(-1, 3)

    return ground_fit(cloud(target, target_frame), cloud(moving, moving_frame), up)


# --------------------------------------------------------------------------- plain blends


def crossfade_weights(length: int) -> np.ndarray:
    """(L,) the weight of the clip blended in on each blend frame: ``smoothstep((i + 1) / (L + 1))``,
    speed 0 at both ends, and no blend frame a copy of either side."""
    return smoothstep((np.arange(length) + 1.0) / (length + 1.0))


def _checked_fits(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline) -> None:
    """``ValueError`` unless every window of the timeline lies inside its clip (the search's rule)."""
    length, a, u = tl.blend_frames, tl.first_blend, tl.second_blend
    windows = [("source", src, a), ("hop", hop, a - tl.hop_offset)]
    if u is not None:
        windows += [("hop", hop, u - tl.hop_offset), ("destination", dst, u - tl.offset)]
    for role, clip, first in windows:
        if first < 0 or first + length > clip.n_frames:
            raise ValueError(f"trigger {tl.trigger}: the {role} ({clip.n_frames} frames) has no blend window of "
                             f"{length} frames at its frame {first}; these are not the clips the table was "
                             f"computed from")


def _checked_span(tl: HopTimeline, src: Motion, dst: Motion, span: tuple[int, int] | None) -> tuple[int, int]:
    first, stop = tl.span(src.n_frames, dst.n_frames) if span is None else (int(span[0]), int(span[1]))
    if not (0 <= first <= tl.trigger and tl.settled <= stop <= dst.n_frames + tl.offset):
        raise ValueError(f"a render of trigger {tl.trigger} spans source frames from {first} (0 .. the trigger) "
                         f"to {stop} (the destination alone from {tl.settled} .. its end, "
                         f"{dst.n_frames + tl.offset})")
    return first, stop


def placed_clips(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline, rig, up: np.ndarray
                 ) -> tuple[Motion, Motion, Alignment, Alignment | None]:
    """The hop and the destination where the plain render plays them: the hop fitted onto the
    source over the first blend window, the destination onto the placed hop over the second (the
    placed hop itself when the hop is the destination at its own timing). Returns them and the
    two fits (the second None then). Turns are carried by the pelvis (core.align.Alignment.apply)."""
    joints = hops.body_joints(src, rig)
    length, a, u = tl.blend_frames, tl.first_blend, tl.second_blend
    first_fit = window_fit(src, a, hop, a - tl.hop_offset, length, joints, up)
    hop_placed = first_fit.apply(hop, rig.pelvis)
    if u is None:
        return hop_placed, hop_placed, first_fit, None
    second_fit = window_fit(hop_placed, u - tl.hop_offset, dst, u - tl.offset, length, joints, up)
    return hop_placed, second_fit.apply(dst, rig.pelvis), first_fit, second_fit


def plain_render(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline, *, rig=None,
                 span: tuple[int, int] | None = None, method: str = PLAIN) -> HopRender:
    """The paper's plain blends of one timeline (module docstring), source frames ``span =
    [first, stop)`` (:meth:`HopTimeline.span` when None). All clips on one skeleton and rate."""
    from .rig import detect_up, find_rig

    _checked_fits(src, hop, dst, tl)
    first, stop = _checked_span(tl, src, dst, span)
    rig = find_rig(src) if rig is None else rig
    up = detect_up(src, rig)
    hop_placed, dst_placed, _, _ = placed_clips(src, hop, dst, tl, rig, up)
    length, a, u = tl.blend_frames, tl.first_blend, tl.second_blend
    w = crossfade_weights(length)

    def poses(motion: Motion, start: int, stop_: int, shift: int) -> tuple[np.ndarray, np.ndarray]:
        """Source frames [start, stop_) of a clip whose frame k plays at source frame k + shift."""
        frames = np.arange(start, stop_) - shift
        return motion.rotations[frames], motion.positions[frames]

    pieces = [poses(src, first, a, 0), blend(poses(src, a, a + length, 0), poses(hop_placed, a, a + length,
                                                                                 tl.hop_offset), w)]
    if u is not None:
        pieces += [poses(hop_placed, a + length, u, tl.hop_offset),
                   blend(poses(hop_placed, u, u + length, tl.hop_offset), poses(dst_placed, u, u + length, tl.offset),
                         w)]
    pieces.append(poses(dst_placed, tl.settled, stop, tl.offset))
    rotations = np.concatenate([r for r, _ in pieces])[: stop - first]
    positions = np.concatenate([p for _, p in pieces])[: stop - first]
    return HopRender(Motion(src.skeleton, rotations, positions, src.fps), first, tl, method)


def direct_render(src: Motion, dst: Motion, tl: HopTimeline, *, rig=None, span: tuple[int, int] | None = None
                  ) -> HopRender:
    """The plain direct transition at ``tl``'s trigger (``span`` as :func:`plain_render`'s; None: the
    direct transition's own, L frames either side)."""
    direct = replace(tl, hop_offset=tl.offset, stay_src=0, stay_hop=0, hop_is_destination=True,
                     hop_name=tl.dst_name)
    return plain_render(src, dst, dst, direct, rig=rig, span=span, method=DIRECT)


# --------------------------------------------------------------------------- through the engine


def engine_clips(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline) -> list:
    """The timeline as core.synthesize clips (module docstring): each clip cut to the frames it
    plays, placed at the search's timing, the frames it plays alone its core."""
    from pathlib import PurePath

    from .plan import Clip

    _checked_fits(src, hop, dst, tl)
    length, a, u = tl.blend_frames, tl.first_blend, tl.second_blend
    # (corner cases, so that no clip lies inside another's span: the clip after the source starts a
    # frame late when the source has none before the blend, the clip before the destination ends a
    # frame early when the destination has none after it; the engine holds their end poses there,
    # where the plain blends weigh them least)
    late = int(a == 0)
    early = int(tl.settled - tl.offset >= dst.n_frames)
    names = [PurePath(n).stem or role for n, role in ((tl.src_name, "source"), (tl.hop_name, "hop"),
                                                      (tl.dst_name, "destination"))]
    if u is None:
        clips = [Clip(src[: a + length - early], 0, (0, max(a - 1, 0)), f"{names[0]} (source)")]
        start = a + late
    else:
        clips = [Clip(src[: a + length], 0, (0, max(a - 1, 0)), f"{names[0]} (source)"),
                 # the hop over its two blends and its stay; its core the stay, or one frame without one
                 Clip(hop[a + late - tl.hop_offset : u + length - early - tl.hop_offset], a + late,
                      (length - late, max(u - 1, a + length) - a - late), f"{names[1]} (hop)")]
        start = u
    cut = dst[start - tl.offset :]
    first_alone = tl.settled - start
    clips.append(Clip(cut, start, (min(first_alone, cut.n_frames - 1), cut.n_frames - 1),
                      f"{names[2]} (destination)"))
    return clips


def engine_render(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline, *, rig=None,
                  span: tuple[int, int] | None = None, responsiveness: float = 0.5) -> HopRender:
    """The timeline through core.synthesize (module docstring); ``span`` as :func:`plain_render`'s."""
    from .synthesize import synthesize

    first, stop = _checked_span(tl, src, dst, span)
    clips = engine_clips(src, hop, dst, tl)
    result = synthesize(clips, responsiveness=responsiveness, rig=rig)
    plan = result.plan
    if plan.rejected or plan.compositions or len(plan.pairs) != len(clips) - 1:
        reasons = "; ".join(r.reason for r in plan.rejected) or ("one clip lies inside another's span and was "
                                                                 "composed over it; render it with plain blends")
        raise ValueError(f"trigger {tl.trigger}: the engine did not join source, hop and destination in turn "
                         f"({reasons})")
    lo, hi = first - plan.start, stop - plan.start
    if lo < 0 or hi > result.motion.n_frames:
        raise ValueError(f"trigger {tl.trigger}: the engine's output covers source frames {plan.start}.."
                         f"{plan.start + result.motion.n_frames - 1}, not {first}..{stop - 1}")
    return HopRender(result.motion[lo:hi], first, tl, ENGINE, plan)


# --------------------------------------------------------------------------- a table entry


def checked_clips(table: hops.HopTable, clips: Mapping[str, Motion], names: list[str]) -> tuple[dict, list[str]]:
    """The clips ``names`` (file names of the table), at the table's rate, checked against what the
    table was computed from (frame counts and :func:`core.hops.clip_digest`, where the table keeps
    them), and warnings (a clip resampled). ``ValueError`` naming the clip otherwise."""
    out, warnings = {}, []
    for name in names:
        if name not in clips:
            raise ValueError(f"the clip {name!r} of the table is missing; give it")
        m = clips[name]
        if abs(m.fps - table.fps) > 1e-4 * table.fps:
            warnings.append(f"clip {name!r} at {m.fps:g} fps is resampled to the table's {table.fps:g} fps")
            m = m.resampled(table.fps)
        i = table.hops.index(name)
        if len(table.frames) and m.n_frames != table.frames[i]:
            raise ValueError(f"clip {name!r} has {m.n_frames} frames at {table.fps:g} fps, the one the table was "
                             f"computed from had {table.frames[i]}: give the clip the table was computed from, or "
                             f"precompute the table again")
        if table.digests and hops.clip_digest(m) != table.digests[i]:
            raise ValueError(f"clip {name!r} is not the one the table was computed from (its poses differ): give "
                             f"that clip, or precompute the table again")
        out[name] = m
    return out, warnings


def _checked_bodies(src: Motion, hop: Motion, dst: Motion, tl: HopTimeline, rig) -> None:
    """``ValueError`` when the source's legs point up, or the destination or the hop is not at the
    source's scale or its legs point up (core.rig.body_mismatch): the precompute refuses such a
    pair and leaves such a hop out, but a table of an older version may name them."""
    from .rig import body_mismatch, check_legs_hang, find_rig

    rig = find_rig(src, clip=f"the source {tl.src_name!r}") if rig is None else rig
    check_legs_hang(src, rig, clip=f"the source {tl.src_name!r}")
    others = {tl.dst_name: ("the destination", dst)}
    others.setdefault(tl.hop_name, ("the hop", hop))
    for name, (role, motion) in others.items():
        why = "" if name == tl.src_name else body_mismatch(motion, src, rig, f"{role} {name!r}",
                                                           f"the source {tl.src_name!r}")
        if why:
            raise ValueError(why)


def render_entry(table: hops.HopTable, clips: Mapping[str, Motion], trigger: int, *, method: str = ENGINE, rig=None,
                 span: tuple[int, int] | None = None, responsiveness: float = 0.5) -> tuple[HopRender, list[str]]:
    """The table's transition at ``trigger`` rendered by ``method`` (``"engine"``, ``"plain"`` or
    ``"direct"``, the module docstring's), and warnings.

    clips  ``{file name: Motion}``: at least the table's source, destination and (unless direct)
           the hop chosen at ``trigger``, the clips the table was computed from.
    rig    the source's joint roles; found on it when None.
    """
    if method not in (ENGINE, PLAIN, DIRECT):
        raise ValueError(f"method must be {ENGINE!r}, {PLAIN!r} or {DIRECT!r}, got {method!r}")
    tl = timeline_of(table, trigger, direct=method == DIRECT)
    needed = list(dict.fromkeys([tl.src_name, tl.hop_name, tl.dst_name]))
    checked, warnings = checked_clips(table, clips, needed)
    src, hop, dst = checked[tl.src_name], checked[tl.hop_name], checked[tl.dst_name]
    _checked_bodies(src, hop, dst, tl, rig)
    if method == ENGINE:
        return engine_render(src, hop, dst, tl, rig=rig, span=span, responsiveness=responsiveness), warnings
    return plain_render(src, hop, dst, tl, rig=rig, span=span, method=method), warnings


def clips_needed(table: hops.HopTable, trigger: int, *, direct: bool = False) -> dict[str, str]:
    """``{role: file name}`` of the clips a render at ``trigger`` reads: source, hop (unless direct or
    the hop is the source or the destination), destination."""
    tl = timeline_of(table, trigger, direct=direct)
    out = {"source": tl.src_name, "destination": tl.dst_name}
    if tl.hop_name not in out.values():
        out["hop"] = tl.hop_name
    return out
