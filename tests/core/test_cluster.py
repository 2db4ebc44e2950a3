"""core.cluster: the hops precompute's maps on Dask give what a serial loop gives, on workers that
have Python, numpy and Dask but not this project; the Blender extension never needs Dask."""

import ast
import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core import hops
from core.cluster import LOCAL_SCHEDULER_HTTP, DaskRunner
from core.motion import Skeleton, forward_kinematics
from core.quat import normalize

ROOT = Path(__file__).resolve().parents[2]
# (generous: the machine running the tests may be busy with other work)
TIMEOUT = 120


def random_poses(seed: int, clips: int = 6, frames: int = 40, joints: int = 5):
    """Local rotations of ``clips`` clips (F, J, 4), each different, and one set of local positions
    (F, J, 3) and parents (a chain with a branch) they share."""
    rng = np.random.default_rng(seed)
    rotations = [normalize(rng.normal(size=(frames, joints, 4))) for _ in range(clips)]
    positions = rng.normal(size=(frames, joints, 3))
    parents = np.array([-1, 0, 1, 1, 3])[:joints]
    return rotations, positions, parents


def serial_map(fn, items, **shared):
    """What core.hops.SerialRunner.map does: the reference every runner must reproduce."""
    return [fn(item, **shared) for item in items]


def assert_same_results(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert np.array_equal(x, y)


@pytest.fixture(scope="module")
def two_workers():
    """A LocalCluster of two worker processes, closed after the module's tests."""
    with DaskRunner(n_workers=2, progress=False, timeout=TIMEOUT) as runner:
        yield runner


# --- the same results as the serial loop


def test_a_local_cluster_of_two_workers_gives_the_serial_results_in_order(two_workers):
    # forward kinematics runs the project's own helpers (layouts, plane products) on the workers
    rotations, positions, parents = random_poses(seed=1)
    assert two_workers.workers == 2
    got = two_workers.map(forward_kinematics, rotations, positions=positions, parents=parents)
    assert_same_results(got, serial_map(forward_kinematics, rotations, positions=positions, parents=parents))


def test_no_items_give_no_results(two_workers):
    assert two_workers.map(forward_kinematics, [], positions=np.zeros((1, 1, 3)), parents=np.array([-1])) == []


_RECEIVED = []


def worker_and_copy(item, *, table):
    """Which worker ran this task and which copy of ``table`` it was given (each copy is kept, so
    that two copies can never share an id)."""
    from distributed import get_worker

    _RECEIVED.append(table)
    return get_worker().address, id(table)


def test_a_shared_array_reaches_each_worker_once_not_once_per_item(two_workers):
    table = np.arange(200_000, dtype=np.float64)
    runs = two_workers.map(worker_and_copy, range(24), table=table)
    copies = {}
    for worker, copy in runs:
        copies.setdefault(worker, set()).add(copy)
    assert all(len(ids) == 1 for ids in copies.values()), copies


def alignment(item, *, arrays):
    """Whether each array this task got is aligned, and a few arrays of odd sizes back."""
    got = [bool(a.flags.aligned) for a in [item, *arrays]]
    return got, [np.arange(3, dtype=np.int8), item * 2.0, np.ones(5, dtype=np.int8), item + 1.0]


def test_every_array_a_task_gets_or_gives_is_aligned(two_workers):
    # (Dask may leave a float64 array at an address that is no multiple of 8, and numpy's sums over
    # a misaligned array round differently in the last bit: the table would not be the serial one)
    arrays = [a for k in range(1, 8) for a in (np.arange(k, dtype=np.int8), np.linspace(0.0, 1.0, 50 + k))]
    runs = two_workers.map(alignment, [np.linspace(0.0, 1.0, 10 + k) for k in range(8)], arrays=arrays)
    assert all(all(got) for got, _ in runs)
    assert all(a.flags.aligned for _, results in runs for a in results)


def fails_on_three(item):
    if item == 3:
        raise ValueError("item 3 cannot be done")
    return item


def test_a_failing_task_raises_its_error_here(two_workers):
    with pytest.raises(ValueError, match="item 3 cannot be done"):
        two_workers.map(fails_on_three, range(6))


def test_an_object_of_the_project_is_refused_before_anything_is_sent(two_workers):
    skeleton = Skeleton(names=("hips", "spine"), parents=np.array([-1, 0]), offsets=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shared 'skeleton'.*core.motion.Skeleton.*plain data"):
        two_workers.map(fails_on_three, [1], skeleton=skeleton)
    with pytest.raises(ValueError, match=r"item 1\[0\] is a core.motion.Skeleton"):
        two_workers.map(fails_on_three, [(1,), (skeleton,)])


# --- the one-hop table (core.hops) through Dask

SMALL_LIBRARY = ("bow_normal_001", "bye_normal_001", "guide_normal_001", "respond_normal_001")


@pytest.fixture(scope="module")
def small_library(mocap):
    return {f"{name}.bvh": mocap(f"bandai1/{name}") for name in SMALL_LIBRARY}


def assert_same_table(got, expected):
    got, expected = got.to_arrays(), expected.to_arrays()
    assert got.keys() == expected.keys()
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name


def test_the_hop_table_through_a_local_cluster_is_the_serial_table(two_workers, small_library):
    # eq. (5)'s weight included: its distance matrices go through the runner too
    args = (small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10)
    serial = hops.precompute(*args, runner=hops.SerialRunner())
    assert_same_table(hops.precompute(*args, runner=two_workers), serial)


# --- a worker without this project


@pytest.fixture
def bare_worker(tmp_path):
    """A scheduler (in this process) and one `dask worker` started as the README says, from an
    empty folder with PYTHONPATH cleared: its Python has numpy and Dask, not this project."""
    from distributed import LocalCluster

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                      scheduler_kwargs=LOCAL_SCHEDULER_HTTP) as scheduler:
        worker = subprocess.Popen(
            [sys.executable, "-m", "dask", "worker", scheduler.scheduler_address,
             "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--local-directory", str(tmp_path)],
            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            yield scheduler.scheduler_address
        finally:
            worker.terminate()
            try:
                worker.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()


def test_a_worker_that_cannot_import_the_project_runs_its_functions(bare_worker):
    rotations, positions, parents = random_poses(seed=2, clips=3)
    with DaskRunner(bare_worker, progress=False, timeout=TIMEOUT) as runner:
        cannot_import = runner.client.run(lambda: importlib.util.find_spec("core") is None)
        assert cannot_import and all(cannot_import.values()), cannot_import
        got = runner.map(forward_kinematics, rotations, positions=positions, parents=parents)
    assert_same_results(got, serial_map(forward_kinematics, rotations, positions=positions, parents=parents))


def test_a_worker_that_cannot_import_the_project_computes_the_hop_table(bare_worker, small_library):
    args = (small_library, "bye_normal_001.bvh", "respond_normal_001.bvh", 10)
    with DaskRunner(bare_worker, progress=False, timeout=TIMEOUT) as runner:
        assert all(runner.client.run(lambda: importlib.util.find_spec("core") is None).values())
        table = hops.precompute(*args, weight=0.05, runner=runner)
    assert_same_table(table, hops.precompute(*args, weight=0.05))


def test_the_command_line_precomputes_on_a_running_scheduler_as_in_this_process(bare_worker, tmp_path, capsys):
    from core.__main__ import main

    mocap = Path(__file__).resolve().parents[3] / "shared" / "mocap" / "bandai1"
    require(mocap)
    folder = tmp_path / "library"
    folder.mkdir()
    for name in ("bye_normal_001", "guide_normal_001", "respond_normal_001"):
        (folder / f"{name}.bvh").symlink_to(mocap / f"{name}.bvh")
    args = ["hops", "precompute", str(folder), "--src", str(folder / "bye_normal_001.bvh"),
            "--dst", str(folder / "respond_normal_001.bvh"), "--offset", "10", "--weight", "0.05"]
    assert main([*args, "-o", str(tmp_path / "remote.npz"), "--scheduler", bare_worker]) == 0
    assert main([*args, "-o", str(tmp_path / "here.npz"), "--workers", "0"]) == 0
    with np.load(tmp_path / "remote.npz") as a, np.load(tmp_path / "here.npz") as b:
        assert sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files)
    # a number of local workers beside a running scheduler is refused, saying to give one of the two
    assert main([*args, "-o", str(tmp_path / "both.npz"), "--scheduler", bare_worker, "--workers", "2"]) == 2
    assert "give one of the two" in capsys.readouterr().err


# --- how the runner is asked for


def test_a_number_of_workers_with_a_scheduler_is_refused():
    with pytest.raises(ValueError, match="give one of the two"):
        DaskRunner("tcp://127.0.0.1:8786", n_workers=2)
    with pytest.raises(ValueError, match="at least 1"):
        DaskRunner(n_workers=0)


def test_an_address_where_no_scheduler_answers_says_to_start_one():
    with socket.socket() as probe:  # (a port nothing listens on once the probe is closed)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ValueError, match=f"no Dask scheduler answered at 'tcp://127.0.0.1:{port}'.*dask scheduler"):
        with DaskRunner(f"tcp://127.0.0.1:{port}", timeout=2):
            pass


def test_a_scheduler_without_workers_says_to_start_one():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                      scheduler_kwargs=LOCAL_SCHEDULER_HTTP) as scheduler:
        with pytest.raises(ValueError, match=f"no Dask worker joined.*`dask worker {scheduler.scheduler_address}`"):
            with DaskRunner(scheduler.scheduler_address, timeout=2):
                pass


def test_map_before_the_cluster_starts_says_how_to_start_it():
    with pytest.raises(RuntimeError, match="with DaskRunner"):
        DaskRunner(n_workers=1).map(fails_on_three, [1])


# --- the Blender extension never needs Dask

DASK = {"dask", "distributed"}
DASK_COMPANIONS = {"tqdm", "cloudpickle"}


def imports(path: Path, package: str, *, module_level_only: bool = False) -> set[str]:
    """Absolute names of the modules (and names) ``path``, a module of ``package``, imports, with
    relative imports resolved; anywhere in the file, or only in what runs when it is imported."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = ast.walk(tree) if not module_level_only else _module_level(tree.body)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".") if package else []
            base = ".".join([*parts[: len(parts) - node.level + 1], node.module or ""]) if node.level else node.module
            base = base.strip(".")
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _module_level(body):
    """Statements run on import: the module's body, through if/try/with but not into functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _module_level(getattr(node, field, []) or [])


def top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_dask_is_imported_by_core_cluster_alone():
    offenders = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        if path.name == "cluster.py":
            continue
        found = ((top(imports(path, "core")) & DASK)
                 | (top(imports(path, "core", module_level_only=True)) & DASK_COMPANIONS))
        if found:
            offenders[path.name] = sorted(found)
    assert not offenders, f"only core/cluster.py may import Dask (and tqdm or cloudpickle on import): {offenders}"


def test_the_extension_imports_neither_dask_nor_core_cluster():
    offenders = {}
    for path, package in [(ROOT / "__init__.py", ""), *((p, "addon") for p in sorted((ROOT / "addon").rglob("*.py")))]:
        names = imports(path, package)
        found = (top(names) & (DASK | DASK_COMPANIONS)) | {n for n in names if n.startswith("core.cluster")}
        if found:
            offenders[str(path.relative_to(ROOT))] = sorted(found)
    assert not offenders, f"the Blender extension must not need Dask: {offenders}"


def test_the_import_check_sees_relative_and_late_imports(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("from .cluster import DaskRunner\nfrom .. import quat\nimport dask.distributed\n"
                      "try:\n    import cloudpickle\nexcept ImportError:\n    pass\n"
                      "def late():\n    import tqdm\n")
    assert imports(module, "core.sub") == {"core.sub.cluster", "core.sub.cluster.DaskRunner", "core", "core.quat",
                                           "dask.distributed", "cloudpickle", "tqdm"}
    assert top(imports(module, "core.sub", module_level_only=True)) == {"core", "dask", "cloudpickle"}


@pytest.fixture
def listener():
    """A TCP server on a free local port that accepts and then says ``reply`` (None: nothing)."""
    import threading

    servers = []

    def start(reply: bytes | None) -> str:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        servers.append(server)

        def serve():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                if reply is not None:
                    conn.sendall(reply)
                conn.recv(1)  # (holds the connection until the client goes)

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


def test_an_address_where_something_else_answers_is_refused_without_allocating_what_it_says(listener):
    """The trust issue: a web server at the --scheduler address made Dask allocate 3 EiB (its
    reply read as a message length), and a silent listener hung past 200 s."""
    import time

    t = time.perf_counter()
    with pytest.raises(ValueError, match="is not a Dask scheduler"):
        with DaskRunner(listener(b"HTTP/1.1 400 Bad Request\r\n\r\n"), timeout=2):
            pass
    with pytest.raises(ValueError, match="said nothing"):
        with DaskRunner(listener(None), timeout=2):
            pass
    assert time.perf_counter() - t < 10


def test_an_address_of_another_scheme_or_no_address_says_what_to_give():
    with pytest.raises(ValueError, match="only tcp://"):
        with DaskRunner("tls://127.0.0.1:8786", timeout=2):
            pass
    with pytest.raises(ValueError, match="is not an address"):
        with DaskRunner("tcp://nowhere", timeout=2):
            pass


def _die(item):
    os._exit(1)  # the worker process dies, as killed


def test_a_cluster_that_loses_every_worker_says_so_rather_than_a_traceback():
    """The trust issue: killing every Dask worker mid-run ended in FutureCancelledError. A task
    whose workers keep dying is given up on by the scheduler (KilledWorker); either way the
    command says what happened and what to do."""
    with DaskRunner(n_workers=1, progress=False, timeout=TIMEOUT) as runner:
        with pytest.raises(ValueError, match="lost its workers before their results came back.*start workers and run again"):
            runner.map(_die, [1, 2])
