"""When a clip runs: as soon as possible after the motion so far (Oshita 2014, section 5;
2008, section 3.3), with blends only after the current time (2014, eq. 17).

The search is independent of how a pair is planned: :func:`earliest_start` is
given ``plan_at(start) -> PairPlan``, the plan of the pair with the new clip
starting at output frame ``start`` (``core.synthesize.as_soon_as_possible``
builds it from the motion synthesized so far), and only reads each plan's
blending ranges and their excess over the search's limits.

Timeline conventions as in core.plan: output frames, ranges end inclusive.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .plan import PairPlan

# pulls are few (each moves the clip to where its blends begin); the bound only guards
# against a plan that keeps choosing a later blend start one frame at a time
MAX_PULLS = 16


def blending_ranges(pair: PairPlan) -> tuple[int, int]:
    """The first and last output frames the blending segments of ``pair`` cover (the
    deformation of adaptation, eqs. 7-8, follows S1 and is not a blend)."""
    blends = [s for s in pair.segments if s.blend != "deformation"]
    return min(s.start for s in blends), max(s.end for s in blends)


def excess(pair: PairPlan) -> float:
    """How far the pair's most abrupt segment asks more of the body than the clips do
    (1 at the search's limits, 0 without limits: W = 0)."""
    return max((s.excess for s in pair.segments), default=0.0)


def earliest_start(plan_at: Callable[[int], PairPlan], *, played: int, lead: int, fps: float, interval_s: float,
                   min_blend_s: float, max_interval_s: float) -> int:
    """The earliest output frame the new clip can start at so that its blends keep within
    the limits the range search puts on them (2014, section 5).

    plan_at      the pair's plan with the new clip starting at a given output frame.
    played       the last frame no blend may change: the previous core's last frame, or
                 t_current + 1 when later (eq. 17: blends start after t_current).
    lead         clip frames before the new clip's core.
    interval_s   the paper's fixed interval: the new core is placed this long after
                 ``played`` to optimise the blending ranges (one second in 2014 section 5).
    min_blend_s  the cores leave at least this long to blend in (the shortest blend).
    max_interval_s  how far the provisional placement may be widened (below).

    The paper's three steps:

    1. place the clip provisionally, its core ``interval_s`` after ``played``;
    2. optimise the blending ranges there (``plan_at``: method by the foot-moving
       phases between the cores, transition > connection > adaptation, then eq. 9);
    3. pull the clip earlier until no gap is left between the blending ranges and
       the cores: each pull moves the clip by the frames between ``played`` and the
       first blend plus those between the last blend and the new core (the clip's
       own lead-in playing unblended), and the ranges are optimised again in the
       room left.

    What the paper leaves open. Our range search has limits on speed and
    acceleration, set by W (docs/design.md), that may want more than the paper's
    second between the cores: while the provisional plan exceeds them, the
    interval doubles (up to ``max_interval_s``). A pull is kept only while the
    plan keeps within the limits (or exceeds them no more than the provisional
    plan did, for clips that nothing blends within them). After the pulls, the
    earliest start that keeps is found by bisection down to the shortest room
    (see the comment there): W orders the delays through the limits, a smoother W
    never starting a clip sooner. At W = 0 (no limits) that is the shortest room.
    Bisection assumes that a start that keeps stays so later; where that fails
    locally it still returns a start that keeps, only perhaps not the earliest.
    """
    lowest = played + 1 + int(np.ceil(min_blend_s * fps)) - lead  # the shortest room between the cores
    interval = interval_s
    start = max(played + 1 + int(round(interval * fps)) - lead, lowest)
    plan = plan_at(start)
    while excess(plan) > 1.0 and interval < max_interval_s:
        interval = min(2.0 * interval, max_interval_s)
        start = max(played + 1 + int(round(interval * fps)) - lead, lowest)
        plan = plan_at(start)
    bound = max(1.0, excess(plan)) + 1e-9

    def keeps(p: PairPlan) -> bool:
        return excess(p) <= bound

    for _ in range(MAX_PULLS):
        first, last = blending_ranges(plan)
        gap = max(first - played, 0) + max(start + lead - last, 0)
        target = max(start - gap, lowest)
        if target >= start or not keeps(candidate := plan_at(target)):
            break
        start, plan = target, candidate
    # Then the earliest start between the shortest room and there that still keeps
    # within the limits, by bisection: with fewer frames between the cores a blend
    # can only be shorter, so more abrupt, and a start that asks too much of the body
    # is followed by none earlier that asks less. Without this step the path of the
    # pulls decided: a responsive W whose optimum filled the room a frame early
    # stopped there, later than a smoother W (tests/core/test_schedule.py).
    bad = lowest - 1
    while start - bad > 1:
        mid = (bad + start) // 2
        if keeps(plan_at(mid)):
            start = mid
        else:
            bad = mid
    return int(start)
