"""sia_theory.gaussian.laplace, exercised by its own name: the Laplace factors of one lognormal
weight against scipy quadrature of the defining expectations (module docstring formulas)."""

import math

import numpy as np
import pytest
from scipy import integrate

from sia_theory.gaussian.laplace import (
    laplace_log_factor,
    laplace_tilted,
    step_expectation,
    step_expectation_reference,
)

KERNELS = {"F": lambda y: -math.expm1(-math.exp(y)), "E": lambda y: math.exp(-math.exp(y)),
           "Q": lambda y: math.exp(y - math.exp(y))}
CASES = [(1.0, 0.0), (0.3, -4.0), (3.0, 2.0), (0.0, -1.0)]


def _gauss_expect(f, a, mu):
    """E[f(μ + aX)], X ~ N(0, 1), by adaptive quadrature (points around the step x* = −μ/a)."""
    if a == 0:
        return f(mu)
    pts = sorted({-mu / a, 0.0, a})
    pts = [p for p in pts if -30 < p < 30]
    value, _ = integrate.quad(lambda x: f(mu + a * x) * math.exp(-0.5 * x * x)
                              / math.sqrt(2 * math.pi), -30, 30, points=pts, limit=400,
                              epsabs=0, epsrel=1e-12)
    return value


@pytest.mark.parametrize("kind", ["F", "E", "Q"])
@pytest.mark.parametrize(("a", "mu"), CASES)
def test_step_expectation_against_quadrature(kind, a, mu):
    """refine = 1 within 1e-7 relative (measured: 6e-9 at a = 3, μ = 2 for Q), refine = 2 (the
    finer level the exact route compares with) within 1e-10."""
    ref = _gauss_expect(KERNELS[kind], a, mu)
    assert float(step_expectation(kind, a, mu)) == pytest.approx(ref, rel=1e-7)
    assert float(step_expectation(kind, a, mu, 2)) == pytest.approx(ref, rel=1e-10)
    assert float(step_expectation_reference(kind, a, mu, 2)) == pytest.approx(ref, rel=1e-10)


def test_log_factor_is_log_of_the_laplace_transform():
    """log E[exp(−s e^L)] with L = 0.8X − 0.5, at s = e^{−1}, 1, e^3."""
    log_s = np.array([-1.0, 0.0, 3.0])
    got = laplace_log_factor(0.8, -0.5, log_s)  # the default, refine = 2
    coarse = laplace_log_factor(0.8, -0.5, log_s, refine=1)
    for u, value, value1 in zip(log_s, got, coarse, strict=True):
        ref = _gauss_expect(lambda y, u=u: math.exp(-math.exp(u + y)), 0.8, -0.5)
        assert value == pytest.approx(math.log(ref), rel=1e-10)
        assert value1 == pytest.approx(math.log(ref), rel=1e-7)


def test_tiny_epsilon_keeps_relative_accuracy():
    """s e^L ~ e^{−80}: ε = E[1 − e^{−s e^L}] ≈ s E[e^L] = e^{−80 + a²/2 + m}, log g ≈ −ε."""
    got = float(laplace_log_factor(1.0, 0.0, -80.0))
    assert got == pytest.approx(-math.exp(-80.0 + 0.5), rel=1e-8)


def test_tilted_moments_against_quadrature():
    a, m, u = 0.7, 0.2, 0.5
    w, lw = laplace_tilted(a, m, u)
    ref_w = _gauss_expect(lambda y: math.exp(y - math.exp(u + y)), a, m)
    ref_lw = _gauss_expect(lambda y: y * math.exp(y - math.exp(u + y)), a, m)
    assert (float(w), float(lw)) == pytest.approx((ref_w, ref_lw), rel=1e-8)


def test_bad_input_named():
    with pytest.raises(ValueError, match=r"^a "):
        laplace_log_factor(-1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="log_s"):
        laplace_log_factor(1.0, 0.0, np.nan)
