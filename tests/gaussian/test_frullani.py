"""sia_theory.gaussian.frullani, exercised by its own name: the Laplace/Frullani integrals of one
row against closed forms and one-dimensional quadratures written out here.

Frullani's integral ``∫₀^∞ (f(ax) − f(bx))/x dx = (f(0) − f(∞)) log(b/a)`` with ``f = e^{−x}``
gives ``log z = ∫₀^∞ (e^{−s} − e^{−sz}) ds/s`` (the module docstring's first bullet)."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from sia_theory import NoScale, Transform
from sia_theory.gaussian import frullani
from sia_theory.gaussian.frullani import LaplaceIntegral, check_rtol, row_nodes


class Constant(Transform):
    """Every distance gets the same ``(a, m)``; ``a = 0`` makes the logits deterministic."""

    depends_on = frozenset({"distance"})

    def __init__(self, a, m):
        self._a, self._m = a, m

    def affine(self, t, n, h):
        return self._a + 0.0 * t, self._m + 0.0 * t


@pytest.mark.parametrize(("a", "b"), [(1.0, 3.0), (0.5, 20.0)])
def test_frullani_identity_itself(a, b):
    """The identity the module rests on, by plain quadrature: (f(0) − f(∞)) log(b/a), f = e^{−x}."""
    value, _ = integrate.quad(lambda x: (math.exp(-a * x) - math.exp(-b * x)) / x, 0, np.inf,
                              limit=200)
    assert value == pytest.approx(math.log(b / a), rel=1e-8)


@pytest.mark.parametrize(("n", "c"), [(1, 0.0), (7, 1.5), (1000, -2.0)])
def test_deterministic_logits_give_log_n_plus_c(n, c):
    """a = 0: Z = n e^c exactly, so E[log Z] = log n + c and E[N/Z] = c."""
    row = LaplaceIntegral(Constant(0.0, c), [(0, n)])
    assert row.log_z().value == pytest.approx(math.log(n) + c, abs=1e-6)
    assert row.n_over_z().value == pytest.approx(c, abs=1e-6)


def test_segment_masses_of_deterministic_logits_are_key_shares():
    """a = 0 over [0, 3) and [3, 10): the masses are 3/10 and 7/10 exactly."""
    row = LaplaceIntegral(Constant(0.0, 0.3), [(0, 3), (3, 10)])
    assert row.mass(0).value == pytest.approx(0.3, abs=1e-6)
    assert row.mass(1).value == pytest.approx(0.7, abs=1e-6)


def test_two_standard_normal_keys_against_one_dimensional_quadrature():
    """log(e^X1 + e^X2) = (X1 + X2)/2 + log(2 cosh(D/2)), D = X1 − X2 ~ N(0, 2)."""
    row = LaplaceIntegral(NoScale(), [(0, 2)])
    sd = math.sqrt(2.0)
    ref, _ = integrate.quad(
        lambda d: math.log(2 * math.cosh(d / 2)) * math.exp(-0.5 * (d / sd) ** 2)
        / (sd * math.sqrt(2 * math.pi)), -40, 40)
    est = row.log_z()
    assert est.kind == "exact"
    assert abs(est.value - ref) < 1e-6 + est.error


def test_one_key_log_z_and_n_over_z_are_zero():
    """One standard normal key: log Z = X and N/Z = X, both of mean 0."""
    row = LaplaceIntegral(NoScale(), [(0, 1)])
    assert row.log_z().value == pytest.approx(0.0, abs=1e-6)
    assert row.n_over_z().value == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("level", [-1.0, 0.0, 2.5])
def test_point_mass_beside_one_lognormal_key(level):
    """E[e^ℓ/(e^ℓ + e^X)] = ∫ φ(x) expit(ℓ − x) dx for one standard normal key X."""
    row = LaplaceIntegral(NoScale(), [(0, 1)])
    values, errors = row.point_mass(np.array([level]))
    ref, _ = integrate.quad(lambda x: special.expit(level - x) * math.exp(-0.5 * x * x)
                            / math.sqrt(2 * math.pi), -40, 40)
    assert abs(values[0] - ref) < 1e-6 + errors[0]


def test_log_laplace_of_deterministic_row():
    """a = 0: Φ(s) = exp(−s n e^c), so log Φ(e^u) = −n e^{c+u}."""
    row = LaplaceIntegral(Constant(0.0, 0.5), [(0, 5)])
    u = np.array([-3.0, 0.0, 1.0])
    assert row.log_laplace(u) == pytest.approx(-5 * np.exp(0.5 + u), rel=1e-9)


def test_row_nodes_sum_to_the_count_and_carry_the_moments():
    """Σ w = t2 − t1; log E[e^L] = m + a²/2 and the tilt m + a² per node (lognormal moments)."""
    row = row_nodes(Constant(0.7, -0.2), 0, 5000)
    assert math.fsum(row.w) == pytest.approx(5000, rel=1e-12)
    assert row.log_mean == pytest.approx(-0.2 + 0.49 / 2)
    assert row.tilt == pytest.approx(-0.2 + 0.49)


def test_check_rtol_range():
    assert check_rtol(1e-6) == 1e-6
    with pytest.raises(ValueError, match="rtol"):
        check_rtol(0.5)
    with pytest.raises(ValueError, match="rtol"):
        LaplaceIntegral(NoScale(), [(0, 10)], rtol=0.0)


def test_bad_segments_named():
    with pytest.raises(ValueError, match="segments"):
        LaplaceIntegral(NoScale(), [])
    with pytest.raises(ValueError, match="t2"):
        LaplaceIntegral(NoScale(), [(5, 5)])
    with pytest.raises(ValueError, match="segment"):
        LaplaceIntegral(NoScale(), [(0, 5)]).mass(1)


def test_tolerance_constant():
    assert frullani.TOL_PER_RTOL == pytest.approx(1e-3)
