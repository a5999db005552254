"""Sweeps: grids of independent cells on dask.distributed (local by default), stored as a
Parquet dataset and resumable; ``STORE/data.parquet`` holds every finished cell in one table
(:mod:`~sia_theory.sweeps.dataset`). See :mod:`sia_theory.sweeps.engine` for the cell contract.

The package is ``sweeps`` (plural) so that the top-level export ``sia_theory.sweep`` (the
function) is never shadowed by the subpackage attribute Python sets when a subpackage loads."""

from .dataset import DATASET, write_dataset
from .engine import CellOutput, SweepError, run_cells, sweep
from .grid import cell_key, cell_seed, expand_grid
from .labelled import to_xarray
from .store import load_errors, load_sweep

__all__ = ["sweep", "run_cells", "load_sweep", "load_errors", "cell_key", "cell_seed",
           "expand_grid", "SweepError", "CellOutput", "DATASET", "write_dataset", "to_xarray"]
