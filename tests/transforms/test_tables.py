"""sia_theory.transforms.tables, exercised by its own name: coefficient tables of SI (per distance),
LogN (per query row) and a transform of both, against the formulas written out here."""

import math

import numpy as np
import pytest

from sia_theory import LogN, ScaleInvariant, Transform
from sia_theory.transforms.tables import (
    check_tables,
    coefficient_tables,
    is_separable,
    table_bytes,
    table_score_mod,
)


class DistanceAndContext(Transform):
    """a = 1 + t/n, m = −t: depends on both (the full (T, T) tables)."""

    depends_on = frozenset({"distance", "context"})

    def affine(self, t, n, h):
        return 1.0 + t / n, -t


def test_si_tables_are_per_distance():
    """a_t² = 1 + 2 log(1 + t/τ), m_t = 1 − a_t² (SI eq. 16, α = β)."""
    tables = coefficient_tables(ScaleInvariant(tau=10.0), 1, 41, np.float64)
    t = np.arange(41)
    a2 = 1 + 2 * np.log1p(t / 10)
    assert tables["a_dist"][0] == pytest.approx(np.sqrt(a2), rel=1e-14)
    assert tables["m_dist"][0] == pytest.approx(1 - a2, abs=1e-14)
    assert np.all(tables["a_row"] == 1) and np.all(tables["m_row"] == 0)


def test_logn_tables_are_per_row():
    tables = coefficient_tables(LogN(s=0.5), 2, 8, np.float64)
    assert tables["a_row"][1] == pytest.approx(0.5 * np.log(np.arange(1, 9)))
    assert np.all(tables["a_dist"] == 1)


def test_full_tables_and_their_score_mod():
    transform = DistanceAndContext()
    assert not is_separable(transform) and is_separable(LogN())
    tables = coefficient_tables(transform, 1, 5, np.float64)
    assert tables["a_full"][0, 4, 1] == pytest.approx(1 + 3 / 5)  # q = 4: n = 5, t = 3
    mod = table_score_mod(transform, None, 5, np.dtype(np.float64), np.asarray)
    got = mod(np.array(2.0), 0, 0, np.array(4), np.array(1))
    assert float(got) == pytest.approx(2 * (1 + 3 / 5) - 3)


def test_float32_overflow_is_named():
    class Huge(Transform):
        depends_on = frozenset({"distance"})

        def affine(self, t, n, h):
            return np.ones_like(t), np.where(t > 2, 1e39, 0.0)

    with pytest.raises(ValueError, match="distance 3"):
        check_tables(Huge(), 1, 5, np.float32)
    check_tables(Huge(), 1, 5, np.float64)
    assert math.isfinite(float(coefficient_tables(Huge(), 1, 5, np.float64)["m_dist"][0, 4]))


def test_bad_input_named():
    with pytest.raises(ValueError, match="transform"):
        coefficient_tables("si", 1, 4)
    with pytest.raises(ValueError, match="dtype"):
        coefficient_tables(LogN(), 1, 4, np.int32)
    with pytest.raises(ValueError, match="length"):
        coefficient_tables(LogN(), 1, 0)


def test_full_tables_score_mod_reads_nan_out_of_range_and_takes_q_offset():
    # a = 1 + t/n, m = −t with t = q − kv, n = q + 1, for positions 0 … 4
    mod = table_score_mod(DistanceAndContext(), None, 5, np.dtype(np.float64), np.asarray)
    q_idx = np.array([4, 5, 9, -1, 4, 2])
    kv_idx = np.array([1, 1, 1, 0, -2, 7])
    got = mod(np.full(6, 2.0), 0, 0, q_idx, kv_idx)
    assert got[0] == pytest.approx(2 * (1 + 3 / 5) - 3)
    assert np.all(np.isnan(got[1:]))  # query past the table, negative, key past it
    # the query's absolute position is q_idx + q_offset: q = 0 + 4 is the entry above
    shifted = table_score_mod(DistanceAndContext(), None, 5, np.dtype(np.float64), np.asarray,
                              q_offset=4)
    assert float(shifted(np.array(2.0), 0, 0, np.array(0), np.array(1))) == pytest.approx(
        2 * (1 + 3 / 5) - 3)
    assert np.isnan(shifted(np.array(2.0), 0, 0, np.array(1), np.array(1)))


def test_row_tables_score_mod_default_dtype_picks_by_the_scores():
    # LogN s = 0.5 at n = 3: a = 0.5·log 3, in the scores' precision (numpy dtypes)
    mod = table_score_mod(LogN(s=0.5), None, 4, None, np.asarray)
    got64 = mod(np.float64(1.0), 0, 0, np.array(2), np.array(0))
    got32 = mod(np.float32(1.0), 0, 0, np.array(2), np.array(0))
    assert got64 == 0.5 * math.log(3) and got64.dtype == np.float64
    assert got32 == np.float32(0.5 * math.log(3)) and got32.dtype == np.float32


def test_table_bytes_and_the_bound():
    # two tables a, m of length + 1 entries in each dtype (4 + 8 bytes an entry), their
    # float64 values before rounding (8 bytes an entry) and the float64 distances 0 … length−1;
    # for a transform of both, (length + 1)² entries and three float64 (length, length) grids
    assert table_bytes(ScaleInvariant(), 3, 100, [np.float32, np.float64]) == (
        2 * 101 * 12 + 2 * 101 * 8 + 8 * 100)
    assert table_bytes(DistanceAndContext(), 1, 100, [np.float32]) == (
        2 * 101**2 * 4 + 2 * 101**2 * 8 + 3 * 8 * 100**2)
    with pytest.raises(ValueError, match=r"length=100 needs about 4\.73 KiB.*max_bytes"):
        table_score_mod(ScaleInvariant(), None, 100, None, np.asarray, max_bytes=1000)
    with pytest.raises(ValueError, match="q_offset must be an integer >= 0"):
        table_score_mod(ScaleInvariant(), None, 100, None, np.asarray, q_offset=-1)
