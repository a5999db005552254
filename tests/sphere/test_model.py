"""The sphere model (sia_theory.sphere.model): exact cosine sampling against the d-vector path
(in distribution and in moments), the distance law's constants against hand-worked cases (on
S², d = 3, the cosine of a uniform key is uniform on [−1, 1] (Archimedes), so every constant is
known by hand), the exact nearest keys against a full sort, the order parameters by hand, and
bad input."""

import math

import numpy as np
import pytest
from scipy import stats

from sia_theory.sphere.gaps import critical_scale, half_mass_beta
from sia_theory.sphere.model import (
    DistanceLaw,
    check_dimension,
    order_parameters,
    sample_cosines,
    sample_cosines_by_vectors,
    top_cosines,
)


@pytest.mark.parametrize("d", [2, 3, 5, 64])
def test_beta_cosines_match_normalised_gaussian_vectors(d):
    """cos(q, x) for x uniform on S^{d−1} by one Beta draw vs by a normalised Gaussian vector:
    two-sample Kolmogorov–Smirnov at 20 000 draws each (p > 1e-3)."""
    law = DistanceLaw.uniform(d)
    fast = sample_cosines(law, 20000, 1, np.random.default_rng(1)).ravel()
    slow = sample_cosines_by_vectors(d, 20000, 1, np.random.default_rng(2)).ravel()
    assert stats.ks_2samp(fast, slow).pvalue > 1e-3


@pytest.mark.parametrize("d", [3, 10])
def test_beta_draws_match_vectors_in_moments(d):
    """E[cos] = 0 and E[cos²] = 1/d for uniform keys on S^{d−1}; both paths, 4 SE."""
    rng = np.random.default_rng(0)
    for draw in (sample_cosines(DistanceLaw.uniform(d), 4000, 5, rng),
                 sample_cosines_by_vectors(d, 4000, 5, rng)):
        x = draw.ravel()
        se = math.sqrt(1 / x.size)
        assert abs(x.mean()) < 4 * se
        assert abs(np.mean(x * x) - 1 / d) < 4 * np.std(x * x) / math.sqrt(x.size)


def test_d3_cosine_is_uniform_and_c_is_hand_worked():
    """d = 3 (Archimedes): cos is uniform on [−1, 1], so P(1 − cos ≤ x) = x/2: C = ½ and
    P(r ≤ ρ) = ρ²/4: c = ¼ (r the chordal distance, r² = 2(1 − cos)); k = 2, b = 1, and the
    score with survival probability p is 1 − 2p."""
    law = DistanceLaw.uniform(3)
    assert (law.k, law.b) == (2.0, 1.0)
    assert law.gap_isf(np.array([0.1, 0.5])) == pytest.approx([0.8, 0.0])
    assert law.C == pytest.approx(0.5, rel=1e-12)
    assert law.c == pytest.approx(0.25, rel=1e-12)
    assert law.critical_beta(1000) == pytest.approx(500.0, rel=1e-12)  # (Cn)^{2/k}, k = 2


@pytest.mark.parametrize("d", [2, 4, 7])
def test_local_exponent_matches_the_beta_cdf_near_zero(d):
    """P(1 − cos ≤ x)/x^{(d−1)/2} → C as x → 0 (the regularised incomplete Beta at x/2)."""
    law = DistanceLaw.uniform(d)
    x = 1e-8
    ratio = stats.beta.cdf(x / 2, (d - 1) / 2, (d - 1) / 2) / x ** ((d - 1) / 2)
    assert ratio == pytest.approx(law.C, rel=1e-6)


def test_top_cosines_match_the_largest_of_a_full_draw():
    """The exact order statistics vs the top 5 of n = 4096 full draws: the means of each of the
    5 agree within 4 standard errors (2000 rows each)."""
    law = DistanceLaw.uniform(4)
    top = top_cosines(law, 4096, 5, 2000, np.random.default_rng(3))
    full = -np.sort(-sample_cosines(law, 4096, 2000, np.random.default_rng(4)), axis=1)[:, :5]
    for i in range(5):
        se = math.hypot(top[:, i].std() / math.sqrt(2000), full[:, i].std() / math.sqrt(2000))
        assert abs(top[:, i].mean() - full[:, i].mean()) <= 4 * se


def test_order_parameters_by_hand():
    """Weights (½, ¼, ¼): top mass ½, one key holds half, entropy (3/2) log 2; weights
    (0.6, 0.2, 0.2): top mass 0.6, two keys hold 70 %, entropy −Σ p log p."""
    logits = np.log([[2.0, 1.0, 1.0]])
    op = order_parameters(logits)
    assert op["top_mass"][0] == pytest.approx(0.5)
    assert op["share_count"][0] == 1
    assert order_parameters(logits, share=0.6)["share_count"][0] == 2
    assert order_parameters(logits, share=0.8)["share_count"][0] == 3
    assert op["entropy"][0] == pytest.approx(1.5 * math.log(2))
    logits = np.log(np.array([[3.0, 1.0, 1.0]]))
    op, p = order_parameters(logits), np.array([0.6, 0.2, 0.2])
    assert op["top_mass"][0] == pytest.approx(0.6)
    assert op["share_count"][0] == 1.0
    assert order_parameters(logits, share=0.7)["share_count"][0] == 2.0
    assert op["entropy"][0] == pytest.approx(-np.sum(p * np.log(p)))


@pytest.mark.parametrize("call, name", [
    (lambda: DistanceLaw.uniform(1), "d"),
    (lambda: check_dimension(1), "d"),
    (lambda: order_parameters(np.zeros((1, 2)), share=1.0), "share"),
    (lambda: DistanceLaw(math.inf, 1.0), "k"),
    (lambda: DistanceLaw(0.0, 1.0), "k"),
    (lambda: DistanceLaw(2.0, -1.0), "b"),
    (lambda: sample_cosines(DistanceLaw.uniform(3), 1, 1, np.random.default_rng(0)), "n"),
    (lambda: DistanceLaw.uniform(3).critical_beta(1), "n"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


def test_head_dimension_64_is_far_from_its_sphere_law_at_practical_n():
    """Uniform keys on S^63, n = 2⁸ … 2²⁰ (300 queries each): the measured critical scale grows
    like a power of log n (k ≈ 0.9, between the REM's and the simplex's), not like n^{2/63}
    (p ≈ 0.03 would be flat), and β_c is ~15× the sphere law's β*_n: the Poisson regime
    needs log n ≫ d/2. (Measured: p = 0.10 [0.09, 0.11], k = 0.93 [0.82, 1.03].)"""
    law = DistanceLaw.uniform(64)
    rng = np.random.default_rng(0)
    ns = [2**8, 2**11, 2**14, 2**17, 2**20]
    hm = {n: half_mass_beta(top_cosines(law, n, 512, 300, rng)) for n in ns}
    fit = critical_scale(dict.fromkeys(ns), half_mass=hm, boots=100)
    assert 0.6 < fit.log_power["value"] < 1.2
    assert fit.power["ci_low"] > 2 / 63 * 2
    ratio = fit.table["beta_c"] / [law.critical_beta(n) for n in ns]
    assert np.all(ratio > 10)
