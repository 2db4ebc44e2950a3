"""Transition quality of the synthesis engine against a hand-made NLA crossfade, on real capture.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/quality.py [--help]

Clips: nine real clips of different kinds from ../shared/mocap (Bandai Namco,
Y up, centimetres, 30 fps; read with ``unit=0.01`` so that figures come out in
cm): a walk, a run, a side step, a walking turn, a kick, a punch, a slash, a
bow and a dance. Every ordered pair of different clips is one two-clip
timeline (72 pairs per placement).

Placement (the same timeline for both methods; frames at 30 fps):
  * the previous clip starts at output frame 0;
  * the next clip starts where the previous one ends minus an overlap:
    ``start = len(prev) - overlap``;
  * each clip's core (the part the engine must keep as captured) is the clip
    without ``margin`` frames at either end (at most a quarter of the clip
    each), so the engine has ``2 * margin - overlap`` frames between the two
    cores for its transition.
  Two placements by default: overlap 0.5 s with 0.5 s margins (15 free
  frames, a tight cut), and overlap 1.0 s with 1.0 s margins (30 free frames).

The two methods:
  engine  core.synthesize.synthesize([Clip(prev, 0, core), Clip(next, start, core)]).
  naive   what an animator does with the NLA (tests/bench/metrics.py,
          naive_crossfade): the next strip moved by hand so that its pelvis at
          its first frame sits on the previous clip's pelvis at the crossfade
          start (on the ground) and its pelvis faces the same way (about the up
          axis), then a linear 10-frame crossfade of every local rotation
          (slerp) and translation starting at the next strip's first frame.

Windows (output frames, end inclusive):
  engine  from the start of the first blending segment of the pair's plan to
          the end of the last one;
  naive   the 10 crossfade frames and the frame either side where the
          weight is 0 and 1 (as an engine segment runs from t0, all previous
          motion, to t1, all following motion): the kinks of a linear
          crossfade, and so its acceleration peaks, are on those two frames;
  common  the union of the two, widened by 5 frames each side; both methods
          are measured on it too, so a short window cannot flatter either.

Metrics (tests/bench/metrics.py):
  skate   mean horizontal speed (cm/s) of the ankle and toe joints over the
          samples where that joint is within 0.0375 leg lengths (3.0 cm here)
          of its floor level; floor level = 2nd percentile of that joint's
          height over the pair's two source clips. The sources' own skate is
          the same measure over each whole source clip (its own floor); the
          column c.src is the two untouched clips on the common window's frames
          (each where it has frames, averaged), the skate a pair starts from;
          the summary also gives the same on the engine's own window.
          Real capture is not 0: heel strike, toe-off and the low swing of the
          toes pass through the 3 cm band at walking speed.
  accel   peak joint acceleration (every joint, global positions, second
          differences x fps^2) in the window, divided by the 99th percentile
          of the same quantity over every frame and joint of the pair's two
          source clips. For reference the script also prints what the sources
          score on their own windows of the same lengths, and the larger of
          the two untouched clips' peaks on the engine's own window frames
          (what the clips do there by themselves); both also split into the
          legs (hips to toes) and the rest of the body, to show where the
          peaks are and which of them the engine adds.

Targets, as read here: over the engine's synthesized pairs (rejections and
errors are counted and listed apart), measured in the engine's own window:
  median skate <= 1.5 x the median of the sources' per-clip skate;
  90th percentile of skate <= 2 x that same sources' median;
  median acceleration ratio <= 1.2.
The verdict on the common windows is printed next to it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402  (tests/bench, next to this script)
from core.bvh import read_bvh  # noqa: E402
from core.motion import Motion  # noqa: E402
from core.rig import Rig, find_rig  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
CLIPS = (
    "bandai1/walk_normal_001",
    "bandai2/run_normal_001",
    "bandai1/walk-left_normal_001",
    "bandai2/walk-turn-left_normal_001",
    "bandai1/kick_normal_001",
    "bandai1/punch_normal_001",
    "bandai1/slash_normal_001",
    "bandai1/bow_normal_001",
    "bandai1/dance-short_normal_001",
)
PLACEMENTS = ((0.5, 0.5), (1.0, 1.0))  # (overlap s, core margin s)
NAIVE_BLEND = 10  # frames
COMMON_PAD = 5  # frames either side of the union of both windows
JUMP_RATIO = 3.0  # an acceleration ratio above this is reported as a jump


def short(name: str) -> str:
    return name.split("/")[-1].replace("_normal_001", "")


def load(name: str) -> Motion:
    """A clip of ../shared/mocap by ``"bandai1/walk_normal_001"``, lengths in cm (unit 0.01 m)."""
    return read_bvh(MOCAP / f"{name}.bvh", unit=0.01)


def core_range(motion: Motion, margin_s: float) -> tuple[int, int]:
    """The clip without ``margin_s`` seconds at either end (at most a quarter of it each)."""
    margin = min(int(round(margin_s * motion.fps)), motion.n_frames // 4)
    return margin, motion.n_frames - 1 - margin


def next_start(prev: Motion, overlap_s: float) -> int:
    """Output frame of the next clip's frame 0 when the previous clip starts at 0."""
    return prev.n_frames - int(round(overlap_s * prev.fps))


def engine_window(result) -> np.ndarray | None:
    """Output frames of the blending segments, each from one frame before it to one after.

    Adaptation can release its feet well after its pose blends, so the
    frames are a set, not a span: the clip's own motion between two blends
    is not part of any transition. Deformation segments (the kept feet, held
    by IK, which may run to the end of the clip) are not blends either.
    """
    segments = [s for pair in result.plan.pairs for s in pair.segments if s.blend != "deformation"]
    if not segments:
        return None
    return np.unique(np.concatenate([np.arange(s.start - 1, s.end + 2) for s in segments]))


def span(window) -> tuple[int, int]:
    """First and last frame of a window given as a pair or as frames."""
    return (int(window[0]), int(window[-1])) if isinstance(window, np.ndarray) else window


def shifted(window, by: int):
    return window - by if isinstance(window, np.ndarray) else (window[0] - by, window[1] - by)


def cm(motion: Motion) -> float:
    """Centimetres per unit of a motion's skeleton."""
    return motion.skeleton.unit * 100.0


@dataclass
class PairFigures:
    prev: str
    next: str
    overlap_s: float
    margin_s: float
    method: str = ""
    window: tuple[int, int] | None = None
    naive_window: tuple[int, int] = (0, 0)
    skate: dict = field(default_factory=dict)  # (method, window kind) -> cm/s
    accel: dict = field(default_factory=dict)  # (method, window kind) -> ratio to p99
    problem: str = ""  # engine exception, rejection or jump
    seconds: float = 0.0


def measure_pair(prev_name: str, next_name: str, clips: dict, rig: Rig, overlap_s: float, margin_s: float,
                 engine, responsiveness: float, pose_ends: str = "eased") -> PairFigures:
    prev, nxt = clips[prev_name], clips[next_name]
    fig = PairFigures(short(prev_name), short(next_name), overlap_s, margin_s)
    start = next_start(prev, overlap_s)
    floors = metrics.floor_levels([prev, nxt], rig)
    p99 = metrics.acceleration_percentile([prev, nxt])
    # the mixed frames plus the unmixed frame either side (weights 0 and 1),
    # as an engine segment runs from t0 to t1: a crossfade's kinks are there
    fig.naive_window = (start - 1, start + NAIVE_BLEND)

    naive = metrics.naive_crossfade(prev, nxt, start, rig, blend_frames=NAIVE_BLEND)
    outputs = {"naive": (naive, 0)}  # motion, output frame of its frame 0
    windows = {"naive": fig.naive_window}

    if engine is not None:
        Clip, synthesize = engine
        timeline = [
            Clip(prev, 0, core=core_range(prev, margin_s), name=fig.prev),
            Clip(nxt, start, core=core_range(nxt, margin_s), name=fig.next),
        ]
        t = time.perf_counter()
        try:
            result = synthesize(timeline, responsiveness=responsiveness, pose_ends=pose_ends)
        except Exception as error:  # a benchmark reports every failure and goes on
            fig.problem = f"{type(error).__name__}: {error}"
        else:
            fig.seconds = time.perf_counter() - t
            fig.method = "+".join(str(getattr(p.method, "name", p.method)) for p in result.plan.pairs)
            fig.window = engine_window(result)
            motion = result.motion
            if result.plan.rejected:
                fig.problem = f"rejected: {result.plan.rejected}"
            elif fig.window is None:
                fig.problem = "no blending segment in the plan"
            elif not (np.all(np.isfinite(motion.rotations)) and np.all(np.isfinite(motion.positions))):
                fig.problem = "NaN in the output"
            else:
                outputs["engine"] = (motion, int(result.start))
                windows["engine"] = fig.window

    union = (min(span(w)[0] for w in windows.values()), max(span(w)[1] for w in windows.values()))
    common = (union[0] - COMMON_PAD, union[1] + COMMON_PAD)
    # what the two untouched clips do on the common window's frames (each on
    # those of its own frames that fall in it): the skate the pair starts from
    fig.skate["sources", "common"] = 0.5 * cm(prev) * (
        metrics.foot_skate(prev, rig, common, floors) + metrics.foot_skate(nxt, rig, shifted(common, start), floors))
    if "engine" in windows:
        # the two untouched clips on the engine's own frames: how much of the
        # window's skate and acceleration the clips bring by themselves there
        own = windows["engine"]
        fig.skate["sources", "own"] = 0.5 * cm(prev) * (
            metrics.foot_skate(prev, rig, own, floors) + metrics.foot_skate(nxt, rig, shifted(own, start), floors))
        fig.accel["sources", "own"] = max(metrics.peak_acceleration(prev, own),
                                          metrics.peak_acceleration(nxt, shifted(own, start))) / p99
        # the same split by body part: the legs (hips to toes) and the rest
        legs = metrics.leg_joints(rig)
        rest = [j for j in range(len(prev.skeleton)) if j not in legs]
        for part, joints in (("legs", legs), ("rest", rest)):
            fig.accel["sources", part] = max(metrics.peak_acceleration(prev, own, joints),
                                             metrics.peak_acceleration(nxt, shifted(own, start), joints)) / p99
    for method, (motion, first) in outputs.items():
        for kind, window in (("own", windows[method]), ("common", common)):
            local = shifted(window, first)
            fig.skate[method, kind] = metrics.foot_skate(motion, rig, local, floors) * cm(motion)
            fig.accel[method, kind] = metrics.peak_acceleration(motion, local) / p99
    if "engine" in outputs:
        motion, first = outputs["engine"]
        for part, joints in (("legs", legs), ("rest", rest)):
            fig.accel["engine", part] = metrics.peak_acceleration(motion, shifted(windows["engine"], first), joints) / p99
    if "engine" in outputs and fig.accel["engine", "own"] > JUMP_RATIO:
        fig.problem = f"jump: peak acceleration {fig.accel['engine', 'own']:.1f} x the sources' p99"
    return fig


def source_figures(clips: dict, rig: Rig, window_lengths: list[int]) -> tuple[dict, dict]:
    """Each clip's own skate (cm/s, whole clip, own floor), and the sources' acceleration
    ratio on their own windows: for each length, the median over every window of
    that length in every clip of (peak in the window) / (that clip's p99)."""
    skate = {}
    ratios = {n: [] for n in window_lengths}
    for name, motion in clips.items():
        skate[name] = metrics.foot_skate(motion, rig, None, metrics.floor_levels([motion], rig)) * cm(motion)
        accel = metrics.joint_accelerations(motion).max(axis=1)
        p99 = metrics.acceleration_percentile([motion])
        for n in window_lengths:
            if len(accel) >= n:
                peaks = np.lib.stride_tricks.sliding_window_view(accel, n).max(axis=1)
                ratios[n].extend(peaks / p99)
    return skate, {n: float(np.median(r)) for n, r in ratios.items() if r}


def engine_or_reason():
    try:
        from core.synthesize import Clip, synthesize
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"
    return (Clip, synthesize), ""


def pct(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def fmt(x: float | None, width: int = 6, digits: int = 1) -> str:
    return " " * (width - 1) + "-" if x is None else f"{x:{width}.{digits}f}"


def print_rows(figs: list[PairFigures]) -> None:
    print(f"{'prev > next':<30} {'method':<22} {'eng win':>9} {'nai win':>9} |"
          f" {'skate cm/s: eng':>15} {'naive':>6} {'c.eng':>6} {'c.nai':>6} {'c.src':>6} |"
          f" {'acc/p99: eng':>12} {'naive':>6} {'c.eng':>6} {'c.nai':>6}  problem")
    for f in figs:
        w = f.window
        ew = "-" if w is None else "{}..{}".format(*span(w))
        nw = f"{f.naive_window[0]}..{f.naive_window[1]}"
        print(f"{f.prev + ' > ' + f.next:<30} {f.method[:22]:<22} {ew:>9} {nw:>9} |"
              f" {fmt(f.skate.get(('engine', 'own')), 15)} {fmt(f.skate.get(('naive', 'own')))}"
              f" {fmt(f.skate.get(('engine', 'common')))} {fmt(f.skate.get(('naive', 'common')))}"
              f" {fmt(f.skate.get(('sources', 'common')))} |"
              f" {fmt(f.accel.get(('engine', 'own')), 12, 2)} {fmt(f.accel.get(('naive', 'own')), 6, 2)}"
              f" {fmt(f.accel.get(('engine', 'common')), 6, 2)} {fmt(f.accel.get(('naive', 'common')), 6, 2)}"
              f"  {f.problem[:90]}")


def row(label: str, values: list) -> None:
    """One summary line: median, 90th percentile and count of ``values``; nothing if there are none."""
    if values:
        print(f"{label:<26} {np.median(values):7.2f} {pct(values, 90):7.2f} {len(values):6d}")


def summary(figs: list[PairFigures], source_skate: dict, source_accel: dict) -> None:
    src = list(source_skate.values())
    src_median = float(np.median(src))
    print(f"\nsources' own skate (cm/s, whole clip): "
          + ", ".join(f"{short(n)} {v:.1f}" for n, v in source_skate.items()))
    print(f"{'skate cm/s':<26} {'median':>7} {'p90':>7} {'pairs':>6}")
    row("sources (per clip)", src)
    row("sources (engine window)", [f.skate["sources", "own"] for f in figs if ("sources", "own") in f.skate])
    row("sources (common window)", [f.skate["sources", "common"] for f in figs])
    for method in ("engine", "naive"):
        for kind in ("own", "common"):
            row(f"{method} ({kind} window)", [f.skate[method, kind] for f in figs if (method, kind) in f.skate])
    print(f"\n{'acceleration / p99':<26} {'median':>7} {'p90':>7} {'pairs':>6}")
    row("sources (engine window)", [f.accel["sources", "own"] for f in figs if ("sources", "own") in f.accel])
    for method in ("engine", "naive"):
        for kind in ("own", "common"):
            row(f"{method} ({kind} window)", [f.accel[method, kind] for f in figs if (method, kind) in f.accel])
    for n, r in source_accel.items():
        print(f"{'sources, ' + str(n) + '-frame windows':<26} {r:7.2f}")
    print("  by body part, on the engine's own window (legs: hips to toes; rest: pelvis, spine, arms, head):")
    for method in ("sources", "engine"):
        for part in ("legs", "rest"):
            row(f"  {method}, {part}", [f.accel[method, part] for f in figs if (method, part) in f.accel])

    done = [f for f in figs if ("engine", "own") in f.skate]
    failed = [f for f in figs if ("engine", "own") not in f.skate]
    if not done and failed and all(not f.problem for f in failed):
        return
    times = [f.seconds for f in done]
    if times:
        print(f"\nengine: {len(done)} pairs synthesized, median {1000 * statistics.median(times):.1f} ms a pair")
    if failed:
        print(f"engine: {len(failed)} pairs not measured:")
        for f in failed:
            print(f"  {f.prev} > {f.next} (overlap {f.overlap_s} s): {f.problem}")
    jumps = sorted((f for f in done if f.problem), key=lambda f: -f.accel["engine", "own"])
    if jumps:
        print(f"engine: {len(jumps)} pairs with a jump (peak acceleration > {JUMP_RATIO:g} x p99); the worst:")
        for f in jumps[:8]:
            print(f"  {f.prev} > {f.next} (overlap {f.overlap_s} s, {f.method}, frames {span(f.window)[0]}..{span(f.window)[1]}): "
                  f"{f.accel['engine', 'own']:.1f} x p99, skate {f.skate['engine', 'own']:.0f} cm/s")
    if not done:
        return
    print("\ntargets (engine, over synthesized pairs):")
    for kind in ("own", "common"):
        skate = [f.skate["engine", kind] for f in done]
        accel = [f.accel["engine", kind] for f in done]
        checks = [
            (f"median skate {np.median(skate):.2f} <= 1.5 x sources' median {src_median:.2f} = {1.5 * src_median:.2f}",
             np.median(skate) <= 1.5 * src_median),
            (f"p90 skate {pct(skate, 90):.2f} <= 2 x sources' median = {2 * src_median:.2f}",
             pct(skate, 90) <= 2 * src_median),
            (f"median acceleration ratio {np.median(accel):.2f} <= 1.2", np.median(accel) <= 1.2),
        ]
        label = "engine's own window" if kind == "own" else "common window"
        for text, ok in checks:
            print(f"  [{label:>19}] {text:<70} {'met' if ok else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--overlap", type=float, nargs="*", default=None,
                        help="overlaps in seconds (core margin = overlap); default 0.5 and 1.0")
    parser.add_argument("--responsiveness", type=float, default=0.5)
    parser.add_argument("--pose-ends", choices=("eased", "held"), default="eased",
                        help="the engine's pose ends: eased (default) or held with eq. (16) slopes, as in the paper")
    parser.add_argument("--no-engine", action="store_true", help="measure the naive crossfade and the sources only")
    args = parser.parse_args()
    placements = PLACEMENTS if args.overlap is None else tuple((o, o) for o in args.overlap)

    if not MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {MOCAP}")
    clips = {name: load(name) for name in CLIPS}
    rig = find_rig(clips[CLIPS[0]])
    names = {m.skeleton.names for m in clips.values()}
    if len(names) != 1:
        sys.exit("the benchmark clips must share one skeleton")
    engine, reason = (None, "--no-engine") if args.no_engine else engine_or_reason()
    print(f"{len(CLIPS)} clips, {len(CLIPS) * (len(CLIPS) - 1)} ordered pairs x {len(placements)} placements; "
          f"engine {'not available (' + reason + ')' if engine is None else 'core.synthesize'}, "
          f"responsiveness {args.responsiveness}, pose ends {args.pose_ends}")

    figs = []
    for overlap_s, margin_s in placements:
        print(f"\n--- next clip starts {overlap_s} s before the previous one ends; cores leave {margin_s} s at each end")
        rows = [
            measure_pair(a, b, clips, rig, overlap_s, margin_s, engine, args.responsiveness, args.pose_ends)
            for a in CLIPS for b in CLIPS if a != b
        ]
        print_rows(rows)
        figs += rows

    lengths = sorted({NAIVE_BLEND + 2} | {
        int(np.median([len(f.window) for f in figs if ("engine", "own") in f.skate] or [NAIVE_BLEND]))})
    source_skate, source_accel = source_figures(clips, rig, lengths)
    summary(figs, source_skate, source_accel)


if __name__ == "__main__":
    main()
