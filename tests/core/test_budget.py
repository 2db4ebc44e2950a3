"""The memory budget (core.budget): what each command will need is checked before it is allocated.

Issue 23, item 5: a 100,000-frame clip made `reach` ask for 74.5 GiB and `hops precompute`
for 149 GiB; `--current 99999999` asked for 65.6 GiB; a start of 999,999,999 grew to 24 GB
before the system killed it; /dev/zero or a FIFO fed 2 GB ended in a MemoryError after 4 to
6 GB. Each is refused now, naming the size it would need and the option that raises the budget.
"""

import os
import resource
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core.__main__ import main

GiB = 1 << 30

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "mocap"
WALK = MOCAP / "bandai2" / "walk_normal_001.bvh"
RUN = MOCAP / "bandai2" / "run_normal_001.bvh"
RAISE = MOCAP / "bandai2-raise" / "raise-up-right-hand_normal_001.bvh"
LONG = 100_000


def tiled_bvh(source: Path, frames: int, out: Path) -> Path:
    """A real clip's frame lines repeated to ``frames`` frames, written as BVH (text copied, not
    parsed: a fraction of a second for 100,000 frames)."""
    lines = source.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("frames:"))
    rows = [line for line in lines[at + 2:] if line.strip()]
    out.write_text("\n".join(lines[:at] + [f"Frames: {frames}", lines[at + 1]]
                             + (rows * -(-frames // len(rows)))[:frames]) + "\n")
    return out


@pytest.fixture(scope="module")
def long_walk(tmp_path_factory):
    """The Bandai Namco walk tiled to 100,000 frames (103 MB of BVH)."""
    require(MOCAP)
    return tiled_bvh(WALK, LONG, tmp_path_factory.mktemp("long") / "walk100k.bvh")


def folder_of(path: Path, *files: Path) -> Path:
    path.mkdir()
    for n, f in enumerate(files):
        os.link(f, path / f"{n}-{f.name}")  # (in the order given, by name; hard links: the long clip is 100 MB)
    return path


def refused_cheaply(argv: list[str], capsys) -> str:
    """Run the command line; assert it ends with exit status 2 having allocated almost nothing
    (tracemalloc sees numpy's arrays too), and return its error line."""
    tracemalloc.start()
    try:
        status = main(argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert status == 2, err
    assert peak < 20 << 20, f"{peak / 2**20:.0f} MiB allocated before refusing"
    assert err.startswith("error:") and "Traceback" not in err
    return err


# --------------------------------------------------------------------------- the cases


def test_reach_on_a_long_reference_is_refused_with_the_size_it_would_need(long_walk, tmp_path, capsys):
    """The registration's distance grid is the reference's frames by each example's (the
    reference against itself among them): 100,000 x 100,000 frames asked for 74.5 GiB."""
    examples = folder_of(tmp_path / "examples", long_walk, RAISE)  # (the long clip leads: the reference)
    err = refused_cheaply(["reach", str(examples), "--target", "10,150,20", "-o", str(tmp_path / "r.bvh")], capsys)
    assert "reach would need" in err and "100,000 frames of the reference x 100,000 frames" in err
    assert "above the 2 GiB budget: pass --max-memory" in err
    assert not (tmp_path / "r.bvh").exists()


def test_hops_precompute_of_a_long_source_is_refused_with_the_size_it_would_need(long_walk, tmp_path, capsys):
    """D(source, source) alone is 100,000 x 100,000 windows, and the source against a short
    clip sheared 149 GiB of diagonals."""
    library = folder_of(tmp_path / "library", long_walk, WALK, RUN)
    err = refused_cheaply(["hops", "precompute", str(library), "--src", str(library / f"0-{long_walk.name}"), "--dst",
                           str(library / f"1-{WALK.name}"), "--offset", "0", "--weight", "1", "--workers", "0",
                           "-o", str(tmp_path / "t.npz")], capsys)
    assert "hops precompute would need" in err and "'0-walk100k.bvh' of 100,000 frames" in err
    assert "--max-memory" in err


def test_a_current_frame_far_ahead_is_refused_before_the_output_is_held_to_it(capsys, tmp_path):
    require(MOCAP)
    err = refused_cheaply(["synthesize", f"{WALK}@0", str(RUN), "--current", "99999999",
                           "-o", str(tmp_path / "o.bvh")], capsys)
    assert "the synthesis would need" in err and "past the current frame 99,999,999" in err
    assert "pass --max-memory" in err


def test_a_start_far_ahead_is_refused_before_the_gap_is_filled(capsys, tmp_path):
    require(MOCAP)
    err = refused_cheaply(["synthesize", f"{WALK}@0", f"{RUN}@999999999", "-o", str(tmp_path / "o.bvh")], capsys)
    assert "the synthesis would need" in err and "1,000,000,067 output frames" in err


def _capped(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_device_is_no_file(tmp_path):
    """/dev/zero never ends: it is refused before a byte is read. (In a child process capped at
    1 GiB: the code before the guard read it until the memory ran out.)"""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    child = subprocess.run([sys.executable, "-m", "core", "analyze", "/dev/zero"], cwd=ROOT, capture_output=True,
                           text=True, timeout=120, preexec_fn=_capped(1 << 30))
    assert child.returncode == 2 and child.stderr.startswith("error: /dev/zero is a device"), child.stderr[-300:]


def test_a_fifo_fed_gigabytes_is_read_no_further_than_the_budget(tmp_path, capsys):
    """A pipe has no size to check: it is read up to what the budget lets a file be (a third of
    it: bytes, text and lines are held at once), then refused."""
    fifo = tmp_path / "clip.bvh"
    os.mkfifo(fifo)
    fed = []

    def feed():
        row = ("0 " * 131 + "0\n").encode() * 1000
        try:
            with open(fifo, "wb") as f:
                while sum(fed) < 2_000_000_000:
                    f.write(row)
                    fed.append(len(row))
        except OSError:  # (the reader gave up: a broken pipe)
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    tracemalloc.start()
    try:
        status = main(["analyze", str(fifo), "--max-memory", "0.1"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    writer.join(timeout=10)
    err = capsys.readouterr().err
    assert status == 2 and "would need more than" in err and "pass a larger --max-memory" in err, err
    limit = int(0.1 * GiB) // 3
    assert f"more than {limit:,} bytes" in err
    assert sum(fed) < 2 * limit and peak < 2 * limit


def test_a_blend_far_apart_is_refused(tmp_path):
    """Two clips a billion frames apart: the code before the guard grew for minutes (5 GB in
    150 s); in a child capped at 1 GiB, so that it fails rather than take the machine."""
    require(MOCAP)
    child = subprocess.run([sys.executable, "-m", "core", "blend", str(WALK), str(RUN), "--starts", "0,999999999",
                            "-o", str(tmp_path / "b.bvh")], cwd=ROOT, capture_output=True, text=True, timeout=120,
                           preexec_fn=_capped(1 << 30))
    assert child.returncode == 2 and "the blend would need" in child.stderr, child.stderr[-300:]


def test_a_table_whose_arrays_declare_gigabytes_is_refused_before_any_is_made(tmp_path, capsys):
    """A hop table is an .npz: numpy makes each array as large as its header says before it
    reads the data, and a header of a few bytes may say 74.5 GiB."""
    import io
    import zipfile

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 10,)})
    table = tmp_path / "table.npz"
    with zipfile.ZipFile(table, "w") as archive:
        archive.writestr("triggers.npy", header.getvalue())
    err = refused_cheaply(["hops", "show", str(table)], capsys)
    assert f"reading {table} would need 74.5 GiB" in err and "--max-memory 75" in err


# --------------------------------------------------------------------------- the budget itself


def test_max_memory_sets_the_budget_of_the_command(capsys, tmp_path):
    """The same synthesis is refused under --max-memory 0.05 and done under the default."""
    from core.budget import MEMORY_BUDGET, current_budget

    require(MOCAP)
    argv = ["synthesize", f"{WALK}@0", f"{RUN}@8000", "-o", str(tmp_path / "o.bvh")]
    assert main(argv + ["--max-memory", "0.05"]) == 2
    err = capsys.readouterr().err
    assert "above the 51.2 MiB budget: pass --max-memory 1 or place the clips closer together" in err
    assert not (tmp_path / "o.bvh").exists()
    assert main(argv) == 0
    assert (tmp_path / "o.bvh").exists()
    assert current_budget() == MEMORY_BUDGET, "the command's budget ended with it"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "two"])
def test_max_memory_takes_a_positive_number_of_gib(value, capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--max-memory", value])
    assert "positive number of GiB" in capsys.readouterr().err


def test_a_budget_raised_for_a_block_ends_with_it():
    from core.budget import MEMORY_BUDGET, OverBudget, check_budget, current_budget, memory_budget

    with memory_budget(8 * GiB):
        assert current_budget() == 8 * GiB
        check_budget("work", 4 * GiB, "sizes", remedy="give less")
    assert current_budget() == MEMORY_BUDGET
    with pytest.raises(OverBudget, match=r"work would need 4 GiB \(sizes\), above the 2 GiB memory budget: give less"):
        check_budget("work", 4 * GiB, "sizes", remedy="give less")


def test_a_file_larger_than_the_budget_reads_is_refused_before_it_is_read(tmp_path, capsys):
    require(MOCAP)
    size = WALK.stat().st_size
    assert main(["analyze", str(WALK), "--max-memory", str(2 * size / GiB)]) == 2
    err = capsys.readouterr().err
    assert f"reading {WALK} would need" in err and f"a file of {size:,} bytes" in err and "--max-memory 1" in err


def test_a_long_clip_whose_values_exceed_the_budget_is_refused_by_its_header(long_walk, capsys):
    """The file fits, the doubles parsed from it would not: refused once the header says how many."""
    from core.budget import OverBudget, memory_budget

    with memory_budget(400 << 20):
        tracemalloc.start()
        try:
            with pytest.raises(OverBudget, match=r"100,000 frames of 22 joints, 132 values each"):
                from core.bvh import read_bvh

                read_bvh(long_walk)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 3 * long_walk.stat().st_size


# --------------------------------------------------------------------------- estimates and blocks


def test_parsing_takes_no_more_than_its_estimate(tmp_path):
    from core.bvh import parse_bvh, parse_bytes

    require(MOCAP)
    text = tiled_bvh(WALK, 10_000, tmp_path / "walk10k.bvh").read_text()
    tracemalloc.start()
    try:
        motion = parse_bvh(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= parse_bytes(len(text), text.count("\n") + 1, 10_000, 132, len(motion.skeleton))


@pytest.mark.parametrize("frames", [(600, 600), (3000, 120), (120, 3000)])
def test_a_distance_matrix_takes_no_more_than_its_estimate(frames):
    from core.hops import window_distance_matrix, window_distance_matrix_bytes

    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=(n, 17, 3)) for n in frames)
    tracemalloc.start()
    try:
        window_distance_matrix(a, b, 15)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= window_distance_matrix_bytes(*frames)


def test_a_tall_matrix_sums_its_diagonals_as_a_wide_one():
    """Sheared as its transpose (a 100,000-frame source against a short hop took 149 GiB): the
    same sums, in the same order, as the obvious loop."""
    from core.hops import diagonal_window_sums

    rng = np.random.default_rng(1)
    c = rng.normal(size=(90, 12)) + 1j * rng.normal(size=(90, 12))
    length = 5
    slow = np.array([[sum(c[a + k, b + k] for k in range(length)) for b in range(12 - length + 1)]
                     for a in range(90 - length + 1)])
    assert np.allclose(diagonal_window_sums(c, length), slow, rtol=0, atol=1e-12)
    assert np.array_equal(diagonal_window_sums(c, length), diagonal_window_sums(c.T, length).T)


def test_window_mismatches_in_blocks_are_the_ones_of_one_pass(monkeypatch):
    import core.assemble as assemble

    rng = np.random.default_rng(2)
    query, library = rng.random((300, 4)) < 0.3, rng.random((2000, 4)) < 0.3
    wide = rng.random((300, 14)) < 0.3, rng.random((2000, 14)) < 0.3  # (more bits than are packed)
    whole = [assemble.window_mismatches(query, library, s) for s in assemble.SEGMENT_SCALES]
    whole.append(assemble.window_mismatches(*wide, 0.84))
    monkeypatch.setattr(assemble, "WINDOW_BLOCK_BYTES", 1 << 14)
    blocks = [assemble.window_mismatches(query, library, s) for s in assemble.SEGMENT_SCALES]
    blocks.append(assemble.window_mismatches(*wide, 0.84))
    assert all(np.array_equal(a, b) for a, b in zip(whole, blocks))


def test_the_window_search_of_long_clips_stays_within_its_blocks():
    """A query of 6,000 frames against a library clip of 8,000 at a shorter scale: 2,955 windows
    of 6,000 frames, 355 MB at once before; blocks of 64 MiB now."""
    from core.assemble import WINDOW_BLOCK_BYTES, window_mismatches

    rng = np.random.default_rng(3)
    query, library = rng.random((6000, 4)) < 0.3, rng.random((8000, 4)) < 0.3
    tracemalloc.start()
    try:
        window_mismatches(query, library, 2 ** -0.25)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < WINDOW_BLOCK_BYTES * 1.25


def test_hit_points_in_blocks_are_the_ones_of_one_pass(mocap, monkeypatch):
    """A long reference's parameter space is posed in blocks of blends (2,000 blends of a
    2,000-frame reference took 5.8 GB at once): every block mixes as many examples as the
    whole, so the hit points are the same to the bit."""
    import core.reach as reach

    names = [f"bandai2-raise/raise-up-right-hand_normal_00{i}" for i in (1, 2, 3, 4)]
    registration = reach.register_examples([mocap(n) for n in names])
    whole = reach.ReachSpace(registration, n_blends=300)
    monkeypatch.setattr(reach, "HIT_BLOCK_BYTES", 2 << 20)
    assert reach.hit_rows_per_block(registration.motions[0].n_frames, whole.chains.rotations.shape[2]) < 300
    blocks = reach.ReachSpace(registration, n_blends=300)
    assert np.array_equal(whole.space.hit_points, blocks.space.hit_points)
    assert np.array_equal(whole.space.hit_frames, blocks.space.hit_frames)


def test_a_reach_space_takes_no_more_than_its_estimate(mocap):
    from core.reach import ReachSpace, reach_bytes

    examples = [mocap(f"bandai2-raise/raise-up-right-hand_normal_00{i}") for i in (1, 2, 3)]
    tracemalloc.start()
    try:
        ReachSpace.build(examples, n_blends=2000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    frames = examples[0].n_frames
    assert peak <= reach_bytes(frames, [m.n_frames for m in examples], len(examples[0].skeleton))


def test_a_fifo_nobody_writes_is_refused_after_a_wait_not_waited_on_for_ever(tmp_path, capsys, monkeypatch):
    """Opening a pipe that nobody writes blocks for ever (the hostile-input fuzz found every
    command that reads a clip hanging on one): a pipe is opened only once it gives its first
    bytes, within PIPE_WAIT_S."""
    import core.bvh

    monkeypatch.setattr(core.bvh, "PIPE_WAIT_S", 0.5)
    fifo = tmp_path / "clip.bvh"
    os.mkfifo(fifo)
    assert main(["analyze", str(fifo)]) == 2
    assert "a pipe nothing was written to within 0.5 s" in capsys.readouterr().err
