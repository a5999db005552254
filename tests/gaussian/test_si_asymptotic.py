"""The asymptotic sampler (sia_theory.gaussian.asymptotic) against the brute-force Monte Carlo, its
own building blocks against numerical integration and closed forms, and its input checks.

Monte Carlo comparisons pass within k = 4 standard errors (both routes' errors combined)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from sia_theory import (
    ALiBi,
    LogN,
    NoScale,
    QwenLogN,
    ScaleInvariant,
    expected_log_total_attention,
    scale_invariant_negentropy,
    scale_invariant_total_attention,
    simulate_gaussian_logits,
    simulate_gaussian_logits_asymptotic,
)
from sia_theory.gaussian.asymptotic import asymptotic_range_statistics
from sia_theory.gaussian.tails import BIN_TOL, distance_bins, tail_normals, truncated_moments
from sia_theory.studies.si_entropy_extension import route_z_scores

K_SE = 4.0


def _z(a, b, column):
    return (a[f"{column}_mean"] - b[f"{column}_mean"]) / np.hypot(a[f"{column}_se"],
                                                                  b[f"{column}_se"])


# --- truncated lognormal moments -------------------------------------------------------------

def _quad_moments(a, m, x):
    """Conditional moments of (W, LW) given X < x by direct numerical integration."""
    lo = -40.0
    hi = min(x, 40.0)
    mass = norm.cdf(x)

    def e(f):
        return quad(lambda u: f(u) * norm.pdf(u), lo, hi, epsabs=0, epsrel=1e-11,
                    limit=400, points=[min(max(2 * a, lo + 1), hi - 1e-9)])[0] / mass

    w = e(lambda u: np.exp(a * u + m))
    lw = e(lambda u: (a * u + m) * np.exp(a * u + m))
    w2 = e(lambda u: np.exp(2 * (a * u + m)))
    lw2 = e(lambda u: (a * u + m) * np.exp(2 * (a * u + m)))
    l2w2 = e(lambda u: (a * u + m) ** 2 * np.exp(2 * (a * u + m)))
    return np.array([w, lw, w2 - w * w, lw2 - w * lw, l2w2 - lw * lw])


@pytest.mark.parametrize("a, m, x", [(1.0, 0.0, np.inf), (1.0, 0.0, 1.5), (3.0, -4.5, 2.0),
                                     (11.5, -132.0, 11.4), (0.4, 2.0, -1.0), (2.0, -1.0, 6.0),
                                     (0.05, 0.3, 0.5)])
def test_truncated_moments_match_numerical_integration(a, m, x):
    tm = truncated_moments(a, m, x)
    got = np.array([tm.w, tm.lw, tm.var_w, tm.cov, tm.var_lw], dtype=float)
    want = _quad_moments(a, m, x)
    scale = np.array([abs(want[0]), abs(want[1]), want[2], np.sqrt(want[2] * want[4]), want[4]])
    assert np.all(np.abs(got - want) <= 1e-7 * scale + 1e-300), (got, want)


def test_untruncated_moments_are_the_lognormal_ones():
    """x = +inf: E[W] = e^{m+a²/2}, Var W = e^{2m+a²}(e^{a²} − 1) (SI App. B)."""
    a, m = np.array([0.5, 1.0, 2.0]), np.array([0.1, -1.0, 0.0])
    tm = truncated_moments(a, m, np.inf)
    np.testing.assert_allclose(tm.w, np.exp(m + a * a / 2), rtol=1e-13)
    np.testing.assert_allclose(tm.lw, (m + a * a) * np.exp(m + a * a / 2), rtol=1e-13)
    np.testing.assert_allclose(tm.var_w, np.exp(2 * m + a * a) * np.expm1(a * a), rtol=1e-12)


@pytest.mark.parametrize("x", [-1.0, 2.0, 8.0, 30.0])
def test_tail_draws_have_the_conditional_gaussian_mean_and_spread(x):
    """E[X | X > x] = φ(x)/Φ̄(x) and its variance 1 + x·μ − μ² (mpmath at 50 digits), within
    4 se of 20000 draws; every draw lies above x."""
    import mpmath

    mpmath.mp.dps = 50
    mu = float(mpmath.npdf(x) / mpmath.ncdf(-x))
    var = 1.0 + x * mu - mu * mu
    rng = np.random.default_rng(0)
    draws = tail_normals(float(mpmath.log(mpmath.ncdf(-x))), 1.0 - rng.random(20000))
    assert np.all(draws > x)
    se = np.sqrt(var / draws.size)
    assert abs(draws.mean() - mu) <= K_SE * se
    assert abs(draws.var(ddof=1) / var - 1) <= K_SE * np.sqrt(2.0 / draws.size) * 2


# --- distance bins: controlled error ------------------------------------------------------

@pytest.mark.parametrize("t1, t2", [(0, 10**4), (10**3, 10**5), (10**10, 10**11),
                                    (1e29, 1e30), (0, 1e30)])
def test_bins_cover_the_range_and_keep_the_exact_sums(t1, t2):
    """Σ_j n_j e^{m_j + a_j²/2} and the tilted sum against the exact digamma sums of the SI
    transform (SI eq. 15): the midpoint rule's error is second order, ≤ 1e-4 relative."""
    tr = ScaleInvariant(10.0)
    bins = distance_bins(tr, float(t1), float(t2))
    assert bins.lo[0] == t1 and bins.hi[-1] == t2 and np.all(bins.lo[1:] == bins.hi[:-1])
    assert np.all(bins.count >= 1)
    w = np.exp(bins.m + bins.a ** 2 / 2) * bins.count  # (B,)
    z_bins, n_bins = w.sum(), (w * (bins.m + bins.a ** 2)).sum()
    if t2 < 2**53:
        z_exact = scale_invariant_total_attention(tr, int(t1), int(t2))
        n_exact = scale_invariant_negentropy(tr, int(t1), int(t2))
    else:  # digamma difference at 1e30: ψ(t2+τ) − ψ(t1+τ) -> log((t2+τ)/(t1+τ))
        z_exact = tr.alpha * tr.tau * np.log((t2 + tr.tau) / (t1 + tr.tau)) if t1 else None
        n_exact = None if z_exact is None else z_exact * tr.beta / tr.alpha
    if z_exact is None:
        z_exact = np.exp(expected_log_total_attention(tr, 0, 10**6)) + tr.alpha * tr.tau * (
            np.log((t2 + tr.tau) / (10**6 + tr.tau)))
        n_exact = z_exact * tr.beta / tr.alpha
    assert abs(z_bins / z_exact - 1) < 1e-4
    assert abs(n_bins / n_exact - 1) < 1e-4
    # cost flat in t: a decade needs about as many bins at 1e29 as at 1e10
    assert bins.count.size < 9000


def test_binning_tolerance_does_not_move_the_entropy():
    """BIN_TOL vs BIN_TOL/4 at t = 1e20: same E[H] within 4 se (independent samples)."""
    tr, r = ScaleInvariant(10.0), [(1e20, 1e21)]
    coarse = asymptotic_range_statistics(tr, r, 3000, 1, tol=BIN_TOL)["H"][:, 0]
    fine = asymptotic_range_statistics(tr, r, 3000, 2, tol=BIN_TOL / 4)["H"][:, 0]
    se = np.hypot(coarse.std(ddof=1), fine.std(ddof=1)) / np.sqrt(3000)
    assert abs(coarse.mean() - fine.mean()) <= K_SE * se


# --- the sampler against the brute-force Monte Carlo ------------------------------------

CASES = [(ScaleInvariant(10.0), 1500), (NoScale(), 1000), (LogN(0.4), 1000),
         (QwenLogN(), 1000), (ALiBi.standard(1), 1000)]


@pytest.mark.parametrize("transform, samples", CASES, ids=lambda c: type(c).__name__)
def test_sampler_matches_brute_force_monte_carlo(transform, samples):
    """t = 10 (exact path), 1e3 and 1e4, Δ = 2, 5, 10, mass relative to [0, n_ctx)."""
    n_ctx = 10**5
    ranges = [(10, 20)] + [(t, t * d) for t in (10**3, 10**4) for d in (2, 5, 10)]
    fast = simulate_gaussian_logits_asymptotic(transform, ranges, samples, 3, n_ctx=n_ctx)
    slow = simulate_gaussian_logits(transform, n_ctx, ranges, samples, 4)
    for column in ("H", "log_Z", "mass"):
        z = _z(fast, slow, column)
        assert np.all(np.abs(z) <= K_SE), (column, z.round(2).tolist())


def test_sampler_matches_brute_force_at_1e5():
    tr, ranges = ScaleInvariant(10.0), [(10**5, 2 * 10**5)]
    fast = simulate_gaussian_logits_asymptotic(tr, ranges, 1500, 5, n_ctx=2 * 10**5)
    slow = simulate_gaussian_logits(tr, 2 * 10**5, ranges, 1500, 6)
    for column in ("H", "log_Z", "mass"):
        assert abs(_z(fast, slow, column).iloc[0]) <= K_SE


def test_results_do_not_depend_on_top_k():
    """K = 500 vs K = 3000 at t = 1e10 and 1e25, Δ = 10: E[H], E[log Z] within 4 se."""
    tr, ranges = ScaleInvariant(10.0), [(1e10, 1e11), (1e25, 1e26)]
    small = simulate_gaussian_logits_asymptotic(tr, ranges, 2000, 7, top_k=500)
    large = simulate_gaussian_logits_asymptotic(tr, ranges, 2000, 8, top_k=3000)
    for column in ("H", "log_Z"):
        assert np.all(np.abs(_z(small, large, column)) <= K_SE)


def test_mass_without_n_ctx_is_relative_to_the_union_of_the_ranges():
    tr = ScaleInvariant(10.0)
    stats = asymptotic_range_statistics(tr, [(100, 1000), (1000, 10**4)], 50, 0)
    total = np.logaddexp(stats["log_Z"][:, 0], stats["log_Z"][:, 1])
    np.testing.assert_allclose(stats["log_mass"], stats["log_Z"] - total[:, None], atol=1e-12)


# --- seeding -------------------------------------------------------------------------------

def test_first_samples_are_the_same_in_a_larger_run():
    tr, r = ScaleInvariant(10.0), [(10, 30), (10**6, 10**7)]
    small = asymptotic_range_statistics(tr, r, 300, 9)
    large = asymptotic_range_statistics(tr, r, 700, 9)
    np.testing.assert_array_equal(small["H"], large["H"][:300])


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_same_numbers_on_any_thread_count():
    code = ("import numpy as np; from sia_theory import ScaleInvariant, "
            "simulate_gaussian_logits_asymptotic as f; "
            "print(repr(f(ScaleInvariant(10.0), [(1e3, 1e4), (1e20, 1e21)], 300, 3)"
            "[['H_mean', 'log_Z_mean']].to_numpy().tolist()))")
    outputs = []
    for threads in ("1", "2"):
        env = {**os.environ, "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
               "MKL_NUM_THREADS": threads, "NUMBA_NUM_THREADS": threads}
        outputs.append(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                      capture_output=True, text=True).stdout)
    assert outputs[0] == outputs[1]


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"top_k": 0}, "top_k"),
    ({"ranges": [(10, 10)]}, "ranges"),
    ({"ranges": [(20, 10)]}, "ranges"),
    ({"ranges": [(2e30, 3e30)]}, "ranges"),
    ({"ranges": [(1e29, 2e32)]}, "ranges"),
    ({"ranges": [(0, float("nan"))]}, "ranges"),
    ({"ranges": [(0, float("inf"))]}, "ranges"),
    ({"ranges": [(0.5, 10)]}, "ranges"),
    ({"ranges": []}, "ranges"),
    ({"samples": 1}, "samples"),
    ({"seed": -1}, "seed"),
    ({"n_ctx": 50}, "ranges"),
    ({"n_ctx": float("nan")}, "n_ctx"),
    ({"transform": "SI"}, "transform"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"transform": ScaleInvariant(10.0), "ranges": [(10, 100)], "samples": 10,
            "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=name):
        simulate_gaussian_logits_asymptotic(**args)


# --- three routes: exact (Frullani), sampler, brute force -----------------------------------

@pytest.mark.parametrize("transform, ranges", [
    (ScaleInvariant(10.0), [(1e3, 1e4), (1e10, 2e10), (1e20, 5e20), (1e30, 1e31)]),
    (NoScale(), [(1e5, 2e5), (1e30, 2e30)])], ids=["ScaleInvariant", "NoScale"])
def test_sampler_matches_exact_route_to_1e30(transform, ranges):
    """E[H] of the sampler within 4 se (its own, combined with the exact route's reported
    error) of expected_entropy_exact, from t = 1e3 to 1e30; the brute force too at t = 1e3."""
    from sia_theory.gaussian.exact import expected_entropy_exact

    fast = simulate_gaussian_logits_asymptotic(transform, ranges, 1500, 14)
    for row in fast.itertuples():
        exact = expected_entropy_exact(transform, row.t1, row.t2)
        assert abs(row.H_mean - exact.value) <= K_SE * np.hypot(row.H_se, exact.error), (
            row.t1, row.t2, row.H_mean, row.H_se, exact)
    if ranges[0][1] <= 10**5:
        t1, t2 = (int(t) for t in ranges[0])
        slow = simulate_gaussian_logits(transform, t2, [(t1, t2)], 1500, 15).iloc[0]
        exact = expected_entropy_exact(transform, t1, t2)
        assert abs(slow.H_mean - exact.value) <= K_SE * np.hypot(slow.H_se, exact.error)


FIGURES = Path(os.environ.get("SIA_FIGURES_DIR", Path(__file__).resolve().parents[2] / "figures"))


@pytest.mark.parametrize("stem", ["si_fig2_entropy_scaling", "si_fig6_standard_entropy"])
def test_committed_figures_three_routes_agree(stem):
    """In the committed SI Fig. 2 / Fig. 6 data, every sampler point (t = 1e5 … 1e30) and every
    brute-force point with an exact value (t = 10 … 1e5) is within 4 se of the exact route."""
    exact = pd.read_csv(FIGURES / f"{stem}_exact.csv")
    sampler = route_z_scores(pd.read_csv(FIGURES / f"{stem}_asymptotic.csv"), exact)
    brute = route_z_scores(pd.read_csv(FIGURES / f"{stem}_entropy.csv"), exact)
    assert len(sampler) >= 18 and sampler["t"].max() == 1e30 and len(brute) >= 15
    assert sampler["z"].abs().max() <= K_SE and brute["z"].abs().max() <= K_SE
