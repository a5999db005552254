"""Validation helpers, atomic writes and the claims-table runner."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sia_theory._infra.io import atomic_path, write_csv
from sia_theory._infra.validate import check_finite_array, check_int, check_real


@pytest.mark.parametrize("value", [True, 2.5, "3", None, float("nan"), np.inf])
def test_check_int_rejects_non_integers(value):
    with pytest.raises(ValueError, match="^n must be an integer"):
        check_int("n", value, lo=0)


def test_check_int_accepts_integral_values_and_enforces_bounds():
    assert check_int("n", 1e5, lo=1) == 100_000 and check_int("n", np.int64(3)) == 3
    with pytest.raises(ValueError, match=r"n must be an integer >= 2 and <= 4, got 5"):
        check_int("n", 5, lo=2, hi=4)


def test_check_real_open_bounds_and_finiteness():
    assert check_real("x", 0.5, 0, 1, lo_open=True, hi_open=True) == 0.5
    for bad in (0, 1, float("nan"), "a"):
        with pytest.raises(ValueError, match="^x must be a finite real number > 0 and < 1"):
            check_real("x", bad, 0, 1, lo_open=True, hi_open=True)
    with pytest.raises(ValueError, match="finite"):
        check_finite_array("X", [[1.0, np.nan]])


def test_failed_write_keeps_previous_file_intact(tmp_path):
    target = tmp_path / "data.csv"
    write_csv(target, pd.DataFrame({"x": [1, 2]}))
    before = target.read_text()
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half-written")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["data.csv"]


def test_paper_checks_rejects_unknown_ids_with_status_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "paper_checks", "--quick", "--only", "NOPE-1",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "NOPE-1" in proc.stderr and not any(tmp_path.iterdir())


def test_zero_dimensional_arrays_are_accepted_as_scalars():
    assert check_real("x", np.array(0.5), 0, 1) == 0.5
    assert check_int("n", np.array(7), lo=1) == 7


def test_complex_input_is_rejected_not_truncated():
    with pytest.raises(ValueError, match="^X must contain only finite real numbers, got dtype"):
        check_finite_array("X", np.array([1 + 2j]), dtype=np.float64)


def test_mean_se_matches_direct_formula_and_refuses_a_single_draw():
    from sia_theory._infra.stats import mean_se

    values = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 7.0]])
    mean, se = mean_se(values)
    np.testing.assert_allclose(mean, [3.0, 5.0])
    np.testing.assert_allclose(se, [2.0 / np.sqrt(3), np.sqrt(7.0) / np.sqrt(3)])
    single_mean, single_se = mean_se([4.0])
    assert single_mean == 4.0 and np.isnan(single_se)
