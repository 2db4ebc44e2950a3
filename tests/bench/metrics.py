"""Helpers of the quality benchmark: the naive crossfade it compares with, another rig's
copy of a clip, the core error and the body speeds of the paper's Fig. 5.

Shared by the benchmark scripts in this folder (not a test, not a package:
scripts import it from their own directory, tests load it by path). The
quality measure itself is core.quality's, not redefined here.

Conventions are those of :mod:`core.motion`: lengths in the skeleton's unit,
the up axis is ``motion.skeleton.up``, frame ranges are ``(first, last)``
*inclusive*.

* :func:`naive_crossfade` — what an animator does with the NLA: move the next
  clip onto the previous one by hand (pelvis onto pelvis on the ground, facing
  onto facing about the up axis) and crossfade every local rotation (slerp)
  and translation (linear) over a few frames.
* :func:`cmu_metres_z_up` — a Bandai Namco clip as another rig stores the
  same motion: CMU joint names, metres, Z up. Measures that claim not to
  depend on the rig must give the same figures on both.
* :func:`core_error` — how far an output strays from a clip on its core frames.
* :func:`mean_speed`, :func:`lower_body_joints`, :func:`upper_body_joints` —
  the lower- and upper-body speeds of Oshita 2014, Fig. 5.
* :func:`swing_kept_across_joins` — how much of the arms' swing an assembly in pieces keeps
  across each join (core.assemble's pieces slerped over their overlaps).
* :func:`accel_floor` — a bound no motion joining two cores goes below on a
  gap's peak mean-joint acceleration (core.quality's samples; the smoothest
  joint paths joining them, the gap's reference, are core.quality's
  :func:`core.quality.smoothest_join`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import quat  # noqa: E402
from core.analysis import foot_contacts, horizontal, pelvis_facing  # noqa: E402
from core.motion import Motion, forward_kinematics  # noqa: E402
from core.quality import gap_samples  # noqa: E402
from core.rig import Rig, detect_up  # noqa: E402

# The Bandai Namco joints under the names of the CMU capture (as converted to
# BVH by cgspeed); the still joint_Root above the hips has no CMU counterpart.
BANDAI_TO_CMU = {
    "joint_Root": "Root", "Hips": "Hips", "Spine": "Spine", "Chest": "Spine1", "Neck": "Neck", "Head": "Head",
    **{f"{bandai}_{s}": f"{side}{cmu}" for s, side in (("L", "Left"), ("R", "Right"))
       for bandai, cmu in (("Shoulder", "Shoulder"), ("UpperArm", "Arm"), ("LowerArm", "ForeArm"), ("Hand", "Hand"),
                           ("UpperLeg", "UpLeg"), ("LowerLeg", "Leg"), ("Foot", "Foot"), ("Toes", "ToeBase"))},
}
Y_TO_Z_UP = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)  # a quarter turn about X takes +Y to +Z


def cmu_metres_z_up(motion: Motion) -> Motion:
    """A Y-up clip renamed to CMU joint names, in metres (from its skeleton's unit) and turned Z up.

    The motion itself is unchanged: the same poses in another rig's
    conventions, as a second exporter would write the same capture.
    """
    if not np.allclose(motion.skeleton.up, [0.0, 1.0, 0.0]):
        raise ValueError(f"cmu_metres_z_up turns a Y-up clip, this one is up along {motion.skeleton.up}")
    return motion.renamed(BANDAI_TO_CMU).scaled(motion.skeleton.unit).transformed(Y_TO_Z_UP)


def core_error(output: Motion, output_start: int, source: Motion, source_start: int, core: tuple[int, int]) -> float:
    """Largest distance (the output's unit) of any joint on any core frame from where ``source`` has it.

    output, output_start  the output and the timeline frame of its frame 0;
    source, source_start  the clip as placed (aligned as the output should
                          have it) and the timeline frame of its frame 0;
    core                  its core, clip frames, inclusive.
    An output that does not cover the core has an infinite error.
    """
    first, last = core
    a = source_start + first - output_start
    if a < 0 or a + last - first >= output.n_frames:
        return float("inf")
    out = output[a : a + last - first + 1].global_positions()
    return float(np.linalg.norm(out - source[first : last + 1].global_positions(), axis=-1).max())


def lower_body_joints(rig: Rig) -> list[int]:
    """Both ankles and the pelvis: the lower body of Oshita 2014, Fig. 5 ("left foot, right foot, and pelvis")."""
    return [*rig.feet, rig.pelvis]


def upper_body_joints(rig: Rig) -> list[int]:
    """Both wrists, the chest and the head (those the rig has): the upper body of Oshita 2014, Fig. 5."""
    wrists = [arm.wrist for arm in (rig.arm("L"), rig.arm("R")) if arm is not None]
    return wrists + [j for j in (rig.chest, rig.head) if j is not None]


def mean_speed(motion: Motion, joints: list[int]) -> np.ndarray:
    """``(F,)`` mean over ``joints`` of each one's global speed, units/s.

    Central differences, one-sided at the ends: a curve to look at, not the skate measure.
    """
    if motion.n_frames < 2:
        return np.zeros(motion.n_frames)
    g = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints, rotations_out=False)[0]
    return np.linalg.norm(np.gradient(g, axis=0), axis=-1).mean(axis=1) * motion.fps


def _rooted(motion: Motion, pelvis: int) -> tuple[np.ndarray, np.ndarray]:
    """Local ``(rotations, positions)`` with the pelvis carrying its world transform.

    The joints above the pelvis (a still ``joint_Root``, say) get the identity
    and a zero translation. Blending then turns the body about its pelvis, not
    about an ancestor that may be metres away, as an animator's crossfade does.
    """
    rot = motion.rotations.copy()
    pos = motion.positions.copy()
    gpos, grot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, [pelvis])
    above = motion.skeleton.chain(pelvis)[:-1]
    rot[:, above] = quat.identity()
    pos[:, above] = 0.0
    rot[:, pelvis] = grot[:, 0]
    pos[:, pelvis] = gpos[:, 0]
    return rot, pos


def _facing(rot: np.ndarray, pos: np.ndarray, motion: Motion, rig: Rig, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """World pelvis position ``(3,)`` and horizontal facing ``(3,)`` at one frame."""
    hips = [rig.leg("L").hip, rig.leg("R").hip]
    g = forward_kinematics(rot[frame], pos[frame], motion.skeleton.parents, [rig.pelvis] + hips)[0]
    return g[0], pelvis_facing(g[1], g[2], motion.skeleton.up)


def naive_crossfade(src: Motion, dst: Motion, start: int, rig: Rig, *, blend_frames: int = 10,
                    auto_blend: bool = False) -> Motion:
    """The NLA way: ``dst`` placed by hand onto ``src`` and crossfaded linearly.

    src, dst      the previous and the next clip, on the same skeleton.
    start         frame of ``src`` at which ``dst`` frame 0 plays (the next
                  strip's start on the timeline when ``src`` starts at 0);
                  ``start >= src.n_frames`` leaves a gap in which ``src``
                  holds its last pose, as an NLA strip does.
    blend_frames  length of the crossfade; output frames ``start .. start +
                  blend_frames - 1`` mix the two clips with weights
                  ``(i + 1) / (blend_frames + 1)`` of ``dst``, so no mixed
                  frame is a copy of either side.
    auto_blend    weights ``i / (blend_frames - 1)`` instead: 0 on the first
                  blend frame and 1 on the last, as Blender's NLA auto blend
                  in/out has it over two strips that overlap on exactly those
                  frames: the first blend frame is ``src``'s own pose and the
                  last ``dst``'s (placed), so a core ending on the first or
                  starting on the last plays untouched.

    Placing by hand: ``dst`` is turned about the up axis so that its pelvis
    facing at frame 0 matches that of ``src`` at ``start``, then moved on the
    ground (not vertically) so that its pelvis sits on ``src``'s pelvis there.
    Every local rotation is slerped and every local translation, the pelvis
    world translation included, interpolated linearly.

    Returns a new motion of ``start + dst.n_frames`` frames, frame 0 being
    ``src`` frame 0; the joints above the pelvis are left at the world origin
    (the pelvis carries the world transform). Inputs are not modified.
    """
    if src.skeleton.names != dst.skeleton.names:
        raise ValueError("naive_crossfade needs both clips on the same skeleton")
    if start < 0 or blend_frames < 1 + auto_blend:
        raise ValueError(f"start must be >= 0 and blend_frames >= {1 + auto_blend}, got {start} and {blend_frames}")
    if src.n_frames == 0 or dst.n_frames == 0:
        raise ValueError("naive_crossfade needs clips with frames")
    up = src.skeleton.up
    pelvis = rig.pelvis
    src_rot, src_pos = _rooted(src, pelvis)
    dst_rot, dst_pos = _rooted(dst, pelvis)

    at = min(start, src.n_frames - 1)
    src_pelvis, src_facing = _facing(src_rot, src_pos, src, rig, at)
    dst_pelvis, dst_facing = _facing(dst_rot, dst_pos, dst, rig, 0)
    angle = np.arctan2(np.dot(up, np.cross(dst_facing, src_facing)), np.dot(dst_facing, src_facing))
    turn = quat.from_axis_angle(up, angle)
    shift = horizontal(src_pelvis - quat.mul_vec(turn, dst_pelvis), up)
    dst_rot[:, pelvis] = quat.mul(turn, dst_rot[:, pelvis])
    dst_pos[:, pelvis] = quat.mul_vec(turn, dst_pos[:, pelvis]) + shift

    n = min(blend_frames, dst.n_frames)
    held = np.minimum(np.arange(start, start + n), src.n_frames - 1)
    w = np.arange(n) / (blend_frames - 1.0) if auto_blend else (np.arange(n) + 1.0) / (blend_frames + 1.0)
    mixed_rot = quat.slerp(src_rot[held], dst_rot[:n], w[:, None])
    mixed_pos = src_pos[held] + w[:, None, None] * (dst_pos[:n] - src_pos[held])
    before = np.minimum(np.arange(start), src.n_frames - 1)
    rot = np.concatenate([src_rot[before], mixed_rot, dst_rot[n:]])
    pos = np.concatenate([src_pos[before], mixed_pos, dst_pos[n:]])
    return Motion(src.skeleton, rot, pos, src.fps)


# --------------------------------------------------------------------------
# what the cores force on a gap's acceleration


def second_differences(n: int) -> np.ndarray:
    """``(n - 2, n)``: the second difference of n samples at each inner sample."""
    d = np.zeros((n - 2, n))
    rows = np.arange(n - 2)
    d[rows, rows], d[rows, rows + 1], d[rows, rows + 2] = 1.0, -2.0, 1.0
    return d


def accel_floor(positions: np.ndarray, first: int, last: int, k: int, fps: float) -> float:
    """A peak mean-joint acceleration over frames ``first`` .. ``last`` of ``positions (F, J, 3)``
    (global, cores on both sides; core.quality's samples, :func:`core.quality.gap_samples`)
    that no motion with these cores goes below.

    For weights w linear in the sample index, the weighted sum of second
    differences depends on the fixed (core) samples only, so for any motion
    max_i mean_j |a_ij| >= mean_j |sum_i w_i a_ij| / sum_i w_i; the weights
    falling to zero just past the gap's end always qualify, the others only
    when a sample falls on the next core's first frame."""
    frames, fixed = gap_samples(first, last, k)
    a = (second_differences(len(frames)) @ positions[frames].reshape(len(frames), -1)) * (fps / k) ** 2
    a = a.reshape(len(frames) - 2, -1, 3)
    i = np.arange(len(a))
    weights = [len(a) - i] + ([i + 1, np.ones(len(a))] if frames[-2] == last else [])
    return max(float(np.linalg.norm(np.tensordot(w, a, axes=(0, 0)), axis=-1).mean() / w.sum()) for w in weights)


def ankle_drift(motion: Motion, rig: Rig) -> float:
    """How far planted feet drift: the largest horizontal distance either ankle moves, while its foot
    is down (core.analysis.foot_contacts, the contacts the contact stage holds), from where it stood
    on the first frame of that run down; 0 for a motion whose feet are never down. In the motion's
    units."""
    up = detect_up(motion, rig)
    ankles = [rig.leg(side).ankle for side in "LR"]
    place = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, ankles,
                               rotations_out=False)[0]
    down = foot_contacts(motion, rig, up=up)
    # each frame's run start, per foot: the last frame before it that was not down, plus one
    frames = np.arange(motion.n_frames)[:, None]
    start = np.maximum.accumulate(np.where(down, 0, frames + 1), axis=0)
    moved = horizontal(place - place[start, [0, 1]], up)
    return float(np.where(down, np.linalg.norm(moved, axis=-1), 0.0).max(initial=0.0))


def swing_kept_across_joins(query: Motion, output: Motion, pieces, rotations: list[np.ndarray],
                            part: str = "upper") -> np.ndarray:
    """``(joins, 2)``: at each join of an assembly ``output`` of ``query`` in ``pieces``
    (core.assemble.Piece, in order; each piece's own local rotations ``rotations[k] (stop - first,
    J, 4)`` before the slerp joins them), over the overlap's frames, how much of each wrist's fore
    and aft swing (across the chest's frontal plane, about each piece's mean over its own frames,
    leg lengths) the ``output`` keeps:
    sum |output| / sum (w_a |a| + w_b |b|), w the pieces' weights (core.assemble.piece_weights).
    1 where the two pieces swing in phase (then the slerp between them keeps the swing), towards 0
    where they swing against each other (the slerp cancels it). Left and right arm in columns."""
    from core.assemble import body_unit, in_front, limb_frames, part_joints, piece_weights
    from core.rig import find_rig
    rig = find_rig(query)
    unit, joints = body_unit(query, rig), part_joints(query.skeleton, rig, part)
    layout = [(p.first, p.stop) for p in pieces]
    weights = piece_weights(layout, query.n_frames)

    def swing(motion: Motion) -> np.ndarray:
        g = motion.global_positions()
        return np.stack([in_front(tip, root, facing) / unit
                         for root, _, tip, facing in (limb_frames(motion, rig, g, s, "arm") for s in "LR")], axis=1)

    out, own = swing(output), []
    for (first, stop), piece in zip(layout, rotations):  # each piece on its own over the query
        alone = query.rotations.copy()
        alone[first:stop, joints] = piece[:, joints]
        played = swing(Motion(query.skeleton, alone, query.positions, query.fps))
        own.append((played, played[first:stop].mean(axis=0)))
    kept = []
    for k in range(1, len(layout)):
        frames = slice(layout[k][0], layout[k - 1][1])
        (a, mean_a), (b, mean_b) = own[k - 1], own[k]
        w_a, w_b = weights[k - 1, frames, None], weights[k, frames, None]
        kept.append(np.abs(out[frames] - w_a * mean_a - w_b * mean_b).sum(axis=0)
                    / (w_a * np.abs(a[frames] - mean_a) + w_b * np.abs(b[frames] - mean_b)).sum(axis=0))
    return np.array(kept).reshape(-1, 2)
