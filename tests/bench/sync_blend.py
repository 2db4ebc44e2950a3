"""Motions played at the same time: synchronized blending (Ménardais 2004, core.mkm) against the NLA's.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/sync_blend.py [--naive-only] [--rows]
    .venv/bin/python tests/bench/sync_blend.py --phase [--before REF] [--rows]

Clips: eight locomotion clips from ../shared/mocap/bandai1 (Y up, centimetres,
30 fps, read with ``unit=0.01``): walks in four styles (normal, happy, sad,
proud), a run, a dash, a walk to the left and a walk backwards. Every
unordered pair of different clips, both starting at output frame 0, at
weights 0.25, 0.5 and 0.75 for the first of the two (which has the higher
priority): 84 blends per method.

Methods:
  sync   core.mkm.blend_clips: support-phase sequences, their synchronization
         and time warps (core.sync), the blend, the contact stage over the whole
         blend; clips cyclic as core.sync.is_cyclic finds them;
  naive  core.mkm.naive_blend: what the NLA shows for the two strips on stacked
         tracks in Replace mode (influences from the weights), with their default
         extrapolation (Hold), no time warp, no contact stage.

The measure (core.quality, the project's one definition, not redefined here),
each blend measured as one gap from its first to its last frame with
core.quality.gap_quality, its floor levels its own:
  skate   mean horizontal speed of the ankle and toe joints on frame pairs
          1/30 s apart where the joint is within 3 % of its own height range
          above its floor; in cm/s (leg lengths/s times the leg length);
  accel   the peak over the blend of the per-frame mean joint acceleration,
          over the two clips' own 99th percentile.
Both also over the frames where both clips still play their own frames (the
naive blend holds the shorter clip's last pose after it ends, as the NLA
does; a synchronized non-cyclic clip holds its last element): "both playing".
The sources' own skate: the same measure over each whole clip
(tests/bench/quality.whole_clip_skate); its median over the eight clips.

Targets (the issue): synchronized median skate at most 1.5x the sources'
median and at most a third of naive's; two 300-frame clips blended in under
20 ms, analysis included (contacts, sequences, synchronization, blend, contact
stage), file reading excluded.

--phase: do two locomotions blended stay in step, whatever their starts?
(issue 24, item 1: clips locked half a step apart.) Every ordered pair of the
PHASE_CLIPS (walks and runs of bandai1 in several styles, and bandai2's walk,
another performer), half and half, the first at output frame 0 and the second
at each of PHASE_OFFSETS; each blend synchronized (core.mkm.blend_clips), and
the same clips frame by frame (core.mkm.naive_blend: no time warp). With
``--before REF`` also synchronized by core/sync.py as it stood at git commit REF
(e.g. the commit before the join rule: the old rule in the same run). Each
clip's own support at the frame it plays (core.sync.played_supports: its own
foot contacts at its warped frame), over the frames where both play their own
and weigh something (a synchronized clip stops at SyncPlan.ends and weighs 0
after: its feet are not shown there; a cyclic one repeats to the blend's end):
  clash    share of frames where one clip stands on its left foot alone and the
           other on its right alone;
  strikes  how far apart the two clips put the same foot down, in strides: for
           each heel strike (a foot's contact starting) of the first clip, the
           nearest of the second's same foot, over the first clip's median
           interval between strikes of that foot; the run's median;
  phase    the signed offset of those strikes in strides, wrapped to
           [-0.5, 0.5) (0: in step, 0.25: half a step, the single supports of
           one against the double supports of the other; 0.5: opposite feet),
           its circular mean over the run; a pair keeps its phase relation
           when its offsets at the five starts lie within 0.05 stride;
  skate    core.quality's, as above, over the whole blend, against the median
           of all the sources' own and (/pair) the median of the pair's two.
Targets (the issue): clash at most 5 % in 95 % of the runs; strikes within
0.05 stride, in every run (the share of runs within it printed per pair type);
skate at most 1.5x the sources' median; the phase relation the same whatever
the start.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import load, short, timed  # noqa: E402  (tests/bench, next to this script)
from quality import whole_clip_skate  # noqa: E402
import core.mkm  # noqa: E402
from core.analysis import Phase, foot_contacts  # noqa: E402
from core.mkm import blend_clips, naive_blend  # noqa: E402
from core.motion import Motion  # noqa: E402
from core.quality import SourceFigures, foot_levels, foot_positions, gap_quality  # noqa: E402
from core.rig import Rig, detect_up, find_rig, leg_length  # noqa: E402

CLIPS = (
    "bandai1/walk_normal_001",
    "bandai1/walk_happy_001",
    "bandai1/walk_sad_001",
    "bandai1/walk_proud_001",
    "bandai1/run_happy_001",
    "bandai1/dash_happy_001",
    "bandai1/walk-left_normal_001",
    "bandai1/walk-back_happy_001",
)
WEIGHTS = (0.25, 0.5, 0.75)  # the first clip's; the second has the rest
SPEED_CLIPS = ("bandai1/walk_sad_001", "bandai1/walk_proud_001")  # cut to SPEED_FRAMES each
SPEED_FRAMES = 300
SPEED_TARGET_S = 0.020
SOURCE_RATIO_TARGET = 1.5
NAIVE_RATIO_TARGET = 1.0 / 3.0


@dataclass
class Figures:
    skate: float | None  # cm/s, over the whole blend
    accel: float | None  # peak over the clips' p99
    skate_playing: float | None  # cm/s, over the frames where both clips play their own frames
    frames: int


@dataclass
class Row:
    a: str
    b: str
    weight: float
    naive: Figures
    sync: Figures | None = None
    delayed: str = ""
    failure: str = ""


def measure(output: Motion, playing: tuple[int, int], sources: list[SourceFigures], rig: Rig, up: np.ndarray,
            leg: float, cm_per_unit: float) -> Figures:
    """core.quality.gap_quality of the whole output, and its skate over output frames ``playing``
    (first, last; inclusive)."""
    feet = foot_positions(output, rig)
    levels = foot_levels(feet @ up, output.fps)
    placed = [(s, 0) for s in sources]
    whole = gap_quality(output, 0, (0, output.n_frames - 1), up=up, leg=leg, output_feet=feet, output_levels=levels,
                        sources=placed)
    playing = gap_quality(output, 0, playing, up=up, leg=leg, output_feet=feet, output_levels=levels,
                          sources=placed)
    to_cm = leg * cm_per_unit
    return Figures(None if whole.skate is None else whole.skate * to_cm, whole.accel,
                   None if playing.skate is None else playing.skate * to_cm, output.n_frames)


def sync_playing(result, motions: list[Motion]) -> tuple[int, int]:
    """The output frames (first, last) over which every clip of a synchronized blend plays its
    own frames: from the last one joining (a delayed start) until the first one that is not
    cyclic passes its last frame."""
    warps = np.asarray(result.plan.warps, dtype=np.float64)
    playing = np.ones(warps.shape[1], dtype=bool)
    for w, m, cyclic in zip(warps, motions, result.cyclic):
        playing &= ~np.isnan(w)
        if not cyclic:
            playing &= np.nan_to_num(w, nan=np.inf) <= m.n_frames - 1 + 1e-9
    frames = np.flatnonzero(playing)
    if not len(frames):
        return 0, -1
    last = frames[0] + np.argmax(np.diff(np.append(frames, frames[-1] + 2)) > 1)
    return int(frames[0]), int(last)


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def fmt(x: float | None, width: int = 7, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--naive-only", action="store_true", help="the naive blend only (no core.sync needed)")
    parser.add_argument("--rows", action="store_true", help="print every blend")
    parser.add_argument("--phase", action="store_true", help="do locomotions blended stay in step (issue 24, item 1)")
    parser.add_argument("--before", metavar="REF", help="--phase: also core/sync.py as it stood at git commit REF")
    args = parser.parse_args()
    if args.phase:
        phase_main(args)
        return

    clips = {short(name): load(name) for name in CLIPS}
    first = next(iter(clips.values()))
    rig = find_rig(first)
    up = detect_up(first, rig)
    leg = 0.5 * (leg_length(first, rig, "L") + leg_length(first, rig, "R"))
    cm = 100.0 * first.skeleton.unit
    sources = {label: SourceFigures.of(m, rig, up) for label, m in clips.items()}
    own = {label: whole_clip_skate(s, up, m.fps, leg) for (label, s), m in zip(sources.items(), clips.values())}
    source_median = median([v * leg * cm for v in own.values() if v is not None])
    print(f"{len(clips)} clips, leg {leg * cm:.1f} cm; their own skate (cm/s): "
          + ", ".join(f"{k} {fmt(None if v is None else v * leg * cm, 0)}" for k, v in own.items()))

    sync_error = None
    if not args.naive_only:
        try:
            import core.sync  # noqa: F401
        except ImportError as error:
            sync_error = f"core.sync is not available ({error}): the synchronized side is not run"
            print(sync_error)

    rows = []
    for (a, ma), (b, mb) in itertools.combinations(clips.items(), 2):
        pair_sources = [sources[a], sources[b]]
        for w in WEIGHTS:
            naive = naive_blend([ma, mb], [w, 1.0 - w], [0, 0])
            row = Row(a, b, w, measure(naive, (0, min(ma.n_frames, mb.n_frames) - 1), pair_sources, rig, up, leg, cm))
            if not args.naive_only and sync_error is None:
                try:
                    result = blend_clips([ma, mb], names=[a, b], weights=[w, 1.0 - w], rig=rig)
                    row.sync = measure(result.motion, sync_playing(result, [ma, mb]), pair_sources, rig, up, leg, cm)
                    row.delayed = "; ".join(f"{d['clip']} +{d['frames']}" for d in result.delayed())
                except ValueError as error:
                    row.failure = str(error)
            rows.append(row)

    if args.rows:
        print(f"\n{'pair':<34} {'w':>5} | {'naive skate':>11} {'playing':>8} {'accel':>6} | "
              f"{'sync skate':>10} {'playing':>8} {'accel':>6} | delayed")
        for r in rows:
            s = r.sync
            print(f"{r.a + ' + ' + r.b:<34} {r.weight:5.2f} | {fmt(r.naive.skate, 11)} {fmt(r.naive.skate_playing, 8)} "
                  f"{fmt(r.naive.accel, 6)} | {fmt(s and s.skate, 10)} {fmt(s and s.skate_playing, 8)} "
                  f"{fmt(s and s.accel, 6)} | {r.delayed}{'FAILED: ' + r.failure if r.failure else ''}")

    print(f"\nmedians over {len(rows)} blends ({len(rows) // len(WEIGHTS)} pairs x weights {WEIGHTS}):")
    print(f"  {'':8} {'skate cm/s':>11} {'both playing':>13} {'peak accel':>11}")
    print(f"  {'sources':8} {fmt(source_median, 11)}")
    for name in ("naive", "sync"):
        got = [getattr(r, name) for r in rows if getattr(r, name) is not None]
        if not got:
            continue
        print(f"  {name:8} {fmt(median(f.skate for f in got), 11)} {fmt(median(f.skate_playing for f in got), 13)} "
              f"{fmt(median(f.accel for f in got), 11)}")
    failures = [r for r in rows if r.failure]
    if failures:
        print(f"  {len(failures)} synchronized blend(s) failed, e.g. {failures[0].a} + {failures[0].b}: {failures[0].failure}")

    print("\ntargets:")
    synced = [r.sync for r in rows if r.sync is not None]
    if synced:
        sync_median = median(f.skate for f in synced)
        naive_median = median(r.naive.skate for r in rows)
        print(f"  sync median skate {fmt(sync_median, 0)} <= {SOURCE_RATIO_TARGET}x the sources' "
              f"{fmt(source_median, 0)} = {fmt(SOURCE_RATIO_TARGET * source_median, 0)}: "
              f"{'met' if sync_median <= SOURCE_RATIO_TARGET * source_median else 'NOT met'}")
        print(f"  sync median skate {fmt(sync_median, 0)} <= 1/3 of naive's {fmt(naive_median, 0)} = "
              f"{fmt(NAIVE_RATIO_TARGET * naive_median, 0)}: "
              f"{'met' if sync_median <= NAIVE_RATIO_TARGET * naive_median else 'NOT met'}")
        # the same over the frames where both clips play their own frames (a clip holding its last
        # pose, however long, skates little and would flatter the whole-blend figure)
        sync_both = median(f.skate_playing for f in synced)
        naive_playing = median(r.naive.skate_playing for r in rows)
        print(f"  (both playing: sync {fmt(sync_both, 0)} against 1.5x sources {fmt(SOURCE_RATIO_TARGET * source_median, 0)}"
              f" and 1/3 of naive {fmt(NAIVE_RATIO_TARGET * naive_playing, 0)}: "
              f"{'both met' if sync_both <= min(SOURCE_RATIO_TARGET * source_median, NAIVE_RATIO_TARGET * naive_playing) else 'NOT both met'})")
        a, b = (load(name)[:SPEED_FRAMES] for name in SPEED_CLIPS)
        frames = blend_clips([a, b], weights=[0.5, 0.5], rig=rig).motion.n_frames
        seconds = timed(lambda: blend_clips([a, b], weights=[0.5, 0.5], rig=rig), repeat=9)
        naive_seconds = timed(lambda: naive_blend([a, b], [0.5, 0.5], [0, 0]), repeat=9)
        print(f"  two {SPEED_FRAMES}-frame clips ({', '.join(short(n) for n in SPEED_CLIPS)}) synchronized and "
              f"blended into {frames} frames in {seconds * 1e3:.1f} ms (naive {naive_seconds * 1e3:.1f} ms) < "
              f"{SPEED_TARGET_S * 1e3:.0f} ms: {'met' if seconds < SPEED_TARGET_S else 'NOT met'}")
    else:
        print("  (the synchronized side was not run: nothing to check)")


# --------------------------------------------------------------------------
# --phase: locomotions blended in step, whatever their starts (issue 24, item 1)

PHASE_CLIPS = (
    "bandai1/walk_normal_001",
    "bandai1/walk_happy_001",
    "bandai1/walk_sad_001",
    "bandai1/walk_proud_001",
    "bandai1/walk_angry_001",
    "bandai1/walk_childish_001",
    "bandai2/walk_normal_001",
    "bandai1/run_normal_001",
    "bandai1/run_happy_001",
    "bandai1/run_sad_001",
    "bandai1/run_feminine_001",
    "bandai1/dash_happy_001",
)
PHASE_OFFSETS = (0, 5, 10, 20, 30)  # output frames the second clip starts at
CLASH_TARGET, CLASH_RUNS = 0.05, 0.95  # at most 5 % of frames clash in 95 % of the runs
STRIKE_TARGET = 0.05  # strides between the clips' strikes of one foot
RELATION_SPREAD = 0.05  # strides: a pair's phase offsets at every start lie within this
LS_, RS_ = int(Phase.LS), int(Phase.RS)  # core.sync.Support's codes too


@dataclass
class PhaseRun:
    a: str
    b: str
    offset: int
    method: str
    clash: float | None  # share of the frames both play their own
    strikes: float | None  # median separation of same-foot strikes, strides
    phase: float | None  # circular mean signed offset, strides in [-0.5, 0.5)
    skate: float | None  # cm/s over the whole blend
    frames: int
    failure: str = ""
    sources_skate: float | None = None  # cm/s, the median of the two clips' own

    @property
    def skate_ratio(self) -> float | None:
        return None if self.skate is None or not self.sources_skate else self.skate / self.sources_skate


def heel_strikes(supports: np.ndarray) -> list[np.ndarray]:
    """Frames where each foot (left, right) comes down, from supports ``(T,)`` (-1: not playing)."""
    down = [np.isin(supports, [int(Phase.DS), LS_]), np.isin(supports, [int(Phase.DS), RS_])]
    playing = supports >= 0
    return [np.flatnonzero(d[1:] & ~d[:-1] & playing[1:] & playing[:-1]) + 1 for d in down]


def strike_offsets(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Signed offsets in strides of the second clip's strikes from the first's, one per strike of the
    first (each foot alike): to the second's nearest strike of that foot, over the first's median
    interval between strikes of that foot, wrapped to [-0.5, 0.5)."""
    out = []
    for a, b in zip(heel_strikes(first), heel_strikes(second)):
        if len(a) < 2 or len(b) < 1:
            continue
        stride = float(np.median(np.diff(a)))
        nearest = b[np.argmin(np.abs(b[None] - a[:, None]), axis=1)]
        out.append(((nearest - a) / stride + 0.5) % 1.0 - 0.5)
    return np.concatenate(out) if out else np.zeros(0)


def circular_mean(offsets: np.ndarray) -> float | None:
    """The mean of offsets in strides on the circle of one stride, in [-0.5, 0.5)."""
    if not len(offsets):
        return None
    angle = np.angle(np.mean(np.exp(2j * np.pi * offsets))) / (2 * np.pi)
    return float((angle + 0.5) % 1.0 - 0.5)


def circular_spread(values: list[float]) -> float:
    """The shortest arc (strides) holding every offset of ``values`` on the circle of one stride."""
    x = np.sort(np.mod(values, 1.0))
    gaps = np.diff(np.append(x, x[0] + 1.0))
    return float(1.0 - gaps.max())


def phase_figures(supports: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """(clash share, median strike separation, circular mean offset) of two clips' supports ``(2, T)``
    over the frames both play their own."""
    both = (supports >= 0).all(axis=0)
    if not both.any():
        return None, None, None
    a, b = supports[0], supports[1]
    clash = float(np.mean(((a == LS_) & (b == RS_) | (a == RS_) & (b == LS_))[both]))
    masked = np.where(both, supports, -1)
    offsets = strike_offsets(masked[0], masked[1])
    return clash, (float(np.median(np.abs(offsets))) if len(offsets) else None), circular_mean(offsets)


def synchronize_before(ref: str):
    """core.sync.synchronize as it stood at git commit ``ref``, run against today's other core modules
    (the module is loaded from ``git show`` under another name; its relative imports find today's)."""
    import subprocess
    import types

    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:core/sync.py"], capture_output=True, text=True,
                            check=True).stdout
    module = types.ModuleType("core._sync_before")
    module.__package__ = "core"
    sys.modules[module.__name__] = module
    exec(compile(source, f"{ref}:core/sync.py", "exec"), module.__dict__)
    return module.synchronize


def phase_run(a, b, ma, mb, offset, method, rig, up, contacts, pair_sources, leg, cm) -> PhaseRun:
    """One blend of the pair, the second clip starting at ``offset``, measured."""
    from core.sync import played_supports
    if method == "naive":
        output = naive_blend([ma, mb], [0.5, 0.5], [0, offset])
        t = np.arange(output.n_frames, dtype=np.float64)
        warps = np.stack([t, np.where(t >= offset, t - offset, np.nan)])
        cyclic = (False, False)  # the NLA repeats no strip unless told to
    else:
        try:
            result = blend_clips([ma, mb], names=[a, b], weights=[0.5, 0.5], starts=[0, offset], rig=rig)
        except ValueError as error:
            return PhaseRun(a, b, offset, method, None, None, None, None, 0, str(error))
        output, warps, cyclic = result.motion, np.asarray(result.plan.warps), result.cyclic
    # (a synchronized clip stops where it ends, a cyclic one with the blend, and weighs 0 after:
    # what its warp plays past there is not shown; the naive blend's strips hold, and are)
    ends = None if method == "naive" else result.plan.ends
    supports = played_supports(warps, contacts, cyclic, ends)
    clash, strikes, phase = phase_figures(supports)
    skate = measure(output, (0, output.n_frames - 1), pair_sources, rig, up, leg, cm).skate
    return PhaseRun(a, b, offset, method, clash, strikes, phase, skate, output.n_frames)


def phase_main(args) -> None:
    clips = {short(name) if name.startswith("bandai1/") else name.replace("/", ":").removesuffix("_001"): load(name)
             for name in PHASE_CLIPS}
    first = next(iter(clips.values()))
    rig = find_rig(first)
    up = detect_up(first, rig)
    leg = 0.5 * (leg_length(first, rig, "L") + leg_length(first, rig, "R"))
    cm = 100.0 * first.skeleton.unit
    contacts = {label: foot_contacts(m, rig, up=up) for label, m in clips.items()}
    sources = {label: SourceFigures.of(m, rig, up) for label, m in clips.items()}
    own = {label: whole_clip_skate(s, up, m.fps, leg) for (label, s), m in zip(sources.items(), clips.values())}
    own = {label: None if v is None else v * leg * cm for label, v in own.items()}
    source_median = median(own.values())
    pairs = list(itertools.permutations(clips, 2))
    print(f"{len(clips)} clips ({', '.join(clips)}), {len(pairs)} ordered pairs x starts {PHASE_OFFSETS} of the "
          f"second, half and half; the sources' median skate {source_median:.2f} cm/s")

    methods = {"naive": None, "sync": core.mkm.synchronize}
    if args.before:
        methods = {"naive": None, f"before {args.before}": synchronize_before(args.before),
                   "sync": core.mkm.synchronize}
    runs: list[PhaseRun] = []
    for method, synchronize in methods.items():
        if synchronize is not None:
            core.mkm.synchronize = synchronize  # blend_synchronized calls the name it imported
        for a, b in pairs:
            for offset in PHASE_OFFSETS:
                run = phase_run(a, b, clips[a], clips[b], offset, method, rig, up, [contacts[a], contacts[b]],
                                [sources[a], sources[b]], leg, cm)
                run.sources_skate = median([own[a], own[b]])
                runs.append(run)
    core.mkm.synchronize = methods["sync"]

    if args.rows:
        print(f"\n{'pair':<34} {'start':>5} {'method':<16} {'clash':>6} {'strikes':>7} {'phase':>6} {'skate':>6} "
              f"{'frames':>6}")
        for r in runs:
            print(f"{r.a + ' + ' + r.b:<34} {r.offset:5d} {r.method:<16} {fmt(r.clash, 6)} {fmt(r.strikes, 7)} "
                  f"{fmt(r.phase, 6)} {fmt(r.skate, 6)} {r.frames:6d}{'  FAILED: ' + r.failure if r.failure else ''}")

    def kind(label: str) -> str:
        return "walk" if "walk" in label else "run"

    print(f"\n{'method':<16} {'pairs':<9} {'runs':>4} | {'clash: median':>13} {'p95':>5} {'<=5%':>5} | "
          f"{'strikes: median':>15} {'p95':>5} {'<=.05':>5} | {'skate median':>12} {'/pair':>5} {'<=1.5x':>6} | "
          f"{'same phase':>10} {'spread med':>10} {'max':>5}")
    checks, strike_shares = {}, {}
    for method in methods:
        for group in ("all", "walk+walk", "walk+run", "run+walk", "run+run"):
            chosen = [r for r in runs if r.method == method
                      and (group == "all" or f"{kind(r.a)}+{kind(r.b)}" == group)]
            if not chosen:
                continue
            ok = [r for r in chosen if not r.failure]
            clash = np.array([r.clash for r in ok if r.clash is not None])
            strikes = np.array([r.strikes for r in ok if r.strikes is not None])
            skate = np.array([r.skate for r in ok if r.skate is not None])
            ratio = np.array([r.skate_ratio for r in ok if r.skate_ratio is not None])
            spreads, unmeasured = [], 0
            for a, b in {(r.a, r.b) for r in ok}:
                phases = [r.phase for r in ok if (r.a, r.b) == (a, b)]
                if len(phases) == len(PHASE_OFFSETS) and all(p is not None for p in phases):
                    spreads.append(circular_spread(phases))
                else:
                    unmeasured += 1
            spreads = np.array(spreads)
            same = float(np.mean(spreads <= RELATION_SPREAD)) if len(spreads) else float("nan")
            print(f"{method:<16} {group:<9} {len(chosen):4d} | {100 * np.median(clash):12.1f}% "
                  f"{100 * np.percentile(clash, 95):4.0f}% {100 * np.mean(clash <= CLASH_TARGET):4.0f}% | "
                  f"{np.median(strikes):15.3f} {np.percentile(strikes, 95):5.2f} "
                  f"{100 * np.mean(strikes <= STRIKE_TARGET):4.0f}% | {np.median(skate):12.2f} "
                  f"{np.median(ratio):5.2f} {100 * np.mean(ratio <= SOURCE_RATIO_TARGET):5.0f}% | "
                  f"{100 * same:9.0f}% {np.median(spreads):10.3f} {spreads.max():5.2f}"
                  + (f"  ({len(chosen) - len(ok)} failed)" if len(ok) < len(chosen) else "")
                  + (f"  ({unmeasured} pairs unmeasured)" if unmeasured else ""))
            strike_shares.setdefault(method, {})[group] = float(np.mean(strikes <= STRIKE_TARGET))
            if group == "all":
                checks[method] = (clash, strikes, skate, ratio, spreads, unmeasured)

    clash, strikes, skate, ratio, spreads, unmeasured = checks["sync"]
    print("\ntargets (synchronized):")
    print(f"  clash at most {100 * CLASH_TARGET:.0f} % in {100 * CLASH_RUNS:.0f} % of the runs: "
          f"{100 * np.mean(clash <= CLASH_TARGET):.1f} % of them: "
          f"{'met' if np.mean(clash <= CLASH_TARGET) >= CLASH_RUNS else 'NOT met'}")
    # (judged per run, as the target reads: a run's strikes within 0.05 stride; the median over runs
    # hid the pair types where most runs miss it)
    within = {group: f"{100 * share:.0f} %" for group, share in strike_shares["sync"].items() if group != "all"}
    print(f"  strikes within {STRIKE_TARGET} stride in every run: median {np.median(strikes):.3f}, "
          f"{100 * np.mean(strikes <= STRIKE_TARGET):.1f} % of the runs within "
          f"({', '.join(f'{g} {v}' for g, v in within.items())}): "
          f"{'met' if np.all(strikes <= STRIKE_TARGET) else 'NOT met'}")
    print(f"  skate at most {SOURCE_RATIO_TARGET}x the sources' median {source_median:.2f} = "
          f"{SOURCE_RATIO_TARGET * source_median:.2f} cm/s: median {np.median(skate):.2f}: "
          f"{'met' if np.median(skate) <= SOURCE_RATIO_TARGET * source_median else 'NOT met'}; against each "
          f"pair's own two sources: median {np.median(ratio):.2f}x, {100 * np.mean(ratio <= SOURCE_RATIO_TARGET):.1f} "
          f"% of the runs within {SOURCE_RATIO_TARGET}x")
    print(f"  the phase relation the same at every start (offsets within {RELATION_SPREAD} stride): "
          f"{int(np.sum(spreads <= RELATION_SPREAD))} of {len(spreads)} pairs: "
          f"{'met' if np.all(spreads <= RELATION_SPREAD) else 'NOT met'}"
          + (f" ({unmeasured} more pairs unmeasured: at some start, fewer than two strikes of a foot while both "
             f"clips weigh something)" if unmeasured else ""))


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
