"""Frames from a plan: time warps, pose sampling, blending and leg adaptation.

Everything here works on plain pose arrays over a range of output frames:
``rotations (T, J, 4)`` local quaternions and ``positions (T, J, 3)`` local
translations, as in :class:`core.motion.Motion`. Times are output frames
(floats where a warp makes them fractional).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .analysis import Phase, horizontal, pelvis_facing
from .ik import SOFT_ZONE, chain_joints, legs_ik

REACH = 0.97  # the share of a leg's length a held foot is reached at, or its own extension where longer
from .motion import Motion, forward_kinematics
from .plan import CONNECTION, TRANSITION, Clip, PairPlan, Segment
from .rig import Rig, leg_length
from .track import Context, PhaseSpan, Track, clamped, warp_connection_prev, warp_transition_next, warp_transition_prev
from .weights import smoothstep


def sample(rotations: np.ndarray, positions: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poses at fractional frame indices ``frames (T,)``, clamped to the clip.

    Rotations are slerped between the two neighbouring frames, translations
    interpolated linearly. A frame before the first or after the last holds
    that pose (a clip waits in its first pose before it starts).
    """
    i0, i1, a = neighbours(len(rotations), frames)
    a = a[:, None]
    rot = quat.slerp(rotations[i0], rotations[i1], np.broadcast_to(a, (len(frames), rotations.shape[1])))
    pos = positions[i0] + a[..., None] * (positions[i1] - positions[i0])
    return rot, pos


def neighbours(n_frames: int, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two frames of a clip of ``n_frames`` either side of fractional frames ``frames (T,)``,
    clamped to the clip, and how far along from the first to the second: ``(i0 (T,), i1 (T,),
    a (T,))`` (:func:`sample` interpolates with them)."""
    frames = np.clip(np.asarray(frames, dtype=np.float64), 0.0, n_frames - 1)
    i0 = np.minimum(np.floor(frames).astype(np.int64), max(n_frames - 2, 0))
    i1 = np.minimum(i0 + 1, n_frames - 1)
    return i0, i1, frames - i0


def blend(
    src: tuple[np.ndarray, np.ndarray], dst: tuple[np.ndarray, np.ndarray], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Poses blended from ``src`` (weight 0) to ``dst`` (weight 1), over consecutive frames.

    Joint rotations by slerp, translations linearly; ``weights (T,)`` broadcast
    over joints. Each joint turns from ``src`` towards ``dst`` the same way round
    on every frame: the shorter arc on the first frame, and from there on the
    arc that continues it. Taking the shorter arc frame by frame flips the body
    the other way round in one frame wherever the two sides come to face half a
    turn apart (a spin into a walk), a jump of up to 180 degrees.
    """
    w = np.asarray(weights, dtype=np.float64)
    relative = quat.inv_mul(src[0], dst[0])
    relative = quat.unroll(np.where(relative[:1, ..., :1] < 0.0, -relative, relative), axis=0)
    rot = quat.mul(src[0], quat.power(relative, w[:, None]))
    pos = src[1] + w[:, None, None] * (dst[1] - src[1])
    return rot, pos


def contact_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """End-inclusive runs of True in a boolean array."""
    flags = np.asarray(flags, dtype=bool)
    if not len(flags):
        return []
    # (np.concatenate rather than np.r_, whose index tricks cost more than the rest: this is hot)
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def adapt_legs(
    motion: Motion,
    rig,
    ankle_targets: np.ndarray,
    active: np.ndarray,
    *,
    ankle_rotations: np.ndarray | None = None,
    evaluated: tuple[int, list[int], np.ndarray, np.ndarray] | None = None,
    fade_s: float,
    reach_rule: bool = True,
) -> Motion:
    """Legs of ``motion`` solved by two-bone IK so that each ankle reaches its target (2008, 7.2).

    ankle_targets (F, 2, 3) world targets of the left and right ankle;
    active (F, 2) bool, where False the leg is left as it is, bit for bit, and
    so are a run's first and last frames that ask nothing of the leg (target
    and rotation where the ankle already is: adaptation marks the cores so).
    The knee keeps bending in its own plane; the foot keeps its world
    orientation, so a flat foot stays flat, unless ``ankle_rotations (F, 2,
    4)`` gives the world orientation each foot should have.
    fade_s        seconds over which the solver's easing of the leg's reach near
                  full extension (:func:`core.ik.soft_extension`) fades in from the
                  first frame of each run of active frames and out to its last
                  (:func:`hold_weights`). The targets themselves apply in full from
                  a run's first frame, so a held foot is held there; their
                  continuity is the caller's (the contact stage's corrections grow
                  from zero at the cores, adaptation's targets start where the feet
                  stand). So no hold switches on or off in one frame.
    reach_rule    no leg stretched past the larger of REACH and its own extension (synthesis,
                  whose contact stage brings the body down to feet that leaves short);
                  False: eased into the leg's full reach (assembly and blends, whose pelvis
                  stays where it is).
    evaluated     forward kinematics of ``motion`` when the caller has it: ``(first frame,
                  joints, positions (n, K, 3), rotations (n, K, 4))`` over frames
                  ``first .. first + n - 1``, every active frame among them, of joints
                  that include :func:`core.ik.chain_joints` of both legs.
    """
    rows = np.flatnonzero(active.any(axis=1))
    if not len(rows):
        return motion
    # only the frames where a leg is adapted are solved
    part = slice(rows[0], rows[-1] + 1)
    window = motion[part]
    left, right = rig.leg("L"), rig.leg("R")
    # the legs' chains once, for the ankles and hips here (which solving a leg does
    # not move) and for the solver
    chains = chain_joints(window.skeleton.parents, [(leg.hip, leg.knee, leg.ankle) for leg in (left, right)])
    if evaluated is None:
        evaluated = (chains, *forward_kinematics(window.rotations, window.positions, window.skeleton.parents, chains))
    else:
        # (forward kinematics is frame by frame: the caller's frames are these frames' to the bit)
        first, joints, gpos, grot = evaluated
        column = {j: k for k, j in enumerate(joints)}
        columns, frames = [column[j] for j in chains], slice(part.start - first, part.stop - first)
        evaluated = (chains, gpos[frames][:, columns], grot[frames][:, columns])
    at = {j: k for k, j in enumerate(chains)}
    ankles = [at[left.ankle], at[right.ankle]]
    gpos = evaluated[1][:, ankles]
    given = None if ankle_rotations is None else ankle_rotations[part]
    # A run's first and last frames that ask nothing of the leg are left as they are: the
    # solver would still ease an extended leg's reach there (core.ik.soft_extension)
    hips = evaluated[1][:, [at[left.hip], at[right.hip]]]
    moved = quat.length(ankle_targets[part] - gpos) > 1e-9 * quat.length(gpos - hips)
    if given is not None:
        moved |= quat.length(quat.inv_mul(evaluated[2][:, ankles], given)[..., 1:]) > 1e-9
    if not (moved | ~active[part]).all():
        active = active.copy()
        active[part] = corrected_runs(active[part], moved)
        rows = np.flatnonzero(active.any(axis=1))
        if not len(rows):
            return motion
    legs, columns, targets = [], [], []
    for side, col in (("L", 0), ("R", 1)):
        on = active[part, col]
        if not on.any():
            continue
        leg = rig.leg(side)
        targets.append(np.where(on[:, None], ankle_targets[part, col], gpos[:, col]))
        legs.append((leg.hip, leg.knee, leg.ankle))
        columns.append(col)
    # the solver's easing of the reach fades in with each hold and out with it: a leg held
    # where it stands, nearly straight, would otherwise bend at once by all of it
    hold = hold_weights(active, motion.fps, fade_s)[part][:, columns]
    # nor does it start short of the leg's own extension as blended: a standing leg the
    # sources hold at 99 % of its reach, held where it stands, is reached exactly (eased
    # from its own extension on, it stood a centimetre short of a foot in the air). The
    # zone is the part of the reach the blend leaves (continuous, as the blend is)
    reach = np.array([leg_length(window.skeleton, rig, "LR"[col]) for col in columns])
    own = quat.length(gpos[:, columns] - hips[:, columns]) / reach
    zone = hold * np.clip(1.0 - own, 0.0, SOFT_ZONE)
    # and it eases into no more than the larger of REACH and the leg's own extension: a
    # nearly straight leg asked to stretch further would swing its knee across by many
    # times the change (a held foot settling half a millimetre turned a standing knee by
    # 9 mm in one frame); its foot stays that little short instead
    top = np.maximum(own, REACH) if reach_rule else 1.0
    # both legs on one evaluation of their chains (solving one leg does not move the other)
    # (the contact stage's window runs from the first gap to the last: only the gaps' frames are solved)
    solved = legs_ik(window, legs, np.stack(targets, axis=1),
                     ankle_rotations=None if given is None else given[:, columns], evaluated=evaluated,
                     frames=rows - part.start if len(rows) < len(window) else None, zone=zone, reach=top).rotations
    # frames left alone keep their leg bit for bit
    joints = [j for leg in legs for j in leg]
    on = np.repeat(active[part][:, columns], 3, axis=1)[..., None]
    new = window.rotations.copy()
    new[:, joints] = np.where(on, solved[:, joints], new[:, joints])
    window = Motion.unchecked(window.skeleton, new, window.positions, window.fps)
    rotations = motion.rotations.copy()
    rotations[part] = window.rotations
    return Motion.unchecked(motion.skeleton, rotations, motion.positions, motion.fps)  # products of unit quaternions


def corrected_runs(active: np.ndarray, corrected: np.ndarray) -> np.ndarray:
    """``active (F, L)`` bool without the frames of each run of it before its first ``corrected``
    frame and after its last (all of a run with none)."""
    before, after = nearest_flagged(~active)  # each run's frame before its first, and after its last
    last_on, next_on = nearest_flagged(active & corrected)
    return active & (last_on > before) & (next_on < after)


def nearest_flagged(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every frame of ``flags (F, ...)`` bool, the last flagged frame at or before it (-1
    where none) and the first at or after it (F where none), each ``(F, ...)``."""
    F = len(flags)
    frames = np.arange(F).reshape((F,) + (1,) * (flags.ndim - 1))
    last = np.maximum.accumulate(np.where(flags, frames, -1), axis=0)
    following = np.minimum.accumulate(np.where(flags, frames, F)[::-1], axis=0)[::-1]
    return last, following


def hold_weights(active: np.ndarray, fps: float, fade_s: float) -> np.ndarray:
    """How far each leg's hold has faded in, ``(F, L)``, from where it is active ``(F, L)`` bool.

    0 where inactive; inside each run of active frames a smoothstep of the time
    since the last inactive frame before it, or until the first after it,
    whichever is nearer, over ``fade_s`` seconds; 1 further in. The same
    function of time at any frame rate, and never reaching outside its run:
    frames the caller leaves alone (the cores at a gap's ends) stay as they
    are. The frames before the first and after the last count as inactive
    (whatever plays there is not solved).
    """
    off = ~np.asarray(active, dtype=bool)
    frames = np.arange(len(off)).reshape((len(off),) + (1,) * (off.ndim - 1))
    last_off, next_off = nearest_flagged(off)
    since = np.minimum(frames - last_off, next_off - frames) / fps  # seconds to the nearest inactive frame
    return np.where(off, 0.0, smoothstep(since / max(fade_s, 1e-12)))


def pelvis_shift(
    pelvis: np.ndarray, left: np.ndarray, right: np.ndarray, body: np.ndarray, up: np.ndarray,
    new_left: np.ndarray, new_right: np.ndarray,
) -> np.ndarray:
    """How far the pelvis moves ``(F, 3)`` when the feet move to ``new_left``/``new_right`` (eq. 2, 2008 7.2).

    Eq. (2) places the root at ``P_lfoot + root_x (P_rfoot - P_lfoot) +
    root_z V_body``. The body orientation does not change in adaptation, so
    keeping (root_x, root_z) moves the root by ``(1 - root_x) dP_lfoot +
    root_x dP_rfoot``: only root_x, the pelvis's place along the line from
    the left foot to the right, matters. It is read on the ground plane and
    kept within [0, 1] (between the feet): where the feet line up with the
    body orientation eq. (2) has no unique root_x, and an unbounded value
    would fling the pelvis. Vertical foot changes are not passed on.
    """
    across = horizontal(right - left, up)
    width2 = np.add.reduce(across * across, axis=-1)
    side = horizontal(pelvis - left, up)
    forward = horizontal(body, up)
    forward = forward / np.maximum(quat.length(forward, keepdims=True), 1e-12)
    # root_x from the component of the pelvis across the body orientation (eq. 2 solved for root_x)
    lateral = quat.cross(forward, up)
    denom = np.add.reduce(across * lateral, axis=-1)
    # how well the feet span the body's side-to-side axis: 1 across it, 0 along it;
    # root_x fades to the midpoint (0.5) as eq. (2) loses its grip, never jumping there
    grip = np.clip((np.abs(denom) / np.maximum(np.sqrt(width2), 1e-12) - 0.2) / 0.4, 0.0, 1.0)
    raw = np.add.reduce(side * lateral, axis=-1) / np.where(np.abs(denom) > 1e-12, denom, 1.0)
    root_x = (grip * np.clip(raw, 0.0, 1.0) + (1.0 - grip) * 0.5)[:, None]
    shift = (1.0 - root_x) * (new_left - left) + root_x * (new_right - right)
    return horizontal(shift, up)


def move_pelvis_by(motion: Motion, rig: Rig, shift: np.ndarray) -> Motion:
    """``motion`` with its pelvis moved by ``shift (F, 3)`` in world space."""
    if not shift.any():
        return motion
    rot, pos = move_pelvis((motion.rotations, motion.positions), motion.skeleton, rig, shift)
    return Motion.unchecked(motion.skeleton, rot, pos, motion.fps)


def move_pelvis(pose, skeleton, rig: Rig, shift: np.ndarray):
    """Poses with the pelvis moved by ``shift (T, 3)`` in world space (its children follow)."""
    rot, pos = pose
    pos = pos.copy()
    pelvis = rig.pelvis
    parent = skeleton.parents[pelvis]
    if parent < 0:
        pos[:, pelvis] += shift
    else:
        # the shift expressed in the parent's frame
        _, grot = forward_kinematics(rot, pos, skeleton.parents, [parent])
        pos[:, pelvis] += quat.inv_mul_vec(grot[:, 0], shift)
    return rot, pos


# --------------------------------------------------------------------------
# a pair's frames, as its plan says


@dataclass(frozen=True)
class _Window:
    """The output frames ``t`` a pair renders, and how its blends meet their motions."""

    t: np.ndarray
    pose_ends: str

    @property
    def T(self) -> int:
        return len(self.t)

    def end_pose(self, side, seg: Segment, mode: str, frames: np.ndarray):
        """One side of a blend at ``frames`` (window indices inside ``seg``).

        "motion": the side as it plays; "held": its pose at the segment's
        start (the source) or end (the target) held still, as the paper
        blends poses; "source"/"target": with eased ends (the default) the
        source keeps moving at its own speed at the start and comes to rest
        half way through, the target starts at rest and reaches its own
        speed at the end, so the output's velocity matches both motions at
        the segment's ends; with held ends, as "held".
        """
        a, b = seg.start - self.t[0], seg.end - self.t[0]
        if mode == "motion":
            return side[0][frames], side[1][frames]
        if mode == "held" or self.pose_ends != "eased":
            i = clamped(a if mode == "source" else b, self.T)
            return side[0][i : i + 1].repeat(len(frames), 0), side[1][i : i + 1].repeat(len(frames), 0)
        dur = max(b - a, 1)
        k = np.clip(frames - a, 0, dur).astype(float)
        idx = a + k - k * k / (2.0 * dur) if mode == "source" else b - dur / 2.0 + k * k / (2.0 * dur)
        return sample(side[0], side[1], idx)

    def through(self, src, dst, seg: Segment, src_mode: str, dst_mode: str):
        """``src`` before the segment, the blend inside it, ``dst`` after it: ``(T, J, 4), (T, J, 3)``."""
        a, b = seg.start - self.t[0], seg.end - self.t[0]
        rot, pos = dst[0].copy(), dst[1].copy()
        head = slice(0, max(a, 0))
        rot[head], pos[head] = src[0][head], src[1][head]
        frames = np.arange(max(a, 0), min(b, self.T - 1) + 1)
        if len(frames):
            w = seg.weights.evaluate(b - a + 1)[frames - a] if b > a else np.ones(len(frames))
            rot[frames], pos[frames] = blend(self.end_pose(src, seg, src_mode, frames),
                                             self.end_pose(dst, seg, dst_mode, frames), w)
        return rot, pos

    def weights_of(self, seg: Segment) -> np.ndarray:
        """The weight of ``seg`` at every frame of the window: 0 before it, 1 after it."""
        w = np.zeros(self.T)
        a, b = seg.start - self.t[0], seg.end - self.t[0]
        w[b + 1 :] = 1.0
        if b >= a:
            w[a : b + 1] = seg.weights.evaluate(b - a + 1)
        return w


def render_pair(track: Track, clip: Clip, clip_contacts: np.ndarray, pair: PairPlan, ctx: Context) -> Track:
    """The track extended by ``clip`` as ``pair`` says (2014, 4.2; 2008, 5.2, 6.2, 7.2)."""
    nxt = pair.alignment.apply(clip.motion, ctx.rig.pelvis)
    first_blend, stop = blend_start(pair), rendered_until(pair, clip)
    t = np.arange(first_blend, stop + 1)

    # time warps: which source frame each side shows at each output frame
    if pair.method == TRANSITION:
        p0, p1 = (PhaseSpan(Phase[n], a, b) for n, a, b in (pair.prev_phase, pair.next_phase))
        u_prev = warp_transition_prev(t, p0, p1, ctx.options.warp_ramp_s * ctx.fps)
        u_next = warp_transition_next(t, p0, p1, ctx.options.warp_ramp_s * ctx.fps)
    elif pair.method == CONNECTION:
        p0 = PhaseSpan(Phase[pair.prev_phase[0]], *pair.prev_phase[1:])
        lower = pair.segment("lower")
        u_prev = warp_connection_prev(t, p0, lower.end, ctx.options.warp_ramp_s * ctx.fps)
        u_next = t.astype(float)
    else:
        u_prev, u_next = t.astype(float), t.astype(float)
    prev = sample(track.rotations, track.positions, u_prev - track.first)
    new = sample(nxt.rotations, nxt.positions, u_next - clip.start)
    prev_contacts = track.contacts[np.clip(np.round(u_prev - track.first).astype(int), 0, len(track.contacts) - 1)]
    new_contacts = clip_contacts[np.clip(np.round(u_next - clip.start).astype(int), 0, clip.motion.n_frames - 1)]

    window = _Window(t, ctx.pose_ends)

    lower_mask = ctx.lower
    # upper body: pose to pose (eqs. 2, 4, 6)
    upper_rot, upper_pos = window.through(prev, new, pair.segment("upper"), "source", "target")

    # lower body
    adapt_targets = None
    if pair.method == TRANSITION:  # eq. (1): motion to motion
        seg = pair.segment("lower")
        lrot, lpos = window.through(prev, new, seg, "motion", "motion")
        contacts = np.where((window.weights_of(seg) < 0.5)[:, None], prev_contacts, new_contacts)
    elif pair.method == CONNECTION:  # eq. (3): motion to the connection pose
        seg = pair.segment("lower")
        # Fig. 4c: when no weight function can follow the motion, blend from its held pose
        lrot, lpos = window.through(prev, new, seg, "motion" if seg.blend == "motion-to-pose" else "source", "held")
        contacts = np.where((window.weights_of(seg) < 0.5)[:, None], prev_contacts, new_contacts)
    else:
        lrot, lpos, contacts, adapt_targets = adaptation_lower(
            nxt, new, prev, new_contacts, prev_contacts, pair, ctx, window)

    rot = np.where(lower_mask[None, :, None], lrot, upper_rot)
    pos = np.where(lower_mask[None, :, None], lpos, upper_pos)
    motion = Motion(nxt.skeleton, rot, pos, ctx.fps)

    # adaptation's kept and stepping feet by leg IK (2008, 7.2); every planted foot
    # is held afterwards, over the whole gap, by the contact stage (core.contacts)
    if adapt_targets is not None and adapt_targets[1].any():
        motion = adapt_legs(motion, ctx.rig, *adapt_targets, fade_s=ctx.options.contacts.hold_fade_s)

    keep = first_blend - track.first
    if keep > len(track.rotations):
        # a gap before the blend: the previous motion holds its last pose (2008, 6.2)
        track = held_until(track, first_blend - 1)
    rest = slice(stop + 1 - clip.start, None)
    return Track(
        rotations=np.concatenate([track.rotations[:keep], motion.rotations, nxt.rotations[rest]]),
        positions=np.concatenate([track.positions[:keep], motion.positions, nxt.positions[rest]]),
        contacts=np.concatenate([track.contacts[:keep], contacts, clip_contacts[rest]]),
        first=track.first,
        core_end=clip.start + clip.core_range[1],
        name=clip.name,
        core_start=clip.start + clip.core_range[0],
    )


def blend_start(pair: PairPlan) -> int:
    """The first output frame :func:`render_pair` changes: the previous track plays up to it."""
    return min(s.start for s in pair.segments if s.blend != "deformation")


def rendered_until(pair: PairPlan, clip: Clip) -> int:
    """The last output frame :func:`render_pair` blends: after it the aligned clip plays as it is."""
    last = max(s.end for s in pair.segments)
    if pair.method == TRANSITION:
        last = max(last, pair.next_phase[2])  # the clip's time warp ends with its phase
    # (a clip that starts after the blend waits in its first pose until then)
    return int(min(max(last + 1, clip.start), clip.end))


def held_until(track: Track, frame: int) -> Track:
    """The track extended to output ``frame`` by holding its last pose (and contacts)."""
    n = frame - track.last
    if n <= 0:
        return track
    return Track(
        rotations=np.concatenate([track.rotations, np.repeat(track.rotations[-1:], n, 0)]),
        positions=np.concatenate([track.positions, np.repeat(track.positions[-1:], n, 0)]),
        contacts=np.concatenate([track.contacts, np.repeat(track.contacts[-1:], n, 0)]),
        first=track.first,
        core_end=track.core_end,
        name=track.name,
        core_start=track.core_start,
    )


def adaptation_lower(nxt: Motion, new, prev, new_contacts: np.ndarray, prev_contacts: np.ndarray, pair: PairPlan,
                     ctx: Context, window: _Window):
    """Lower body of motion adaptation (2008, 7.2; 2014, 4.2.3-4.2.4).

    The previous motion's feet are kept: the following motion's legs reach
    them by IK, its pelvis placed from the feet and body orientation by eq.
    (2). During its first foot-moving phase each foot goes from the kept
    position to its own (pose to motion, eq. 5). A foot the plan steps is
    down before and after its step and in the air during it; the contact
    stage (core.contacts) holds it and carries it across. A foot the plan
    glides stays down, and the contact stage slides it. A foot the previous
    motion has in the air when S1 starts carries on along its swing, bent
    onto its own place by the end of S1. Under eq. (8) (ADAPTATION_HOLD) no
    foot is kept: the plan steps every foot not already where the clip has it.
    """
    t, T = window.t, window.T
    s1 = pair.segment("lower", "pose-to-pose")
    released = {s.foot: s for s in pair.segments if s.foot and s.blend not in ("step", "swing", "glide")}
    # the plan's steps; a "swing": a foot the previous motion has in the air when S1 starts;
    # a "glide": a foot with no room to step
    steps = {}  # foot -> its step, swing and glide segments, in time order
    for seg in pair.segments:
        if seg.blend in ("step", "swing", "glide"):
            steps.setdefault(("left", "right").index(seg.foot), []).append(seg)
    swinging = np.array([any(s.blend == "swing" and s.foot == side for s in pair.segments) for side in ("left", "right")])
    rig, up = ctx.rig, ctx.up
    left, right = rig.leg("L"), rig.leg("R")
    parents = nxt.skeleton.parents
    i0 = clamped(s1.start - t[0], T)
    # the kept feet: where the previous motion has them at the start of S1 (its whole
    # window's feet where one swings); and the following motion's own feet, pelvis and
    # hips (for its body orientation): one pass of forward kinematics over both
    prev_frames = slice(None) if swinging.any() else slice(i0, i0 + 1)
    g = forward_kinematics(np.concatenate([new[0], prev[0][prev_frames]]),
                           np.concatenate([new[1], prev[1][prev_frames]]), parents,
                           [left.ankle, right.ankle, rig.pelvis, left.hip, right.hip], rotations_out=False)[0]
    g, prev_feet = g[:T], g[T:, :2]
    kept = prev_feet[i0 if swinging.any() else 0]  # (2, 3)
    stepping = np.array([k in steps for k in range(2)])
    # kept: a standing foot the plan releases in its own moving phase (eq. 5); any other
    # foot follows the clip (it steps, or already stands where the clip has it)
    planted = ~swinging & ~stepping & np.array([side in released for side in ("left", "right")])

    # the following motion's own feet, pelvis and body orientation
    feet_own = g[:, :2]
    pelvis_own = g[:, 2]
    body = pelvis_facing(g[:, 3], g[:, 4], up)
    i1 = clamped(s1.end - t[0], T)

    # how far each foot has returned to its own position: 0 kept, 1 own
    release = np.zeros((T, 2))
    home = feet_own[i1].copy()  # where each foot stands in the clip before it first moves
    for k, side in enumerate(("left", "right")):
        if side in released:
            release[:, k] = window.weights_of(released[side])
            home[k] = feet_own[clamped(released[side].start - t[0], T), k]
    release[:, ~planted] = 1.0
    # Each foot is the clip's own foot moved by its offset from home, which fades
    # out while the foot is released: the kept foot until it moves, then its own
    # swing bent smoothly onto its own landing spot (2008, 7.2, t5..t6).
    offset = (1.0 - release[..., None]) * (kept - home)[None]
    feet = feet_own + offset
    # eq. (2): the pelvis keeps its place relative to the feet and the body orientation
    shift = pelvis_shift(pelvis_own, home[None, 0], home[None, 1], body, up, home[None, 0] + offset[:, 0],
                         home[None, 1] + offset[:, 1])
    adapted_rot, adapted_pos = move_pelvis(new, nxt.skeleton, rig, shift)

    # S1: pose to pose from the previous pose to the adapted pose at its end
    w1 = window.weights_of(s1)
    lrot, lpos = window.through(prev, (adapted_rot, adapted_pos), s1, "source", "target")
    after = t > s1.end
    before = t < s1.start
    during = ~before & ~after

    # the sides' own contacts, the previous before half way through S1, the following after
    contacts = np.where((w1 < 0.5)[:, None], prev_contacts, new_contacts)
    held_feet = (release <= 0.0) & planted[None]  # kept, not yet on its way home
    contacts = np.where(held_feet & ~before[:, None], True, contacts)
    # a stepping foot stands on its step's first frame, is in the air after it, and lands
    # on its last frame (unless the clip has it in the air there: it joins the clip's swing)
    for k, foot_steps in steps.items():
        down = np.ones(T, dtype=bool)
        for step in foot_steps:
            lands = new_contacts[:, k] | (step.end < s1.end)
            # (a step stands on its first frame; a swing is in the air from its first; a glide
            # stays on the floor, where the contact stage slides it)
            if step.blend != "glide":
                down &= ~((t >= step.start if step.blend == "swing" else t > step.start) & (t < step.end))
            down &= (t != step.end) | lands
        contacts[:, k] = np.where(during, down, contacts[:, k])
    # IK from S1 on (before it the previous motion plays as it was): kept feet, and
    # every foot while the pelvis is shifted, released ones onto their own places,
    # so that a foot back home stays home while the other one is still kept.
    shifted = quat.length(shift) > 1e-9 * ctx.leg
    active = ~before[:, None] & (((release < 1.0) & planted[None]) | shifted[:, None])
    # during S1 the targets move with the pose blend, from where the previous feet stand
    targets = (1.0 - w1)[:, None, None] * kept[None] + w1[:, None, None] * feet
    for k in np.flatnonzero(swinging):
        # it goes on along the previous motion's swing, bent onto its own place over its
        # step, rising by a share of its way's length (step_height to step_max_height leg
        # lengths) on a smooth bump in time, highest half way through
        step = steps[k][0] if k in steps else s1
        a, b = step.start - t[0], step.end - t[0]
        # time through its step (a step of no length is over on its frame: planned over the one
        # frame before a core, it must land the clip's own foot there, not the previous one's)
        x = np.clip((np.arange(T) - a) / (b - a), 0.0, 1.0) if b > a else (np.arange(T) >= b).astype(float)
        wk = smoothstep(x)
        targets[:, k] = (1.0 - wk)[:, None] * prev_feet[:, k] + wk[:, None] * feet[:, k]
        in_step = (np.arange(T) >= a) & (np.arange(T) <= b)
        reach = quat.length(horizontal(targets[in_step, k] - prev_feet[i0, k], up))
        length = reach.max() if len(reach) else 0.0
        o = ctx.options
        rise = min(max(o.step_rise * length, min(o.step_height * ctx.leg, length)), o.step_max_height * ctx.leg)
        targets[:, k] += (smoothstep(1.0 - np.abs(2.0 * x - 1.0)) * in_step * rise)[:, None] * up
        active[:, k] |= during
    return lrot, lpos, contacts, (targets, active)
