"""Synchronized blending per body part and with activation ramps (Ménardais 2004; issue 24 items 2, 3).

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/sync_parts.py [--baseline REF]

Prints each figure for this tree's core and, in the same run, for the core of
git ref REF (default 3547ef1, the code before this work: every part weighed as
one, no fade out), extracted with ``git archive`` into a temporary folder and run
in a subprocess on the same clips with the same calls.

1. A walk with gestures done standing: ../shared/mocap/bandai2 walk_normal
   with each wave and raise of bandai2, and with bow and bye (bandai1, normal),
   both clips at weight 1, the walk's priority first and then the gesture's
   (the call a new user makes: ``python -m core blend walk.bvh wave.bvh``).
   Figures: the output's duration and its steps (single supports of its own
   support sequence, core.sync.support_sequence of core.analysis.foot_contacts)
   over the walk's; and its skate (core.quality.gap_quality over the whole
   output, cm/s) over the walk's own (core.quality.skate_samples over the whole
   clip). Targets: duration and steps within 10 % of the walk's, skate at most
   1.5 times the walk's.
   This tree also shows the gesture given a legs weight of 1 (``--part-weights
   G:legs=1``: its legs in the blend, the timing kept by §7's splitting alone).
2. Activation ramps: walks and runs blended at 0.5/0.5, the run shorter.
   After the run ends (its warp reaching its last frame), the output's mean
   horizontal pelvis speed over the walk's own speed along its warp (its
   speed at the clip frame played, times the warp's rate): target within 10 %.
   And weights 1,0 and 0,1: the largest difference of any rotation (up to its
   quaternion's sign) or position (cm) from the clip kept (0: bit for bit) and
   the output's frames.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "mocap"

WALK = "bandai2/walk_normal_001"
GESTURES = (
    "bandai2/wave-both-hands_normal_001",
    "bandai2/wave-left-hand_normal_001",
    "bandai2/wave-right-hand_normal_001",
    "bandai2/raise-up-both-hands_normal_001",
    "bandai2/raise-up-left-hand_normal_001",
    "bandai2/raise-up-right-hand_normal_001",
    "bandai1/bow_normal_001",
    "bandai1/bye_normal_001",
)
PAIRS = (  # (walk, run): the run the shorter
    ("bandai2/walk_normal_001", "bandai2/run_normal_001"),
    ("bandai1/walk_sad_001", "bandai1/run_happy_001"),
    ("bandai1/walk_proud_001", "bandai1/run_angry_001"),
    ("bandai1/walk_feminine_001", "bandai1/run_feminine_001"),
    ("bandai1/walk_musical_001", "bandai1/run_musical_001"),
    ("bandai1/walk_childish_001", "bandai1/run_childish_001"),
)
DEFAULT_BASELINE = "3547ef1"
RATIO_TARGET = 0.10
SKATE_TARGET = 1.5


def short(name: str) -> str:
    return name.split("/")[-1].removesuffix("_001").removesuffix("_normal")


def figures(with_parts: bool) -> dict:
    """Every figure of this script for the ``core`` on ``sys.path``; ``with_parts``: also the
    gestures given a legs weight (a keyword the baseline does not have)."""
    import numpy as np

    from core.analysis import foot_contacts, horizontal
    from core.bvh import read_bvh
    from core.mkm import blend_clips
    from core.motion import forward_kinematics
    from core.quality import SourceFigures, foot_levels, foot_positions, gap_quality, skate_samples
    from core.rig import detect_up, find_rig, leg_length
    from core.sync import Support, support_sequence

    cache = {}

    def load(name):
        if name not in cache:
            cache[name] = read_bvh(MOCAP / f"{name}.bvh", unit=0.01)  # (lengths in the file's cm)
        return cache[name]

    walk = load(WALK)
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    leg = 0.5 * (leg_length(walk.skeleton, rig, "L") + leg_length(walk.skeleton, rig, "R"))
    cm = 100.0 * walk.skeleton.unit

    def steps(m) -> int:
        codes = support_sequence(foot_contacts(m, rig, up=up), m.fps).codes
        return int(np.sum((codes == Support.LS) | (codes == Support.RS)))

    def skate(m, sources) -> float:  # cm/s, the output as one gap (core.quality)
        feet = foot_positions(m, rig)
        q = gap_quality(m, 0, (0, m.n_frames - 1), up=up, leg=leg, output_feet=feet,
                        output_levels=foot_levels(feet @ up, m.fps),
                        sources=[(SourceFigures.of(s, rig, up), 0) for s in sources])
        return float("nan") if q.skate is None else q.skate * leg * cm

    def own_skate(m) -> float:  # cm/s, the whole clip on its own floor (core.quality)
        feet = foot_positions(m, rig)
        speed, down = skate_samples(feet, foot_levels(feet @ up, m.fps), up, m.fps)
        return float(speed[down].mean()) * cm if down.any() else float("nan")

    def pelvis_speed(m):
        g = forward_kinematics(m.rotations, m.positions, m.skeleton.parents, [rig.pelvis],
                               rotations_out=False)[0][:, 0]
        return np.linalg.norm(horizontal(np.diff(g, axis=0), up), axis=-1) * m.fps * cm

    out = {"walk": {"frames": walk.n_frames, "steps": steps(walk), "skate": own_skate(walk)}, "gestures": [],
           "ramps": [], "exact": []}
    for name in GESTURES:
        gesture = load(name)
        for first in ("walk", "gesture"):
            kinds = [("default", None)] + ([("legs 1", {short(name): {"legs": 1.0}})] if with_parts else [])
            for kind, parts in kinds:
                extra = {"part_weights": parts} if parts else {}
                result = blend_clips([walk, gesture], names=["walk", short(name)],
                                     priorities=[2, 1] if first == "walk" else [1, 2], **extra)
                m = result.motion
                out["gestures"].append({"gesture": short(name), "first": first, "kind": kind, "frames": m.n_frames,
                                        "steps": steps(m), "skate": skate(m, [walk, gesture]),
                                        "warned": any("times its longest clip" in w for w in result.warnings)})
    for walk_name, run_name in PAIRS:
        a, b = load(walk_name), load(run_name)
        result = blend_clips([a, b], names=[short(walk_name), short(run_name)], weights=[0.5, 0.5])
        plan = result.plan
        run_end = plan.splines[1].time_of(min(plan.sequences[1].period, plan.splines[1].own[-1]))
        start = int(np.ceil(run_end))
        warp = np.asarray(plan.warps[0], dtype=np.float64)
        speed = pelvis_speed(result.motion)
        own = np.interp(warp[:-1], np.arange(a.n_frames - 1), pelvis_speed(a)) * np.diff(warp)
        tail = slice(start, len(speed))
        out["ramps"].append({"pair": f"{short(walk_name)} + {short(run_name)}", "frames": result.motion.n_frames,
                             "run_end": float(run_end), "speed": float(np.nanmean(speed[tail])),
                             "walk_own": float(np.nanmean(own[tail]))})
        for weights, kept in (([1.0, 0.0], a), ([0.0, 1.0], b)):
            m = blend_clips([a, b], names=["a", "b"], weights=weights).motion
            same = m.n_frames == kept.n_frames
            # (a rotation and its opposite quaternion are one rotation)
            diff = float("nan")
            if same:
                sign = np.where(np.sum(m.rotations * kept.rotations, axis=-1, keepdims=True) < 0, -1.0, 1.0)
                diff = float(max(np.abs(m.rotations - sign * kept.rotations).max(),
                                 np.abs(m.positions - kept.positions).max()))
            out["exact"].append({"pair": f"{short(walk_name)} + {short(run_name)}", "weights": weights,
                                 "frames": m.n_frames, "clip_frames": kept.n_frames, "largest_difference": diff})
    return out


def baseline_figures(ref: str) -> dict:
    """:func:`figures` of the core at git ref ``ref``, in a subprocess."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "core"], check=True, capture_output=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder)
        run = subprocess.run([sys.executable, __file__, "--json", "--core", folder], check=True, capture_output=True,
                             text=True)
    return json.loads(run.stdout)


def ratio_text(x: float, target: float = RATIO_TARGET) -> str:
    return f"{x:6.2f}{' ' if abs(x - 1.0) <= target else '*'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref of the core to compare with")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--core", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, args.core or str(ROOT))
    if args.json:
        print(json.dumps(figures(with_parts=False)))
        return
    new = figures(with_parts=True)
    old = baseline_figures(args.baseline)
    walk = new["walk"]
    print(f"walk {short(WALK)}: {walk['frames']} frames, {walk['steps']} steps, own skate {walk['skate']:.2f} cm/s")
    print("(ratios to the walk's; * misses the target: duration and steps within "
          f"{RATIO_TARGET:.0%}, skate at most {SKATE_TARGET} x)\n")
    print(f"{'gesture':<22} {'first':<8} | {'before: frames':>14} {'steps':>7} {'skate':>7} | "
          f"{'now: frames':>11} {'steps':>7} {'skate':>7} | {'legs 1: frames':>14} {'steps':>7} {'skate':>7}")
    rows = {}
    for r in new["gestures"]:
        rows.setdefault((r["gesture"], r["first"]), {})[r["kind"]] = r
    for r in old["gestures"]:
        rows[(r["gesture"], r["first"])]["before"] = r

    def cells(r):
        skate = r["skate"] / walk["skate"]
        return (f"{ratio_text(r['frames'] / walk['frames']):>14} {ratio_text(r['steps'] / walk['steps']):>7} "
                f"{skate:6.2f}{' ' if skate <= SKATE_TARGET else '*'}")

    met = {"before": 0, "default": 0, "legs 1": 0}
    for (gesture, first), kinds in rows.items():
        print(f"{gesture:<22} {first:<8} | {cells(kinds['before'])} | {cells(kinds['default'])} | "
              f"{cells(kinds['legs 1'])}")
        for kind in met:
            r = kinds[kind]
            met[kind] += (abs(r["frames"] / walk["frames"] - 1) <= RATIO_TARGET
                          and abs(r["steps"] / walk["steps"] - 1) <= RATIO_TARGET
                          and r["skate"] / walk["skate"] <= SKATE_TARGET)
    print(f"all three targets met: before {met['before']}/{len(rows)}, now {met['default']}/{len(rows)}, "
          f"legs weight 1 {met['legs 1']}/{len(rows)}")
    print(f"longest blend before: {max(r['frames'] for r in old['gestures'])} frames "
          f"(warned: now {sum(r['warned'] for r in new['gestures'])} of {len(new['gestures'])})")

    print(f"\nactivation ramps, walk + run at 0.5/0.5: speed after the run ends over the walk's own (target within "
          f"{RATIO_TARGET:.0%})")
    print(f"{'pair':<28} | {'before: frames':>14} {'run ends':>8} {'speed':>7} {'walk':>7} {'ratio':>7} | "
          f"{'now: frames':>11} {'run ends':>8} {'speed':>7} {'walk':>7} {'ratio':>7}")
    for b, n in zip(old["ramps"], new["ramps"]):
        print(f"{n['pair']:<28} | " + " | ".join(
            f"{r['frames']:>{14 if r is b else 11}} {r['run_end']:8.1f} {r['speed']:7.1f} {r['walk_own']:7.1f} "
            f"{ratio_text(r['speed'] / r['walk_own']):>7}" for r in (b, n)))
    print("\nweights 1,0 and 0,1: the clip kept, largest difference of any value (0: bit for bit)")
    print(f"{'pair':<28} {'weights':<9} | {'before: frames':>14} {'clip':>5} {'difference':>11} | "
          f"{'now: frames':>11} {'clip':>5} {'difference':>11}")
    for b, n in zip(old["exact"], new["exact"]):
        print(f"{n['pair']:<28} {','.join(f'{w:g}' for w in n['weights']):<9} | "
              + " | ".join(f"{r['frames']:>{14 if r is b else 11}} {r['clip_frames']:>5} {r['largest_difference']:11.3g}"
                           for r in (b, n)))


if __name__ == "__main__":
    if not MOCAP.is_dir():
        sys.exit(f"no real motion capture at {MOCAP}: the benchmarks need the Bandai Namco Research Motion "
                 "Dataset at ../shared/mocap (see the README, 'Data for tests and benchmarks')")
    main()
