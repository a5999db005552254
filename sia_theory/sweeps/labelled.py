"""A sweep's rows as an ``xarray.Dataset``, one part at a time, without a dense blow-up.

The rows of a store (or of :func:`~sia_theory.sweeps.sweep`) are long: each cell's rows with
its parameters. :func:`to_xarray` labels them as follows, for the rows of one part (the cells
whose ``part`` parameter has one value; a sweep without that parameter is one part):

* A parameter with one value in the part is a scalar coordinate (``ds.n``).
* The other parameters are the axes, those without a missing value first, then numbers, then
  by name; a parameter that is a function of an axis before it is a coordinate along that axis
  instead (the phase diagram's ``row`` along ``rho``, the training grid's ``tau`` along
  ``scheme``).
* When a cell has more than one row, the rows of a cell are one more axis. If the part has two
  or more cells, all of one length, an output column that takes the same values in the same
  order in every cell describes the rows rather than measures them: it is a coordinate along
  that axis, and the first such column with no value twice in a cell (the phase diagram's
  ``gamma``) is the axis itself. Without one, the axis is :data:`CELL_ROW`, a row's place in
  its cell.
* Every other column is a data variable (``cell_seed`` included, ``cell_key`` left out); a
  column with no value in the part (a column of another part) is left out. A parameter whose
  column a cell's output replaced (``stored_frame`` keeps the output's) is a data variable.

If the axes make a full grid (as many rows as the product of their sizes), they are the
Dataset's dimensions. Otherwise nothing is densified: the rows lie along one dimension,
:data:`ENTRY`, indexed by a pandas MultiIndex of the axes (``ds.sel(d=32)`` and
``ds.unstack(ENTRY)`` work), with the coordinates above along it; if the axes do not tell the
rows apart (a replaced parameter told the cells apart) or one has a missing value (an axis is
chosen among the parameters without one first), they are plain coordinates along
:data:`ENTRY`. Either way the Dataset holds one value per stored row and column.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from . import store as stores
from .dataset import parameter_names, store_table

__all__ = ["to_xarray", "CELL_ROW", "ENTRY", "PART"]

CELL_ROW = "cell_row"
"""The dimension of a row's place in its cell (when no output column indexes a cell's rows)."""
ENTRY = "entry"
"""The one dimension of a part whose axes are not a full grid: one entry per stored row."""
PART = "part"
"""The parameter that splits a sweep into parts, each a Dataset of its own."""


def to_xarray(data, part: str | None = None):
    """The rows of a sweep, or of one of its parts, as a tidy ``xarray.Dataset`` (module
    docstring: which columns are dimensions, coordinates and data variables).

    Parameters
    ----------
    data : str, Path or pandas.DataFrame
        A sweep store (its finished cells are read), or the rows of
        :func:`~sia_theory.sweeps.store.load_sweep` or :func:`~sia_theory.sweeps.sweep`.
    part : str, optional
        The part to return, a value of the sweep's ``part`` parameter (the phase diagram's
        ``"grid"``, ``"transition"`` and ``"scaling"``); required when the sweep has one and
        left unset when it has none.

    Returns
    -------
    xarray.Dataset
        Dimensions named after the part's axes when they make a full grid, else the one
        dimension :data:`ENTRY`; as many values per variable as the part has rows.

    Raises
    ------
    ImportError
        If xarray is not installed (``pip install 'sia-theory[xarray]'``).
    ValueError
        If ``data`` is not a store or a DataFrame with ``cell_key``; if ``part`` is not one of
        the sweep's parts (the message lists them), is missing where the sweep has parts or is
        given where it has none; if a column of the part is named :data:`CELL_ROW` or
        :data:`ENTRY`.

    Examples
    --------
    >>> from sia_theory.sweeps import sweep
    >>> rows = sweep(lambda c, s: {"y": c["x"] * c["k"]}, {"x": [1, 2, 3], "k": [10, 20]},
    ...              store=None, seed=0, scheduler="sync", progress=False)
    >>> ds = to_xarray(rows)
    >>> dict(ds.sizes), ds["y"].sel(x=3, k=20).item()
    ({'k': 2, 'x': 3}, 60)
    """
    try:  # optional dependency: xarray, only for this function
        import xarray as xr
    except ImportError:
        raise ImportError("to_xarray needs xarray: pip install 'sia-theory[xarray]' (or "
                          "pip install xarray)") from None
    frame = data if isinstance(data, pd.DataFrame) else store_table(data).to_pandas()
    rows = _part_rows(frame, part)
    keys = rows["cell_key"].unique()
    given = pd.DataFrame([json.loads(k) for k in keys], index=keys)
    params = [p for p in sorted(given.columns) if _holds_key(rows, given, p)]
    data_cols = [c for c in rows.columns if c not in params and c != "cell_key"
                 and rows[c].notna().any()]
    for name in (CELL_ROW, ENTRY):
        if name in rows.columns:
            raise ValueError(f"the sweep has a column named {name!r}, the name to_xarray "
                             "gives a dimension")
    scalars = [p for p in params if rows[p].nunique(dropna=False) == 1]
    axes, along = _axes(rows, [p for p in params if p not in scalars])
    position = rows.groupby("cell_key", sort=False).cumcount()
    if position.any():  # a cell with more than one row: the rows of a cell are an axis
        within, grid_cols = _within_cell_axis(rows, position, data_cols)
        if within == CELL_ROW:
            rows = rows.assign(**{CELL_ROW: position.to_numpy()})
        data_cols = [c for c in data_cols if c not in grid_cols]
        along.update({c: within for c in grid_cols if c != within})
        axes.append(within)

    # an axis with a missing value labels nothing; axes that do not tell the rows apart neither
    indexable = bool(axes) and not any(rows[a].isna().any() for a in axes) and \
        not rows.duplicated(axes).any()
    if not axes and len(rows) == 1:  # one cell of one row
        ds = xr.Dataset({c: rows[c].iloc[0] for c in data_cols})
    elif indexable and math.prod(rows[a].nunique() for a in axes) == len(rows):  # a full grid
        ds = xr.Dataset.from_dataframe(rows.set_index(axes)[data_cols])
        for name, axis in along.items():
            values = rows.groupby(axis, sort=False)[name].first()
            ds.coords[name] = (axis, values.reindex(ds[axis].to_numpy()).to_numpy())
    else:
        if indexable:
            index = pd.MultiIndex.from_frame(rows[axes])
            coords = xr.Coordinates.from_pandas_multiindex(index, ENTRY)
            plain = list(along)
        else:
            coords, plain = None, [*axes, *along]
        ds = xr.Dataset({c: (ENTRY, rows[c].to_numpy()) for c in data_cols}, coords=coords)
        for name in plain:
            ds.coords[name] = (ENTRY, rows[name].to_numpy())
    for name in scalars:
        ds.coords[name] = rows[name].iloc[0]
    return ds


def _part_rows(frame: pd.DataFrame, part) -> pd.DataFrame:
    """The rows of ``part`` (all rows if the sweep has no parts), the rows of a cell together in
    their order, cells in key order; ``ValueError`` for a part the sweep does not have."""
    names = parameter_names(frame)
    if PART not in names:
        if part is not None:
            raise ValueError(f"part: the sweep has no {PART!r} parameter, so it is one part; "
                             f"leave part unset (got {part!r})")
        rows = frame
    else:
        parts = sorted(frame[PART].dropna().unique())
        if part not in parts:
            raise ValueError(f"part must be one of {', '.join(map(repr, parts))} (the values of "
                             f"the sweep's {PART!r} parameter), got {part!r}")
        rows = frame[frame[PART] == part]
    return rows.sort_values("cell_key", kind="stable", ignore_index=True)


def _holds_key(rows: pd.DataFrame, given: pd.DataFrame, name: str) -> bool:
    """Whether column ``name`` of ``rows`` holds the value of parameter ``name`` of each row's
    cell (a cell's output of that name replaces the parameter in the store)."""
    if name not in rows.columns or name in stores.CELL_COLUMNS:
        return False
    want = given[name].reindex(rows["cell_key"]).to_numpy(dtype=object)
    have = rows[name].to_numpy(dtype=object)
    missing = pd.isna(want)
    return bool((missing == pd.isna(have)).all() and (want[~missing] == have[~missing]).all())


def _axes(rows: pd.DataFrame, varying: list[str]) -> tuple[list[str], dict]:
    """The axes among the ``varying`` parameters (those without a missing value first, then
    numbers, then by name) and ``{parameter: axis}`` for each parameter that is a function of an
    axis before it."""
    order = sorted(varying, key=lambda p: (bool(rows[p].isna().any()),
                                           not pd.api.types.is_numeric_dtype(rows[p]), p))
    axes, along = [], {}
    for p in order:
        axis = next((a for a in axes if _function_of(rows, p, a)), None)
        if axis is None:
            axes.append(p)
        else:
            along[p] = axis
    return axes, along


def _function_of(rows: pd.DataFrame, name: str, axis: str) -> bool:
    """Whether column ``name`` has one value for each value of column ``axis``."""
    return bool(rows.groupby(axis, dropna=False)[name].nunique(dropna=False).max() == 1)


def _within_cell_axis(rows: pd.DataFrame, position: pd.Series, columns: list[str]):
    """The axis of a cell's rows and the columns that take the same values in every cell:
    ``(first such column with no value twice in a cell, those columns)``, or
    ``(CELL_ROW, those columns)`` if none has distinct values; ``(CELL_ROW, [])`` unless the
    part has two or more cells of equal length."""
    sizes = rows.groupby("cell_key", sort=False).size()
    if len(sizes) < 2 or sizes.nunique() != 1:
        return CELL_ROW, []
    shared = [c for c in columns if c not in stores.CELL_COLUMNS
              and rows.groupby(position)[c].nunique(dropna=False).max() == 1]
    first = next((c for c in shared if rows[c].notna().all()
                  and rows[c].nunique() == sizes.iloc[0]), CELL_ROW)
    return first, shared
