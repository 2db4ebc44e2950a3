"""Retrieval by action and a long query assembled piecewise (Juang et al. 2009 section 4; issue 24, items 8 and 9).

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/assemble_retrieval.py

Retrieval. 20 queries of ../shared/mocap (Y up, cm, 30 fps), each the middle 61 frames of
its clip (the whole clip where shorter): six walks and six runs in different styles, and eight
other actions (bow, bye, byebye, guide, punch, dash, walk-back, slash). Every part of
core.assemble.PARTS of each is retrieved from a library of every other clip of bandai1 and
bandai2 (its own file left out), by
  ours      core.assemble.retrieve_parts: Boolean features, and how fast the body carries each
            limb and how far it swings (leg lengths, as soft bits), cost ties broken by the pose;
  boolean   the Boolean features alone, ties to the first clip by name (the code before issue 24:
            the same library with its continuous features left out).
Printed: how often the chosen clip has the query's action (its file name's first word: a walk's
arms from a walk), and by kind (the walks, walk-back/left/right/turn, one kind; run and dash
another); how often the retrieval was a tie at cost 0 of the Boolean bits (arbitrary among
every window that ties); ms per retrieval of the six parts.

A long query. A 400-frame walk (bandai1 walk_sad_002) with its upper body replaced from bandai1's
other clips (median 152 frames: most are shorter than 0.7 of the query) by
  pieces    core.assemble.assemble: piecewise, joined by slerp over the overlaps, each piece after
            the first retrieved with the piece before's poses over their overlap in its cost;
  independent  the same, each piece retrieved on its own (core.assemble.window_join_differences
            replaced by zeros: the code before the review of items 8-9);
  butted    the same pieces cut at each overlap's middle (core.assemble.piece_weights replaced
            by a step);
  whole     the query in one piece (core.assemble.assembly_pieces replaced by the whole query):
            what the code did before, only clips of at least 0.7 of the query could hold it.
Printed: what each piece took; at each join (each overlap's frames), core.quality.gap_quality's
peak mean-joint acceleration and worst joint's pop against the walk's own 99th percentile
(ratios; the walk's own on those frames alongside), and the largest rotation step (degrees per
frame) of any upper-body joint there; and, pieces against independent, how much of each wrist's
swing the output keeps across each join (tests/bench/metrics.py swing_kept_across_joins: 1 where
the two pieces swing in phase, towards 0 where the slerp between them cancels the swing), there
and over the eight longest walks of bandai1 (their first 400 frames, each from the others).

Piece length. How core.assemble.assembly_pieces cuts a query, against the plain median clip (the
rule before the review of item 9: pieces as long as the library's median clip, whole when that
holds the query at the smallest scale): the reviewer's case (bandai1 walk_normal_001, 195 frames,
from walk_happy_001 and walk_sad_001, 213 and 347 frames, and three 8-frame snippets of
walk_angry_001) and the 400-frame walk. Printed: pieces, their length, feature poses paired (the
fewest in a piece), warnings, ms per assembly.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np

from common import MOCAP, load  # noqa: F401  (puts the project on sys.path)

import core.assemble as assembly  # noqa: E402
from core.assemble import PARTS, FeatureLibrary, assemble, part_joints, retrieve_parts  # noqa: E402
from core.quality import SourceFigures, foot_levels, foot_positions, gap_quality  # noqa: E402
from core.rig import find_rig, leg_length  # noqa: E402
from metrics import swing_kept_across_joins  # noqa: E402

QUERIES = (
    "bandai1/walk_normal_001", "bandai1/walk_happy_001", "bandai1/walk_sad_001", "bandai1/walk_proud_002",
    "bandai1/walk_angry_002", "bandai1/walk_feminine_001",
    "bandai1/run_happy_001", "bandai1/run_sad_001", "bandai1/run_proud_001", "bandai1/run_normal_001",
    "bandai1/run_angry_001", "bandai2/run_normal_001",
    "bandai1/bow_normal_001", "bandai1/bye_happy_001", "bandai1/byebye_sad_001", "bandai1/guide_active_001",
    "bandai1/punch_normal_001", "bandai1/dash_normal_001", "bandai1/walk-back_normal_001", "bandai1/slash_normal_001",
)
N = 61
LONG_WALK, LONG_FRAMES = "bandai1/walk_sad_002", 400
LONG_WALKS = ("bandai1/walk_not-confident_001", "bandai1/walk_sad_002", "bandai1/walk-back_sad_001",
              "bandai1/walk-back_proud_001", "bandai1/walk-back_not-confident_001", "bandai1/walk_sad_001",
              "bandai1/walk-left_sad_001", "bandai1/walk_proud_001")  # bandai1's longest walks (331-481 frames)


def action(name: str) -> str:
    return name.split("/")[-1].split("_")[0]


def kind(name: str) -> str:
    a = action(name)
    return "walk" if a.startswith("walk") else "run" if a in ("run", "dash") else a


def group(name: str) -> str:
    return {"walk": "walks", "run": "runs"}.get(action(name), "others")


def middle(motion, frames=N):
    frames = min(frames, motion.n_frames)
    first = (motion.n_frames - frames) // 2
    return motion[first:first + frames]


def retrieval(every: dict) -> None:
    fps = every["bandai1/walk_normal_001"].fps
    t0 = time.perf_counter()
    library = FeatureLibrary.build(every, fps)
    build = time.perf_counter() - t0
    boolean = dataclasses.replace(library, measures={}, poses={})
    rows = []  # (query, part, method, clip, bits share)
    times = {"ours": [], "boolean": []}
    for name in QUERIES:
        query = middle(every[name])
        for method, lib in (("ours", library), ("boolean", boolean)):
            own = lib.subset([c for c in lib.features if c != name])
            t0 = time.perf_counter()
            matches = retrieve_parts(query, own, list(PARTS))
            times[method].append(time.perf_counter() - t0)
            rows += [(name, part, method, m.clip, m.bits) for part, m in matches.items()]
    print(f"retrieval: {len(QUERIES)} queries x {len(PARTS)} parts, library {len(every)} clips "
          f"({sum(m.n_frames for m in every.values())} frames) less the query's own; features built in "
          f"{build:.2f} s")
    print(f"   {'queries':<9}{'method':<9}{'action':>8}{'kind':>7}{'tie at 0':>10}{'n':>5}")
    for g in ("walks", "runs", "others", "all"):
        for method in ("ours", "boolean"):
            sel = [r for r in rows if r[2] == method and (g == "all" or group(r[0]) == g)]
            same = np.mean([action(r[3]) == action(r[0]) for r in sel])
            same_kind = np.mean([kind(r[3]) == kind(r[0]) for r in sel])
            ties = np.mean([r[4] == 0.0 for r in sel])
            print(f"   {g:<9}{method:<9}{same:>8.0%}{same_kind:>7.0%}{ties:>10.0%}{len(sel):>5}")
    print("   per part, all queries (action / kind):")
    for part in PARTS:
        figures = []
        for method in ("ours", "boolean"):
            sel = [r for r in rows if r[2] == method and r[1] == part]
            figures.append(f"{method} {np.mean([action(r[3]) == action(r[0]) for r in sel]):.0%}/"
                           f"{np.mean([kind(r[3]) == kind(r[0]) for r in sel]):.0%}")
        print(f"     {part:<10}" + "   ".join(figures))
    print("   upper body of each query, ours | boolean:")
    for name in QUERIES:
        picks = {r[2]: r[3].split("/")[-1] for r in rows if r[0] == name and r[1] == "upper"}
        print(f"     {name.split('/')[-1]:<26}{picks['ours']:<28}| {picks['boolean']}")
    print(f"   ms per query (six parts): ours {1000 * statistics.median(times['ours']):.0f}, "
          f"boolean {1000 * statistics.median(times['boolean']):.0f}")


def butted(layout, n):
    """piece_weights as a step at each overlap's middle: the pieces cut and butted together."""
    weights = np.zeros((len(layout), n))
    for k, (first, stop) in enumerate(layout):
        weights[k, first:stop] = 1.0
        if k:
            middle_frame = (first + layout[k - 1][1]) // 2
            weights[k, first:middle_frame], weights[k - 1, middle_frame:layout[k - 1][1]] = 0.0, 0.0
    return weights


def no_join_differences(joined, library, n, distance, scale=1.0):
    """core.assemble.window_join_differences left out: each piece retrieved on its own."""
    return np.zeros(max(len(library) - int(assembly.window_offsets(n, scale)[-1]), 0))


def in_pieces(query, library, independent=False):
    """``(assembly of query's upper body, each piece's own rotations, seconds)``."""
    join, joins, seen = assembly.joined_pieces, assembly.window_join_differences, {}

    def recorded(layout, rotations, n):
        seen["rotations"] = rotations
        return join(layout, rotations, n)

    assembly.joined_pieces = recorded
    if independent:
        assembly.window_join_differences = no_join_differences
    try:
        t0 = time.perf_counter()
        result = assemble(query, {"upper": library})
        seconds = time.perf_counter() - t0
    finally:
        assembly.joined_pieces, assembly.window_join_differences = join, joins
    return result, seen.get("rotations"), seconds


def median_pieces(n_frames, clip_frames, fps, scales=assembly.SEGMENT_SCALES):
    """The piece layout before the review of item 9: pieces as long as the library's median clip."""
    median = int(np.median(np.asarray(clip_frames)))
    if int(assembly.window_offsets(n_frames, min(scales))[-1]) + 1 <= median:
        return [(0, n_frames)]
    longest = max(median, 2)
    overlap = min(max(int(round(assembly.PIECE_OVERLAP * longest)), 1), longest - 1)
    count = int(np.ceil((n_frames - overlap) / (longest - overlap)))
    length = int(np.ceil((n_frames + (count - 1) * overlap) / count))
    firsts = np.rint(np.linspace(0, n_frames - length, count)).astype(int)
    return [(int(first), int(first) + length) for first in firsts]


def piece_length(every: dict) -> None:
    snippets = every["bandai1/walk_angry_001"]
    cases = {
        "reviewer's case": (every["bandai1/walk_normal_001"],
                            {**{n: every[n] for n in ("bandai1/walk_happy_001", "bandai1/walk_sad_001")},
                             **{f"snippet {k}": snippets[40 * k:40 * k + 8] for k in range(3)}}),
        "400-frame walk": (every[LONG_WALK][:LONG_FRAMES],
                           {n: m for n, m in every.items() if n.startswith("bandai1/") and n != LONG_WALK}),
    }
    print("\npiece length: core.assemble.assembly_pieces against the plain median clip")
    print(f"   {'case':<17}{'rule':<9}{'pieces':>7}{'frames':>8}{'fewest poses':>14}{'warnings':>10}{'ms':>7}")
    rule = assembly.assembly_pieces
    for case, (query, library) in cases.items():
        for name, layout in (("ours", rule), ("median", median_pieces)):
            assembly.assembly_pieces = layout
            try:
                t0 = time.perf_counter()
                result = assemble(query, {"upper": library})
                ms = 1000 * (time.perf_counter() - t0)
            finally:
                assembly.assembly_pieces = rule
            pieces = result.pieces["upper"]
            print(f"   {case:<17}{name:<9}{len(pieces):>7}{pieces[0].stop - pieces[0].first:>8}"
                  f"{min(p.feature_poses() for p in pieces):>14}{len(result.warnings):>10}{ms:>7.0f}")


def swings(every: dict) -> None:
    """Swing kept across the joins over bandai1's longest walks, pieces against independent."""
    kept = {"pieces": [], "independent": []}
    bits = {"pieces": [], "independent": []}
    seconds = {"pieces": [], "independent": []}
    joins = 0
    for name in LONG_WALKS:
        query = every[name][:LONG_FRAMES]
        library = {n: m for n, m in every.items() if n.startswith("bandai1/") and n != name}
        for method in kept:
            result, rotations, s = in_pieces(query, library, independent=method == "independent")
            pieces = result.pieces["upper"]
            if len(pieces) > 1:
                kept[method].append(swing_kept_across_joins(query, result.motion, pieces, rotations))
                joins += (len(pieces) - 1) * (method == "pieces")
            bits[method] += [p.match.bits for p in pieces]
            seconds[method].append(s)
    print(f"\n   swing kept across the joins of bandai1's {len(LONG_WALKS)} longest walks (first {LONG_FRAMES} frames, "
          f"upper body from the other bandai1 clips; {joins} joins x 2 arms):")
    print(f"     {'method':<13}{'median':>8}{'mean':>7}{'least':>7}{'< 0.8':>7}{'bits':>7}{'s each':>8}")
    for method, values in kept.items():
        v = np.concatenate(values).ravel()
        print(f"     {method:<13}{np.median(v):>8.2f}{v.mean():>7.2f}{v.min():>7.2f}{np.mean(v < 0.8):>7.0%}"
              f"{np.mean(bits[method]):>7.1%}{statistics.median(seconds[method]):>8.2f}")


def long_walk(every: dict) -> None:
    query = every[LONG_WALK][:LONG_FRAMES]
    library = {name: m for name, m in every.items() if name.startswith("bandai1/") and name != LONG_WALK}
    rig, up = find_rig(query), np.asarray(query.skeleton.up, dtype=np.float64)
    upper = part_joints(query.skeleton, rig, "upper")
    lengths = sorted(m.n_frames for m in library.values())
    holding = sum(n >= int(round((LONG_FRAMES - 1) * min(assembly.SEGMENT_SCALES))) + 1 for n in lengths)
    print(f"\nlong query: {LONG_WALK} frames 0-{LONG_FRAMES - 1}, upper body from {len(library)} other bandai1 clips "
          f"(median {int(np.median(lengths))} frames; {holding} can hold the whole query at the smallest scale)")
    own = SourceFigures.of(query, rig, up)
    leg = 0.5 * (leg_length(query, rig, "L") + leg_length(query, rig, "R"))

    def joins_of(motion, pieces):
        feet = foot_positions(motion, rig)
        levels = foot_levels(feet @ up, motion.fps)
        r = motion.rotations[:, upper]
        step = np.degrees(2 * np.arccos(np.clip(np.abs(np.sum(r[1:] * r[:-1], axis=-1)), 0, 1))).max(axis=1)
        out = []
        for a, b in zip(pieces, pieces[1:]):
            q = gap_quality(motion, 0, (b.first, a.stop - 1), up=up, leg=leg, output_feet=feet, output_levels=levels,
                            sources=[(own, 0)])
            out.append((b.first, a.stop - 1, q.accel, q.accel_untouched, q.pop, q.pop_untouched,
                        float(step[b.first - 1:a.stop].max())))
        return out, float(step.max())

    result, rotations, seconds = in_pieces(query, library)
    alone, alone_rotations, alone_seconds = in_pieces(query, library, independent=True)
    pieces = result.pieces["upper"]
    for method, r, s in (("pieces", result, seconds), ("independent", alone, alone_seconds)):
        print(f"   {method}: {len(r.pieces['upper'])} of {pieces[0].stop - pieces[0].first} frames ({s:.2f} s)")
        for p in r.pieces["upper"]:
            m = p.match
            print(f"     frames {p.first:>3}-{p.stop - 1:<4} {m.clip.split('/')[-1]:<28} frames {m.start}-"
                  f"{m.start + m.length - 1} cost {m.cost:.3f} (bits {m.bits:.1%}), {p.feature_poses()} feature poses")
    walks = sum(kind(p.match.clip) == "walk" for p in pieces)
    print(f"   walk arms from walks: {walks} of {len(pieces)} pieces")
    print("   swing kept across each join (left, right arm):")
    for method, r, rot in (("pieces", result, rotations), ("independent", alone, alone_rotations)):
        kept = swing_kept_across_joins(query, r.motion, r.pieces["upper"], rot)
        print(f"     {method:<13}" + "   ".join(f"{a.first}-{b.stop - 1}: {k[0]:.2f} {k[1]:.2f}"
                                             for a, b, k in zip(r.pieces["upper"][1:], r.pieces["upper"], kept)))
    original = assembly.piece_weights
    assembly.piece_weights = butted
    try:
        cut = assemble(query, {"upper": library})
    finally:
        assembly.piece_weights = original
    whole_layout = assembly.assembly_pieces
    assembly.assembly_pieces = lambda n, clip_frames, fps, scales=assembly.SEGMENT_SCALES: [(0, n)]
    try:
        whole = assemble(query, {"upper": library})
    finally:
        assembly.assembly_pieces = whole_layout
    m = whole.matches["upper"]
    print(f"   whole (one piece): {m.clip.split('/')[-1]} frames {m.start}-{m.start + m.length - 1} cost {m.cost:.3f} "
          f"(bits {m.bits:.1%}), {whole.feature_poses('upper')} feature poses")
    print("   at each join: peak acceleration and pop (x the walk's own p99; the walk's own on those frames),"
          " largest upper-body rotation step (deg/frame)")
    print(f"     {'frames':<10}{'method':<9}{'accel':>7}{'own':>6}{'pop':>7}{'own':>6}{'step':>7}")
    joined, joined_max = joins_of(result.motion, pieces)
    butt, butt_max = joins_of(cut.motion, pieces)
    plain, plain_max = joins_of(whole.motion, pieces)
    for j, b, w in zip(joined, butt, plain):
        for method, row in (("pieces", j), ("butted", b), ("whole", w)):
            print(f"     {j[0]:>3}-{j[1]:<6}{method:<9}{row[2]:>7.2f}{row[3]:>6.2f}{row[4]:>7.2f}{row[5]:>6.2f}"
                  f"{row[6]:>7.1f}")
    print(f"   largest step anywhere (deg/frame): pieces {joined_max:.1f}, butted {butt_max:.1f}, whole {plain_max:.1f}")


def main() -> None:
    every = {f"{folder}/{p.stem}": load(f"{folder}/{p.stem}")
             for folder in ("bandai1", "bandai2") for p in sorted((MOCAP / folder).glob("*.bvh"))}
    retrieval(every)
    long_walk(every)
    swings(every)
    piece_length(every)


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
