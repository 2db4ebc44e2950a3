"""Every command on a 100,000-frame clip: done within the memory budget, or refused at once.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/size_guard.py [--before REV]

Issue 23, item 5 ("No size guard"): a 100,000-frame clip made `reach` ask for
74.5 GiB and `hops precompute` for 149 GiB, `--current 99999999` 65.6 GiB,
a start of 999,999,999 grew to 24 GB before the system killed it, and
/dev/zero or a FIFO fed 2 GB ended in a MemoryError after 4 to 6 GB. Now
each command checks what it will need against one budget (2 GiB, raised by
--max-memory, core.budget) before it allocates, from the files' headers where
it can (reading a clip of 100,000 frames takes seconds).

The long clips are real captures tiled: the Bandai Namco walk (273 frames) and
a raise of the right hand (59 frames), their frame lines repeated to 100,000
frames (103 MB of BVH each). Each figure is one child process running the
command a user runs, its peak resident memory read from its own resource usage
(``os.wait4``), capped at MEMORY_CAP of address space and TIMEOUT_S seconds so
that what the code before the guard asks for ends as a MemoryError or a
timeout instead of taking the machine's memory. ``--before REV`` measures the
``core/`` of that commit too (by default only this tree).

Target: each command either finishes within its budget (2 GiB, or what
--max-memory gives it; peak resident memory of the whole process, the
interpreter included) or refuses in under a second, naming the size it would
need.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import MOCAP  # noqa: E402  (tests/bench, next to this script)
from reliability import old_engine  # noqa: E402

FRAMES = 100_000
WALK, RUN = MOCAP / "bandai2" / "walk_normal_001.bvh", MOCAP / "bandai2" / "run_normal_001.bvh"
RAISES = sorted((MOCAP / "bandai2-raise").glob("raise-up-right-hand_normal_00*.bvh"))[:2]
BUDGET_MB = 2 * 1024
MEMORY_CAP = 8 << 30  # bytes of address space per child
TIMEOUT_S = 120.0
FIFO_BYTES = 2_000_000_000  # what the FIFO is fed at most


def tiled(source: Path, frames: int, out: Path) -> Path:
    """``source``'s frame lines repeated to ``frames`` frames, written to ``out`` as BVH (text
    copied, not parsed and formatted again: a tenth of a second, not ten)."""
    lines = source.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("frames:"))
    rows = [line for line in lines[at + 2:] if line.strip()]
    body = (rows * -(-frames // len(rows)))[:frames]
    out.write_text("\n".join(lines[:at] + [f"Frames: {frames}", lines[at + 1]] + body) + "\n")
    return out


def folder(path: Path, *files: Path) -> Path:
    """A folder holding ``files`` (hard links: the long clips are 100 MB)."""
    path.mkdir()
    for f in files:
        os.link(f, path / f.name)
    return path


@dataclass(frozen=True)
class Run:
    exit: int
    peak_mb: float
    seconds: float
    said: str  # the last line on stderr (the error), or the last on stdout

    def verdict(self, budget_mb: float) -> str:
        if self.exit == 0:
            return "done within budget" if self.peak_mb <= budget_mb else "DONE OVER BUDGET"
        if self.exit == 2 and ("would need" in self.said or "is a device" in self.said):
            return "refused at once" if self.seconds < 1.0 else f"refused in {self.seconds:.1f} s"
        return "FAILED"


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_child(code: Path, args: list[str], logs: Path, fifo: Path | None = None) -> Run:
    """``python -m core ARGS`` from ``code`` (a folder holding ``core/``), measured on its own;
    with ``fifo``, a thread feeds it up to FIFO_BYTES of frame lines while the child reads."""
    t = time.perf_counter()
    with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
        child = subprocess.Popen([sys.executable, "-m", "core", *args], cwd=code, stdout=out, stderr=err,
                                 preexec_fn=capped)
    if fifo is not None:
        threading.Thread(target=feed, args=(fifo,), daemon=True).start()
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            child.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.perf_counter() - t > TIMEOUT_S:
            child.kill()
            _, _, usage = os.wait4(child.pid, 0)
            child.returncode = -9
            break
        time.sleep(0.005)
    seconds = time.perf_counter() - t
    err = (logs / "stderr").read_text(errors="replace").strip()
    lines = (err or (logs / "stdout").read_text(errors="replace").strip()).splitlines()
    said = lines[-1] if lines else ""
    if child.returncode == -9:
        said = f"timeout > {TIMEOUT_S:g} s"
    elif "MemoryError" in err:
        said = "MemoryError: " + said
    return Run(child.returncode, usage.ru_maxrss / 1024, seconds, said)  # (Linux: kilobytes)


def feed(fifo: Path) -> None:
    """Write a BVH header and endless frame lines into ``fifo``, up to FIFO_BYTES, until the reader closes it."""
    row = ("0 " * 131 + "0\n").encode()
    block = row * 4096
    try:
        with open(fifo, "wb") as f:
            f.write(b"HIERARCHY\n")
            written = 0
            while written < FIFO_BYTES:
                f.write(block)
                written += len(block)
    except (BrokenPipeError, OSError):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REV", help="also measure the core/ of this commit")
    args = parser.parse_args()
    if not MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {MOCAP}")
    with tempfile.TemporaryDirectory(prefix="smart-motion-size-") as tmp:
        tmp = Path(tmp)
        long_walk = tiled(WALK, FRAMES, tmp / "walk100k.bvh")
        long_raise = tiled(RAISES[0], FRAMES, tmp / "raise100k.bvh")
        as_source = folder(tmp / "lib", long_walk, WALK, RUN)
        as_hop = folder(tmp / "hop-lib", long_walk, WALK, RUN)
        reach_long_example = folder(tmp / "reach", *RAISES, long_raise)  # (the first by name, a short one, leads)
        reach_long_reference = folder(tmp / "reach-ref", *RAISES, tiled(RAISES[0], FRAMES, tmp / "a-raise100k.bvh"))
        parts = folder(tmp / "parts", long_raise, *RAISES)
        fifo = tmp / "fifo.bvh"
        os.mkfifo(fifo)
        out = tmp / "out"
        out.mkdir()
        table = out / "hops.npz"
        o = lambda name: str(out / name)  # noqa: E731
        cases = [
            ("analyze", ["analyze", str(long_walk)], None),
            ("synthesize, the clip alone", ["synthesize", str(long_walk), "-o", o("s1.bvh")], None),
            ("synthesize, as soon as possible after a walk", ["synthesize", f"{WALK}@0", str(long_walk),
                                                              "-o", o("s2.bvh")], None),
            ("synthesize --current 99999999", ["synthesize", f"{WALK}@0", str(RUN), "--current", "99999999",
                                               "-o", o("s3.bvh")], None),
            ("synthesize a clip @999999999", ["synthesize", f"{long_walk}@0", f"{RUN}@999999999",
                                              "-o", o("s4.bvh")], None),
            ("blend", ["blend", str(long_walk), str(RUN), "-o", o("b1.bvh")], None),
            ("blend --no-sync", ["blend", str(long_walk), str(RUN), "--no-sync", "-o", o("b2.bvh")], None),
            ("blend --starts 0,999999999", ["blend", str(WALK), str(RUN), "--starts", "0,999999999",
                                            "-o", o("b3.bvh")], None),
            ("hops precompute, the clip the source", ["hops", "precompute", str(as_source), "--src",
                                                      str(as_source / long_walk.name), "--dst",
                                                      str(as_source / WALK.name), "--offset", "0", "--weight", "1",
                                                      "--workers", "0", "-o", o("t1.npz")], None),
            ("hops precompute, the clip a hop", ["hops", "precompute", str(as_hop), "--src", str(as_hop / WALK.name),
                                                 "--dst", str(as_hop / RUN.name), "--offset", "100", "--weight", "1",
                                                 "--workers", "0", "-o", o("t2.npz")], None),
            ("  the same, --max-memory 4", ["hops", "precompute", str(as_hop), "--src", str(as_hop / WALK.name),
                                            "--dst", str(as_hop / RUN.name), "--offset", "100", "--weight", "1",
                                            "--workers", "0", "-o", str(table), "--max-memory", "4"], None),
            ("hops show", ["hops", "show", str(table)], None),
            ("hops render", ["hops", "render", str(table), "--trigger", "120", "--library", str(as_hop),
                             "-o", o("h.bvh")], None),
            ("assemble, the clip the query", ["assemble", str(long_walk), "--part", f"upper={parts}",
                                              "-o", o("a.bvh")], None),
            ("reach, the clip an example", ["reach", str(reach_long_example), "--target", "10,150,20",
                                            "-o", o("r1.bvh")], None),
            ("reach, the clip the reference", ["reach", str(reach_long_reference), "--target", "10,150,20",
                                               "-o", o("r2.bvh")], None),
            ("analyze /dev/zero", ["analyze", "/dev/zero"], None),
            ("analyze a FIFO fed 2 GB", ["analyze", str(fifo)], fifo),
        ]
        codes = [("after", ROOT)]
        if args.before:
            codes.insert(0, (f"before ({args.before})", old_engine(args.before, tmp / "before")))
        print(f"each on a {FRAMES:,}-frame clip (real capture tiled); one child per figure: exit status, peak "
              f"resident memory, wall time; cap {MEMORY_CAP >> 30} GiB, {TIMEOUT_S:g} s; budget {BUDGET_MB:,} MB\n")
        for label, code in codes:
            print(f"== {label}")
            for name, argv, pipe in cases:
                run = run_child(code, argv, tmp, pipe)
                budget = float(argv[argv.index("--max-memory") + 1]) * 1024 if "--max-memory" in argv else BUDGET_MB
                print(f"{name:<46} exit {run.exit:>2} {run.peak_mb:7.0f} MB {run.seconds:7.2f} s  "
                      f"{run.verdict(budget):<20} {run.said[:170]}")
            print()


if __name__ == "__main__":
    main()
