"""Running the hops precompute's independent tasks on Dask: a local cluster, or one on several machines.

Koyama & Goto's precompute (issue 13, item 4) is a few maps of a pure function
over independent items: the distance matrices over clip pairs, the search over
chunks of trigger frames. :class:`DaskRunner` runs such a map on Dask
(``dask.distributed``) with the interface of ``core.hops.SerialRunner``::

    with DaskRunner(n_workers=2) as runner:             # a LocalCluster of 2 processes
        results = runner.map(fn, items, **shared)       # == [fn(item, **shared) for item in items]
    with DaskRunner("tcp://HOST:8786") as runner:       # the workers of a running scheduler
        ...

Local or remote, it is the same code path: a ``Client`` of a cluster.

What the workers need is Python, numpy and Dask, not this project:

- The function is sent by value. Dask pickles a task graph with the standard
  pickler, which sends a module-level function as a reference (its module's name)
  that the worker would have to import; and it honours
  ``cloudpickle.register_pickle_by_value`` only for an object sent on its own
  whose module is itself registered. So the function is pickled here by
  cloudpickle with this project's package registered by value (its code and
  that of every function, class and module of the package it reaches at call
  time), and sent once to every worker (``scatter(..., broadcast=True)``) in a
  wrapper that ``pickle.loads`` alone unpickles.
- ``shared`` (the large arrays every task reads) is sent once to every worker,
  never once per item; each task gets the worker's copy.
- Items, shared values and results must be plain data (numpy arrays, numbers,
  strings, and tuples, lists or dicts of them): an object of a class of this
  project would need the project on the worker. :meth:`DaskRunner.map` refuses
  such inputs before anything is sent.
- Every array a task gets, and every array of its results, is aligned as numpy
  allocates it. Dask hands an array the bytes where its message put them, which
  for float64 data may be an address that is not a multiple of 8; numpy takes
  other loops over misaligned data, whose sums may round differently in the
  last bit (a distance matrix came back 1e-17 off), and the hop table would
  differ from the serial one. A misaligned array is
  copied (``numpy.require(..., requirements="A")``): a shared one once per
  worker, an item per task, a result here.

Dask is imported here only: the command line and the tests import this module,
the Blender extension never does.
"""

from __future__ import annotations

import sys
import uuid
from concurrent.futures import CancelledError
from functools import partial

import cloudpickle
import dask
import numpy as np
from dask.utils import apply
from distributed import Client, KilledWorker, LocalCluster, as_completed
from tqdm import tqdm

#: The package whose functions are sent by value: this project's core ("core").
PROJECT_PACKAGE = __name__.rpartition(".")[0] or __name__


#: A local scheduler's HTTP server (health and metrics; the dashboard needs bokeh, not required):
#: on this machine only and on a free port, so that two runs at once do not clash on 8787.
LOCAL_SCHEDULER_HTTP = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


#: The environment of a local worker process, beside what Dask sets. Dask sets glibc's
#: MALLOC_TRIM_THRESHOLD_ for its workers, and setting any of malloc's thresholds stops glibc from
#: raising the size above which each block is mapped afresh from the system (128 KiB at start, 32 MiB
#: at most); the search's temporaries of a few MB are then mapped and unmapped every time, a page
#: fault per page: 2.6 times slower here. Fixing that size at glibc's own ceiling undoes it.
#: (Workers on other machines are started with it too: see the README.)
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20)}


class _ByValue:
    """A function on its way to the workers: unpickles as the function itself, rebuilt from the
    cloudpickle bytes by ``pickle.loads`` (which every Python has), whatever pickler sends it."""

    __slots__ = ("payload",)

    def __init__(self, payload: bytes):
        self.payload = payload

    def __reduce__(self):
        return cloudpickle.loads, (self.payload,)


def pickle_by_value(fn) -> bytes:
    """``fn`` pickled with its code (cloudpickle), this project's package registered by value for
    the call: functions, classes and modules of the project it refers to travel with it, so
    that a worker without the project can run it. Modules outside the project (numpy, the
    standard library) stay references, imported on the worker. The registry is left as it was."""
    package = sys.modules[PROJECT_PACKAGE]
    registered_before = PROJECT_PACKAGE in cloudpickle.list_registry_pickle_by_value()
    if not registered_before:
        cloudpickle.register_pickle_by_value(package)
    try:
        return cloudpickle.dumps(fn)
    finally:
        if not registered_before:
            cloudpickle.unregister_pickle_by_value(package)


def _map_arrays(value, fn):
    """``value`` with ``fn`` applied to every numpy array in it, looking inside tuples, lists and
    dicts (of exactly those types; anything else is left as it is)."""
    kind = type(value)
    if kind is np.ndarray:
        return fn(value)
    if kind is dict:
        return {key: _map_arrays(item, fn) for key, item in value.items()}
    if kind is list or kind is tuple:
        return kind(_map_arrays(item, fn) for item in value)
    return value


def _aligned_here(array: np.ndarray) -> np.ndarray:
    return array if array.flags.aligned else np.require(array, requirements="A")


def _run_aligned(fn, copies: dict, item, shared: dict):
    """A task, run on a worker: ``fn(item, **shared)`` with every array of its arguments aligned.

    ``copies`` belongs to the worker's copy of this task function (one per worker and map): a
    shared array that arrived misaligned is copied once there, not once per task.
    """

    def aligned_once(array: np.ndarray) -> np.ndarray:
        if array.flags.aligned:
            return array
        kept = copies.get(id(array))
        if kept is None or kept[0] is not array:
            # (the original is kept too, so that its id cannot pass to another array meanwhile)
            kept = copies[id(array)] = (array, np.require(array, requirements="A"))
        return kept[1]

    return fn(_map_arrays(item, _aligned_here), **{name: _map_arrays(value, aligned_once)
                                                   for name, value in shared.items()})


def _check_plain(value, where: str) -> None:
    """Raise ``ValueError`` if ``value`` holds an object of a class of this project (which a
    worker without the project could not unpickle), looking inside tuples, lists, sets and dicts."""
    kind = type(value)
    if kind.__module__ == PROJECT_PACKAGE or kind.__module__.startswith(PROJECT_PACKAGE + "."):
        raise ValueError(
            f"{where} is a {kind.__module__}.{kind.__qualname__}: what a task receives must be plain data "
            "(numpy arrays, numbers, strings, and tuples, lists or dicts of them), so that a Dask worker "
            "needs only Python, numpy and Dask, not this project; pass the arrays it holds instead")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, f"a key of {where}")
            _check_plain(item, f"{where}[{key!r}]")
    elif isinstance(value, (tuple, list, set, frozenset)):
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]")


# A Dask scheduler greets a new connection at once with a short message whose first 8 bytes
# are its length (little-endian); what says nothing, or something else, is not one (Dask
# itself would read such bytes as a length and allocate it: 3 EiB for an HTTP server's)
GREETING_S = 5.0
GREETING_MAX_BYTES = 1 << 20


def check_scheduler(address: str, timeout: float) -> None:
    """``ValueError`` saying what to give unless a Dask scheduler answers at ``address``
    (``tcp://HOST:PORT``): another scheme, nothing listening, a listener that stays silent,
    or one that says something else."""
    import socket

    scheme, _, rest = address.rpartition("://") if "://" in address else ("tcp", "", address)
    if scheme != "tcp":
        raise ValueError(f"--scheduler {address!r}: only tcp:// addresses are supported ({scheme}:// needs a "
                         f"security setup this tool does not take); give tcp://HOST:PORT")
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--scheduler {address!r} is not an address: give tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as conn:
            conn.settimeout(min(timeout, GREETING_S))
            greeting = b""
            while len(greeting) < 8:
                chunk = conn.recv(8 - len(greeting))
                if not chunk:
                    break
                greeting += chunk
    except socket.timeout:
        raise ValueError(f"something at {address!r} took the connection but said nothing within "
                         f"{min(timeout, GREETING_S):g} s, where a Dask scheduler greets at once: give the address "
                         f"`dask scheduler` prints (tcp://HOST:8786)") from None
    except OSError as error:
        raise ValueError(f"no Dask scheduler answered at {address!r} ({error}): start one there with `dask "
                         f"scheduler`, or give the address it prints (tcp://HOST:8786)") from None
    if len(greeting) < 8 or not 0 < int.from_bytes(greeting, "little") <= GREETING_MAX_BYTES:
        raise ValueError(f"what answered at {address!r} is not a Dask scheduler (it said {greeting[:8]!r}): give "
                         f"the address `dask scheduler` prints (tcp://HOST:8786)")


class DaskRunner:
    """``map`` on a Dask cluster: a ``LocalCluster`` of worker processes when no ``address`` is
    given, else the workers of the scheduler at ``address`` (``tcp://HOST:8786``).

    address             a running scheduler's address, or None for a local cluster.
    n_workers           worker processes of the local cluster (None: Dask's choice, one per core
                        with one thread each); not allowed with ``address``, whose workers are
                        the cluster's own.
    threads_per_worker  threads per local worker process. One by default: the search is many
                        small numpy operations, which hold the interpreter's lock between them,
                        so it is spread over processes rather than threads.
    progress            show a progress bar (tqdm, on stderr) for each map.
    timeout             seconds to wait for the cluster: connecting, and the first worker
                        (``ValueError`` saying what to start when either does not come).

    A context manager: the cluster starts on ``with`` and the client and any local cluster
    are closed on leaving it, also after an error.
    """

    def __init__(self, address: str | None = None, n_workers: int | None = None, threads_per_worker: int = 1,
                 *, progress: bool = True, timeout: float = 60.0):
        if address is not None and n_workers is not None:
            raise ValueError(
                f"n_workers ({n_workers}) starts a local cluster and address ({address!r}) uses a running "
                "one, whose workers are its own: give one of the two (--workers or --scheduler)")
        if n_workers is not None and int(n_workers) < 1:
            raise ValueError(f"n_workers must be at least 1, got {n_workers}")
        if int(threads_per_worker) < 1:
            raise ValueError(f"threads_per_worker must be at least 1, got {threads_per_worker}")
        self.address = address
        self.n_workers = None if n_workers is None else int(n_workers)
        self.threads_per_worker = int(threads_per_worker)
        self.progress = progress
        self.timeout = float(timeout)
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None

    def __enter__(self) -> DaskRunner:
        try:
            if self.address is None:
                with dask.config.set({f"distributed.nanny.pre-spawn-environ.{name}": value
                                      for name, value in WORKER_ENVIRON.items()}):
                    self.cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=self.threads_per_worker,
                                                processes=True, dashboard_address=None,
                                                scheduler_kwargs=LOCAL_SCHEDULER_HTTP)
                self.client = Client(self.cluster, timeout=self.timeout)
            else:
                check_scheduler(self.address, self.timeout)
                try:
                    self.client = Client(self.address, timeout=self.timeout)
                except OSError as error:
                    raise ValueError(
                        f"no Dask scheduler answered at {self.address!r} within {self.timeout:g} s ({error}): start "
                        "one there with `dask scheduler`, or give the address it prints (tcp://HOST:8786)") from None
            try:
                self.client.wait_for_workers(1, timeout=self.timeout)
            except TimeoutError:
                where = self.address or self.cluster.scheduler_address
                raise ValueError(
                    f"no Dask worker joined the scheduler at {where} within {self.timeout:g} s: "
                    f"start one with `dask worker {where}`") from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the client, then the local cluster if this runner started one."""
        client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    @property
    def workers(self) -> int:
        """How many workers the cluster has now."""
        self._check_started()
        return len(self.client.scheduler_info()["workers"])

    def _check_started(self) -> None:
        if self.client is None:
            raise RuntimeError("DaskRunner is not started: use it as `with DaskRunner(...) as runner: runner.map(...)`")

    def map(self, fn, items, **shared) -> list:
        """``[fn(item, **shared) for item in items]``, each call a task on the cluster.

        ``fn`` is sent once to every worker with its code (:func:`pickle_by_value`), and so is
        each of ``shared``; items travel one per task. Results come back in the order of
        ``items`` whatever order the tasks finish in. A task's error is raised here, with the
        worker's traceback, and the tasks not yet run are cancelled.
        """
        self._check_started()
        items = list(items)
        for i, item in enumerate(items):
            _check_plain(item, f"item {i}")
        for name, value in shared.items():
            _check_plain(value, f"shared {name!r}")
        if not items:
            return []
        client = self.client
        [remote_task] = client.scatter([_ByValue(pickle_by_value(partial(_run_aligned, fn, {})))],
                                       broadcast=True, hash=False)
        # (scattered as a list with one element per value, so that a dict or list stays one value)
        values = list(shared.values())
        remote_shared = dict(zip(shared, client.scatter(values, broadcast=True, hash=False))) if shared else {}
        name = getattr(fn, "__name__", "task")
        batch = uuid.uuid4().hex[:8]
        futures = [client.submit(apply, remote_task, (item, remote_shared), key=f"{name}-{batch}-{i}", pure=False)
                   for i, item in enumerate(items)]
        finished, done = False, 0
        try:
            with tqdm(total=len(futures), desc=name, unit="task", disable=not self.progress) as bar:
                for future in as_completed(futures):
                    if future.status == "error":
                        future.result()  # raises the task's exception with the worker's traceback
                    bar.update(1)
                    done += 1
            results = [_map_arrays(result, _aligned_here) for result in client.gather(futures)]
            finished = True
            return results
        except (CancelledError, KilledWorker) as error:
            # every worker gone (killed, or lost with its machine): the scheduler cancels the
            # tasks, or gives up on one that took workers down with it
            # (results stay on the workers until gathered: finished tasks are lost with them too)
            raise ValueError(f"the cluster lost its workers before their results came back ({done} of {len(futures)} "
                             f"tasks had finished; {type(error).__name__}): start workers and run again") from None
        finally:
            if not finished:
                client.cancel(futures)
