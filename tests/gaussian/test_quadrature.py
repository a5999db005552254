"""sia_theory.gaussian.quadrature, exercised by its own name: composite Gauss–Legendre panels and
the Euler–Maclaurin distance quadrature against exact polynomial integrals, plain summation and
the harmonic number ``H_n = log n + γ + 1/(2n) − 1/(12n²) + …``."""

import math

import numpy as np
import pytest

from sia_theory.gaussian import quadrature
from sia_theory.gaussian.quadrature import (
    GL_ORDER,
    T_MAX,
    check_long_range,
    distance_quadrature,
    gauss_legendre_panels,
    unit_panels,
)

EULER_GAMMA = 0.5772156649015329


def test_panels_integrate_polynomials_of_degree_2n_minus_1_exactly():
    """∫_0^3 x^15 dx = 3^16/16 with 8 nodes per panel (degree 2·8 − 1 = 15)."""
    x, w = gauss_legendre_panels([0.0, 1.0, 3.0])
    assert x.size == w.size == 2 * GL_ORDER
    assert np.dot(w, x**15) == pytest.approx(3.0**16 / 16, rel=1e-13)


def test_unit_panels_cover_the_unit_interval_and_are_read_only():
    x, w = unit_panels(4)
    assert math.fsum(w) == pytest.approx(1.0, rel=1e-15)
    assert np.all((x > 0) & (x < 1))
    assert np.dot(w, np.cos(x)) == pytest.approx(math.sin(1.0), rel=1e-14)
    with pytest.raises(ValueError):
        x[0] = 0.0


@pytest.mark.parametrize(("t1", "t2"), [(0, 50), (1, 100_000), (37, 12_345)])
def test_distance_quadrature_matches_plain_sums(t1, t2):
    """Σ_t f(t) term by term for f = 1, 1/(t+1) and (t+1)^{-1/2}."""
    t, w = distance_quadrature(t1, t2)
    k = np.arange(t1, t2, dtype=np.float64)
    assert math.fsum(w) == pytest.approx(t2 - t1, rel=1e-13)
    for f in (lambda s: 1.0 / (s + 1.0), lambda s: (s + 1.0) ** -0.5):
        assert np.dot(w, f(t)) == pytest.approx(math.fsum(f(k)), rel=1e-7)


def test_harmonic_number_at_1e30():
    """Σ_{t=1}^{n−1} 1/t = log n + γ − 1/(2n) + … with n = 1e30, in under 900 nodes."""
    t, w = distance_quadrature(1, 10**30)
    assert t.size < 900
    assert np.dot(w, 1.0 / t) == pytest.approx(math.log(1e30) + EULER_GAMMA, rel=1e-8)


def test_finer_rtol_uses_more_exact_terms():
    assert quadrature.exact_below(1e-6) == 32  # ceil(1e-6^{-1/4}) = 32
    assert quadrature.exact_below(1e-2) == 16
    t_coarse, _ = distance_quadrature(0, 10**6, rtol=1e-6)
    t_fine, _ = distance_quadrature(0, 10**6, rtol=1e-10)
    assert t_fine.size > t_coarse.size


def test_check_long_range_accepts_integral_floats_and_names_bad_arguments():
    assert check_long_range(0, 1e30) == (0, int(1e30), None)
    assert check_long_range(3, 8, 8) == (3, 8, 8)
    with pytest.raises(ValueError, match="t1"):
        check_long_range(-1, 5)
    with pytest.raises(ValueError, match="t2"):
        check_long_range(5, 5)
    with pytest.raises(ValueError, match="t2"):
        check_long_range(0, 10, n_ctx=9)
    with pytest.raises(ValueError, match="t2"):
        check_long_range(0, T_MAX + 1)
    with pytest.raises(ValueError, match="rtol"):
        distance_quadrature(0, 10, rtol=1.0)


def test_bad_edges():
    with pytest.raises(ValueError, match="edges"):
        gauss_legendre_panels([1.0, 0.0])
    with pytest.raises(ValueError, match="edges"):
        gauss_legendre_panels([1.0])
