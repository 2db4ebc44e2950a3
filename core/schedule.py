"""When a clip runs: as soon as possible after the motion so far (Oshita 2014, section 5;
2008, section 3.3), with blends only after the current time (2014, eq. 17).

The search is independent of how a pair is planned: :func:`earliest_start` is
given ``plan_at(start) -> PairPlan``, the plan of the pair with the new clip
starting at output frame ``start`` (``core.synthesize.as_soon_as_possible``
builds it from the motion synthesized so far), and ``peak_at(start) -> float``, the
peak acceleration of the gap as synthesized there; it reads each plan's blending
ranges, and the peaks.

Timeline conventions as in core.plan: output frames, ranges end inclusive.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .plan import PairPlan

# pulls are few (each moves the clip to where its blends begin); the bound only guards
# against a plan that keeps choosing a later blend start one frame at a time
MAX_PULLS = 16
# the candidate starts give the cores about 1.41 times the room of the one before:
# five between the shortest room and the paper's second, each a render of the pair
# (those whose delay alone costs more than the best so far are not rendered)
ROOM_STEP = 2.0 ** 0.5


def blending_ranges(pair: PairPlan) -> tuple[int, int]:
    """The first and last output frames the blending segments of ``pair`` cover (the
    deformation of adaptation, eqs. 7-8, follows S1 and is not a blend)."""
    blends = [s for s in pair.segments if s.blend != "deformation"]
    return min(s.start for s in blends), max(s.end for s in blends)


def earliest_start(plan_at: Callable[[int], PairPlan], peak_at: Callable[[int], float], *, played: int, lead: int,
                   fps: float, responsiveness: float, interval_s: float, min_blend_s: float,
                   max_interval_s: float) -> int:
    """The earliest output frame the new clip can start at for how smooth W asks its
    transition to be (2014, section 5).

    plan_at      the pair's plan with the new clip starting at a given output frame.
    peak_at      the peak acceleration of the pair's gap with the new clip starting
                 there, as synthesized (core.quality's ``accel``: over the two clips'
                 99th percentile, so on one scale for every start of the pair).
    played       the last frame no blend may change: the previous core's last frame, or
                 t_current + 1 when later (eq. 17: blends start after t_current).
    lead         clip frames before the new clip's core.
    responsiveness  W: 0 starts the clip soonest, 1 where its gap is smoothest.
    interval_s   the paper's fixed interval: the new core placed this long after
                 ``played`` (one second in 2014 section 5) is one of the starts measured.
    min_blend_s  the cores leave at least this long to blend in (the shortest blend).
    max_interval_s  the longest the new core may wait after ``played`` (the latest start).

    The paper's three steps, with what it leaves open decided here:

    1. place the clip provisionally, its core ``interval_s`` after ``played``.
    2. optimise the blending ranges (``plan_at``) at that placement and at starts
       from the shortest room up to ``max_interval_s``, each giving the cores
       ``ROOM_STEP`` times the room of the one before, and take the one whose delay
       plus ``rate(W)`` times its peak is least, ``rate(W) = (min_blend_s + interval_s
       * W) / (1 - W)`` seconds per unit of peak: at W = 0 a shortest blend's length of
       delay buys one unit (one 99th percentile of the clips' own acceleration), at
       W = 0.5 the paper's second more, and at W = 1 the smoothest start is taken
       however late. A start whose delay alone costs more than the best so far is not
       planned, nor is any later one (below W = 1 the search stops there).
    3. pull the clip earlier until no gap is left between the blending ranges and
       the cores (each pull by the frames between ``played`` and the first blend plus
       the clip's own lead-in playing unblended after the last), while that costs no
       more, and no further than the start measured before the chosen one.

    Why measured, and why this choice: the plan's excess over the limits is an estimate
    of each blend alone; what the gap renders to (a short clip's eased end, a foot the
    contact stage holds) can be rougher at a later start, and a start chosen as the
    earliest that keeps within W's limits had a higher peak at a higher W on 22 of the
    56 pairs of tests/bench/asap.py. Choosing the least of ``delay + rate(W) * peak``
    over the same starts for every W orders both by W: for W1 < W2 with choices s1, s2,
    adding the two inequalities that make each the least gives
    ``(rate(W2) - rate(W1)) * (peak(s2) - peak(s1)) <= 0``, so the smoother W never has
    the higher peak and never the earlier start, as long as a start's peak does not
    depend on W. Hence the same starts for every W: ending them at a placement widened
    while W's own plan there exceeds W's limits made them depend on W (guide into bow,
    bandai1: at W = 0.75 the plan one second on kept within them, so the start 0.33 s
    later, smoother and priced lower by W = 0.75, was never measured, and the clip
    started 2 frames sooner than at W = 0.5). And the pull, which lands off the starts measured,
    stays above the one measured before the chosen start: two W that choose different
    starts keep their order. What the argument cannot cover is the peak's dependence on
    W at one start, through the ranges W optimises (eq. 9's weights, the limits 1 / W):
    the residue docs/design.md reports.
    """
    lowest = played + 1 + int(np.ceil(min_blend_s * fps)) - lead  # the shortest room between the cores
    placed = max(played + 1 + int(round(interval_s * fps)) - lead, lowest)
    latest = max(played + 1 + int(round(max_interval_s * fps)) - lead, lowest)
    shortest = max(lowest + lead - played - 1, 1)  # frames of room between the cores at ``lowest``
    steps = int(np.ceil(np.log((latest - lowest + shortest) / shortest) / np.log(ROOM_STEP)))
    candidates = sorted({min(lowest - shortest + int(round(shortest * ROOM_STEP**i)), latest) for i in range(steps + 1)}
                        | {placed})
    W = float(responsiveness)
    rate = (min_blend_s + interval_s * W) / (1.0 - W) if W < 1.0 else np.inf  # step 2

    def cost(start: int) -> tuple[float, float]:
        delay = (start - lowest) / fps
        if rate == 0.0:
            return (delay, 0.0)
        return (peak_at(start), delay) if rate == np.inf else (delay + rate * peak_at(start), 0.0)

    best, start, floor = None, lowest, lowest  # floor: the pull stops above the start measured before
    for i, s in enumerate(candidates):
        if best is not None and rate < np.inf and (s - lowest) / fps > best[0]:
            break  # its delay alone costs more than the best so far, and so do the later ones'
        c = cost(s)
        if best is None or c < best:
            best, start, floor = c, s, candidates[i - 1] + 1 if i else lowest
    for _ in range(MAX_PULLS):
        first, last = blending_ranges(plan_at(start))
        gap = max(first - played, 0) + max(start + lead - last, 0)
        target = max(start - gap, floor)
        if target >= start or cost(target) > cost(start):
            break
        start = target
    return int(start)
