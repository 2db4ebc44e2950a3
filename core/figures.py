"""The figures ``make demo`` draws: body-part speeds (Oshita 2014, Fig. 5) and a crossfade to compare with.

Oshita 2014, section 6, judges a synthesized motion by "the velocities of the
lower and upper body over time": the lower body's is the mean of the speeds of
the left foot, the right foot and the pelvis, the upper body's the mean of those
of the right hand, the left hand, the chest and the head. Foot sliding shows as
lower-body speed where the feet should rest, a sudden change of motion as a
spike. :func:`body_part_speeds` computes both from global joint positions, the
joints' roles from the rig (:mod:`core.rig`), never from their names; speeds are
in leg lengths per second, so any rig, unit and frame rate reads the same.

What it is compared with is a plain crossfade, an NLA user's way: each clip
placed where the synthesis placed it (:func:`placed_motions`, so that both
differ in how they blend, not in where the clips stand) and faded linearly
into the next across the gap between their cores, from the previous core's
last frame to the next core's first (:func:`crossfade_spans`), so that both
keep their cores unblended, as the synthesis does. A clip with no frames of
its own in part of a gap holds its end pose there (NLA's Hold extrapolation).

:func:`plot_speeds` draws the figure with matplotlib, imported only when it is
called: the command line and ``make demo`` have it, Blender's own Python does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .motion import Motion
from .plan import Clip, Plan
from .rig import Rig

PARTS = ("lower body", "upper body")


def lower_body_joints(rig: Rig) -> list[int]:
    """The lower body of 2014 Fig. 5: left foot, right foot (the ankles) and pelvis."""
    return [rig.leg("L").ankle, rig.leg("R").ankle, rig.pelvis]


def upper_body_joints(rig: Rig) -> list[int]:
    """The upper body of 2014 Fig. 5: right hand, left hand, chest and head (those the rig has;
    without a chest the topmost spine joint, without a head the neck)."""
    hands = [arm.wrist for arm in (rig.right_arm, rig.left_arm) if arm is not None]
    chest = rig.chest if rig.chest is not None else (rig.spine[-1] if rig.spine else None)
    head = rig.head if rig.head is not None else rig.neck
    joints = hands + [j for j in (chest, head) if j is not None]
    if not joints:
        raise ValueError("the rig has no hands, chest, spine, neck or head: no upper body to measure "
                         "(map the arms' or the spine's bones)")
    return joints


def body_part_speeds(positions: np.ndarray, rig: Rig, fps: float, leg: float) -> np.ndarray:
    """``positions (F, J, 3)`` global joint positions -> ``(F, 2)`` speeds of the lower and upper
    body (2014 section 6, Fig. 5: the mean of their joints' speeds), in leg lengths (``leg``, in the
    positions' unit) per second. Central differences inside, one-sided at the ends."""
    positions = np.asarray(positions, dtype=np.float64)
    if positions.ndim != 3 or positions.shape[-1] != 3:
        raise ValueError(f"positions must have shape (F, J, 3), got {positions.shape}")
    if len(positions) < 2:
        return np.zeros((len(positions), 2))
    speed = np.linalg.norm(np.gradient(positions, axis=0), axis=-1) * (fps / leg)  # (F, J)
    return np.column_stack([speed[:, lower_body_joints(rig)].mean(axis=1),
                            speed[:, upper_body_joints(rig)].mean(axis=1)])


def placed_motions(clips: Sequence[Clip], plan: Plan, rig: Rig) -> list[Motion]:
    """Each clip of ``clips`` (the plan's, in its order) turned and moved where ``plan`` placed it
    (2008 4.2: the first as it is, each next by its pair's alignment, carried by the pelvis)."""
    by_name = {clip.name: clip for clip in clips}
    missing = [name for name in plan.clips if name not in by_name]
    if missing:
        raise ValueError(f"the plan joins clips {missing} that are not among the clips given "
                         f"({sorted(by_name)}): give the clips it was made from")
    first = by_name[plan.clips[0]].motion
    return [first] + [pair.alignment.apply(by_name[pair.next].motion, rig.pelvis) for pair in plan.pairs]


@dataclass(frozen=True)
class CrossfadeSpan:
    """What one clip plays in the plain crossfade, in output frames (inclusive).

    first, last  the frames it is on: from the previous gap's first frame (the plan's start for
                 the first clip) to the next gap's last (the plan's end for the last clip).
    fade_in      frames over which it fades in from ``first`` (weight 0 there, 1 at
                 ``first + fade_in``): the previous gap's length; 0 for the first clip.
    fade_out     frames over which it fades out to ``last`` (weight 1 at ``last - fade_out``, 0 at
                 ``last``): the next gap's length; 0 for the last clip.
    """

    name: str
    first: int
    last: int
    fade_in: int
    fade_out: int


def core_gaps(clips: Sequence[Clip], plan: Plan) -> list[tuple[int, int]]:
    """Output frames (first, last) of each gap between the cores of consecutive clips of ``plan``:
    the pair's own measured gap, else the previous core's last frame to the next core's first
    (one frame when the cores meet or overlap: a cut)."""
    by_name = {clip.name: clip for clip in clips}
    gaps = []
    for pair in plan.pairs:
        if pair.gap is not None:
            gaps.append(tuple(pair.gap))
            continue
        prev, nxt = by_name[pair.prev], by_name[pair.next]
        end, begin = prev.start + prev.core_range[1], nxt.start + nxt.core_range[0]
        gaps.append((end, max(begin, end)))
    return gaps


def crossfade_spans(clips: Sequence[Clip], plan: Plan) -> list[CrossfadeSpan]:
    """The plain crossfade of ``plan``'s clips (in its order): each clip faded linearly into the
    next across the gap between their cores (:func:`core_gaps`) and nowhere else, so that every
    core plays unblended. What an animator sets up with NLA strips' Blend In and Blend Out."""
    gaps = core_gaps(clips, plan)
    bounds = [(plan.start, plan.start)] + gaps + [(plan.end, plan.end)]
    return [CrossfadeSpan(name, before[0], after[1], before[1] - before[0], after[1] - after[0])
            for name, before, after in zip(plan.clips, bounds[:-1], bounds[1:])]


def held_frames(clip_start: int, n_frames: int, first: int, last: int) -> np.ndarray:
    """The clip frames that play output frames ``first .. last`` of a clip whose frame 0 plays at
    ``clip_start``: its own where it has them, its first or last frame held outside them."""
    return np.clip(np.arange(first, last + 1) - clip_start, 0, n_frames - 1)


def gap_frames(plan: Plan) -> list[tuple[int, int]]:
    """The output frames (first, last) of each gap between cores the plan measured."""
    return [pair.gap for pair in plan.pairs if pair.gap is not None]


def plot_speeds(path: str | Path, first_frame: int, fps: float, curves: dict[str, np.ndarray],
                gaps: Sequence[tuple[int, int]], *, title: str = "", size_px: tuple[int, int] = (1000, 520)) -> Path:
    """Write 2014 Fig. 5 to ``path`` (PNG): one panel per body part, one line per entry of
    ``curves`` (label -> ``(F, 2)`` speeds from :func:`body_part_speeds`, frame 0 at output frame
    ``first_frame``), the gaps between cores shaded. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # (files only: no display is needed, none is opened)
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(f"the speed plot needs matplotlib ({error}); install it (pip install matplotlib, "
                          "or make demo's environment, requirements.txt, has it)") from error
    dpi = 100
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(size_px[0] / dpi, size_px[1] / dpi), dpi=dpi)
    styles = [dict(color="#1f6fb4", lw=1.8), dict(color="#d2452d", lw=1.3, ls="--"), dict(color="0.4", lw=1.0)]
    for k, (ax, part) in enumerate(zip(axes, PARTS)):
        for g, (first, last) in enumerate(gaps):
            ax.axvspan(first, last, color="0.88", lw=0, label="gaps between cores" if g == 0 else None)
        for (label, speeds), style in zip(curves.items(), styles):
            frames = first_frame + np.arange(len(speeds))
            ax.plot(frames, speeds[:, k], label=label, **style)
        ax.set_ylabel(f"{part}\nleg lengths / s")
        ax.grid(alpha=0.3, lw=0.5)
        ax.margins(x=0)
    axes[0].legend(loc="upper right", fontsize=8, ncol=3, frameon=False)
    axes[-1].set_xlabel(f"frame ({fps:g} fps)")
    if title:
        axes[0].set_title(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
