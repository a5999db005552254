"""``sweep``: a grid of independent cells run on dask.distributed, stored and resumable.

The contract of a cell function: ``fn(cell, rng_seed)`` takes the cell's parameters (a dict of
scalars, see :mod:`sia_theory.sweeps.grid`) and its seed (an int in ``[0, 2**63 − 1]`` derived
from the sweep seed and the cell only), draws every random number from that seed (e.g.
``numpy.random.default_rng(rng_seed)``), and returns either a dict of scalars (one row) or a
pandas DataFrame (any number of rows; its index is dropped), or a :class:`CellOutput` of such
rows and named files (bytes, e.g. a model's parameters) that the store keeps beside them. It
must not depend on anything but its arguments (module-level state, worker identity, time), so
its result is the same on any worker; it runs with one BLAS thread
(:func:`sia_theory._infra.parallel.single_threaded_blas`).

Where the cells run (``scheduler``):

* ``None``: the address in the environment variable ``SIA_DASK_SCHEDULER`` if set, else an
  embedded ``distributed.LocalCluster`` on this machine (``n_workers`` processes, default the CPU
  count, one thread each, ``NUMBA_NUM_THREADS=1``; scheduler, workers and the scheduler's HTTP
  server listen on 127.0.0.1 only, on random ports), shut down afterwards;
* ``"tcp://host:port"`` (or any dask address) or a ``distributed.Client``: an existing cluster
  (the store is written by this process, so the workers need no shared file system);
* ``"sync"``: in this process, one cell after another, in grid order;
* ``"threads"``: in this process on :func:`~sia_theory._infra.parallel.worker_count` threads.

All four give bit-identical numbers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .._infra.parallel import single_threaded_blas, worker_count
from .._infra.progress import progress_bar
from .._infra.seeding import check_seed
from .._infra.validate import check_int
from . import store as stores
from .dataset import DatasetUpdater, dataset_readable
from .grid import cell_key, cell_seed, expand_grid, file_stem

__all__ = ["sweep", "run_cells", "SweepError", "CellOutput", "ENV_SCHEDULER", "CONNECT_TIMEOUT",
           "HANDSHAKE_TIMEOUT", "IN_PROCESS", "probe_scheduler"]

ENV_SCHEDULER = "SIA_DASK_SCHEDULER"
"""The environment variable naming a Dask scheduler to use when none is given."""
CONNECT_TIMEOUT = "3s"
"""Dask's connect timeout to a scheduler."""
HANDSHAKE_TIMEOUT = 5.0
"""Seconds for the TCP connect and the Dask handshake together before an address is refused."""
IN_PROCESS = ("sync", "threads")
"""Schedulers that run in this process (no cluster)."""


class SweepError(RuntimeError):
    """Raised by ``on_error="raise"`` when a cell fails (after the other cells finished)."""


class CellOutput(NamedTuple):
    """What a cell returns when it has files besides its rows: ``frame`` (a DataFrame or a dict
    of scalars) and ``files`` (``{name: bytes}``). The store writes each file as
    ``cells/<stem>.<name>`` before the rows; :func:`run_cells` with ``with_files=True`` returns
    them (read back from the store for resumed cells)."""

    frame: object
    files: dict


def as_frame(value) -> pd.DataFrame:
    """fn's return value as a DataFrame (a dict of scalars is one row)."""
    if isinstance(value, pd.DataFrame):
        frame = value.reset_index(drop=True)
    elif isinstance(value, dict):
        frame = pd.DataFrame([value])
    else:
        raise TypeError(f"fn must return a dict of scalars or a pandas DataFrame, got "
                        f"{type(value).__name__}")
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise TypeError(f"fn's output columns must be strings, got {bad!r}")
    return frame


def run_one(fn, cell: dict, seed: int):
    """Run one cell: ``("ok", frame)`` or ``("error", one line, traceback)``. Exceptions are
    returned, not raised, so a failed cell is a result like any other on every scheduler
    (``KeyboardInterrupt`` and ``SystemExit`` still stop the sweep)."""
    try:
        with single_threaded_blas():
            value = fn(dict(cell), seed)
        if isinstance(value, CellOutput):
            return ("ok", as_frame(value.frame), stores.check_file_names(value.files))
        return ("ok", as_frame(value), {})
    except Exception as err:  # noqa: BLE001 - recorded with the cell, the sweep goes on
        line = " ".join(f"{type(err).__name__}: {err}".split())
        return ("error", line, traceback.format_exc())


def _check_scheduler(scheduler):
    if scheduler is None:
        scheduler = os.environ.get(ENV_SCHEDULER) or None
    if scheduler is None or scheduler in IN_PROCESS:
        return scheduler
    if isinstance(scheduler, str):
        if "://" not in scheduler:
            raise ValueError(f"scheduler must be None, 'sync', 'threads' or a dask address such "
                             f"as 'tcp://host:8786', got {scheduler!r}")
        return scheduler
    from distributed import Client  # start-up: distributed (0.8 s), only for a cluster

    if isinstance(scheduler, Client):
        return scheduler
    raise ValueError(f"scheduler must be None, 'sync', 'threads', a dask address or a "
                     f"distributed.Client, got {scheduler!r}")


def probe_scheduler(address: str, timeout: float = HANDSHAKE_TIMEOUT) -> dict:
    """The handshake of the Dask scheduler at ``address``, or ``ValueError`` within ``timeout``
    seconds (plus a second of slack).

    ``distributed.Client`` bounds only the TCP connect by its timeout: the handshake read that
    follows waits forever on a port that accepts connections but does not speak Dask (an HTTP
    server), and reads a garbage length header as a message of exabytes. Here the connect and
    the handshake run under one ``asyncio.wait_for`` on a loop of their own (a worker thread,
    so a caller's running loop is not disturbed), and any failure, a ``MemoryError`` from a
    garbage header included, is one ``ValueError`` naming the address."""
    # start-up: distributed (0.8 s), only for a cluster
    from distributed.comm import connect as comm_connect

    async def handshake():  # the connect gives up first, so a refused port says so
        comm = await asyncio.wait_for(comm_connect(address, timeout=0.6 * timeout), timeout)
        try:
            return dict(comm.remote_info)
        finally:
            comm.abort()

    outcome = {}

    def run():
        try:
            outcome["info"] = asyncio.run(handshake())
        except BaseException as err:  # noqa: BLE001 - reported below as a ValueError
            outcome["error"] = err

    thread = threading.Thread(target=run, name="sia-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    info = outcome.get("info")
    if isinstance(info, dict) and "pickle-protocol" in info:
        return info
    err = outcome.get("error")
    if thread.is_alive() or isinstance(err, asyncio.TimeoutError | TimeoutError):
        reason = f"no Dask handshake within {timeout:g} s"
    elif err is not None:
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:200] or type(err).__name__
    else:
        reason = f"the peer's handshake is not Dask's ({str(info)[:80]})"
    raise ValueError(f"scheduler {address!r} does not answer as a Dask scheduler ({reason}); "
                     f"start one with `dask scheduler`, or leave scheduler unset for a local "
                     f"cluster")


def connect(scheduler, n_workers=None):
    """``(client, close)`` for ``scheduler`` (a checked address, a Client or ``None`` for an
    embedded LocalCluster). An address is probed first (:func:`probe_scheduler`): one that does
    not answer the Dask handshake within :data:`HANDSHAKE_TIMEOUT` is a ``ValueError``."""
    # start-up: distributed (0.8 s), only for a cluster
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if isinstance(scheduler, str):
        probe_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as err:
            reason = " ".join(str(err).split()) or type(err).__name__
            raise ValueError(f"scheduler {scheduler!r} does not answer ({reason}); start one "
                             f"with `dask scheduler`, or leave scheduler unset for a local "
                             f"cluster") from None
        return client, client.close
    workers = (os.cpu_count() or 1) if n_workers is None else check_int("n_workers", n_workers, 1)
    # dashboard_address=None does not stop the scheduler's HTTP server (dask/distributed#8136,
    # #7207): bind it to a random loopback port instead, like every other listener here
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0",
                           silence_logs=logging.ERROR, env={"NUMBA_NUM_THREADS": "1"})
    client = Client(cluster, set_as_default=False)

    def close():
        client.close()
        cluster.close()

    return client, close


def _dask_results(client, fn, todo, seeds, study):
    """Yield ``(index, outcome)`` as cells finish on the cluster."""
    # start-up: distributed (0.8 s), only for a cluster
    from distributed import as_completed as dask_completed

    run = uuid.uuid4().hex[:8]
    keys = [f"{study}-{file_stem(cell_key(cells))}-{run}" for cells in todo]
    futures = client.map(run_one, [fn] * len(todo), todo, seeds, key=keys, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    try:  # results arrive in batches of whatever finished meanwhile (one round trip each)
        for batch in dask_completed(futures, loop=client.loop, with_results=True).batches():
            for future, outcome in batch:
                yield index[future.key], outcome
                future.release()
    finally:
        client.cancel([f for f in futures if not f.done()])


def _thread_results(fn, todo, seeds):
    with ThreadPoolExecutor(max(1, min(worker_count(), len(todo)))) as pool:
        futures = {pool.submit(run_one, fn, c, s): i for i, (c, s) in
                   enumerate(zip(todo, seeds, strict=True))}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            for future in futures:
                future.cancel()


def run_cells(fn, grid, *, seed, store=None, scheduler=None, force=False, progress=True,
              study="sweep", seed_key=None, on_error="record", n_workers=None,
              with_files=False):
    """Run the cells of ``grid`` and return ``(cells, frames, errors)``: the cells in grid
    order, fn's DataFrame of each (``None`` for a failed cell) and ``{cell key: error line}``;
    with ``with_files=True`` also, fourth, each cell's files (``{name: bytes}``, ``None`` for
    a failed cell; see :class:`CellOutput`). See :func:`sweep` for the arguments."""
    if not callable(fn):
        raise ValueError(f"fn must be callable as fn(cell, rng_seed), got {fn!r}")
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error must be 'record' or 'raise', got {on_error!r}")
    seed = check_seed(seed)
    cells = expand_grid(grid)
    scheduler = _check_scheduler(scheduler)
    keys = [cell_key(c) for c in cells]
    stems = [file_stem(k) for k in keys]
    seeds = [cell_seed(seed, c, study=study, seed_key=seed_key) for c in cells]
    if store is not None and not force:
        finished = _finished_read_only(store, stems, study, seed, with_files)
        if finished is not None:  # nothing to run or write: read, even from a read-only store
            frames, files = finished
            return (cells, frames, {}, files) if with_files else (cells, frames, {})
    root = None if store is None else stores.check_store(store, study=study, seed=seed)
    done = set() if root is None or force else stores.finished_stems(root)
    frames = [stores.read_cell(root, s) if s in done else None for s in stems]
    todo = [i for i, f in enumerate(frames) if f is None]
    files = [stores.read_cell_files(root, stems[i]) if with_files and frames[i] is not None
             else None for i in range(len(cells))]
    client = close = None
    if todo and scheduler not in IN_PROCESS:  # connect before anything is written
        client, close = connect(scheduler, n_workers)
    _open_store(root, study, seed, close)
    dataset = None if root is None else DatasetUpdater(root)  # data.parquet: every cell
    errors = {}
    bar = progress_bar(total=len(cells), initial=len(cells) - len(todo), desc=study,
                       unit="cell", enabled=progress, leave=False)

    def record(i, outcome):
        if outcome[0] == "ok":
            frames[i] = outcome[1]
            if with_files:
                files[i] = outcome[2]
            if root is not None:
                stores.write_cell(root, stems[i], outcome[1], cells[i], keys[i], seeds[i],
                                  outcome[2])
                dataset.cell_written()
        else:
            errors[keys[i]] = outcome[1]
            if root is not None:
                stores.write_error(root, stems[i], cells[i], keys[i], seeds[i], *outcome[1:])
        bar.update()

    try:
        _dispatch(fn, cells, seeds, todo, record, scheduler=scheduler, client=client,
                  study=study)
    finally:
        bar.close()
        if close is not None:
            close()
        if dataset is not None:
            dataset.close()
    if errors and on_error == "raise":
        key, line = next(iter(errors.items()))
        raise SweepError(f"{len(errors)} of {len(cells)} cells failed; first: {key}: {line}")
    return (cells, frames, errors, files) if with_files else (cells, frames, errors)


def _finished_read_only(store, stems, study, seed, with_files):
    """``(frames, files)`` of every cell when the store already holds them all, intact, with a
    readable ``data.parquet`` (read without writing anything, so a finished sweep in a
    read-only folder is read, not refused); else ``None`` (the sweep runs and heals the
    store)."""
    root = Path(os.fspath(store))
    if not root.is_dir() or not set(stems) <= stores.finished_stems(root):
        return None
    if not dataset_readable(root):
        return None
    frames, files = stores.read_finished(root, stems, study=study, seed=seed,
                                         with_files=with_files)
    if any(f is None for f in frames):  # a damaged cell runs again
        return None
    return frames, files


def _open_store(root, study, seed, close):
    """Open the store at ``root`` (if any); on failure close the cluster (``close``) first."""
    try:
        if root is not None:
            stores.open_store(root, study=study, seed=seed)
    except BaseException:
        if close is not None:
            close()
        raise


def _dispatch(fn, cells, seeds, todo, record, *, scheduler, client, study):
    """Run the cells at indices ``todo`` on ``scheduler`` and pass each ``(index, outcome)``
    to ``record`` as it finishes."""
    todo_cells, todo_seeds = [cells[i] for i in todo], [seeds[i] for i in todo]
    if scheduler == "sync":
        for i in todo:
            record(i, run_one(fn, cells[i], seeds[i]))
    elif scheduler == "threads":
        for j, outcome in _thread_results(fn, todo_cells, todo_seeds):
            record(todo[j], outcome)
    elif todo:  # store writes overlap with the cluster on one writer thread
        with ThreadPoolExecutor(1) as writer:
            pending = [writer.submit(record, todo[j], outcome) for j, outcome in
                       _dask_results(client, fn, todo_cells, todo_seeds, study)]
        for done_write in pending:
            done_write.result()  # a failed write is an error of the sweep


def sweep(fn, grid, *, store, seed, scheduler=None, force=False, progress=True,
          study="sweep", seed_key=None, on_error="record", n_workers=None) -> pd.DataFrame:
    """Run ``fn(cell, rng_seed)`` on every cell of ``grid`` and return the results.

    Parameters
    ----------
    fn : callable
        The cell function ``fn(cell, rng_seed)`` (module docstring).
    grid : iterable of dict, or dict of lists
        Dicts of scalar parameters, or a dict of lists (their Cartesian product).
    store : str, Path or None
        A folder for the cells' Parquet files and ``data.parquet``, all of them in one table
        (:mod:`sia_theory.sweeps.store`), or ``None`` to keep the results in memory only.
    seed : int
        The sweep seed, in ``[0, 2**63 − 1]``; the seed of a cell is
        ``seed_int(seed, study, key_index(cell_key(cell)))``, or ``seed_int(seed,
        *seed_key(cell))`` for a study with its own seeding rule.
    scheduler : None, str or distributed.Client, optional
        Where the cells run (module docstring).
    force : bool, optional
        Recompute cells already in the store (by default they are read back).
    progress : bool, optional
        Show a progress bar.
    study : str, optional
        The study name, part of each cell's seed and checked against the store's.
    seed_key : callable, optional
        A study's own seeding rule (see ``seed``).
    on_error : {"record", "raise"}, optional
        ``"record"``: a cell whose fn raises is recorded (``store/errors/``,
        :func:`~sia_theory.sweeps.store.load_errors`) and the others go on; ``"raise"``: raise
        :class:`SweepError` at the end instead.
    n_workers : int, optional
        The number of processes of the embedded LocalCluster (default the CPU count).

    Returns
    -------
    pandas.DataFrame
        fn's rows of every finished cell in grid order, with the cell's parameters (those not
        already columns of fn's output), ``cell_key`` and ``cell_seed``; the failed cells'
        errors are in ``result.attrs["errors"]`` (``{cell key: error line}``).

    Raises
    ------
    ValueError
        For a bad argument (``fn`` not callable, ``on_error``, ``seed``, ``scheduler``,
        ``n_workers``, a store that is not usable or holds another study or seed), or a
        scheduler that does not answer.
    SweepError
        With ``on_error="raise"``, when a cell failed.

    Examples
    --------
    >>> from sia_theory import sweep
    >>> def cell(params, rng_seed):
    ...     return {"square": params["x"] ** 2}
    >>> table = sweep(cell, {"x": [1, 2, 3]}, store=None, seed=0, scheduler="sync", progress=False)
    >>> table["square"].tolist(), table["cell_seed"].nunique()  # one seed per cell
    ([1, 4, 9], 3)
    >>> again = sweep(cell, [{"x": 3}], store=None, seed=0, scheduler="sync", progress=False)
    >>> bool(again["cell_seed"].iloc[0] == table["cell_seed"].iloc[2])  # (seed, cell) only
    True
    """
    cells, frames, errors = run_cells(fn, grid, seed=seed, store=store, scheduler=scheduler,
                                      force=force, progress=progress, study=study,
                                      seed_key=seed_key, on_error=on_error, n_workers=n_workers)
    seed = check_seed(seed)
    parts = []
    for cell, frame in zip(cells, frames, strict=True):
        if frame is not None:
            parts.append(stores.stored_frame(frame, cell, cell_key(cell),
                                             cell_seed(seed, cell, study=study,
                                                       seed_key=seed_key))[0])
    result = (pd.concat(parts, ignore_index=True) if parts
              else pd.DataFrame(columns=list(stores.CELL_COLUMNS)))
    result.attrs["errors"] = errors
    return result
