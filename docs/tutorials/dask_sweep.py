# %% [markdown]
# # A sweep on a Dask cluster, with a store and a resume
#
# Phase diagrams and entropy-scaling studies are grids of independent cells.
# `sia_theory.sweep(fn, grid, store=DIR, seed=S)` runs `fn(cell, rng_seed)` for every cell on
# dask.distributed, writes each finished cell atomically as its own Parquet file, and reads
# finished cells back instead of recomputing them — so an interrupted sweep resumes where it
# stopped. A cell's seed depends only on `(seed, cell)`, so the numbers are bit-identical on
# any number of workers, in any order of completion, and in this process (`scheduler="sync"`).

# %%
import tempfile
import time
from pathlib import Path

from distributed import Client, LocalCluster

import sia_theory as st
from sia_theory.sweeps import load_errors, load_sweep

store = Path(tempfile.mkdtemp(prefix="sia-sweep-")) / "entropy"


def entropy_cell(cell, rng_seed):
    """Monte Carlo entropy in the range [t, 10t) of ScaleInvariantFamily(c): one row."""
    family = st.ScaleInvariantFamily(c=cell["c"], tau=10.0)
    t = int(cell["t"])
    row = st.simulate_gaussian_logits(family, 10 * t, [(t, 10 * t)], samples=512,
                                      seed=rng_seed).iloc[0]
    return {"H": row.H_mean, "H_se": row.H_se}


grid = {"c": [0.5, 1.0, 2.0], "t": [10, 100, 1000]}  # a dict of lists: the Cartesian product

# %% [markdown]
# ## A local cluster
#
# With no scheduler, `sweep` starts a `LocalCluster` sized to the machine and shuts it down
# afterwards. Here we start one ourselves (two single-threaded worker processes on the loopback
# interface) and pass its address, as one would for a cluster on other machines
# (`scheduler="tcp://host:8786"`, or the environment variable `SIA_DASK_SCHEDULER`).
# To show a resume, the first run is interrupted by hand: it gets only part of the grid.

# %%
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                       dashboard_address=None)
client = Client(cluster)
start = time.perf_counter()
first = st.sweep(entropy_cell, {"c": [0.5, 1.0], "t": [10, 100, 1000]}, store=store, seed=0,
                 scheduler=client, progress=False)
print(f"first run: {len(first)} cells in {time.perf_counter() - start:.1f} s")
print(sorted(p.name for p in (store / "cells").glob("*.parquet"))[:3], "...")

# %% [markdown]
# ## Resume
#
# The full grid, same store, same seed: the six finished cells are read back, only the three
# new ones run.

# %%
start = time.perf_counter()
full = st.sweep(entropy_cell, grid, store=store, seed=0, scheduler=client, progress=False)
print(f"second run: {len(full)} cells in {time.perf_counter() - start:.1f} s")
print(full.pivot_table(index="t", columns="c", values="H").round(3).to_string())
# the resumed cells are exactly the stored ones
merged = full.merge(first, on=["c", "t"], suffixes=("", "_first"))
assert (merged["H"] == merged["H_first"]).all()

# %% [markdown]
# ## The same numbers anywhere
#
# Recomputing every cell in this process (`scheduler="sync"`, no store) gives the same bits;
# `load_sweep` reads the stored dataset back.

# %%
again = st.sweep(entropy_cell, grid, store=None, seed=0, scheduler="sync", progress=False)
assert (again["H"].to_numpy() == full["H"].to_numpy()).all()
print("in-process recomputation is bit-identical:", True)
print("stored rows:", len(load_sweep(store)), "; errors recorded:", len(load_errors(store)))
client.close()
cluster.close()

# %% [markdown]
# ## A failing cell
#
# A cell that raises is recorded in `DIR/errors/` and the others go on (`on_error="raise"`
# raises at the end instead).

# %%
def fragile_cell(cell, rng_seed):
    """Fails for one cell."""
    if cell["c"] == 2.0 and cell["t"] == 1000:
        raise RuntimeError("this cell fails on purpose")
    return entropy_cell(cell, rng_seed)


other = store.parent / "fragile"
result = st.sweep(fragile_cell, grid, store=other, seed=0, scheduler="sync", progress=False)
print(f"{len(result)} cells finished; errors: {result.attrs['errors']}")
assert len(result) == 8 and len(load_errors(other)) == 1

# %% [markdown]
# ## A study as a sweep
#
# The figures' own studies run their cells on this engine; from the command line,
# `sia-theory sweep STUDY` takes the study's settings fields as flags, a `--store` and a
# `--scheduler`, and resumes from the store like the calls above:
#
# ```bash
# sia-theory sweep phase-diagram --quick --rho 0.3 --store sweeps/pd
# sia-theory sweep si_entropy_scaling --t-max 100000 --samples 65536 --store sweeps/es
# ```
#
# From Python the same is `get_study(name)` called with its settings and an `Execution`; here
# the Jacobian sweep of CAS Fig. 2 (alias `jacobian`) with its quick settings, stored:

# %%
from sia_theory.studies import Execution, get_study  # noqa: E402

study = get_study("jacobian")
settings = study.quick()
start = time.perf_counter()
result = study(settings, seed=0, execution=Execution(scheduler="sync",
                                                     store=store.parent / "jacobian"))
print(f"{study.name}: frames {list(result.frames)} in {time.perf_counter() - start:.1f} s")
print(result["summary"].round(4).to_string())
