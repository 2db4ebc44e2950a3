"""One-hop motion transitions (Koyama & Goto 2019, section 3): the search, its default weight, the table.

A transition from a source clip to a destination clip whose timing is fixed
(destination frame ``k`` plays at source frame ``k + offset``) may go through
one *hop* clip of a library, with stays chosen so that both blends are
smooth. For a trigger frame ``t`` of the source, the search finds
``T_t = (hop, o_sh, s_s, s_h)`` minimising ``S + wR`` (eqs. 2-4).

Conventions (issue 13's shared design):

* **Time.** All clips play at the source's frame rate (others are resampled,
  with a warning). A blend takes ``L = round(blend_seconds * fps)`` frames.
  Hop frame ``h`` plays at source frame ``h + o_sh``. For trigger ``t``: the
  source plays alone until ``t + s_s``; the first blend runs over source
  frames ``[t + s_s, t + s_s + L)`` (source frames ``t + s_s ..`` against hop
  frames ``t + s_s - o_sh ..``); the hop plays alone for ``s_h`` frames; the
  second blend starts at source time ``u = t + s_s + L + s_h`` (hop frames
  ``u - o_sh ..`` against destination frames ``u - offset ..``) and the
  destination plays alone afterwards. Every window lies inside its clip.
* **Direct** transition: hop = destination, ``o_sh = offset``, no stays. Its
  second blend is the destination against itself on the same frames, whose
  distance is 0 by construction (:func:`window_distance_matrix` with ``same=True``),
  so its cost is ``D(src, dst)[t, t - offset]`` exactly. A trigger whose
  direct transition does not fit in both clips is not in the table.
* **D** is Kovar et al.'s point-cloud distance: the global positions of the
  body's joints (the pelvis and every joint below it, as core.rig finds it)
  on the L frames of each window, the second cloud turned about up and moved
  along the ground to fit the first best (least squares), then the mean
  squared distance per point, in the source's mean leg lengths squared: the
  same whatever the joint names, unit, up axis or frame rate.
* **R** = ``s_s + s_h`` in frames (eq. 4); the weight ``w`` is given per
  second and divided by the frame rate, so choices do not change with it.
* **Ties**: the direct transition wins ties, then the smaller R, the smaller
  hop index, the smaller ``o_sh``, the smaller ``s_s``.

The precompute (:func:`precompute`) is a few calls of ``runner.map`` over
independent items with module-level task functions (:func:`distance_task`,
:func:`search_task`) that need nothing but numpy and plain arrays, so a
distributed runner (core.cluster) can ship them to bare workers; the default
:class:`SerialRunner` runs them here. The table is the same whatever the
runner. Nothing here imports Dask. A table entry is rendered to frames by
core.hops_render.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .progress import Progress, report

BLEND_SECONDS = 0.5  # the paper's 30 frames at 60 fps
S_MAX_SECONDS = 1.0  # eq. (5)'s bound on each stay
# A hop is inserted only when it lowers S + wR below the direct D by at least this share of D;
# else the direct transition is kept. Moving the trigger by one frame changes D by a median
# 1.4 to 5 % (tests/bench/hop_gain.py, three pairs of bandai1 clips): a smaller gain is within
# what the cost resolves in time, not worth a clip the user did not choose and a second blend.
HOP_MIN_GAIN = 0.02
N_CONDITIONS = 100  # eq. (5)'s random conditions
TRIGGERS_PER_TASK = 25  # trigger frames per search task: enough work per task to hide its shipping
# Seconds a local cluster costs beyond its share of the work: its start-up and the shipping of the
# arrays both ways. tests/bench/hops_runner.py measured 1.7 to 2.5 s on jobs of 50 to 1,000 trigger
# frames (two workers, three runs). MeasuredRunner starts one only for work that pays it.
CLUSTER_OVERHEAD_S = 2.0


# --------------------------------------------------------------------------- runner


class SerialRunner:
    """Runs the precompute's tasks one after another in this process (the library's default).

    ``map(fn, items, **shared)`` returns ``[fn(item, **shared) for item in items]``;
    core.cluster's DaskRunner has the same ``map``. With ``progress=True`` a
    line on stderr counts the tasks done.
    """

    def __init__(self, progress: bool = False):
        self.progress = progress

    def map(self, fn, items, **shared) -> list:
        items = list(items)
        out = []
        for n, item in enumerate(items, 1):
            out.append(fn(item, **shared))
            if self.progress:
                print(f"\r{fn.__name__}: {n}/{len(items)}", end="" if n < len(items) else "\n", file=sys.stderr,
                      flush=True)
        return out


class MeasuredRunner:
    """Runs here until a map's own pace says that a local cluster would finish it sooner.

    The command line's default (no ``--workers``, no ``--scheduler``). Each ``map`` runs its
    tasks in this process one by one, timing them; once the remaining tasks, at the pace
    measured so far, would take longer here than ``overhead_s * P / (P - 1)`` seconds, the
    cluster ``start_cluster()`` gives (a context manager, P = ``workers`` processes) is started
    and takes the rest. With P workers the rest takes 1/P of the time there, plus the
    cluster's start-up and the shipping of the map's shared arrays (``overhead_s``, measured
    by tests/bench/hops_runner.py); below that bound the cluster costs more than it saves
    (a table of 158 trigger frames took 9.7 s on two local workers, 5.8 s here). One worker
    never pays; ``why_here`` (e.g. the memory budget has no room for P processes) keeps
    the work here and is said in the summary. The table is the same either way: every
    runner gives the serial results to the bit. ``choices`` records what each map did, and
    ``started_s`` how long the cluster took to start, for the report (:meth:`summary`).
    Any cluster started is closed on leaving ``with`` (or by :meth:`close`).
    """

    def __init__(self, start_cluster, workers: int, *, overhead_s: float = CLUSTER_OVERHEAD_S,
                 progress: bool = False, why_here: str = ""):
        from contextlib import ExitStack

        self.start_cluster = start_cluster
        self.workers = 1 if why_here else int(workers)
        self.overhead_s = float(overhead_s)
        self.progress = progress
        self.cluster = None
        self.choices: list[tuple[str, int, int, float]] = []  # (map, tasks, of them here, estimate here in s)
        self.why_here = why_here  # why no cluster is started, whatever the work
        self.started_s: float | None = None
        self._clusters = ExitStack()

    def __enter__(self) -> MeasuredRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the cluster, if one was started."""
        self.cluster = None
        self._clusters.close()

    @property
    def pays_after_s(self) -> float:
        """Seconds of remaining work here above which the cluster finishes sooner (inf: never)."""
        p = self.workers
        return math.inf if p < 2 else self.overhead_s * p / (p - 1)

    def map(self, fn, items, **shared) -> list:
        import time

        items = list(items)
        out: list = []
        started = time.perf_counter()
        name = getattr(fn, "__name__", "task")
        for n, item in enumerate(items):
            if n:
                spent = time.perf_counter() - started
                left = spent / n * (len(items) - n)  # (at the pace so far)
                if self.cluster is None and left > self.pays_after_s:
                    self.cluster = self._start_cluster()
                if self.cluster is not None:
                    out += self.cluster.map(fn, items[n:], **shared)
                    self.choices.append((name, len(items), n, spent + left))
                    return out
            out.append(fn(item, **shared))
            if self.progress:
                print(f"\r{name}: {n + 1}/{len(items)}", end="" if n + 1 < len(items) else "\n", file=sys.stderr,
                      flush=True)
        self.choices.append((name, len(items), len(items), time.perf_counter() - started))
        return out

    def _start_cluster(self):
        """The cluster, started; None when it could not be (the work then stays here, and the
        summary says why): a cluster that fails to start is no reason to lose the work done."""
        import time

        started = time.perf_counter()
        try:
            cluster = self._clusters.enter_context(self.start_cluster())
        except (ValueError, OSError, RuntimeError) as error:
            self.why_here = f"a local cluster could not be started ({error})"
            self.workers = 1
            return None
        self.started_s = time.perf_counter() - started
        return cluster

    def summary(self) -> str:
        """Where the work ran, and why: one clause per map."""
        if self.why_here:
            bound = f"{self.why_here}, so it all ran here"
        elif self.workers < 2:
            bound = "one processor: a local cluster never pays"
        else:
            bound = f"a local cluster of {self.workers} workers pays above {self.pays_after_s:.3g} s"
        parts = []
        for name, total, here, seconds in self.choices:
            if here == total:
                parts.append(f"{name}: {total} tasks in this process ({seconds:.1f} s)")
            else:
                parts.append(f"{name}: {here} of {total} tasks here, the rest on the cluster (about {seconds:.1f} s "
                             f"here)")
        started = f"; the cluster started in {self.started_s:.1f} s" if self.started_s is not None else ""
        return "; ".join(parts) + f" ({bound}{started})"


# --------------------------------------------------------------------------- point clouds


def body_joints(motion, rig) -> np.ndarray:
    """(J',) indices of the joints whose positions form the point cloud: the pelvis and every joint
    below it. Joints above the pelvis are left out: in many files a ``Root`` stays at the origin
    while the body walks away, and a point that is not on the body would pull the alignment."""
    return np.flatnonzero(rig.subtree_mask(motion.skeleton, rig.pelvis))


def ground_frame(up: np.ndarray) -> np.ndarray:
    """(3, 3) rows ``e1, e2, up``: coordinates along them put the ground first and up last."""
    from .analysis import ground_axes

    up = np.asarray(up, dtype=np.float64)
    e1, e2 = ground_axes(up)
    return np.stack([e1, e2, up])


def point_cloud(motion, joints: np.ndarray, frame: np.ndarray, leg: float) -> np.ndarray:
    """(F, J', 3) the body's joint positions per frame in ground coordinates (two along the ground,
    then up), in leg lengths, the clip's mean ground position subtracted (D does not depend on
    where a clip stands, and coordinates near 0 keep the running sums of :func:`window_distance_matrix`
    well conditioned)."""
    positions = motion.global_positions()[:, joints] @ frame.T / leg
    positions[..., :2] -= positions[..., :2].reshape(-1, 2).mean(axis=0)
    return positions


def library_point_clouds(clips: Sequence, src_index: int, rig=None) -> tuple[list[np.ndarray], dict]:
    """Point clouds of every clip, measured as the source is: its rig's body joints, its up axis
    (core.rig.detect_up) and its mean leg length (core.rig.leg_length).

    Returns the clouds and ``{"up": (3,), "leg": float}`` (the normalisation, which keys the cache).
    """
    # (core.rig and core.analysis are imported here, in the calling process, not at the top: the
    # task functions a distributed runner ships must need nothing but numpy)
    from .rig import detect_up, find_rig, leg_length

    src = clips[src_index]
    rig = find_rig(src) if rig is None else rig
    up = detect_up(src, rig)
    leg = 0.5 * (leg_length(src, rig, "L") + leg_length(src, rig, "R"))
    if not leg > 0:
        raise ValueError("the source's legs have no length (hip, knee and ankle at one place); check its skeleton")
    joints = body_joints(src, rig)
    frame = ground_frame(up)
    return [point_cloud(m, joints, frame, leg) for m in clips], {"up": up, "leg": leg}


# --------------------------------------------------------------------------- distance (Kovar et al. 2002)


def window_sums(x: np.ndarray, length: int) -> np.ndarray:
    """(F, ...) -> (F - length + 1, ...): sums over every run of ``length`` consecutive frames."""
    prefix = np.concatenate([np.zeros_like(x[:1]), np.cumsum(x, axis=0)])
    return prefix[length:] - prefix[:-length]


def diagonal_window_sums(c: np.ndarray, length: int) -> np.ndarray:
    """(F_A, F_B) -> (F_A - length + 1, F_B - length + 1): ``out[a, b] = sum_k c[a + k, b + k]``, k < length.

    The matrix is sheared so that its diagonals become columns, summed cumulatively down them,
    and read back: two passes over the matrix whatever ``length``. A tall matrix is sheared as
    its transpose, whose diagonals are the same sums in the same order: the sheared array has a
    row per row and a column per diagonal, a row per frame of the longer clip otherwise.
    """
    if c.shape[0] > c.shape[1]:  # (a 100,000-frame source against a short hop sheared 149 GiB)
        return diagonal_window_sums(c.T, length).T
    fa, fb = c.shape
    rows = np.arange(fa)[:, None]
    diagonals = np.arange(fb)[None, :] - rows + (fa - 1)
    # sheared[r, d]: the sum of c along diagonal d over frames of A before r
    sheared = np.zeros((fa + 1, fa + fb - 1), dtype=c.dtype)
    sheared[rows + 1, diagonals] = c
    np.cumsum(sheared, axis=0, out=sheared)
    a = np.arange(fa - length + 1)[:, None]
    d = np.arange(fb - length + 1)[None, :] - a + (fa - 1)
    return sheared[a + length, d] - sheared[a, d]


def window_distance_matrix(cloud_a: np.ndarray, cloud_b: np.ndarray, blend_frames: int, *,
                           same: bool = False) -> np.ndarray:
    """Kovar et al.'s distance between every window of A and every window of B (issue 13 design).

    cloud_a, cloud_b  (F_A, J, 3), (F_B, J, 3) ground coordinates (:func:`point_cloud`).
    same              A and B are one clip: its windows against themselves are 0 exactly.

    Returns ``D (F_A - L + 1, F_B - L + 1)``, ``D[a, b]`` for A's frames ``[a, a + L)`` against
    B's ``[b, b + L)``: the mean squared distance per point after B's cloud is turned about up
    and moved along the ground to fit A's best. With ground coordinates as complex numbers, the
    best fit leaves ``sum|u_c|^2 + sum|v_c|^2 - 2|sum u_c conj(v_c)|`` (``_c``: centred on the
    window's mean), plus ``sum (y - y')^2`` along up (no vertical shift). Every sum over a
    window comes from per-frame sums and one matrix product per axis, summed along frames and
    along diagonals: no loop over pairs of frames.
    """
    length = int(blend_frames)
    if cloud_a.shape[1:] != cloud_b.shape[1:]:
        raise ValueError(f"point clouds of {cloud_a.shape[1]} and {cloud_b.shape[1]} joints: both clips must be on "
                         f"one skeleton")
    if min(len(cloud_a), len(cloud_b)) < length:
        return np.zeros((max(len(cloud_a) - length + 1, 0), max(len(cloud_b) - length + 1, 0)))
    n_points = length * cloud_a.shape[1]
    u = cloud_a[..., 0] + 1j * cloud_a[..., 1]
    v = cloud_b[..., 0] + 1j * cloud_b[..., 1]
    y, z = cloud_a[..., 2], cloud_b[..., 2]

    def spread(w):
        """(windows,) sum |w - mean|^2 and the sum of w over each window."""
        total = window_sums(w.sum(axis=1), length)
        return window_sums((w.real ** 2 + w.imag ** 2).sum(axis=1), length) - np.abs(total) ** 2 / n_points, total

    spread_u, sum_u = spread(u)
    spread_v, sum_v = spread(v)
    # (frame-by-frame products by einsum, not BLAS: BLAS rounds them differently with the number of
    # threads it runs on, and a Dask worker runs it on one; the table must be the same on any runner)
    cross = (diagonal_window_sums(np.einsum("aj,bj->ab", u, v.conj()), length)
             - np.outer(sum_u, sum_v.conj()) / n_points)
    horizontal = spread_u[:, None] + spread_v[None, :] - 2.0 * np.abs(cross)
    vertical = (window_sums((y ** 2).sum(axis=1), length)[:, None] + window_sums((z ** 2).sum(axis=1), length)[None, :]
                - 2.0 * diagonal_window_sums(np.einsum("aj,bj->ab", y, z), length))
    out = np.maximum(horizontal + vertical, 0.0) / n_points  # (rounding may leave -1e-16 where it is 0)
    if same:
        np.fill_diagonal(out, 0.0)
    return out


def distance_task(pair: tuple[int, int], *, clouds: Sequence[np.ndarray], blend_frames: int) -> np.ndarray:
    """Runner task: the distance matrix of clips ``pair = (a, b)`` (indices into ``clouds``)."""
    a, b = pair
    return window_distance_matrix(clouds[a], clouds[b], blend_frames, same=a == b)


# --------------------------------------------------------------------------- the search (eqs. 2-4)


@dataclass(frozen=True)
class Found:
    """The best one-hop transition for one trigger frame: ``T_t`` and its costs."""

    hop: int
    hop_offset: int  # o_sh
    stay_src: int  # s_s
    stay_hop: int  # s_h
    smoothness: float  # S = D1 + D2 (eq. 3)
    responsiveness: float  # w R (eq. 4), w per frame
    direct: float  # D(src, dst) of the direct transition at this trigger

    @property
    def cost(self) -> float:
        return self.smoothness + self.responsiveness


def direct_fits(trigger: int, offset: int, n_src_windows: int, n_dst_windows: int) -> bool:
    """Whether the direct transition at ``trigger`` lies inside both clips (window counts ``F - L + 1``)."""
    return 0 <= trigger < n_src_windows and 0 <= trigger - offset < n_dst_windows


@dataclass(frozen=True)
class StackedHops:
    """Every hop's matrices side by side, so that one array operation covers every hop.

    first   (n_src_windows, C) ``D(src, i)`` of every hop i, their columns one after another.
    second  (C, n_dst_windows) ``D(i, dst)`` of every hop i, their rows one after another.
    hop, h1, room  (C,) per column: the hop, its hop window, and how many second stays the
            hop has after that window (``n_hop_windows - 1 - L - h1``; < 0: no room for the
            second blend).
    """

    first: np.ndarray
    second: np.ndarray
    hop: np.ndarray
    h1: np.ndarray
    room: np.ndarray

    @classmethod
    def of(cls, from_source: Sequence[np.ndarray], to_destination: Sequence[np.ndarray], blend_frames: int
           ) -> "StackedHops":
        widths = [m.shape[1] for m in from_source]
        hop = np.repeat(np.arange(len(widths)), widths)
        h1 = np.concatenate([np.arange(n) for n in widths])
        room = np.repeat(np.array(widths), widths) - 1 - int(blend_frames) - h1
        return cls(np.concatenate(from_source, axis=1), np.concatenate(to_destination, axis=0), hop, h1, room)


def search_one_hop(trigger: int, from_source: Sequence[np.ndarray], to_destination: Sequence[np.ndarray], *,
                   offset: int, blend_frames: int, dst: int, weight: float, max_stay: int | None = None,
                   stacked: StackedHops | None = None) -> Found:
    """The best one-hop transition for ``trigger`` (eq. 2), by exhaustive search with the paper's pruning.

    from_source     per library clip i, ``D(src, i)`` (:func:`window_distance_matrix`).
    to_destination  per library clip i, ``D(i, dst)``; ``to_destination[dst]`` is the destination
                    against itself (0 on its diagonal).
    dst             the destination's index in the library.
    weight          w per frame (>= 0).
    max_stay        a bound on each stay in frames; required when ``weight`` is 0 (nothing else
                    would bound the stays), else the clips bound them.
    stacked         ``StackedHops.of(from_source, to_destination, blend_frames)`` when at hand.

    The destination as the hop at its own timing (``o_sh = offset``) is the direct transition,
    delayed by ``s_s``: it has no second blend (the destination against itself, 0 by
    construction), so only its first blend must fit; its ``s_h`` is 0.

    Search order (section 3.2): the direct transition is the first best; then first stays from
    the smallest; a candidate is dropped as soon as ``wR``, then ``wR + D1``, exceeds the best
    cost so far (the terms are >= 0, so it could not win), and only what is left pays for ``D2``.
    For one first stay, every hop, second stay and ``o_sh`` are one array. Ties as the module
    docstring says.
    """
    length = int(blend_frames)
    w = float(weight)
    if w < 0:
        raise ValueError(f"the weight must be >= 0, got {weight}")
    if w == 0 and max_stay is None:
        raise ValueError("with weight 0 the stays need a bound: give max_stay")
    stacked = StackedHops.of(from_source, to_destination, length) if stacked is None else stacked
    n_src = from_source[dst].shape[0]
    n_dst = to_destination[dst].shape[1]
    k = trigger - offset
    if not direct_fits(trigger, offset, n_src, n_dst):
        raise ValueError(f"trigger {trigger}: the direct transition does not fit in the clips")
    direct = float(from_source[dst][trigger, k])
    # the direct candidate; its "second blend" is the destination against itself: 0 by construction
    best_cost = (direct + 0.0) + w * 0
    best_key = (best_cost, 0, 0, dst, offset, 0)
    best = Found(dst, offset, 0, 0, direct + 0.0, w * 0, direct)
    most_room = int(stacked.room.max(initial=-1))
    usable = np.flatnonzero(stacked.room >= 0)
    stays = range(0, (n_src - trigger) if max_stay is None else min(max_stay + 1, n_src - trigger))
    for stay_src in stays:
        if w * stay_src > best_cost:  # wR first: every later first stay costs more still
            break
        a = trigger + stay_src  # source window of the first blend
        if a - offset >= n_dst:
            break
        if stay_src:
            # the destination as the hop at its own timing: the direct transition stay_src frames
            # later, whose second blend, again, is none (its window need not fit)
            d1 = float(from_source[dst][a, a - offset])
            key = ((d1 + 0.0) + w * stay_src, 1, stay_src, dst, offset, stay_src)
            if key < best_key:
                best_key, best_cost = key, key[0]
                best = Found(dst, offset, stay_src, 0, d1 + 0.0, w * stay_src, direct)
        d0 = a + length - offset  # destination window of the second blend when s_h = 0
        if d0 >= n_dst or most_room < 0:
            continue
        stay_hop = np.arange(min(n_dst - d0, most_room + 1, n_dst if max_stay is None else max_stay + 1))
        # wR (the same float expressions as the cost's, so nothing that ties is dropped)
        w_r = w * (stay_src + stay_hop)
        keep = w_r <= best_cost
        stay_hop, w_r = stay_hop[keep], w_r[keep]
        if not len(stay_hop):
            continue
        d1 = stacked.first[a, usable]
        keep = d1 + w * stay_src <= best_cost  # then D1
        columns, d1 = usable[keep], d1[keep]
        if not len(columns):
            continue
        # (a second stay that the least D1 and its wR already put above the best, or longer
        # than any hop left has room for, is no candidate either)
        keep = (w_r + d1.min() <= best_cost) & (stay_hop <= stacked.room[columns].max())
        stay_hop, w_r = stay_hop[keep], w_r[keep]
        if not len(stay_hop):
            continue
        # then D2, only for the pairs (s_h, o_sh) whose second blend fits in the hop and whose
        # D1 + wR does not exceed the best already
        live_rows, live_cols = np.nonzero((stay_hop[:, None] <= stacked.room[columns][None, :])
                                          & (d1[None, :] + w_r[:, None] <= best_cost))
        if not len(live_rows):
            continue
        d2 = stacked.second[columns[live_cols] + length + stay_hop[live_rows], d0 + stay_hop[live_rows]]
        smoothness = d1[live_cols] + d2
        cost = smoothness + w_r[live_rows]
        low = cost.min()
        if low > best_cost:
            continue
        # among the block's ties: the smaller R (s_h), then the smaller hop, then the smaller o_sh (larger h1)
        ties = np.flatnonzero(cost == low)
        hop_of, h1_of = stacked.hop[columns[live_cols[ties]]], stacked.h1[columns[live_cols[ties]]]
        pick = np.lexsort((-h1_of, hop_of, stay_hop[live_rows[ties]]))[0]
        n, r = ties[pick], live_rows[ties[pick]]
        hop, hop_offset = int(hop_of[pick]), a - int(h1_of[pick])
        key = (float(low), 1, stay_src + int(stay_hop[r]), hop, hop_offset, stay_src)
        if key < best_key:
            best_key, best_cost = key, float(low)
            best = Found(hop, hop_offset, stay_src, int(stay_hop[r]), float(smoothness[n]), float(w_r[r]), direct)
    return best


def worth_a_hop(found: Found, *, dst: int, offset: int, min_gain: float = HOP_MIN_GAIN) -> Found:
    """``found``, or the direct transition (no stay) when ``found`` is a hop that lowers the cost below the
    direct ``D`` by less than ``min_gain`` times ``D`` (:data:`HOP_MIN_GAIN`): within the cost's
    resolution, not worth a second blend through a clip the user did not choose. The direct
    transition delayed by a stay is no hop, and kept as found."""
    if found.hop == dst and found.hop_offset == offset and found.stay_hop == 0:
        return found
    if found.direct - found.cost >= min_gain * found.direct:
        return found
    return Found(dst, int(offset), 0, 0, found.direct, 0.0, found.direct)


def search_task(triggers: np.ndarray, *, from_source, to_destination, offset: int, blend_frames: int, dst: int,
                weight: float, max_stay: int | None, min_gain: float = HOP_MIN_GAIN) -> tuple[np.ndarray, np.ndarray]:
    """Runner task: the search for a chunk of trigger frames, each hop kept only when
    :func:`worth_a_hop`.

    Returns ``choices (n, 4) int64`` (hop, o_sh, s_s, s_h) and ``costs (n, 3)`` (S, wR, direct).
    """
    choices = np.zeros((len(triggers), 4), dtype=np.int64)
    costs = np.zeros((len(triggers), 3))
    stacked = StackedHops.of(from_source, to_destination, blend_frames)
    for n, trigger in enumerate(triggers):
        found = search_one_hop(int(trigger), from_source, to_destination, offset=offset, blend_frames=blend_frames,
                               dst=dst, weight=weight, max_stay=max_stay, stacked=stacked)
        found = worth_a_hop(found, dst=dst, offset=offset, min_gain=min_gain)
        choices[n] = (found.hop, found.hop_offset, found.stay_src, found.stay_hop)
        costs[n] = (found.smoothness, found.responsiveness, found.direct)
    return choices, costs


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class HopTable:
    """The precomputed one-hop transitions of one source, destination and offset (section 3.2).

    triggers        (T,) int64 the source frames a transition can be triggered at, consecutive.
    choices         (T, 4) int64 per trigger ``(hop, o_sh, s_s, s_h)``: ``T_t`` (eq. 1).
    smoothness      (T,) S (eq. 3), in leg lengths squared.
    responsiveness  (T,) w R (eq. 4).
    direct          (T,) D of the direct transition at that trigger.
    hops            the library clips' names (file names, no folders); ``choices[:, 0]`` indexes them.
    src, dst        indices of the source and the destination in ``hops``.
    offset          o_s->d: destination frame k plays at source frame k + offset.
    blend_frames    L, frames of each blend.
    fps             the frame rate every clip was played at.
    weight          w per second (R is in frames: ``wR = weight / fps * R``).
    frames          (len(hops),) int64 each clip's frame count as searched (at ``fps``); empty in
                    tables written before it was kept.
    digests         per clip :func:`clip_digest` of the motion searched, so that a render can tell
                    the clips it is given are the ones the choices were made for; empty likewise.
    """

    triggers: np.ndarray
    choices: np.ndarray
    smoothness: np.ndarray
    responsiveness: np.ndarray
    direct: np.ndarray
    hops: tuple[str, ...]
    src: int
    dst: int
    offset: int
    blend_frames: int
    fps: float
    weight: float
    frames: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    digests: tuple[str, ...] = ()

    def __post_init__(self):
        n = len(self.triggers)
        if self.triggers.ndim != 1 or self.choices.shape != (n, 4) or not all(
                np.shape(a) == (n,) for a in (self.smoothness, self.responsiveness, self.direct)):
            raise ValueError(f"a hop table needs 4 choices and 3 costs per trigger frame ({n})")
        if len(self.frames) not in (0, len(self.hops)) or len(self.digests) not in (0, len(self.hops)):
            raise ValueError(f"a hop table keeps the frame count and digest of each of its {len(self.hops)} clips, "
                             f"or none")
        if n and np.any(np.diff(self.triggers) != 1):
            raise ValueError("a hop table's trigger frames must be consecutive")
        for name in self.hops:
            # clip names are file names inside the library, nothing else: a table naming
            # ../../etc/passwd must not make a render open that file
            if not is_plain_file_name(name):
                raise ValueError(f"a hop table names its clips by file name inside the library; {name!r} is not "
                                 f"one: precompute the table again")
        k = len(self.hops)
        if not (0 <= self.src < k and 0 <= self.dst < k):
            raise ValueError(f"a hop table's source and destination ({self.src}, {self.dst}) must index its "
                             f"{k} clips")
        if n and (self.choices[:, 0].min() < 0 or self.choices[:, 0].max() >= k or self.choices[:, 2:].min() < 0):
            raise ValueError(f"a hop table's choices must name its {k} clips and stay no negative time")
        if not (np.isfinite(self.fps) and 0 < self.fps <= 1000) or self.blend_frames < 1 or not (
                np.isfinite(self.weight) and self.weight >= 0):
            raise ValueError(f"a hop table needs a frame rate up to 1000 fps (got {self.fps}), blends of a frame or more "
                             f"(got {self.blend_frames}) and a finite weight of 0 or more (got {self.weight})")

    def index(self, trigger: int) -> int:
        """The row of ``trigger``, in O(1) (the triggers are consecutive)."""
        row = int(trigger) - int(self.triggers[0]) if len(self.triggers) else -1
        if not 0 <= row < len(self.triggers):
            span = f"{self.triggers[0]}..{self.triggers[-1]}" if len(self.triggers) else "none"
            raise ValueError(f"trigger frame {trigger} is not in the table: its trigger frames are {span} (source "
                             f"frames whose direct transition fits in both clips)")
        return row

    def entry(self, trigger: int) -> dict:
        """The choice at ``trigger`` as the ``show --json`` object: trigger, hop (a file name),
        offset (o_sh), stay_src, stay_hop, smoothness (S), responsiveness (wR), direct."""
        row = self.index(trigger)
        hop, hop_offset, stay_src, stay_hop = (int(x) for x in self.choices[row])
        return {"trigger": int(self.triggers[row]), "hop": self.hops[hop], "offset": hop_offset,
                "stay_src": stay_src, "stay_hop": stay_hop, "smoothness": float(self.smoothness[row]),
                "responsiveness": float(self.responsiveness[row]), "direct": float(self.direct[row])}

    def entries(self) -> list[dict]:
        return [self.entry(t) for t in self.triggers]

    def at_own_timing(self) -> np.ndarray:
        """(T,) bool: where the hop is the destination at its own timing (``o_sh = offset``, no
        second stay): the direct transition, at the trigger or delayed by a first stay."""
        return (self.choices[:, 0] == self.dst) & (self.choices[:, 1] == self.offset) & (self.choices[:, 3] == 0)

    def is_direct(self) -> np.ndarray:
        """(T,) bool: where the direct transition won at the trigger itself (no stay)."""
        return self.at_own_timing() & (self.choices[:, 2] == 0)

    def summary(self) -> str:
        direct, own = self.is_direct(), self.at_own_timing()
        delayed = int((own & ~direct).sum())
        lines = [f"{self.hops[self.src]} -> {self.hops[self.dst]}, offset {self.offset} frames, blends of "
                 f"{self.blend_frames} frames at {self.fps:g} fps, weight {self.weight:.6g} per second",
                 f"{len(self.triggers)} trigger frames"
                 + (f" ({self.triggers[0]}..{self.triggers[-1]})" if len(self.triggers) else "")
                 + f": one hop at {int((~direct).sum())}, direct at {int(direct.sum())}"
                 + (f" (of the hops, {delayed} the direct transition delayed by a first stay)" if delayed else "")]
        if len(self.triggers):
            total = self.smoothness + self.responsiveness
            lines.append(f"mean cost S + wR {total.mean():.4g} against direct {self.direct.mean():.4g}")
        return "\n".join(lines)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the ``.npz`` file: choices and costs, names without folders, no timings."""
        return {"triggers": self.triggers, "choices": self.choices, "smoothness": self.smoothness,
                "responsiveness": self.responsiveness, "direct": self.direct, "hops": np.array(self.hops, dtype=str),
                "src": np.int64(self.src), "dst": np.int64(self.dst), "offset": np.int64(self.offset),
                "blend_frames": np.int64(self.blend_frames), "fps": np.float64(self.fps),
                "weight": np.float64(self.weight), "frames": np.asarray(self.frames, dtype=np.int64),
                "digests": np.array(self.digests, dtype=str)}

    def save(self, path) -> None:
        """Write the table as ``.npz`` to ``path`` whole or not at all."""
        import io

        from .files import write_bytes_atomically

        if any(np.isnan(a).any() for a in (self.smoothness, self.responsiveness, self.direct)):
            raise ValueError("the table has NaN costs: nothing was written; check the clips for values no capture has")
        buffer = io.BytesIO()
        np.savez(buffer, **self.to_arrays())
        write_bytes_atomically(path, buffer.getvalue())

    @classmethod
    def load(cls, path) -> "HopTable":
        import zipfile
        import zlib

        if not Path(path).is_file():
            # (a FIFO or a device would block or never end)
            raise ValueError(f"{path} is not a file: give the .npz written by `python -m core hops precompute`")
        from .budget import OverBudget, check_budget

        try:
            # (the sizes its members declare, before any is read: a few compressed bytes may
            # declare gigabytes)
            size = declared_array_bytes(path)
            check_budget(f"reading {path}", size, f"arrays of {size:,} bytes", remedy="give the table precompute wrote")
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except OverBudget:
            raise
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError,
                KeyError) as exc:
            # (a damaged member: zlib's error; an encrypted or unknown compression: zipfile's)
            raise ValueError(f"{path} is not a hop table (.npz written by `python -m core hops precompute`): "
                             f"{exc}") from None
        missing = {"triggers", "choices", "smoothness", "responsiveness", "direct", "hops", "src", "dst", "offset",
                   "blend_frames", "fps", "weight"} - set(arrays)
        if missing:
            raise ValueError(f"{path} is not a hop table: it lacks {sorted(missing)}")
        try:
            return cls._of_arrays(arrays)
        except (TypeError, ValueError, IndexError, OverflowError) as exc:
            raise ValueError(f"{path} is not a usable hop table: {exc}") from None

    @classmethod
    def _of_arrays(cls, arrays: dict) -> "HopTable":
        return cls(_whole(arrays["triggers"], "triggers"), _whole(arrays["choices"], "choices"),
                   arrays["smoothness"].astype(np.float64), arrays["responsiveness"].astype(np.float64),
                   arrays["direct"].astype(np.float64), tuple(str(h) for h in arrays["hops"]), int(arrays["src"]),
                   int(arrays["dst"]), int(arrays["offset"]), int(arrays["blend_frames"]), float(arrays["fps"]),
                   float(arrays["weight"]), _whole(arrays.get("frames", np.zeros(0)), "frames"),
                   tuple(str(d) for d in arrays.get("digests", ())))


def _whole(values: np.ndarray, what: str) -> np.ndarray:
    """A table's frames or indices ``values`` as int64; ``ValueError`` naming ``what`` when they are
    floats no frame has (NaN, infinite, fractional or past 2**62): cast, those became garbage, such
    as NaN's -9223372036854775808, after numpy's RuntimeWarning."""
    if values.dtype.kind == "f" and not (np.isfinite(values).all() and (np.abs(values) < 2.0**62).all()
                                         and (values == np.round(values)).all()):
        raise ValueError(f"its {what} must be whole numbers, and some are not")
    return values.astype(np.int64)


def declared_array_bytes(path) -> int:
    """The bytes the arrays of the ``.npz`` at ``path`` declare (each ``.npy`` header's shape and
    type, or its member's size if larger), read without the arrays: numpy makes an array of the
    declared size before it reads the data, and a few compressed bytes may declare gigabytes."""
    import zipfile

    total = 0
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            with archive.open(member) as f:
                version = np.lib.format.read_magic(f)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read_header(f)
            total += max(member.file_size, math.prod(shape) * dtype.itemsize)
    return total


# --------------------------------------------------------------------------- the library and the precompute


def is_plain_file_name(name: str) -> bool:
    """Whether ``name`` is a file name and nothing more: no folder, no ``..``, not absolute."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name \
        and Path(name).name == name


def checked_library(clips: Mapping[str, object], src: str, dst: str, rig=None, *,
                    unreadable: Mapping[str, str] | None = None) -> tuple[list[str], list, list[str]]:
    """The library's names (sorted) and clips, all at the source's frame rate, and warnings.

    ``ValueError`` when the source or destination is not in it, has no frames, or the destination
    is on another skeleton than the source; also when the destination is not at the source's scale
    (its bones more than twice or half as long: core.motion.scale_mismatch) or the legs of either
    point up (core.rig.legs_above_pelvis, with ``rig``, the source's joint roles, found on it when
    None). Any other clip of that kind, and each file of ``unreadable`` (``{name: why}``: files the
    caller could not read), is left out of the library, and one warning names them all with why:
    a folder may hold a clip of another rig or unit, which the search would never choose, and one
    such file must not refuse the rest (the Blender add-on's hop library skips them too). A clip at
    another rate is resampled to the source's (a warning says so).
    """
    # (in the calling process: the tasks need numpy only)
    from .motion import skeleton_mismatch
    from .rig import body_mismatch, check_legs_hang, find_rig

    if not clips:
        raise ValueError("the library is empty: give a folder of BVH clips on the source's skeleton")
    for role, name in (("source", src), ("destination", dst)):
        if name not in clips:
            raise ValueError(f"the {role} {name!r} is not in the library ({len(clips)} clips); add it")
        if clips[name].n_frames == 0:
            raise ValueError(f"the {role} {name!r} has no frames: give a clip with frames")
    ref = clips[src]
    detail = skeleton_mismatch(clips[dst].skeleton, ref.skeleton)
    if detail:
        raise ValueError(f"the destination {dst!r} is on another skeleton than the source {src!r} ({detail}): give "
                         "a source and destination of one skeleton")
    rig = find_rig(ref, clip=f"the source {src!r}") if rig is None else rig
    check_legs_hang(ref, rig, clip=f"the source {src!r}")
    left_out = dict(unreadable or {})
    kept, out, warnings = [], [], []
    for name in sorted(clips):
        m = clips[name]
        if name in (src, dst):
            why = "" if name == src else body_mismatch(m, ref, rig, f"the destination {name!r}", f"the source {src!r}")
            if why:
                raise ValueError(why)
        elif m.n_frames == 0:
            left_out[name] = f"clip {name!r} has no frames"
            continue
        elif detail := skeleton_mismatch(m.skeleton, ref.skeleton):
            left_out[name] = f"clip {name!r} is on another skeleton than the source {src!r} ({detail})"
            continue
        elif why := body_mismatch(m, ref, rig, f"clip {name!r}", f"the source {src!r}"):
            left_out[name] = why
            continue
        if abs(m.fps - ref.fps) > 1e-4 * ref.fps:
            warnings.append(f"clip {name!r} at {m.fps:g} fps is resampled to the source's {ref.fps:g} fps")
            m = m.resampled(ref.fps)
        kept.append(name)
        out.append(m)
    if left_out:
        warnings.insert(0, left_out_warning(left_out))
    return kept, out, warnings


def left_out_warning(left_out: Mapping[str, str]) -> str:
    """One warning for the library's clips left out (``{name: why}``), every one named with why."""
    n = len(left_out)
    return (f"{n} clip{'s' if n > 1 else ''} left out of the library (the table is made without "
            f"{'them' if n > 1 else 'it'}): " + "; ".join(left_out[name] for name in sorted(left_out)))


def clip_digest(motion) -> str:
    """A fingerprint of a clip's motion (its poses and rate, 16 hex digits of SHA-256): the same
    file read the same way gives the same one, any edit of a pose another. Kept in the table in
    place of paths, which say nothing about what a file holds now."""
    import hashlib

    digest = hashlib.sha256()
    for array in (motion.rotations, motion.positions, np.float64(motion.fps)):
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()[:16]


def blend_frames_of(blend_seconds: float, fps: float) -> int:
    """L = round(blend_seconds * fps), at least 1 frame (``ValueError`` otherwise)."""
    if not (blend_seconds > 0 and math.isfinite(blend_seconds)):
        raise ValueError(f"the blend must last a positive number of seconds, got {blend_seconds}")
    length = int(round(blend_seconds * fps))
    if length < 1:
        raise ValueError(f"a blend of {blend_seconds} s is less than a frame at {fps:g} fps; give a longer one")
    return length


def trigger_frames(n_src: int, n_dst: int, offset: int, blend_frames: int) -> np.ndarray:
    """The source frames whose direct transition fits in both clips (``n_*`` in frames), or
    ``ValueError`` saying which offsets leave some."""
    first = max(0, offset)
    last = min(n_src - blend_frames, n_dst - blend_frames + offset)
    if last < first:
        if n_src < blend_frames or n_dst < blend_frames:
            raise ValueError(f"a blend takes {blend_frames} frames and the source has {n_src}, the destination "
                             f"{n_dst}: give a shorter --blend or longer clips")
        raise ValueError(f"offset {offset} leaves no trigger frame: destination frame k plays at source frame "
                         f"k + offset, and with a source of {n_src} frames, a destination of {n_dst} and blends of "
                         f"{blend_frames} frames the offset must lie in {-(n_dst - blend_frames)}..{n_src - blend_frames}")
    return np.arange(first, last + 1, dtype=np.int64)


class DistanceCache(dict):
    """Distance matrices per clip pair: ``{(name_a, name_b): D}``, for one blend length and one
    normalisation (the source's up axis and leg length), which it records and checks."""

    def __init__(self):
        super().__init__()
        self.measure: tuple | None = None

    def measured_as(self, blend_frames: int, normalisation: dict) -> None:
        measure = (int(blend_frames), tuple(np.round(normalisation["up"], 12)), float(normalisation["leg"]))
        if self.measure != measure:
            self.clear()
            self.measure = measure


def _eq5_conditions(lengths: Sequence[int], blend_frames: int, n: int, seed: int) -> list[tuple[int, int, int, int]]:
    """eq. (5)'s ``n`` random conditions ``(src, dst, offset, trigger)``: clips drawn from those a
    blend fits in, the trigger and the destination frame it meets uniform over their windows."""
    usable = [i for i, f in enumerate(lengths) if f >= blend_frames]
    if not usable:
        raise ValueError(f"no clip of the library is as long as a blend ({blend_frames} frames)")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        src, dst = (usable[j] for j in rng.integers(len(usable), size=2))
        trigger = int(rng.integers(lengths[src] - blend_frames + 1))
        k = int(rng.integers(lengths[dst] - blend_frames + 1))
        out.append((src, dst, trigger - k, trigger))
    return out


def default_weight_pairs(lengths: Sequence[int], blend_frames: int, *, n_conditions: int = N_CONDITIONS,
                         seed: int = 0) -> set[tuple[int, int]]:
    """The clip pairs ``(a, b)`` whose distance matrices :func:`default_weight` reads (same arguments)."""
    conditions = _eq5_conditions(lengths, blend_frames, n_conditions, seed)
    every = range(len(lengths))
    return {(s, i) for s, _, _, _ in conditions for i in every} | {(i, d) for _, d, _, _ in conditions for i in every}


def default_weight(clouds: Sequence[np.ndarray], blend_frames: int, fps: float, *, runner=None, cache=None,
                   n_conditions: int = N_CONDITIONS, s_max_seconds: float = S_MAX_SECONDS, seed: int = 0) -> float:
    """eq. (5): ``w = (mean S without stays - mean S with stays <= s_max and w = 0) / (2 s_max)``,
    over ``n_conditions`` seeded random conditions of the library; returned per second.

    clouds  every library clip's point cloud (:func:`library_point_clouds`); any clip may be the
            source, the destination and the hop of a condition.
    cache   ``{(a, b): D}`` by clip index, filled with the matrices computed (optional).
    """
    s_max = max(1, int(round(s_max_seconds * fps)))
    conditions = _eq5_conditions([len(c) for c in clouds], blend_frames, n_conditions, seed)
    matrices = _distance_matrices(clouds, default_weight_pairs([len(c) for c in clouds], blend_frames,
                                                               n_conditions=n_conditions, seed=seed),
                                  blend_frames, runner, cache)
    without, within = [], []
    for src, dst, offset, trigger in conditions:
        from_source = [matrices[src, i] for i in range(len(clouds))]
        to_destination = [matrices[i, dst] for i in range(len(clouds))]
        stacked = StackedHops.of(from_source, to_destination, blend_frames)
        for out, bound in ((without, 0), (within, s_max)):
            found = search_one_hop(trigger, from_source, to_destination, offset=offset, blend_frames=blend_frames,
                                   dst=dst, weight=0.0, max_stay=bound, stacked=stacked)
            out.append(found.smoothness)
    return max(float(np.mean(without) - np.mean(within)), 0.0) / (2 * s_max) * fps


def _distance_matrices(clouds, pairs, blend_frames: int, runner, cache) -> dict:
    """``{(a, b): D(a, b)}`` for ``pairs``, computing (through ``runner``) only those not in ``cache``."""
    cache = {} if cache is None else cache
    missing = sorted(p for p in pairs if p not in cache)
    if missing:
        runner = SerialRunner() if runner is None else runner
        for pair, matrix in zip(missing, runner.map(distance_task, missing, clouds=list(clouds),
                                                    blend_frames=int(blend_frames))):
            cache[pair] = matrix
    return {p: cache[p] for p in pairs}


# (within 1 % of what tracemalloc sees on 2,000 x 2,000, 20,000 x 300 and 6,000 x 1,000 frames)
def window_distance_matrix_bytes(frames_a: int, frames_b: int) -> int:
    """Bytes :func:`window_distance_matrix` holds at its peak for clips of ``frames_a`` and ``frames_b``
    frames: 64 per pair of frames (the products, their window sums, the terms of D) and the
    sheared diagonals, 16 per frame of the shorter clip and diagonal."""
    return 64 * frames_a * frames_b + 16 * min(frames_a, frames_b) * (frames_a + frames_b)


def precompute_pairs(lengths: Sequence[int], src: int, dst: int, blend_frames: int, *, weight_given: bool,
                     seed: int = 0) -> set[tuple[int, int]]:
    """The clip pairs ``(a, b)`` whose distance matrices :func:`precompute` computes: the source
    against every clip, every clip against the destination, and eq. (5)'s when no weight is given."""
    every = range(len(lengths))
    pairs = {(src, i) for i in every} | {(i, dst) for i in every}
    if not weight_given:
        pairs |= default_weight_pairs(lengths, blend_frames, seed=seed)
    return pairs


def precompute_bytes(lengths: Sequence[int], joints: int, src: int, dst: int, pairs, blend_frames: int,
                     processes: int = 1) -> int:
    """Bytes :func:`precompute` holds at its peak for clips of ``lengths`` frames (at the source's
    rate) on ``joints`` joints and the distance ``pairs`` it computes (:func:`precompute_pairs`):
    the clips and their point clouds (10 doubles a joint and frame), the matrices kept, and per
    process computing at once on this machine (``processes``: 0 for a cluster elsewhere) the
    temporaries of the largest matrix or the search's copies of the matrices it reads."""
    windows = [max(n - int(blend_frames) + 1, 0) for n in lengths]
    kept = 80 * joints * sum(lengths) + 8 * sum(windows[a] * windows[b] for a, b in pairs)
    searched = 8 * sum(windows[src] * w + w * windows[dst] for w in windows)
    largest = max((window_distance_matrix_bytes(lengths[a], lengths[b]) for a, b in pairs), default=0)
    return kept + int(processes) * max(largest, 2 * searched)


def check_precompute_size(names: Sequence[str], lengths: Sequence[int], joints: int, src: int, dst: int, pairs,
                          blend_frames: int, processes: int = 1) -> None:
    """Refuse (core.budget) a precompute the memory budget cannot hold (:func:`precompute_bytes`)."""
    from .budget import check_budget  # (here, as core.rig: the tasks shipped to workers need numpy only)

    windows = [max(n - int(blend_frames) + 1, 0) for n in lengths]
    longest = int(np.argmax(lengths))
    check_budget("hops precompute", precompute_bytes(lengths, joints, src, dst, pairs, blend_frames, processes),
                 f"{len(lengths)} clips, the longest {names[longest]!r} of {lengths[longest]:,} frames; distance "
                 f"matrices of {sum(windows[a] * windows[b] for a, b in pairs):,} pairs of windows"
                 + (f", {processes} processes" if processes > 1 else ""),
                 remedy="give shorter clips (the source and destination around the transition)")


def precompute(clips: Mapping[str, object], src: str, dst: str, offset: int, *, blend_seconds: float = BLEND_SECONDS,
               weight: float | None = None, runner=None, cache: DistanceCache | None = None, rig=None,
               seed: int = 0, processes: int = 1, min_gain: float = HOP_MIN_GAIN) -> HopTable:
    """The one-hop table of every trigger frame of ``src`` towards ``dst`` at ``offset`` (section 3).

    clips    ``{file name: Motion}``, the library: every clip that may be a hop, the source and
             the destination among them, all on the source's skeleton (:func:`checked_library`
             leaves out clips of another scale or whose legs point up; it gives the warnings).
    offset   o_s->d: destination frame k plays at source frame k + offset.
    weight   w per second; None: eq. (5)'s default (seeded by ``seed``), computed here, once,
             before the search is spread.
    runner   ``map(fn, items, **shared)``: :class:`SerialRunner` when None, or core.cluster's.
    cache    a :class:`DistanceCache` kept between calls (keys are clip names), or None.
    rig      the source's joint roles; found on it when None.
    processes  how many processes of ``runner`` compute at once on this machine (0 for a
             cluster elsewhere), for the memory the precompute needs (:func:`precompute_bytes`),
             checked against the budget (core.budget) before any matrix is computed.
    min_gain a hop is kept only when :func:`worth_a_hop` (0: whatever it gains).

    The work is two ``runner.map`` calls: the distance matrices of the clip pairs needed (eq. (5)'s
    too), then the search over chunks of trigger frames. Stays are bounded by the clips, and by eq. (5)'s s_max
    when the weight is 0.
    """
    names, motions, _ = checked_library(clips, src, dst, rig)
    s, d = names.index(src), names.index(dst)
    fps = motions[s].fps
    length = blend_frames_of(blend_seconds, fps)
    triggers = trigger_frames(motions[s].n_frames, motions[d].n_frames, int(offset), length)
    if weight is not None and not (weight >= 0 and math.isfinite(weight)):
        raise ValueError(f"the weight must be a number >= 0 (per second), got {weight}")
    lengths = [m.n_frames for m in motions]
    pairs = precompute_pairs(lengths, s, d, length, weight_given=weight is not None, seed=seed)
    check_precompute_size(names, lengths, len(motions[s].skeleton), s, d, pairs, length, processes)
    clouds, normalisation = library_point_clouds(motions, s, rig)
    runner = SerialRunner() if runner is None else runner
    by_index: dict = {}
    if cache is not None:
        cache.measured_as(length, normalisation)
        by_index = {(names.index(a), names.index(b)): m for (a, b), m in cache.items() if a in names and b in names}
    # (eq. (5)'s matrices, when no weight is given, are computed with the search's, in one map)
    matrices = _distance_matrices(clouds, pairs, length, runner, by_index)
    if weight is None:
        weight = default_weight(clouds, length, fps, cache=by_index, seed=seed)
    if cache is not None:
        cache.update({(names[a], names[b]): m for (a, b), m in by_index.items()})
    s_max = max(1, int(round(S_MAX_SECONDS * fps)))
    chunks = np.array_split(triggers, max(1, math.ceil(len(triggers) / TRIGGERS_PER_TASK)))
    found = runner.map(search_task, chunks, from_source=[matrices[s, i] for i in range(len(names))],
                       to_destination=[matrices[i, d] for i in range(len(names))], offset=int(offset),
                       blend_frames=length, dst=d, weight=weight / fps, max_stay=s_max if weight == 0 else None,
                       min_gain=min_gain)
    choices = np.concatenate([c for c, _ in found])
    costs = np.concatenate([c for _, c in found])
    return HopTable(triggers, choices, costs[:, 0].copy(), costs[:, 1].copy(), costs[:, 2].copy(), tuple(names), s,
                    d, int(offset), length, float(fps), float(weight), np.array([m.n_frames for m in motions]),
                    tuple(clip_digest(m) for m in motions))


# --------------------------------------------------------------------------- one trigger, no table


def search_trigger(clouds: Sequence[np.ndarray], src: int, dst: int, trigger: int, *, offset: int, blend_frames: int,
                   weight: float, max_stay: int | None = None, min_gain: float = HOP_MIN_GAIN,
                   progress: Progress | None = None) -> Found:
    """:func:`search_one_hop` for one trigger frame of a library that was not precomputed (the add-on's Insert Hop).

    clouds   every clip's point cloud (:func:`library_point_clouds`), each a hop candidate as in
             :func:`search_one_hop`: ``clouds[src]`` the source, ``clouds[dst]`` the destination.
    weight   w per frame; ``max_stay`` as :func:`search_one_hop` (required when ``weight`` is 0).
    min_gain a hop is kept only when :func:`worth_a_hop` (0: whatever it gains).
    progress (:mod:`core.progress`) hears the share of the clips measured, then 1 once searched.

    The same choice as :func:`search_one_hop` on whole matrices, from only the windows it can
    reach: the direct transition's D costs ``wR`` no more than D, so the stays add up to at most
    ``R_max = D / w`` frames, and the search reads source windows ``t .. t + R_max`` of
    ``D(src, i)`` and destination windows ``t + L - offset ..`` (R_max further) of ``D(i, dst)``.
    Only those rows and columns are computed (each a :func:`window_distance_matrix` of the clips cut to
    them); the rest of each matrix is NaN, never read. Sums over other frames round differently,
    so costs may differ from the whole matrices' in the last bits.
    """
    length = int(blend_frames)
    n_windows = [max(len(c) - length + 1, 0) for c in clouds]
    n_src, n_dst = n_windows[src], n_windows[dst]
    k = trigger - offset
    if not direct_fits(trigger, offset, n_src, n_dst):
        raise ValueError(f"trigger {trigger}: the direct transition does not fit in the clips (a blend of {length} "
                         f"frames from source frame {trigger} ({n_src + length - 1} frames) into destination frame "
                         f"{k} ({n_dst + length - 1} frames))")
    direct = float(window_distance_matrix(clouds[src][trigger:trigger + length], clouds[dst][k:k + length],
                                          length)[0, 0])
    w = float(weight)
    if w > 0:
        most = int(math.floor(direct / w)) + 1  # (+1: floor of a rounded quotient may fall one short)
    elif max_stay is not None:
        most = 2 * int(max_stay)
    else:
        raise ValueError("with weight 0 the stays need a bound: give max_stay")
    rows = slice(trigger, min(trigger + most + 1, n_src))  # source windows of the first blend
    first_dst = trigger + length - offset  # destination window of the second blend with no stay
    columns = slice(min(first_dst, n_dst), min(first_dst + most + 1, n_dst))
    from .budget import check_budget  # (here, as core.rig: the tasks shipped to workers need numpy only)

    # (the matrices are whole, the windows not searched NaN; the largest part computed at once)
    check_budget("the hop search", 8 * sum(n_src * w + w * n_dst for w in n_windows)
                 + max(window_distance_matrix_bytes(rows.stop - rows.start + length - 1, len(c)) for c in clouds),
                 f"{len(clouds)} clips, {n_src + length - 1:,} frames of the source, {n_dst + length - 1:,} of the "
                 f"destination, {sum(n_windows):,} windows in all", remedy="give shorter clips")
    from_source, to_destination = [], []
    for i, cloud in enumerate(clouds):
        part = np.full((n_src, n_windows[i]), np.nan)
        part[rows] = window_distance_matrix(clouds[src][rows.start:rows.stop + length - 1], cloud, length)
        if i == src:  # a clip against itself on the same frames: 0 by construction (``same``)
            _zero_on_diagonal(part, rows)
        from_source.append(part)
        part = np.full((n_windows[i], n_dst), np.nan)
        part[:, columns] = window_distance_matrix(cloud, clouds[dst][columns.start:columns.stop + length - 1], length)
        if i == dst:
            _zero_on_diagonal(part, columns)
        to_destination.append(part)
        report(progress, (i + 1) / (len(clouds) + 1))  # (the search itself about one clip's share)
    found = search_one_hop(trigger, from_source, to_destination, offset=offset, blend_frames=length, dst=dst,
                           weight=w, max_stay=max_stay)
    report(progress, 1.0)
    return worth_a_hop(found, dst=dst, offset=offset, min_gain=min_gain)


def _zero_on_diagonal(matrix: np.ndarray, span: slice) -> None:
    """``matrix[j, j] = 0`` for ``j`` in ``span``, in place (where ``window_distance_matrix(..., same=True)`` has 0)."""
    j = np.arange(span.start, span.stop)
    matrix[j, j] = 0.0
