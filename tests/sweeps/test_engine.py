"""sia_theory.sweeps.engine, exercised by its own name: a sweep's rows, per-cell seeds, resuming
from the store without recomputing, and failed cells recorded."""

import pandas as pd
import pytest

from sia_theory._infra.seeding import seed_int
from sia_theory.sweeps.engine import SweepError, run_cells, sweep
from sia_theory.sweeps.grid import cell_key, key_index

CALLS = []


def _square(cell, rng_seed):
    CALLS.append(cell["x"])
    if cell["x"] < 0:
        raise ValueError("negative x")
    return pd.DataFrame({"square": [cell["x"] ** 2], "seed_seen": [rng_seed]})


def test_rows_seeds_and_resume(tmp_path):
    CALLS.clear()
    table = sweep(_square, {"x": [1, 2, 3]}, store=tmp_path / "s", seed=4, scheduler="sync",
                  progress=False)
    assert table["square"].tolist() == [1, 4, 9]
    expected = [seed_int(4, "sweep", key_index(cell_key({"x": x}))) for x in (1, 2, 3)]
    assert table["seed_seen"].tolist() == expected == table["cell_seed"].tolist()
    again = sweep(_square, {"x": [1, 2, 3, 4]}, store=tmp_path / "s", seed=4, scheduler="sync",
                  progress=False)
    assert CALLS == [1, 2, 3, 4]  # only the new cell ran
    assert again["square"].tolist() == [1, 4, 9, 16]


def test_failed_cells_recorded_or_raised():
    table = sweep(_square, {"x": [-1, 2]}, store=None, seed=0, scheduler="sync", progress=False)
    assert table["square"].tolist() == [4]
    assert list(table.attrs["errors"].values())[0].startswith("ValueError")
    with pytest.raises(SweepError):
        sweep(_square, {"x": [-1]}, store=None, seed=0, scheduler="sync", progress=False,
              on_error="raise")


def test_bad_arguments_named():
    with pytest.raises(ValueError, match="fn"):
        run_cells(3, {"x": [1]}, seed=0)
    with pytest.raises(ValueError, match="on_error"):
        run_cells(_square, {"x": [1]}, seed=0, on_error="ignore")
