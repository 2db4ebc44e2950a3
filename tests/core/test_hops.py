"""One-hop transitions (Koyama & Goto 2019, section 3): the distance, the search, eq. (5), the table, the CLI."""

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import hops, quat
from core.__main__ import main
from broken_rigs import legs_flipped_up

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap"

# short bandai1 clips (86..224 frames at 30 fps): a small library that keeps the tests fast
LIBRARY = ["bow_normal_001", "bye_normal_001", "byebye_normal_001", "call_normal_001", "guide_normal_001",
           "punch_normal_001", "respond_normal_001", "walk_normal_001", "walk-left_normal_001"]
L = 15  # 0.5 s at 30 fps


@pytest.fixture(scope="module")
def library(mocap):
    return {f"{name}.bvh": mocap(f"bandai1/{name}") for name in LIBRARY}


@pytest.fixture(scope="module")
def measured(library):
    """The library's names, clouds (measured as the walk is), and every pair's distance matrix."""
    names = sorted(library)
    clouds, _ = hops.library_point_clouds([library[n] for n in names], names.index("walk_normal_001.bvh"))
    matrices = {(a, b): hops.window_distance_matrix(clouds[a], clouds[b], L, same=a == b)
                for a in range(len(names)) for b in range(len(names))}
    return names, clouds, matrices


def kovar_by_least_squares(cloud_a, cloud_b, a, b, length):
    """The slow obvious distance of one pair of windows: the 2-D rotation and translation that fit
    B's ground coordinates to A's best (Kabsch by SVD, reflections excluded), then the mean squared
    distance per point, heights compared as they are."""
    p, q = cloud_a[a:a + length].reshape(-1, 3), cloud_b[b:b + length].reshape(-1, 3)
    pc, qc = p[:, :2] - p[:, :2].mean(axis=0), q[:, :2] - q[:, :2].mean(axis=0)
    u, _, vt = np.linalg.svd(qc.T @ pc)
    turn = u @ np.diag([1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
    return (np.sum((pc - qc @ turn) ** 2) + np.sum((p[:, 2] - q[:, 2]) ** 2)) / len(p)


def clouds_of(*motions):
    return hops.library_point_clouds(list(motions), 0)[0]


# ---------------------------------------------------------------- the distance


def test_the_distance_matrix_is_the_least_squares_fit_of_every_pair_of_windows(library):
    walk, bow = clouds_of(library["walk_normal_001.bvh"], library["bow_normal_001.bvh"])
    matrix = hops.window_distance_matrix(walk, bow, L)
    assert matrix.shape == (len(walk) - L + 1, len(bow) - L + 1)
    for a, b in [(0, 0), (3, 97), (120, 40), (len(walk) - L, len(bow) - L)]:
        assert matrix[a, b] == pytest.approx(kovar_by_least_squares(walk, bow, a, b, L), rel=1e-9, abs=1e-12)


def test_the_distance_matrix_of_small_random_clouds_matches_the_slow_fit():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(9, 5, 3)), rng.normal(size=(7, 5, 3)) + [3.0, -2.0, 0.0]
    matrix = hops.window_distance_matrix(a, b, 3)
    slow = [[kovar_by_least_squares(a, b, i, j, 3) for j in range(5)] for i in range(7)]
    np.testing.assert_allclose(matrix, slow, rtol=1e-9, atol=1e-12)


def test_a_clip_against_itself_on_the_same_frames_is_exactly_zero(library):
    (walk,) = clouds_of(library["walk_normal_001.bvh"])
    assert np.all(np.diag(hops.window_distance_matrix(walk, walk, L, same=True)) == 0.0)


def test_the_distance_does_not_depend_on_names_units_up_axis_or_where_a_clip_stands(library):
    walk, bow = library["walk_normal_001.bvh"], library["bow_normal_001.bvh"]
    base = hops.window_distance_matrix(*clouds_of(walk, bow), L)
    names = {"Foot_L": "LeftFoot", "Foot_R": "RightFoot", "UpperLeg_L": "thigh.L", "UpperLeg_R": "thigh.R"}
    z_up = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    turn = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), 1.3)
    for changed in [(walk.renamed(names), bow.renamed(names)), (walk.scaled(0.01), bow.scaled(0.01)),
                    (walk.transformed(z_up), bow.transformed(z_up, np.array([40.0, -75.0, 0.0]))),
                    (walk, bow.transformed(turn, np.array([300.0, 0.0, -50.0])))]:
        np.testing.assert_allclose(hops.window_distance_matrix(*clouds_of(*changed), L), base, rtol=1e-9, atol=1e-12)


def test_the_distance_at_120_fps_is_close_to_the_one_at_30(library):
    walk, bow = library["walk_normal_001.bvh"], library["bow_normal_001.bvh"]
    base = hops.window_distance_matrix(*clouds_of(walk, bow), L)
    fine = hops.window_distance_matrix(*clouds_of(walk.resampled(120), bow.resampled(120)), 4 * L)[::4, ::4]
    rows, cols = min(len(fine), len(base)), min(fine.shape[1], base.shape[1])
    # frame 4a at 120 fps is frame a at 30; the window sees the same half second, sampled 4 times as often
    assert np.abs(fine[:rows, :cols] - base[:rows, :cols]).max() < 0.05 * base.mean()


# ---------------------------------------------------------------- the search


def brute_force(trigger, from_source, to_destination, *, offset, blend_frames, dst, weight, max_stay):
    """Every candidate (hop, o_sh, s_s, s_h) with stays up to max_stay whose blends fit in the
    clips, no pruning; the least (cost, not direct, R, hop, o_sh, s_s) wins. Returns (cost,
    choice, S, wR)."""
    n_src, n_dst = from_source[dst].shape[0], to_destination[dst].shape[1]
    best = None
    for hop in range(len(from_source)):
        n_hop = from_source[hop].shape[1]
        for stay_src in range(max_stay + 1):
            for stay_hop in range(max_stay + 1):
                for hop_offset in range(trigger + stay_src - n_hop, trigger + stay_src + 1):
                    a = trigger + stay_src
                    h1 = a - hop_offset
                    u = a + blend_frames + stay_hop
                    h2, d = u - hop_offset, u - offset
                    if not (a < n_src and 0 <= h1 < n_hop):
                        continue
                    if hop == dst and hop_offset == offset:
                        # the destination on its own timing: no second blend, nothing more to fit
                        smoothness = from_source[hop][a, h1] + 0.0
                    elif h2 < n_hop and d < n_dst:
                        smoothness = from_source[hop][a, h1] + to_destination[hop][h2, d]
                    else:
                        continue
                    responsiveness = weight * (stay_src + stay_hop)
                    cost = smoothness + responsiveness
                    direct = (hop, hop_offset, stay_src, stay_hop) == (dst, offset, 0, 0)
                    key = (cost, not direct, stay_src + stay_hop, hop, hop_offset, stay_src)
                    if best is None or key < best[0]:
                        best = (key, (hop, hop_offset, stay_src, stay_hop), smoothness, responsiveness)
    return best[0][0], best[1], best[2], best[3]


def random_walk_clouds(rng, lengths, joints=4):
    return [np.cumsum(rng.normal(scale=0.2, size=(n, joints, 3)), axis=0) for n in lengths]


@pytest.mark.parametrize("seed", range(6))
def test_the_pruned_search_finds_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    length = 3
    clouds = random_walk_clouds(rng, rng.integers(8, 16, size=3))
    clouds.append(clouds[1].copy())  # a twin of clip 1: ties between hops must go to the smaller index
    src, dst = 0, int(rng.integers(1, 4))
    n_src, n_dst = len(clouds[src]), len(clouds[dst])
    matrices = {(a, b): hops.window_distance_matrix(clouds[a], clouds[b], length, same=a == b)
                for a in range(4) for b in range(4)}
    from_source = [matrices[src, i] for i in range(4)]
    to_destination = [matrices[i, dst] for i in range(4)]
    for weight, max_stay in [(0.3, None), (0.01, None), (0.0, 3), (1e6, None)]:
        offset = int(rng.integers(-(n_dst - length) + 2, n_src - length - 1))
        for trigger in hops.trigger_frames(n_src, n_dst, offset, length):
            found = hops.search_one_hop(int(trigger), from_source, to_destination, offset=offset, blend_frames=length,
                                        dst=dst, weight=weight, max_stay=max_stay)
            cost, choice, smoothness, responsiveness = brute_force(
                int(trigger), from_source, to_destination, offset=offset, blend_frames=length, dst=dst, weight=weight,
                max_stay=max(n_src, n_dst, 16) if max_stay is None else max_stay)
            assert (found.hop, found.hop_offset, found.stay_src, found.stay_hop) == choice
            assert (found.smoothness, found.responsiveness) == (smoothness, responsiveness)
            assert found.cost == cost


def test_the_direct_candidate_costs_exactly_the_direct_transition(measured):
    names, clouds, matrices = measured
    src, dst = names.index("walk_normal_001.bvh"), names.index("bow_normal_001.bvh")
    from_source = [matrices[src, i] for i in range(len(names))]
    to_destination = [matrices[i, dst] for i in range(len(names))]
    direct_matrix = hops.window_distance_matrix(clouds[src], clouds[dst], L)
    offset, kept = 20, 0
    # a weight under which no stay pays: the direct transition competes with the hops' zero stays
    for trigger in hops.trigger_frames(len(clouds[src]), len(clouds[dst]), offset, L)[::4]:
        found = hops.search_one_hop(int(trigger), from_source, to_destination, offset=offset, blend_frames=L, dst=dst,
                                    weight=1e9)
        assert found.direct == direct_matrix[trigger, trigger - offset]
        if (found.hop, found.hop_offset, found.stay_src, found.stay_hop) == (dst, offset, 0, 0):
            kept += 1
            assert (found.smoothness, found.responsiveness) == (direct_matrix[trigger, trigger - offset], 0.0)
        else:
            assert found.cost < found.direct  # (a tie would have gone to the direct transition)
    assert kept > 0


def test_one_hop_is_never_worse_than_direct_over_20_random_conditions(measured):
    names, clouds, matrices = measured
    weight = hops.default_weight(clouds, L, 30.0, cache=dict(matrices), seed=1) / 30.0
    rng = np.random.default_rng(20)
    better = 0
    for _ in range(20):
        src, dst = (int(i) for i in rng.integers(len(names), size=2))
        trigger = int(rng.integers(len(clouds[src]) - L + 1))
        offset = trigger - int(rng.integers(len(clouds[dst]) - L + 1))
        found = hops.search_one_hop(trigger, [matrices[src, i] for i in range(len(names))],
                                    [matrices[i, dst] for i in range(len(names))], offset=offset, blend_frames=L,
                                    dst=dst, weight=weight)
        assert found.direct == matrices[src, dst][trigger, trigger - offset]
        assert found.smoothness + found.responsiveness <= found.direct
        better += found.cost < found.direct
    assert better >= 10  # a hop helps in most conditions of this library


def test_the_default_weight_is_the_same_with_the_same_seed(measured):
    names, clouds, matrices = measured
    first = hops.default_weight(clouds, L, 30.0, cache=dict(matrices), seed=7, n_conditions=30)
    again = hops.default_weight(clouds, L, 30.0, cache=dict(matrices), seed=7, n_conditions=30)
    other = hops.default_weight(clouds, L, 30.0, cache=dict(matrices), seed=8, n_conditions=30)
    assert first == again > 0.0
    assert other != first


# ---------------------------------------------------------------- the table


@pytest.fixture(scope="module")
def small_library(library):
    return {name: library[name] for name in ("bow_normal_001.bvh", "bye_normal_001.bvh", "guide_normal_001.bvh",
                                             "respond_normal_001.bvh")}


@pytest.fixture(scope="module")
def table(small_library):
    return hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10, weight=0.05)


def test_the_table_covers_every_trigger_whose_direct_transition_fits(table, small_library):
    n_src, n_dst = small_library["bye_normal_001.bvh"].n_frames, small_library["respond_normal_001.bvh"].n_frames
    assert table.triggers.tolist() == list(range(10, min(n_src - L, n_dst - L + 10) + 1))
    assert table.choices.shape == (len(table.triggers), 4) and table.choices.dtype == np.int64
    assert np.all(table.smoothness + table.responsiveness <= table.direct)
    assert np.array_equal(table.responsiveness, 0.05 / table.fps * table.choices[:, 2:].sum(axis=1))
    where = table.is_direct()
    assert np.array_equal(table.smoothness[where], table.direct[where])


def test_a_table_row_is_found_by_its_trigger_and_survives_the_file(table, tmp_path):
    path = tmp_path / "table.npz"
    table.save(path)
    again = hops.HopTable.load(path)
    for name in ("triggers", "choices", "smoothness", "responsiveness", "direct"):
        assert np.array_equal(getattr(again, name), getattr(table, name))
    assert (again.hops, again.src, again.dst, again.offset, again.blend_frames, again.fps, again.weight) == \
           (table.hops, table.src, table.dst, table.offset, table.blend_frames, table.fps, table.weight)
    with np.load(path) as data:
        assert all("/" not in str(h) for h in data["hops"])
    trigger = int(table.triggers[7])
    entry = again.entry(trigger)
    assert entry["trigger"] == trigger and entry["hop"] == table.hops[table.choices[7, 0]]
    with pytest.raises(ValueError, match="not in the table"):
        again.entry(int(table.triggers[-1]) + 1)


def test_the_table_is_the_same_through_any_runner(table, small_library):
    class Reversed:
        """A runner that does the items in the other order (as a cluster may) and keeps count."""

        calls = 0

        def map(self, fn, items, **shared):
            Reversed.calls += 1
            items = list(items)
            return [fn(item, **shared) for item in reversed(items)][::-1]

    again = hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10, weight=0.05,
                            runner=Reversed())
    assert Reversed.calls == 2  # the distance matrices, then the search
    for name in ("triggers", "choices", "smoothness", "responsiveness", "direct"):
        assert np.array_equal(getattr(again, name), getattr(table, name))
    # eq. (5) too: its matrices go with the search's, its weight is computed here, once
    Reversed.calls = 0
    spread = hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10, runner=Reversed())
    serial = hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10)
    assert Reversed.calls == 2
    assert spread.weight == serial.weight > 0.0
    for name in ("choices", "smoothness", "responsiveness", "direct"):
        assert np.array_equal(getattr(spread, name), getattr(serial, name))


def test_the_tasks_run_where_only_numpy_is_installed(small_library, tmp_path):
    """What a distributed runner ships: the task functions pickled by value with their shared
    arrays, run by a Python that cannot import this project (isolated mode, another folder)."""
    cloudpickle = pytest.importorskip("cloudpickle")
    names = sorted(small_library)
    clouds, _ = hops.library_point_clouds([small_library[n] for n in names], 0)
    matrices = [hops.window_distance_matrix(clouds[0], clouds[i], L, same=i == 0) for i in range(len(names))]
    back = [hops.window_distance_matrix(clouds[i], clouds[2], L, same=i == 2) for i in range(len(names))]
    jobs = [(hops.distance_task, (0, 1), {"clouds": clouds, "blend_frames": L}),
            (hops.search_task, np.arange(20, 26), {"from_source": matrices, "to_destination": back, "offset": 5,
                                                    "blend_frames": L, "dst": 2, "weight": 0.002, "max_stay": None})]
    cloudpickle.register_pickle_by_value(hops)
    try:
        payload = cloudpickle.dumps(jobs)
    finally:
        cloudpickle.unregister_pickle_by_value(hops)
    script = ("import importlib.util, pickle, sys; assert importlib.util.find_spec('core') is None; "
              "jobs = pickle.loads(sys.stdin.buffer.read()); "
              "sys.stdout.buffer.write(pickle.dumps([fn(item, **shared) for fn, item, shared in jobs]))")
    done = subprocess.run([sys.executable, "-I", "-c", script], input=payload, capture_output=True, cwd=tmp_path,
                          check=True)
    matrix, (choices, costs) = pickle.loads(done.stdout)
    assert np.array_equal(matrix, hops.distance_task((0, 1), clouds=clouds, blend_frames=L))
    here = hops.search_task(np.arange(20, 26), from_source=matrices, to_destination=back, offset=5, blend_frames=L,
                            dst=2, weight=0.002, max_stay=None)
    assert np.array_equal(choices, here[0]) and np.array_equal(costs, here[1])


def test_a_cache_kept_between_precomputes_gives_the_same_table(table, small_library):
    cache = hops.DistanceCache()
    hops.precompute(small_library, "bye_normal_001.bvh", "bow_normal_001.bvh", 0, weight=0.05, cache=cache)
    assert ("bye_normal_001.bvh", "bow_normal_001.bvh") in cache
    again = hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10, weight=0.05, cache=cache)
    assert np.array_equal(again.choices, table.choices) and np.array_equal(again.smoothness, table.smoothness)


def test_bad_input_says_what_to_fix(small_library, mocap):
    with pytest.raises(ValueError, match="offset 500 leaves no trigger frame.*must lie in"):
        hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 500, weight=0.05)
    with pytest.raises(ValueError, match="not in the library"):
        hops.precompute(small_library, "walk.bvh", "respond_normal_001.bvh", 0, weight=0.05)
    with pytest.raises(ValueError, match="library is empty"):
        hops.precompute({}, "a.bvh", "b.bvh", 0)
    other = dict(small_library, **{"odd.bvh": small_library["bow_normal_001.bvh"].renamed({"Head": "Kopf"})})
    with pytest.raises(ValueError, match="^the destination 'odd.bvh' is on another skeleton.*Kopf"):
        hops.precompute(other, "bye_normal_001.bvh", "odd.bvh", 0, weight=0.05)
    with pytest.raises(ValueError, match="weight must be"):
        hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 0, weight=-1.0)
    with pytest.raises(ValueError, match="blend"):
        hops.precompute(small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 0, blend_seconds=0.0)


def test_a_source_and_a_destination_at_other_scales_are_refused_as_a_pair(small_library):
    """The issue: a source scaled by 1e-12 beside a normal destination was taken; measured in the
    source's leg lengths, every cost came out near 1e23 and the precompute ran past 600 s."""
    tiny = dict(small_library, **{"bye_normal_001.bvh": small_library["bye_normal_001.bvh"].scaled(1e-12)})
    with pytest.raises(ValueError, match=r"^the destination 'respond_normal_001.bvh' has bones 1e\+12 times as long as "
                                         r"those of the source 'bye_normal_001.bvh'"):
        hops.checked_library(tiny, "bye_normal_001.bvh", "respond_normal_001.bvh")
    respond = small_library["respond_normal_001.bvh"]
    flipped = dict(small_library, **{"respond_normal_001.bvh": legs_flipped_up(respond)})
    with pytest.raises(ValueError, match=r"^the destination 'respond_normal_001.bvh': the legs point up"):
        hops.checked_library(flipped, "bye_normal_001.bvh", "respond_normal_001.bvh")


def test_library_clips_at_another_scale_or_with_legs_up_are_left_out_with_a_warning(small_library):
    """A folder may hold a clip in another unit: the search would never choose it, only measure it
    at the wrong size. It is left out, and the warning says why; the pair itself is kept."""
    bow, guide = small_library["bow_normal_001.bvh"], small_library["guide_normal_001.bvh"]
    library = dict(small_library, **{"bow_m.bvh": bow.scaled(0.01), "guide_flipped.bvh": legs_flipped_up(guide)})
    names, motions, warnings = hops.checked_library(library, "bye_normal_001.bvh", "respond_normal_001.bvh")
    assert names == sorted(small_library) and [library[n] for n in names] == motions
    [warning] = warnings
    assert warning.startswith("2 clips left out of the library (the table is made without them): clip 'bow_m.bvh' "
                              "has bones 0.01 times as long as those of the source 'bye_normal_001.bvh'")
    assert "; clip 'guide_flipped.bvh': the legs point up" in warning


def test_clips_of_another_rig_are_left_out_with_one_warning_that_names_them_all(small_library):
    """The issue: one clip of another rig refused the whole library, naming only the first bad file.
    They are skipped, as the Blender add-on's hop library skips them, and one warning names each."""
    bow = small_library["bow_normal_001.bvh"]
    library = dict(small_library, **{"a_kopf.bvh": bow.renamed({"Head": "Kopf"}),
                                     "b_toes.bvh": bow.renamed({bow.skeleton.names[-1]: "Toe_End"}),
                                     "c_empty.bvh": bow.with_arrays(bow.rotations[:0], bow.positions[:0])})
    names, motions, warnings = hops.checked_library(library, "bye_normal_001.bvh", "respond_normal_001.bvh",
                                                    unreadable={"d_broken.bvh": "'d_broken.bvh' could not be read "
                                                                                "(line 3: not a number)"})
    assert names == sorted(small_library)
    [warning] = warnings
    assert warning.startswith("4 clips left out of the library")
    for name in ("'a_kopf.bvh' is on another skeleton", "'b_toes.bvh' is on another skeleton",
                 "'c_empty.bvh' has no frames", "'d_broken.bvh' could not be read"):
        assert name in warning, warning
    table = hops.precompute(library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10, weight=0.05)
    assert table.hops == tuple(sorted(small_library))


# ---------------------------------------------------------------- the command line


def test_precompute_then_show_json_lists_every_trigger(tmp_path, capsys, mocap):
    folder = tmp_path / "library"
    folder.mkdir()
    for name in ("bye_normal_001", "guide_normal_001", "respond_normal_001"):
        (folder / f"{name}.bvh").symlink_to(MOCAP / "bandai1" / f"{name}.bvh")
    out = tmp_path / "table.npz"
    assert main(["hops", "precompute", str(folder), "--src", str(folder / "bye_normal_001.bvh"),
                 "--dst", str(MOCAP / "bandai1" / "bow_normal_001.bvh"), "--offset", "5", "-o", str(out),
                 "--workers", "2"]) == 0
    capsys.readouterr()
    assert main(["hops", "show", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(hops.HopTable.load(out).triggers)
    names = {"bye_normal_001.bvh", "guide_normal_001.bvh", "respond_normal_001.bvh", "bow_normal_001.bvh"}
    for row in rows:
        assert list(row) == ["trigger", "hop", "offset", "stay_src", "stay_hop", "smoothness", "responsiveness",
                             "direct"]
        assert row["hop"] in names
        assert all(isinstance(row[k], int) for k in ("trigger", "offset", "stay_src", "stay_hop"))
        assert all(isinstance(row[k], float) for k in ("smoothness", "responsiveness", "direct"))
        assert row["smoothness"] + row["responsiveness"] <= row["direct"]
    assert main(["hops", "show", str(out), "--trigger", str(rows[3]["trigger"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [rows[3]]
    # that ran in local processes (a Dask LocalCluster); in this process it is the same file
    serial = tmp_path / "serial.npz"
    assert main(["hops", "precompute", str(folder), "--src", str(folder / "bye_normal_001.bvh"),
                 "--dst", str(MOCAP / "bandai1" / "bow_normal_001.bvh"), "--offset", "5", "-o", str(serial),
                 "--workers", "0"]) == 0
    with np.load(out) as a, np.load(serial) as b:
        assert sorted(a.files) == sorted(b.files)
        assert all(np.array_equal(a[k], b[k]) for k in a.files)


def test_the_command_line_refuses_bad_input_with_a_message(tmp_path, capsys, mocap):
    empty = tmp_path / "empty"
    empty.mkdir()
    clip = str(MOCAP / "bandai1" / "bye_normal_001.bvh")
    assert main(["hops", "precompute", str(empty), "--src", clip, "--dst", clip, "--offset", "0",
                 "-o", str(tmp_path / "t.npz")]) == 2
    assert "no .bvh files" in capsys.readouterr().err
    assert main(["hops", "precompute", str(MOCAP / "bandai1"), "--src", clip, "--dst", clip, "--offset", "0",
                 "-o", clip]) == 2
    assert "would destroy it" in capsys.readouterr().err
    not_a_table = tmp_path / "x.npz"
    not_a_table.write_text("hello")
    assert main(["hops", "show", str(not_a_table)]) == 2
    assert "is not a hop table" in capsys.readouterr().err


def test_the_command_line_skips_a_broken_file_and_a_clip_of_another_rig(tmp_path, capsys, mocap):
    """One file of the library that cannot be read, and one of another rig, are left out with one
    warning naming both; the table is the one of the folder without them."""
    folder = tmp_path / "library"
    folder.mkdir()
    for name in ("bye_normal_001", "guide_normal_001", "respond_normal_001"):
        (folder / f"{name}.bvh").symlink_to(MOCAP / "bandai1" / f"{name}.bvh")
    out, clean = tmp_path / "table.npz", tmp_path / "clean.npz"
    argv = ["hops", "precompute", str(folder), "--src", str(folder / "bye_normal_001.bvh"),
            "--dst", str(folder / "respond_normal_001.bvh"), "--offset", "5", "--weight", "0.05", "--workers", "0"]
    assert main(argv + ["-o", str(clean)]) == 0
    capsys.readouterr()
    (folder / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 zero\n")
    text = (MOCAP / "bandai1" / "bow_normal_001.bvh").read_text()
    (folder / "kopf.bvh").write_text(text.replace("JOINT Head", "JOINT Kopf", 1))
    assert main(argv + ["-o", str(out)]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: 2 clips left out of the library"), err
    assert "'broken.bvh' could not be read" in warnings[0] and "'kopf.bvh' is on another skeleton" in warnings[0]
    with np.load(out) as a, np.load(clean) as b:
        assert sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in b.files)
    (folder / "bye_normal_001.bvh").unlink()
    (folder / "bye_normal_001.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 zero\n")
    assert main(argv + ["-o", str(out)]) == 2  # the source itself must read
    assert "bye_normal_001.bvh" in capsys.readouterr().err


class _Cluster:
    """A stand-in for a local cluster: runs the tasks given to it here, and counts them."""

    def __init__(self, started: list):
        self.started, self.ran = started, 0

    def __enter__(self):
        self.started.append(self)
        return self

    def __exit__(self, *exc):
        self.closed = True

    def map(self, fn, items, **shared):
        items = list(items)
        self.ran += len(items)
        return [fn(item, **shared) for item in items]


def test_the_default_runner_stays_here_unless_the_work_measured_pays_a_cluster(table, small_library):
    """Item 11: on a small table a local cluster cost more than it saved (9.7 s against 5.8 s). The
    default runner moves the rest of a map to the cluster only when the rest, at the pace measured,
    outlasts the cluster's overhead over its workers' gain; the table is the same either way."""
    args = (small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10)
    started: list = []
    with hops.MeasuredRunner(lambda: _Cluster(started), 2, overhead_s=1e9) as run:
        here = hops.precompute(*args, weight=0.05, runner=run)
    assert not started and [total == n for _, total, n, _ in run.choices] == [True, True]
    assert "in this process" in run.summary() and "on a local cluster" not in run.summary()
    with hops.MeasuredRunner(lambda: _Cluster(started), 2, overhead_s=0.0) as run:
        spread = hops.precompute(*args, weight=0.05, runner=run)
    [cluster] = started  # one cluster, started once, for both maps, and closed
    assert cluster.closed and cluster.ran == sum(total - n for _, total, n, _ in run.choices) > 0
    assert "the rest on the cluster" in run.summary() and "a local cluster of 2 workers pays above 0 s" in run.summary()
    with hops.MeasuredRunner(lambda: _Cluster(started), 1, overhead_s=0.0) as run:  # one worker never pays
        hops.precompute(*args, weight=0.05, runner=run)
    assert len(started) == 1 and "one processor: a local cluster never pays" in run.summary()
    with hops.MeasuredRunner(lambda: _Cluster(started), 2, overhead_s=0.0, why_here="no room") as run:
        hops.precompute(*args, weight=0.05, runner=run)
    assert len(started) == 1 and run.summary().endswith("(no room, so it all ran here)")

    def no_cluster():
        raise ValueError("no Dask worker joined")

    run = hops.MeasuredRunner(no_cluster, 2, overhead_s=0.0)  # (also outside a with block)
    kept = hops.precompute(*args, weight=0.05, runner=run)
    assert run.summary().endswith("(a local cluster could not be started (no Dask worker joined), so it all ran "
                                  "here)"), run.summary()
    assert all(np.array_equal(a, b) for a, b in zip(kept.to_arrays().values(), table.to_arrays().values()))
    for t in (here, spread):
        assert all(np.array_equal(a, b) for a, b in zip(t.to_arrays().values(), table.to_arrays().values()))
