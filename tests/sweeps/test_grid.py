"""sia_theory.sweeps.grid, exercised by its own name: cells, canonical keys, SHA-256 stems and
indices recomputed here with hashlib, and per-cell seeds."""

import hashlib
import json

import numpy as np
import pytest

from sia_theory._infra.seeding import seed_int
from sia_theory.sweeps.grid import (
    cell_key,
    cell_seed,
    expand_grid,
    file_stem,
    key_index,
    normalise_cell,
)


def test_cartesian_product_last_fastest():
    cells = expand_grid({"n": [1, 2], "kind": ["a", "b"]})
    assert cells == [{"kind": "a", "n": 1}, {"kind": "b", "n": 1}, {"kind": "a", "n": 2},
                     {"kind": "b", "n": 2}]


def test_keys_stems_and_indices_by_hand():
    cell = {"x": np.float64(0.1), "n": np.int64(3), "flag": True}
    key = cell_key(cell)
    assert key == json.dumps({"flag": True, "n": 3, "x": 0.1}, separators=(",", ":"))
    digest = hashlib.sha256(key.encode()).digest()
    assert key_index(key) == int.from_bytes(digest[:8], "little") >> 1
    assert file_stem(key) == hashlib.sha256(key.encode()).hexdigest()[:24]
    assert normalise_cell(cell) == {"flag": True, "n": 3, "x": 0.1}


def test_cell_seed_rules():
    cell = {"n": 4}
    assert cell_seed(7, cell) == seed_int(7, "sweep", key_index(cell_key(cell)))
    assert cell_seed(7, cell, seed_key=lambda c: ("study", c["n"])) == seed_int(7, "study", 4)
    assert cell_seed(7, cell) != cell_seed(8, cell)


@pytest.mark.parametrize(("grid", "match"), [
    ({"n": 3}, "grid\\['n'\\]"), ([], "at least one cell"), ([{"n": 1}, {"n": 1}], "twice"),
    ([{"n": float("nan")}], "'n'"), ([{}], "non-empty")])
def test_bad_grids_named(grid, match):
    with pytest.raises(ValueError, match=match):
        expand_grid(grid)
    with pytest.raises(ValueError, match="seed_key"):
        cell_seed(0, {"n": 1}, seed_key=lambda c: (1,))
