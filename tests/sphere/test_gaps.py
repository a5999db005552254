"""The gap-counting diagnostic (sia_theory.sphere.gaps): the half-mass point against a root finder
written out here, the counts against a loop, the simplex's exact law, the exact order
statistics, bad input."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from sia_theory.sphere.gaps import critical_scale, gap_counts, half_mass_beta, top_scores


def test_half_mass_point_matches_a_bracketed_root():
    """Σ_{j≠top} e^{−βΔ_j} = 1 solved by brentq on each of 5 Gaussian rows (rtol 1e-10)."""
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((5, 300))
    got = half_mass_beta(rows)
    for row, b in zip(rows, got, strict=True):
        gaps = np.sort(row.max() - row)[1:]
        want = optimize.brentq(lambda x, g=gaps: np.exp(-x * g).sum() - 1, 1e-6, 1e4,
                               xtol=1e-14, rtol=1e-13)
        assert b == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_simplex_row_is_exact(n):
    """Self 1, others ρ = 0.3: (n − 1)e^{−β(1−ρ)} = 1, β_½ = log(n − 1)/0.7."""
    row = np.r_[1.0, np.full(n - 1, 0.3)]
    assert half_mass_beta(row)[0] == pytest.approx(math.log(n - 1) / 0.7, rel=1e-12)


def test_two_keys_and_ties():
    assert half_mass_beta([1.0, 0.0])[0] == 0.0
    assert half_mass_beta([1.0, 1.0, 0.0])[0] == math.inf  # a tied maximum never wins ½


def test_gap_counts_match_a_loop():
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((3, 50))
    gaps = np.array([0.0, 0.1, 0.5, 2.0])
    got = gap_counts(rows, gaps)
    for r, row in enumerate(rows):
        top = int(np.argmax(row))
        for i, g in enumerate(gaps):
            assert got[r, i] == sum(1 for j in range(50) if j != top and row[top] - row[j] <= g)


def test_critical_scale_recovers_the_simplex_exponent():
    """Exact simplex rows: β_c = log(n−1)/(1−ρ); k on log log n equals the slope of
    log log(n − 1), computed here."""
    ns = [2**6, 2**9, 2**12, 2**15]
    fit = critical_scale({n: np.r_[1.0, np.full(n - 1, 0.5)][None, :] for n in ns}, boots=20)
    x = np.log(np.log(ns))
    want = np.polyfit(x, np.log(np.log(np.array(ns) - 1.0)), 1)[0]
    assert fit.log_power["value"] == pytest.approx(want, rel=1e-9)
    assert fit.table["beta_c"].tolist() == pytest.approx([2 * math.log(n - 1) for n in ns])


def test_top_scores_match_the_largest_of_a_full_draw():
    """The exact top 3 of n = 5000 normals vs a full sort: means within 4 standard errors."""
    top = top_scores(stats.norm.isf, 5000, 3, 3000, np.random.default_rng(2))
    full = -np.sort(-np.random.default_rng(3).standard_normal((3000, 5000)), axis=1)[:, :3]
    for i in range(3):
        se = math.hypot(top[:, i].std(), full[:, i].std()) / math.sqrt(3000)
        assert abs(top[:, i].mean() - full[:, i].mean()) <= 4 * se


@pytest.mark.parametrize("call, name", [
    (lambda: half_mass_beta([1.0, float("nan"), 0.0]), "scores"),
    (lambda: half_mass_beta([1.0]), "scores"),
    (lambda: gap_counts([[1.0, 0.0]], [-1.0]), "gaps"),
    (lambda: critical_scale({4: np.zeros((1, 4)), 8: np.zeros((1, 8))}), "rows_by_n"),
    (lambda: critical_scale({2: None, 8: None, 9: None}), "n"),
    (lambda: critical_scale({4: np.ones((1, 4))} | {5: np.ones((1, 5)), 6: np.ones((1, 6))},
                            boots=3), "boots"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()
