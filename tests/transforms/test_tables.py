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
