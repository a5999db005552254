"""The store as one table: ``data.parquet``, which pandas, pyarrow, polars or DuckDB read as it is.

The cells' own files (``cells/<stem>.parquet``, :mod:`sia_theory.sweeps.store`) are what a
sweep resumes from, and they cannot be read as one Parquet dataset: each cell has the columns
its function returned (cells of one store may differ), and the store's folder holds the
manifest, the cells' other files and the error records beside them. So the store keeps, beside
them, ``data.parquet``: every finished cell's rows with their parameters, ``cell_key`` and
``cell_seed`` (the rows of :func:`~sia_theory.sweeps.store.load_sweep`), cells in order of
their key, in one schema (a column a cell lacks is null there; an integer column that is
fractional in another cell is float). A sweep rewrites it atomically (a temporary sibling and
``os.replace``) as its cells finish, at most every :data:`DATASET_INTERVAL` seconds, and once
more when it ends, stops on an error or is interrupted; a killed sweep may leave it a few cells
behind the ``cells/`` folder until the next run of the sweep (or :func:`write_dataset`)::

    pandas.read_parquet("STORE/data.parquet")
    pyarrow.dataset.dataset("STORE/data.parquet").to_table()

:func:`~sia_theory.sweeps.labelled.to_xarray` gives the same rows as ``xarray.Dataset`` objects,
one per part of the sweep, labelled by its parameters.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa

from . import store as stores

__all__ = ["DATASET", "DATASET_INTERVAL", "store_table", "write_dataset", "DatasetUpdater",
           "parameter_names"]

DATASET = "data.parquet"
"""The file name of the store's one table, in the store's folder."""
DATASET_INTERVAL = 5.0
"""Seconds between two rewrites of ``data.parquet`` while a sweep's cells finish."""


def store_table(store) -> pa.Table:
    """Every finished cell of ``store`` as one ``pyarrow.Table`` in one schema (module
    docstring); ``ValueError`` if ``store`` is not a sweep store."""
    # start-up: pyarrow.parquet (85 ms), only when cells are written or read
    import pyarrow.parquet as pq

    root = stores.existing_store(store)
    tables = [pq.read_table(root / "cells" / f"{stem}.parquet")
              for stem in sorted(stores.finished_stems(root))]
    tables = [t.replace_schema_metadata(None) for t in tables if t.num_rows]
    if not tables:
        return pa.table({"cell_key": pa.array([], pa.string()),
                         "cell_seed": pa.array([], pa.int64())})
    table = pa.concat_tables(tables, promote_options="permissive")
    keys = table.column("cell_key").to_pylist()  # stable: rows of a cell stay in order
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return table.take(pa.array(order, pa.int64()))


def write_dataset(store) -> Path:
    """(Re)write ``store/data.parquet`` from the store's cells, atomically; returns its path.

    Parameters
    ----------
    store : str or Path
        A sweep store (a folder with ``sweep.json``).

    Returns
    -------
    Path
        ``store/data.parquet``.

    Raises
    ------
    ValueError
        If ``store`` is not a sweep store, or two cells hold one column in types that do not
        unify (a string in one, a number in the other).
    """
    # start-up: pyarrow.parquet (85 ms), only when cells are written or read
    import pyarrow.parquet as pq

    root = stores.existing_store(store)
    try:
        table = store_table(root)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise ValueError(f"store {str(root)!r}: the cells' columns do not unify into one "
                         f"table ({' '.join(str(err).split())})") from None
    path = root / DATASET
    stores.atomic_write(path, lambda tmp: pq.write_table(table, tmp), durable=False)
    return path


class DatasetUpdater:
    """Keeps ``data.parquet`` of the store at ``root`` up to date while a sweep writes cells:
    :meth:`cell_written` after each cell (rewrites at most every ``interval`` seconds),
    :meth:`close` at the end (rewrites if a cell was written since, or the file is absent)."""

    def __init__(self, root: Path, interval: float = DATASET_INTERVAL):
        self.root, self.interval = Path(root), interval
        self.last, self.pending = time.monotonic(), False

    def cell_written(self) -> None:
        """Record a written cell; rewrite the table if ``interval`` seconds have passed."""
        self.pending = True
        if time.monotonic() - self.last >= self.interval:
            self.flush()

    def flush(self) -> None:
        """Rewrite the table now; if the cells do not unify into one table (or it cannot be
        written), warn and remove it (a stale table would look whole): the sweep goes on."""
        try:
            write_dataset(self.root)
        except (ValueError, OSError) as err:
            warnings.warn(f"{err}; {DATASET} removed (load_sweep still reads every cell)",
                          RuntimeWarning, stacklevel=2)
            (self.root / DATASET).unlink(missing_ok=True)
        self.last, self.pending = time.monotonic(), False

    def close(self) -> None:
        """Rewrite the table if a cell was written since the last rewrite, or it is absent or
        unreadable (a damaged file is rebuilt from the intact cells)."""
        if self.pending or not dataset_readable(self.root):
            self.flush()


def dataset_readable(root) -> bool:
    """Whether the store at ``root`` holds a ``data.parquet`` whose footer reads (a file cut
    short by a crash, or any other damage, does not)."""
    import pyarrow.parquet as pq

    path = Path(root) / DATASET
    if not path.is_file():
        return False
    try:
        pq.read_metadata(path)
    except (OSError, ValueError, pa.ArrowException):
        return False
    return True


def parameter_names(frame: pd.DataFrame) -> list[str]:
    """The sweep's parameters in ``frame`` (rows of a store or of ``sweep``): the names in its
    ``cell_key`` column (each a cell's parameters as JSON), sorted."""
    if "cell_key" not in frame.columns:
        raise ValueError("frame must have a cell_key column (the rows of a sweep or a store)")
    return sorted({name for key in frame["cell_key"].unique() for name in json.loads(key)})
