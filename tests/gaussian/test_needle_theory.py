"""sia_theory.gaussian.needle_theory, exercised by its own name: the Gumbel–Gauss median by
quadrature, the Gumbel parameters of n − 1 standard normals in closed form, and δ* of small
exchangeable contexts found independently by quadrature and brentq."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special

from sia_theory import NoScale
from sia_theory.gaussian.needle_theory import (
    EULER_GAMMA,
    argmax_threshold,
    classical_threshold,
    closed_threshold,
    gumbel_gauss_median,
    gumbel_parameters,
    mass_threshold,
)


def _phi(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("c", [0.3, 1.0, 5.0])
def test_gumbel_gauss_median_solves_its_equation(c):
    """E[exp(−e^{−c(X + y)})] = ½ at y = y(c)."""
    y = gumbel_gauss_median(c)
    value, _ = integrate.quad(lambda x: _phi(x) * math.exp(-math.exp(-c * (x + y))), -30, 30)
    assert value == pytest.approx(0.5, abs=1e-8)


def test_gumbel_gauss_median_limits():
    assert gumbel_gauss_median(1e3) == pytest.approx(EULER_GAMMA / 1e3, rel=1e-2)
    assert gumbel_gauss_median(1e-3) * 1e-3 == pytest.approx(-math.log(math.log(2)), rel=1e-2)
    assert EULER_GAMMA == pytest.approx(float(-special.digamma(1.0)), rel=1e-15)
    with pytest.raises(ValueError, match=r"^c "):
        gumbel_gauss_median(0.0)


def test_gumbel_parameters_of_iid_keys():
    """NoScale, n − 1 = 999 others: (n − 1) Φ̄(ℓ*) = 1 and θ = (n − 1) φ(ℓ*)."""
    level, rate = gumbel_parameters(NoScale(), 1000, 0)
    assert level == pytest.approx(-special.ndtri(1 / 999), rel=1e-9)
    assert rate == pytest.approx(999 * _phi(level), rel=1e-7)


def test_classical_threshold_formula():
    n = 10**6
    a_n = math.sqrt(2 * math.log(n))
    b_n = a_n - (math.log(math.log(n)) + math.log(4 * math.pi)) / (2 * a_n)
    assert classical_threshold(n + 1) == pytest.approx(b_n + EULER_GAMMA / a_n, rel=1e-14)
    assert closed_threshold(NoScale(), n + 1, 5) == classical_threshold(n + 1)
    with pytest.raises(ValueError, match="n_ctx"):
        classical_threshold(2)


def test_two_keys_thresholds_are_zero():
    """n = 2: P(X + δ > Y) = ½ and E[σ(X + δ − Y)] = ½ at δ = 0 (symmetry). The default guess
    (the EVT threshold) has no Gumbel level for one other key (Λ(ℓ) = Φ̄(ℓ) reaches 1 only at
    ℓ = −∞), so the root starts from a given guess."""
    assert argmax_threshold(NoScale(), 2, 0, guess=0.5) == pytest.approx(0.0, abs=1e-5)
    assert mass_threshold(NoScale(), 2, 0) == pytest.approx(0.0, abs=1e-5)


def test_three_keys_argmax_threshold_against_quadrature():
    """∫ φ(u − δ) Φ(u)² du = ½, solved here by brentq on scipy quad."""
    def excess(d):
        return integrate.quad(lambda u: _phi(u - d) * special.ndtr(u) ** 2, -20, 20)[0] - 0.5

    ref = optimize.brentq(excess, -3, 3, xtol=1e-10)
    assert argmax_threshold(NoScale(), 3, 0) == pytest.approx(ref, abs=1e-5)
    assert np.isfinite(ref) and ref > 0


@pytest.mark.parametrize("tau", [1.0, 10.0])
@pytest.mark.parametrize("t", [0, 1])
def test_two_keys_have_the_exact_threshold_of_two_symmetric_gaussians(t, tau):
    """Two keys: the needle's logit a_t(X + δ) + m_t against the other's a'Y + m' wins with
    probability Φ((a_t δ + m_t − m')/√(a_t² + a'²)), ½ at δ = (m' − m_t)/a_t. SI's coefficients
    written out (a² = 1 + 2 log(t/τ + 1), m = −2 log(t/τ + 1)); the default guess used to raise
    (no Gumbel law for one competitor) and NoScale's answer is 0."""
    from scipy.special import ndtr

    from sia_theory import NoScale, ScaleInvariant, argmax_probability, argmax_threshold

    def coef(k):
        return math.sqrt(1 + 2 * math.log(k / tau + 1)), -2 * math.log(k / tau + 1)

    (a, m), (a2, m2) = coef(t), coef(1 - t)
    exact = (m2 - m) / a
    si = ScaleInvariant(tau)
    assert argmax_threshold(si, 2, t) == pytest.approx(exact, abs=1e-6)
    assert argmax_threshold(si, 2, t, guess=5.0) == pytest.approx(exact, abs=1e-6)
    for d in (exact - 0.3, exact, exact + 0.3):  # the probability itself, against Φ
        assert argmax_probability(si, 2, t, [d])[0] == pytest.approx(
            ndtr((a * d + m - m2) / math.sqrt(a * a + a2 * a2)), abs=1e-9)
    assert abs(argmax_threshold(NoScale(), 2, t)) <= 1e-6
