"""Cells of a sweep: their parameters, their stable key and their seed.

A *cell* is a dict of scalar parameters (``int``, ``float``, ``str``, ``bool`` or ``None``;
numpy scalars are converted). Its *key* is the canonical JSON of the parameters sorted by name
(``{"d":512,"row":3}``): the same cell gives the same key in every process and Python version,
whatever order its parameters were written in. Its *seed* is derived from the sweep seed and the
cell only, through :mod:`sia_theory._infra.seeding`:

* by default ``seed_int(seed, study, key_index(key))`` (``key_index``: the first 8 bytes of the
  SHA-256 of the key, little endian, shifted right by one bit),
* or, for a study with its own seeding rule, ``seed_int(seed, *seed_key(cell))`` where
  ``seed_key(cell)`` returns ``(study_name, *indices)``.

So a cell's numbers cannot depend on the number of workers or on the order of completion.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers

import numpy as np

from .._infra.seeding import check_seed, seed_int

__all__ = ["expand_grid", "normalise_cell", "cell_key", "key_index", "cell_seed", "file_stem"]


def _scalar(name: str, value):
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isfinite(value):
            return value
    raise ValueError(f"grid parameter {name!r} must be an int, a finite float, a str, a bool or "
                     f"None, got {value!r}")


def normalise_cell(cell) -> dict:
    """``cell`` as a dict ``{str: scalar}`` sorted by name, or ``ValueError``."""
    if not isinstance(cell, dict) or not cell:
        raise ValueError(f"grid cells must be non-empty dicts of parameters, got {cell!r}")
    for name in cell:
        if not isinstance(name, str) or not name:
            raise ValueError(f"grid parameter names must be non-empty strings, got {name!r}")
    return {name: _scalar(name, cell[name]) for name in sorted(cell)}


def expand_grid(grid) -> list[dict]:
    """The cells of ``grid``: an iterable of dicts, or a dict of lists (their Cartesian
    product, the last parameter varying fastest). Duplicate cells are an error."""
    if isinstance(grid, dict):
        names = list(grid)
        axes = []
        for name in names:
            values = grid[name]
            if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
                raise ValueError(f"grid[{name!r}] must be a list of values, got {values!r}")
            axes.append(list(values))
        cells = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes)]
    else:
        try:
            cells = list(grid)
        except TypeError:
            raise ValueError(f"grid must be a dict of lists or an iterable of dicts, got "
                             f"{grid!r}") from None
    cells = [normalise_cell(c) for c in cells]
    if not cells:
        raise ValueError("grid must contain at least one cell")
    seen = set()
    for cell in cells:
        key = cell_key(cell)
        if key in seen:
            raise ValueError(f"grid contains the cell {key} twice")
        seen.add(key)
    return cells


def cell_key(cell) -> str:
    """Canonical JSON of the normalised cell (sorted names, shortest round-trip floats)."""
    return json.dumps(normalise_cell(cell), sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


def key_index(key: str) -> int:
    """A 63-bit index of a key for :func:`sia_theory._infra.seeding.seed_int`: the first 8
    bytes of its SHA-256 (little endian) shifted right by one bit."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little") >> 1


def file_stem(key: str) -> str:
    """The store's file name of a cell (the key itself may hold any character)."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def cell_seed(seed, cell: dict, *, study: str = "sweep", seed_key=None) -> int:
    """The cell's 63-bit seed: ``seed_int(seed, *seed_key(cell))`` if ``seed_key`` is given,
    else ``seed_int(seed, study, key_index(cell_key(cell)))``."""
    seed = check_seed(seed)
    if seed_key is None:
        return seed_int(seed, study, key_index(cell_key(cell)))
    spec = tuple(seed_key(cell))
    if not spec or not isinstance(spec[0], str):
        raise ValueError(f"seed_key(cell) must return (study_name, *indices), got {spec!r}")
    return seed_int(seed, *spec)
