"""Motion-to-motion blends: slope 0 at both ends against eq. (16)'s slopes (2014, 4.4.1), in one run.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/motion_to_motion.py [--gaps S ...] [--responsiveness W]

The pairs and placements of tests/bench/quality.py (fourteen real clips of
../shared/mocap, every ordered pair, cores 0.3, 0.6 and 1.0 s apart, the
original rig), synthesized twice: with the engine's motion-to-motion slopes
(``SynthesisOptions(motion_to_motion_slopes="zero")``, the default) and with
the paper's (``"eq16"``). Only a transition's lower body blends motion to
motion, so the two differ only on gaps the engine plans as a transition.
Printed per such gap and over them, and over every gap: skate (cm/s, and
over the untouched clips'), peak acceleration over its reference and the
worst joint's pop over its reference, all by core.quality through
quality.py's own measure (not redefined here).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial

import quality  # noqa: E402  (tests/bench, next to this script; puts the repository on sys.path)
from core.options import SynthesisOptions  # noqa: E402
from core.synthesize import Clip, synthesize  # noqa: E402

RULES = ("zero", "eq16")


def records(rigged, labels, gaps_s, rule: str, args) -> list:
    engine = (Clip, partial(synthesize, options=SynthesisOptions(motion_to_motion_slopes=rule)))
    return quality.run_variant(rigged, labels, gaps_s, engine, args)


def figures(record) -> dict:
    """skate cm/s (None without contact), skate over the untouched clips', accel and pop over their references."""
    return {"skate": quality.figure(record, "engine", "skate"), "skate_ratio": quality.ratio(record, "engine", "skate"),
            "accel": quality.reference_ratio(record, "engine", "accel"),
            "pop": quality.reference_ratio(record, "engine", "pop")}


def summary(rows: list[dict], key: str) -> str:
    values = [r[key] for r in rows if r[key] is not None]
    if not values:
        return "     -      -"
    return f"{statistics.median(values):6.2f} {max(values):6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--responsiveness", type=float, default=0.5, help="the engine's W (default 0.5)")
    parser.add_argument("--gaps", type=float, nargs="+", default=quality.GAPS_S, metavar="S",
                        help="how far apart the cores are, seconds (default 0.3 0.6 1)")
    args = parser.parse_args()
    args.pose_ends = "eased"
    started = time.perf_counter()
    originals = quality.chosen_clips(None)
    rigged = quality.Rigged.of(quality.VARIANTS[0], originals)
    labels, gaps_s = list(originals), tuple(args.gaps)
    print(f"{len(labels)} clips, every ordered pair, cores {', '.join(f'{g:g}' for g in gaps_s)} s apart, "
          f"W = {args.responsiveness:g}; each rule:", flush=True)
    runs = {rule: records(rigged, labels, gaps_s, rule, args) for rule in RULES}
    leg_cm = rigged.leg_cm
    keyed = {rule: {(r.prev, r.next, r.gap_s): r for r in recs if not r.failure} for rule, recs in runs.items()}
    both = sorted(set(keyed["zero"]) & set(keyed["eq16"]))
    transitions = [k for k in both if keyed["zero"][k].method == "transition"]
    print(f"\ntransitions (the gaps a motion-to-motion blend lies in): {len(transitions)} of {len(both)} gaps")
    print(f"{'prev > next':38s} {'cores':>5s} |" + " |".join(f"{rule + ': skate cm/s, accel, pop':>32s}"
                                                          for rule in RULES))
    for k in transitions:
        cells = []
        for rule in RULES:
            f = figures(keyed[rule][k])
            skate = "-" if f["skate"] is None else f"{f['skate'] * leg_cm:.1f}"
            cells.append(f"{skate:>14s} {f['accel']:8.2f} {f['pop']:8.2f}")
        print(f"{k[0] + ' > ' + k[1]:38s} {k[2]:5g} |" + " |".join(f"{c:>32s}" for c in cells))
    print(f"\n{'median / max over':22s} {'rule':5s} | {'skate/untouched':>13s} | {'accel/ref':>13s} | {'pop/ref':>13s}")
    for title, keys in (("the transitions", transitions), ("every gap", both)):
        for rule in RULES:
            rows = [figures(keyed[rule][k]) for k in keys]
            print(f"{title:22s} {rule:5s} | {summary(rows, 'skate_ratio'):>13s} | {summary(rows, 'accel'):>13s} | "
                  f"{summary(rows, 'pop'):>13s}")
    for rule in RULES:
        rows = [figures(keyed[rule][k]) for k in transitions]
        print(f"{rule:5s}: transitions with pop over twice its reference {sum(r['pop'] > 2 for r in rows)}, "
              f"accel over 1.5 times its reference {sum(r['accel'] > 1.5 for r in rows)}")
    print(f"\nruntime {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    if not quality.MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {quality.MOCAP}")
    main()
