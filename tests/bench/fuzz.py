"""Fuzzed timelines: random real clips, starts, cores and responsiveness through core.synthesize.

    .venv/bin/python tests/bench/fuzz.py [--timelines 1000] [--seed 0]

Each timeline takes 2 to 8 clips drawn from ../shared/mocap (any of its real
clips, the same clip more than once too), each at a random start (after,
overlapping or before the previous one), with a random core inside it or none
(the whole clip), and a random W. A timeline passes when:

* synthesize raises nothing (its documented error, ValueError, is for bad
  input, and the generator makes only valid timelines: cores inside their
  clips, one frame rate, one skeleton, names of their own, so any exception,
  a ValueError from deep inside numpy included, is a failure);
* the output has no NaN;
* every accepted core is exact (every joint, every core frame outside a composition, to 1e-6 of the
  body height; the first clip as it is, the others as their pair's plan aligns
  them);
* no clip is rejected whose core overlaps no accepted core;
* the run's peak Python memory (numpy's arrays included, tracemalloc) stays
  under MEMORY_BUDGET.

It prints the counts: timelines, pairs by method, rejections, errors by kind,
and every failure with its seed, so that any one can be replayed
(--only SEED). tests/core/test_fuzz.py runs the first 50 seeds of the same
generator in the test suite.

    .venv/bin/python tests/bench/fuzz.py --commands [--cases N] [--seed 0]

Hostile input instead, as a careless or hostile user gives it (the trust
issue), each case a command run as a user runs it (``python -m core ...`` in
its own process, HANG_S to finish):

* every kind of malformed file of MALFORMED (truncations, extremes, NaN and
  inf, lies in the frame count, missing channels, duplicate names, zero
  offsets, rescaled and flipped rigs, deep and wide hierarchies, binary
  garbage) and DEVICES (/dev/zero, a FIFO nobody writes), through each of
  COMMANDS (analyze, synthesize with it first and second, blend, hops
  precompute and render, assemble, reach);
* every hand-made hop table of TABLES through ``hops show`` and ``hops render``;
* N (100 by default) hostile timelines in this process: repeated files, the
  next core on the frame after the previous one's end, clips at 60 and 120
  fps, a clip on another rig;
* without --cases, Dask faults: ``hops precompute --scheduler`` on a scheduler
  and workers this script starts (the table must be the serial one), with
  the worker killed mid-run, every worker killed mid-run, something else
  answering at the address, a silent listener, and a tls:// address.

It prints a table per command: tried, clean refusals (exit 2, one line, no
traceback), accepted (exit 0, every output finite), then the columns that
must be 0: tracebacks, hangs, exit 0 with NaN written, cores changed and
inputs changed (by checksum); and every case in those columns. Exit 1 when
any is not 0. tests/core/test_fuzz.py runs a seeded sample of it.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import hops  # noqa: E402
from core.bvh import read_bvh  # noqa: E402
from core.motion import Motion, Skeleton  # noqa: E402
from core.rig import body_height, find_rig  # noqa: E402
from core.synthesize import Clip, synthesize  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
CORE_TOLERANCE = 1e-6  # body heights
MEMORY_BUDGET = 600e6  # bytes of peak traced allocation for one timeline


def clip_names(mocap: Path = MOCAP) -> list[str]:
    """Every clip of the capture folder, as ``"bandai1/walk_normal_001"``, sorted."""
    return sorted(str(p.relative_to(mocap).with_suffix("")) for p in mocap.glob("*/*.bvh"))


class Clips:
    """Real clips read on first use and kept (the generator asks for the same ones often)."""

    def __init__(self, mocap: Path = MOCAP):
        self.mocap = mocap
        self.names = clip_names(mocap)
        self._cache: dict[str, Motion] = {}
        self._resampled: dict = {}

    def __call__(self, name: str) -> Motion:
        if name not in self._cache:
            self._cache[name] = read_bvh(self.mocap / f"{name}.bvh")
        return self._cache[name]

    def resampled(self, motion: Motion, fps: float) -> Motion:
        """``motion`` at ``fps``, kept."""
        key = (id(motion), fps)
        if key not in self._resampled:
            self._resampled[key] = motion.resampled(fps)
        return self._resampled[key]


def random_timeline(seed: int, clips: Clips) -> tuple[list[Clip], float]:
    """Seeded: 2 to 8 clips at random starts with random cores (or none), and a W."""
    rng = np.random.default_rng(seed)
    timeline, start = [], int(rng.integers(-50, 50))
    for i in range(int(rng.integers(2, 9))):
        name = clips.names[int(rng.integers(len(clips.names)))]
        motion = clips(name)
        n = motion.n_frames
        core = None
        if rng.random() < 0.8:
            lo = int(rng.integers(0, n))
            hi = int(rng.integers(lo, min(n, lo + int(rng.integers(1, 300))))) if lo < n - 1 else lo
            core = (lo, hi)
        timeline.append(Clip(motion, start, core, f"c{i} {Path(name).name}"))
        # the next one starts after this one, overlapping it, or (rarely) before it
        start += int(rng.integers(-n // 4, n + 120)) if rng.random() < 0.9 else -int(rng.integers(0, 200))
    return timeline, float(rng.choice([0.0, 1.0, rng.random()]))


@dataclass
class Outcome:
    seed: int
    clips: int
    error: str = ""  # the exception synthesize raised, if any
    unexpected: bool = False
    methods: list[str] = field(default_factory=list)
    rejected: int = 0
    failures: list[str] = field(default_factory=list)
    peak_bytes: float = 0.0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.failures


def _core_interval(clip: Clip) -> tuple[int, int]:
    lo, hi = clip.core_range
    return clip.start + lo, clip.start + hi


def at_rate(clip: Clip, fps: float, clips: Clips) -> Clip:
    """``clip`` as the engine takes a clip at another rate than the first clip's: resampled to
    ``fps``, its start and core kept in seconds (core.synthesize)."""
    m = clip.motion
    if abs(m.fps - fps) <= 1e-8 + 1e-4 * fps:
        return clip
    scale = fps / m.fps
    r = clips.resampled(m, fps)
    lo, hi = clip.core_range
    core = (min(int(round(lo * scale)), r.n_frames - 1), min(int(round(hi * scale)), r.n_frames - 1))
    return Clip(r, clip.start, core if clip.core is not None else None, clip.name)


def check(seed: int, clips: Clips, make=None) -> Outcome:
    """Synthesize the seed's timeline (``make(seed, clips)``, :func:`random_timeline` by default)
    and check what the module docstring lists."""
    timeline, w = (make or random_timeline)(seed, clips)
    out = Outcome(seed, len(timeline))
    tracemalloc.start()
    t = time.perf_counter()
    try:
        result = synthesize(timeline, responsiveness=w)
    except Exception as error:  # noqa: BLE001 (valid timelines: the fuzz reports any exception)
        out.unexpected, out.error = True, f"{type(error).__name__}: {error}"
        return out
    finally:
        out.seconds = time.perf_counter() - t
        out.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    plan = result.plan
    timeline = [at_rate(c, timeline[0].motion.fps, clips) for c in timeline]  # as the engine takes them
    out.methods = [str(p.method) for p in plan.pairs]
    out.rejected = len(plan.rejected)
    if out.peak_bytes > MEMORY_BUDGET:
        out.failures.append(f"peak memory {out.peak_bytes / 1e6:.0f} MB over {MEMORY_BUDGET / 1e6:.0f} MB")
    motion = result.motion
    if not (np.isfinite(motion.rotations).all() and np.isfinite(motion.positions).all()):
        out.failures.append("NaN or infinity in the output")
        return out
    by_name = {c.name: c for c in timeline}
    rejected = {r.clip for r in plan.rejected}
    # an additional motion (2008, 8) is composed over the output: its core is laid over
    # another's, so neither is exact over the composition's frames
    composed = {c.clip for c in plan.compositions}
    layered = np.zeros(0, dtype=np.int64)
    if plan.compositions:
        layered = np.concatenate([np.arange(c.blend_in[0], c.blend_out[1] + 1) for c in plan.compositions])
    accepted = [c for c in timeline if c.name not in rejected | composed]
    first = min(accepted, key=lambda c: (_core_interval(c)[0], c.start))
    rig = find_rig(first.motion)
    height = body_height(first.motion, rig)
    placed = {first.name: first.motion}
    for pair in plan.pairs:
        placed[pair.next] = pair.alignment.apply(by_name[pair.next].motion, rig.pelvis)
    g = motion.global_positions()
    for clip in accepted:
        lo, hi = clip.core_range
        frames = np.arange(clip.start + lo, clip.start + hi + 1) - result.start
        if frames[0] < 0 or frames[-1] >= motion.n_frames:
            out.failures.append(f"core of {clip.name!r} outside the output")
            continue
        own = placed[clip.name][lo : hi + 1].global_positions()
        alone = ~np.isin(frames + result.start, layered)
        if not alone.any():
            continue
        error = float(np.abs(g[frames[alone]] - own[alone]).max()) / height
        if error > CORE_TOLERANCE:
            out.failures.append(f"core of {clip.name!r} off by {error:.1e} body heights")
    cores = [_core_interval(c) for c in accepted]
    for name in rejected:
        lo, hi = _core_interval(by_name[name])
        if not any(lo <= b and a <= hi for a, b in cores):
            out.failures.append(f"{name!r} rejected although its core {lo}..{hi} overlaps no accepted core")
    return out


def run(seeds, clips: Clips, progress: bool = True) -> tuple[list[Outcome], float]:
    """Every seed's outcome, and the seconds they took."""
    started = time.perf_counter()
    outcomes = []
    for i, seed in enumerate(seeds):
        outcomes.append(check(seed, clips))
        if progress and (i + 1) % 100 == 0:
            print(f"  {i + 1} timelines, {time.perf_counter() - started:.0f} s", flush=True)
    return outcomes, time.perf_counter() - started


def print_counts(outcomes: list[Outcome], clips: Clips, seconds: float) -> None:
    """The counts the module docstring lists, and every failure with its seed."""
    methods = collections.Counter(m for o in outcomes for m in o.methods)
    errors = collections.Counter(o.error.split(":")[0] + (": " + o.error.split(":", 1)[1].split("'")[0].strip()
                                                          if ":" in o.error else "") for o in outcomes if o.error)
    print(f"{len(outcomes)} fuzzed timelines of 2 to 8 real clips ({len(clips.names)} clips to draw from), "
          f"{sum(o.clips for o in outcomes)} clips, {seconds:.0f} s")
    print(f"  synthesized: {sum(not o.error for o in outcomes)}; exceptions: {sum(o.unexpected for o in outcomes)}")
    print(f"  pairs: {sum(methods.values())} ({', '.join(f'{m} {n}' for m, n in methods.most_common())})")
    print(f"  rejected clips (core overlapping an accepted core): {sum(o.rejected for o in outcomes)}")
    if errors:
        print("  errors, by kind:")
        for kind, n in errors.most_common():
            print(f"    {n:5d}  {kind}")
    peaks = np.array([o.peak_bytes for o in outcomes]) / 1e6
    print(f"  peak traced memory: median {np.median(peaks):.0f} MB, max {peaks.max():.0f} MB "
          f"(budget {MEMORY_BUDGET / 1e6:.0f} MB); time: median {np.median([o.seconds for o in outcomes]):.2f} s")
    failed = [o for o in outcomes if not o.ok]
    print(f"  failures: {len(failed)}")
    for o in failed:
        print(f"    seed {o.seed}: {o.error if o.unexpected else '; '.join(o.failures)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timelines", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--only", type=int, help="replay one seed")
    parser.add_argument("--commands", action="store_true",
                        help="hostile input through every command instead of timelines (see below)")
    parser.add_argument("--cases", type=int, help="with --commands: a seeded sample of this many cases")
    args = parser.parse_args()
    if not MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {MOCAP}")
    if args.commands:
        import tempfile

        chosen = cases(args.seed, args.cases)
        print(f"{len(chosen)} cases: {len(MALFORMED) + len(DEVICES)} kinds of hostile input through "
              f"{len(COMMANDS)} commands, {len(TABLES)} hand-made hop tables through show and render")
        with tempfile.TemporaryDirectory() as work:
            results = run_cases(chosen, Path(work))
        clips = Clips()
        n = args.cases if args.cases is not None else 100
        for seed in range(args.seed, args.seed + n):
            results[Case("hostile timeline", "synthesize timelines", seed)] = hostile_outcome(seed, clips)
        if args.cases is None:
            with tempfile.TemporaryDirectory() as work:
                for fault in DASK_FAULTS:
                    results[Case(fault, "hops precompute --scheduler", 0)] = run_dask_fault(fault, Path(work))
        print()
        print_table(results)
        sys.exit(1 if any(o in MUST_BE_ZERO for o, _ in results.values()) else 0)
    clips = Clips()
    seeds = [args.only] if args.only is not None else range(args.seed, args.seed + args.timelines)
    outcomes, seconds = run(seeds, clips)
    print()
    print_counts(outcomes, clips, seconds)
    sys.exit(1 if any(not o.ok for o in outcomes) else 0)



# ======================================================================================
# Hostile input through every command (the trust issue): malformed files, hand-made hop
# tables and devices, each given to every command that reads it, run as a user runs it
# (``python -m core ...`` in its own process, with a time limit)

HANG_S = 30.0  # a command still running after this long is a hang (the slowest case takes 3 s)
GOOD = ("bandai1/bow_normal_001", "bandai1/bye_normal_001")  # short real clips (138 and 111 frames)
REACH_EXAMPLES = ("bandai2-raise/raise-up-right-hand_active_001", "bandai2-raise/raise-up-right-hand_active_002")
OUTCOMES = ("clean refusal", "accepted", "traceback", "hang", "exit 0 with NaN", "cores changed",
            "inputs changed")
MUST_BE_ZERO = OUTCOMES[2:]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _offset_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.strip().upper().startswith("OFFSET")]


def _motion_at(lines: list[str]) -> int:
    return next(i for i, line in enumerate(lines) if line.strip().upper() == "MOTION")


def _frame_values(lines: list[str], rng, fn) -> list[str]:
    """``lines`` with one random frame's first value replaced by ``fn(value)``."""
    at = _motion_at(lines) + 3 + int(rng.integers(0, 20))
    values = lines[at].split()
    k = int(rng.integers(0, min(3, len(values))))  # a root position channel
    values[k] = fn(values[k])
    return lines[:at] + [" ".join(values)] + lines[at + 1 :]


def _nested(depth: int) -> str:
    """A chain of ``depth`` joints (deep hierarchies: recursion, or quadratic work)."""
    head = ["HIERARCHY", "ROOT r", "{", "  OFFSET 0 0 0", "  CHANNELS 6 Xposition Yposition Zposition Zrotation "
            "Xrotation Yrotation"]
    for j in range(depth):
        head += [f"JOINT j{j}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    head += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * (depth + 1)
    frame = " ".join(["0"] * (6 + 3 * depth))
    return "\n".join(head + ["MOTION", "Frames: 2", "Frame Time: 0.0333333", frame, frame])


def _wide(width: int) -> str:
    head = ["HIERARCHY", "ROOT r", "{", "  OFFSET 0 0 0", "  CHANNELS 6 Xposition Yposition Zposition Zrotation "
            "Xrotation Yrotation"]
    for j in range(width):
        head += [f"JOINT j{j}", "{", f"OFFSET {j % 7} 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation",
                 "End Site", "{", "OFFSET 0 1 0", "}", "}"]
    frame = " ".join(["0"] * (6 + 3 * width))
    return "\n".join(head + ["}", "MOTION", "Frames: 2", "Frame Time: 0.0333333", frame, frame])


def _scaled_offsets(lines: list[str], factor: float) -> list[str]:
    out = list(lines)
    for i in _offset_lines(lines):
        head, values = out[i].split("OFFSET")[0], out[i].split()[1:]
        out[i] = head + "OFFSET " + " ".join(f"{float(v) * factor:g}" for v in values)
    return out


def _legs_flipped(lines: list[str]) -> list[str]:
    """The legs' rest offsets pointing up (y negated below each leg's first joint)."""
    out, in_leg, depth = list(lines), False, 0
    for i, line in enumerate(lines):
        word = line.strip().split()
        if word[:1] == ["JOINT"] and ("UpperLeg" in line or "Thigh" in line or "UpLeg" in line):
            in_leg, depth = True, 0
        if in_leg:
            depth += line.count("{") - line.count("}")
            if word[:1] == ["OFFSET"]:
                x, y, z = (float(v) for v in word[1:4])
                out[i] = line.split("OFFSET")[0] + f"OFFSET {x:g} {-y:g} {z:g}" if y < 0 else line
            if depth <= 0 and "}" in line:
                in_leg = False
    return out


# kind -> (text of a good clip, rng) -> the malformed file's bytes
def _text_kind(fn):
    return lambda text, rng: "\n".join(fn(_lines(text), rng)).encode()


MALFORMED = {
    "empty file": lambda text, rng: b"",
    "binary garbage": lambda text, rng: rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(),
    "truncated anywhere": lambda text, rng: text.encode()[: int(rng.integers(1, len(text)))],
    "truncated in the hierarchy": lambda text, rng: text.encode()[: text.index("MOTION") // 2],
    "no MOTION block": _text_kind(lambda lines, rng: lines[: _motion_at(lines)]),
    "more frames declared than given": _text_kind(
        lambda lines, rng: [f"Frames: {len(lines) * 3}" if line.startswith("Frames") else line for line in lines]),
    "fewer frames declared than given": _text_kind(
        lambda lines, rng: [f"Frames: 3" if line.startswith("Frames") else line for line in lines]),
    "a negative frame count": _text_kind(
        lambda lines, rng: ["Frames: -5" if line.startswith("Frames") else line for line in lines]),
    "frame time 0": _text_kind(
        lambda lines, rng: ["Frame Time: 0" if line.startswith("Frame Time") else line for line in lines]),
    "frame time 1e-9": _text_kind(
        lambda lines, rng: ["Frame Time: 1e-9" if line.startswith("Frame Time") else line for line in lines]),
    "a NaN value": _text_kind(lambda lines, rng: _frame_values(lines, rng, lambda v: "nan")),
    "an inf value": _text_kind(lambda lines, rng: _frame_values(lines, rng, lambda v: "inf")),
    "a position of 1e308": _text_kind(lambda lines, rng: _frame_values(lines, rng, lambda v: "1e308")),
    "a root ramp to 1e300": _text_kind(lambda lines, rng: [
        line if i < _motion_at(lines) + 3 else " ".join(
            [f"{10.0 ** min(300, 10 * (i - _motion_at(lines) - 3)):g}"] + line.split()[1:]) if line.strip() else line
        for i, line in enumerate(lines)]),
    "OFFSET 1e308": _text_kind(lambda lines, rng: [
        (line.split("OFFSET")[0] + "OFFSET 1e308 0 0") if i == _offset_lines(lines)[3] else line
        for i, line in enumerate(lines)]),
    "every OFFSET zero": _text_kind(lambda lines, rng: [
        (line.split("OFFSET")[0] + "OFFSET 0 0 0") if line.strip().startswith("OFFSET") else line for line in lines]),
    "bones scaled by 1e-12": _text_kind(lambda lines, rng: _scaled_offsets(lines, 1e-12)),
    "legs flipped upward": _text_kind(lambda lines, rng: _legs_flipped(lines)),
    "a value missing on a frame": _text_kind(lambda lines, rng: [
        " ".join(line.split()[:-1]) if i == _motion_at(lines) + 5 else line for i, line in enumerate(lines)]),
    "channels missing on a joint": _text_kind(lambda lines, rng: [
        line.replace("CHANNELS 6", "CHANNELS 3", 1) if i == next(
            k for k, x in enumerate(lines) if "CHANNELS 6" in x and k > 5) else line for i, line in enumerate(lines)]),
    "a joint named twice": _text_kind(lambda lines, rng: [
        line.replace("JOINT Spine", "JOINT Hips") for line in lines]),
    "unbalanced braces": _text_kind(lambda lines, rng: [line for i, line in enumerate(lines) if i != 2]),
    "a word in the numbers": _text_kind(lambda lines, rng: _frame_values(lines, rng, lambda v: "twelve")),
    "CRLF line ends": lambda text, rng: text.replace("\n", "\r\n").encode(),
    "a deep hierarchy (2,000 joints)": lambda text, rng: _nested(2000).encode(),
    "a wide hierarchy (2,000 children)": lambda text, rng: _wide(2000).encode(),
    "latin-1 joint names": lambda text, rng: text.replace("Spine", "Espin\u00e9").encode("latin-1"),
}
DEVICES = ("/dev/zero", "a FIFO nobody writes")


@dataclass(frozen=True)
class Case:
    """One hostile input given to one command."""

    kind: str
    command: str
    seed: int


COMMANDS = ("analyze", "synthesize first", "synthesize second", "blend", "hops precompute", "hops render",
            "assemble", "reach")


def _write_input(path: Path, kind: str, rng, good_text: str) -> None:
    if kind == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "a FIFO nobody writes":
        os.mkfifo(path)
    else:
        path.write_bytes(MALFORMED[kind](good_text, rng))


def _arguments(case: Case, bad: Path, goods: list[Path], folder: Path) -> tuple[list[str], list[Path]]:
    """The command line of ``case`` and the files it may write."""
    out = folder / "out.bvh"
    if case.command == "analyze":
        return ["analyze", str(bad)], []
    if case.command == "synthesize first":
        return ["synthesize", f"{bad}@0", f"{goods[0]}@150", "-o", str(out), "--plan", str(folder / "plan.json")], [
            out, folder / "plan.json"]
    if case.command == "synthesize second":
        return ["synthesize", f"{goods[0]}@0", f"{bad}@130", "-o", str(out)], [out]
    if case.command == "blend":
        return ["blend", str(goods[0]), str(bad), "-o", str(out)], [out]
    library = folder / "library"
    library.mkdir(exist_ok=True)
    if case.command == "hops precompute":
        for g in goods:
            (library / g.name).symlink_to(g)
        (library / bad.name).symlink_to(bad)
        return ["hops", "precompute", str(library), "--src", str(library / bad.name), "--dst",
                str(library / goods[0].name), "--offset", "0", "--workers", "0", "--weight", "0.01", "-o",
                str(folder / "table.npz")], [folder / "table.npz"]
    if case.command == "hops render":
        # a table of the good clips, then the source replaced by the hostile file
        for g in goods:
            (library / g.name).symlink_to(g)
        table = hops.precompute({g.name: read_bvh(g) for g in goods}, goods[1].name, goods[0].name, 0, weight=0.01)
        table.save(library / "table.npz")
        (library / goods[1].name).unlink()
        (library / goods[1].name).symlink_to(bad)
        return ["hops", "render", str(library / "table.npz"), "--trigger", str(int(table.triggers[0])), "-o",
                str(out)], [out]
    if case.command == "assemble":
        (library / bad.name).symlink_to(bad)
        return ["assemble", str(goods[0]), "--part", f"upper={library}", "-o", str(out)], [out]
    if case.command == "reach":
        for name in REACH_EXAMPLES:
            (library / Path(name).name).with_suffix(".bvh").symlink_to(MOCAP / f"{name}.bvh")
        (library / bad.name).symlink_to(bad)
        return ["reach", str(library), "--target=-10,150,20", "-o", str(out)], [out]
    raise ValueError(case.command)


def _digest(path: Path) -> str | None:
    """A regular file's checksum (devices and FIFOs are not read)."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _written_finite(path: Path) -> bool:
    """Whether an output file holds no NaN or infinity (a file the reader refuses holds some)."""
    import json

    if path.suffix == ".bvh":
        try:
            read_bvh(path)
        except ValueError:
            return False
        return True
    if path.suffix == ".json":
        try:
            json.loads(path.read_text(), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError:
            return False
        return True
    if path.suffix == ".npz":
        with np.load(path) as data:
            return all(np.isfinite(data[k]).all() for k in data.files if data[k].dtype.kind == "f")
    return True


def _case_folder(workdir: Path, name: str, good_clips: list[Path]) -> tuple[Path, list[Path]]:
    """A fresh folder for one case and copies of the good clips in it (a command must not change
    them)."""
    import shutil

    folder = workdir / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    goods = [folder / g.name for g in good_clips]
    for copy, g in zip(goods, good_clips):
        copy.write_bytes(g.read_bytes())
    return folder, goods


def _outcome(args: list[str], inputs: list[Path], outputs: list[Path], env: dict | None = None) -> tuple[str, str]:
    """(outcome, what the command said last) of ``python -m core ARGS``, its ``inputs``
    checksummed before and after, its ``outputs`` read back when it exits 0. A refusal that
    prints a line of /etc/passwd ("root:") counts as a traceback: it read what it must not."""
    import subprocess

    before = {p: _digest(p) for p in inputs}
    try:
        done = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=HANG_S, env=env)
    except subprocess.TimeoutExpired:
        return "hang", f"still running after {HANG_S:g} s"
    said = (done.stderr.strip().splitlines() or [""])[-1]
    if any(_digest(p) != d for p, d in before.items()):
        return "inputs changed", said
    if "Traceback" in done.stderr or done.returncode not in (0, 2) or "root:" in done.stderr:
        return "traceback", said
    if done.returncode == 2:
        return "clean refusal", said
    if not all(_written_finite(p) for p in outputs if p.exists()):
        return "exit 0 with NaN", said
    return "accepted", said


def run_case(case: Case, workdir: Path, good_clips: list[Path]) -> tuple[str, str]:
    """(outcome, what the command said last) of one case, in a folder of its own."""
    folder, goods = _case_folder(workdir, f"{case.seed}", good_clips)
    bad = folder / "hostile.bvh"
    _write_input(bad, case.kind, np.random.default_rng(case.seed), goods[0].read_text())
    args, outputs = _arguments(case, bad, goods, folder)
    inputs = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and p.suffix in (".bvh", ".npz")]
    return _outcome(args, inputs, outputs, env={**os.environ, "PYTHONHASHSEED": str(case.seed % 1000)})


def cases(seed: int, count: int | None = None) -> list[Case]:
    """Every kind of file (devices too) through every command and every hand-made table through
    show and render, each with its own seed; ``count``: a seeded sample of them."""
    pairs = [(k, c) for k in (*MALFORMED, *DEVICES) for c in COMMANDS] + [
        (k, c) for k in TABLES for c in TABLE_COMMANDS]
    every = [Case(kind, command, seed + i) for i, (kind, command) in enumerate(pairs)]
    if count is None or count >= len(every):
        return every
    rng = np.random.default_rng(seed)
    return [every[i] for i in sorted(rng.choice(len(every), count, replace=False))]


def run_cases(chosen: list[Case], workdir: Path) -> dict[Case, tuple[str, str]]:
    good = [MOCAP / f"{name}.bvh" for name in GOOD]
    results = {}
    for i, case in enumerate(chosen):
        run = run_table_case if case.command in TABLE_COMMANDS else run_case
        results[case] = run(case, workdir, good)
        if (i + 1) % 25 == 0:
            print(f"  {i + 1} of {len(chosen)} cases", flush=True)
    return results


def print_table(results: dict) -> None:
    """The counts per command, and every case in a column that must be 0."""
    order = (*COMMANDS, *TABLE_COMMANDS, "synthesize timelines", "hops precompute --scheduler")
    commands = sorted({c.command for c in results}, key=order.index)
    print(f"{'command':<20} {'tried':>6} " + " ".join(f"{o:>15}" for o in OUTCOMES))
    for command in (*commands, "all"):
        got = [o for c, (o, _) in results.items() if command in ("all", c.command)]
        print(f"{command:<20} {len(got):>6} " + " ".join(f"{got.count(o):>15}" for o in OUTCOMES))
    bad = [(c, o, said) for c, (o, said) in results.items() if o in MUST_BE_ZERO]
    print(f"cases in a column that must be 0: {len(bad)}")
    for c, o, said in bad:
        print(f"  {o}: {c.kind} through {c.command} (seed {c.seed}): {said[:160]}")


# hand-made hop tables: kind -> (the arrays of a good table, rng) -> the file's bytes
def _table_bytes(arrays: dict) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _changed(**changes):
    return lambda arrays, rng: _table_bytes({**arrays, **{k: v(arrays) if callable(v) else v
                                                          for k, v in changes.items()}})


TABLES = {
    "an empty .npz": lambda arrays, rng: _table_bytes({}),
    "an empty file": lambda arrays, rng: b"",
    "garbage": lambda arrays, rng: rng.integers(0, 256, 2048, dtype=np.uint8).tobytes(),
    "a field missing": lambda arrays, rng: _table_bytes({k: v for k, v in arrays.items() if k != "choices"}),
    "a source out of range": _changed(src=np.int64(99)),
    "a destination below 0": _changed(dst=np.int64(-3)),
    "a hop out of range": _changed(choices=lambda a: np.where(np.arange(4) == 0, 77, a["choices"])),
    "a negative stay": _changed(choices=lambda a: np.where(np.arange(4) == 2, -9, a["choices"])),
    "fps 0": _changed(fps=np.float64(0.0)),
    "fps NaN": _changed(fps=np.float64(np.nan)),
    "blends of no frame": _changed(blend_frames=np.int64(0)),
    "a clip named ../../../../etc/passwd": _changed(hops=lambda a: np.array(
        ["../../../../etc/passwd", *a["hops"][1:]], dtype=str)),
    "a clip named /etc/passwd": _changed(hops=lambda a: np.array(["/etc/passwd", *a["hops"][1:]], dtype=str)),
    "triggers not consecutive": _changed(triggers=lambda a: a["triggers"] * 2),
    "an offset of 1e15": _changed(offset=np.int64(10**15)),
    "names as numbers": _changed(hops=lambda a: np.arange(len(a["hops"]))),
}
TABLE_COMMANDS = ("hops show (table)", "hops render (table)")


def run_table_case(case: Case, workdir: Path, good_clips: list[Path]) -> tuple[str, str]:
    """(outcome, what the command said last) of a hand-made table given to show or render."""
    folder, goods = _case_folder(workdir, f"t{case.seed}", good_clips)
    table = hops.precompute({g.name: read_bvh(g) for g in goods}, goods[1].name, goods[0].name, 0, weight=0.01)
    path = folder / "table.npz"
    path.write_bytes(TABLES[case.kind](table.to_arrays(), np.random.default_rng(case.seed)))
    out = folder / "out.bvh"
    args = ["hops", "show", str(path)] if case.command == "hops show (table)" else [
        "hops", "render", str(path), "--trigger", str(int(table.triggers[0])), "-o", str(out)]
    return _outcome(args, goods + [path], [out])


# hostile timelines, in this process: repeated files, cores with no frame between them,
# clips at other rates and on other rigs
def hostile_timeline(seed: int, clips: Clips) -> tuple[list[Clip], float]:
    """Seeded: :func:`random_timeline`'s clips, some placed with the next core on the frame after
    the previous core's last, some resampled to 60 or 120 fps, one in five timelines with a clip
    on another rig (its joints renamed: a clean refusal is the right answer)."""
    timeline, w = random_timeline(seed, clips)
    rng = np.random.default_rng(seed + 10**6)
    out = [timeline[0]]
    for clip in timeline[1:]:
        if rng.random() < 0.4:  # the next core on the frame after the previous core's end
            prev = out[-1]
            clip = Clip(clip.motion, prev.start + prev.core_range[1] + 1 - clip.core_range[0], clip.core, clip.name)
        if rng.random() < 0.2:
            fps = float(rng.choice([60.0, 120.0]))
            clip = Clip(clips.resampled(clip.motion, fps), clip.start, None, clip.name)
        out.append(clip)
    if rng.random() < 0.2:
        k = int(rng.integers(len(out)))
        m = out[k].motion
        renamed = Skeleton(tuple(f"{n}_other" for n in m.skeleton.names), m.skeleton.parents, m.skeleton.offsets,
                           m.skeleton.end_sites, m.skeleton.channels, m.skeleton.up, m.skeleton.unit)
        out[k] = Clip(Motion(renamed, m.rotations, m.positions, m.fps), out[k].start, out[k].core, out[k].name)
    return out, w


def hostile_outcome(seed: int, clips: Clips) -> tuple[str, str]:
    """(outcome, what went wrong) of one hostile timeline, in the command table's terms."""
    outcome = check(seed, clips, make=hostile_timeline)
    if outcome.unexpected:
        clean = outcome.error.startswith("ValueError") and "another skeleton" in outcome.error
        return ("clean refusal" if clean else "traceback"), outcome.error
    if any("NaN" in f for f in outcome.failures):
        return "exit 0 with NaN", "; ".join(outcome.failures)
    if outcome.failures:
        return "cores changed", "; ".join(outcome.failures)
    return "accepted", ""


# Dask faults: a scheduler and workers started and killed by this script
DASK_FAULTS = ("workers", "worker killed mid-run", "every worker killed mid-run", "something else answers",
               "a silent listener", "a tls:// address")


def _serve(reply: bytes | None):
    """A TCP listener on a free local port that accepts and says ``reply`` (None: nothing);
    its address and a function that stops it."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                if reply is not None:
                    conn.sendall(reply)
                try:
                    conn.recv(1)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", server.close


def run_dask_fault(fault: str, workdir: Path) -> tuple[str, str]:
    """(outcome, what the command said last) of ``hops precompute --scheduler`` under ``fault``."""
    import shutil
    import signal
    import subprocess

    folder = workdir / f"dask-{DASK_FAULTS.index(fault)}"
    if folder.exists():
        shutil.rmtree(folder)
    library = folder / "library"
    library.mkdir(parents=True)
    names = ("bandai1/walk_normal_001", "bandai1/bow_normal_001", "bandai1/bye_normal_001", "bandai1/kick_normal_001")
    for name in names:
        (library / Path(name).name).with_suffix(".bvh").write_bytes((MOCAP / f"{name}.bvh").read_bytes())
    table = folder / "table.npz"
    precompute = ["hops", "precompute", str(library), "--src", str(library / "walk_normal_001.bvh"), "--dst",
                  str(library / "kick_normal_001.bvh"), "--offset", "0", "--weight", "0.01", "-o", str(table)]
    started, stop = [], None
    env = {**os.environ, "PYTHONPATH": ""}  # (workers that do not have the project: it travels by value)
    try:
        if fault in ("something else answers", "a silent listener"):
            address, stop = _serve(b"HTTP/1.1 400 Bad Request\r\n\r\n" if fault == "something else answers" else None)
        elif fault == "a tls:// address":
            address = "tls://127.0.0.1:8786"
        else:
            scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0",
                                          "--no-dashboard", "--scheduler-file", str(folder / "scheduler.json")],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
            started.append(scheduler)
            for _ in range(200):
                if (folder / "scheduler.json").exists():
                    break
                time.sleep(0.05)
            import json

            address = json.loads((folder / "scheduler.json").read_text())["address"]
            for _ in range(1 if fault == "worker killed mid-run" else 2):
                started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                                 "--nthreads", "1", "--no-dashboard"],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                                start_new_session=True))
        run = subprocess.Popen([sys.executable, "-m", "core", *precompute, "--scheduler", address], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if "killed" in fault:
            time.sleep(4.0)  # connected, the tasks under way
            for worker in started[1:]:
                os.killpg(worker.pid, signal.SIGKILL)  # the worker and its nanny, as a machine lost
        try:
            _, stderr = run.communicate(timeout=HANG_S * 4)
        except subprocess.TimeoutExpired:
            run.kill()
            return "hang", f"still running after {HANG_S * 4:g} s"
    finally:
        for p in started:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if stop is not None:
            stop()
    said = (stderr.strip().splitlines() or [""])[-1]
    if "Traceback" in stderr or run.returncode not in (0, 2):
        return "traceback", said
    if run.returncode == 2:
        return "clean refusal", said
    if not _written_finite(table):
        return "exit 0 with NaN", said
    serial = folder / "serial.npz"
    subprocess.run([sys.executable, "-m", "core", *precompute[:-1], str(serial), "--workers", "0"], cwd=ROOT,
                   capture_output=True, timeout=HANG_S * 4)
    with np.load(table) as a, np.load(serial) as b:
        same = all(np.array_equal(a[k], b[k]) for k in b.files)
    return ("accepted", said) if same else ("inputs changed", "a table other than the serial one")


if __name__ == "__main__":
    main()
