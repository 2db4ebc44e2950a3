"""The figures ``make demo`` draws: body-part speeds (Oshita 2014, Fig. 5) and a crossfade to compare with.

Oshita 2014, section 6, judges a synthesized motion by "the velocities of the
lower and upper body over time": the lower body's is the mean of the speeds of
the left foot, the right foot and the pelvis, the upper body's the mean of those
of the right hand, the left hand, the chest and the head. Foot sliding shows as
lower-body speed where the feet should rest, a sudden change of motion as a
spike. :func:`body_part_speeds` computes both from global joint positions, the
joints' roles from the rig (:mod:`core.rig`), never from their names; speeds are
in leg lengths per second, so any rig, unit and frame rate reads the same.

What it is compared with is a plain crossfade, what an animator gets from
Blender's NLA without Smart Motion: the same strips as laid out, each action
playing as it is (no clip moved or turned), each faded linearly into the next
across the gap between their cores, from the previous core's last frame to the
next core's first (:func:`crossfade_spans`), so that both keep their cores
unblended, as the synthesis does. NLA's Replace blends a strip over what the
tracks below it give, so at each gap the strip on the higher track is the one
whose influence is keyed (:func:`crossfade_influence_keys`) and the lower one
plays at full weight under it. :func:`placed_motions` (each clip moved where
the synthesis placed it) is kept for the benchmark's second baseline.

:func:`plot_gap_speeds` draws the figure with matplotlib, imported only when it
is called: the command line and ``make demo`` have it, Blender's own Python does
not. It zooms on each gap between cores, each panel on its own scale: over the
whole timeline one fast moment (the demo's jump) would set the scale and flatten
every gap into a line.
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
HEADROOM = 1.3  # a gap's panel reaches this many times the fastest speed within the gap


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


def crossfade_influence_keys(spans: Sequence[CrossfadeSpan], lanes: Sequence[int], *,
                             strip_frames: Sequence[tuple[int, int]] | None = None) -> list[list[tuple[int, float]]]:
    """Per clip of ``spans`` (in the plan's order; ``lanes``: the index of each clip's NLA track,
    higher plays over lower), the influence keys ``(frame, weight)`` that make Blender's NLA play
    :func:`crossfade_spans`, linear between keys, held before the first and after the last; an
    empty list for a clip that plays at full weight.

    NLA's Replace mixes a strip with influence w over what the tracks below give as
    ``(1 - w) below + w strip``: a linear crossfade when the lower clip plays at full weight and
    the upper one's influence runs 0 -> 1 (it fades in) or 1 -> 0 (it fades out) across the gap.
    So at each gap only the clip on the higher track is keyed. A gap of no frames (cores that
    meet) is a cut: the weight changes between the frame before and the frame itself.

    ``strip_frames``: each clip's strip's first and last frames, when known. A fade that reaches
    past them begins or ends with them instead: NLA evaluates a strip's influence at the strip's
    own time, held at its ends, so a fade out past a strip's last frame would stop part way and
    that share of the strip's last pose would stay over everything after it (the demo's jump,
    ending 3 frames before the stand's core, stayed under it at 7.5 %)."""
    if len(lanes) != len(spans):
        raise ValueError(f"give one lane per clip: {len(spans)} clips, {len(lanes)} lanes")
    same = [(a.name, b.name) for a, b, la, lb in zip(spans, spans[1:], lanes, lanes[1:]) if la == lb]
    if same:
        raise ValueError(f"consecutive clips {same} share an NLA track, so neither can play over the other "
                         "across their gap: put them on different tracks")
    keys: list[list[tuple[int, float]]] = [[] for _ in spans]
    for k, (span, lane) in enumerate(zip(spans, lanes)):
        if k > 0 and lane > lanes[k - 1]:  # fades in over the previous clip
            keys[k] += [(span.first - (span.fade_in == 0), 0.0), (span.first + span.fade_in, 1.0)]
        if k + 1 < len(spans) and lane > lanes[k + 1]:  # fades out over the next clip
            keys[k] += [(span.last - span.fade_out, 1.0), (span.last + (span.fade_out == 0), 0.0)]
    if strip_frames is not None:
        keys = [[(min(max(frame, first), last), weight) for frame, weight in clip_keys]
                for clip_keys, (first, last) in zip(keys, strip_frames)]
    return keys


def held_frames(clip_start: int, n_frames: int, first: int, last: int) -> np.ndarray:
    """The clip frames that play output frames ``first .. last`` of a clip whose frame 0 plays at
    ``clip_start``: its own where it has them, its first or last frame held outside them."""
    return np.clip(np.arange(first, last + 1) - clip_start, 0, n_frames - 1)


def gap_frames(plan: Plan) -> list[tuple[int, int]]:
    """The output frames (first, last) of each gap between cores the plan measured."""
    return [pair.gap for pair in plan.pairs if pair.gap is not None]


def gap_window(gap: tuple[int, int], fps: float, first_frame: int, n_frames: int, *,
               context_s: float = 0.5) -> tuple[int, int]:
    """The output frames (first, last) a gap's panel shows: the gap and ``context_s`` seconds either
    side, within the ``n_frames`` frames from ``first_frame``."""
    context = int(round(context_s * fps))
    return max(gap[0] - context, first_frame), min(gap[1] + context, first_frame + n_frames - 1)


def plot_gap_speeds(path: str | Path, first_frame: int, fps: float, curves: dict[str, np.ndarray],
                    gaps: Sequence[tuple[tuple[int, int], str, object]], *, title: str = "",
                    size_px: tuple[int, int] = (1100, 560), context_s: float = 0.5) -> Path:
    """Write 2014 Fig. 5 to ``path`` (PNG), one column of panels per gap: the lower body's speed
    above, the upper body's below, over the gap and ``context_s`` seconds either side
    (:func:`gap_window`), each panel on its own scale, set by the speeds within the gap
    (:data:`HEADROOM`), the gap shaded. ``curves``: label -> ``(F, 2)``
    speeds from :func:`body_part_speeds` (frame 0 at output frame ``first_frame``), one line each;
    ``gaps``: ((first, last), name, its core.quality.GapQuality or None), the figures it was
    flagged by written under its name. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # (files only: no display is needed, none is opened)
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(f"the speed plot needs matplotlib ({error}); install it (pip install matplotlib, "
                          "or make demo's environment, requirements.txt, has it)") from error
    if not gaps:
        raise ValueError("no gap to plot: the plan joins fewer than two clips, or measured none of its gaps")
    n_frames = len(next(iter(curves.values())))
    dpi = 100
    fig, axes = plt.subplots(2, len(gaps), figsize=(size_px[0] / dpi, size_px[1] / dpi), dpi=dpi, squeeze=False)
    styles = [dict(color="#1f6fb4", lw=1.8), dict(color="#d2452d", lw=1.3, ls="--"), dict(color="0.4", lw=1.0)]
    for g, ((first, last), name, quality) in enumerate(gaps):
        a, b = gap_window((first, last), fps, first_frame, n_frames, context_s=context_s)
        frames = np.arange(a, b + 1)
        for k, (ax, part) in enumerate(zip(axes[:, g], PARTS)):
            ax.axvspan(first, last, color="0.9", lw=0, label="gap between cores")
            for (label, speeds), style in zip(curves.items(), styles):
                ax.plot(frames, speeds[a - first_frame:b - first_frame + 1, k], label=label, **style)
            ax.set_xlim(a, b)
            # (scaled by the gap: a fast moment just outside it, such as a take-off, runs off the top)
            inside = [speeds[first - first_frame:last - first_frame + 1, k].max() for speeds in curves.values()]
            ax.set_ylim(0.0, HEADROOM * max(max(inside), 1e-3))
            ax.grid(alpha=0.3, lw=0.5)
            ax.tick_params(labelsize=8)
            if g == 0:
                ax.set_ylabel(f"{part}\nleg lengths / s", fontsize=9)
        figures = quality.ratios() if quality is not None else "not measured"
        axes[0, g].set_title(f"{name}, frames {first}-{last}\n{figures.replace(', pop', chr(10) + 'pop')}",
                             fontsize=8.5)
        axes[1, g].set_xlabel(f"frame ({fps:g} fps)", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    from .quality import FLAG_RATIO

    fig.suptitle((title + "\n" if title else "") + "under each gap's name: the plan's figures (core.quality), "
                 f"times their references; a figure over {FLAG_RATIO:g} x flags the gap", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
