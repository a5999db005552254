"""Benchmark of the sweep engine (sia_theory.sweeps): per-cell overhead against calling the cell
function directly (target <= 10 ms per cell), and the speed-up from 1 to 2 local Dask workers on
a CPU-bound grid (target >= 1.7x). The machine's load average is printed beside the numbers:
on a shared machine the speed-up measures the cores that were free."""

import os
import sys
import tempfile
import time

import cloudpickle
import numpy as np

from sia_theory.toolkit import (
    MAX_SEED,
    OneLineArgumentParser,
    int_range,
    run,
    seed,
    single_threaded_blas,
)

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this file


def tiny_cell(cell, rng_seed):
    """Almost no work: what remains of a sweep's time is its overhead."""
    return {"x": float(np.random.default_rng(rng_seed).standard_normal()) + cell["i"]}


def busy_cell(cell, rng_seed):
    """CPU-bound: ``cell['reps']`` products of 160×160 matrices (one BLAS thread)."""
    a = np.random.default_rng(rng_seed).standard_normal((160, 160)) / 16  # (160, 160)
    acc = np.eye(160)
    for _ in range(cell["reps"]):
        acc = np.tanh(acc @ a)  # (160, 160)
    return {"trace": float(np.trace(acc))}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def local_client(workers):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0",
                           env={"NUMBA_NUM_THREADS": "1"})
    return cluster, Client(cluster, set_as_default=False)


def main(quick=False, seed=0, cells=None, reps=None):
    from sia_theory.sweeps import sweep

    print(load())
    n = cells or (100 if quick else 400)
    grid = [{"i": i} for i in range(n)]
    print(f"\nper-cell overhead, {n} near-empty cells (target <= 10 ms per cell)")
    direct, _ = timed(lambda: [tiny_cell(c, 1) for c in grid])
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cluster, client = local_client(2)
        startup = time.perf_counter() - start
        sweep(tiny_cell, grid[:20], store=None, seed=seed, scheduler=client, progress=False)
        runs = [("sync, no store", "sync", None), ("sync, Parquet store", "sync", "a"),
                ("2 Dask workers, no store", client, None),
                ("2 Dask workers, Parquet store", client, "b")]
        for label, scheduler, store in runs:
            elapsed, _ = timed(lambda s=scheduler, st=store: sweep(
                tiny_cell, grid, store=st and os.path.join(tmp, st), seed=seed, scheduler=s,
                progress=False))
            per_cell = (elapsed - direct) / n * 1e3
            print(f"  {label:32s} {per_cell:7.2f} ms per cell   target 10 ms   ratio "
                  f"{per_cell / 10:5.2f} of target   {'met' if per_cell <= 10 else 'NOT met'}")
        client.close()
        cluster.close()
    print(f"  (LocalCluster start-up with 2 workers, paid once per sweep: {startup:.1f} s)")

    reps = reps or (100 if quick else 1000)
    busy = [{"i": i, "reps": reps} for i in range(4 if quick else 16)]
    with single_threaded_blas():
        one_cell, _ = timed(lambda: busy_cell(busy[0], 1))
    print(f"\n1 -> 2 local workers, {len(busy)} CPU-bound cells of ~{one_cell:.2f} s each "
          "(target >= 1.7x)")
    times, results = {}, {}
    for workers in (1, 2):
        cluster, client = local_client(workers)
        sweep(busy_cell, busy[:2], store=None, seed=seed, scheduler=client, progress=False)
        times[workers], results[workers] = timed(lambda c=client: sweep(
            busy_cell, busy, store=None, seed=seed, scheduler=c, progress=False))
        client.close()
        cluster.close()
        print(f"  {workers} worker{'s' if workers > 1 else ' '}  {times[workers]:7.2f} s   "
              f"{load()}")
    speedup = times[1] / times[2]
    same = results[1]["trace"].tolist() == results[2]["trace"].tolist()
    print(f"  speed-up {speedup:5.2f}x   target 1.7x   ratio {speedup / 1.7:5.2f} of target   "
          f"{'met' if speedup >= 1.7 else 'NOT met'}; results bit-identical: {same}")


def parser():
    p = OneLineArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="seconds-long run for tests")
    p.add_argument("--seed", type=seed, default=0, help=f"an integer in [0, {MAX_SEED}]")
    p.add_argument("--cells", type=int_range(10, 100_000), default=None,
                   help="cells of the overhead grid (default 400, quick 100)")
    p.add_argument("--reps", type=int_range(1, 100_000), default=None,
                   help="matrix products per CPU-bound cell (default 1000, quick 100)")
    return p


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=parser()))
