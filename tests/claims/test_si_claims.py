"""The SI claim decisions on known laws, and the series the claims compare with, held against
independent numerics (no expected value taken from the code under test)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma

from sia_theory.claims import si as si_claims
from sia_theory.claims import si_entropy_growth as growth_claims
from sia_theory.claims import si_montecarlo as mc_claims
from sia_theory.studies.si_entropy_scaling import fig6_settings
from sia_theory.symbolic import si


@pytest.mark.parametrize("name, curve", [
    ("bounded", lambda t: 3.0 - 1.0 / np.sqrt(t)),
    ("logarithmic", lambda t: 0.5 * np.log(t)),
    ("weakly logarithmic", lambda t: 0.2 * np.log(t)),
    ("log log t", lambda t: 1.5 * np.log(np.log(t))),
    ("(log t)^0.6", lambda t: 0.9 * np.log(t) ** 0.6 + 0.4),
    ("(log t)^0.4", lambda t: 1.5 * np.log(t) ** 0.4 - 0.4),
])
def test_si7_decision_rejects_each_alternative_law(name, curve):
    inputs = growth_claims.synthetic_si7_inputs(curve)
    assert growth_claims.decide_weak_sparsity(*inputs).verdict == "FAIL", name


@pytest.mark.parametrize("quick", [False, True])
def test_si7_decision_accepts_a_sqrt_log_curve_with_the_real_noise(quick):
    fits, z_scores, slopes = growth_claims.synthetic_si7_inputs(
        lambda t: 1.2 * np.sqrt(np.log(t)) - 0.3, quick)
    assert fits["q"].to_numpy() == pytest.approx(0.5, abs=1e-6)  # exact data, exact law
    measurement = growth_claims.decide_weak_sparsity(fits, z_scores, slopes)
    assert measurement.verdict == "PASS"
    assert measurement.ci_low <= 0.5 <= measurement.ci_high


def test_si7_decision_fails_when_the_monte_carlo_disagrees_with_the_exact_route():
    fits, z_scores, slopes = growth_claims.synthetic_si7_inputs(
        lambda t: 1.2 * np.sqrt(np.log(t)))
    decide = growth_claims.decide_weak_sparsity
    assert decide(fits, z_scores.assign(z=4.5), slopes).verdict == "FAIL"
    assert decide(fits, z_scores.assign(z=3.9), slopes).verdict == "PASS"


def test_log_power_fit_recovers_known_exponents():
    """Exact curves c + b·(log t)^q give back q in every window t >= 1e2, 1e4, 1e6, 1e10
    (t at 10^2, 10^4.55, 10^7.09, … : 12, 11, 10 and 8 points); 3 points are too few."""
    from sia_theory.gaussian.laws import log_power_fits

    t = np.geomspace(1e2, 1e30, 12)
    for q in (0.3, 0.5, 0.8):
        frame = pd.DataFrame({"delta": 2, "t": t, "H_exact": 0.7 + 1.3 * np.log(t) ** q})
        fits = log_power_fits(frame)
        assert len(fits) == 4 and fits["points"].tolist() == [12, 11, 10, 8]
        assert fits["q"].to_numpy() == pytest.approx(q, abs=1e-6)
    short = pd.DataFrame({"delta": 2, "t": t[-3:], "H_exact": np.log(t[-3:]) ** 0.5})
    assert log_power_fits(short).empty  # 3 points do not make a 3-parameter fit


def test_si8_decision_accepts_log_and_rejects_sqrt_log():
    settings = fig6_settings(False)
    good = growth_claims.synthetic_slopes(lambda t: np.log(t) - 0.5, settings, sd=0.05)
    assert growth_claims.decide_log_growth(good).verdict == "PASS"
    bad = growth_claims.synthetic_slopes(lambda t: 0.8 * np.log(t), settings, sd=0.05)
    assert growth_claims.decide_log_growth(bad).verdict == "FAIL"


def test_small_t_series_matches_the_numeric_taylor_coefficients():
    """``log(1 + x) = x − x²/2 + x³/3``, so ``a² = 1 + 2x − x² + (2/3)x³`` with x = t/τ, and the
    truncation error of the sympy series shrinks like x³ on the real coefficients."""
    series = si.small_t_series(3)
    tau = 7.0
    a2 = [float(c.subs(si.tau, tau)) for c in series[si.a2]]
    m = [float(c.subs(si.tau, tau)) for c in series[si.m]]
    assert a2 == pytest.approx([1.0, 2 / tau, -1 / tau**2, 2 / (3 * tau**3)], rel=1e-14)
    assert m == pytest.approx([0.0, -2 / tau, 1 / tau**2, -2 / (3 * tau**3)], rel=1e-14, abs=0)
    x = np.array([1e-2, 1e-3]) * tau
    exact = 1 + 2 * np.log1p(x / tau)
    error = np.abs(exact - sum(c * x**k for k, c in enumerate(a2)))
    assert error[0] / error[1] == pytest.approx(1e4, rel=0.05)  # next term is O(x⁴)


@pytest.mark.parametrize("delta", [2, 5, 10])
def test_range_sum_expansion_matches_digamma_and_euler_maclaurin(delta):
    tau = 3.0
    c0, c1, c2 = (float(c.subs({si.tau: tau, si.Delta: delta}))
                  for c in si.range_sum_asymptotics(2))
    assert c0 == pytest.approx(tau * math.log(delta), rel=1e-14)
    assert c1 == pytest.approx(-tau * (tau - 0.5) * (1 - 1 / delta), rel=1e-14)
    for t in (1e3, 1e4):
        exact = tau * (digamma(t * delta + tau) - digamma(t + tau))
        remainder = exact - c0 - c1 / t - c2 / t**2
        assert abs(remainder) < 10 * abs(c2) / t**3 * tau


def test_next_order_decision_fails_for_a_wrong_limit_even_a_tiny_one():
    assert si_claims.decide_next_order(*si_claims.limit_inputs(2.0)).verdict == "PASS"
    shifted = si_claims.limit_inputs(2.0, limit_scale=1 + 1e-5)
    assert si_claims.decide_next_order(*shifted).verdict == "FAIL"


def test_moment_decision_uses_the_claims_right_hand_side():
    half = math.exp(0.5)
    z_exact, n_exact = mc_claims.si6_exact(10.0, 0, 10)
    direct = sum(half / (s / 10.0 + 1) for s in range(10))
    assert z_exact == pytest.approx(direct, rel=1e-13)
    assert n_exact == pytest.approx(direct, rel=1e-13)


def test_si_4_and_5_tie_the_library_routes_to_the_lemma():
    """SI-4/SI-5 also hold the library's closed forms of the α = 2, β = 3 transform against the
    hypothesis' digamma sums; a route mix-up (the E[Z] route with β) is caught."""
    from sia_theory.claims.si import LIMIT_TRANSFORM, library_route_error

    assert library_route_error(0, LIMIT_TRANSFORM.alpha) < 1e-12
    assert library_route_error(1, LIMIT_TRANSFORM.beta) < 1e-12
    assert library_route_error(0, LIMIT_TRANSFORM.beta) > 0.3  # 2/3 − 1


def test_the_synthetic_laws_of_the_controls_pass_when_they_follow_the_claim():
    """The ±20 % controls of SI-6, SI-9 and SI-10 shift one quantity of a law that passes."""
    assert mc_claims.decide_moments(*mc_claims.moments_off(1.0)).verdict == "PASS"
    assert mc_claims.decide_context_sweep(mc_claims.context_sweep_law()).verdict == "PASS"
    assert mc_claims.decide_small_t(*mc_claims.small_t_inputs(), (2, -2)).verdict == "PASS"
