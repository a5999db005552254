"""A sweep store as one table: ``STORE/data.parquet`` (sia_theory.sweeps.dataset) is read by
``pandas.read_parquet`` and ``pyarrow.dataset`` as it is and holds every column of every cell,
cells with different columns and cells with files included, with the numbers the sweep and the
study return; it follows a resumed sweep (``to_xarray``: tests/sweeps/test_labelled.py)."""

import json

import numpy as np
import pandas as pd
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from sia_theory.studies import Execution
from sia_theory.sweeps import DATASET, CellOutput, load_sweep, sweep, write_dataset
from sia_theory.sweeps.dataset import DatasetUpdater, parameter_names


def mixed_cell(cell, rng_seed):
    """Even ``x``: one row ``a, b``; odd ``x``: two rows ``a, c`` (a string) and a file."""
    rng = np.random.default_rng(rng_seed)
    if cell["x"] % 2 == 0:
        return {"a": cell["x"], "b": float(rng.normal())}
    frame = pd.DataFrame({"a": [cell["x"], -cell["x"]], "c": ["odd", "odder"]})
    return CellOutput(frame, {"weights.bin": rng.bytes(16)})


GRID = {"x": [0, 1, 2, 3], "tag": ["p", "q"]}


def by_key(frame):
    return frame.sort_values("cell_key", kind="stable", ignore_index=True)


def test_the_raw_store_folder_is_no_dataset_and_data_parquet_is(tmp_path):
    """What failed: the cells' folder has other files and cells of other columns."""
    store = tmp_path / "s"
    result = sweep(mixed_cell, GRID, store=store, seed=2, scheduler="sync", progress=False)
    with pytest.raises(Exception):  # noqa: B017 - pyarrow's own error on weights.bin
        pd.read_parquet(store / "cells")
    columns = {"a", "b", "c", "x", "tag", "cell_key", "cell_seed"}
    assert set(result.columns) == columns and len(result) == 12
    table = pd.read_parquet(store / DATASET)
    assert set(table.columns) == columns and len(table) == 12
    arrow = pads.dataset(store / DATASET).to_table()
    assert set(arrow.column_names) == columns and arrow.num_rows == 12
    expected = by_key(result)[list(table.columns)]
    pd.testing.assert_frame_equal(table, expected, check_dtype=False, check_exact=True)
    pd.testing.assert_frame_equal(table, by_key(load_sweep(store))[list(table.columns)],
                                  check_dtype=False, check_exact=True)
    odd = table[table["x"] % 2 == 1]
    assert odd["b"].isna().all() and odd["c"].tolist() == ["odd", "odder"] * 4
    assert table[table["x"] % 2 == 0]["c"].isna().all()


def test_data_parquet_follows_a_resumed_sweep_and_a_store_without_one(tmp_path):
    store = tmp_path / "s"
    first = [{"x": 0, "tag": "p"}, {"x": 1, "tag": "q"}]
    sweep(mixed_cell, first, store=store, seed=2, scheduler="sync", progress=False)
    assert sorted(pd.read_parquet(store / DATASET)["x"].unique()) == [0, 1]

    def only_new(cell, rng_seed):  # a resumed cell is read back, never run again
        assert {"x": cell["x"], "tag": cell["tag"]} not in first, cell
        return mixed_cell(cell, rng_seed)

    whole = sweep(only_new, GRID, store=store, seed=2, scheduler="sync", progress=False)
    table = pd.read_parquet(store / DATASET)
    pd.testing.assert_frame_equal(table, by_key(whole)[list(table.columns)], check_dtype=False,
                                  check_exact=True)
    (store / DATASET).unlink()  # a store of an earlier version: the next run writes it
    sweep(only_new, GRID, store=store, seed=2, scheduler="sync", progress=False)
    assert len(pd.read_parquet(store / DATASET)) == 12
    (store / DATASET).unlink()
    assert write_dataset(store) == store / DATASET and len(pd.read_parquet(store / DATASET)) == 12


def test_the_updater_rewrites_at_most_every_interval_and_at_the_end(tmp_path):
    store = tmp_path / "s"
    sweep(mixed_cell, [{"x": 0, "tag": "p"}], store=store, seed=2, scheduler="sync",
          progress=False)
    (store / DATASET).unlink()
    slow = DatasetUpdater(store, interval=3600.0)
    slow.cell_written()
    assert not (store / DATASET).exists()
    slow.close()
    assert (store / DATASET).exists()
    before = (store / DATASET).stat().st_mtime_ns
    DatasetUpdater(store, interval=3600.0).close()  # nothing written since: left as it is
    assert (store / DATASET).stat().st_mtime_ns == before


def test_cells_whose_columns_do_not_unify_warn_and_leave_no_stale_table(tmp_path):
    store = tmp_path / "s"
    sweep(lambda cell, s: {"v": 1.5}, [{"x": 0}], store=store, seed=0, scheduler="sync",
          progress=False)
    assert (store / DATASET).exists()
    with pytest.warns(RuntimeWarning, match="do not unify"):
        sweep(lambda cell, s: {"v": "text"}, [{"x": 0}, {"x": 1}], store=store, seed=0,
              scheduler="sync", progress=False)
    assert not (store / DATASET).exists() and len(load_sweep(store)) == 2


def test_a_study_store_holds_the_study_numbers_and_every_cell_kind(tmp_path):
    from sia_theory.studies.cas_fig1_phase_diagram import PhaseDiagramSettings, phase_diagram
    from sia_theory.studies.cas_fig2_jacobian import JacobianSweepSettings, jacobian_sweep

    settings = JacobianSweepSettings(n=20, dims=(16,), points=3, draws=2)
    eta = jacobian_sweep(settings, seed=3, execution=Execution(scheduler="sync",
                                                               store=tmp_path / "j"))["eta"]
    table = pd.read_parquet(tmp_path / "j" / DATASET)
    ordered = table.sort_values(["draw", "gamma"], ignore_index=True)[list(eta.columns)]
    pd.testing.assert_frame_equal(ordered, eta, check_exact=True)
    phase = PhaseDiagramSettings(n=60, size=3, dims=(16,), transition_draws=2,
                                 scaling_ns=(64,), scaling_draws=2, scaling_queries=16)
    phase_diagram(phase, seed=5, execution=Execution(scheduler="sync", store=tmp_path / "p"))
    every = set()
    for path in (tmp_path / "p" / "cells").glob("*.parquet"):
        every |= set(pq.read_schema(path).names)
    table = pd.read_parquet(tmp_path / "p" / DATASET)
    assert set(table.columns) == every and len(table) == len(load_sweep(tmp_path / "p"))
    assert set(pads.dataset(tmp_path / "p" / DATASET).schema.names) == every


def test_parameter_names_come_from_the_cell_keys():
    frame = pd.DataFrame({"cell_key": [json.dumps({"b": 1, "a": 2}), json.dumps({"c": 0})]})
    assert parameter_names(frame) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="cell_key"):
        parameter_names(pd.DataFrame({"x": [1]}))
