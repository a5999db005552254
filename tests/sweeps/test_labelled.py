"""``to_xarray`` on the quick store of every sweepable study, each part: one name per
dimension, the study's swept parameters as dimensions or coordinates, one value per stored row
(no dense blow-up), every stored number read back at its coordinates, and ``mean``,
``dropna`` and ``to_dataframe`` working. Three stores are made in the quick tests (about 15 s
of CPU together); the other twelve, 10-40 s each, are marked slow."""

import json
import math
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from sia_theory.studies import SWEEPABLE, Execution, get_study
from sia_theory.sweeps import DATASET, sweep, to_xarray
from sia_theory.sweeps.dataset import parameter_names
from sia_theory.sweeps.labelled import CELL_ROW, ENTRY

xr = pytest.importorskip("xarray")

# quick stores of 1-7 s of CPU each in a fresh process (the others take 10-40 s): slow
FAST = ("cas_fig2_jacobian", "ext_si_on_cas", "train_grid")


_STORES = {}


def made_store(name: str, tmp_path_factory):
    """The quick store of study ``name`` (its quick settings at seed 0, in-process), made once
    per test session."""
    if name not in _STORES:
        study = get_study(name)
        store = tmp_path_factory.mktemp(name) / "store"
        study(study.quick(), seed=0, execution=Execution(scheduler="sync", store=store))
        _STORES[name] = store
    return _STORES[name]


@pytest.fixture(params=[
    pytest.param(name, marks=() if name in FAST else pytest.mark.slow) for name in SWEEPABLE])
def quick_store(request, tmp_path_factory):
    """``(study name, its quick store)``."""
    return request.param, made_store(request.param, tmp_path_factory)


def parts(table: pd.DataFrame) -> list:
    return sorted(table["part"].unique()) if "part" in parameter_names(table) else [None]


def labels(ds, table: pd.DataFrame, i: int) -> dict:
    """The coordinates in ``ds`` of row ``i`` of ``table`` (one part's rows)."""
    names = list(ds.indexes[ENTRY].names) if ENTRY in ds.dims else list(ds.dims)
    place = table.groupby("cell_key", sort=False).cumcount().iloc[i]
    return {n: place if n == CELL_ROW else table[n].iloc[i] for n in names}


def same_rows(frame: pd.DataFrame, columns: list) -> pd.DataFrame:
    frame = frame[columns].astype(object)
    return frame.sort_values(columns, kind="stable", ignore_index=True, key=lambda c: c.map(repr))


def test_each_part_of_each_quick_store_round_trips(quick_store):
    name, store = quick_store
    whole = pd.read_parquet(store / DATASET)
    for part in parts(whole):
        table = whole if part is None else whole[whole["part"] == part]
        table = table.reset_index(drop=True)
        ds = to_xarray(store, part=part)
        where = f"{name} part {part}"
        for var in ds.variables.values():  # one name per dimension
            assert len(set(var.dims)) == len(var.dims), where
        # one value per stored row: nothing densified, and no more memory than pandas'
        assert math.prod(ds.sizes.values()) == len(table), (where, dict(ds.sizes))
        assert ds.nbytes <= table.memory_usage(deep=False).sum(), where
        # every stored value back, at its coordinates: to_dataframe holds the part's rows
        kept = [c for c in table.columns if c != "cell_key" and table[c].notna().any()]
        frame = ds.to_dataframe().reset_index()
        assert set(frame.columns) - {CELL_ROW, ENTRY} == set(kept), where
        pd.testing.assert_frame_equal(same_rows(frame, kept), same_rows(table, kept),
                                      check_exact=True, obj=where)
        # a value read through xarray at a row's coordinates is that row's value
        numbers = [v for v in ds.data_vars if ds[v].dtype.kind in "fiu"]
        for i in (0, len(table) - 1):
            at = ds.sel(labels(ds, table, i))
            for v in numbers:
                got, want = at[v].item(), table[v].iloc[i]
                assert got == want or (np.isnan(got) and np.isnan(want)), (where, v, i)
        for dim in ds.dims:  # the operations that failed on a repeated dimension
            assert set(ds.mean(dim).dims) == set(ds.dims) - {dim}
            assert ds.dropna(dim, how="all").sizes[dim] <= ds.sizes[dim]


@pytest.mark.slow
def test_phase_diagram_grid_is_d_by_rho_by_gamma_and_its_means_are_pandas(tmp_path_factory):
    """The store of the report: three parts; the grid's axes are ``(d, rho, gamma)`` with the
    figure's ``row`` a coordinate along ``rho``; a mean over ``rho`` is pandas' mean."""
    settings = get_study("cas_fig1_phase_diagram").quick()
    store = made_store("cas_fig1_phase_diagram", tmp_path_factory)
    table = pd.read_parquet(store / DATASET)
    rows = table[table["part"] == "grid"]
    grid = to_xarray(store, part="grid")
    sizes = {"d": len(settings.dims), "rho": settings.size, "gamma": settings.size}
    assert dict(grid.sizes) == sizes and grid["row"].dims == ("rho",)
    assert grid["row"].values.tolist() == list(range(settings.size))
    assert grid["n"].item() == settings.n and grid["part"].item() == "grid"
    want = rows.groupby(["d", "gamma"])["cos_after_mean"].mean()
    got = grid["cos_after_mean"].mean("rho").to_series().reorder_levels(["d", "gamma"])
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_exact=False,
                                   rtol=1e-15, check_names=False)
    assert len(grid.to_dataframe().dropna(how="all")) == len(rows)
    scaling = to_xarray(store, part="scaling")
    assert dict(scaling.sizes) == {"draw": settings.scaling_draws,
                                   "n": len(settings.scaling_ns)}
    assert scaling["d"].item() == min(settings.dims)


def parted_rows() -> pd.DataFrame:
    """A small sweep with two parts: ``a`` over ``x`` and ``b`` over ``y``."""
    cells = [{"part": "a", "x": x} for x in (1, 2)] + [{"part": "b", "y": y} for y in (5, 6, 7)]
    return sweep(lambda c, s: {"v": float(c.get("x", 0) + c.get("y", 0))}, cells, store=None,
                 seed=0, scheduler="sync", progress=False)


def test_part_chooses_one_part_and_a_bad_part_names_the_parts():
    rows = parted_rows()
    a, b = to_xarray(rows, part="a"), to_xarray(rows, part="b")
    assert dict(a.sizes) == {"x": 2} and dict(b.sizes) == {"y": 3}
    assert a["v"].sel(x=2).item() == 2.0 and b["v"].sel(y=7).item() == 7.0
    assert "y" not in a.variables and "x" not in b.variables  # the other part's columns
    with pytest.raises(ValueError, match=r"part must be one of 'a', 'b'.*got 'c'"):
        to_xarray(rows, part="c")
    with pytest.raises(ValueError, match=r"part must be one of 'a', 'b'.*got None"):
        to_xarray(rows)
    single = sweep(lambda c, s: {"v": 1.0}, {"x": [1]}, store=None, seed=0, scheduler="sync",
                   progress=False)
    with pytest.raises(ValueError, match=r"part: the sweep has no 'part' parameter"):
        to_xarray(single, part="a")


def mixed_cell(cell, rng_seed):
    """Even ``x``: one row ``a, b``; odd ``x``: two rows ``a, c``."""
    if cell["x"] % 2 == 0:
        return {"a": cell["x"], "b": float(np.random.default_rng(rng_seed).normal())}
    return pd.DataFrame({"a": [cell["x"], -cell["x"]], "c": ["odd", "odder"]})


def test_cells_of_unequal_length_lie_along_entry_indexed_by_parameters_and_cell_row():
    rows = sweep(mixed_cell, {"x": [0, 1, 2, 3], "tag": ["p", "q"]}, store=None, seed=2,
                 scheduler="sync", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning from pandas or xarray on the way
        ds = to_xarray(rows)
    assert dict(ds.sizes) == {ENTRY: 12}  # 4 one-row and 4 two-row cells, no filler
    assert list(ds.indexes[ENTRY].names) == ["x", "tag", CELL_ROW]
    b = rows.set_index(["x", "tag"]).loc[(2, "q"), "b"]
    assert ds["b"].sel(x=2, tag="q", cell_row=0).item() == b
    assert ds["a"].sel(x=3, tag="p", cell_row=1).item() == -3
    assert ds["c"].sel(x=3, tag="p", cell_row=0).item() == "odd"
    assert ds["a"].mean(ENTRY).item() == pytest.approx(rows["a"].mean(), rel=1e-15)


def test_a_parameter_that_an_output_replaced_is_a_data_variable():
    """``stored_frame`` keeps a cell's own column of a parameter's name; here the parameters
    left (``x``) do not tell the cells apart, so they are plain coordinates along ``entry``."""
    rows = sweep(lambda c, s: {"k": 10 * c["x"] + 1, "v": 1.0}, {"x": [1, 2], "k": [0, 1]},
                 store=None, seed=0, scheduler="sync", progress=False)
    ds = to_xarray(rows)
    assert dict(ds.sizes) == {ENTRY: 4} and "k" in ds.data_vars and ENTRY not in ds.indexes
    assert ds["k"].where(ds["x"] == 2, drop=True).values.tolist() == [21, 21]
    only = sweep(lambda c, s: {"k": 5, "v": float(c["k"])}, {"k": [0, 1]}, store=None, seed=0,
                 scheduler="sync", progress=False)
    ds = to_xarray(only)  # no parameter left: the two cells along entry, unlabelled
    assert dict(ds.sizes) == {ENTRY: 2} and sorted(ds["v"].values.tolist()) == [0.0, 1.0]


def test_a_column_that_takes_a_dimension_name_is_refused():
    rows = sweep(lambda c, s: pd.DataFrame({"entry": [1, 2]}), {"x": [1, 2]}, store=None,
                 seed=0, scheduler="sync", progress=False)
    with pytest.raises(ValueError, match="column named 'entry'"):
        to_xarray(rows)


def test_to_xarray_without_xarray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)  # import xarray raises ImportError
    with pytest.raises(ImportError, match=r"sia-theory\[xarray\]"):
        to_xarray(pd.DataFrame({"cell_key": [json.dumps({"x": 1})], "y": [1.0]}))
