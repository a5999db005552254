"""The finite-n critical scale of iid rows (sia_theory.sphere.tails): the curvature against finite
differences of the tail's own quantile function, the double exponential's hazard log n, the
exponential tail's constant scale against Rényi's spacings with a root finder written out here,
the prediction against exact order statistics within standard errors, the annealed root, bad
input."""

import math

import numpy as np
import pytest
from scipy import optimize

from sia_theory.sphere.gaps import half_mass_beta, top_scores
from sia_theory.sphere.tails import TAILS, annealed_half_mass, curvature, predict_critical_scale


@pytest.mark.parametrize("label", ["iid normal", "iid double-exponential", "bounded e^(-1/x)"])
@pytest.mark.parametrize("log2_n", [16, 40])
def test_curvature_matches_finite_differences_of_the_quantile_function(label, log2_n):
    """T(E) = isf(e^{−E}) differentiated numerically at E = log n: h = 1/T', ε = −T''/(2T'),
    ε₂ = T'''/(6T') (central differences, step 0.02: relative error ~1e-4)."""
    tail = TAILS[label]
    e0, step = log2_n * math.log(2), 0.02
    t = [float(tail.isf(math.exp(-(e0 + j * step)))) for j in (-2, -1, 0, 1, 2)]
    d1 = (t[3] - t[1]) / (2 * step)
    d2 = (t[3] - 2 * t[2] + t[1]) / step**2
    d3 = (t[4] - 2 * t[3] + 2 * t[1] - t[0]) / (2 * step**3)
    u, h, eps, eps2 = curvature(tail, 2**log2_n)
    assert u == pytest.approx(t[2], rel=1e-12)
    assert h == pytest.approx(1 / d1, rel=1e-4)
    assert eps == pytest.approx(-d2 / (2 * d1), rel=1e-3)
    assert eps2 == pytest.approx(d3 / (6 * d1), rel=1e-2)
    assert eps2 > eps**2 / 3  # p(L) = L + εL² + ε₂L³ increasing: the gaps stay ordered


def test_double_exponential_hazard_is_log_n_and_exponential_is_flat():
    """s = log E: h(u_n) = log n exactly, ε = 1/(2 log n), ε₂ = 1/(3 log² n); s = E: h = 1."""
    n = 2**30
    _, h, eps, eps2 = curvature(TAILS["iid double-exponential"], n)
    assert (h, eps, eps2) == pytest.approx((math.log(n), 1 / (2 * math.log(n)),
                                            1 / (3 * math.log(n) ** 2)), rel=1e-12)
    assert curvature(TAILS["iid exponential"], n)[1:] == (1.0, 0.0, 0.0)


def _root(gaps):
    """Σ e^{−b·gap} = 1 by brentq (a root finder of this test, not the module's Newton)."""
    return optimize.brentq(lambda b: np.exp(-b * gaps).sum() - 1.0, 1e-6, 1e4,
                           xtol=1e-12)


def test_exponential_tail_has_the_constant_scale_of_renyi_spacings():
    """The top gaps of n iid Exp(1) are Σ_{j<i} X_j/j with X_j iid Exp(1) (Rényi), whatever n:
    the median half-mass point over 3000 such rows (511 gaps, brentq) matches the prediction's
    M(0, 0) within 4 standard errors of the two medians (se of a median: √(p(1−p)/R)/f at the
    median, f from a ±5 % window), and the prediction's exponent on log n is 0."""
    rng = np.random.default_rng(11)
    spacings = rng.exponential(size=(3000, 511)) / np.arange(1, 512)
    b = np.array([_root(g) for g in np.cumsum(spacings, axis=1)])
    pred = predict_critical_scale(TAILS["iid exponential"], [2**20, 2**40], draws=3000, seed=5)
    m = pred.table["m"].iloc[0]

    def se(x):
        med = np.median(x)
        f = np.mean(np.abs(x - med) <= 0.05 * med) / (0.1 * med)
        return 0.5 / (f * math.sqrt(x.size))

    assert abs(np.median(b) - m) < 4 * math.hypot(se(b), se(pred.draws[2**20])), (np.median(b), m)
    assert 1.5 < m < 1.8
    assert pred.exponent == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("label, log2_n", [("iid double-exponential", 40), ("iid normal", 40),
                                           ("bounded e^(-1/x)", 50)])
def test_prediction_matches_exact_order_statistics(label, log2_n):
    """The median half-mass point of 4000 rows of the 512 largest of n exact order statistics
    against h(u_n)·M(ε, ε₂) (4000 Poisson rows), within 4 standard errors plus the expansion's
    next order (|ε|³·10, below 0.1 % here)."""
    tail, n = TAILS[label], 2**log2_n
    meas = half_mass_beta(top_scores(tail.isf, n, 512, 4000, np.random.default_rng(3)))
    pred = predict_critical_scale(tail, [n, 2 * n], draws=4000, seed=4)
    want = pred.table["beta_pred"].iloc[0]
    spread = math.hypot(np.std(np.log(meas)), np.std(np.log(pred.draws[n])))
    rel_se = 1.2533 * spread / math.sqrt(4000)  # se of a median: 1.2533·sd/√R (log-normal)
    eps = pred.table["eps"].iloc[0]
    assert abs(np.median(meas) / want - 1) < 4 * rel_se + 10 * eps**3, (np.median(meas), want)


def test_annealed_half_mass_is_the_simplex_law_without_spread_and_the_root_with_it():
    """var = 0: log(n − 1)/(1 − ρ); Gaussian rows of 2¹⁶ − 1 scores N(0.5, 0.025²) below a top
    score 1: the exact root (brentq) within 0.2 %."""
    assert annealed_half_mass(0.3, 0.0, 1000) == pytest.approx(math.log(999) / 0.7, rel=1e-14)
    rng = np.random.default_rng(2)
    n = 2**16
    others = 0.5 + 0.025 * rng.standard_normal(n - 1)
    exact = _root(1.0 - others)
    assert annealed_half_mass(others.mean(), others.var(), n) == pytest.approx(exact, rel=2e-3)
    assert math.isnan(annealed_half_mass(0.5, 1.0, n))  # no root: spread too wide


def test_bad_input_names_the_parameter():
    tail = TAILS["iid normal"]
    with pytest.raises(ValueError, match="draws"):
        predict_critical_scale(tail, [2**10, 2**12], draws=10)
    with pytest.raises(ValueError, match=r"^ns must hold at least 2"):
        predict_critical_scale(tail, [2**10, 2**10])
    with pytest.raises(ValueError, match=r"^ns must be an integer >= 3"):
        predict_critical_scale(tail, [2**10, 2])
    with pytest.raises(ValueError, match=r"^n must"):
        curvature(tail, 1)
    with pytest.raises(ValueError, match=r"^n must"):
        annealed_half_mass(0.5, 0.0, 2)
