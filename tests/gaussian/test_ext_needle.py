"""Needle retrieval (EXT-7): the exact routes against brute-force Monte Carlo
(``|mc − exact| <= 4`` standard errors, the null hypothesis's binomial or sample SE), against
independent numerics (direct sums, inverse-CDF sampling of the maximum at N = 1e9), the
extreme-value pieces against their definitions, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_ndtr, logsumexp, ndtri

import sia_theory as sia
from sia_theory._infra.seeding import rng_for
from sia_theory.gaussian.needle import (
    argmax_probability,
    expected_log_rest,
    needle_mass,
    rest_log_cdf,
)
from sia_theory.gaussian.needle_montecarlo import median_interval, simulate_needle
from sia_theory.gaussian.needle_theory import (
    EULER_GAMMA,
    argmax_threshold,
    classical_threshold,
    evt_threshold,
    gumbel_gauss_median,
    mass_threshold,
    power_law_threshold,
)
from sia_theory.studies.ext_needle import NeedleSettings, needle_study, t_grid, threshold_ts
from sia_theory.zoo import ZOO

K = 4.0  # standard errors
DELTAS = np.array([1.0, 2.5, 4.0])
# β = α log α puts SI's a_0 at 0: the key at s = 0 has the deterministic logit log α
DEGENERATE = sia.ScaleInvariant(10.0, alpha=2.0, beta=2.0 * math.log(2.0))
CASES = [("none", ZOO["none"], 1000, 500), ("critical", ZOO["critical"], 2000, 0),
         ("alibi", ZOO["alibi"], 1000, 20), ("si", ZOO["scale-invariant"], 3000, 0),
         ("si", ZOO["scale-invariant"], 3000, 700), ("degenerate", DEGENERATE, 1000, 30)]


@pytest.fixture(scope="module")
def simulations():
    return {(label, n, t): simulate_needle(tr, n, t, DELTAS, 1500, seed=11)
            for label, tr, n, t in CASES}


def _binomial_se(p, n):
    return np.maximum(np.sqrt(p * (1 - p) / n), 1.0 / n)


@pytest.mark.parametrize(("label", "transform", "n", "t"), CASES)
def test_argmax_probability_matches_brute_force_monte_carlo(simulations, label, transform, n, t):
    mc = simulations[(label, n, t)]
    exact = argmax_probability(transform, n, t, DELTAS)
    assert np.all(np.abs(mc["p_argmax"] - exact) <= K * _binomial_se(exact, mc["samples"]))


@pytest.mark.parametrize(("label", "transform", "n", "t"), CASES)
def test_needle_mass_matches_brute_force_monte_carlo(simulations, label, transform, n, t):
    mc = simulations[(label, n, t)]
    exact = needle_mass(transform, n, t, DELTAS)
    assert np.all(np.abs(mc["mass"] - exact) <= K * np.maximum(mc["mass_se"], 1e-12))


@pytest.mark.parametrize(("label", "transform", "n", "t"), CASES)
def test_monte_carlo_threshold_interval_holds_the_exact_threshold(simulations, label, transform,
                                                                 n, t):
    """The median of the per-draw margins is the Monte Carlo δ*; its ±4 SE order-statistic
    interval must hold the exact root."""
    _, lo, hi = median_interval(simulations[(label, n, t)]["margins"], k=K)
    assert lo <= argmax_threshold(transform, n, t) <= hi


def test_degenerate_needle_ignores_delta_and_has_no_threshold():
    """a_0 = 0: the needle's logit is log α whatever δ; P and mass are flat in δ, δ* is nan."""
    p = argmax_probability(DEGENERATE, 1000, 0, [0.0, 5.0, 50.0])
    mass = needle_mass(DEGENERATE, 1000, 0, [0.0, 5.0, 50.0])
    assert np.ptp(p) < 1e-12 and np.ptp(mass) < 1e-12
    assert math.isnan(argmax_threshold(DEGENERATE, 1000, 0))
    assert math.isnan(mass_threshold(DEGENERATE, 1000, 0))
    mc = simulate_needle(DEGENERATE, 1000, 0, [0.0], 1500, seed=3)
    assert abs(mc["p_argmax"][0] - p[0]) <= K * _binomial_se(p[0], 1500)


@pytest.mark.parametrize("name", ["alibi", "scale-invariant"])
def test_rest_log_cdf_quadrature_matches_the_direct_sum(name):
    """The distance quadrature against the obvious sum over every other key (N = 20000)."""
    transform, n, t = ZOO[name], 20000, 137
    s = np.delete(np.arange(n, dtype=float), t)
    a, m = transform.coefficients(s, n_ctx=float(n))
    levels = np.array([-1.0, 1.0, 2.5, 4.0, 7.0])
    direct = np.array([np.sum(log_ndtr((lv - m) / a)) for lv in levels])
    assert rest_log_cdf(transform, n, t, levels) == pytest.approx(direct, rel=1e-6, abs=1e-9)


def test_position_agnostic_argmax_at_a_billion_keys_matches_inverse_cdf_sampling():
    """N = 1e9: the largest of n iid normals drawn exactly as ``Φ̄^{-1}(1 − U^{1/n})``."""
    n = 10**9
    rng = rng_for(5, "test.needle.max")
    u, x = rng.random(20000), rng.standard_normal(20000)
    top = -ndtri(-np.expm1(np.log(u) / (n - 1)))  # (S,) max of n − 1 standard normals
    for name in ("none", "logn", "critical"):
        exact = argmax_probability(ZOO[name], n, 12345, [5.5, 6.0, 6.5])
        mc = np.array([(x + d > top).mean() for d in (5.5, 6.0, 6.5)])
        assert np.all(np.abs(mc - exact) <= K * _binomial_se(exact, 20000))


def test_multiplier_cancels_for_the_argmax_but_not_for_the_mass():
    n, t = 10**6, 42
    p = [argmax_probability(ZOO[k], n, t, DELTAS) for k in ("none", "logn", "critical", "yarn")]
    assert np.ptp(np.array(p), axis=0).max() < 1e-12
    masses = [needle_mass(ZOO[k], n, t, [4.0])[0] for k in ("none", "logn", "critical")]
    assert np.ptp(masses) > 0.1


def test_expected_log_rest_matches_monte_carlo():
    """Frullani's ``E[log Z_rest]`` against sampled contexts (4 SE)."""
    for name, n, t in (("scale-invariant", 2000, 5), ("logn", 2000, 0)):
        transform = ZOO[name]
        a, m = transform.coefficients(np.arange(n, dtype=float), n_ctx=float(n))
        keep = np.arange(n) != t
        rng = rng_for(8, "test.needle.logz")
        draws = np.array([logsumexp(a[keep] * rng.standard_normal(n - 1) + m[keep])
                          for _ in range(1500)])
        se = draws.std(ddof=1) / math.sqrt(draws.size)
        assert abs(draws.mean() - expected_log_rest(transform, n, t).value) <= K * se


def test_gumbel_gauss_median_limits_and_monte_carlo():
    assert gumbel_gauss_median(400.0) * 400.0 == pytest.approx(EULER_GAMMA, rel=1e-3)
    assert gumbel_gauss_median(1e-3) * 1e-3 == pytest.approx(-math.log(math.log(2)), rel=1e-3)
    rng = rng_for(2, "test.needle.gumbel")
    draws = rng.standard_normal(40000) + rng.gumbel(size=40000) / 1.3
    _, lo, hi = median_interval(draws, k=K)
    assert lo <= gumbel_gauss_median(1.3) <= hi


def test_position_agnostic_threshold_approaches_the_classical_constants():
    """δ* − (b_n + γ/a_n) shrinks with N (EVT's slow convergence) and is below 0.05 from
    N = 1e3; the leading √(2 log N) alone stays 0.3–0.5 too high."""
    errors, leads = [], []
    for n in (10**3, 10**6, 10**9):
        exact = argmax_threshold(ZOO["none"], n, 0)
        errors.append(abs(exact - classical_threshold(n)))
        leads.append(math.sqrt(2 * math.log(n)) - exact)
        assert abs(evt_threshold(ZOO["none"], n, 0) - exact) < 0.05
    assert errors[0] > errors[1] > errors[2] and errors[0] < 0.05
    assert all(0.3 < x < 0.5 for x in leads)


def test_power_law_threshold_is_scale_local():
    """SI: the closed form is within 0.1 of the exact δ*, which moves by < 0.2 at t = 1000
    from N = 1e5 to 1e9 while the agnostic δ* moves by > 1."""
    si = ZOO["scale-invariant"]
    for n, t in ((10**5, 1000), (10**9, 1000), (10**9, 10**7)):
        assert abs(power_law_threshold(si, n, t) - argmax_threshold(si, n, t)) < 0.1
    assert abs(argmax_threshold(si, 10**9, 1000) - argmax_threshold(si, 10**5, 1000)) < 0.2
    assert classical_threshold(10**9) - classical_threshold(10**5) > 1.0


def test_head_dependent_alibi_with_a_head_equals_the_single_slope():
    """ALiBi.standard(8) at head 3 has slope 2^-4, the zoo's single-slope ALiBi."""
    many = sia.ALiBi.standard(8)
    assert argmax_probability(many, 5000, 30, DELTAS, head=3) == pytest.approx(
        argmax_probability(ZOO["alibi"], 5000, 30, DELTAS), abs=1e-12)
    with pytest.raises(ValueError, match="head"):
        argmax_probability(many, 5000, 30, DELTAS)


def test_grids():
    assert list(threshold_ts(1000)) == [0, 1, 10, 100, 999]
    grid = t_grid(10**6, 2)
    assert grid[0] == 0 and grid[1] == 1 and grid[-1] == 10**6 - 1
    assert np.all(np.diff(grid) > 0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: argmax_probability(ZOO["none"], 1, 0, [1.0]), "n_ctx"),
    (lambda: argmax_probability(ZOO["none"], 100, 100, [1.0]), "t must"),
    (lambda: argmax_probability(ZOO["none"], 100, -1, [1.0]), "t must"),
    (lambda: argmax_probability(ZOO["none"], 100, 2.5, [1.0]), "t must"),
    (lambda: argmax_probability(ZOO["none"], 100, 0, [np.nan]), "deltas"),
    (lambda: needle_mass(ZOO["none"], 100, 0, ["x"]), "deltas"),
    (lambda: simulate_needle(ZOO["none"], 100, 0, [1.0], 1, seed=0), "samples"),
    (lambda: simulate_needle(ZOO["none"], 100, 0, [1.0], 10, seed=-1), "seed"),
    (lambda: simulate_needle(ZOO["none"], 10**8, 0, [1.0], 10, seed=0), "n_ctx"),
    (lambda: power_law_threshold(ZOO["none"], 100, 0), "power law"),
    (lambda: gumbel_gauss_median(0.0), "c must"),
    (lambda: classical_threshold(2), "n_ctx"),
    (lambda: median_interval([1.0]), "draws"),
    (lambda: needle_study(NeedleSettings.quick().__class__(schemes=("nope",)), seed=0),
     "schemes"),
])
def test_bad_input_is_rejected_with_the_parameter_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_mass_threshold_without_scaling_is_log_n_plus_a_half():
    """No scaling (β = 1, liquid): ``E[log Z_rest] = log(N − 1) + ½`` up to ``O(1/N)``, so the
    free-energy threshold is ``log(N − 1) + ½``, and the exact mass root sits on it."""
    n = 10**6
    assert expected_log_rest(ZOO["none"], n, 0).value == pytest.approx(math.log(n - 1) + 0.5,
                                                          abs=1e-4)
    assert mass_threshold(ZOO["none"], n, 0) == pytest.approx(math.log(n - 1) + 0.5, abs=0.01)


@pytest.mark.parametrize("name", ["logn", "scale-invariant"])
def test_needle_mass_is_converged_in_its_grids(name, monkeypatch):
    """The exact route's two levels agree to < 1e-8 (its stated error), and halving the ``u``
    trapezoid step moves the mass by < 1e-9, at N = 1e9 and up to δ = 10 (LogN there is frozen:
    the needle's logit reaches 150)."""
    from sia_theory.gaussian import needle

    deltas = [2.0, 6.0, 10.0]
    coarse, error = needle.needle_mass_with_error(ZOO[name], 10**9, 100, deltas)
    assert error.max() < 1e-8
    monkeypatch.setattr(needle, "U_STEP", needle.U_STEP / 2)
    fine = needle_mass(ZOO[name], 10**9, 100, deltas)
    assert np.abs(fine - coarse).max() < 1e-9


@pytest.mark.parametrize(("name", "t"), [("scale-invariant", 1000), ("alibi", 20),
                                         ("logn", 100)])
def test_needle_mass_at_a_billion_keys_matches_the_asymptotic_sampler(name, t):
    """N = 1e9, where brute force cannot go: the asymptotic sampler draws ``log Z_rest`` (the
    ranges ``[0, t)`` and ``[t+1, N)``, top 500 logits exact), the needle's own Gaussian is
    integrated out per draw (Gauss–Hermite), and the mean must lie within 4 SE of the exact
    mass; ``E[log Z_rest]`` likewise against Frullani's integral."""
    from sia_theory.gaussian.asymptotic import asymptotic_range_statistics

    n, transform = 10**9, ZOO[name]
    stats = asymptotic_range_statistics(transform, [(0, t), (t + 1, n)], 1000, 7, top_k=500,
                                        n_ctx=n)
    log_rest = np.logaddexp(stats["log_Z"][:, 0], stats["log_Z"][:, 1])  # (S,)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    a_t, m_t = transform.coefficients(np.array([float(t)]), n_ctx=float(n))
    for delta, exact in zip(DELTAS, needle_mass(transform, n, t, DELTAS), strict=True):
        level = a_t[0] * (x[None, :] + delta) + m_t[0] - log_rest[:, None]  # (S, X)
        per_draw = (1.0 / (1.0 + np.exp(-level))) @ w  # (S,)
        se = per_draw.std(ddof=1) / math.sqrt(per_draw.size)
        assert abs(per_draw.mean() - exact) <= K * max(se, 1e-12)
    se = log_rest.std(ddof=1) / math.sqrt(log_rest.size)
    assert abs(log_rest.mean() - expected_log_rest(transform, n, t).value) <= K * se
