"""Timeline decisions made from frame ranges alone: spans, default cores, which clips go in
sequence and which compose over them, synchronized groups, and Pack's lanes.

Pure: plain numbers, names and flags in, records out. The add-on reads the NLA
into these records once and asks here; core.synthesize asks the same sequence
rule, so the panel and the engine cannot disagree about it.

Frames are scene (output) frames, ``first`` and ``last`` both inclusive. Spans
are given in the order the sequence plays them (core.synthesize: the order of
their cores; the add-on: their start order where cores are not known yet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Collection, Iterable, Sequence, TypeVar

__all__ = ["Span", "DefaultCore", "default_core", "group_name", "group_span", "sequence_spans", "default_cores",
           "Sequencing", "sequencing", "settled_sequencing", "additional_spans", "overlap_groups",
           "NlaLane", "PackMove", "pack_lanes"]

T = TypeVar("T")


# ---------------------------------------------------------------------------
# Spans and default cores


@dataclass(frozen=True)
class Span:
    """What of a strip (or clip) the timeline decisions read: its frames and blends.

    first, last          scene frames, both inclusive (``last - first + 1`` frames).
    blend_in, blend_out  the strip's blend-in and blend-out, in frames (0: none).
    """

    name: str
    first: int
    last: int
    blend_in: float = 0.0
    blend_out: float = 0.0

    @property
    def n_frames(self) -> int:
        return self.last - self.first + 1

    def holds(self, other: Span) -> bool:
        """Whether ``other`` lies wholly inside this span (2008, 8.1: an additional motion's span)."""
        return self.first <= other.first and other.last <= self.last


@dataclass(frozen=True)
class DefaultCore:
    """A default core in scene frames, end inclusive, and what was taken off the strip, for the panel.

    Empty (``first > last``) where the strip's neighbours cover all of it.
    """

    first: int
    last: int
    taken_off: tuple[str, ...] = ()
    over: str = ""  # an additional motion: the strip it lies inside (see additional_spans)
    parts: str = ""
    group: str = ""  # a strip blended synchronized: the group's name, whose core this is (see overlap_groups)

    @property
    def empty(self) -> bool:
        return self.first > self.last

    def why(self) -> str:
        if self.over:
            return f"whole strip: lies inside {self.over!r} and moves its {self.parts}, so it composes over it"
        what = f"group {self.group!r}" if self.group else "strip"
        why = f"{what} minus {', '.join(self.taken_off)}" if self.taken_off else f"whole {what}"
        if self.group:
            why = f"synchronized blend: the core of the {why}"
        return f"no frame left: {why}" if self.empty else why


def default_core(span: Span, earlier: Iterable[Span] = (), later: Iterable[Span] = (), room: int = 0) -> DefaultCore:
    """The core a strip gets until edited, between the other strips of the sequence.

    ``earlier`` are those before ``span`` in start order, ``later`` those
    after, on any track. The strip minus its blend-in and blend-out, which
    Blender's auto-blend sets to the overlap with the neighbour, then minus
    what still overlaps any of them: an earlier strip takes the frames up
    to its end off the start, a later one the frames from its start off the
    end (so a strip laid over a longer one cuts the longer one's core where
    it begins, and the longer one covers all of it). Where two strips butt,
    or overlap with neither blending, the core also stops ``room // 2``
    frames (rounded up) short of the frames they share, so that each
    transition gets at least ``room`` frames (the shortest blend) between
    the cores. May come out empty (``DefaultCore.empty``).
    """
    first, last, taken = span.first, span.last, []
    if span.blend_in > 0:
        first += math.ceil(span.blend_in)
        taken.append(f"blend-in {span.blend_in:g}")
    if span.blend_out > 0:
        last -= math.ceil(span.blend_out)
        taken.append(f"blend-out {span.blend_out:g}")
    half = -(-room // 2)
    for previous in earlier:
        if span.first <= previous.last + 1:
            unblended = span.blend_in <= 0 and previous.blend_out <= 0
            limit = previous.last + 1 + (half if unblended else 0)
            if limit > first:
                first = limit
                taken.append(f"{'room to blend' if unblended else 'overlap'} with {previous.name!r}"
                             + (f" (frames {previous.first}-{previous.last}, all of it)" if limit > last else ""))
    for following in later:
        if following.first <= span.last + 1:
            unblended = span.blend_out <= 0 and following.blend_in <= 0
            limit = following.first - 1 - (half if unblended else 0)
            if limit < last:
                last = limit
                taken.append(f"{'room to blend' if unblended else 'overlap'} with {following.name!r}")
    return DefaultCore(first, last, tuple(taken))


def group_name(names: Iterable[str]) -> str:
    """``"walk + run"``: a synchronized group's strips' names joined, in start order."""
    return " + ".join(names)


def group_span(group: Sequence[Span]) -> Span:
    """A synchronized group as one span of the sequence: from its earliest first frame to its latest
    last, without blends (the group's influences blend its strips, not the sequence)."""
    return Span(group_name(s.name for s in group), min(s.first for s in group), max(s.last for s in group))


def sequence_spans(spans: Sequence[Span], groups: Sequence[Sequence[int]] = ()) -> list[Span]:
    """The spans of what goes in sequence, by start: each of ``spans`` in none of ``groups``
    (indices into ``spans``), and each group as one span (:func:`group_span`)."""
    grouped = {k for group in groups for k in group}
    out = [s for k, s in enumerate(spans) if k not in grouped]
    out += [group_span([spans[k] for k in group]) for group in groups]
    return sorted(out, key=lambda span: span.first)


def default_cores(spans: Sequence[Span], *, groups: Sequence[Sequence[int]] = (),
                  additional: dict[int, tuple[int, str]] | None = None, room: int = 0) -> list[DefaultCore]:
    """The :func:`default_core` of each of ``spans`` (the strips a synthesis reads, by start), all at once.

    groups      synchronized groups (:func:`overlap_groups`, indices into ``spans``): a strip of
                one gets the core of its group, taken as one span, named after it.
    additional  ``{k: (index of the span it lies in, parts)}`` (:func:`additional_spans`, asked
                of the spans in no group): an additional motion is no neighbour (the strip it
                lies in keeps its core as if it were not there), and its own core is its whole
                strip (composition plays all of it).
    room        the shortest blend, in frames.
    """
    additional = additional or {}
    both = sorted({k for group in groups for k in group} & set(additional))
    if both:
        raise ValueError(f"spans {[spans[k].name for k in both]} are given both as a synchronized group's and as "
                         "additional motions; a strip blended synchronized never composes: ask additional_spans "
                         "of the spans in no group")
    # what goes in sequence, by start (as sequence_spans orders it): (span, the indices it stands for)
    grouped = {k for group in groups for k in group}
    units = [(span, (k,)) for k, span in enumerate(spans) if k not in grouped and k not in additional]
    units += [(group_span([spans[k] for k in group]), tuple(group)) for group in groups]
    units.sort(key=lambda unit: unit[0].first)
    in_order = [span for span, _ in units]
    out: list[DefaultCore | None] = [None] * len(spans)
    for i, (span, members) in enumerate(units):
        core = default_core(span, in_order[:i], in_order[i + 1:], room)
        for k in members:
            out[k] = replace(core, group=span.name) if len(members) > 1 else core
    for k, (base, parts) in additional.items():
        out[k] = DefaultCore(spans[k].first, spans[k].last, over=spans[base].name, parts=parts)
    return out


# ---------------------------------------------------------------------------
# Sequence and composition (2008, sections 3.2 and 8.1)


@dataclass(frozen=True)
class Sequencing:
    """Which spans go in sequence and which compose over them as additional motions.

    sequence    indices of the spans joined in sequence, in the given (playing) order.
    additional  ``{index: index of the sequence span it lies inside}``, by start.
    """

    sequence: tuple[int, ...]
    additional: dict[int, int] = field(default_factory=dict)


def sequencing(spans: Sequence[Span], qualifies: Callable[[int], bool], *,
               in_sequence: Collection[int] = ()) -> Sequencing:
    """The sequence and the additional motions among ``spans`` (2008, 3.2 and 8.1).

    A span is an additional motion when it lies wholly inside a span of the
    sequence and ``qualifies(k)`` (its motion stays in place and mainly moves its
    arms: core.synthesize.could_be_additional); ``qualifies`` is asked only of
    spans inside another. The longer spans are decided first (ties: the earlier
    in ``spans``), so a span inside an additional motion lies inside that one's
    base too. ``in_sequence``: indices that go in sequence whatever they are
    (:func:`settled_sequencing`'s rerun).

    The output starts with the first span of the sequence (``spans`` come in
    playing order): an additional motion starting before it has nothing to
    compose over there, and goes in sequence too.
    """
    order = sorted(range(len(spans)), key=lambda k: (-spans[k].n_frames, k))
    forced, sequence, additional = set(in_sequence), set(), {}
    for k in order:
        base = next((b for b in sorted(sequence) if spans[b].holds(spans[k])), None)
        if base is not None and k not in forced and qualifies(k):
            additional[k] = base
        else:
            sequence.add(k)
    for k in sorted(additional):
        if spans[k].first < spans[min(sequence)].first:
            sequence.add(k)
            del additional[k]
    return Sequencing(tuple(sorted(sequence)),
                      {k: additional[k] for k in sorted(additional, key=lambda k: (spans[k].first, k))})


def settled_sequencing(spans: Sequence[Span], qualifies: Callable[[int], bool],
                       join: Callable[[Sequencing], tuple[T, Collection[int]]]) -> tuple[Sequencing, T]:
    """:func:`sequencing` rerun until no additional motion lies inside a rejected span, and what
    ``join`` gave for it.

    ``join(s) -> (joined, rejected)`` joins ``s.sequence`` (2014, section 4) and
    says which spans (indices) it rejected. An additional motion whose base was
    rejected has nothing to compose over: it goes in sequence as any other, and
    the sequence is joined again (rare: a rejected clip long enough to hold another).
    The add-on, which does not join, passes the rejections a synthesis recorded.
    """
    forced: set[int] = set()
    while True:
        found = sequencing(spans, qualifies, in_sequence=forced)
        joined, rejected = join(found)
        gone = set(rejected)
        orphans = {k for k, base in found.additional.items() if base in gone}
        if not orphans:
            return found, joined
        forced |= orphans


def additional_spans(spans: Sequence[Span], parts_of: Callable[[int], str | None], *,
                     rejected: Collection[int] = ()) -> dict[int, tuple[int, str]]:
    """``{k: (index of the span it lies in, parts)}`` for each of ``spans`` that core would compose
    as an additional motion: :func:`settled_sequencing` with ``parts_of(k)`` (what span ``k``'s motion
    lends: core.synthesize.additional_motion_parts, None when nothing) as the test, each asked once.

    rejected  the spans a synthesis rejected (the add-on: its last plan's); one held by such a
              span goes in sequence, as the engine reruns it.
    """
    parts: dict[int, str | None] = {}

    def qualifies(k: int) -> bool:
        if k not in parts:
            parts[k] = parts_of(k)
        return bool(parts[k])

    found, _ = settled_sequencing(spans, qualifies, lambda _: (None, rejected))
    return {k: (base, parts[k]) for k, base in found.additional.items()}


# ---------------------------------------------------------------------------
# Synchronized groups (Ménardais et al. 2004; core.mkm)


def overlap_groups(spans: Sequence[Span]) -> list[list[int]]:
    """The synchronized groups among ``spans`` (those with "Blend synchronized" on): spans that
    overlap in time, directly or through a chain of overlaps, two or more to a group, as indices;
    each group in start order (ties by name), the groups by start. A span that overlaps none of
    the others is no group.

    Overlapping means sharing more than one frame: spans that butt (one starts on the frame the
    other ends on, as strips one after another on a track do) play one after the other, not at
    the same time."""
    order = sorted(range(len(spans)), key=lambda k: (spans[k].first, spans[k].name))
    groups: list[list[int]] = []
    last = None
    for k in order:
        span = spans[k]
        if groups and span.first < last:  # (sorted by start: overlapping the group's span is overlapping one of it)
            groups[-1].append(k)
            last = max(last, span.last)
        else:
            groups.append([k])
            last = span.last
    return [group for group in groups if len(group) > 1]


# ---------------------------------------------------------------------------
# Pack's lanes: which NLA track each packed strip goes to (2014, section 5)


@dataclass(frozen=True)
class NlaLane:
    """An NLA track as Pack sees it (not core.track.Track, the synthesized output).

    name     the NLA track's name.
    open     whether a strip may be put on it (a source track Blender plays).
    strips   what lies on it: ``(strip name, frame_start, frame_end)`` as the NLA has them.
    """

    name: str
    open: bool
    strips: tuple[tuple[str, float, float], ...] = ()


@dataclass(frozen=True)
class PackMove:
    """Where Pack puts one strip.

    name      the strip.
    before    its start now; ``start`` its start once packed (scene frames).
    lane      the NLA track it ends on; ``new_lane`` when the pack makes that track.
    blocked   why it leaves its own track (``"'bow' lies there on 'clips 1'"``), else ``""``.
    over      for an additional motion (2008, section 8): the strip it lies inside and moves with.
    """

    name: str
    before: int
    start: int
    lane: str
    new_lane: bool = False
    blocked: str = ""
    over: str = ""

    @property
    def moved(self) -> bool:
        return self.start != self.before


def pack_lanes(lanes: Sequence[NlaLane], wanted: Sequence[tuple[str, int]], *,
               animated: Collection[str] = (), taken_names: Collection[str] = (), armature: str = ""
               ) -> list[PackMove]:
    """The :class:`PackMove` of each ``(strip name, new start)``, its NLA track chosen; pure.

    Strips on one track cannot overlap, nor pass one another (Blender stops a
    strip moved along its track at its neighbour), so a strip stays on its
    track when nothing else there lies between where it is and where it goes;
    else it goes to the first open lane with room where it goes, else to a new
    track after the lanes (``[Smart Motion] <strip>``, a name in neither the lanes
    nor ``taken_names``). The strips move in the order given, each seeing the
    ones before it where they went and the others where they are.

    ``animated``: strips with animated influence, which Blender keeps on the
    strip: one that must leave its track raises ``ValueError`` (naming ``armature``).
    """
    lanes = [[lane.name, lane.open, list(lane.strips)] for lane in lanes]
    moves = []
    for name, start in wanted:
        here = next((k for k, lane in enumerate(lanes) if any(s[0] == name for s in lane[2])), None)
        if here is None:
            raise ValueError(f"Pack: strip {name!r} lies on none of the tracks given")
        frame_start, frame_end = next((a, b) for s, a, b in lanes[here][2] if s == name)
        before = round(frame_start)
        first, last = start, start + frame_end - frame_start
        others = [s for s in lanes[here][2] if s[0] != name]
        swept = (min(first, frame_start), max(last, frame_end))
        blocking = next((s for s, a, b in others if not (b < swept[0] or a > swept[1])), None)
        lanes[here][2] = others
        if start == before or blocking is None:
            k, new = here, False
        else:
            if name in animated:
                raise ValueError(
                    f"NLA strip {name!r} of armature {armature!r} must leave track {lanes[here][0]!r} "
                    f"({blocking!r} lies in the way) but has animated influence, which Blender keeps on the strip; "
                    f"move {blocking!r} off that track first, or turn off Animated Influence"
                )
            k = next((k for k, (_, free, on) in enumerate(lanes)
                      if free and all(b < first or a > last for _, a, b in on)), None)
            new = k is None
            if new:
                taken = {lane[0] for lane in lanes} | set(taken_names)
                made = next(n for n in (f"[Smart Motion] {name}{'' if i == 1 else f' {i}'}"
                                        for i in range(1, len(taken) + 2)) if n not in taken)
                lanes.append([made, True, []])
                k = len(lanes) - 1
        lanes[k][2].append((name, first, last))
        moves.append(PackMove(name, before, start, lanes[k][0], new,
                              f"{blocking!r} lies there on {lanes[here][0]!r}" if k != here else ""))
    return moves
