"""sia_theory.sweeps.store, exercised by its own name: a cell written and read back unchanged,
its files, the manifest guarding (study, seed), errors recorded and cleared."""

import pandas as pd
import pytest

from sia_theory.sweeps.grid import cell_key, file_stem
from sia_theory.sweeps.store import (
    check_store,
    clear_error,
    finished_stems,
    load_errors,
    load_sweep,
    open_store,
    read_cell,
    read_cell_files,
    write_cell,
    write_error,
)


def test_round_trip(tmp_path):
    root = open_store(tmp_path / "s", study="demo", seed=3)
    cell = {"n": 2}
    key = cell_key(cell)
    stem = file_stem(key)
    frame = pd.DataFrame({"value": [1.5, -2.0], "label": ["a", "b"]})
    write_cell(root, stem, frame, cell, key, 99, files={"trace.bin": b"\x00\x01"})
    assert finished_stems(root) == {stem}
    pd.testing.assert_frame_equal(read_cell(root, stem), frame)
    assert read_cell_files(root, stem) == {"trace.bin": b"\x00\x01"}
    table = load_sweep(root)
    assert table["value"].tolist() == [1.5, -2.0]
    assert set(table["n"]) == {2} and set(table["cell_seed"]) == {99}
    assert set(table["cell_key"]) == {key}


def test_errors_recorded_and_cleared(tmp_path):
    root = open_store(tmp_path / "s", study="demo", seed=0)
    key = cell_key({"n": 1})
    write_error(root, file_stem(key), {"n": 1}, key, 5, "ValueError: boom", "traceback")
    errors = load_errors(root)
    assert errors["error"].tolist() == ["ValueError: boom"] and errors["n"].tolist() == [1]
    clear_error(root, file_stem(key))
    assert len(load_errors(root)) == 0


def test_manifest_guards_study_and_seed(tmp_path):
    open_store(tmp_path / "s", study="demo", seed=0)
    assert check_store(tmp_path / "s", study="demo", seed=0) == tmp_path / "s"
    with pytest.raises(ValueError, match="seed|study"):
        check_store(tmp_path / "s", study="demo", seed=1)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="store"):
        check_store(tmp_path / "file", study="demo", seed=0)
